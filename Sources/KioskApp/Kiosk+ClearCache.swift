import Foundation
import KioskCore
import KioskStore

/// What clearing the cache did, for the face to report.
public struct CacheClearReport: Sendable, Hashable {
    /// Whether the request log was cleared too, to make room on a full disk.
    public var clearedRequestLog: Bool
}

extension Kiosk {
    /// Clears the configured store's cache, keeping favorites and the dogs edits, without starting any
    /// service. On a full disk SQLite cannot write even a delete (it appends to the WAL first), so the
    /// request log, Kiosk's own disposable file, is emptied to make room (its files removed when it
    /// cannot be emptied in place) and the clear is tried again: clearing always works when Kiosk's
    /// own files hold the space.
    public static func clearCache(_ configuration: KioskConfiguration) throws -> CacheClearReport {
        let path = configuration.databaseURL.path
        do {
            try AppDatabase.open(at: path).clearCache()
            return CacheClearReport(clearedRequestLog: false)
        } catch let error as KioskError where AppDatabase.isDiskFull(error) {
            freeRequestLog(at: configuration.requestLogURL)
            try AppDatabase.open(at: path).clearCache()
            return CacheClearReport(clearedRequestLog: true)
        }
    }

    private static func freeRequestLog(at url: URL) {
        if let log = try? RequestLog.open(at: url.path), (try? log.clear()) != nil { return }
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }
}
