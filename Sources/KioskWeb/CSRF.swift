import Foundation
package import Hummingbird
import KioskCore

/// Cross-site request forgery protection for the HTML forms, without JavaScript: a double-submit
/// cookie. A page sets `kiosk_csrf` (random, HttpOnly, SameSite=Strict) when the browser has none,
/// and every form carries the same value in a hidden `csrf` field; a POST is accepted only when the
/// two are equal. Another site can make a browser send the cookie but cannot read it, so it cannot
/// fill in the field.
package struct CSRFProtection: Sendable {
    static let cookieName = "kiosk_csrf"
    static let fieldName = "csrf"
    /// 32 random bytes as lowercase hex.
    static let tokenLength = 64
    /// The largest form body accepted: the forms have three short fields.
    static let maximumFormBytes = 4096

    /// Whether the cookie is `Secure` (served over HTTPS): a browser then never sends it over plain HTTP,
    /// where anyone on the network could read it.
    let secureCookies: Bool

    /// The protection needs no server-side state: the browser holds the token, and the check is
    /// that the form repeats it.
    init(secureCookies: Bool = false) {
        self.secureCookies = secureCookies
    }

    /// A new token: 32 bytes from the system's cryptographically secure generator, as hex.
    func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        // Four 64-bit draws rather than 32 byte-sized ones (each is a call into the system's generator): every
        // first visit, and every request of a client without cookies, makes one.
        let words = (generator.next(), generator.next(), generator.next(), generator.next()) as (UInt64, UInt64, UInt64, UInt64)
        return withUnsafeBytes(of: words) { Hex.encode($0) }
    }

    /// Whether a cookie value has the shape of a token Kiosk issues (anything else is replaced).
    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == tokenLength && token.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// The request's token cookie: of the well-formed ones, the last. Another server of this machine (another port, an
    /// app behind `kiosk proxy --reverse`) can set a cookie of this name under a longer path, which a browser sends
    /// first, and for ever: read first, a malformed one left forms refused for good, and a well-formed one made the token
    /// one that server knows. Kiosk's own, set for `/`, comes after any set for a longer path.
    static func cookieToken(_ request: Request) -> String? {
        var token: String?
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " }
                guard trimmed.hasPrefix(cookieName + "=") else { continue }
                let value = String(trimmed.dropFirst(cookieName.count + 1)).trimmingCharacters(in: .whitespaces)
                if isWellFormed(value) { token = value }
            }
        }
        return token
    }

    /// Equality that takes the same time wherever the first difference is, so a forger cannot learn
    /// the token a byte at a time from response times.
    package static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let a = Array(lhs.utf8), b = Array(rhs.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// Reads a POSTed form and refuses it (403) unless it comes from Kiosk's own pages: an Origin
    /// header, when present, must be this host, and the `csrf` field must equal the cookie. The other
    /// fields are decoded afterwards, by the handler (`VerifiedForm.decode`), so a forged form learns
    /// nothing from validation messages.
    package static func verifiedForm(_ request: Request, maximumBytes: Int = maximumFormBytes,
                             allowsLineBreaks: Bool = false) async throws -> VerifiedForm {
        try refuseOtherOrigins(request)
        var request = request
        let body = try await request.collectBody(upTo: maximumBytes)
        let form = VerifiedForm(body: String(buffer: body), maximumBytes: maximumBytes, allowsLineBreaks: allowsLineBreaks)
        let field = try form.decode(CSRFField.self)
        guard let cookie = cookieToken(request), let token = field.csrf, constantTimeEqual(cookie, token) else {
            var stale = WebError.forbidden(Strings.english.formTokenStale)
            stale.said = { (context: ViewContext) in context.strings.formTokenStale }
            throw stale
        }
        return form
    }

    /// Refuses (403) a request whose Origin header, when present, is not this host: a browser names the
    /// site a form or a script sent it from. A browser's `Sec-Fetch-Site` saying another site (or another origin of
    /// this site, another port) sent it is refused too, Origin or not: Kiosk's own pages send `same-origin`.
    package static func refuseOtherOrigins(_ request: Request) throws {
        if isFromAnotherSite(request) {
            throw WebError.forbidden(said: { $0.fromAnotherSite(nil) })
        }
        if let origin = foreignOrigin(request) {
            let shown = String(origin.prefix(80))
            throw WebError.forbidden(said: { $0.fromAnotherSite(shown) })
        }
    }

    /// The request's Origin header when it names another origin than this host (`null` included: a sandboxed frame, a
    /// redirect across sites); nil without one, or with this host's.
    package static func foreignOrigin(_ request: Request) -> String? {
        guard let origin = request.headers[.origin] else { return nil }
        let host = request.head.authority ?? request.headers[hostHeader] ?? ""
        return !host.isEmpty && (origin == "http://" + host || origin == "https://" + host) ? nil : origin
    }

    // HTTP/1 requests carry Host as a header; HTTPTypes moves it to `authority` when it can.
    static let hostHeader = HTTPFields.Element.Name("Host")!
    /// Fetch metadata (W3C): who made a browser's request, as the browser knows it.
    static let secFetchSite = HTTPFields.Element.Name("Sec-Fetch-Site")!

    /// Whether the browser says another site's page made the request (`Sec-Fetch-Site`: cross-site, or same-site: another
    /// origin of the site, such as another port of this machine).
    package static func isFromAnotherSite(_ request: Request) -> Bool {
        request.headers[values: secFetchSite].contains { $0.lowercased() == "cross-site" || $0.lowercased() == "same-site" }
    }
}

