import Foundation
import GRDB
import KioskCore

// Items: one row per (source, itemID), shared by every page that shows the item.

extension AppDatabase {
    // An upsert keeps the row's id, so the FTS index is updated in place (a REPLACE would delete
    // and re-insert without firing the delete trigger). The WHERE clause skips rows whose payload
    // did not change, so refreshing an unchanged page does not rewrite the full-text index.
    private static let upsertItemSQL = """
        INSERT INTO item (source, itemID, title, subtitle, summary, imageURL, keywords, payload, updatedAt)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (source, itemID) DO UPDATE SET
            title = excluded.title,
            subtitle = excluded.subtitle,
            summary = excluded.summary,
            imageURL = excluded.imageURL,
            keywords = excluded.keywords,
            payload = excluded.payload,
            updatedAt = excluded.updatedAt
        WHERE item.payload IS NOT excluded.payload
        """

    /// Inserts or updates items, within the caller's transaction.
    static func upsertItems(_ items: some Collection<CatalogItem>, _ db: Database) throws {
        guard !items.isEmpty else { return }
        // A cached, prepared statement: bulk loads of 100,000 items bind and step it only.
        let statement = try db.cachedStatement(sql: upsertItemSQL)
        let now = Date()
        for item in items {
            let record = try ItemRecord(item, updatedAt: now)
            try statement.execute(arguments: [
                record.source, record.itemID, record.title, record.subtitle, record.summary,
                record.imageURL, record.keywords, record.payload, record.updatedAt.storedValue,
            ])
        }
    }

    static func fetchItem(source: SourceID, itemID: String, _ db: Database) throws -> CatalogItem? {
        let statement = try db.cachedStatement(sql: "SELECT payload FROM item WHERE source = ? AND itemID = ?")
        guard let payload = try Data.fetchOne(statement, arguments: [source.rawValue, itemID]) else { return nil }
        return ItemPayload.decodeAll([payload])?.first
    }

    static func itemExists(source: SourceID, itemID: String, _ db: Database) throws -> Bool {
        try ItemRecord.all().filter(source: source, itemID: itemID).isEmpty(db) == false
    }

    static func countItems(source: SourceID?, _ db: Database) throws -> Int {
        try ItemRecord.all().filter(source: source).fetchCount(db)
    }

    /// Runs a statement whose first column is `item.payload` and decodes the items it lists.
    static func fetchItems(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [CatalogItem] {
        let payloads = try Data.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
        return ItemPayload.decodeEach(payloads)
    }
}
