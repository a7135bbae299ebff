import Foundation
import KioskCore

/// The parts of Cache-Control (RFC 9111) and RFC 5861 that decide how long a response may be used.
public struct CacheControl: Sendable, Hashable {
    public var maxAge: Int?
    public var sharedMaxAge: Int?
    public var noStore = false
    public var noCache = false
    public var mustRevalidate = false
    public var staleWhileRevalidate: Int?
    public var staleIfError: Int?

    /// Parses a Cache-Control header value; unknown directives are ignored, malformed numbers dropped.
    public init(_ header: String?) {
        guard let header else { return }
        for directive in header.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            guard let name = parts.first?.lowercased(), !name.isEmpty else { continue }
            let number = parts.count > 1 ? Int(parts[1]).map { max(0, $0) } : nil
            switch name {
            case "max-age": maxAge = number
            case "s-maxage": sharedMaxAge = number
            case "no-store": noStore = true
            case "no-cache": noCache = true
            case "must-revalidate": mustRevalidate = true
            case "stale-while-revalidate": staleWhileRevalidate = number
            case "stale-if-error": staleIfError = number
            default: continue
            }
        }
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
        /// Store it; fresh until the date.
        case store(freshUntil: Date, validators: Validators)
    }

    /// Freshness from Cache-Control max-age (less Age), else Expires (relative to Date), else the default.
    /// `no-cache` stores the response but makes it stale at once, so it is always revalidated.
    public func decide(headers: HTTPHeaderFields, receivedAt now: Date) -> Decision {
        let control = CacheControl(headers["Cache-Control"])
        if control.noStore { return .doNotStore }
        let validators = Validators(etag: headers["ETag"], lastModified: headers["Last-Modified"])
        let age = TimeInterval(headers["Age"].flatMap(Int.init) ?? 0)
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
        return .store(freshUntil: now.addingTimeInterval(max(0, lifetime)), validators: validators)
    }
}

/// HTTP dates (IMF-fixdate, and the obsolete RFC 850 and asctime forms).
public enum HTTPDate {
    private static let formats = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"]

    /// Parses an HTTP date, nil when it is not one.
    public static func parse(_ text: String) -> Date? {
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
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
