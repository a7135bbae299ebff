import GRDB

/// A row of `snapshotItem`: the item at one position of one stored page (order is data).
struct SnapshotItemRecord: StoreRecord, Hashable {
    static let databaseTableName = "snapshotItem"

    var snapshotKey: String
    /// 0-based position in the page.
    var position: Int
    var source: String
    var itemID: String

    enum Columns: String, ColumnExpression {
        case snapshotKey, position
    }
}

