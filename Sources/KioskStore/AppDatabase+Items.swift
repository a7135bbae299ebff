import Foundation
import GRDB
import KioskCore

// Items: one row per (source, itemID), shared by every page that shows the item.

extension AppDatabase {
    // An upsert keeps the row's id, so the FTS index is updated in place (a REPLACE would delete
    // and re-insert without firing the delete trigger). The WHERE clause skips rows whose payload
    // did not change, so refreshing an unchanged page does not rewrite the full-text index, and
    // RETURNING reports only the rows really inserted or updated (their words feed `searchTerm`).
    //
    // Rows go in chunks of many rows per statement because, inside a transaction, every statement
    // that writes through the FTS5 triggers opens a statement savepoint, and FTS5 flushes its
    // pending index data to a new segment at each savepoint: one row per statement made loading
    // 100,000 items 2.3x slower (12 s instead of 5 s), spent merging thousands of tiny segments.
    // 1,000 rows bind 10,000 parameters, well under SQLite's limit of 32,766.
    static let upsertChunkSize = 1_000

    private static func upsertItemsSQL(rowCount: Int) -> String {
        let row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        return """
            INSERT INTO item (source, itemID, title, subtitle, summary, imageURL, keywords, payload, updatedAt, firstSeenAt)
            VALUES \(Array(repeating: row, count: rowCount).joined(separator: ", "))
            ON CONFLICT (source, itemID) DO UPDATE SET
                title = excluded.title,
                subtitle = excluded.subtitle,
                summary = excluded.summary,
                imageURL = excluded.imageURL,
                keywords = excluded.keywords,
                payload = excluded.payload,
                updatedAt = excluded.updatedAt
            WHERE item.payload IS NOT excluded.payload
            RETURNING title, subtitle, summary, keywords
            """
    }

    /// Inserts or updates items, within the caller's transaction; a new item is first seen, and a changed one
    /// updated, at `date` (what Home's "since your last visit" reads).
    static func upsertItems(_ items: some Collection<CatalogItem>, at date: Date, _ db: Database) throws {
        guard !items.isEmpty else { return }
        let now = date.storedValue
        var changedTexts: [String] = []
        var values: [(any DatabaseValueConvertible)?] = []
        values.reserveCapacity(min(items.count, upsertChunkSize) * 10)
        var rowCount = 0
        func flush() throws {
            guard rowCount > 0 else { return }
            // Cached per chunk size: a full chunk, plus the few sizes of last chunks (20-item pages).
            let statement = try db.cachedStatement(sql: upsertItemsSQL(rowCount: rowCount))
            let changed = try Row.fetchCursor(statement, arguments: StatementArguments(values))
            while let row = try changed.next() {
                for index in 0..<4 { changedTexts.append(row[index]) }
            }
            values.removeAll(keepingCapacity: true)
            rowCount = 0
        }
        for item in items {
            let record = try ItemRecord(item, updatedAt: Date(storedValue: now))
            values += [record.source, record.itemID, record.title, record.subtitle, record.summary,
                       record.imageURL, record.keywords, record.payload, now, now]
            rowCount += 1
            if rowCount == upsertChunkSize { try flush() }
        }
        try flush()
        try addSearchTerms(of: changedTexts, db)
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
