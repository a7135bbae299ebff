import Foundation
#if canImport(Glibc)
import Glibc
#endif
import GRDB
import KioskCore

// Statistics and cache clearing. Clearing the cache never touches user data.

extension AppDatabase {
    static func computeStats(path: String?, _ db: Database) throws -> StoreStats {
        func countsBySource(_ table: String) throws -> [String: Int] {
            try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT source, COUNT(*) FROM \(table) GROUP BY source")
                .map { row -> (String, Int) in (row[0], row[1]) })
        }
        let items = try countsBySource(ItemRecord.databaseTableName)
        let snapshots = try countsBySource(SnapshotRecord.databaseTableName)
        let favorites = try countsBySource(FavoriteRecord.databaseTableName)
        let deleted = try countsBySource(UserDeletionRecord.databaseTableName)
        let images = try imageUsage(db)
        return StoreStats(
            sources: SourceID.allCases.map {
                StoreStats.SourceCounts(source: $0, items: items[$0.rawValue] ?? 0,
                                        snapshots: snapshots[$0.rawValue] ?? 0,
                                        favorites: favorites[$0.rawValue] ?? 0,
                                        deleted: deleted[$0.rawValue] ?? 0)
            },
            favorites: favorites.values.reduce(0, +),
            imageCount: images.count,
            imageBytes: images.bytes,
            databaseBytes: try databaseBytes(path: path, db))
    }

    /// The main file plus its write-ahead log on disk (what the user's disk actually holds), or
    /// the page count times the page size in memory.
    private static func databaseBytes(path: String?, _ db: Database) throws -> Int {
        if let path {
            return [path, path + "-wal"].reduce(0) { total, file in
                let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue
                return total + (size ?? 0)
            }
        }
        let pageCount = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
        return pageCount * pageSize
    }

    static func clearCache(_ db: Database) throws {
        // Pages first (their order rows cascade), so that no page points at a deleted item.
        try SnapshotRecord.deleteAll(db)
        try ImageRecord.deleteAll(db)
        try db.execute(sql: """
            DELETE FROM item WHERE NOT EXISTS (
                SELECT 1 FROM favorite WHERE favorite.source = item.source AND favorite.itemID = item.itemID)
            """)
        try rebuildSearchTerms(db)
        // Moves the freed pages to the end of the file and truncates them away.
        try db.execute(sql: "PRAGMA incremental_vacuum")
    }
}

extension AppDatabase {
    /// Whether another process has the WAL database at `path` open. Each of SQLite's connections to a WAL database holds
    /// a shared lock on one byte of its `-shm` file (the "DMS" byte, 128) for as long as it is open; `F_GETLK` asks
    /// whether one held elsewhere would block a write lock there (this process's own locks never do).
    public static func isOpenElsewhere(path: String) -> Bool {
        let descriptor = Glibc.open(path + "-shm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        // Closing a descriptor drops this process's POSIX locks on the file: only call this when it holds the file closed.
        defer { Glibc.close(descriptor) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 128
        lock.l_len = 1
        guard fcntl(descriptor, F_GETLK, &lock) == 0 else { return false }
        return lock.l_type != Int16(F_UNLCK)
    }
}
