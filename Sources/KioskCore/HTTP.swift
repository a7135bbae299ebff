public import Foundation
import Synchronization

/// Ordered HTTP header fields with case-insensitive lookup.
public struct HTTPHeaderFields: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }
    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// Every value of `name` as one list, comma-joined (RFC 9110 §5.3: fields of one name are one list, however many
    /// lines carry it); nil when there is none. `Content-Encoding: gzip` twice is `gzip, gzip`, not one gzip.
    public func combined(_ name: String) -> String? {
        let values = fields.filter { Self.sameName($0.name, name) }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// The first value for `name`, compared case-insensitively.
    public subscript(name: String) -> String? {
        get { fields.first { Self.sameName($0.name, name) }?.value }
        set {
            fields.removeAll { Self.sameName($0.name, name) }
            if let newValue { fields.append((name: name, value: newValue)) }
        }
    }

    /// Appends a field, keeping any existing one of the same name.
    public mutating func add(name: String, value: String) { fields.append((name: name, value: value)) }

    /// Every value for `name`, compared case-insensitively, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Removes every field named `name`, compared case-insensitively.
    public mutating func removeAll(named name: String) {
        fields.removeAll { Self.sameName($0.name, name) }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// Whether two field names are the same, ASCII letters compared without case (RFC 9110 §5.1: names are tokens,
    /// so nothing else has a case). Every lookup runs it, on every proxied exchange: no Foundation, no allocation.
    public static func sameName(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                guard x.count == y.count else { return false }
                for index in 0..<x.count where x[index] != y[index] {
                    // Letters differ in bit 0x20 alone; anything else differing is a different name.
                    let folded = x[index] | 0x20
                    guard folded == y[index] | 0x20, folded >= 0x61, folded <= 0x7A else { return false }
                }
                return true
            }
        }
    }

    public static func == (lhs: HTTPHeaderFields, rhs: HTTPHeaderFields) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name.lowercased())
            hasher.combine(field.value)
        }
    }
}

/// A request to an upstream, described as data so it can be logged, coalesced and replayed.
public struct HTTPRequest: Sendable, Hashable {
    public var method: String
    public var url: URL
    public var headers: HTTPHeaderFields
    public var body: Data?
    /// The source it belongs to, for logs and connectivity; nil for images of unknown origin.
    public var source: SourceID?
    /// A stable endpoint name such as `rickandmorty.characters`, for logs and breakpoints.
    public var endpoint: String
    /// What the request is for, which decides where the outbound policy lets it go.
    public var purpose: Purpose
    /// Credentials made for this request alone (Marvel's `ts` and `hash`), scrubbed like the configured
    /// keys from everything derived from the exchange: an upstream may echo them back.
    public var secrets: Set<String>
    /// How long the answer (its head) may take when that is less than the transport's own timeout; nil: the
    /// transport's. A cache that holds an answer to stand in gives a slow upstream this long.
    public var timeout: Duration?
    /// Set by the outbound policy when the request may reach only public addresses (an app's on another machine, a
    /// picture from outside the sources): the connection checks the addresses it dials, not only the policy those it
    /// looked up, so a name resolving otherwise by then (DNS rebinding) is refused too.
    public var addressesMustBePublic = false
    /// What of the debugger's acted on the request before it reached the capture, travelling with it: the
    /// logged request it sends again (a resend), an edit made at a breakpoint. A request carrying any is the
    /// user's own act: it is never joined onto an identical request in flight (`CoalescingTransport`).
    public var touches: [ExchangeTouch] = []
    /// How long, in seconds, the app's request was held at a request breakpoint before it went on (sent as it was or
    /// edited): the record of its exchange starts when the app asked, the wait counted as queueing.
    public var heldAtBreakpoint: TimeInterval = 0
    /// Where the layers below the capture note what they do to this exchange (a mock that answered it, a rule
    /// that rewrote it); set by the capture, nil when nothing records the exchange. Not part of what is asked:
    /// two requests differing only in it are equal.
    public var recorder: ExchangeTouches? {
        get { riding.value }
        set { riding = Riding(value: newValue) }
    }
    private var riding = Riding<ExchangeTouches>(value: nil)
    /// The body as it arrives, when a proxied upload is larger than the buffer limit: it goes to the upstream as the
    /// app sends it (`body` is then nil; a `Content-Length` the app declared stays in `headers`). Read once, by the
    /// transport that sends the request. Not part of what is asked, as `recorder`.
    public var bodyStream: BodyStream? {
        get { uploading.value }
        set { uploading = Riding(value: newValue) }
    }
    private var uploading = Riding<BodyStream>(value: nil)
    /// For an app's request through the proxy: the app's side of its connection, which the proxy notes closing while the
    /// exchange waits for its answer, for the capture to say. Not part of what is asked, as `recorder`.
    public var appSide: AppSide? {
        get { appSideRiding.value }
        set { appSideRiding = Riding(value: newValue) }
    }
    private var appSideRiding = Riding<AppSide>(value: nil)
    /// The URL the app asked for, when a reverse listener sends the request on to another (its upstream's): rules, mocks
    /// and breakpoints written with the address the app uses match it as well as `url`. Not part of what is asked.
    public var appURL: URL? {
        get { appURLRiding.value }
        set { appURLRiding = Riding(value: newValue) }
    }
    private var appURLRiding = Riding<URL>(value: nil)

