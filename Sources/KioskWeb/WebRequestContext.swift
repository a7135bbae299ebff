import Hummingbird
import KioskApp
package import KioskCore
import NIOCore

/// The web app's request context: Hummingbird's core storage plus what pages need to know about the request
/// — its language, the CSRF token its forms carry, and its path — filled in by `CSRFMiddleware` and
/// `LanguageMiddleware` and handed to the views explicitly (as `ViewContext`).
package struct WebRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    /// Who connected: the pairing gate lets loopback peers through (nil under HummingbirdTesting's router,
    /// which has no socket; the gate reads that as "not loopback").
    var remoteAddress: SocketAddress?
    /// The listener's end of the connection (with `remoteAddress`, what names a loopback client's socket: `SocketOwner`).
    var localAddress: SocketAddress?
    /// The negotiated language (`LanguageMiddleware`).
    var language: Language = .en
    /// The token every form of the page carries: the browser's cookie, or a new one (`CSRFMiddleware`).
    var csrfToken: String = ""
    /// Path and query of the request, as the client sent them (`LanguageMiddleware`).
    var path: String = "/"
    /// The configured catalogs, as they present themselves, and what the scripts get for them (`CatalogsMiddleware`).
    var catalogs = Catalogs.none
    /// Whose idempotency keys this request's write key is among: the paired device's (`PairingMiddleware`), or
    /// this machine's.
    var writeScope: WriteScope = .local
    /// Whether what let this request in still holds — the device is still paired, the debugger session has
    /// not expired — asked again by answers that last (the console's live stream), which end when it does not.
    package var stillAuthorized: @Sendable () -> Bool = { true }

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
        localAddress = source.channel.localAddress
    }

    /// On this machine, the local user who owns the connecting socket (`SocketOwner`); nil for another machine's,
    /// or where it cannot be told.
    package var peerOwner: UInt32? { SocketOwner.uid(of: remoteAddress, connectedTo: localAddress) }

    /// What the views of this request are given.
    package var view: ViewContext { ViewContext(language: language, csrfToken: csrfToken, path: path, catalogs: catalogs) }
}

/// What a view knows about the request it renders, passed as a parameter: the language and its strings,
/// the CSRF token for the forms, and the request's path (the language switch returns there).
package struct ViewContext: Sendable {
    /// The page's language.
    package var language: Language
    /// The token the page's forms carry.
    var csrfToken: String
    /// Path and query of the request, or "/" for a page not tied to one.
    package var path: String
    /// The configured catalogs.
    var catalogs: Catalogs

    /// The interface strings of `language` (shared instances: no copy per page).
    var strings: Strings { language.strings }

    /// How `source` presents itself (name, icon, row layout…).
    func presentation(_ source: SourceID) -> SourcePresentation { catalogs.presentation(source) }

    /// The catalog's name in the page's language.
    package func sourceName(_ source: SourceID) -> String { presentation(source).name(language: language.rawValue) }

    /// `lang` for an element holding the upstream's own text of `source` (titles, abstracts, descriptions), when it is
    /// not the page's language; nil when it is.
    func contentLanguage(_ source: SourceID) -> Attribute? {
        let code = presentation(source).contentLanguage
        return code == language.rawValue ? nil : .attribute("lang", code)
    }

    /// `text`, the upstream's own words of `source`, in a span saying its language when that is not the page's.
    func contentText(_ text: String, of source: SourceID) -> HTML {
        contentLanguage(source).map { HTML.element("span", [$0], [.text(text)]) } ?? .text(text)
    }
}

/// What the views know of the configured catalogs: each one's presentation and traits, in tab order.
/// Views ask these rather than which catalog it is, so a fifth API needs no change here (its detail page aside).
struct Catalogs: Sendable {
    /// The configured sources, in `SourceID` order.
    let sources: [any CatalogSource]
    private let byID: [SourceID: any CatalogSource]
    /// The client table and the service worker, for these catalogs.
    let assets: ClientAssets
    /// The links the app's features put in the top bar, in a language.
    let menuLinks: @Sendable (Language) -> [MenuLink]

    /// No catalog: what a request context holds until `CatalogsMiddleware` gives it the app's (made once, as the
    /// client assets are made with it).
    static let none = Catalogs(sources: [])

    /// The catalogs of `sources`, with what the app's `features` add to the client table and the assets.
    init(sources: [any CatalogSource], features: [any WebFeature] = []) {
        self.sources = sources.sorted { $0.id < $1.id }
        byID = Dictionary(sources.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        assets = ClientAssets(catalogs: self.sources, features: features)
        menuLinks = { language in features.compactMap { $0.menuLink(language) } }
    }

    /// The source of `id`, when configured.
    func source(_ id: SourceID) -> (any CatalogSource)? { byID[id] }

    /// How `id` presents itself; a plain row layout named by its id when it is not configured.
    func presentation(_ id: SourceID) -> SourcePresentation {
        byID[id]?.presentation ?? SourcePresentation(icon: "", thumbnailWidth: 64, thumbnailHeight: 64,
                                                     names: ["en": id.displayName], shortNames: [:], taglines: [:])
    }
}

/// Puts the configured catalogs in every request's context.
struct CatalogsMiddleware: RouterMiddleware {
    let catalogs: Catalogs

    func handle(_ request: Request, context: WebRequestContext,
                next: (Request, WebRequestContext) async throws -> Response) async throws -> Response {
        var context = context
        context.catalogs = catalogs
        return try await next(request, context)
    }
}
