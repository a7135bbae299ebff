import Foundation
import GRDB
import KioskCore

/// A row of `favorite`: the user marked this item (user data, never cleared with the cache).
struct FavoriteRecord: StoreRecord, Hashable {
    static let databaseTableName = "favorite"

    /// Increases with each new favorite: the "newest first" order.
    var id: Int64?
    var source: String
    var itemID: String
    var createdAt: Date

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let source = Column(CodingKeys.source)
        static let itemID = Column(CodingKeys.itemID)
    }
}

extension DerivableRequest<FavoriteRecord> {
    /// Favorites of one source, or all favorites when `source` is nil.
    func filter(source: SourceID?) -> Self {
        guard let source else { return self }
        return filter(FavoriteRecord.Columns.source == source.rawValue)
    }

    /// One favorite by its item's key.
    func filter(source: SourceID, itemID: String) -> Self {
        filter(FavoriteRecord.Columns.source == source.rawValue && FavoriteRecord.Columns.itemID == itemID)
    }
}
