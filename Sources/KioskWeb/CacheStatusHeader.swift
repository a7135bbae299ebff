import Hummingbird
import KioskCore

// The web app's side of RFC 9211: every answer built from Kiosk's store or through its cache (catalog
// lists, searches, items, favorites, pictures; in HTML and JSON, 200 and 304 alike) carries Kiosk's
// Cache-Status member, made by `CacheStatus` (KioskCore). Pages Kiosk makes itself (the home page,
// errors, the debugger, static files) carry none: RFC 9211 §2 asks a cache not to add a member to a
// response it generates, unless it is based on a stored one.

extension HTTPFields.Element.Name {
    /// RFC 9211's `Cache-Status`.
    static let cacheStatus = Self(CacheStatus.headerName)!
}

extension Response {
    /// The response with `status` as its Cache-Status (the only member: nothing upstream of Kiosk's store
    /// is passed on, as the store keeps pages and items, not the headers they came with). One made from an answer
    /// the debugger edited (a breakpoint, a rule) is `no-store`: Kiosk's store never keeps such an answer, and
    /// neither may the browser or the phone's saved copy (the service worker keeps nothing `no-store`).
    func with(_ status: CacheStatus) -> Response {
        var response = self
        response.headers[.cacheStatus] = status.headerValue
        if status.decision == .edited { response.headers[.cacheControl] = "no-store" }
        return response
    }
}
