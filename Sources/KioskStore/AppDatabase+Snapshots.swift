import Foundation
import GRDB
import KioskCore

// Snapshots: a page's metadata in `snapshot`, its order in `snapshotItem`, its items in `item`.

extension AppDatabase {
    // Reading a page is two cached statements: the metadata row, then one join in page order.
    private static let snapshotSQL = "SELECT * FROM snapshot WHERE key = ?"
    private static let snapshotItemsSQL = """
        SELECT item.payload FROM snapshotItem
        JOIN item ON item.source = snapshotItem.source AND item.itemID = snapshotItem.itemID
        WHERE snapshotItem.snapshotKey = ?
        ORDER BY snapshotItem.position
        """

    static func fetchSnapshot(key: String, _ db: Database) throws -> Snapshot? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: snapshotSQL), arguments: [key]),
              // A row this version cannot read is a miss: the refetch overwrites it.
              let record = try? SnapshotRecord(row: row)
        else { return nil }
        let payloads = try Data.fetchAll(db.cachedStatement(sql: snapshotItemsSQL), arguments: [key])
        guard let items = ItemPayload.decodeAll(payloads) else { return nil }
        return record.snapshot(items: items)
    }

    static func saveSnapshot(_ snapshot: Snapshot, at date: Date, _ db: Database) throws {
        try upsertItems(snapshot.page.items, at: date, db)
        let record = SnapshotRecord(snapshot)
        // An upsert, not a REPLACE: replacing the row would also be correct (the order rows are
        // rewritten below) but would cascade-delete them first for nothing.
        try record.upsert(db)
        try db.cachedStatement(sql: "DELETE FROM snapshotItem WHERE snapshotKey = ?")
            .execute(arguments: [record.key])
        let insert = try db.cachedStatement(sql: """
            INSERT INTO snapshotItem (snapshotKey, position, source, itemID) VALUES (?, ?, ?, ?)
            """)
        for (position, item) in snapshot.page.items.enumerated() {
            try insert.execute(arguments: [record.key, position, item.source.rawValue, item.itemID])
        }
    }

    /// Whether a page was stored under `key` to update.
    static func updateMetadata(_ metadata: SnapshotMetadata, key: String, _ db: Database) throws -> Bool {
        try db.execute(
            sql: "UPDATE snapshot SET fetchedAt = ?, freshUntil = ?, etag = ?, lastModified = ?, staleShownUntil = ? WHERE key = ?",
            arguments: [metadata.fetchedAt.storedValue, metadata.freshUntil.storedValue,
                        metadata.validators.etag, metadata.validators.lastModified,
                        metadata.staleShownUntil?.storedValue, key])
        return db.changesCount > 0
    }
}
