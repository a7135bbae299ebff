public import Foundation
import RawStructuredFieldValues

// Kiosk's cache decisions in the terms of RFC 9211 (the Cache-Status response header field): the one
// home of that mapping. The web app sends `headerValue` on every catalog answer, and the request log,
// `kiosk log`, the console's badge and HAR files show the same value, so a decision reads the same
// wherever it is seen. docs/API.md has the table of every decision and why it is written so.
//
// - `hit` (the request was not forwarded, the answer came from the store) and `fwd` (it went forward,
//   and why) are exclusive, and one of them is always written, first.
// - `fwd` is `miss` (nothing stored could answer), `stale` (a stored copy was selected, but stale) or
//   `request` (a fresh stored copy was selected, but the request asked for a refresh), the most specific
//   reason Kiosk knows (RFC 9211 §2.2). The catalogs' store keys by URL alone and never varies, so it never
//   says `uri-miss` or `vary-miss`; the proxy's cache (`kiosk proxy`) keys by URL, credentials and `Vary`, and
//   says both, `bypass` with its cache off and `method` for what it never stores.
// - `fwd-status` is the status that came back from below Kiosk's cache, when one did (none when the
//   upstream could not be reached).
// - `ttl` is the remaining freshness lifetime in whole seconds (rounded down, negative when stale), when
//   Kiosk keeps one for what it answered (catalog pages and pictures; not items or favorites).
// - `stored`: the answer was written to the store (a 304 renews the stored copy, so it counts).
// - `collapsed`: the request was joined onto an identical one already on the wire (coalescing).
// - `detail` is always Kiosk's own word for the decision (`CacheDecision`'s raw value), last.

