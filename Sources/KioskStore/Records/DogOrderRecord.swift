import GRDB

/// A row of `dogOrder`: one dog of the latest upstream list, with the user's position for it.
struct DogOrderRecord: StoreRecord, Hashable {
    static let databaseTableName = "dogOrder"

    var itemID: String
    /// The user's order (0-based, may have gaps where deleted dogs sit).
    var position: Int
    /// The upstream order, restored by `resetDogs`.
    var upstreamPosition: Int

    enum Columns: String, ColumnExpression {
        case itemID, position, upstreamPosition
    }
}

extension DerivableRequest<DogOrderRecord> {
    /// Every dog of the latest upstream list, in the user's order.
    func userOrder() -> Self {
        order(DogOrderRecord.Columns.position, DogOrderRecord.Columns.upstreamPosition)
    }
}
