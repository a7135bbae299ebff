public import Foundation

/// How Kiosk answered a request for data: the per-request cache decision the debugger shows.
public enum CacheDecision: String, Sendable, Hashable, Codable, CaseIterable {
    /// Answered from the store, still fresh: no upstream request.
    case fresh
    /// The upstream answered 304: the stored copy was confirmed.
    case revalidated
    /// The stored copy was shown while a revalidation ran.
    case staleWhileRevalidate = "stale-while-revalidate"
    /// The stored copy was shown because the revalidation failed (an HTTP or decoding error).
    case staleOnError = "stale-on-error"
    /// `kiosk proxy --cache http`: a stale stored answer stood in for a failed upstream (a 5xx, a timeout, a broken
    /// connection) within its `stale-if-error` (RFC 5861 §4).
    case staleIfError = "stale-if-error"
    /// `kiosk proxy --cache http`: a stale stored answer given without asking upstream because the request's own
    /// `max-stale` accepts it that stale (RFC 9111 §5.2.1.2).
    case maxStale = "max-stale"
    /// The stored copy was shown because the upstream could not be reached (or `kiosk proxy --offline` asks none).
    case offline
    /// `kiosk proxy --cache fallback`: the stored answer stood in, however old, because the upstream failed (could not
    /// be reached, timed out, broke the connection or answered 5xx).
    case fallback
    /// `kiosk proxy`: the request asked for a stored answer only (`Cache-Control: only-if-cached`, RFC 9111 §5.2.1.7)
    /// and none that fits is stored: a 504, nothing forwarded.
    case onlyIfCached = "only-if-cached"
    /// A new response from the upstream.
    case network
    /// Answered by a mock rule, without the upstream.
    case mocked
    /// The response was edited at a breakpoint before the app saw it (never stored).
    case edited
}

/// A captured request or response body: at most the capture limit, with the original size kept so a
/// truncation is visible.
public struct CapturedBody: Sendable, Hashable, Codable {
    /// The bytes kept (already redacted).
    public var data: Data
    /// The size of the whole body as sent or received.
    public var originalSize: Int

    /// Whether bytes were dropped to respect the capture limit (or all of them withheld: `isWithheld`).
    public var isTruncated: Bool { originalSize > data.count }

    /// Whether nothing was kept of a body that had bytes: one in a content coding that does not decode, which could not be
    /// looked through for secrets (`Redactor.redactBody`), or any body under a capture limit of 0.
    public var isWithheld: Bool { data.isEmpty && originalSize > 0 }

    public init(data: Data, originalSize: Int) {
        self.data = data
        self.originalSize = originalSize
    }

    /// The first `limit` bytes of `data`.
    public init(capturing data: Data, limit: Int) {
        self.data = data.count > limit ? data.prefix(max(0, limit)) : data
        originalSize = data.count
    }

    /// The first `limit` bytes of `redacted`, what redaction made of the first `keptCount` bytes of a body of `size`
    /// bytes. A body kept whole has the size of what is kept, so that one redacted (`<redacted>` in place of a longer or
    /// shorter value) is not said to be cut; one cut by the limit keeps its whole size, and so does one redaction
    /// withheld whole (`isWithheld`).
    public init(redacted: Data, ofFirst keptCount: Int, size: Int, limit: Int) {
        let isCut = redacted.count > limit || size > keptCount || (redacted.isEmpty && keptCount > 0)
        data = redacted.count > limit ? redacted.prefix(max(0, limit)) : redacted
        // Redaction may have lengthened the kept part past the whole size: a cut body is still said to be one.
        originalSize = isCut ? max(size, data.count + 1) : data.count
    }
}

