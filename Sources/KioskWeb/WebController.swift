import Foundation
import Hummingbird
import KioskApp
import KioskCore

/// The route handlers: each reads and checks its input, asks Kiosk, and renders HTML or JSON.
struct WebController: Sendable {
    let kiosk: Kiosk

    /// The longest item id accepted (ids are short numbers or slugs).
    static let maximumIDLength = 200
    /// Image types passed through; anything else (SVG, HTML...) is refused.
    static let rasterTypes: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"]
    /// The longest image URL accepted.
    static let maximumImageURLLength = 2048

    func register(on router: Router<BasicRequestContext>) {
        router.get("/") { _, _ in Pages.response(Pages.home()) }
        router.get("/favorites") { _, _ in Pages.response(Pages.favorites(try kiosk.catalog.favorites())) }
        router.get("/api/favorites") { _, _ in try JSONResponse.ok(FavoritesJSON(items: try kiosk.catalog.favorites())) }
        router.get("/static/app.css") { request, _ in Self.stylesheet(request) }
        router.get("/image") { request, _ in try await image(request) }
        router.get("/api/{source}") { request, context in
            try await list(try context.parameters.require("source"), request: request, api: true)
        }
        router.get("/api/{source}/{id}") { _, context in
            try await detail(try context.parameters.require("source"), try context.parameters.require("id"), api: true)
        }
        router.get("/{source}") { request, context in
            try await list(try context.parameters.require("source"), request: request, api: false)
        }
        router.get("/{source}/{id}") { _, context in
            try await detail(try context.parameters.require("source"), try context.parameters.require("id"), api: false)
        }
    }

    /// A configured catalog named exactly as in URLs; anything else is a 404, never a lookup.
    private func source(_ raw: String) throws -> (SourceID, any CatalogSource) {
        guard let id = SourceID(rawValue: raw), let source = kiosk.catalog.sources[id] else {
            throw WebError.notFound("There is no catalog named “\(raw.prefix(60))”.")
        }
        return (id, source)
    }

    private func list(_ rawSource: String, request: Request, api: Bool) async throws -> Response {
        let (id, source) = try self.source(rawSource)
        let query = try QueryString(parsing: request.uri.query)
        let parameters = try ListParameters(source: id, filterNames: Array(source.filterValues.keys), query: query)
        let policy: RefreshPolicy = parameters.refresh ? .force : .automatic
        if let text = parameters.q {
            let result = try await kiosk.catalog.search(source: id, text: text, policy: policy)
            if api { return try JSONResponse.ok(SearchJSON(result)) }
            return Pages.response(Pages.search(parameters, result: result, filterValues: source.filterValues))
        }
        // Checked before any I/O so a bad filter is a 400 even when offline.
        _ = try kiosk.catalog.normalize(parameters.request)
        let update = try await kiosk.catalog.page(parameters.request, policy: policy)
        if let total = update.page.totalPages, parameters.page > max(total, 1) {
            throw WebError.notFound("There is no page \(parameters.page) of \(id.displayName); it has \(total).")
        }
        if api {
            return try JSONResponse.ok(PageJSON(update, favorites: try kiosk.database.favoriteIDs(source: id)))
        }
        return Pages.response(Pages.list(parameters, update: update, filterValues: source.filterValues))
    }

    private func detail(_ rawSource: String, _ rawID: String, api: Bool) async throws -> Response {
        let (source, _) = try self.source(rawSource)
        guard let itemID = rawID.removingPercentEncoding, !itemID.isEmpty else {
            throw WebError.badRequest("The item id is not validly percent-encoded.")
        }
        guard itemID.count <= Self.maximumIDLength,
              !itemID.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw WebError.badRequest("That is not a valid item id.")
        }
        let result = try await kiosk.catalog.item(source: source, itemID: itemID)
        if api { return try JSONResponse.ok(ItemJSON(result)) }
        return Pages.response(Pages.detail(result))
    }

    /// `/image?url=`: only http(s) URLs on hosts of configured sources, through the image pipeline's caches.
    private func image(_ request: Request) async throws -> Response {
        let query = try QueryString(parsing: request.uri.query)
        guard let raw = query["url"], !raw.isEmpty else { throw WebError.badRequest("The url parameter is required.") }
        guard raw.count <= Self.maximumImageURLLength, let url = URL(string: raw), SafeURL.isWeb(url) else {
            throw WebError.badRequest("The url parameter must be an absolute http(s) URL.")
        }
        do {
            try kiosk.images.validate(url)
        } catch {
            // The only refusal left is the host: not an image host of a configured source (no open proxy).
            throw WebError.forbidden("Images from \(url.host ?? "that host") are not served.")
        }
        let image = try await kiosk.images.image(for: url)
        // Raster types only: an SVG from an allowed host would be a document with scripts on Kiosk's origin.
        let mediaType = image.contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard Self.rasterTypes.contains(mediaType) else {
            throw WebError(status: .badGateway, title: "Upstream error",
                           message: "The upstream sent \(mediaType.prefix(60)), which is not served as an image.", retryPath: nil)
        }
        let etag = "\"" + Fingerprint.hex(image.data) + "\""
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "public, max-age=86400"]
        if Self.matches(request, etag: etag) { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = image.contentType
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: image.data)))
    }

    private static func stylesheet(_ request: Request) -> Response {
        var headers: HTTPFields = [.eTag: Stylesheet.etag, .cacheControl: "public, max-age=3600"]
        if matches(request, etag: Stylesheet.etag) { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = "text/css; charset=utf-8"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: Stylesheet.css)))
    }

    /// Whether the client already has this representation (If-None-Match, weak comparison).
    private static func matches(_ request: Request, etag: String) -> Bool {
        guard let header = request.headers[.ifNoneMatch] else { return false }
        return header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}

/// `/api/favorites`: every starred item, newest first.
struct FavoritesJSON: Encodable {
    let items: [CatalogItem]
}
