import Foundation
import GRDB
import KioskCore

/// A row of `item`: one catalog item of any source, its searchable text, and its JSON payload.
struct ItemRecord: StoreRecord, SourceScopedRecord, Hashable {
    static let databaseTableName = "item"
    /// The FTS5 table that indexes `title`, `subtitle`, `summary` and `keywords`.
    static let searchTableName = "itemSearch"

    var id: Int64?
    var source, itemID, title, subtitle, summary: String
    var imageURL: String?
    /// `CatalogItem.searchKeywords` joined by spaces, so that search finds keywords and facets.
    var keywords: String
    /// The JSON-encoded `CatalogItem`.
    var payload: Data
    /// When the stored content last changed.
    var updatedAt: Date

    enum Columns: String, ColumnExpression {
        case id, source, itemID, title
    }

    init(_ item: CatalogItem, updatedAt: Date) throws {
        self.id = nil
        self.source = item.source.rawValue
        self.itemID = item.itemID
        self.title = item.title
        self.subtitle = item.subtitle
        self.summary = item.summary
        self.imageURL = item.imageURL?.absoluteString
        self.keywords = item.searchKeywords.joined(separator: " ")
        self.payload = try ItemPayload.encode(item)
        self.updatedAt = updatedAt
    }
}
