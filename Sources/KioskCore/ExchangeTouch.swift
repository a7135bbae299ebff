import Synchronization

/// Something of the network debugger's that acted on an exchange (or matched it and could not): a mock
/// rule that answered it, a rewrite rule that changed its answer, a breakpoint where it was edited. The
/// request log keeps them with the record, so the console can say why an answer is not the upstream's.
public struct ExchangeTouch: Sendable, Hashable, Codable {
    /// What touched it.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case mock
        case rule
        case breakpoint
        /// The exchange is a logged request sent again (as it was, or edited in the composer): `id` is
        /// the original's record id.
        case resend
        /// The exchange is a CONNECT tunnel the proxy passed through unread: `detail` says the bytes each way.
        case tunnel
        /// The answer's body went on to the app as it arrived (an event stream, a body past the proxy's buffer limit):
        /// `detail` says how much and for how long; the log keeps its first bytes.
        case stream
        /// The upstream's certificate was not checked (`kiosk proxy --insecure-upstream`).
        case insecure
        /// The upstream ended an answer of no declared length by closing its TLS connection without TLS's own
        /// goodbye (close_notify): the body was taken as whole, as browsers take it, though a cut could not be told.
        case uncleanEnd = "unclean-end"
    }

    public var kind: Kind
    /// The mock's or rule's id, the paused exchange's, or the original request's record id.
    public var id: Int
    /// The rule's name, the mock's method and URL, or the endpoint paused.
    public var name: String
    /// Whether it acted; false when it matched but did not apply (its patch failed, say).
    public var applied: Bool
    /// What it did ("status 503; removed ETag"), or why it did not apply.
    public var detail: String

    public init(kind: Kind, id: Int, name: String, applied: Bool = true, detail: String) {
        self.kind = kind
        self.id = id
        self.name = name
        self.applied = applied
        self.detail = detail
    }

    /// The same touch with its texts passed through `transform` (to scrub secrets before it is stored).
    public func mapText(_ transform: (String) -> String) -> ExchangeTouch {
        ExchangeTouch(kind: kind, id: id, name: transform(name), applied: applied, detail: transform(detail))
    }
}

/// The touches of one exchange, gathered on its way down the transport stack: the capture makes one per
/// exchange (each retry is its own), starting with what acted on the request above it (`HTTPRequest.touches`),
/// and hands it down with the request (`HTTPRequest.recorder`); the layers below note what they did on the
/// request they were given, and the record is made from it, even when a layer fails the exchange (a rule
/// answering with a timeout).
public final class ExchangeTouches: Sendable {
    private let touches: Mutex<[ExchangeTouch]>

    /// A collector holding `initial` (what layers above the capture did).
    public init(_ initial: [ExchangeTouch] = []) { touches = Mutex(initial) }

    /// Everything noted so far, in order.
    public var all: [ExchangeTouch] { touches.withLock { $0 } }

    /// Adds `touch`.
    public func add(_ touch: ExchangeTouch) { touches.withLock { $0.append(touch) } }
}
