import Foundation
import NIOCore
package import Hummingbird
package import KioskCore

/// A failure the web layer answers with a page (or `{"error"}` under /api): a status, words a user
/// can act on, and where "Retry" goes when retrying can help.
package struct WebError: Error, Sendable {
    var status: HTTPResponse.Status
    var title: String
    var message: String
    /// A local path to try again, for failures of the world rather than of the request.
    var retryPath: String?
    /// What the page shows under the message, drawn for the request (the console's token form).
    package var extra: (@Sendable (ViewContext) -> HTML)?
    /// Whether the page keeps `title` (the console's own words) rather than its status's, in the page's language.
    var keepsTitle = false
    /// Seconds to wait before trying again (a `Retry-After` header), for a throttled attempt.
    var retryAfter: Int?
    /// What a page says instead of `message`, in its language and as a person would (`message` stays the
    /// JSON's, with the technical detail).
    package var said: (@Sendable (ViewContext) -> String)?

    /// An error page's content: `extra` is drawn under the message; `keepsTitle` keeps `title` (else the
    /// status's, in the page's language); `retryAfter` sends a `Retry-After`.
    package init(status: HTTPResponse.Status, title: String, message: String, retryPath: String?,
                 extra: (@Sendable (ViewContext) -> HTML)? = nil, keepsTitle: Bool = false, retryAfter: Int? = nil) {
        self.status = status
        self.title = title
        self.message = message
        self.retryPath = retryPath
        self.extra = extra
        self.keepsTitle = keepsTitle
        self.retryAfter = retryAfter
    }

    package static func badRequest(_ message: String) -> WebError {
        WebError(status: .badRequest, title: "Bad request", message: message, retryPath: nil)
    }

    package static func notFound(_ message: String) -> WebError {
        WebError(status: .notFound, title: "Not found", message: message, retryPath: nil)
    }

    package static func forbidden(_ message: String) -> WebError {
        WebError(status: .forbidden, title: "Forbidden", message: message, retryPath: nil)
    }

    /// A 400 whose page says `words` of the page's language, and whose JSON (and `message`) says them in English: the
    /// JSON API speaks English whatever the browser's language.
    static func badRequest(said words: @escaping @Sendable (RefusalStrings) -> String) -> WebError {
        badRequest(words(.english)).said(by: words)
    }

    /// A 404 said as `badRequest(said:)` is.
    static func notFound(said words: @escaping @Sendable (RefusalStrings) -> String) -> WebError {
        notFound(words(.english)).said(by: words)
    }

    /// A 403 said as `badRequest(said:)` is.
    static func forbidden(said words: @escaping @Sendable (RefusalStrings) -> String) -> WebError {
        forbidden(words(.english)).said(by: words)
    }

    /// This error with its page saying `words` in the page's language.
    func said(by words: @escaping @Sendable (RefusalStrings) -> String) -> WebError {
        var error = self
        error.said = { words($0.language.refusals) }
        return error
    }
}

extension WebError {
    /// Kiosk's errors by whose fault they are: the request's (4xx), the network's (503, 504: retry), the upstream's (429,
    /// 502).
    init(_ error: KioskError, retryPath: String?) {
        switch error {
        case .invalidRequest(let message):
            self.init(status: .badRequest, title: "Bad request", message: message, retryPath: nil)
        case .notFound:
            self.init(status: .notFound, title: "Not found", message: error.description, retryPath: nil)
            said = { $0.strings.itemNotFound }
        case .refused:
            self.init(status: .forbidden, title: "Refused", message: error.description, retryPath: nil)
            said = { $0.strings.couldNotLoad($0.strings.upstreamProblem(error)) }
        // Unreachable is 503; too slow, a gateway's timeout, 504 (docs/API.md).
        case .offline, .timeout, .stalledBody:
            let timedOut = if case .offline = error { false } else { true }
            self.init(status: timedOut ? .gatewayTimeout : .serviceUnavailable, title: timedOut ? "Timed out" : "Offline",
                      message: "Nothing is saved for this yet and the upstream cannot be reached (\(error.description)).",
                      retryPath: retryPath)
            said = { timedOut ? $0.strings.timedOutNotSaved : $0.strings.offlineNotSaved }
        // The upstream's own 429 passed on, with when to try again, as the API documents it.
        case .rateLimited(_, let retryAfter):
            self.init(status: .tooManyRequests, title: "Too many requests", message: error.description, retryPath: retryPath,
                      retryAfter: retryAfter)
            said = { $0.strings.couldNotLoad($0.strings.upstreamProblem(error)) }
        // Kiosk's own files, not the upstream: 507 (RFC 4918's Insufficient Storage) for a full disk, else a 500.
        case .storage:
            let full = error.isDiskFull
            self.init(status: full ? HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage") : .internalServerError, title: full ? "The disk is full" : "Storage error",
                      message: error.description, retryPath: retryPath)
            said = { $0.strings.couldNotLoad($0.strings.upstreamProblem(error)) }
        default:
            self.init(status: .badGateway, title: "Upstream error", message: error.description, retryPath: retryPath)
            said = { $0.strings.couldNotLoad($0.strings.upstreamProblem(error)) }
        }
    }
}

