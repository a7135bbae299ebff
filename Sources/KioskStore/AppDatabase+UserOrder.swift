import Foundation
import GRDB
import KioskCore

// The lists the user orders (`ItemOrdering.user`: the dogs). The user's deletions and order are user data:
// refreshes merge into them and never overwrite them. `userOrder` holds each such catalog's latest upstream
// list (deleted items included, so that a reset can restore them); the display list is that order minus
// `userDeletion`, joined with the stored items.

extension AppDatabase {
    /// A catalog's list as shown: its latest upstream list in the user's order, without deleted or unstored items.
    private static let visibleRowsSQL = """
        FROM userOrder
        JOIN item ON item.source = userOrder.source AND item.itemID = userOrder.itemID
        WHERE userOrder.source = ?
          AND userOrder.itemID NOT IN (SELECT itemID FROM userDeletion WHERE userDeletion.source = userOrder.source)
        ORDER BY userOrder.position, userOrder.upstreamPosition
        """
    private static let visibleItemsSQL = "SELECT item.payload " + visibleRowsSQL
    private static let visibleIDsSQL = "SELECT userOrder.itemID " + visibleRowsSQL

    static func fetchUserOrdered(_ source: SourceID, _ db: Database) throws -> [CatalogItem] {
        try fetchItems(db, sql: visibleItemsSQL, arguments: [source.rawValue])
    }

    private static func visibleIDs(_ source: SourceID, _ db: Database) throws -> [String] {
        try String.fetchAll(db.cachedStatement(sql: visibleIDsSQL), arguments: [source.rawValue])
    }

    static func mergeUserOrder(_ upstream: [CatalogItem], source: SourceID, at date: Date, _ db: Database) throws -> [CatalogItem] {
        if let stranger = upstream.first(where: { $0.source != source }) {
            throw KioskError.invalidRequest("\(stranger.id) is not of \(source.rawValue) and cannot be merged into its list")
        }
        try upsertItems(upstream, at: date, db)

        var upstreamIDs: [String] = []
        var upstreamSet: Set<String> = []
        for item in upstream where upstreamSet.insert(item.itemID).inserted {
            upstreamIDs.append(item.itemID)
        }
        let upstreamPosition = Dictionary(uniqueKeysWithValues: upstreamIDs.enumerated().map { ($1, $0) })

        // The user's order for items upstream still lists, then newcomers in upstream order.
        // Deleted items keep their place here; the display query hides them.
        let previous = try UserOrderRecord.all().userOrder(of: source.rawValue).fetchAll(db).map(\.itemID)
        var order = previous.filter(upstreamSet.contains)
        let known = Set(order)
        order += upstreamIDs.filter { !known.contains($0) }

        try UserOrderRecord.filter(UserOrderRecord.Columns.source == source.rawValue).deleteAll(db)
        for (position, itemID) in order.enumerated() {
            try UserOrderRecord(source: source.rawValue, itemID: itemID, position: position,
                                upstreamPosition: upstreamPosition[itemID]!).insert(db)
        }
        return try fetchUserOrdered(source, db)
    }

    /// An SQL condition true when the item that `table`'s `source` and `itemID` columns name is not deleted from its
    /// user-ordered list: what keeps a deleted dog out of the favorites and the reading history as out of its list.
    static func notDeleted(_ table: String) -> String {
        "NOT EXISTS (SELECT 1 FROM userDeletion WHERE userDeletion.source = \(table).source AND userDeletion.itemID = \(table).itemID)"
    }

    static func isDeleted(_ source: SourceID, itemID: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM userDeletion WHERE source = ? AND itemID = ?)"),
                          arguments: [source.rawValue, itemID]) ?? false
    }

    /// The error for an item deleted from its list: it is not found, as one never listed is, and how to have it back.
    static func deletedError(_ source: SourceID, itemID: String) -> KioskError {
        .notFound("\(itemID) was deleted from the \(source.displayName) list (resetting the list brings it back)")
    }

    static func deleteFromUserOrder(_ source: SourceID, itemID: String, at date: Date, _ db: Database) throws -> Int {
        let visible = try visibleIDs(source, db)
        guard visible.contains(itemID) else {
            throw KioskError.notFound("\(itemID) is not in the \(source.displayName) list")
        }
        try UserDeletionRecord(source: source.rawValue, itemID: itemID, deletedAt: date).upsert(db)
        return visible.count - 1
    }

    static func restoreInUserOrder(_ source: SourceID, itemID: String, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM userDeletion WHERE source = ? AND itemID = ?", arguments: [source.rawValue, itemID])
        guard db.changesCount > 0 else {
            throw KioskError.notFound("\(itemID) is not deleted from the \(source.displayName) list")
        }
    }

    static func moveInUserOrder(_ source: SourceID, itemID: String, to index: Int, _ db: Database) throws {
        var visible = try visibleIDs(source, db)
        guard let from = visible.firstIndex(of: itemID) else {
            throw KioskError.notFound("\(itemID) is not in the \(source.displayName) list")
        }
        guard visible.indices.contains(index) else {
            throw KioskError.invalidRequest(
                // Said as people count (and `kiosk dogs move` takes them): from 1.
                "cannot move \(itemID) to position \(index + 1): the \(source.displayName) list has \(visible.count) items "
                + "(positions 1 to \(visible.count))")
        }
        visible.insert(visible.remove(at: from), at: index)

        // Visible items take positions 0..<n in their new order; hidden rows (deleted items, or items
        // whose stored item is gone) follow in their previous relative order.
        let visibleSet = Set(visible)
        let hidden = try UserOrderRecord.all().userOrder(of: source.rawValue).fetchAll(db).map(\.itemID)
            .filter { !visibleSet.contains($0) }
        let update = try db.cachedStatement(sql: "UPDATE userOrder SET position = ? WHERE source = ? AND itemID = ?")
        for (position, id) in (visible + hidden).enumerated() {
            try update.execute(arguments: [position, source.rawValue, id])
        }
    }

    static func resetUserOrder(_ source: SourceID, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM userDeletion WHERE source = ?", arguments: [source.rawValue])
        try db.execute(sql: "UPDATE userOrder SET position = upstreamPosition WHERE source = ?", arguments: [source.rawValue])
    }
}