/// The phases of an exchange Kiosk can measure, in seconds; nil when a phase did not happen (a request
/// answered from the store has no network phases).
public struct RequestTimings: Sendable, Hashable, Codable {
    /// Waiting for a connection or a slot (and for a paused breakpoint).
    public var queued: TimeInterval?
    /// Opening the connection (DNS, TCP and TLS together), when a new one was opened for this exchange.
    public var connect: TimeInterval?
    /// The part of `connect` spent looking up the host's addresses (absent for an address, or when not measured).
    public var dns: TimeInterval?
    /// The part of `connect` spent on the TLS handshake (absent for plain HTTP, or when not measured).
    public var tls: TimeInterval?
    /// From sending the request to the first byte of the response.
    public var firstByte: TimeInterval?
    /// Receiving the body after the first byte.
    public var download: TimeInterval?
    /// The whole exchange as the app saw it.
    public var total: TimeInterval

    public init(queued: TimeInterval? = nil, connect: TimeInterval? = nil, dns: TimeInterval? = nil, tls: TimeInterval? = nil,
                firstByte: TimeInterval? = nil, download: TimeInterval? = nil, total: TimeInterval) {
        self.queued = queued
        self.connect = connect
        self.dns = dns
        self.tls = tls
        self.firstByte = firstByte
        self.download = download
        self.total = total
    }
}

/// A record to be made when the request log's writer stores it: the capture hands the log this, so that redacting and
/// copying an exchange's fields runs on the writer's thread, after the app has its answer, not on the request's path.
/// `make` must only read values fixed when it was made (the exchange as it ended), so it gives the same record whenever
/// it runs.
public struct DeferredRecord: Sendable {
    /// Roughly what the record will hold while it waits, in bytes: its bodies and URL, and a share for the rest.
    public let size: Int
    /// Makes the record (redacted, like every record).
    public let make: @Sendable () -> RequestRecord
    /// The request log's recording generation when the exchange began (`RequestLog.recordingGeneration`): the record is
    /// stored only if recording was neither paused nor resumed since. Nil: stored whenever recording is on.
    public var generation: UInt64?

    /// A record made later by `make`, holding about `bodyBytes` of bodies and a URL of `urlBytes`.
    public init(bodyBytes: Int, urlBytes: Int, make: @escaping @Sendable () -> RequestRecord) {
        size = bodyBytes + urlBytes + 1024
        self.make = make
    }

    /// A record of about `size` bytes made later by `make`.
    public init(size: Int, make: @escaping @Sendable () -> RequestRecord) {
        self.size = size
        self.make = make
    }

    /// A record made already.
    public init(_ record: RequestRecord) {
        self.init(bodyBytes: (record.requestBody?.data.count ?? 0) + (record.responseBody?.data.count ?? 0),
                  urlBytes: record.url.utf8.count) { record }
    }
}

/// One request Kiosk made (or answered from its store), as the network debugger records it. Every
/// field is redacted before a record is made: a record never holds a secret.
public struct RequestRecord: Sendable, Hashable, Codable, Identifiable {
    /// Assigned by the log when stored; 0 before.
    public var id: Int64
    /// When the request started.
    public var startedAt: Date
    /// The source it belongs to; nil for an image of unknown origin.
    public var source: SourceID?
    /// The endpoint name, such as `rickandmorty.characters` or `image`.
    public var endpoint: String
    /// GET, HEAD...
    public var method: String
    /// The URL, redacted.
    public var url: String
    /// Request headers, redacted, in order.
    public var requestHeaders: [HeaderField]
    /// The request body, when there was one.
    public var requestBody: CapturedBody?
    /// The HTTP status; nil when no response arrived.
    public var status: Int?
    /// Response headers, redacted, in order.
    public var responseHeaders: [HeaderField]
    /// The response body, capped.
    public var responseBody: CapturedBody?
    /// The response body's size as received, known also when the record was read without its bodies (a list);
    /// nil without a body.
    public var responseSize: Int?
    /// Why no usable response arrived (offline, timeout...), redacted.
    public var error: String?
    /// The measured phases.
    public var timings: RequestTimings
    /// How the answer was decided.
    public var decision: CacheDecision
    /// The decision in RFC 9211 terms, as its recorder knew it: with `ttl` and `fwd-status` for an answer
    /// from the store, as the exchange tells for one on the wire (`CacheStatus(recordedAs:...)`).
    public var cacheStatus: CacheStatus
    /// The mocks, rewrite rules and breakpoints that acted on the exchange (or matched and did not
    /// apply, with the reason), in the order they did; empty for an untouched exchange.
    public var touchedBy: [ExchangeTouch]
    /// The protocol the upstream answered in (`HTTP/1.1`, `HTTP/2.0`, as mitmproxy writes it); nil when no upstream answered on the wire (a mock,
    /// a stored answer, a failure) or the record is older than the field.
    public var httpVersion: String?

