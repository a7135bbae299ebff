import Foundation
import GRDB
import KioskCore

/// A row of `item`: one catalog item of any source, its searchable text, and its JSON payload.
struct ItemRecord: StoreRecord, Hashable {
    static let databaseTableName = "item"
    /// The FTS5 table that indexes `title`, `subtitle`, `summary` and `keywords`.
    static let searchTableName = "itemSearch"

    var id: Int64?
    var source: String
    var itemID: String
    var title: String
    var subtitle: String
    var summary: String
    var imageURL: String?
    /// `CatalogItem.searchKeywords` joined by spaces, so that search finds keywords and facets.
    var keywords: String
    /// The JSON-encoded `CatalogItem`.
    var payload: Data
    /// When the stored content last changed.
    var updatedAt: Date

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let source = Column(CodingKeys.source)
        static let itemID = Column(CodingKeys.itemID)
        static let title = Column(CodingKeys.title)
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

extension DerivableRequest<ItemRecord> {
    /// Items of one source, or all items when `source` is nil.
    func filter(source: SourceID?) -> Self {
        guard let source else { return self }
        return filter(ItemRecord.Columns.source == source.rawValue)
    }

    /// One item by its key.
    func filter(source: SourceID, itemID: String) -> Self {
        filter(ItemRecord.Columns.source == source.rawValue && ItemRecord.Columns.itemID == itemID)
    }
}