    /// What a rule or a breakpoint is matched against: `url`, then `appURL` when there is one, under each name of this
    /// machine's loopback as well (a listener answers to all: a mock written with 127.0.0.1 matches an app asking localhost).
    public var matchedURLs: [URL] {
        guard let appURL else { return [url] }
        return [url, appURL] + Self.loopbackSpellings(of: appURL)
    }

    /// `url` under the other names of this machine's loopback (`127.0.0.1`, `localhost`); none for another host.
    static func loopbackSpellings(of url: URL) -> [URL] {
        guard let host = url.host(percentEncoded: false)?.lowercased(),
              host == "localhost" || host == "::1" || IPAddress(literal: host)?.isLoopbackPeer == true,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return [] }
        return ["127.0.0.1", "localhost"].filter { $0 != host }.compactMap { name in
            components.host = name
            return components.url
        }
    }

    /// An app's host as the debugger names its endpoint: the host, lowercased (an IPv6 address bracketed), and the port
    /// unless it is the scheme's own.
    public static func endpoint(of url: URL) -> String {
        let host = url.host(percentEncoded: false)?.lowercased() ?? ""
        let shownHost = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        let standard = url.scheme?.lowercased() == "https" ? 443 : 80
        guard let port = url.port, port != standard else { return shownHost }
        return "\(shownHost):\(port)"
    }
    /// Where the capture leaves this exchange's record while a layer above may still hold the answer (a response
    /// breakpoint), for that layer to log with what it noted; nil: logged at once. Not part of what is asked.
    public var recordHold: RecordHold? {
        get { recordHoldRiding.value }
        set { recordHoldRiding = Riding(value: newValue) }
    }
    private var recordHoldRiding = Riding<RecordHold>(value: nil)

    /// What an outbound request is for.
    public enum Purpose: String, Sendable, Hashable {
        /// A catalog page, an item or a probe: only the origin of a configured source may be asked.
        case catalog
        /// A picture: a configured source's origin, or a host that resolves to public addresses only.
        case picture
        /// An app's request through `kiosk proxy`, from a client on this machine: any http(s) origin, the
        /// machine's own included (the app's local backend), sent as the app wrote it; a redirect is the
        /// app's to follow, so it is answered, never followed.
        case proxied
        /// An app's request through `kiosk proxy` from another machine (the proxy then asks for a password): like
        /// `proxied`, but only to hosts every address of which is public — never this machine's loopback, its private
        /// networks' or link-local addresses, so the proxy opens no door to what only this machine may reach.
        case proxiedForNetwork

        /// Whether this is an app's request through `kiosk proxy`, sent as the app wrote it.
        public var isProxied: Bool { self == .proxied || self == .proxiedForNetwork }
    }

    /// Whether it carries a body, held whole (not empty) or streamed.
    public var hasBody: Bool { body.map { !$0.isEmpty } ?? (bodyStream != nil) }

    /// Whether it is a browser's CORS preflight: an OPTIONS with `Origin` and `Access-Control-Request-Method`, sent by the
    /// browser on its own before a cross-origin request with a token or a JSON body.
    public var isCORSPreflight: Bool {
        method == "OPTIONS" && headers["Origin"] != nil && headers["Access-Control-Request-Method"] != nil
    }

    public init(method: String = "GET", url: URL, headers: HTTPHeaderFields = [:], body: Data? = nil,
                source: SourceID? = nil, endpoint: String, purpose: Purpose = .catalog, secrets: Set<String> = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.source = source
        self.endpoint = endpoint
        self.purpose = purpose
        self.secrets = secrets
    }

    /// Whether a layer above wants the answer's body whole to act on (a response breakpoint, a rule's JSON Patch): a body
    /// of declared length within the buffer limit is then held however slowly it comes, rather than streamed on after a
    /// second (`TransportConfiguration.slowBodyDelay`), which neither could act on.
    public var holdsWholeAnswer = false

    /// Whether repeating the request is harmless (GET/HEAD), so it may be retried and coalesced.
    public var isIdempotent: Bool { method == "GET" || method == "HEAD" }

    /// Notes `touch` on this exchange's record; nothing when nothing records it (capture off).
    public func note(_ touch: ExchangeTouch) { recorder?.add(touch) }
}

