public import Foundation
import Synchronization
public import KioskCore

// Kiosk's cache policy, in one place. Kiosk is a private cache that reads offline first:
// - `no-store`: the answer is shown, never stored.
// - Freshness: `max-age` less `Age`, else `Expires` against `Date`, else the source's default; `no-cache`
//   makes it stale at once (stored, always revalidated).
// - Stale pages, while connected: shown at once while they revalidate in the background
//   (stale-while-revalidate), unless the upstream said `must-revalidate` or `no-cache` (RFC 9111
//   §4.2.4: no stale answer while connected; the page waits for its revalidation) or gave a
//   `stale-while-revalidate=N` window (RFC 5861 §3) that has passed (the page waits too).
// - A revalidation that fails (offline, timeout, 5xx, malformed answer) always falls back to the stored
//   page, marked with why: the offline-first contract is stronger than `stale-if-error` and the
//   disconnected exception of RFC 9111 §4.2.4, so the catalogs do not read `stale-if-error` (`kiosk proxy`'s
//   `http` cache mode does: an app's answers follow HTTP's rules, not the catalogs' contract).
// - `s-maxage`, `proxy-revalidate` and `private` are for shared caches: the catalogs do not read them; the proxy's
//   cache reads them for clients on other machines (`--proxy-auth`), to which it is a shared cache (`asShared`).

/// The Cache-Control directives (RFC 9111, RFC 5861) Kiosk's policy reads.
public struct CacheControl: Sendable, Hashable {
    /// `max-age`, in seconds.
    public var maxAge: Int?
    /// `no-store`: never store the answer.
    public var noStore = false
    /// `no-cache`: store, but revalidate before every use.
    public var noCache = false
    /// `must-revalidate`: once stale, never shown before revalidating while connected.
    public var mustRevalidate = false
    /// `stale-while-revalidate`, in seconds: how long after freshness a stale copy may be shown while revalidating.
    public var staleWhileRevalidate: Int?
    /// `stale-if-error`, in seconds (RFC 5861 §4): how long after freshness a stale copy may stand in for an error.
    public var staleIfError: Int?
    /// `only-if-cached` (a request's): answer from the cache or with a 504, never forward.
    public var onlyIfCached = false
    /// `min-fresh` (a request's), in seconds: only an answer fresh for at least that long more will do.
    public var minFresh: Int?
    /// `max-stale` (a request's), in seconds: a stored answer stale by at most that long will do; `Int.max` when the
    /// directive has no value (any staleness will do, RFC 9111 §5.2.1.2).
    public var maxStale: Int?
    /// `s-maxage`, in seconds: a shared cache's `max-age` (RFC 9111 §5.2.2.10).
    public var sharedMaxAge: Int?
    /// `proxy-revalidate`: `must-revalidate` for a shared cache (RFC 9111 §5.2.2.8).
    public var proxyRevalidate = false
    /// `private`: a shared cache must not store the answer (RFC 9111 §5.2.2.7).
    public var isPrivate = false
    /// `public`: any cache may store the answer, even one it would not by default (RFC 9111 §5.2.2.9).
    public var isPublic = false
    /// `must-understand`: store the answer only when its status code's caching rules are understood, and then ignore
    /// `no-store` (RFC 9111 §5.2.2.3).
    public var mustUnderstand = false
    /// `no-transform` (RFC 9111 §5.2.2.6): no intermediary may change the content, a coding undone included.
    public var noTransform = false

    /// Parses a Cache-Control header value; unknown directives are ignored, malformed numbers dropped — but a
    /// `max-age` is the first one given, and one without a valid number is 0 (RFC 9111 §4.2.1: a cache uses the first
    /// of repeated directives, and is encouraged to take invalid freshness information as stale).
    public init(_ header: String?) {
        guard let header else { return }
        for directive in Self.directives(of: header) {
            let parts = directive.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            guard let name = parts.first?.lowercased(), !name.isEmpty else { continue }
            // The grammar (RFC 9111 §5.2: `token [ "=" ( token / quoted-string ) ]`) has no space around `=`: `max-age = 60`
            // is invalid, and its freshness taken as none, as `max-age=60a` is.
            let spaced = parts.count > 1 && (directive.prefix { $0 != "=" }.last?.isWhitespace == true
                                             || directive.drop { $0 != "=" }.dropFirst().first?.isWhitespace == true)
            let number = parts.count > 1 && !spaced ? Self.deltaSeconds(parts[1]) : nil
            switch name {
            case "max-age": maxAge = maxAge ?? number ?? 0
            case "s-maxage": sharedMaxAge = sharedMaxAge ?? number ?? 0
            case "proxy-revalidate": proxyRevalidate = true
            case "private": isPrivate = true
            case "public": isPublic = true
            case "must-understand": mustUnderstand = true
            case "no-transform": noTransform = true
            case "no-store": noStore = true
            case "no-cache": noCache = true
            case "must-revalidate": mustRevalidate = true
            case "stale-while-revalidate": staleWhileRevalidate = number
            case "stale-if-error": staleIfError = number
            case "only-if-cached": onlyIfCached = true
            case "min-fresh": minFresh = number
            // Without a value, any staleness; with a malformed one, none (the directive is dropped).
            case "max-stale": maxStale = parts.count > 1 ? number : Int.max
            default: continue
            }
        }
    }
}

