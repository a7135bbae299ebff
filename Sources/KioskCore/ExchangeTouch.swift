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

/// The touches of the one exchange being sent, gathered on its way down the transport stack: the capture
/// starts one per exchange (each retry is its own), the layers below it note what they did, and the
/// record is made from it. A task-local, so it follows the exchange whatever calls it, and a layer that
/// fails the exchange (a rule answering with a timeout) still gets its word into the record.
public final class ExchangeTouches: Sendable {
    /// The exchange being sent in this task, when something records it.
    @TaskLocal public static var current: ExchangeTouches?

    private let touches: Mutex<[ExchangeTouch]>

    /// A collector holding `initial` (what layers above the capture did: a request edited at a breakpoint).
    public init(_ initial: [ExchangeTouch] = []) { touches = Mutex(initial) }

    /// Everything noted so far, in order.
    public var all: [ExchangeTouch] { touches.withLock { $0 } }

    /// Adds `touch`.
    public func add(_ touch: ExchangeTouch) { touches.withLock { $0.append(touch) } }

    /// Notes `touch` on the exchange being sent; nothing when no one records it (capture off).
    public static func note(_ touch: ExchangeTouch) { current?.add(touch) }
}
