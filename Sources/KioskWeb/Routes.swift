import Foundation
import Hummingbird
import KioskCore

/// Every address of the reader's web app, in one place: the server registers its routes from `Route.Kind`,
/// pages build every link, form action and redirect with `Route.path`, and the browser's scripts get the
/// client half (`ClientRoutes`, in `client.js`: what never comes from the device, which writes the outbox
/// carries and what each shows while it waits), so that no script spells an address, a catalog or a button's
/// text.
enum Route: Sendable, Hashable {
    // Pages
    case home
    case favorites
    case offline
    /// What this device keeps for offline reading, and the reading history.
    case settings
    /// A catalog's list; its page, search and filters are `ListParameters`'.
    case list(SourceID)
    /// A user-ordered catalog's list with its edit buttons.
    case editor(SourceID)
    case item(SourceID, String)
    case pair
    case manifest
    case serviceWorker
    /// `/favicon.ico`, which browsers ask for by themselves (a JSON answer viewed has no icon link): the app's icon.
    case favicon
    case staticFile(String)
    /// A picture through Kiosk's image route.
    case image(URL)
    // JSON
    case apiList(SourceID)
    case apiItem(SourceID, String)
    case apiFavorites
    case apiConnectivity
    case apiDocument
    // Writes
    /// Switches the page's language (a cookie of this browser).
    case language
    /// Stars or unstars an item.
    case favorite(SourceID, String)
    /// Deletes an item from a user-ordered list.
    case delete(SourceID, String)
    /// Moves an item of a user-ordered list (`to`, 0-based).
    case move(SourceID, String)
    /// Takes back the deletion of an item from a user-ordered list (Undo).
    case restore(SourceID, String)
    /// Forgets a user-ordered list's deletions and order.
    case reset(SourceID)
    /// Forgets what the reader opened (Home's "recently read").
    case clearHistory

    /// The address: path (segments percent-encoded) and, where the route has one, its query.
    var path: String {
        switch self {
        case .home: "/"
        case .favorites: "/favorites"
        case .offline: "/offline"
        case .settings: "/settings"
        case .list(let source): "/" + source.rawValue
        case .editor(let source): "/" + source.rawValue + "?" + Self.editParameter + "=1"
        case .item(let source, let id): "/" + source.rawValue + "/" + Self.segment(id)
        case .pair: "/pair"
        case .manifest: "/manifest.webmanifest"
        case .serviceWorker: "/sw.js"
        case .favicon: "/favicon.ico"
        case .staticFile(let name): Self.staticPrefix + Self.segment(name)
        case .image(let url): Self.imagePath + "?url=" + QueryString.encode(url.absoluteString)
        case .apiList(let source): Self.apiPrefix + source.rawValue
        case .apiItem(let source, let id): Self.apiPrefix + source.rawValue + "/" + Self.segment(id)
        case .apiFavorites: Self.apiPrefix + "favorites"
        case .apiConnectivity: Self.apiPrefix + "connectivity"
        case .apiDocument: Self.apiPrefix + "openapi.json"
        case .language: "/language"
        case .favorite(let source, let id): "/favorites/" + source.rawValue + "/" + Self.segment(id)
        case .delete(let source, let id): "/" + source.rawValue + "/" + Self.segment(id) + "/delete"
        case .move(let source, let id): "/" + source.rawValue + "/" + Self.segment(id) + "/move"
        case .restore(let source, let id): "/" + source.rawValue + "/" + Self.segment(id) + "/restore"
        case .reset(let source): "/" + source.rawValue + "/reset"
        case .clearHistory: "/settings/clear-history"
        }
    }

    /// `?edit=1`: the list in edit mode.
    static let editParameter = "edit"
    /// Where the JSON API lives: never answered from a device's saved pages.
    static let apiPrefix = "/api/"
    /// The image route (`?url=`).
    static let imagePath = "/image"
    /// Where the content-addressed stylesheet, scripts and icons live.
    static let staticPrefix = "/static/"

    /// A path segment: everything but unreserved characters percent-encoded (a `/` in an id stays in its segment).
    static func segment(_ value: String) -> String { QueryString.encode(value) }

    /// The kinds of address, each with the pattern the router registers it under. The writes to user-ordered
    /// lists and the reset share the patterns the reads use (`/{source}/{id}`...): Hummingbird's trie does not
    /// fall back from a constant segment to a parameter, so a constant `/dogs/...` would shadow the list and
    /// item routes; the handler reads the kind from the segments (`Route.write(source:second:third:)`).
    enum Kind: String, CaseIterable, Sendable {
        case home, favorites, offline, settings, list, item, pair, manifest, serviceWorker, favicon, staticFile, image
        case apiList, apiItem, apiFavorites, apiConnectivity, apiDocument
        case language, favorite, userOrderWrite, reset, clearHistory

        /// The method the route answers.
        var method: HTTPRequest.Method {
            switch self {
            case .language, .favorite, .userOrderWrite, .reset, .clearHistory: .post
            default: .get
            }
        }