extension CacheControl {
    /// A Cache-Control value's directives, split at the commas between them: not at one inside a quoted string
    /// (`ext="x, max-age=1000"` is one directive, RFC 9111 §5.2's `quoted-string`, where a backslash quotes the next
    /// character).
    static func directives(of header: String) -> [Substring] {
        var directives: [Substring] = []
        var start = header.startIndex, index = header.startIndex
        var quoted = false, escaped = false
        while index < header.endIndex {
            let character = header[index]
            if escaped {
                escaped = false
            } else if quoted && character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == "," && !quoted {
                directives.append(header[start..<index])
                start = header.index(after: index)
            }
            index = header.index(after: index)
        }
        // A quote never closed quotes nothing: read as a string to the end, it would hide a `no-store` after it.
        if quoted { return header.split(separator: ",").filter { !$0.allSatisfy(\.isWhitespace) } }
        directives.append(header[start...])
        return directives.filter { !$0.allSatisfy(\.isWhitespace) }
    }

    /// The directives as a shared cache reads them (RFC 9111 §5.2.2.8, §5.2.2.10): `s-maxage` in place of `max-age`,
    /// and with it, or `proxy-revalidate`, `must-revalidate`.
    public var asShared: CacheControl {
        var shared = self
        if let sharedMaxAge { shared.maxAge = sharedMaxAge }
        shared.mustRevalidate = mustRevalidate || proxyRevalidate || sharedMaxAge != nil
        return shared
    }

    /// The most seconds a directive's value stands for: RFC 9111 §1.2.2 has a value too large to represent (or a
    /// calculation that overflows) taken as 2^31.
    public static let maxDeltaSeconds = 2_147_483_648

    /// An `Age` field's value in seconds (RFC 9111 §5.1): its delta-seconds, at most 2^31 however many digits it has
    /// (§1.2.2); 0 without one, or for one that is not a non-negative integer (a fraction, `inf`), which a cache
    /// ignores. Of a list (`Age: 7200, 7200`, the same field as two lines of it, RFC 9110 §5.3) the first member counts,
    /// as the first line does.
    public static func age(_ value: String?) -> Int {
        guard let first = value?.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first else { return 0 }
        let member = first.trimmingCharacters(in: .whitespaces)
        guard !member.hasPrefix("-") else { return 0 }
        return deltaSeconds(member) ?? 0
    }

    /// A directive's delta-seconds: at most `maxDeltaSeconds` (the digits of a larger number too), a negative number 0
    /// (stale at once, as RFC 9111 §4.2.1 has invalid freshness taken), anything else nil.
    static func deltaSeconds(_ text: String) -> Int? {
        // (Swift's `Int` takes a `+`, which delta-seconds, digits alone, does not.)
        guard !text.hasPrefix("+") else { return nil }
        if let value = Int(text) { return min(max(0, value), maxDeltaSeconds) }
        return !text.isEmpty && text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) ? maxDeltaSeconds : nil
    }
}

/// Decides, for one response, whether it may be stored and until when it is fresh.
public struct CachePolicy: Sendable {
    /// Freshness used when the upstream says nothing.
    public var defaultLifetime: TimeInterval

    public init(defaultLifetime: TimeInterval) { self.defaultLifetime = defaultLifetime }

    /// What the response allows.
    public enum Decision: Sendable, Hashable {
        /// Must not be written to the store (`no-store`).
        case doNotStore
        /// Store it; fresh until the date; shown stale while revalidating until `staleShownUntil` (nil: always).
        case store(freshUntil: Date, validators: Validators, staleShownUntil: Date? = nil)
    }

