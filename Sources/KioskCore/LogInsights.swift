public import Foundation

/// What the request log says at a glance: the slowest endpoints, the bytes each source brought, and how
/// answers were decided — stale answers counted apart from fresh ones. Computed over the records kept.
public struct LogInsights: Sendable, Hashable, Codable {
    /// One endpoint's upstream exchanges (answers from the store take no time and are left out).
    public struct Endpoint: Sendable, Hashable, Codable {
        public var endpoint: String
        /// Exchanges that reached the upstream (or its mock) and got an answer.
        public var count: Int
        /// Median and 95th percentile of their durations, in seconds (nearest rank).
        public var p50: TimeInterval
        public var p95: TimeInterval
        /// The slowest one, in seconds.
        public var maximum: TimeInterval

        public init(endpoint: String, count: Int, p50: TimeInterval, p95: TimeInterval, maximum: TimeInterval) {
            self.endpoint = endpoint
            self.count = count
            self.p50 = p50
            self.p95 = p95
            self.maximum = maximum
        }
    }

    /// One source's traffic, or one host's of apps through `kiosk proxy` (both nil: other traffic — images of no
    /// catalog, probes, the hosts past the busiest ones).
    public struct Source: Sendable, Hashable, Codable {
        public var source: SourceID?
        /// The host an app reached through `kiosk proxy` (with its port when not the scheme's), for traffic of no catalog.
        public var host: String?
        /// Every record of it, store answers included.
        public var requests: Int
        /// The response bodies' sizes as received (before the capture limit), in bytes.
        public var responseBytes: Int64

        public init(source: SourceID?, requests: Int, responseBytes: Int64, host: String? = nil) {
            self.source = source
            self.host = host
            self.requests = requests
            self.responseBytes = responseBytes
        }
    }

    /// How answers were decided, grouped the way a reader asks: was it fresh, stale, or fetched?
    public struct Decisions: Sendable, Hashable, Codable {
        /// Answered from the store while fresh, or confirmed by the upstream (304).
        public var fresh: Int
        /// A stored copy shown past its freshness: while revalidating, after a failed revalidation, or offline.
        public var stale: Int
        /// A new answer from the upstream.
        public var network: Int
        /// Answered by a mock rule, or edited at a breakpoint.
        public var synthetic: Int
        /// Every decision with its count, by its own name.
        public var byDecision: [String: Int]

        public init(counts: [CacheDecision: Int]) {
            func sum(_ decisions: [CacheDecision]) -> Int { decisions.reduce(0) { $0 + (counts[$1] ?? 0) } }
            fresh = sum([.fresh, .revalidated])
            stale = sum(CacheDecision.servedStale)
            network = sum([.network])
            synthetic = sum([.mocked, .edited])
            byDecision = Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, $0.value) })
        }
    }

    /// Every record looked at.
    public var requests: Int
    /// The slowest endpoints first (by p95, then p50).
    public var endpoints: [Endpoint]
    /// The sources with the most bytes first.
    public var sources: [Source]
    public var decisions: Decisions

    public init(requests: Int, endpoints: [Endpoint], sources: [Source], decisions: Decisions) {
        self.requests = requests
        self.endpoints = endpoints
        self.sources = sources
        self.decisions = decisions
    }

    /// The value at `fraction` (0...1) of `sorted` by nearest rank; 0 for none.
    public static func percentile(_ sorted: [TimeInterval], _ fraction: Double) -> TimeInterval {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }
}

/// A name exchanges were logged under that no catalog has — an app's host through `kiosk proxy` — with how many
/// exchanges the log holds of it and when the latest began.
public struct SeenEndpoint: Sendable, Hashable, Codable {
    /// The host, with the port when not the scheme's own (`localhost:3000`).
    public var endpoint: String
    public var exchanges: Int
    public var lastSeen: Date
    /// Its URLs without their queries (`http://localhost:3000/api/users`), most recently seen first, at most a
    /// page's worth: where the console offers a path's own breakpoints.
    public var paths: [SeenPath]
    /// How many more paths the log holds of it than `paths` lists.
    public var morePaths: Int

    public init(endpoint: String, exchanges: Int, lastSeen: Date, paths: [SeenPath] = [], morePaths: Int = 0) {
        self.endpoint = endpoint
        self.exchanges = exchanges
        self.lastSeen = lastSeen
        self.paths = paths
        self.morePaths = morePaths
    }
}

/// One path of an app's host as the log holds it: its URL without the query, how many exchanges, the latest start.
public struct SeenPath: Sendable, Hashable, Codable {
    /// Scheme, host, port when not the scheme's own, and path: what a breakpoint on the path is keyed by.
    public var url: String
    public var exchanges: Int
    public var lastSeen: Date

    public init(url: String, exchanges: Int, lastSeen: Date) {
        self.url = url
        self.exchanges = exchanges
        self.lastSeen = lastSeen
    }
}
