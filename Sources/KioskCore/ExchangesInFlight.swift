public import Foundation
import Synchronization

// The exchanges a capturing transport has begun and not yet ended: what a debugger lists as in flight (a slow answer,
// an open event stream, a long download, a tunnel), as Charles, Proxyman and DevTools list a request still pending. The
// capture path pays a lock and a dictionary's insert and removal an exchange; the redaction of what is shown is made only
// when a console asks. Each exchange carries the request log's recording generation it began under: its record is
// logged only if recording was neither paused nor resumed since, and until then it is listed only if it will be.

/// The exchanges begun and not yet ended, shared by every capturing transport of a process.
public final class ExchangesInFlight: Sendable {
    /// One exchange in flight, as a debugger shows it: its URL redacted.
    public struct Exchange: Sendable, Hashable {
        /// Its number in this process, in the order the exchanges began.
        public let id: UInt64
        /// When it began.
        public let startedAt: Date
        /// How long it has been in flight.
        public let elapsed: Duration
        /// Its method.
        public let method: String
        /// Its URL, secrets hidden as the log hides them.
        public let url: String
        /// The catalog it asked, nil for an app's request or a picture.
        public let source: SourceID?
        /// The endpoint it asked.
        public let endpoint: String
        /// The answer's status, once its head came (a streamed answer still coming); nil while it is awaited.
        public let status: Int?
        /// How many bytes of the answer's body passed so far (a streamed answer); nil while its head is awaited.
        public let received: Int?
        /// Whether the app closed its connection meanwhile (it may have given up): the exchange goes on until it ends.
        public let appClosed: Bool
        /// The answer's Content-Type, once its head came.
        public let contentType: String?

        /// An exchange in flight as a debugger shows it (`url` redacted already): one listed here, or one held elsewhere (a
        /// breakpoint's), read through the same filter.
        public init(id: UInt64, startedAt: Date, elapsed: Duration, method: String, url: String, source: SourceID?, endpoint: String,
                    status: Int?, received: Int?, appClosed: Bool, contentType: String?) {
            self.id = id
            self.startedAt = startedAt
            self.elapsed = elapsed
            self.method = method
            self.url = url
            self.source = source
            self.endpoint = endpoint
            self.status = status
            self.received = received
            self.appClosed = appClosed
            self.contentType = contentType
        }
    }

    /// An exchange begun: its number (`answered`, `end`), and the recording generation it began under, which its record
    /// carries (`DeferredRecord.generation`; nil without a log to tell it).
    public struct Ticket: Sendable {
        public let id: UInt64
        public let generation: UInt64?
    }

    /// What one exchange in flight holds until shown.
    private struct Entry {
        let request: HTTPRequest
        let startedAt: Date
        let start: ContinuousClock.Instant
        let generation: UInt64?
        /// Where the wire notes how far an answer held whole has come (the capture's touches of the exchange).
        let progress: ExchangeTouches?
        var status: Int?
        var contentType: String?
        var received: (@Sendable () -> Int)?
        /// The app's side of a proxied exchange, to tell whether it closed (held weakly: the exchange holds it).
        weak var appSide: AppSide?
        /// Its URL as shown, once a console asked: redacted once, not at every look.
        var shown: String?
    }

    private struct State {
        var next: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
    }

    private let state = Mutex(State())
    private let redactor: Redactor
    /// The most exchanges held: past it the oldest is let go (an exchange whose end was never seen must not hold memory).
    private let capacity: Int
    /// The request log's recording generation now (`RequestLog.recordingGeneration`), if there is a log.
    private let generation: (@Sendable () -> UInt64)?

    /// An empty set, showing URLs through `redactor` (the capture's), holding at most `capacity` exchanges, each begun
    /// under the recording `generation` of the log its records go to.
    public init(redactor: Redactor, capacity: Int = 10_000, generation: (@Sendable () -> UInt64)? = nil) {
        self.redactor = redactor
        self.capacity = max(1, capacity)
        self.generation = generation
    }

    /// The request log's recording generation now (nil without a log): what an exchange beginning now begins under.
    public var currentGeneration: UInt64? { generation?() }

    /// Notes that `request` began at `startedAt` (`start` on the continuous clock), under the recording generation read
    /// then (`currentGeneration`) unless `begunUnder` says it (a tunnel listed once open, its generation read as it was
    /// asked for), the wire noting on `progress` how far its answer came until the capture says (`answered`); the
    /// ticket given ends it.
    public func begin(_ request: HTTPRequest, startedAt: Date, start: ContinuousClock.Instant, progress: ExchangeTouches? = nil,
                      begunUnder: UInt64? = nil) -> Ticket {
        // What showing it needs (its method, URL and the credentials its headers carry), not its body nor its app's
        // connection: an entry whose end is never seen holds little.
        var request = request
        let appSide = request.appSide
        request.body = nil
        request.bodyStream = nil
        request.appSide = nil
        request.recordHold = nil
        let generation = begunUnder ?? generation?()
        let id = state.withLock { state in
            state.next += 1
            state.entries[state.next] = Entry(request: request, startedAt: startedAt, start: start, generation: generation, progress: progress,
                                              appSide: appSide)
            if state.entries.count > capacity, let oldest = state.entries.keys.min() { state.entries[oldest] = nil }
            return state.next
        }
        return Ticket(id: id, generation: generation)
    }

    /// Notes that exchange `id`'s answer began with `status` (of `contentType`), its body still coming; `received` says how
    /// much of it passed.
    public func answered(_ id: UInt64, status: Int, contentType: String? = nil, received: @escaping @Sendable () -> Int) {
        state.withLock { state in
            state.entries[id]?.status = status
            state.entries[id]?.contentType = contentType
            state.entries[id]?.received = received
        }
    }