/// Turns every error into a clear page or JSON body (never a bare 500 from the framework) and puts the
/// security headers on every response, errors included.
struct WebErrorMiddleware: RouterMiddleware {
    /// The prefixes besides the app's own `/api/` whose errors are JSON (the features' APIs).
    var jsonPrefixes: [String] = []

    func handle(_ request: Request, context: WebRequestContext,
                next: (Request, WebRequestContext) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            let path = request.uri.path
            let isAPI = path.hasPrefix(Route.apiPrefix) || path + "/" == Route.apiPrefix || jsonPrefixes.contains { path.hasPrefix($0) }
            let webError = Self.webError(for: error, path: request.uri.path, query: request.uri.query,
                                         isWrite: request.method != .get && request.method != .head)
            response = isAPI ? JSONResponse.error(webError) : Pages.errorResponse(webError, context: context.view)
            if let seconds = webError.retryAfter { response.headers[.retryAfter] = String(seconds) }
        }
        SecurityHeaders.apply(to: &response.headers)
        return response
    }

    /// The page or JSON `error` of a request to `path` that failed with `error`. A write's (`isWrite`: a star on a full
    /// disk) has no Retry, its address taking POST alone, and a storage failure of it says the change was not saved.
    static func webError(for error: any Error, path: String, query: String?, isWrite: Bool = false) -> WebError {
        var webError = webError(for: error, retry: isWrite ? nil : path + (query.map { "?" + $0 } ?? ""))
        if isWrite, let failure = error as? KioskError, case .storage = failure {
            webError.said = { $0.strings.couldNotSave($0.strings.upstreamProblem(failure)) }
        }
        return webError
    }

    private static func webError(for error: any Error, retry: String?) -> WebError {
        switch error {
        case let error as WebError: return error
        case let error as KioskError: return WebError(error, retryPath: retry)
        case let error as NIOTooManyBytesError:
            // A form or upload past what its route reads: the request's fault, said as such (not a 500).
            let limit = error.maxBytes.map(RefusalStrings.byteSize)
            return WebError(status: .contentTooLarge, title: "Too large", message: RefusalStrings.english.tooLarge(limit), retryPath: nil)
                .said { $0.tooLarge(limit) }
        case let error as HTTPError where error.status == .notFound:
            var notFound = WebError.notFound("There is no page at this address.")
            notFound.said = { $0.strings.pageNotFound }
            return notFound
        case let error as HTTPError where error.status == .methodNotAllowed:
            return WebError(status: .methodNotAllowed, title: "Method not allowed",
                            message: "This address does not answer that method.", retryPath: nil)
        case let error as HTTPError where (400..<500).contains(error.status.code):
            return WebError(status: error.status, title: "Bad request", message: error.body ?? error.status.reasonPhrase,
                            retryPath: nil)
        default:
            return WebError(status: .internalServerError, title: "Internal error",
                            message: "Something went wrong inside Kiosk.", retryPath: retry)
        }
    }
}

/// The headers every response carries: a CSP with no inline script or style, no MIME sniffing, no referrer to other sites.
enum SecurityHeaders {
    /// Everything a page loads comes from Kiosk itself (`default-src` covers fetch, fonts and frames too), with
    /// no inline script or style. Three directives do not fall back to `default-src`, so each is set: where
    /// forms may post (`form-action`), `base-uri` and `frame-ancestors`.
    static let contentSecurityPolicy = "default-src 'self'; img-src 'self'; script-src 'self'; style-src 'self'; "
        + "object-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

    // HTTPTypes names X-Content-Type-Options but not Referrer-Policy.
    static let referrerPolicy = HTTPFields.Element.Name("Referrer-Policy")!

    /// The fields, built (and their values checked) once rather than on every response.
    static let fields: [HTTPFields.Element] = [
        HTTPFields.Element(name: .contentSecurityPolicy, value: contentSecurityPolicy),
        HTTPFields.Element(name: .xContentTypeOptions, value: "nosniff"),
        // same-origin rather than no-referrer: under no-referrer Chrome sends `Origin: null` with a
        // plain form POST, which the CSRF check must refuse; other sites still get no referrer.
        HTTPFields.Element(name: referrerPolicy, value: "same-origin"),
    ]

    static func apply(to headers: inout HTTPFields) {
        for field in fields { headers[fields: field.name] = [field] }
    }
}


