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
        query = update.page.request.query
        filters = update.page.request.filters
        items = update.page.items
        self.favorites = update.page.items.map(\.itemID).filter { favorites.contains($0) }
        skipped = update.page.skipped
        attribution = update.page.attribution
        status = StatusJSON(update)
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

    public init(_ update: CatalogUpdate) {
        origin = update.origin.rawValue
        stale = update.isStale
        offline = update.isOffline
        fetchedAt = update.metadata.fetchedAt
        freshUntil = update.metadata.freshUntil
        ageSeconds = Int(update.age)
        error = update.error?.description
    }
}

/// One item: `kiosk show --json`.
public struct ItemJSON: Encodable, Sendable {
    public let item: CatalogItem
    public let favorite: Bool
    public let origin: String
    public let error: String?

    public init(_ result: ItemResult) {
        item = result.item
        favorite = result.isFavorite
        origin = result.origin.rawValue
        error = result.error?.description
    }
}

/// A search: `kiosk search --json`.
public struct SearchJSON: Encodable, Sendable {
    public let query: String
    public let origin: String
    public let items: [CatalogItem]
    public let error: String?
    public let page: Int
    public let totalPages: Int?

    public init(_ result: SearchResult) {
        query = result.query
        origin = result.origin.rawValue
        items = result.items
        error = result.error?.description
        page = result.page
        totalPages = result.totalPages
    }
}
