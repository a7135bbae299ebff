public import Foundation

/// What a tunnel carried — a CONNECT passed through unread, or a connection switched to another protocol
/// (WebSocket) — reported once both of its connections have closed: the log keeps it as one exchange (the host, the
/// bytes each way, how long it was open), since the bytes themselves are not read.
public struct TunnelSummary: Sendable, Hashable {
    /// A request that switched protocols (`Upgrade: websocket`): what asked, and what the upstream answered.
    public struct Upgrade: Sendable, Hashable {
        /// The request's method and URL (`ws` and `wss` addresses as `http` and `https`, as they travel).
        public var method: String
        public var url: URL
        /// The protocol asked for, lowercased (`websocket`).
        public var protocolName: String
        /// The status of the upstream's answer (101 when it switched), nil when it sent none.
        public var status: Int?
        /// The handshake's fields as the app sent them, and as the upstream answered (not yet redacted: whoever logs
        /// them redacts them, as every exchange's).
        public var requestHeaders: [RequestRecord.HeaderField]
        public var responseHeaders: [RequestRecord.HeaderField] = []

        public init(method: String, url: URL, protocolName: String, status: Int? = nil, requestHeaders: [RequestRecord.HeaderField] = []) {
            self.method = method
            self.url = url
            self.protocolName = protocolName
            self.status = status
            self.requestHeaders = requestHeaders
        }
    }

    /// The CONNECT request's target.
    public var host: String
    public var port: Int
    /// Bytes from the app to the upstream, and back.
    public var sent: Int
    public var received: Int
    /// How long it was open, up to when it is reported (its start is dated by whoever logs it, on its clock).
    public var duration: TimeInterval
    /// Why the tunnel could not be opened (the upstream refused the connection...), or nil.
    public var error: String?
    /// Set when the tunnel is a protocol switch rather than a CONNECT.
    public var upgrade: Upgrade?
    /// Whether it was still open when Kiosk stopped, which closed it (neither the app nor the upstream did).
    public var cutByStop: Bool
    /// Why it went unread when Kiosk reads its host (the app said nothing first), or nil.
    public var note: String?
    /// Whether Kiosk was to read it (an intercepted CONNECT whose TLS with the app failed, `error` saying why): nothing
    /// passed through unread.
    public var wasToBeRead = false
    /// What the proxy's cache said of a tunnel or switch it did not open (offline: no upstream dialled), as the app was told
    /// in its answer's `Cache-Status`; nil for one the network's failure or success decided.
    public var cacheStatus: CacheStatus?
    /// Whether it was refused because the proxy is offline: its app got the 504 of what is not stored, which its record
    /// says as an HTTP request's does (a failure, never an answer from the store).
    public var refusedOffline: Bool { error != nil && cacheStatus?.decision == .offline }
    /// What the debugger did to it (a protocol switch held or edited at a request breakpoint), for its record.
    public var touches: [ExchangeTouch] = []
    /// The request log's recording generation it opened under (`ExchangesInFlight.Ticket`), nil if not told: its record
    /// is logged only if recording was neither paused nor resumed since.
    public var generation: UInt64?

    /// How a CONNECT tunnel to `host:port` is named in the log and the list in flight: its endpoint (the host, with the
    /// port unless 443) and its URL (`https://host:port`).
    public static func connectName(host: String, port: Int) -> (endpoint: String, url: String) {
        let name = host.contains(":") ? "[\(host)]" : host
        return (port == 443 ? name : "\(name):\(port)", "https://\(name):\(port)")
    }

    /// A tunnel's summary; `upgrade` for a protocol switch; `cutByStop` when Kiosk's stop closed it.
    public init(host: String, port: Int, sent: Int, received: Int, duration: TimeInterval, error: String?, upgrade: Upgrade? = nil,
                cutByStop: Bool = false) {
        self.upgrade = upgrade
        self.cutByStop = cutByStop
        self.host = host
        self.port = port
        self.sent = sent
        self.received = received
        self.duration = duration
        self.error = error
    }
}

/// What the debugger made of a protocol switch (a WebSocket's handshake) that a request breakpoint held before it went
/// upstream.
public enum SwitchHold: Sendable {
    /// Send it — as it was or edited — its record carrying `touches` (held, edited).
    case send(HTTPRequest, touches: [ExchangeTouch])
    /// Answer the app with this instead of switching (logged already).
    case answer(HTTPResponse)
    /// Fail it with this error (aborted at the breakpoint; logged already).
    case fail(KioskError)
}