    /// Notes that exchange `id` ended (answered whole, failed, or its streamed body ended).
    public func end(_ id: UInt64) {
        state.withLock { _ = $0.entries.removeValue(forKey: id) }
    }

    /// How many exchanges are in flight.
    public var count: Int { state.withLock { $0.entries.count } }

    /// The exchanges in flight for at least `minimumAge` at `now`, the latest begun first, their URLs redacted; not those
    /// begun before recording was last paused or resumed (they will not be logged).
    public func snapshot(olderThan minimumAge: Duration = .zero, now: ContinuousClock.Instant = .now) -> [Exchange] {
        let current = generation?()
        let entries = state.withLock { state in
            state.entries.filter { now - $0.value.start >= minimumAge && $0.value.generation == current }
        }
        // Redacted outside the lock, and kept: a console looks every second, and thousands may be in flight.
        var shown: [UInt64: String] = [:]
        for (id, entry) in entries where entry.shown == nil {
            shown[id] = redactor.hidingCredentials(of: entry.request).redact(entry.request.url)
        }
        if !shown.isEmpty {
            state.withLock { state in
                for (id, url) in shown { state.entries[id]?.shown = url }
            }
        }
        return entries.sorted { $0.key > $1.key }.map { id, entry in
            let request = entry.request
            // Until the capture has the answer (streamed, it says so itself), what the wire read of it: a large answer
            // held whole shows its head and its bytes as they come rather than nothing until its end.
            let wire = entry.status == nil ? entry.progress?.answerProgress : nil
            let status = entry.status ?? wire?.status
            return Exchange(id: id, startedAt: entry.startedAt, elapsed: max(.zero, now - entry.start), method: request.method,
                            url: entry.shown ?? shown[id] ?? "", source: request.source,
                            endpoint: request.endpoint, status: status,
                            received: entry.received?() ?? (wire?.status == nil ? nil : wire?.received),
                            appClosed: entry.appSide?.closedAt != nil, contentType: entry.contentType ?? wire?.contentType)
        }
    }
}

extension RequestFilter {
    /// Whether the log's filter would select `exchange` once it ends, as far as can be told before its answer: its
    /// source, method, endpoint, host (as the log's query reads a URL's authority) and time so far (`slow:`) are known,
    /// and the words of a search are looked for in its URL; what only an answer tells (a status, the cache's word, an
    /// error, a body) selects none of the exchanges still waiting for theirs, and its negation all of them.
    public func mayMatch(_ exchange: ExchangesInFlight.Exchange) -> Bool {
        func check<Value>(_ criterion: FilterCriterion<Value>, _ holds: (Value) -> Bool) -> Bool {
            criterion.isEmpty || criterion.values.contains(where: holds) != criterion.isNegated
        }
        let known = check(sources) { $0 == exchange.source }
            && check(methods) { $0.caseInsensitiveCompare(exchange.method) == .orderedSame }
            && check(endpoints) { $0 == exchange.endpoint }
            && check(hosts) { Self.authority(of: exchange.url, matches: $0) }
        // An answer's criteria: none of them is met yet (nor a `has:` of either kind) — but a streamed answer's status,
        // which came with its head.
        let status = exchange.status.map { status in
            check(statuses) { match in
                switch match {
                case .code(let code): code == status
                case .statusClass(let statusClass): statusClass == StatusClass(status: status)
                }
            }
        } ?? (statuses.isEmpty || statuses.isNegated)
        let unanswered = status && (cache.isEmpty || cache.isNegated) && hasError != true && hasResponseBody != true
        let slowEnough = duration.map { bound in
            let seconds = exchange.elapsed.seconds
            // An upper bound (`-slow:`) may still be met: the exchange is not over. A lower one is met once passed.
            return bound.isUpper || (bound.isInclusive ? seconds >= bound.seconds : seconds > bound.seconds)
        } ?? true
        let words = (text ?? "").split(whereSeparator: \.isWhitespace)
        let found = words.allSatisfy { exchange.url.range(of: $0, options: [.caseInsensitive, .diacriticInsensitive]) != nil }
        return known && unanswered && slowEnough && found
    }

    /// Whether `url`'s authority is `host` (`name` on any port, `name:port` on that one, the scheme's own port left out
    /// of a URL as it is) or, for `*.name`, ends with `.name`: the log's query's reading of `host:`.
    static func authority(of url: String, matches host: String) -> Bool {
        guard let schemeEnd = url.range(of: "://") else { return false }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        let rest = url[schemeEnd.upperBound...]
        var authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        // (A user name before an @ is not the host: `http://a.example.com:x@evil.test/` is evil.test's.)
        if let at = authority.firstIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let actual = authority.lowercased()
        let hasPort = { (text: String) in text.lastIndex(of: ":").map { !text[$0...].contains("]") } ?? false }
        if host.hasPrefix("*.") {
            let name = String(host.dropFirst(2))
            if hasPort(name) { return actual.hasSuffix("." + name) }
            let bare = hasPort(actual) ? String(actual[..<actual.lastIndex(of: ":")!]) : actual
            return bare.hasSuffix("." + name)
        }
        guard ["http", "https", "ws", "wss"].contains(scheme) else { return false }
        guard hasPort(host), let colon = host.lastIndex(of: ":") else {
            return actual == host || actual.hasPrefix(host + ":")
        }
        let defaultPort = scheme == "https" || scheme == "wss" ? "443" : "80"
        return actual == host || (host[host.index(after: colon)...] == defaultPort && actual == host[..<colon])
    }
}