/// Kiosk's cache decision for one answer, as RFC 9211 describes a cache's handling of a request.
public struct CacheStatus: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The name of Kiosk's member of the Cache-Status list, written as a Token.
    public static let cacheName = "Kiosk"
    /// The header field's name.
    public static let headerName = "Cache-Status"

    /// Why a request went forward towards the origin (RFC 9211 §2.2).
    public enum Forward: String, Sendable, Hashable, CaseIterable {
        /// The cache was configured not to handle the request.
        case bypass
        /// The request method's semantics require it to go forward.
        case method
        /// Nothing was stored for the URI.
        case uriMiss = "uri-miss"
        /// Something was stored for the URI, but Vary did not allow its use.
        case varyMiss = "vary-miss"
        /// Nothing stored could satisfy the request (Kiosk's word for a missing page or item).
        case miss
        /// A fresh stored response was selected, but the request did not allow its use (a forced refresh).
        case request
        /// A stored response was selected, but it was stale.
        case stale
        /// A partial stored response was selected that does not hold every requested range.
        case partial
    }

    /// Kiosk's own word for the decision, sent as `detail`.
    public var decision: CacheDecision
    /// Why the request went forward; nil when it did not (`hit`).
    public var forward: Forward?
    /// The status that came back from below the cache (`fwd-status`), when one did.
    public var forwardStatus: Int?
    /// The remaining freshness lifetime in whole seconds, negative when stale (`ttl`), when known.
    public var ttl: Int?
    /// Whether the answer was written to the store (`stored`).
    public var isStored: Bool
    /// Whether the request was joined onto an identical one already in flight (`collapsed`).
    public var isCollapsed: Bool

    /// A decision. `ttl` is the freshness left in seconds (negative when stale), written rounded down;
    /// `forward` nil means the answer came from the store without asking (`hit`).
    public init(_ decision: CacheDecision, forward: Forward? = nil, forwardStatus: Int? = nil, ttl: TimeInterval? = nil,
                stored: Bool = false, collapsed: Bool = false) {
        self.decision = decision
        self.forward = forward
        self.forwardStatus = forwardStatus
        // NaN and infinities have no whole number of seconds; a finite value is clamped to the 15 digits a
        // Structured Field Integer holds, so what is written reads back equal.
        self.ttl = ttl.flatMap { $0.isFinite ? Int(max(-Self.integerLimit, min(Self.integerLimit, $0.rounded(.down)))) : nil }
        self.isStored = stored
        self.isCollapsed = collapsed
    }

    /// What a request log record tells by itself, for records made without a decision of their own (an
    /// exchange on the wire, or a record from before Kiosk recorded one): an answer from the store is a
    /// `hit` (an offline one that failed to reach the upstream went forward as `stale`); an exchange went
    /// forward as `stale` when it was conditional (Kiosk held a copy), else as `miss`. It says nothing of
    /// storing or freshness, which are decided after the exchange.
    public init(recordedAs decision: CacheDecision, status: Int?, isConditional: Bool, hasError: Bool) {
        switch decision {
        case .fresh, .staleWhileRevalidate, .maxStale:
            self.init(decision)
        case .offline:
            self.init(decision, forward: hasError ? .stale : nil)
        // Never forwarded: `fwd` says why it would have had to go, as an offline 504's does.
        case .onlyIfCached:
            self.init(decision, forward: isConditional ? .stale : .miss)
        case .staleOnError, .staleIfError, .fallback, .revalidated:
            self.init(decision, forward: .stale, forwardStatus: status)
        case .network, .mocked, .edited:
            self.init(decision, forward: isConditional ? .stale : .miss, forwardStatus: status)
        }
    }

    /// Whether the answer came from the store without asking upstream (`hit`).
    public var isHit: Bool { forward == nil }

    /// The Cache-Status field value, serialized as RFC 8941 says: `Kiosk;hit;ttl=42;detail=fresh`. Written by hand,
    /// since it is written for every exchange (the proxy's answer and the log's record): the cache's name and every
    /// `fwd` and `detail` word are Tokens (a test checks each), integers are clamped to the 15 digits RFC 8941 allows
    /// when written, and the flags are bare (Boolean true), so this is its canonical form; parsing it back
    /// (`init?(headerValue:)`) goes through swift-http-structured-headers.
    public var headerValue: String {
        var value = Self.cacheName
        if let forward {
            value += ";fwd=" + forward.rawValue
        } else {
            value += ";hit"
        }
        if let forwardStatus { value += ";fwd-status=" + String(max(-Self.integerDigits, min(Self.integerDigits, forwardStatus))) }
        if let ttl { value += ";ttl=" + String(max(-Self.integerDigits, min(Self.integerDigits, ttl))) }
        if isStored { value += ";stored" }
        if isCollapsed { value += ";collapsed" }
        return value + ";detail=" + decision.rawValue
    }

    /// The largest magnitude of a Structured Field Integer (RFC 8941 §3.3.1: 15 decimal digits).
    private static let integerDigits = 999_999_999_999_999
    private static let integerLimit = Double(integerDigits)

    /// The first parameter as written: `hit` or `fwd=<why>` (the request log indexes it).
    public var outcome: String { forward.map { "fwd=\($0.rawValue)" } ?? "hit" }

    /// A short label for badges and tables, in the header's own words: the outcome, then the decision
    /// (`hit fresh`, `fwd=stale revalidated`).
    public var label: String { outcome + " " + decision.rawValue }

    public var description: String { headerValue }

    /// Encoded as its header value, a single string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(headerValue)
    }

    /// Decoded from a header value Kiosk wrote.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let status = CacheStatus(headerValue: try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a Cache-Status value Kiosk wrote")
        }
        self = status
    }

    /// Kiosk's member read back from a Cache-Status field value (the request log stores `headerValue`);
    /// nil when the value is not a Structured Field List, or has no member named `Kiosk` whose `detail` is one
    /// of Kiosk's decisions.
    /// Whether `value` (an upstream's Cache-Status, its lines joined) parses as an RFC 8941 List: one that does not
    /// makes the whole field invalid to a client, Kiosk's member appended to it included.
    public static func isValidList(_ value: String) -> Bool {
        var parser = StructuredFieldValueParser(Array(value.utf8))
        return (try? parser.parseListFieldValue()) != nil
    }

    public init?(headerValue: String) {
        var parser = StructuredFieldValueParser(Array(headerValue.utf8))
        guard let list = try? parser.parseListFieldValue(),
              let member = list.compactMap({ entry -> Item? in
                  if case .item(let item) = entry { return item }
                  return nil
              }).last(where: { Self.text($0.rfc9651BareItem) == Self.cacheName }),
              let word = member.rfc9651Parameters["detail"].flatMap(Self.text), let decision = CacheDecision(rawValue: word)
        else { return nil }
        func integer(_ key: String) -> Int? {
            if case .integer(let value)? = member.rfc9651Parameters[key] { return Int(value) }
            return nil
        }
        func flag(_ key: String) -> Bool {
            if case .bool(true)? = member.rfc9651Parameters[key] { return true }
            return false
        }
        let forward = member.rfc9651Parameters["fwd"].flatMap(Self.text).flatMap(Forward.init(rawValue:))
        // `hit` and `fwd` are exclusive; a member with neither (or both) is not one Kiosk wrote.
        guard (forward == nil) == flag("hit") else { return nil }
        self.init(decision, forward: forward, forwardStatus: integer("fwd-status"), ttl: integer("ttl").map(TimeInterval.init),
                  stored: flag("stored"), collapsed: flag("collapsed"))
    }

    /// The text of a Token or a String.
    private static func text(_ item: RFC9651BareItem) -> String? {
        switch item {
        case .token(let text), .string(let text): text
        default: nil
        }
    }
}

