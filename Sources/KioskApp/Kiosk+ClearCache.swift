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
        guard removeStoreFiles(logURL) else {
            throw KioskError.storage("the disk is full, so the cache cannot be cleared; the request log \(logURL.path), which "
                                     + "would make room, is open in a running Kiosk: stop it (or clear its log from its "
                                     + "console) and clear the cache again, or free space elsewhere")
        }
        try AppDatabase.open(at: path).clearCache()
        return CacheClearReport(clearedRequestLog: true)
    }

    /// Empties the request log of the configured data directory from a process that does not hold it (`kiosk log
    /// clear`); returns how many records it held. On a full disk SQLite cannot write even a delete, and a checkpoint
    /// cannot move the WAL into the file: then the log's files go, which is the same empty log, when no running Kiosk
    /// holds them (a `kiosk proxy` warned "clear the cache": clearing must give the space back). A log that cannot be
    /// read at all (a corrupt file, one a newer Kiosk wrote) is moved aside whole, never deleted, when no running Kiosk
    /// holds it: a new one starts (`ClearedLog.movedAside` names where the old one went).
    public static func clearRequestLog(_ configuration: KioskConfiguration) throws -> ClearedLog {
        let url = configuration.requestLogURL
        guard FileManager.default.fileExists(atPath: url.path) else { return ClearedLog(count: 0) }
        var count = 0
        do {
            let log = try RequestLog.open(at: url.path)
            defer { try? log.close() }
            count = try log.count()
            try log.clear()
        } catch let error as KioskError where error.isDiskFull {
            guard removeStoreFiles(url) else { throw heldOnFullDisk(error, "the request log", url) }
            return ClearedLog(count: count)
        } catch let error as KioskError {
            guard AppDatabase.isUnreadable(error), let aside = moveStoreFilesAside(url) else { throw error }
            return ClearedLog(count: 0, movedAside: aside)
        }
        giveBackStrandedWAL(url)
        return ClearedLog(count: count)
    }

    /// What `kiosk log clear` did.
    public struct ClearedLog: Sendable, Equatable {
        /// The records the log held.
        public var count: Int
        /// Where a log that could not be read went (its path), a new one starting in its place; nil when it was read.
        public var movedAside: String?
    }

    /// Renames a store's files (the database, its WAL, its shared memory) to `<name>.unreadable-<time>`, unless a running
    /// Kiosk holds them; returns the database's new path, nil when they stayed.
    static func moveStoreFilesAside(_ url: URL) -> String? {
        guard !AppDatabase.isOpenElsewhere(path: url.path) else { return nil }
        let stamp = ISO8601DateFormatter.string(from: Date(), timeZone: .gmt, formatOptions: [.withFullDate, .withTime])
        let aside = url.path + ".unreadable-" + stamp
        do {
            try FileManager.default.moveItem(atPath: url.path, toPath: aside)
        } catch {
            return nil
        }
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: url.path + suffix) {
            try? FileManager.default.moveItem(atPath: url.path + suffix, toPath: aside + suffix)
        }
        return aside
    }

    /// The error of a store that cannot be cleared on a full disk because a running Kiosk holds its file.
    static func heldOnFullDisk(_ error: KioskError, _ what: String, _ url: URL) -> KioskError {
        var said = if case .storage(let message) = error { message } else { error.description }
        // Its own sentence ends where this one goes on.
        while said.hasSuffix(".") { said.removeLast() }
        return .storage("\(said); \(what) (\(url.path)) is open in a running Kiosk, so its files cannot be removed to make "
                        + "room: stop it and clear again, or free space elsewhere")
    }

    /// Removes a store's files (the database, its WAL, its shared memory), giving their space back, unless a running
    /// Kiosk holds them: one writing them would go on writing files no longer in any folder, its data lost and the
    /// space not given back until it stops. Returns whether they went. This process must not hold them open.
    static func removeStoreFiles(_ url: URL) -> Bool {
        guard !AppDatabase.isOpenElsewhere(path: url.path) else { return false }
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
        return true
    }

    /// After a store emptied whole and closed: a WAL that outlived its last connection is one whose checkpoint failed
    /// (a full disk, the file unable to grow to take it in), holding the space of what was deleted. The store being
    /// empty, its files go, unless a running Kiosk holds them.
    static func giveBackStrandedWAL(_ url: URL) {
        let wal = url.path + "-wal"
        guard let size = (try? FileManager.default.attributesOfItem(atPath: wal))?[.size] as? Int, size > 0 else { return }
        _ = removeStoreFiles(url)
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