/// A POSTed form whose CSRF token matched; its fields are decoded into the handler's typed form.
package struct VerifiedForm: Sendable {
    /// The `application/x-www-form-urlencoded` body.
    let body: String
    let maximumBytes: Int
    let allowsLineBreaks: Bool

    /// The fields as `Form`; bad input is a 400 saying what is wrong (see `FormInput`).
    package func decode<Form: Decodable>(_ type: Form.Type) throws -> Form {
        try FormInput.decode(Form.self, from: body, maximumLength: maximumBytes, allowsLineBreaks: allowsLineBreaks)
    }
}

/// The one field every form has.
private struct CSRFField: Decodable {
    let csrf: String?

    init(from decoder: any Decoder) throws {
        csrf = try decoder.container(keyedBy: FormKey.self).text(CSRFProtection.fieldName)
    }
}

/// Gives every request a token in its context — the cookie's, or a new one that an HTML response then sets.
struct CSRFMiddleware: RouterMiddleware {
    let protection: CSRFProtection

    func handle(_ request: Request, context: WebRequestContext,
                next: (Request, WebRequestContext) async throws -> Response) async throws -> Response {
        let existing = CSRFProtection.cookieToken(request)
        var context = context
        context.csrfToken = existing ?? protection.newToken()
        var response = try await next(request, context)
        // Only HTML pages hold forms; images, CSS and JSON do not need the cookie.
        if existing == nil, response.headers[.contentType]?.hasPrefix("text/html") == true {
            let attributes = protection.secureCookies ? Self.secureCookieAttributes : Self.cookieAttributes
            response.headers.append(HTTPFields.Element(name: .setCookie,
                                                       value: CSRFProtection.cookieName + "=" + context.csrfToken + attributes))
        }
        return response
    }

    /// What follows the token in Set-Cookie (HttpOnly, SameSite=Strict, Path=/), as Hummingbird's `Cookie`
    /// writes it, computed once: every first visit gets the cookie, and only the token differs.
    static let cookieAttributes = attributes(secure: false)
    /// The same, with `Secure`, over HTTPS.
    static let secureCookieAttributes = attributes(secure: true)

    private static func attributes(secure: Bool) -> String {
        let template = Cookie(name: CSRFProtection.cookieName, value: "", path: "/", secure: secure, httpOnly: true, sameSite: .strict)
        return String(template.description.dropFirst(CSRFProtection.cookieName.count + 1))
    }
}

/// Another site's page may link to Kiosk — a navigation the reader makes, which opens a page as it would from Kiosk's own —
/// but not use it as a resource: an `<img>`, `<script>`, `<iframe>` or `fetch()` of a page, a picture or the JSON API
/// is refused (403) before any route runs. Each would make Kiosk ask the catalogs (spending the reader's API quota, a
/// hundred addresses at a time) for a page that cannot even read the answer. Browsers say where a request comes from
/// (Fetch Metadata: another site, or another origin of this one such as another port, and the request's destination; or
/// an Origin header naming another); one that says nothing (curl, a script) is not a page of another site, and passes.
struct CrossSiteReadGuard: RouterMiddleware {
    func handle(_ request: Request, context: WebRequestContext,
                next: (Request, WebRequestContext) async throws -> Response) async throws -> Response {
        // Origin too, for a browser that sends no Fetch Metadata (Safari before 16.4): it names the page that made a CORS
        // request, an EventSource or a WebSocket; never a navigation's GET.
        guard request.method == .get || request.method == .head,
              CSRFProtection.isFromAnotherSite(request) || CSRFProtection.foreignOrigin(request) != nil,
              request.headers[values: Self.secFetchDest] != ["document"] else {
            return try await next(request, context)
        }
        throw WebError.forbidden(said: { $0.notForOtherSites })
    }

    static let secFetchDest = HTTPFields.Element.Name("Sec-Fetch-Dest")!
}
