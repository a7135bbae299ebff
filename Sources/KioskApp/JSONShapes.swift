import Foundation
import KioskCore

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

/// One logged exchange: `kiosk log --json`, `kiosk log show --json` and the debugger's JSON. Bodies are
/// text when they are UTF-8 (JSON, HTML), else base64; the list leaves them out.
public struct RequestJSON: Encodable, Sendable {
    public let id: Int64
    public let startedAt: Date
    public let source: SourceID?
    public let endpoint: String
    public let method: String
    public let url: String
    public let status: Int?
    public let error: String?
    public let decision: CacheDecision
    public let durationMs: Double
    public let timings: RequestTimings
    public let requestHeaders: [RequestRecord.HeaderField]
    public let responseHeaders: [RequestRecord.HeaderField]
    public let requestBody: BodyJSON?
    public let responseBody: BodyJSON?

    public init(_ record: RequestRecord) {
        id = record.id
        startedAt = record.startedAt
        source = record.source
        endpoint = record.endpoint
        method = record.method
        url = record.url
        status = record.status
        error = record.error
        decision = record.decision
        durationMs = (record.timings.total * 1_000_000).rounded() / 1000
        timings = record.timings
        requestHeaders = record.requestHeaders
        responseHeaders = record.responseHeaders
        requestBody = record.requestBody.map(BodyJSON.init)
        responseBody = record.responseBody.map(BodyJSON.init)
    }
}

/// A captured body in JSON: `text` when it is UTF-8, else `base64`.
public struct BodyJSON: Encodable, Sendable {
    public let text: String?
    public let base64: String?
    public let size: Int
    public let truncated: Bool

    public init(_ body: CapturedBody) {
        // A cut made by the capture limit can split a multi-byte character: drop up to 3 bytes to read it.
        let text = (0...(body.isTruncated ? 3 : 0)).lazy.compactMap { String(data: body.data.dropLast($0), encoding: .utf8) }.first
        self.text = text
        base64 = text == nil ? body.data.base64EncodedString() : nil
        size = body.originalSize
        truncated = body.isTruncated
    }
}
