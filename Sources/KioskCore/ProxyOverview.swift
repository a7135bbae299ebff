public import Foundation

/// What `kiosk proxy` runs in this process, as the console's proxy page and its JSON show it: the listeners, the CA
/// apps must trust (its certificate only: the key is never here), and live counts.
public struct ProxyOverview: Sendable, Encodable {
    /// One listener of the proxy.
    public struct Listener: Sendable, Encodable, Hashable {
        /// `forward` (apps set it as their proxy) or `reverse` (apps use it as their base URL).
        public var kind: String
        /// `host:port`, an IPv6 host bracketed.
        public var address: String
        /// Where a reverse listener forwards to; nil for the forward proxy.
        public var upstream: String?

        public init(kind: String, address: String, upstream: String? = nil) {
            self.kind = kind
            self.address = address
            self.upstream = upstream
        }
    }

    /// What the listeners did since the proxy started.
    public struct Counts: Sendable, Encodable, Hashable {
        /// Client connections open now.
        public var openConnections = 0
        /// Client connections accepted.
        public var connections = 0
        /// HTTP requests forwarded through the debugger (those inside intercepted CONNECTs included).
        public var requests = 0
        /// CONNECTs whose TLS Kiosk read with its CA.
        public var intercepted = 0
        /// CONNECTs passed through unread.
        public var tunnels = 0
        /// Protocol switches (WebSocket) passed through.
        public var upgrades = 0
        /// Requests the proxy answered itself with a 4xx or 5xx (bad requests, loops, a missing password, failed upstreams).
        public var refused = 0
        /// Requests whose app went away before the end of their body (each logged as cut short; a streamed one is among
        /// `requests` too, as it was already on its way to the upstream).
        public var cutShort = 0

        public init() {}
    }

    public var listeners: [Listener]
    public var startedAt: Date
    /// Kiosk's CA certificate (PEM) when the proxy reads HTTPS; nil when CONNECTs pass unread.
    public var certificatePEM: String?
    /// The CA certificate's SHA-256 fingerprint.
    public var fingerprint: String?
    /// `--intercept` patterns (empty: every host) and `--ignore` ones.
    public var interceptedHosts: [String]
    public var ignoredHosts: [String]
    /// Whether clients must send the proxy's password (`--proxy-auth`).
    public var asksPassword: Bool
    /// Whether upstream certificates are checked (false with `--insecure-upstream`).
    public var verifiesUpstream = true
    /// The `--data-dir` the proxy was started with, shell-quoted; nil when it was started without one (the default
    /// folder). The commands the setup steps give name it, so they find this proxy's CA.
    public var dataDirectoryArgument: String?
    public var counts: Counts

    public init(listeners: [Listener], startedAt: Date, certificatePEM: String?, fingerprint: String?, interceptedHosts: [String],
                ignoredHosts: [String], asksPassword: Bool, counts: Counts) {
        self.listeners = listeners
        self.startedAt = startedAt
        self.certificatePEM = certificatePEM
        self.fingerprint = fingerprint
        self.interceptedHosts = interceptedHosts
        self.ignoredHosts = ignoredHosts
        self.asksPassword = asksPassword
        self.counts = counts
    }
}
