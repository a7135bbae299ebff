import Foundation
import Hummingbird
import KioskApp
import KioskCore

// The JSON API answers in exactly the CLI's `--json` shapes (Sources/kiosk/Output.swift and
// CatalogCommands.swift); the CLI module cannot be imported, so they are re-created here and must
// change together.

/// A page: `kiosk list --json`.
struct PageJSON: Encodable {
    let source: SourceID
    let page: Int
    let totalPages: Int?
    let totalItems: Int?
    let query: String?
    let filters: [String: String]
    let items: [CatalogItem]
    let favorites: [String]
    let skipped: [DecodingIssue]
    let attribution: String?
    let status: StatusJSON

    init(_ update: CatalogUpdate, favorites: Set<String>) {
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
struct StatusJSON: Encodable {
    let origin: String
    let stale: Bool
    let offline: Bool
    let fetchedAt: Date
    let freshUntil: Date
    let ageSeconds: Int
    let error: String?

    init(_ update: CatalogUpdate) {
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
struct ItemJSON: Encodable {
    let item: CatalogItem
    let favorite: Bool
    let origin: String
    let error: String?

    init(_ result: ItemResult) {
        item = result.item
        favorite = result.isFavorite
        origin = result.origin.rawValue
        error = result.error?.description
    }
}

/// A search: `kiosk search --json`.
struct SearchJSON: Encodable {
    let query: String
    let origin: String
    let items: [CatalogItem]
    let error: String?

    init(_ result: SearchResult) {
        query = result.query
        origin = result.origin.rawValue
        items = result.items
        error = result.error?.description
    }
}

/// JSON responses with the CLI's encoder settings.
enum JSONResponse {
    static func ok(_ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return make(.ok, try encoder.encode(value))
    }

    /// `{"error": "..."}` with the error's status.
    static func error(_ error: WebError) -> Response {
        let body = (try? JSONEncoder().encode(["error": error.message])) ?? Data("{\"error\":\"error\"}".utf8)
        return make(error.status, body)
    }

    private static func make(_ status: HTTPResponse.Status, _ data: Data) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
