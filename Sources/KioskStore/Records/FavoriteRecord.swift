import Foundation
import GRDB
import KioskCore

/// A row of `favorite`: the user marked this item (user data, never cleared with the cache).
struct FavoriteRecord: StoreRecord, SourceScopedRecord, Hashable {
    static let databaseTableName = "favorite"

    /// Increases with each new favorite: the "newest first" order.
    var id: Int64?
    var source: String
    var itemID: String
    var createdAt: Date

    enum Columns: String, ColumnExpression {
        case id, source, itemID
    }
}
