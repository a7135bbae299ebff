import GRDB

/// A row of `searchTerm`: one token of four characters or more that the search index may hold.
///
/// It lets search turn a long prefix into the exact terms it stands for (see
/// AppDatabase+Search.swift). It may hold terms no item uses any more (it only grows until
/// `clearCache` rebuilds it), which costs nothing: such a term matches nothing.
struct SearchTermRecord: StoreRecord, Hashable {
    static let databaseTableName = "searchTerm"

    var term: String

    enum Columns: String, ColumnExpression {
        case term
    }
}
