import Foundation
import Hummingbird

/// Where Home's "since your last visit" starts, kept per browser in a cookie: when this browser last opened Home,
/// and where its current visit's changes start. A visit ends after `gap` without opening Home, so reloading Home,
/// or coming back to it while reading, keeps the changes it showed; the next visit shows what changed after
/// the last time Home was seen. Not a secret and not signed: a forged value only changes what Home lists.
struct ReaderVisit: Equatable, Sendable {
    /// The cookie's name.
    static let cookieName = "kiosk_visit"
    /// How long without opening Home ends a visit.
    static let gap: TimeInterval = 30 * 60
    /// How long the browser keeps the cookie: about as long as a browser keeps any (400 days).
    static let lifetime = 400 * 86_400

    /// When this browser opened Home, now included.
    let lastSeen: Date
    /// Where this visit's changes start: the end of the previous visit; nil on a browser's first visit.
    let since: Date?

    /// The visit of a browser that sent `cookie` (nil, or a value this code cannot read: a first visit) and opens
    /// Home at `now`.
    init(cookie: String?, now: Date) {
        lastSeen = now
        // Whole seconds, none after now: anything else (a future time, "nan", 1e300, a third part) is a value this
        // code did not write, read as a first visit.
        let times = (cookie ?? "").split(separator: ".", omittingEmptySubsequences: false).map { part -> Date? in
            guard part.count <= 12, let seconds = Int(part), seconds >= 0, Double(seconds) <= now.timeIntervalSince1970 else { return nil }
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        guard (1...2).contains(times.count), let previousSeen = times[0], times.count == 1 || times[1] != nil else {
            since = nil
            return
        }
        since = now.timeIntervalSince(previousSeen) > Self.gap ? previousSeen : times.count == 2 ? times[1] : nil
    }

    /// The cookie to send back: `lastSeen` and `since`, in whole seconds since 1970; `Secure` over HTTPS.
    func cookie(secure: Bool) -> Cookie {
        let value = String(Int(lastSeen.timeIntervalSince1970)) + (since.map { "." + String(Int($0.timeIntervalSince1970)) } ?? "")
        return Cookie(name: Self.cookieName, value: value, maxAge: Self.lifetime, path: "/", secure: secure, httpOnly: true,
                      sameSite: .lax)
    }
}