    /// Whether the exchange is a tunnel (a CONNECT passed on unread) or a protocol switch (a WebSocket): bytes passed on,
    /// no request that could be sent again.
    public var isTunnel: Bool { touchedBy.contains { $0.kind == .tunnel } }

    /// Whether a record without a status was answered by Kiosk from its store (fresh, or standing in for a failure)
    /// rather than failed: an error is a failure on the wire, or one made at a breakpoint or by a rule (an abort).
    public var isAnsweredFromStore: Bool {
        error == nil || ![CacheDecision.network, .revalidated, .edited].contains(decision)
    }

    /// One header as captured.
    public struct HeaderField: Sendable, Hashable, Codable {
        /// Every value of `name` in `fields` as one comma-joined list (`HTTPHeaderFields.combined`); nil when there is none.
        public static func combined(_ name: String, in fields: [HeaderField]) -> String? {
            let values = fields.filter { HTTPHeaderFields.sameName($0.name, name) }.map(\.value)
            return values.isEmpty ? nil : values.joined(separator: ", ")
        }

        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(id: Int64 = 0, startedAt: Date, source: SourceID?, endpoint: String, method: String, url: String,
                requestHeaders: [HeaderField] = [], requestBody: CapturedBody? = nil, status: Int? = nil,
                responseHeaders: [HeaderField] = [], responseBody: CapturedBody? = nil, error: String? = nil,
                timings: RequestTimings, decision: CacheDecision, cacheStatus: CacheStatus? = nil,
                touchedBy: [ExchangeTouch] = [], responseSize: Int? = nil) {
        self.id = id
        self.startedAt = startedAt
        self.source = source
        self.endpoint = endpoint
        self.method = method
        self.url = url
        self.requestHeaders = requestHeaders
        self.requestBody = requestBody
        self.status = status
        self.responseHeaders = responseHeaders
        self.responseBody = responseBody
        self.responseSize = responseSize ?? responseBody?.originalSize
        self.error = error
        self.timings = timings
        self.decision = decision
        self.cacheStatus = cacheStatus ?? CacheStatus(
            recordedAs: decision, status: status,
            isConditional: requestHeaders.contains {
                HTTPHeaderFields.sameName($0.name, "If-None-Match")
                    || HTTPHeaderFields.sameName($0.name, "If-Modified-Since")
            },
            hasError: error != nil)
        self.touchedBy = touchedBy
    }

