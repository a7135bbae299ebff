import Foundation
import GRDB
import KioskCore

// Favorites: user data for any item of any source. The foreign key to `item` is what guarantees
// a favorite always has something to show; clearCache keeps those items.

extension AppDatabase {
    static func setFavorite(_ isFavorite: Bool, source: SourceID, itemID: String, at date: Date, _ db: Database) throws {
        let exists = try itemExists(source: source, itemID: itemID, db)
        if isFavorite {
            guard exists else {
                throw KioskError.notFound("\(source.displayName) item \(itemID) is not stored, so it cannot be a favorite")
            }
            if try isDeleted(source, itemID: itemID, db) { throw deletedError(source, itemID: itemID) }
            // Already a favorite: keep its original date and place in the list.
            try FavoriteRecord(id: nil, source: source.rawValue, itemID: itemID, createdAt: date)
                .insert(db, onConflict: .ignore)
        } else {
            let deleted = try FavoriteRecord.all().filter(source: source, itemID: itemID).deleteAll(db)
            if deleted == 0 && !exists {
                throw KioskError.notFound("\(source.displayName) item \(itemID) is not stored")
            }
        }
    }

    private static let favoritesSQL = """
        SELECT item.payload FROM favorite
        JOIN item ON item.source = favorite.source AND item.itemID = favorite.itemID
        WHERE \(notDeleted("favorite"))
        ORDER BY favorite.id DESC
        """

    static func fetchFavorites(_ db: Database) throws -> [CatalogItem] {
        try fetchItems(db, sql: favoritesSQL)
    }

    static func fetchFavoriteIDs(source: SourceID, _ db: Database) throws -> Set<String> {
        try Set(String.fetchAll(db, FavoriteRecord.all().filter(source: source).select(FavoriteRecord.Columns.itemID)))
    }
}
