import Hummingbird

/// The web app's request context: Hummingbird's core storage plus what pages need to know about the request
/// — its language, the CSRF token its forms carry, and its path — filled in by `CSRFMiddleware` and
/// `LanguageMiddleware` and handed to the views explicitly (as `ViewContext`).
struct WebRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The negotiated language (`LanguageMiddleware`).
    var language: Language = .en
    /// The token every form of the page carries: the browser's cookie, or a new one (`CSRFMiddleware`).
    var csrfToken: String = ""
    /// Path and query of the request, as the client sent them (`LanguageMiddleware`).
    var path: String = "/"

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
    }

    /// What the views of this request are given.
    var view: ViewContext { ViewContext(language: language, csrfToken: csrfToken, path: path) }
}

/// What a view knows about the request it renders, passed as a parameter: the language and its strings,
/// the CSRF token for the forms, and the request's path (the language switch returns there).
struct ViewContext: Sendable {
    /// The page's language.
    var language: Language
    /// The token the page's forms carry.
    var csrfToken: String
    /// Path and query of the request, or "/" for a page not tied to one.
    var path: String

    /// The interface strings of `language` (shared instances: no copy per page).
    var strings: Strings { language.strings }
}