    /// The status class: `.success` for 2xx … `.serverError` for 5xx; `.store` without a response because Kiosk answered
    /// from its store; `.error` without one because the exchange failed.
    public var statusClass: StatusClass { status == nil && isAnsweredFromStore ? .store : StatusClass(status: status) }
}

/// Which records a log query returns. Empty criteria match everything. The filter language
/// (RequestFilter+Language.swift) reads and writes every criterion but the cursors and the limit.
public struct RequestFilter: Sendable, Hashable {
    /// Full-text search over URLs and bodies (words, prefix-matched); nil for none.
    public var text: String?
    /// The sources (`source:`); a record without a source (an image) is never one of them.
    public var sources: FilterCriterion<SourceID>
    /// Status classes and exact codes (`status:`); `.error` is the class of requests that got no response.
    public var statuses: FilterCriterion<StatusMatch>
    /// Methods, compared without regard to case (`method:`).
    public var methods: FilterCriterion<String>
    /// Endpoint names such as `rickandmorty.characters` (`endpoint:`).
    public var endpoints: FilterCriterion<String>
    /// Hosts of the URL, lower-cased, with `:port` to name one port, else any (`host:`).
    public var hosts: FilterCriterion<String>
    /// Cache decisions and RFC 9211 outcomes (`cache:`).
    public var cache: FilterCriterion<CacheMatch>
    /// How long requests took (`slow:`).
    public var duration: DurationBound?
    /// Only records with (true) or without (false) an error (`has:error`).
    public var hasError: Bool?
    /// Only records with (true) or without (false) a non-empty response body (`has:body`).
    public var hasResponseBody: Bool?
    /// Only records with an id below this (for paging back through the log, newest first).
    public var beforeID: Int64?
    /// Only records with an id above this (for what was stored since a known record).
    public var afterID: Int64?
    /// At most this many records.
    public var limit: Int

    /// A filter of single values (each nil for any), as the older flags and form fields give them.
    public init(text: String? = nil, source: SourceID? = nil, statusClass: StatusClass? = nil, method: String? = nil,
                decision: CacheDecision? = nil, minimumDuration: TimeInterval? = nil, beforeID: Int64? = nil,
                afterID: Int64? = nil, limit: Int = 100) {
        self.text = text
        sources = FilterCriterion(source.map { [$0] } ?? [])
        statuses = FilterCriterion(statusClass.map { [.statusClass($0)] } ?? [])
        methods = FilterCriterion(method.map { [$0] } ?? [])
        endpoints = FilterCriterion()
        hosts = FilterCriterion()
        cache = FilterCriterion(decision.map { [.decision($0)] } ?? [])
        duration = minimumDuration.map { DurationBound(seconds: $0, isInclusive: true) }
        self.beforeID = beforeID
        self.afterID = afterID
        self.limit = limit
    }
}

/// The values one key of a filter accepts: a record matches when it has any of them or, negated, none.
/// No values matches every record.
public struct FilterCriterion<Value: Hashable & Sendable>: Sendable, Hashable {
    /// The values in the order given, without repeats.
    public private(set) var values: [Value]
    /// Whether a record must have none of the values.
    public var isNegated: Bool

    /// The criterion of `values` (repeats dropped).
    public init(_ values: [Value] = [], negated: Bool = false) {
        var seen = Set<Value>()
        self.values = values.filter { seen.insert($0).inserted }
        isNegated = negated
    }

    /// Whether it matches every record.
    public var isEmpty: Bool { values.isEmpty }
}

/// A status a filter asks for: a class (`5xx`, or `error` for no response) or an exact code.
public enum StatusMatch: Sendable, Hashable {
    case statusClass(StatusClass)
    case code(Int)
}

/// A cache outcome a filter asks for, in the words of the decisions and of RFC 9211 (CacheStatus.swift).
public enum CacheMatch: Sendable, Hashable {
    /// One decision.
    case decision(CacheDecision)
    /// The decisions that showed the stored copy (`CacheDecision.servedStale`).
    case stale
    /// Answered from the store without asking (the Cache-Status says `hit`).
    case hit
    /// Went forward: for this reason, or for any (nil).
    case forwarded(CacheStatus.Forward?)
}

/// A bound on how long a request took.
public struct DurationBound: Sendable, Hashable {
    /// The bound, in seconds.
    public var seconds: TimeInterval
    /// Whether a request that took exactly `seconds` is within it.
    public var isInclusive: Bool
    /// Whether the bound is an upper one (negated `slow:`): only requests faster than it.
    public var isUpper: Bool

    public init(seconds: TimeInterval, isInclusive: Bool, isUpper: Bool = false) {
        self.seconds = seconds
        self.isInclusive = isInclusive
        self.isUpper = isUpper
    }
}
