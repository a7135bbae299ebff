public import Foundation

/// One answer kept by `kiosk proxy`'s cache: what the upstream sent, and when.
public struct ProxyCacheEntry: Sendable, Hashable {
    /// The entry's id in the cache (stable until it is removed).
    public var id: Int64
    /// The request's method (GET).
    public var method: String
    /// The full URL asked.
    public var url: String
    /// The URL's host, for listing and clearing by host.
    public var host: String
    /// The URL's host with its port when it names one (`localhost:3000`), as `ProxyCacheHostStats.host` says it.
    public var authority: String { Self.origin(ofURL: url)?.authority ?? host }

    /// A stored URL's scheme and its host with the port when it names one, lowercased; nil for a URL without `://`. The one
    /// reading of an entry's host for its listing and for the cache's counts by host.
    public static func origin(ofURL url: String) -> (scheme: String, authority: String)? {
        guard let mark = url.range(of: "://") else { return nil }
        let rest = url[mark.upperBound...]
        return (url[..<mark.lowerBound].lowercased(), rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }.lowercased())
    }
    /// The status the upstream sent.
    public var status: Int
    /// The header fields the upstream sent, in order (without hop-by-hop ones; a Set-Cookie only as one empty field
    /// saying the answer set a cookie).
    public var headers: HTTPHeaderFields
    /// The body, exactly as sent (still encoded as its Content-Encoding says).
    public var body: Data
    /// When the request that got it was sent (RFC 9111 §4.2.3's request_time).
    public var requestTime: Date
    /// When the answer came (or was last confirmed by a 304).
    public var responseTime: Date
    /// When it was last given to an app.
    public var lastUsed: Date
    /// How many times it was given to an app instead of the upstream's answer.
    public var hits: Int
    /// What it takes in the cache, in bytes (body and headers).
    public var size: Int
    /// The fields and the body as a page or an export may show them, when the answer echoed its app's own credentials
    /// (those hidden); nil when they are shown as stored (a list reads no bodies, a lookup neither).
    public var shownHeaders: HTTPHeaderFields?
    public var shownBody: Data?
    /// When a request that changes its URL (a POST, PUT, DELETE…) succeeded after it was stored (RFC 9111 §4.4), nil if
    /// none has: it then may be out of date, so it is given only once the upstream confirms it, or cannot answer at all.
    public var changedAt: Date?

    /// The request fields its answer's `Vary` named, with the values the request that got it carried: what tells two
    /// answers to one URL apart (a CORS preflight's Origin and what it asked for, an answer per Accept-Language). Read
    /// where the entry is listed or shown; empty for one that varies on nothing (or not read).
    public var varied: [VariedField] = []

    /// A request field an answer varies on (its name lowercased, as the cache keys it) and the value the request that
    /// got it carried: nil when it carried none, `sha256:…` for a secret one (`Vary: Cookie`), whose value is never kept.
    public struct VariedField: Sendable, Hashable, Codable {
        public var name: String
        public var value: String?

        /// A field `name` of `value` (nil: the request carried none).
        public init(name: String, value: String?) {
            self.name = name
            self.value = value
        }

        private enum CodingKeys: String, CodingKey { case name, value }

        /// Writes `value` null when the request carried none (a synthesized encoding would leave the key out).
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(value, forKey: .value)
        }
    }

    /// Whether the answer set a cookie (whose value is not kept): it is given again only when the upstream fails.
    public var setsCookie: Bool { headers["Set-Cookie"] != nil }

    /// An entry as the cache holds it.
    public init(id: Int64, method: String, url: String, host: String, status: Int, headers: HTTPHeaderFields, body: Data,
                requestTime: Date, responseTime: Date, lastUsed: Date, hits: Int, size: Int) {
        self.id = id
        self.method = method
        self.url = url
        self.host = host
        self.status = status
        self.headers = headers
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.lastUsed = lastUsed
        self.hits = hits
        self.size = size
    }
}

extension Array where Element == ProxyCacheEntry {
    /// The ids of the entries that share their method and URL with another of the list: a list shows what they vary on
    /// (`varied`), the one thing that tells them apart.
    public var idsToTellApart: Set<Int64> {
        let counts = Dictionary(map { ($0.method + " " + $0.url, 1) }, uniquingKeysWith: +)
        return Set(filter { counts[$0.method + " " + $0.url, default: 0] > 1 }.map(\.id))
    }
}

/// What the cache holds for one host.
public struct ProxyCacheHostStats: Sendable, Hashable, Codable {
    /// The host, with its port when the URLs name one (`localhost:3000`; a scheme's own port left out, as in a URL).
    public var host: String
    /// What `--host` (and the console's Clear) takes to list or clear exactly these answers: the host with its port
    /// always (`api.example.com:443`), since a name alone means every port of it.
    public var key: String
    /// How many answers are stored for it.
    public var entries: Int
    /// Their size in bytes.
    public var bytes: Int
    /// How many times its answers were given instead of the upstream's.
    public var hits: Int
    /// When its oldest answer came.
    public var oldest: Date
    /// When its newest answer came.
    public var newest: Date

    /// The figures of one host.
    public init(host: String, key: String, entries: Int, bytes: Int, hits: Int, oldest: Date, newest: Date) {
        self.host = host
        self.key = key
        self.entries = entries
        self.bytes = bytes
        self.hits = hits
        self.oldest = oldest
        self.newest = newest
    }
}
