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
    /// request log, Kiosk's own disposable file, makes room: first emptied in place (so that a
    /// `kiosk serve` writing it sees it empty), then, if that freed too little, its files removed.
    /// Clearing always works when Kiosk's own files hold the space.
    public static func clearCache(_ configuration: KioskConfiguration) throws -> CacheClearReport {
        let path = configuration.databaseURL.path
        let logURL = configuration.requestLogURL
        if try clearUnlessDiskFull(path) { return CacheClearReport(clearedRequestLog: false) }
        if emptyRequestLog(at: logURL), try clearUnlessDiskFull(path) { return CacheClearReport(clearedRequestLog: true) }
        // A running `kiosk serve` or `kiosk proxy` writing the log would go on writing files no longer in any folder: its
        // log lost, and the space they hold not given back until it stops.
        guard !AppDatabase.isOpenElsewhere(path: logURL.path) else {
            throw KioskError.storage("the disk is full, so the cache cannot be cleared; the request log \(logURL.path), which "
                                     + "would make room, is open in a running Kiosk: stop it (or clear its log from its "
                                     + "console) and clear the cache again, or free space elsewhere")
        }
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: logURL.path + suffix)
        }
        try AppDatabase.open(at: path).clearCache()
        return CacheClearReport(clearedRequestLog: true)
    }

    /// Clears the store's cache: true when done, false when the disk was full; any other failure is thrown.
    private static func clearUnlessDiskFull(_ path: String) throws -> Bool {
        do {
            try AppDatabase.open(at: path).clearCache()
            return true
        } catch let error as KioskError where error.isDiskFull {
            return false
        }
    }

    /// Empties the request log in place and closes it: its files, removed later, must not stay open
    /// here, or the space they hold would not come back until this process exits.
    private static func emptyRequestLog(at url: URL) -> Bool {
        guard let log = try? RequestLog.open(at: url.path) else { return false }
        defer { try? log.close() }
        return (try? log.clear()) != nil
    }
}