        /// The router's pattern.
        var pattern: RouterPath {
            switch self {
            case .home: "/"
            case .favorites: "/favorites"
            case .offline: "/offline"
            case .settings: "/settings"
            case .list: "/{source}"
            case .item: "/{source}/{id}"
            case .pair: "/pair"
            case .manifest: "/manifest.webmanifest"
            case .serviceWorker: "/sw.js"
            case .favicon: "/favicon.ico"
            case .staticFile: "/static/{file}"
            case .image: "/image"
            case .apiList: "/api/{source}"
            case .apiItem: "/api/{source}/{id}"
            case .apiFavorites: "/api/favorites"
            case .apiConnectivity: "/api/connectivity"
            case .apiDocument: "/api/openapi.json"
            case .language: "/language"
            case .favorite: "/favorites/{source}/{id}"
            // `/{source}/{id}/delete`, `/{source}/{id}/move` and `/{source}/{id}/restore`.
            case .userOrderWrite: "/{source}/{id}/{action}"
            // `/{source}/reset`, under the item's pattern (see above).
            case .reset: "/{source}/{id}"
            case .clearHistory: "/settings/clear-history"
            }
        }
    }

    /// The last segment of a reset (`/{source}/reset`).
    static let resetSegment = "reset"

    /// What a write to a user-ordered list is, from its segments (`/{source}/{id}/{action}`), or nil.
    static func userOrderWrite(source: SourceID, id: String, action: String) -> Route? {
        switch action {
        case "delete": .delete(source, id)
        case "move": .move(source, id)
        case "restore": .restore(source, id)
        default: nil
        }
    }
}

/// What the scripts are told, as `self.KioskClient` in `client.js` (which pages load first and the service worker
/// imports): the route table's client half, and how ages read (`Age.steps`).
struct ClientTable: Encodable, Sendable {
    let routes: ClientRoutes
    let ages: [Age.Step]

    /// The table for `catalogs`, `networkOnly` adding the prefixes of the app's features (the console's).
    init(catalogs: [any CatalogSource], networkOnly: [String] = []) {
        routes = ClientRoutes(catalogs: catalogs, networkOnly: networkOnly)
        ages = Age.steps
    }
}

/// The client half of the route table: where the app's own addresses are, which never come from the device, and
/// the writes the worker's outbox carries, each with what it shows on a page while it waits.
struct ClientRoutes: Encodable, Sendable {
    /// A write the outbox queues while Kiosk is unreachable.
    struct Write: Encodable, Sendable {
        /// A JavaScript regular expression over the path: group 1 the catalog, group 2 the item (when it has one).
        let pattern: String
        /// What a waiting write shows: `star` (the star of the form posting to this path, set to the form's
        /// action), `remove` (the item's row leaves the list), `move` (the row moves to the form's `to`), or
        /// `none`.
        let effect: String
        /// The saved pages that show what it changes though they hold no form of it, by path (any query), `{source}`
        /// standing for group 1: the favorites and Home for a star; a catalog's lists too for its rows (a list that is
        /// not being edited holds no delete form, yet shows the row gone).
        let shownOn: [String]
    }

    let home: String
    let offline: String
    let connectivity: String
    let image: String
    let staticPrefix: String
    let pair: String
    let serviceWorker: String
    /// Path prefixes that are never answered from the device's saved pages (the JSON API, the debugger, pairing, the
    /// worker): a page of them opened while Kiosk is unreachable gets the device's offline page.
    let networkOnly: [String]
    /// Writes sent as they are and never queued: settings (this browser's language, the reading history), which a
    /// person changes while looking at them, not while reading offline.
    let direct: [String]
    let writes: [Write]

    /// The table for these catalogs: user-order writes only for the catalogs whose list the user orders;
    /// `networkOnly` adds the features' prefixes to the app's own.
    init(catalogs: [any CatalogSource], networkOnly features: [String] = []) {
        home = Route.home.path
        offline = Route.offline.path
        connectivity = Route.apiConnectivity.path
        image = Route.imagePath
        staticPrefix = Route.staticPrefix
        pair = Route.pair.path
        serviceWorker = Route.serviceWorker.path
        networkOnly = [Route.apiPrefix, Route.pair.path, Route.serviceWorker.path] + features
        direct = [Route.language.path, Route.clearHistory.path]
        let ordered = catalogs.filter { $0.ordering == .user }.map { NSRegularExpression.escapedPattern(for: $0.id.rawValue) }.sorted()
        let all = catalogs.map { NSRegularExpression.escapedPattern(for: $0.id.rawValue) }.sorted()
        let starShownOn = [Route.favorites.path, Route.home.path]
        var writes = [Write(pattern: "^/favorites/(" + all.joined(separator: "|") + ")/([^/]+)$", effect: "star", shownOn: starShownOn)]
        if !ordered.isEmpty {
            let sources = "(" + ordered.joined(separator: "|") + ")"
            let rowShownOn = ["/{source}"] + starShownOn
            writes += [
                Write(pattern: "^/" + sources + "/([^/]+)/delete$", effect: "remove", shownOn: rowShownOn),
                Write(pattern: "^/" + sources + "/([^/]+)/move$", effect: "move", shownOn: rowShownOn),
                Write(pattern: "^/" + sources + "/([^/]+)/restore$", effect: "restore", shownOn: rowShownOn),
                Write(pattern: "^/" + sources + "/" + Route.resetSegment + "$", effect: "reset", shownOn: rowShownOn),
            ]
        }
        self.writes = writes
    }
}
