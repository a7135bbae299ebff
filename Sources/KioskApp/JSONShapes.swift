public import Foundation
public import KioskCore

// The JSON shapes of the CLI's `--json` output and of the web app's `/api`: one definition, so the
// two faces can never drift apart. They are a public contract, documented in the README.

/// The encoder both faces use: pretty, sorted keys, ISO 8601 dates.
public enum KioskJSON {
    /// A new encoder with Kiosk's settings.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}

/// A page: `kiosk list --json`.
public struct PageJSON: Encodable, Sendable {
    public let source: SourceID
    public let page: Int
    public let totalPages: Int?
    public let totalItems: Int?
    /// How many the upstream counts in all, when more than its pages hold (NYT's `num_results`).
    public let reportedTotal: Int?
    public let query: String?
    public let filters: [String: String]
    public let items: [CatalogItem]
    public let favorites: [String]
    public let skipped: [DecodingIssue]
    public let attribution: String?
    public let status: StatusJSON

    public init(_ update: CatalogUpdate, favorites: Set<String>) {
        source = update.page.request.source
        page = update.page.request.page
        totalPages = update.page.totalPages
        totalItems = update.page.totalItems
        reportedTotal = update.page.reportedTotal
        query = update.page.request.query
        filters = update.page.request.filters
        items = update.page.items
        self.favorites = update.page.items.map(\.itemID).filter { favorites.contains($0) }
        skipped = update.page.skipped
        attribution = update.page.attribution
        status = StatusJSON(update)
    }

    /// Encodes every key, `null` where the page has no value (the shape is the same for every source).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(source, forKey: .source)
        try container.encode(page, forKey: .page)
        try container.encode(totalPages, forKey: .totalPages)
        try container.encode(totalItems, forKey: .totalItems)
        try container.encode(reportedTotal, forKey: .reportedTotal)
        try container.encode(query, forKey: .query)
        try container.encode(filters, forKey: .filters)
        try container.encode(items, forKey: .items)
        try container.encode(favorites, forKey: .favorites)
        try container.encode(skipped, forKey: .skipped)
        try container.encode(attribution, forKey: .attribution)
        try container.encode(status, forKey: .status)
    }

    private enum CodingKeys: String, CodingKey {
        case source, page, totalPages, totalItems, reportedTotal, query, filters, items, favorites, skipped, attribution, status
    }
}

/// Where data came from and how old it is.
public struct StatusJSON: Encodable, Sendable {
    public let origin: String
    public let stale: Bool
    public let offline: Bool
    public let fetchedAt: Date
    public let freshUntil: Date
    public let ageSeconds: Int
    public let error: String?
    /// Why an answer fetched was not stored (a full disk); nil when it was, or when nothing was fetched.
    public let notStored: String?

    public init(_ update: CatalogUpdate) {
        origin = update.origin.rawValue
        stale = update.isStale
        offline = update.isOffline
        fetchedAt = update.metadata.fetchedAt
        freshUntil = update.metadata.freshUntil
        ageSeconds = Int(update.age)
        error = update.error?.description
        notStored = update.notKept?.description
    }

    /// Encodes every key, `error` and `notStored` `null` when there was none.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(origin, forKey: .origin)
        try container.encode(stale, forKey: .stale)
        try container.encode(offline, forKey: .offline)
        try container.encode(fetchedAt, forKey: .fetchedAt)
        try container.encode(freshUntil, forKey: .freshUntil)
        try container.encode(ageSeconds, forKey: .ageSeconds)
        try container.encode(error, forKey: .error)
        try container.encode(notStored, forKey: .notStored)
    }

    private enum CodingKeys: String, CodingKey { case origin, stale, offline, fetchedAt, freshUntil, ageSeconds, error, notStored }
}

/// One item: `kiosk show --json`.
public struct ItemJSON: Encodable, Sendable {
    public let item: CatalogItem
    public let favorite: Bool
    public let origin: String
    public let error: String?
    /// What the item links to; absent for items that link to nothing.
    public let linked: LinkedJSON?

