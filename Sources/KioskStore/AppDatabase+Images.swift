import Foundation
import GRDB
import KioskCore
import Synchronization

// The image disk cache: blobs in SQLite, evicted least recently used first once over a byte limit.
//
// A cache hit must not wait for a commit (image hits are the hottest read of the web app), so a
// hit only notes its URL in `pendingImageAccesses`; the notes are written in one transaction by a
// queued write, and `saveImage` writes any that are still pending before it evicts, so eviction
// always sees every use that happened before it.

extension AppDatabase {
    /// The next value of the use counter (the index on lastAccess makes MAX a single seek).
    private static func nextAccess(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(MAX(lastAccess), 0) + 1 FROM image")) ?? 1
    }

    func fetchImage(url: String) throws -> StoredImage? {
        guard let record = try read("read the cached image", { db in try ImageRecord.fetchOne(db, key: url) }) else {
            return nil
        }
        let isFirstPending = pendingImageAccesses.withLock { pending in
            pending.append(url)
            return pending.count == 1
        }
        if isFirstPending {
            // One queued write per burst of hits, not one per hit. A failed write only leaves the
            // LRU order slightly stale, which is not worth failing a cache hit for.
            writer.asyncWriteWithoutTransaction { [self] db in
                _ = try? db.inTransaction {
                    try recordPendingImageAccesses(db)
                    return .commit
                }
            }
        }
        return record.storedImage
    }

    /// Writes the noted cache hits, in the order they happened.
    private func recordPendingImageAccesses(_ db: Database) throws {
        let urls = pendingImageAccesses.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        guard !urls.isEmpty else { return }
        var access = try Self.nextAccess(db)
        let update = try db.cachedStatement(sql: "UPDATE image SET lastAccess = ? WHERE url = ?")
        for url in urls {
            try update.execute(arguments: [access, url])
            access += 1
        }
    }

    func saveImage(_ image: StoredImage, sizeLimit: Int, _ db: Database) throws {
        try recordPendingImageAccesses(db)
        try ImageRecord(image, lastAccess: Self.nextAccess(db)).upsert(db)
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