    /// Freshness from Cache-Control max-age (less Age), else Expires (relative to Date), else the default.
    /// `no-cache` stores the response but makes it stale at once, so it is always revalidated.
    public func decide(headers: HTTPHeaderFields, receivedAt now: Date) -> Decision {
        let control = CacheControl(headers["Cache-Control"])
        if control.noStore { return .doNotStore }
        let validators = Validators(etag: headers["ETag"], lastModified: headers["Last-Modified"])
        let age = TimeInterval(CacheControl.age(headers["Age"]))
        let lifetime: TimeInterval
        if control.noCache {
            lifetime = 0
        } else if let maxAge = control.maxAge {
            lifetime = TimeInterval(maxAge) - age
        } else if let expiresText = headers["Expires"] {
            // An invalid Expires (e.g. "0") means already expired (RFC 9111 §5.3).
            if let expires = HTTPDate.parse(expiresText) {
                let served = headers["Date"].flatMap(HTTPDate.parse) ?? now
                lifetime = expires.timeIntervalSince(served) - age
            } else {
                lifetime = 0
            }
        } else {
            lifetime = defaultLifetime
        }
        let freshUntil = now.addingTimeInterval(max(0, lifetime))
        let staleShownUntil: Date? = if control.mustRevalidate || control.noCache {
            freshUntil
        } else {
            control.staleWhileRevalidate.map { freshUntil.addingTimeInterval(TimeInterval($0)) }
        }
        return .store(freshUntil: freshUntil, validators: validators, staleShownUntil: staleShownUntil)
    }
}

/// HTTP dates (IMF-fixdate, and the obsolete RFC 850 and asctime forms).
public enum HTTPDate {
    private static let formats = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"]

    /// Parses an HTTP date, nil when it is not one.
    public static func parse(_ text: String) -> Date? {
        // The form every current server sends, read directly: this runs on every stored answer a proxy gives (its age)
        // and every answer it may share, and a DateFormatter is made and dropped in tens of microseconds.
        if let date = imfFixdate(text) { return date }
        return formatters.withLock { formatters in
            for formatter in formatters {
                if let date = formatter.date(from: text) { return date }
            }
            return nil
        }
    }

    /// A formatter per form, made once; DateFormatter is not safe to share between threads, so they are used locked.
    private static let formatters = Mutex<[DateFormatter]>(formats.map { format in
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = format
        return formatter
    })

    private static let monthNames: [[UInt8]] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .map { Array($0.utf8) }
    private static let dayNames: [[UInt8]] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { Array($0.utf8) }

    /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7), nil when `text` is not exactly one.
    static func imfFixdate(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            guard bytes.count == 29, dayNames.contains(where: { $0.elementsEqual(bytes[0..<3]) }), bytes[3] == 0x2C, bytes[4] == 0x20,
                  bytes[7] == 0x20, bytes[11] == 0x20, bytes[16] == 0x20, bytes[19] == 0x3A, bytes[22] == 0x3A, bytes[25] == 0x20,
                  bytes[26] == 0x47, bytes[27] == 0x4D, bytes[28] == 0x54,
                  let monthIndex = monthNames.firstIndex(where: { $0.elementsEqual(bytes[8..<11]) }) else { return nil }
            func number(_ range: Range<Int>) -> Int? {
                var value = 0
                for index in range {
                    let digit = Int(bytes[index]) - 0x30
                    guard (0...9).contains(digit) else { return nil }
                    value = value * 10 + digit
                }
                return value
            }
            guard let day = number(5..<7), let year = number(12..<16), let hour = number(17..<19), let minute = number(20..<22),
                  let second = number(23..<25), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
            // A day the month does not have (31 Apr) is not a date.
            let month = monthIndex + 1
            let days = [31, year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
            guard day <= days[monthIndex] else { return nil }
            // A leap second (:60) counts as the first second of the next minute.
            let seconds = CivilTime.unixSeconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
    }

    /// The last second `formatCached` formatted, and its text.
    private static let lastFormatted = Mutex<(second: Int, text: String)>((Int.min, ""))

    /// `date` as an IMF-fixdate to the second, formatted at most once a second: the `Date` a proxy gives an answer that
    /// came without one (RFC 9110 §6.6.1), on every such exchange.
    public static func formatCached(_ date: Date) -> String {
        let second = Int(date.timeIntervalSince1970.rounded(.down))
        if let text = lastFormatted.withLock({ $0.second == second ? $0.text : nil }) { return text }
        let text = format(Date(timeIntervalSince1970: TimeInterval(second)))
        lastFormatted.withLock { $0 = (second, text) }
        return text
    }

    /// Formats a date as an IMF-fixdate.
    public static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
