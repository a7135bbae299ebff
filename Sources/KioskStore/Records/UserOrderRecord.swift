import Foundation
import GRDB

/// A row of `userOrder`: one item of the latest upstream list of a user-ordered catalog (the dogs), with the
/// user's position for it.
struct UserOrderRecord: StoreRecord, Hashable {
    static let databaseTableName = "userOrder"

    var source: String
    var itemID: String
    /// The user's order (0-based, may have gaps where deleted items sit).
    var position: Int
    /// The upstream order, restored by a reset.
    var upstreamPosition: Int

    enum Columns: String, ColumnExpression {
        case source, itemID, position, upstreamPosition
    }
}

extension DerivableRequest<UserOrderRecord> {
    /// Every item of `source`'s latest upstream list, in the user's order.
    func userOrder(of source: String) -> Self {
        filter(UserOrderRecord.Columns.source == source)
            .order(UserOrderRecord.Columns.position, UserOrderRecord.Columns.upstreamPosition)
    }
}

/// A row of `userDeletion`: an item the user deleted from a user-ordered catalog; refreshes never bring it back.
struct UserDeletionRecord: StoreRecord, Hashable {
    static let databaseTableName = "userDeletion"

    var source: String
    var itemID: String
    var deletedAt: Date
}
