import Foundation
import GRDB
import KioskCore

// The dogs list. The user's deletions and order are user data: refreshes merge into them and
// never overwrite them. `dogOrder` holds the latest upstream list (deleted dogs included, so that
// a reset can restore them); the display list is that order minus `dogDeletion`, joined with the
// stored items.

extension AppDatabase {
    private static let visibleDogsSQL = """
        SELECT item.payload FROM dogOrder
        JOIN item ON item.source = 'dogs' AND item.itemID = dogOrder.itemID
        WHERE dogOrder.itemID NOT IN (SELECT itemID FROM dogDeletion)
        ORDER BY dogOrder.position, dogOrder.upstreamPosition
        """
    private static let visibleDogIDsSQL = """
        SELECT dogOrder.itemID FROM dogOrder
        JOIN item ON item.source = 'dogs' AND item.itemID = dogOrder.itemID
        WHERE dogOrder.itemID NOT IN (SELECT itemID FROM dogDeletion)
        ORDER BY dogOrder.position, dogOrder.upstreamPosition
        """

    static func fetchVisibleDogs(_ db: Database) throws -> [CatalogItem] {
        try fetchItems(db, sql: visibleDogsSQL)
    }

    private static func visibleDogIDs(_ db: Database) throws -> [String] {
        try String.fetchAll(db.cachedStatement(sql: visibleDogIDsSQL))
    }

    static func mergeDogs(_ upstream: [CatalogItem], _ db: Database) throws -> [CatalogItem] {
        if let stranger = upstream.first(where: { $0.source != .dogs }) {
            throw KioskError.invalidRequest("\(stranger.id) is not a dog and cannot be merged into the dogs list")
        }
        try upsertItems(upstream, db)

        var upstreamIDs: [String] = []
        var upstreamSet: Set<String> = []
        for dog in upstream where upstreamSet.insert(dog.itemID).inserted {
            upstreamIDs.append(dog.itemID)
        }
        let upstreamPosition = Dictionary(uniqueKeysWithValues: upstreamIDs.enumerated().map { ($1, $0) })

        // The user's order for dogs upstream still lists, then newcomers in upstream order.
        // Deleted dogs keep their place here; the display query hides them.
        let previous = try DogOrderRecord.all().userOrder().fetchAll(db).map(\.itemID)
        var order = previous.filter(upstreamSet.contains)
        let known = Set(order)
        order += upstreamIDs.filter { !known.contains($0) }

        try DogOrderRecord.deleteAll(db)
        for (position, itemID) in order.enumerated() {
            try DogOrderRecord(itemID: itemID, position: position, upstreamPosition: upstreamPosition[itemID]!)
                .insert(db)
        }
        return try fetchVisibleDogs(db)
    }

    static func deleteDog(itemID: String, _ db: Database) throws -> Int {
        let visible = try visibleDogIDs(db)
        guard visible.contains(itemID) else {
            throw KioskError.notFound("dog \(itemID) is not in the dogs list")
        }
        try DogDeletionRecord(itemID: itemID, deletedAt: Date()).upsert(db)
        return visible.count - 1
    }

    static func moveDog(itemID: String, to index: Int, _ db: Database) throws {
        var visible = try visibleDogIDs(db)
        guard let from = visible.firstIndex(of: itemID) else {
            throw KioskError.notFound("dog \(itemID) is not in the dogs list")
        }
        guard visible.indices.contains(index) else {
            throw KioskError.invalidRequest(
                "cannot move dog \(itemID) to position \(index): the list has \(visible.count) dogs "
                + "(positions 0 to \(visible.count - 1))")
        }
        visible.insert(visible.remove(at: from), at: index)

        // Visible dogs take positions 0..<n in their new order; hidden rows (deleted dogs, or dogs
        // whose item is gone) follow in their previous relative order.
        let visibleSet = Set(visible)
        let hidden = try DogOrderRecord.all().userOrder().fetchAll(db).map(\.itemID).filter { !visibleSet.contains($0) }
        let update = try db.cachedStatement(sql: "UPDATE dogOrder SET position = ? WHERE itemID = ?")
        for (position, id) in (visible + hidden).enumerated() {
            try update.execute(arguments: [position, id])
        }
    }

    static func resetDogs(_ db: Database) throws {
        try DogDeletionRecord.deleteAll(db)
        try db.execute(sql: "UPDATE dogOrder SET position = upstreamPosition")
    }
}