/// An exchange's records kept back while a layer above the capture may still hold its answer (a breakpoint), then
/// logged with what that layer adds (how long it held it); thread-safe. A record kept after the release is logged at
/// once: none is ever lost.
public final class RecordHold: Sendable {
    private struct Held {
        var records: [(record: DeferredRecord, log: @Sendable (DeferredRecord) -> Void)] = []
        var released: [ExchangeTouch]?
    }
    private let held = Mutex(Held())

    /// Holds nothing yet.
    public init() {}

    /// Keeps `record` until the release, then hands it to `log`; hands it at once after the release.
    public func keep(_ record: DeferredRecord, log: @escaping @Sendable (DeferredRecord) -> Void) {
        let touches = held.withLock { held -> [ExchangeTouch]? in
            if held.released == nil { held.records.append((record, log)) }
            return held.released
        }
        if let touches { log(Self.adding(touches, to: record)) }
    }

    /// Logs every record kept, each with `touches` after its own; later ones are logged at once, with them too.
    public func release(adding touches: [ExchangeTouch]) {
        let records = held.withLock { held -> [(record: DeferredRecord, log: @Sendable (DeferredRecord) -> Void)] in
            guard held.released == nil else { return [] }
            held.released = touches
            defer { held.records = [] }
            return held.records
        }
        for (record, log) in records { log(Self.adding(touches, to: record)) }
    }

    private static func adding(_ touches: [ExchangeTouch], to record: DeferredRecord) -> DeferredRecord {
        guard !touches.isEmpty else { return record }
        let make = record.make
        var added = DeferredRecord(size: record.size) {
            var made = make()
            made.touchedBy += touches
            return made
        }
        added.generation = record.generation
        return added
    }
}

/// When the app closed its side of a proxied exchange's connection, if it has (the first close counts); thread-safe.
public final class AppSide: Sendable {
    private let closed = Mutex<ContinuousClock.Instant?>(nil)
    private let resetAsked = Mutex(false)
    private let interimRelay = Mutex<(@Sendable (Int, [(name: String, value: String)]) -> Void)?>(nil)

    /// Not closed yet.
    public init() {}

    /// Notes that the app closed its side at `instant`; a later close moves nothing.
    public func close(at instant: ContinuousClock.Instant = .now) {
        closed.withLock { closed in if closed == nil { closed = instant } }
    }

    /// When the app closed its side; nil while it has not.
    public var closedAt: ContinuousClock.Instant? { closed.withLock { $0 } }

    /// Asks that the exchange's failure reach the app as a reset of its connection (a TCP RST), as a rule's
    /// `--fail reset` acts out a real one, rather than as the proxy's 502.
    public func askReset() { resetAsked.withLock { $0 = true } }