    public init(_ result: ItemResult) {
        item = result.item
        favorite = result.isFavorite
        origin = result.origin.rawValue
        error = result.error?.description
        linked = result.linked.entries.isEmpty && result.linked.counts.isEmpty ? nil : LinkedJSON(result.linked)
    }

    // By hand, so that no error is `null`, never an absent key (docs/API.md); `linked` is absent for an item that links
    // to nothing, as documented.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(item, forKey: .item)
        try container.encode(favorite, forKey: .favorite)
        try container.encode(origin, forKey: .origin)
        try container.encode(error, forKey: .error)
        try container.encodeIfPresent(linked, forKey: .linked)
    }

    private enum CodingKeys: String, CodingKey { case item, favorite, origin, error, linked }
}

/// An item's links: `{page, pageCount, counts: {episode: 51}, entries: [{role, itemID, item|null}], error, skipped}`.
public struct LinkedJSON: Encodable, Sendable {
    /// One link and its item, null when neither stored nor fetched.
    public struct Entry: Encodable, Sendable {
        public let role: ItemLink.Role
        public let itemID: String
        public let item: CatalogItem?
        public let favorite: Bool

        // Encoded by hand so that a missing item is `null`, never an absent key.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(role, forKey: .role)
            try container.encode(itemID, forKey: .itemID)
            try container.encode(item, forKey: .item)
            try container.encode(favorite, forKey: .favorite)
        }

        private enum CodingKeys: String, CodingKey { case role, itemID, item, favorite }
    }

    public let page: Int
    public let pageCount: Int
    public let counts: [String: Int]
    public let entries: [Entry]
    public let error: String?
    public let skipped: [DecodingIssue]

    public init(_ linked: LinkedItems) {
        page = linked.page
        pageCount = linked.pageCount
        counts = Dictionary(uniqueKeysWithValues: linked.counts.map { ($0.key.rawValue, $0.value) })
        entries = linked.entries.map {
            Entry(role: $0.link.role, itemID: $0.link.itemID, item: $0.item, favorite: linked.favorites.contains($0.link.itemID))
        }
        error = linked.error?.description
        skipped = linked.skipped
    }

    // By hand, so that no error is `null`, never an absent key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(page, forKey: .page)
        try container.encode(pageCount, forKey: .pageCount)
        try container.encode(counts, forKey: .counts)
        try container.encode(entries, forKey: .entries)
        try container.encode(error, forKey: .error)
        try container.encode(skipped, forKey: .skipped)
    }

    private enum CodingKeys: String, CodingKey { case page, pageCount, counts, entries, error, skipped }
}

/// Every starred item, newest first: `kiosk favorite list --json` and `/api/favorites`.
public struct FavoritesJSON: Encodable, Sendable {
    public let items: [CatalogItem]

    public init(_ items: [CatalogItem]) { self.items = items }
}

/// A search: `kiosk search --json`.
public struct SearchJSON: Encodable, Sendable {
    public let query: String
    public let origin: String
    public let items: [CatalogItem]
    public let error: String?
    public let page: Int
    public let totalPages: Int?
    /// How many items match on every page, when known.
    public let totalItems: Int?
    /// Whether the store holds more matches than the best ones given.
    public let moreMatch: Bool

    public init(_ result: SearchResult) {
        query = result.query
        origin = result.origin.rawValue
        items = result.items
        error = result.error?.description
        page = result.page
        totalPages = result.totalPages
        totalItems = result.totalItems
        moreMatch = result.moreMatch
    }

    // By hand, so that what is not known is `null`, never an absent key (docs/API.md).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(query, forKey: .query)
        try container.encode(origin, forKey: .origin)
        try container.encode(items, forKey: .items)
        try container.encode(error, forKey: .error)
        try container.encode(page, forKey: .page)
        try container.encode(totalPages, forKey: .totalPages)
        try container.encode(totalItems, forKey: .totalItems)
        try container.encode(moreMatch, forKey: .moreMatch)
    }

    private enum CodingKeys: String, CodingKey { case query, origin, items, error, page, totalPages, totalItems, moreMatch }
}
