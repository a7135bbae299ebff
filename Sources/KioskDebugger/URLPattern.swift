import Foundation
import KioskCore

/// The URL a mock or rewrite rule matches, read once when the rule is loaded: an exact URL (compared
/// after normalisation, so secret query items and the order of the others do not matter), or a pattern
/// where `*` matches any run of characters, compared with the request's normalised URL.
struct URLPattern: Sendable, Hashable {
    private enum Form: Sendable, Hashable {
        /// The normalised URL.
        case exact(String)
        /// The text between the stars (the first and last may be empty).
        case wildcard([String])
    }

    private let form: Form
    /// What every matching URL starts with, up to its query: normalisation changes only the query and the
    /// fragment, so a request's URL as it is can be ruled out without normalising it.
    private let prefix: String

    /// The longest pattern a rule may have: the longest URL an app can send through the proxy (an archive's longest
    /// replayable one), far past any a person writes, short of what breaks a rules page.
    static var maximumBytes: Int { HAR.maximumRequestTargetBytes }

    /// Why `pattern` cannot be a rule's URL pattern; nil when it can: an http(s) URL with a host (a `*` may stand for any
    /// run of characters in it) or a pattern starting with `*`, one line, at most `maximumBytes`.
    static func problem(_ pattern: String) -> URLPatternProblem? {
        guard pattern.hasPrefix("http://") || pattern.hasPrefix("https://") || pattern.hasPrefix("*") else { return .notHTTP }
        if pattern.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return .notOneLine }
        if pattern.utf8.count > maximumBytes { return .tooLong(kilobytes: maximumBytes / 1024) }
        // With each * as a letter, what starts with a scheme must read as a URL with a host (`http://[::1` never matches).
        if !pattern.hasPrefix("*") {
            let example = pattern.replacingOccurrences(of: "*", with: "x")
            guard let components = URLComponents(string: HTTPSyntax.escapingDisallowed(example)), components.host?.isEmpty == false else {
                // Quoted without its query or fragment, nor a user's name and password (a key typed into any must not reach
                // a terminal or a page), cut to 80 characters.
                var shown = String(pattern.prefix { $0 != "?" && $0 != "#" })
                let cut = shown.count < pattern.count
                if let scheme = shown.range(of: "://"), let at = shown[scheme.upperBound...].prefix(while: { $0 != "/" }).lastIndex(of: "@") {
                    shown.removeSubrange(scheme.upperBound...at)
                }
                return .noHost(String(shown.prefix(80)) + (cut ? "…" : ""))
            }
            // (A port past 65535, or 0, is in no request's URL: such a pattern would never match.)
            if let port = components.port, !(1...65_535).contains(port) { return .badPort(port) }
            // Nor is a user's name or password: a client sends them as Authorization. Kept, the password would be shown.
            if components.percentEncodedUser != nil || components.percentEncodedPassword != nil { return .userInfo }
        }
        return nil
    }

    /// `pattern` as given by a rule; `names` are the query items normalisation drops (the redactor's).
    init(_ pattern: String, ignoring names: Set<String>) {
        let literal: String
        if pattern.contains("*") {
            let parts = Self.queryInOrder(pattern, ignoring: names).split(separator: "*", omittingEmptySubsequences: false).map(String.init)
            form = .wildcard(parts)
            literal = parts[0]
        } else {
            let url = Self.normalized(pattern, ignoring: names)
            form = .exact(url)
            literal = url
        }
        prefix = String(literal.prefix { $0 != "?" && $0 != "#" })
    }

    /// The normalised URL an exact pattern matches alone; nil for a wildcard pattern.
    var exactURL: String? {
        if case .exact(let url) = form { url } else { nil }
    }

    /// Whether a request whose URL is `url` (as sent, not normalised) may match: false rules it out cheaply.
    func mayMatch(_ url: String) -> Bool { url.hasPrefix(prefix) }

    /// Whether the request whose normalised URL is `key` matches.
    func matches(_ key: String) -> Bool {
        switch form {
        case .exact(let url): url == key
        case .wildcard(let parts): Self.wildcard(parts, key)
        }
    }

    /// The URL without secret query items, the rest sorted: two requests for the same data compare equal
    /// whatever their keys, timestamps and parameter order.
    static func normalized(_ url: String, ignoring names: Set<String>) -> String {
        guard var components = URLComponents(string: url) else { return url }
        let kept = (components.queryItems ?? []).filter { !Redactor.isSecretQueryName($0.name, listed: names) }
            .sorted { ($0.name, $0.value ?? "") < ($1.name, $1.value ?? "") }
        components.queryItems = kept.isEmpty ? nil : kept
        components.fragment = nil
        // An origin alone is its root (`http://a.test` is asked for as `GET /`), and a host is one in any case, as the
        // request's URL, normalised here too, has it.
        if components.percentEncodedPath.isEmpty, components.host != nil { components.percentEncodedPath = "/" }
        if let host = components.percentEncodedHost, host != host.lowercased() { components.percentEncodedHost = host.lowercased() }
        // `%2A` and `*` are one character to every server Kiosk meets (the query's items are decoded above already): an
        // exact URL holding a `*` is written with `%2A`, which a rule's pattern does not read as its wildcard.
        if components.percentEncodedPath.contains("%2") {
            components.percentEncodedPath = components.percentEncodedPath.replacingOccurrences(of: "%2A", with: "*")
                .replacingOccurrences(of: "%2a", with: "*")
        }
        return components.string ?? url
    }

    /// A wildcard pattern's query as a request's normalised URL has it (`normalized`), for the pattern to be written in
    /// any order: its items sorted by name, those named in `names` left out (no normalised URL has them), the fragment
    /// dropped. A pattern with a `*` in an item's name is left as it is: its place among the others is unknown.
    static func queryInOrder(_ pattern: String, ignoring names: Set<String>) -> String {
        guard let mark = pattern.firstIndex(of: "?") else { return pattern }
        let query = pattern[pattern.index(after: mark)...].prefix { $0 != "#" }
        let items = query.split(separator: "&")
        let name = itemName
        guard !items.contains(where: { name($0).contains("*") }) else { return pattern }
        // By name, then value, as `normalized` sorts a request's items (`tag=b&tag=a` is read `tag=a&tag=b`); a value with a
        // `*` is placed by its text, the one order that can be given it.
        let value = { (item: Substring) -> String in
            let raw = String(item.drop { $0 != "=" }.dropFirst())
            return raw.removingPercentEncoding ?? raw
        }
        let kept = items.filter { !Redactor.isSecretQueryName(name($0), listed: names) }
            .sorted { (name($0), value($0)) < (name($1), value($1)) }
        return String(pattern[..<mark]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
    }

    /// `pattern` as a rule, mock or breakpoint keeps it: without the query items named in `names` (the redactor's secret
    /// ones), an exact URL's and a wildcard pattern's alike. Matching ignores those items, and a key typed or copied into
    /// a pattern must reach neither the rules file nor a page, a terminal, the log or an archive.
    static func kept(_ pattern: String, ignoring names: Set<String>) -> String {
        guard pattern.contains("*") else { return withoutItems(pattern, named: names) }
        guard let mark = pattern.firstIndex(of: "?") else { return pattern }
        let end = pattern[mark...].firstIndex(of: "#") ?? pattern.endIndex
        let items = pattern[pattern.index(after: mark)..<end].split(separator: "&", omittingEmptySubsequences: false)
        let kept = items.filter { !Redactor.isSecretQueryName(itemName($0), listed: names) }
        guard kept.count < items.count else { return pattern }
        return String(pattern[..<mark]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&")) + pattern[end...]
    }

    /// A pattern's query item's name, decoded (`api%2Dkey=…` is the item `api-key`).
    private static func itemName(_ item: Substring) -> String {
        let raw = String(item.prefix { $0 != "=" })
        return raw.removingPercentEncoding ?? raw
    }

    /// `url` without the query items named in `names` (the redactor's secret ones), everything else as written: what a
    /// rule keeps of a recorded URL, since matching ignores those items and a key in them must not reach the file.
    static func withoutItems(_ url: String, named names: Set<String>) -> String {
        guard var components = URLComponents(string: url), let items = components.percentEncodedQueryItems else { return url }
        let kept = items.filter { !Redactor.isSecretQueryName($0.name.removingPercentEncoding ?? $0.name, listed: names) }
        guard kept.count < items.count else { return url }
        components.percentEncodedQueryItems = kept.isEmpty ? nil : kept
        return components.string ?? url
    }

    /// `*` matches any run of characters (including none); everything else literally.
    static func wildcard(_ pattern: String, _ text: String) -> Bool {
        wildcard(pattern.split(separator: "*", omittingEmptySubsequences: false).map(String.init), text)
    }

    private static func wildcard(_ parts: [String], _ text: String) -> Bool {
        guard parts.count > 1 else { return parts.first == text }
        guard text.hasPrefix(parts[0]) else { return false }
        var rest = text.dropFirst(parts[0].count)
        for part in parts.dropFirst().dropLast() where !part.isEmpty {
            guard let range = rest.range(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        return rest.hasSuffix(parts.last ?? "")
    }
}

/// Why a text cannot be a mock's or rewrite rule's URL pattern.
public enum URLPatternProblem: Sendable, Hashable {
    case notHTTP, notOneLine
    case tooLong(kilobytes: Int)
    /// Not a URL with a host (the pattern up to its query, cut to 80 characters).
    case noHost(String)
    /// A port outside 1–65535.
    case badPort(Int)
    /// A user's name or password before the host, which no request's URL carries.
    case userInfo

    /// The problem in an English sentence.
    public var english: String {
        switch self {
        case .notHTTP: "The URL pattern must be an http(s) URL or a pattern starting with *."
        case .notOneLine: "The URL pattern must be one line, without control characters (no request's URL has them)."
        case .tooLong(let kilobytes): "The URL pattern is longer than \(kilobytes) KB."
        case .badPort(let port): "The URL pattern's port \(port) is no port: ports go from 1 to 65535."
        case .userInfo: "The URL pattern has a user's name or password before its host, which no request's URL carries (a client sends "
            + "them as an Authorization header): leave them out."
        case .noHost(let pattern): "The URL pattern is not a URL with a host (“\(pattern)”): write it as a request's URL, with * where anything may be."
        }
    }
}