    /// Whether the app's connection is to be reset rather than answered.
    public var isResetAsked: Bool { resetAsked.withLock { $0 } }

    /// Where the upstream's interim answers (103 Early Hints, 102) go before its final one: the proxy passes them to the
    /// app, as RFC 9110 §15.2 asks of a proxy.
    public func onInterim(_ relay: @escaping @Sendable (_ status: Int, _ fields: [(name: String, value: String)]) -> Void) {
        interimRelay.withLock { $0 = relay }
    }

    /// Hands an interim answer of the upstream's to the app's side; nothing when none listens.
    public func interim(status: Int, fields: [(name: String, value: String)]) {
        interimRelay.withLock { $0 }?(status, fields)
    }
}

/// A value carried along that takes no part in equality or hashing.
private struct Riding<Value: Sendable>: Sendable, Hashable {
    let value: Value?
    static func == (lhs: Riding, rhs: Riding) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

/// A complete upstream response.
public struct HTTPResponse: Sendable, Hashable {
    public var status: Int
    public var headers: HTTPHeaderFields
    public var body: Data
    /// The URL that answered (after redirects).
    public var url: URL
    /// The phases the transport measured (time to first byte, download); nil when it measured none.
    public var timings: RequestTimings?
    /// The protocol the upstream answered in (`HTTP/1.1`, `HTTP/2.0`, as mitmproxy writes it), as HAR and the console name it; nil for an
    /// answer no upstream gave on the wire (a mock's, one from the store).
    public var httpVersion: String?
    /// Whether it was made or changed at a debugger breakpoint: shown, but never written to the store.
    public var isEdited = false
    /// Whether the configured keys and the request's own secrets were already scrubbed from its headers
    /// and body (by the layer above the wire), so a recorder need not scan them again.
    public var isScrubbed = false
    /// Whether this caller was given the answer of an identical request already in flight, rather than
    /// a request of its own (coalescing): RFC 9211's `collapsed`.
    public var isCollapsed = false
    /// The decision of the cache that answered or passed it on (`kiosk proxy`'s), which the log records as it is.
    public var cacheStatus: CacheStatus?
    /// The rest of the body, still arriving, when the answer is handed on before its end (a proxied event stream,
    /// or a body past the buffer limit): `body` is what came before it. Read once; not part of equality.
    public var stream: BodyStream? {
        get { streaming.value }
        set { streaming = Riding(value: newValue) }
    }
    private var streaming = Riding<BodyStream>(value: nil)
    /// Whether `stream` carries the body only because it was slow to end (not ended a second after its head),
    /// not because it is an event stream or past the buffer limit: whole, it is an answer like any held one (a cache
    /// may keep it once it ends).
    public var isSlowToEnd = false

    /// The header a mock rule marks its answers with (its value is the rule's id).
    public static let mockMarkerHeader = "X-Kiosk-Mock"

    /// Whether a mock rule answered instead of the upstream.
    public var isMocked: Bool { headers[Self.mockMarkerHeader] != nil }

    /// The answer's fields as its app gets them, to `method`: a body Kiosk made (a mock's, an edit's), held whole without
    /// its length, goes with one, which the log, a diff and a HAR export then show as the app saw it.
    public func framedHeaders(method: String) -> HTTPHeaderFields {
        guard isEdited || isMocked, stream == nil, method != "HEAD", !(100..<200).contains(status), status != 204, status != 304,
              headers["Content-Length"] == nil, headers["Transfer-Encoding"] == nil else { return headers }
        var framed = headers
        framed.add(name: "Content-Length", value: String(body.count))
        return framed
    }

    public init(status: Int, headers: HTTPHeaderFields = [:], body: Data = Data(), url: URL, timings: RequestTimings? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
        self.timings = timings
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }
}

/// Sends one HTTP request and returns the whole response; throws `KioskError` for transport failures.
/// Non-2xx statuses are responses, not errors: interpreting them is the caller's job.
public protocol HTTPTransport: Sendable {
    /// Sends `request`; throws `KioskError.offline`, `.timeout` or `.transport` when no response arrives.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