extension CacheDecision {
    /// The decisions that showed the stored copy instead of a fresh answer: the `cache:stale` group of
    /// the filter language.
    public static let servedStale: [CacheDecision] = [.staleWhileRevalidate, .staleOnError, .staleIfError, .maxStale, .offline, .fallback]

    /// How an answer that came from below Kiosk's cache is decided: edited at a breakpoint, answered by
    /// a mock rule, a 304 that confirmed the stored copy, or a plain network answer.
    public init(forwardedAnswer response: HTTPResponse, conditional: Bool = true) {
        if response.isEdited {
            self = .edited
        } else if response.isMocked {
            self = .mocked
        } else {
            // A 304 to a request that named no validator revalidated nothing: the upstream's own doing.
            self = response.status == 304 && conditional ? .revalidated : .network
        }
    }
}

extension CacheStatus {
    /// Puts this value in `fields`' Cache-Status in place of Kiosk's member (an answer Kiosk changed is told as the log
    /// tells it, not as the cache decided on the answer it replaced); other caches' members stay, in order.
    public func replaceKiosksMember(in fields: inout HTTPHeaderFields) {
        let others = fields.values(for: Self.headerName).flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.hasPrefix(Self.cacheName + ";") && !$0.isEmpty }
        fields.removeAll(named: Self.headerName)
        fields.add(name: Self.headerName, value: (others + [headerValue]).joined(separator: ", "))
    }
}

extension CacheMatch {
    /// The decisions it stands for, when it is a matter of decisions alone (nil for `hit` and `fwd`).
    public var decisions: [CacheDecision]? {
        switch self {
        case .decision(let decision): [decision]
        case .stale: CacheDecision.servedStale
        case .hit, .forwarded: nil
        }
    }

    /// The outcomes (`CacheStatus.outcome`) it stands for, when it is a matter of hit or fwd (nil for decisions).
    public var outcomes: [String]? {
        switch self {
        case .hit: ["hit"]
        // `miss`, nothing stored could answer, is also what `uri-miss` and `vary-miss` say more precisely (the proxy's
        // cache says those): a filter for misses finds them all.
        case .forwarded(.miss): [CacheStatus.Forward.miss, .uriMiss, .varyMiss].map { "fwd=\($0.rawValue)" }
        case .forwarded(let reason): (reason.map { [$0] } ?? CacheStatus.Forward.allCases).map { "fwd=\($0.rawValue)" }
        case .decision, .stale: nil
        }
    }
}

/// A failed exchange with what a cache on its way decided (RFC 9211): the failure's answer (a proxy's own 502 or 504)
/// still says `Cache-Status`, and the log records it. Described as the failure it carries.
public struct CacheMarkedFailure: Error, Sendable, CustomStringConvertible {
    /// What failed.
    public let error: KioskError
    /// The cache's decision, with no `fwd-status` since no answer came back.
    public let cacheStatus: CacheStatus
    /// Why a stored answer that was there could not be given unconfirmed, nil when none was withheld: the upstream could
    /// not be reached to confirm it, so the proxy's answer is a 504 (RFC 9111 §5.2.2.2), not a 502.
    public var withheld: Withheld?

    /// Why a stored answer may not be given unless the upstream confirms it.
    public enum Withheld: Sendable, Hashable {
        /// Its own directives (must-revalidate, no-cache) forbid it.
        case unconfirmable
        /// A request that changed its URL succeeded at this time, after it was stored (RFC 9111 §4.4).
        case changed(Date)
        /// None is held for this request, but some for the URL with other values of the headers their `Vary` names
        /// (`varyBy`, lowercased), said to this machine's apps only: a client on another machine learns nothing of others'.
        case otherVariants(varyBy: [String])
        /// None is held for the URL (for these credentials): nothing could stand in for the failure.
        case noneStored
        /// Some are held for the URL, each for other credentials (Authorization, Cookie, an API key's header), said to this
        /// machine's apps only: one identity's answer is never given to another.
        case otherCredentials
    }

    /// `error` marked with `cacheStatus`.
    public init(_ error: KioskError, cacheStatus: CacheStatus) {
        self.error = error
        self.cacheStatus = cacheStatus
    }

    public var description: String { error.description }
}

extension Error {
    /// The Kiosk failure this error is, or carries under a cache's mark; nil for any other error.
    public var kioskError: KioskError? { self as? KioskError ?? (self as? CacheMarkedFailure)?.error }
}
