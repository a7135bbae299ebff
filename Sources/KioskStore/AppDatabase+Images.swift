import Foundation
import GRDB
import KioskCore

// The image disk cache: blobs in SQLite, evicted least recently used first once over a byte limit.

extension AppDatabase {
    /// The next value of the use counter (the index on lastAccess makes MAX a single seek).
    private static func nextAccess(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(MAX(lastAccess), 0) + 1 FROM image")) ?? 1
    }

    func fetchImage(url: String) throws -> StoredImage? {
        // The blob is read concurrently with other readers; only the LRU bump needs the writer.
        guard let record = try writer.read({ db in try ImageRecord.fetchOne(db, key: url) }) else { return nil }
        // The bump is queued rather than awaited so that serving an image never waits for a
        // commit. The writer runs its queue in order, so a later saveImage (and its eviction)
        // always sees this use. A failed bump only makes the LRU order slightly stale.
        writer.asyncWriteWithoutTransaction { db in
            _ = try? db.inTransaction {
                try db.execute(sql: "UPDATE image SET lastAccess = ? WHERE url = ?",
                               arguments: [Self.nextAccess(db), url])
                return .commit
            }
        }
        return record.storedImage
    }

    static func saveImage(_ image: StoredImage, sizeLimit: Int, _ db: Database) throws {
        try ImageRecord(image, lastAccess: nextAccess(db)).upsert(db)
        var total = try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(byteCount), 0) FROM image") ?? 0
        guard total > sizeLimit else { return }
        var evicted: [String] = []
        let oldest = try Row.fetchCursor(db, ImageRecord.all().leastRecentlyUsedFirst()
            .select(ImageRecord.Columns.url, ImageRecord.Columns.byteCount))
        while total > sizeLimit, let row = try oldest.next() {
            evicted.append(row[0])
            total -= row[1] as Int
        }
        try ImageRecord.deleteAll(db, keys: evicted)
    }

    static func imageUsage(_ db: Database) throws -> (count: Int, bytes: Int) {
        let row = try Row.fetchOne(db, sql: "SELECT COUNT(*), COALESCE(SUM(byteCount), 0) FROM image")
        return (row?[0] ?? 0, row?[1] ?? 0)
    }
}
