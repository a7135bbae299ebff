import Foundation
package import Hummingbird
import KioskApp
import KioskCore

/// The route handlers: each reads and checks its input, asks Kiosk, and renders HTML or JSON.
package struct WebController: Sendable {
    let kiosk: Kiosk
    /// Rendered list pages, reused until what they show changes.
    let pages = PageCache()
    /// The store's change token, which keys the page cache.
    let changeTokens: ChangeTokenReader
    /// Whether the cookies it sets are `Secure` (served over HTTPS), as the CSRF cookie is.
    let secureCookies: Bool

    init(kiosk: Kiosk, secureCookies: Bool) {
        self.kiosk = kiosk
        self.secureCookies = secureCookies
        changeTokens = ChangeTokenReader { [catalog = kiosk.catalog] in try catalog.changeToken() }
    }

    /// Image types passed through; anything else (SVG, HTML...) is refused.
    static let rasterTypes: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"]
    /// The longest image URL accepted.
    static let maximumImageURLLength = 2048

    func register(on router: Router<WebRequestContext>) {
        router.get(Route.Kind.home.pattern) { request, context in try home(request, context: context) }
        router.get(Route.Kind.settings.pattern) { _, context in Pages.response(Pages.settings(context.view)) }
        // A setting, like the language: no idempotency key (clearing twice is clearing once).
        router.post(Route.Kind.clearHistory.pattern) { request, _ in
            _ = try await CSRFProtection.verifiedForm(request)
            try kiosk.catalog.clearReadingHistory()
            return Self.seeOther(Route.settings.path)
        }
        router.get(Route.Kind.favorites.pattern) { _, context in
            Pages.response(Pages.favorites(try kiosk.catalog.favorites(), context: context.view)).with(CatalogService.storeAnswer)
        }
        router.get(Route.Kind.apiFavorites.pattern) { request, _ in
            _ = try FormInput.decode(NoQuery.self, from: request.uri.query)
            return try JSONResponse.ok(FavoritesJSON(try kiosk.catalog.favorites())).with(CatalogService.storeAnswer)
        }
        // The stylesheet and scripts, at addresses that carry their content's fingerprint (see `StaticAssets`).
        // Installability: fetched by the browser without cookies, so outside any check.
        router.get(Route.Kind.manifest.pattern) { request, context in
            try WebManifest.response(catalogs: context.catalogs, language: context.language, request: request)
        }
        // The icon at the address browsers ask by themselves, which carries no fingerprint: sent to the one that does,
        // for a day (a new icon, at a new address, is found the next day).
        router.get(Route.Kind.favicon.pattern) { _, _ in
            var response = Self.seeOther(StaticAssets.icon192.path)
            response.status = .found
            response.headers[.cacheControl] = "public, max-age=86400"
            return response
        }
        router.get(Route.Kind.staticFile.pattern) { request, context in
            try context.catalogs.assets.response(servedName: try context.parameters.require("file"), request: request)
        }
        // The service worker and the page it shows for what this device has not saved (both precached by it).
        router.get(Route.Kind.serviceWorker.pattern) { request, context in context.catalogs.assets.serviceWorker.response(request: request) }
        router.get(Route.Kind.offline.pattern) { _, context in Pages.response(Pages.offline(context.view)) }
        router.get(Route.Kind.apiConnectivity.pattern) { request, _ in
            _ = try FormInput.decode(NoQuery.self, from: request.uri.query)
            return try JSONResponse.ok(ConnectivityJSON(await kiosk.connectivityStatus()))
        }
        // A constant segment, so it is never read as a catalog named "openapi.json".
        router.get(Route.Kind.apiDocument.pattern) { _, _ in try OpenAPIDocument.response() }
        // A constant segment, so GET /language is a 404 rather than a catalog lookup.
        router.post(Route.Kind.language.pattern) { request, _ in try await language(request) }
        router.get(Route.Kind.image.pattern) { request, _ in try await image(request) }
        router.get(Route.Kind.apiList.pattern) { request, context in
            try await list(try context.parameters.require("source"), request: request, context: context, api: true)
        }
        router.get(Route.Kind.apiItem.pattern) { request, context in
            try await detail(try context.parameters.require("source"), try context.parameters.require("id"), request: request,
                       context: context, api: true)
        }
        router.get(Route.Kind.list.pattern) { request, context in
            try await list(try context.parameters.require("source"), request: request, context: context, api: false)
        }
        router.get(Route.Kind.item.pattern) { request, context in
            try await detail(try context.parameters.require("source"), try context.parameters.require("id"), request: request,
                       context: context, api: false)
        }
        // State changes are POSTs only. Each write may carry an Idempotency-Key: sent again, it is answered as the
        // first time, not applied twice.
        router.post(Route.Kind.reset.pattern) { request, context in
            try await once(request, scope: context.writeScope) { request in
                try await reset(try context.parameters.require("source"), try context.parameters.require("id"), request: request)
            }
        }
        router.post(Route.Kind.favorite.pattern) { request, context in
            try await once(request, scope: context.writeScope) { request in
                try await favorite(try context.parameters.require("source"), try context.parameters.require("id"), request: request)
            }
        }
        router.post(Route.Kind.userOrderWrite.pattern) { request, context in
            try await once(request, scope: context.writeScope) { request in
                try await userOrderWrite(try context.parameters.require("source"), try context.parameters.require("id"),
                                         try context.parameters.require("action"), request: request)
            }
        }
    }

    /// A catalog whose list its user orders, named as in URLs; anything else is a 404.
    private func userOrdered(_ raw: String) throws -> SourceID {
        let (id, source) = try self.source(raw)
        guard source.ordering == .user else { throw WebError.notFound(said: { $0.noFormHere }) }
        return id
    }

    /// `POST /{source}/reset` of a user-ordered catalog; any other two-segment POST is a 404.
    private func reset(_ rawSource: String, _ segment: String, request: Request) async throws -> Response {
        guard segment == Route.resetSegment else { throw WebError.notFound(said: { $0.noFormHere }) }
        let source = try userOrdered(rawSource)
        _ = try await CSRFProtection.verifiedForm(request)
        try await kiosk.catalog.resetUserOrder(source: source)
        return Self.seeOther(Route.editor(source).path)
    }

    /// `POST /favorites/{source}/{id}`: stars or unstars, then back to the form's `return`.
    private func favorite(_ rawSource: String, _ rawID: String, request: Request) async throws -> Response {
        let verified = try await CSRFProtection.verifiedForm(request)
        let (source, _) = try self.source(rawSource)
        let itemID = try Self.itemID(rawID)
        let form = try verified.decode(FavoriteForm.self)
        try kiosk.catalog.setFavorite(form.action == .add, source: source, itemID: itemID)
        return Self.seeOther(Self.localReturnPath(form.returnPath) ?? Route.favorites.path)
    }

    /// `POST /{source}/{id}/delete`, `/move` and `/restore` of a user-ordered catalog, then back to its editor.
    private func userOrderWrite(_ rawSource: String, _ rawID: String, _ action: String, request: Request) async throws -> Response {
        let source = try userOrdered(rawSource)
        let itemID = try Self.itemID(rawID)
        guard let route = Route.userOrderWrite(source: source, id: itemID, action: action) else {
            throw WebError.notFound(said: { $0.noFormHere })
        }
        let verified = try await CSRFProtection.verifiedForm(request)
        do {
            switch route {
            case .delete: try await kiosk.catalog.deleteFromUserOrder(source: source, itemID: itemID)
            case .move: try kiosk.catalog.moveInUserOrder(source: source, itemID: itemID, to: try verified.decode(MoveForm.self).to)
            case .restore: try kiosk.catalog.restoreToUserOrder(source: source, itemID: itemID)
            default: throw WebError.notFound(said: { $0.noFormHere })
            }
        } catch let error as KioskError where !Self.isRestore(route) {
            // The list changed under the page (a dog deleted on another device, a move queued offline sent later): said to
            // a person by the item's name, in the page's language — the outbox shows the same words for a queued one.
            let title = (try? kiosk.catalog.storedItem(source: source, itemID: itemID))??.shownTitle ?? itemID
            var refused = WebError(error, retryPath: nil)
            switch error {
            case .invalidRequest:
                let position = (try? verified.decode(MoveForm.self).to).map { $0 + 1 } ?? 0
                refused.said = { $0.strings.cannotMove(title, position) }
            case .notFound: refused.said = { $0.strings.notInList(title) }
            default: throw error
            }
            throw refused
        }
        return Self.seeOther(Route.editor(source).path)
    }

    private static func isRestore(_ route: Route) -> Bool {
        if case .restore = route { true } else { false }
    }

    /// The header naming a write's idempotency key (the IETF draft's name): a queued edit replayed after a
    /// lost answer carries the key it was first sent with.
    static let idempotencyKeyHeader = HTTPFields.Element.Name("Idempotency-Key")!
    /// Set on the answer to a write that was sent before: the first answer, not applied again.
    static let replayedHeader = HTTPFields.Element.Name("X-Kiosk-Replayed")!

    /// Runs a POST handler once per idempotency key when the request has one; otherwise as it is. The key is
    /// bound to the write it was first used for (its method, path and body) and to the device that sent it.
    private func once(_ request: Request, scope: WriteScope, _ handler: (Request) async throws -> Response) async throws -> Response {
        guard let key = request.headers[Self.idempotencyKeyHeader] else { return try await handler(request) }
        var request = request
        let body = try await request.collectBody(upTo: CSRFProtection.maximumFormBytes)
        let fingerprint = Fingerprint.hex(Array("\(request.method.rawValue) \(request.uri.path)\n".utf8) + Array(buffer: body))
        let answer = try await kiosk.catalog.once(key: key, scope: scope, fingerprint: fingerprint) {
            let response = try await handler(request)
            return WriteAnswer(status: Int(response.status.code), location: response.headers[.location])
        }
        var headers: HTTPFields = [.cacheControl: "no-store"]
        if let location = answer.location { headers[.location] = location }
        if answer.isReplay { headers[Self.replayedHeader] = "1" }
        return Response(status: HTTPResponse.Status(code: answer.status), headers: headers)
    }

    /// Sent by the script to get a page's final state rather than the stored snapshot at once.
    static let waitHeader = HTTPFields.Element.Name("X-Kiosk-Wait")!

    /// A 303, so the browser follows with a GET and a reload does not send the form again.
    package static func seeOther(_ path: String) -> Response {
        Response(status: .seeOther, headers: [.location: path, .cacheControl: "no-store"])
    }

    /// A redirect target only when it is a path on this site: one leading "/" (never "//host", which a
    /// browser reads as another site), no backslash (which some browsers read as "/"), and only visible
    /// ASCII (Kiosk's own links are percent-encoded, and a Location header must not carry controls).
    /// Anything else is an open-redirect attempt and the caller falls back.
    package static func localReturnPath(_ raw: String?) -> String? {
        guard let raw, raw.utf8.count <= 2048, raw.hasPrefix("/"), !raw.hasPrefix("//"), !raw.contains("\\"),
              raw.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return nil
        }
        return raw
    }

    /// A configured catalog named exactly as in URLs; anything else is a 404, never a lookup.
    private func source(_ raw: String) throws -> (SourceID, any CatalogSource) {
        guard let id = SourceID(rawValue: raw), let source = kiosk.catalog.sources[id] else {
            let name = String(raw.prefix(60))
            var error = WebError.notFound("There is no catalog named “\(name)”.")
            error.said = { $0.strings.noSuchCatalog(name) }
            throw error
        }
        return (id, source)
    }

    private func list(_ rawSource: String, request: Request, context: WebRequestContext, api: Bool) async throws -> Response {
        // A page that shows the stored state as it is, at once (not the JSON API, and not the script's
        // second request, which waits for revalidation), may come from the page cache. A cached address was
        // checked when it was rendered, so a hit needs no parsing or validation; the change token is read
        // before any data, so a page is never kept under a token newer than what it shows.
        let waits = api || request.headers[Self.waitHeader] != nil
        let changeToken = waits ? nil : try await changeTokens.token()
        let cacheKey = PageCache.key(path: context.path, language: context.language, changeToken: changeToken)
        let now = kiosk.now()
        if let cacheKey, await !kiosk.connectivityStatus().isOffline,
           let hit = pages.page(cacheKey, token: context.csrfToken, now: now) {
            // Only fresh pages are kept, so a page cache hit is the same decision a render would make now.
            return Pages.response(hit.body).with(kiosk.catalog.recordFreshAnswer(hit.request, metadata: hit.metadata))
        }
        let (id, source) = try self.source(rawSource)
        var parameters = try ListParameters(source: source, query: try FormInput.decode(ListQuery.self, from: request.uri.query))
        parameters.defaults = (try? source.normalize(PageRequest(source: id)).filters) ?? [:]
        // A link followed from another site (`CrossSiteReadGuard` refuses its pages' other requests) is a plain visit
        // even when it says refresh: it asks the upstream only for what is stale, however often a page makes it.
        // (Its page is still never kept: the address would serve the reader's own refresh later.)
        let forced = parameters.refresh && !CSRFProtection.isFromAnotherSite(request)
        let policy: RefreshPolicy = forced ? .force : .automatic
        // A catalog of one page (NYT, dogs) has no page 2: past its last, said as for any catalog.
        do {
            _ = try kiosk.catalog.normalize(parameters.request)
        } catch KioskError.notFound where parameters.page > 1 {
            throw Self.pastTheEnd(parameters, total: 1, name: context.view.sourceName(id))
        }
        if let text = parameters.q {
            let result: SearchResult
            do {
                result = try await kiosk.catalog.search(source: id, text: text, page: parameters.page, filters: parameters.filters,
                                                        policy: policy)
            } catch KioskError.notFound where parameters.page > 1 {
                // An upstream that answers a search's page past its last with a 404 (Rick and Morty, Marvel).
                throw Self.pastTheEnd(parameters, total: nil, name: context.view.sourceName(id))
            }
            // A page past a search's last (the store's own search is one page) is one past its end, as a list's is.
            if result.isPastTheEnd {
                throw Self.pastTheEnd(parameters, total: result.totalPages, name: context.view.sourceName(id))
            }
            if api { return try JSONResponse.ok(SearchJSON(result)).with(result.cacheStatus) }
            // Saved results shown while Kiosk knows the upstream is unreachable say so, with their age, as a list's do.
            var offlineSince: Date?
            if result.error == nil, let saved = result.savedAt, await kiosk.connectivityStatus().isOffline { offlineSince = saved }
            return Pages.response(Pages.search(parameters, result: result, filterValues: source.filterValues,
                                               favorites: try kiosk.catalog.favoriteIDs(source: id), offlineSince: offlineSince,
                                               now: kiosk.now(), context: context.view))
                .with(result.cacheStatus)
        }
        // (Checked above, before any I/O, so a bad filter is a 400 even when offline.)
        // A page shows stored data at once and revalidates in the background (the script then asks again
        // with X-Kiosk-Wait to swap the fresh snapshot in). The JSON API, a forced refresh and that second
        // request wait for the final state instead.
        let update: CatalogUpdate
        do {
            if !waits, !forced, let offline = try await storedWhileOffline(parameters.request) {
                update = offline
            } else if waits || forced {
                update = try await kiosk.catalog.page(parameters.request, policy: policy)
            } else {
                update = try await kiosk.catalog.firstUpdate(for: parameters.request, policy: policy)
            }
        } catch KioskError.notFound where parameters.page > 1 {
            // An upstream that answers a page past its last with a 404 (Rick and Morty): said with the count the
            // first page has stored, when it has.
            let total = (try? await kiosk.catalog.page(PageRequest(source: id, filters: parameters.request.filters), policy: .offline))?
                .page.totalPages
            throw Self.pastTheEnd(parameters, total: total, name: context.view.sourceName(id))
        }
        if let total = update.page.totalPages, parameters.page > max(total, 1) {
            throw Self.pastTheEnd(parameters, total: total, name: context.view.sourceName(id))
        }
        if api {
            return try JSONResponse.ok(PageJSON(update, favorites: try kiosk.catalog.favoriteIDs(source: id))).with(update.cacheStatus)
        }
        let favorites = try kiosk.catalog.favoriteIDs(source: id)
        // A forced refresh is never kept: its address would serve later requests without refreshing.
        let body = pages.render(key: parameters.refresh ? nil : cacheKey, update: update, request: parameters.request,
                                context: context.view) { view in
            Pages.list(parameters, update: update, filterValues: source.filterValues, favorites: favorites, context: view)
        }
        return Pages.response(body).with(update.cacheStatus)
    }

    /// A 404 for a page past a catalog's last: "Rick and Morty has 42 pages." with a link to the last one, or,
    /// when the count is not known, to the first.
    private static func pastTheEnd(_ parameters: ListParameters, total: Int?, name: String) -> WebError {
        let page = parameters.page
        var error = WebError.notFound(total.map { "There is no page \(page) of \(parameters.source.displayName); it has \($0)." }
                                      ?? "There is no page \(page) of \(parameters.source.displayName).")
        let target = parameters.path(page: max(total ?? 1, 1))
        error.said = { (context: ViewContext) in total.map { context.strings.pastTheLastPage(name, $0) } ?? context.strings.noSuchPage(name, page) }
        error.extra = { (context: ViewContext) in
            HTML.element("p", [], [HTML.element("a", [Attribute.localHref(target)], [
                .text(total.map { context.strings.goToLastPage($0) } ?? context.strings.goToFirstPage),
            ])])
        }
        return error
    }

    /// While Kiosk knows the upstream is unreachable, the stored page with the offline banner at once,
    /// rather than a revalidation that can only fail (slowly, when the network times out). Nil when
    /// online or when nothing is stored.
    private func storedWhileOffline(_ request: PageRequest) async throws -> CatalogUpdate? {
        guard case .offline(_, let origin) = await kiosk.connectivityStatus() else { return nil }
        do {
            var update = try await kiosk.catalog.page(request, policy: .offline)
            update.error = .offline(host: origin.host ?? "the upstream")
            update.isRevalidating = false
            return update
        } catch KioskError.notFound {
            return nil
        }
    }

    private func detail(_ rawSource: String, _ rawID: String, request: Request, context: WebRequestContext,
                        api: Bool) async throws -> Response {
        let (source, _) = try self.source(rawSource)
        let itemID: String
        do {
            itemID = try Self.itemID(rawID)
        } catch let error as WebError {
            throw Self.noSuchItem(error)
        }
        let query = try FormInput.decode(DetailQuery.self, from: request.uri.query)
        let result: ItemResult
        do {
            result = try await kiosk.catalog.item(source: source, itemID: itemID,
                                                  policy: query.refresh && !CSRFProtection.isFromAnotherSite(request) ? .force : .automatic,
                                                  linkedPage: query.page)
        } catch KioskError.invalidRequest(let message) {
            // An id the catalog cannot have (Marvel's are numbers): to a person, no item can be at this address.
            throw Self.noSuchItem(.badRequest(message))
        } catch KioskError.notFound(let message) where query.page > 1 {
            // The item is there; the page of its linked items is not: said so, with the way to its first page.
            guard (try? await kiosk.catalog.item(source: source, itemID: itemID, policy: .offline)) != nil else {
                throw KioskError.notFound(message)
            }
            var notFound = WebError(KioskError.notFound(message), retryPath: nil)
            let page = query.page, first = Route.item(source, itemID).path
            notFound.said = { $0.strings.noLinkedPage(page) }
            notFound.extra = { (context: ViewContext) in
                HTML.element("p", [], [HTML.element("a", [Attribute.localHref(first)], [.text(context.strings.goToFirstPage)])])
            }
            throw notFound
        }
        if let unknown = query.unknownParameter { throw unknown }
        if api { return try JSONResponse.ok(ItemJSON(result)).with(result.cacheStatus) }
        // Best effort: a history that cannot be written (a full disk) must not keep the page from the reader.
        // (Under the item's own id: `/rickandmorty/01` is character 1.)
        if Self.isReaderNavigation(request) { try? kiosk.catalog.noteRead(source: source, itemID: result.item.itemID) }
        return Pages.response(Pages.detail(result, context: context.view)).with(result.cacheStatus)
    }

    /// The header the reader's script sends when it shows a page it fetched (the desktop's detail pane). A custom
    /// header, so another site cannot send it without a CORS preflight Kiosk never grants.
    static let readerViewHeader = HTTPFields.Element.Name("X-Kiosk-View")!

    /// Whether a request for an item's page is the reader opening it — a navigation of this browser, or the
    /// script showing it in the pane — rather than a page saved for offline in the background (a plain fetch),
    /// a frame, or another site's link: only those go into the reading history. Browsers without Fetch
    /// Metadata (and curl) say nothing, and are not counted.
    static func isReaderNavigation(_ request: Request) -> Bool {
        let site = request.headers[values: .init("Sec-Fetch-Site")!]
        guard site.count == 1, site[0] == "same-origin" || site[0] == "none" else { return false }
        if request.headers[values: readerViewHeader] == ["1"] { return true }
        // A document: the navigation itself, or the service worker passing it on (its fetch of a navigation says
        // mode same-origin, still destination document).
        return request.headers[values: .init("Sec-Fetch-Dest")!] == ["document"]
    }

    /// How many items each of Home's parts lists.
    static let homeRows = 6

    /// `/`: what changed since this browser's last visit, what the reader opened last, the latest favorites and
    /// the catalogs; the visit's cookie moves on.
    private func home(_ request: Request, context: WebRequestContext) throws -> Response {
        let now = kiosk.now()
        let visit = ReaderVisit(cookie: request.cookies[ReaderVisit.cookieName]?.value, now: now)
        let favorites = try kiosk.catalog.favorites()
        let activity = Pages.HomeActivity(
            since: visit.since, changes: try visit.since.map { try kiosk.catalog.changes(since: $0, latest: 3) } ?? [],
            recentlyRead: try kiosk.catalog.recentlyRead(limit: Self.homeRows),
            favorites: Array(favorites.prefix(Self.homeRows)), favoriteCount: favorites.count, now: now)
        var response = Pages.response(Pages.home(context.view, activity: activity))
        response.setCookie(visit.cookie(secure: secureCookies))
        return response
    }

    /// `error` (a 400 for an id no item can have) said to a person as an address no item can have.
    private static func noSuchItem(_ error: WebError) -> WebError {
        var error = error
        error.said = { $0.strings.noSuchItemID }
        return error
    }

    /// A decoded item id from a path segment; 400 for bad encoding, or an id no page could list (over
    /// `CatalogItem.maximumIDLength` bytes, or with control characters): one rule for links and routes.
    private static func itemID(_ rawID: String) throws -> String {
        guard let itemID = rawID.removingPercentEncoding, !itemID.isEmpty else {
            throw WebError.badRequest("The item id is not validly percent-encoded.")
        }
        guard CatalogItem.isLinkableID(itemID) else { throw WebError.badRequest("That is not a valid item id.") }
        return itemID
    }

    /// `/image?url=`: only http(s) URLs on hosts of configured sources, through the image pipeline's caches.
    private func image(_ request: Request) async throws -> Response {
        // Another site's page (`<img src=http://127.0.0.1:8080/image?url=...>`) is refused before this
        // (`CrossSiteReadGuard`); a link followed from it to a picture is the reader's, and the picture is not
        // shared with other sites' pages (Cross-Origin-Resource-Policy, below).
        let raw = try FormInput.decode(ImageQuery.self, from: request.uri.query).url
        guard raw.count <= Self.maximumImageURLLength, let url = URL(string: raw), SafeURL.isWeb(url) else {
            throw WebError.badRequest(said: { $0.badPictureAddress })
        }
        do {
            try kiosk.images.validate(url)
        } catch {
            // The only refusal left is the host: not an image host of a configured source (no open proxy).
            let host = url.host
            throw WebError.forbidden(said: { $0.picturesNotServed(host) })
        }
        let image = try await kiosk.images.image(for: url)
        // Raster types only: an SVG from an allowed host would be a document with scripts on Kiosk's origin.
        let mediaType = HTTPSyntax.mediaType(image.contentType)
        guard Self.rasterTypes.contains(mediaType) else {
            throw WebError(status: .badGateway, title: "Upstream error",
                           message: "The upstream sent \(mediaType.prefix(60)), which is not served as an image.", retryPath: nil)
        }
        let etag = "\"" + Fingerprint.hex(image.data) + "\""
        // Cross-Origin-Resource-Policy: a browser that sent no Sec-Fetch-Site still keeps the picture from other sites.
        // A 304 carries the Cache-Status of the stored picture it stands for (RFC 9211 §2).
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "public, max-age=86400",
                                   .init("Cross-Origin-Resource-Policy")!: "same-origin", .cacheStatus: image.cacheStatus.headerValue]
        if request.matchesETag(etag) { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = image.contentType
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: image.data)))
    }

    /// `POST /language`: remembers the chosen language in a cookie for a year, then goes back.
    private func language(_ request: Request) async throws -> Response {
        let form = try await CSRFProtection.verifiedForm(request).decode(LanguageForm.self)
        var response = Self.seeOther(Self.localReturnPath(form.returnPath) ?? Route.home.path)
        // Not HttpOnly, as it always was: it holds nothing secret.
        // Secure over HTTPS (`--lan`) as every other cookie of Kiosk's: one sent in clear could be set by anyone on the network.
        response.setCookie(Cookie(name: Language.cookieName, value: form.language.rawValue, maxAge: 31_536_000, path: "/",
                                  secure: secureCookies, httpOnly: false, sameSite: .lax))
        return response
    }
}

/// `/api/connectivity`: whether Kiosk can reach the upstreams; the script polls it while offline.
struct ConnectivityJSON: Encodable {
    let online: Bool
    let offlineSince: Date?

    init(_ status: ConnectivityStatus) {
        switch status {
        case .online:
            online = true
            offlineSince = nil
        case .offline(let since, _):
            online = false
            offlineSince = since
        }
    }
}


