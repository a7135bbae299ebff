public import Foundation
import GRDB
public import KioskCore

// The reader's activity, for Home: what it opened (the `reading` table, user data) and what changed in the
// store since a moment (items' `firstSeenAt` and `updatedAt`).

extension AppDatabase {
    /// How many opened items the history keeps; the oldest go first.
    public static let readingHistoryLimit = 100

    /// Notes that the reader opened an item now (again: it moves to the top); keeps the newest
    /// `readingHistoryLimit`. An item that is not stored is noted too, and shows once it is.
    public func noteRead(source: SourceID, itemID: String) throws {
        let date = now()
        try write("note \(source.rawValue)/\(itemID) as read") { db in
            try db.cachedStatement(sql: """
                INSERT INTO reading (source, itemID, readAt) VALUES (?, ?, ?)
                ON CONFLICT (source, itemID) DO UPDATE SET readAt = excluded.readAt
                """).execute(arguments: [source.rawValue, itemID, date.storedValue])
            try db.cachedStatement(sql: """
                DELETE FROM reading WHERE readAt < (SELECT readAt FROM reading ORDER BY readAt DESC LIMIT 1 OFFSET ?)
                """).execute(arguments: [Self.readingHistoryLimit - 1])
        }
    }

    /// The stored items the reader opened, most recent first, at most `limit` of them, from `sources` only.
    public func recentlyRead(limit: Int, sources: [SourceID]) throws -> [ReadItem] {
        guard limit > 0, !sources.isEmpty else { return [] }
        return try read("read the reading history") { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT item.payload, reading.readAt FROM reading
                JOIN item ON item.source = reading.source AND item.itemID = reading.itemID
                WHERE reading.source IN (\(databaseQuestionMarks(count: sources.count))) AND \(Self.notDeleted("reading"))
                ORDER BY reading.readAt DESC LIMIT ?
                """, arguments: StatementArguments(sources.map(\.rawValue) + [limit]))
            return rows.compactMap { row -> ReadItem? in
                guard let item = ItemPayload.decodeEach([row[0] as Data]).first else { return nil }
                return ReadItem(item: item, readAt: Date(storedValue: row[1]))
            }
        }
    }

    /// Forgets every item the reader opened.
    public func clearReadingHistory() throws {
        try write("clear the reading history") { db in try db.execute(sql: "DELETE FROM reading") }
    }

    /// Per catalog of `sources` that has any, what changed in its stored items after `date`, with the `latest`
    /// most recently changed; in `sources`' order.
    public func changes(since date: Date, latest: Int, sources: [SourceID]) throws -> [CatalogChanges] {
        try read("read what changed since \(date)") { db in
            var changes: [CatalogChanges] = []
            for source in sources {
                // Through the updatedAt index: only the rows changed since are read. An item the reader deleted from a
                // list of theirs (a dog) is no news: the list does not show it.
                guard let counts = try Row.fetchOne(db.cachedStatement(sql: """
                    SELECT count(*), total(firstSeenAt > ?1) FROM item WHERE updatedAt > ?1 AND source = ?2 AND \(Self.notDeleted("item"))
                    """), arguments: [date.storedValue, source.rawValue]) else { continue }
                let changed: Int = counts[0], added = Int(counts[1] as Double)
                guard changed > 0 else { continue }
                let items = try Self.fetchItems(db, sql: """
                    SELECT payload FROM item WHERE updatedAt > ? AND source = ? AND \(Self.notDeleted("item"))
                    ORDER BY updatedAt DESC, id LIMIT ?
                    """, arguments: [date.storedValue, source.rawValue, latest])
                changes.append(CatalogChanges(source: source, added: added, updated: changed - added, latest: items))
            }
            return changes
        }
    }
}
