public import Foundation
public import KioskCore
import KioskListener
package import KioskNetwork
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import NIOSSL
public import ServiceLifecycle
import Synchronization

/// What `kiosk proxy`'s listener is: where it binds, its limits, and the other listeners of the process (a request
/// to any of them through the proxy would come back to Kiosk: a loop).
public struct ProxyConfiguration: Sendable {
    /// Address to bind (loopback unless proxy authentication is on).
    public var host: String
    /// Port to bind; 0 picks a free one.
    public var port: Int
    /// The largest request head (request line and fields) accepted; larger is a 431 and the connection closed.
    public var maximumHeaderBytes: Int
    /// The largest request body held whole before it is forwarded; a larger one goes to the upstream as the app sends it.
    public var maximumRequestBodyBytes: Int
    /// How long a connection may take to deliver a request head (slow clients are closed).
    public var requestHeadTimeout: Duration
    /// How long a tunnel one side of which finished sending may carry nothing the other way before it closes.
    public var tunnelQuietAfterHalfClose: Duration = .seconds(120)
    /// The ports of the process's other listeners on this machine (the console's), read at each request: a listener
    /// bound to port 0 learns its port after the proxy starts.
    public var ownPorts: @Sendable () -> Set<Int>
    /// The CA that reads inside HTTPS: with one, a CONNECT to a host `intercepts(_:)` accepts is answered with a
    /// certificate of Kiosk's and its requests go through the debugger; without, every CONNECT is a blind tunnel.
    public var authority: ProxyAuthority?
    /// Hosts to intercept (`*.example.com` or `example.com` patterns); empty: every host.
    public var interceptedHosts: [String] = []
    /// Hosts never intercepted, tunnelled unread (pinned apps): wins over `interceptedHosts`.
    public var ignoredHosts: [String] = []
    /// With an upstream URL (scheme, host, port, base path), a reverse proxy: every request on this listener goes
    /// there, as an app whose base URL is this listener sends it — no proxy settings, no CA.
    public var reverseTo: URL?
    /// PEM files of authorities trusted for upstream TLS the proxy dials itself (a `wss` switch) besides the system's:
    /// the same `--upstream-ca` files the HTTP transport trusts.
    public var upstreamTrustRoots: [String] = []
    /// Whether the certificates of upstreams the proxy dials itself (a `wss` switch) are checked; off only with
    /// `--insecure-upstream`, as for the HTTP transport.
    public var verifiesUpstream = true
    /// How long a connection the proxy dials itself (a tunnel, a protocol switch) may take to open, its TLS handshake
    /// included: the HTTP transport's connect timeout, so that every upstream of an app gets the same.
    public var connectTimeout: Duration = .seconds(5)
    /// How long an upstream may take to begin its answer to a protocol switch (a WebSocket's handshake) before the app gets
    /// a 504: the HTTP transport's request timeout, as for any request.
    public var switchAnswerTimeout: Duration = .seconds(60)
    /// Where a protocol switch (a WebSocket) is listed while it is open, as the capture lists the exchanges in flight (nil:
    /// not listed, capture off).
    public var exchangesInFlight: ExchangesInFlight?
    /// Asked before a protocol switch (a WebSocket's handshake) goes upstream: a request breakpoint set for it holds it,
    /// and the console sends it as it was or edited, answers it, or aborts it (nil: sent as asked).
    public var holdSwitch: (@Sendable (HTTPRequest) async -> SwitchHold)?
    /// With credentials, every request on the forward proxy's listener (a CONNECT included) must carry them in
    /// `Proxy-Authorization`, or is answered 407: required when the listener is reachable from other machines.
    public var credentials: ProxyCredentials?
    /// Whether a client at this address is on this machine (nil: its address is unknown). Another machine's requests
    /// go out as `.proxiedForNetwork`, never to this machine's loopback or private addresses. Tests inject it.
    public var isLocalPeer: @Sendable (IPAddress?) -> Bool = { $0?.isLoopbackPeer ?? false }
    /// Where the listener counts its connections, requests, tunnels and refusals (shared by a process's listeners).
    public var meter = ProxyMeter()
    /// How many apps' connections the listener holds at once; share one among a process's listeners, as the meter.
    public var connections = ConnectionBudget.forThisProcess()
    /// What the request bodies held whole count against, with the answers' (the proxy transport's `heldBodies`): past
    /// it an upload streams to the upstream as the app sends it. nil: no budget but `maximumRequestBodyBytes`.
    public var heldBodies: HeldBodies?
    /// When a stopping listener closes the connections still open; share one among a process's listeners, so they
    /// all close at the same moment however many there are.
    public var stop = StopDeadline(grace: .seconds(5))

    /// Whether a CONNECT to `host` is read (Kiosk's certificate) rather than tunnelled blind.
    public func intercepts(_ host: String) -> Bool {
        guard authority != nil else { return false }
        let host = host.lowercased()
        if ignoredHosts.contains(where: { Self.matches(host, $0) }) { return false }
        return interceptedHosts.isEmpty || interceptedHosts.contains { Self.matches(host, $0) }
    }

    /// Whether a CONNECT to `host` is read only if its TLS hello names a host `intercepts` takes: an address no
    /// `--ignore` names, while `--intercept` narrows reading to other hosts. An app that resolved the name itself
    /// CONNECTs to the address, and its hello still names the host.
    func readsHelloToDecide(_ host: String) -> Bool {
        guard authority != nil, !interceptedHosts.isEmpty, IPAddress(literal: host) != nil else { return false }
        return !intercepts(host) && !ignoredHosts.contains { Self.matches(host, $0) }
    }

    /// `*.example.com` matches example.com's subdomains (not example.com itself), `*` every host, anything else the host
    /// exactly; a name's absolute form (`example.com.`) is the same name, and an address matches however it is spelled
    /// (`127.1`, `[::1]`, `0:0:0:0:0:0:0:1`).
    static func matches(_ host: String, _ pattern: String) -> Bool {
        if let address = IPAddress(literal: pattern) { return IPAddress(literal: host) == address }
        let absolute = { (name: String) in name.hasSuffix(".") && name.count > 1 ? String(name.dropLast()) : name }
        let (host, pattern) = (absolute(host.lowercased()), absolute(pattern.lowercased()))
        if pattern == "*" { return true }
        if pattern.hasPrefix("*.") { return host.hasSuffix(String(pattern.dropFirst())) }
        return host == pattern
    }

    /// Loopback, port 8888, 64 KB heads, 16 MB bodies, 20 s for a head.
    public init(host: String = "127.0.0.1", port: Int = 8888, maximumHeaderBytes: Int = 64 * 1024,
                maximumRequestBodyBytes: Int = 16 << 20, requestHeadTimeout: Duration = .seconds(20),
                ownPorts: @escaping @Sendable () -> Set<Int> = { [] }) {
        self.host = host
        self.port = port
        self.maximumHeaderBytes = maximumHeaderBytes
        self.maximumRequestBodyBytes = maximumRequestBodyBytes
        self.requestHeadTimeout = requestHeadTimeout
        self.ownPorts = ownPorts
    }
}

/// The HTTP/1.1 forward proxy: apps send it requests for whole URLs (`GET http://host/path`, as curl `-x`,
/// `HTTP_PROXY` and a phone's Wi-Fi proxy setting do), and each is handed to `forward` — Kiosk's debugger
/// pipeline — and its answer returned. A `Service`: it runs until the service group shuts down, then stops
/// accepting, lets every request in flight finish its answer, and returns; cancelled meanwhile (the group's grace
/// ran out), it closes the connections still open — an endless event stream, an upstream that never answers — and
/// returns once they are closed.
public final class ProxyServer: Service, Sendable {
    private let configuration: ProxyConfiguration
    private let forward: @Sendable (HTTPRequest) async throws -> HTTPResponse
    private let vet: @Sendable (URL, Bool) async throws -> CheckedAddresses
    private let onBound: @Sendable (Int) -> Void
    private let onTunnel: @Sendable (TunnelSummary) -> Void
    private let onCutShort: @Sendable (HTTPRequest, KioskError, Duration) -> Void
    /// This process's name in `Via`: a request already carrying it came round through the proxy to itself.
    private let pseudonym: String

    /// A proxy that forwards requests with `forward`, asks `vet` (the outbound policy; its second argument true for a
    /// client on another machine) for the addresses to dial before it dials an upstream itself for a tunnel or a protocol
    /// switch, reports each tunnel once closed to `onTunnel`,
    /// hands `onCutShort` each request its app gave up before its body's end (never forwarded; what came of the body, why,
    /// and how long after its head), and calls `onBound` with the port once it listens.
    package init(configuration: ProxyConfiguration, forward: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse,
                 vet: @escaping @Sendable (URL, Bool) async throws -> CheckedAddresses,
                 onTunnel: @escaping @Sendable (TunnelSummary) -> Void = { _ in },
                 onCutShort: @escaping @Sendable (HTTPRequest, KioskError, Duration) -> Void = { _, _, _ in },
                 onBound: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.configuration = configuration
        self.forward = forward
        self.vet = vet
        self.onTunnel = onTunnel
        self.onCutShort = onCutShort
        self.onBound = onBound
        pseudonym = "kiosk-" + String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 36)
    }

    public func run() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let quiesce = ServerQuiescingHelper(group: group)
        let configuration = configuration
        let forward = forward
        let vet = vet
        let onTunnel = onTunnel
        let onCutShort = onCutShort
        var tls = UpstreamTransport.upstreamTLS(trusting: configuration.upstreamTrustRoots, verifies: configuration.verifiesUpstream)
        tls.applicationProtocols = ["http/1.1"]
        let upstreamTLS = try NIOSSLContext(configuration: tls)
        let via = ProxyMessages.viaToken(pseudonym)
        let loop = LoopGuard(host: configuration.host, ownPorts: configuration.ownPorts, pseudonym: pseudonym)
        let bound = BoundPort()
        let open = OpenConnections()
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiesce.makeServerChannelHandler(channel: channel))
                    try channel.pipeline.syncOperations.addHandler(AcceptGate(budget: configuration.connections))
                }
            }
            .childChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            // An app that half-closes after its request (nc -N) still gets the answer (ProxyHandler), and a tunnel passes
            // the half-close on to the other side.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                let meter = configuration.meter
                meter.count { $0.connections += 1; $0.openConnections += 1 }
                open.add(channel)
                channel.closeFuture.whenComplete { _ in
                    meter.count { $0.openConnections -= 1 }
                    open.remove(channel)
                }
                return channel.eventLoop.makeCompletedFuture {
                    let settings = ProxyHandler.Settings(configuration: configuration, forward: forward, vet: vet, upstreamTLS: upstreamTLS,
                                                         via: via, loop: loop,
                                                         boundPort: { bound.value.withLock { $0 } }, onTunnel: onTunnel,
                                                         onCutShort: onCutShort)
                    let origin = configuration.reverseTo.map { ProxyHandler.Origin(base: $0, isReverse: true) }
                    try channel.pipeline.syncOperations.addHandlers(ProxyHandler.httpHandlers(settings, origin: origin))
                }
            }
            .bind(host: configuration.host, port: configuration.port).get()
        let port = channel.localAddress?.port ?? configuration.port
        bound.value.withLock { $0 = port }
        onBound(port)
        // Until the service group shuts down (SIGINT, SIGTERM, or a sibling service ending).
        try? await gracefulShutdown()
        let done = group.next().makePromise(of: Void.self)
        quiesce.initiateShutdown(promise: done)
        // Past the grace, or cancelled, the connections still open are closed: their exchanges end (each logged as cut
        // short), and the quiescing helper, seeing the last one close, completes `done`.
        let grace = group.next().scheduleTask(deadline: configuration.stop.deadline()) { open.closeAll() }
        try await withTaskCancellationHandler {
            try await done.futureResult.get()
        } onCancel: {
            open.closeAll()
        }
        grace.cancel()
    }
}

/// The moment the listeners of a process that began to stop close their last connections: `grace` after the first of
/// them began (the service group stops them one after another).
public final class StopDeadline: Sendable {
    private let grace: Duration
    private let started = Mutex<NIODeadline?>(nil)
    private let onStop: @Sendable () -> Void

    /// A deadline `grace` after the first listener stops; `onStop` runs then, once (what must end for exchanges in flight
    /// to finish within it: pauses at breakpoints).
    public init(grace: Duration, onStop: @escaping @Sendable () -> Void = {}) {
        self.grace = grace
        self.onStop = onStop
    }

    /// Whether the stop has begun (its deadline was asked for).
    var hasStarted: Bool { started.withLock { $0 != nil } }

    /// The deadline, fixed by the first call.
    func deadline() -> NIODeadline {
        let (deadline, first) = started.withLock { started -> (NIODeadline, Bool) in
            if let started { return (started, false) }
            let deadline = NIODeadline.now() + TimeAmount(grace)
            started = deadline
            return (deadline, true)
        }
        if first { onStop() }
        return deadline
    }
}

/// The app connections a listener has open, closed all at once when its graceful stop runs out of time.
private final class OpenConnections: Sendable {
    private let channels = Mutex<[ObjectIdentifier: any Channel]>([:])

    func add(_ channel: any Channel) { channels.withLock { $0[ObjectIdentifier(channel)] = channel } }
    func remove(_ channel: any Channel) { channels.withLock { $0[ObjectIdentifier(channel)] = nil } }

    func closeAll() {
        for channel in channels.withLock({ Array($0.values) }) { channel.close(promise: nil) }
    }
}

/// The port the listener got, known once bound (for `--port 0`), read by each connection's loop check.
private final class BoundPort: Sendable {
    let value = Mutex(0)
}

/// Whether a request would come back to this process: its target is one of this machine's listeners of Kiosk's
/// (the proxy's own port or the console's, on a loopback name or the bound address), or it already passed here.
struct LoopGuard: Sendable {
    let host: String
    let ownPorts: @Sendable () -> Set<Int>
    let pseudonym: String

    /// How a request to `url` would come back here.
    enum Loop {
        /// Its `Via` names this proxy: it went through it already (whatever its target, another proxy sent it back).
        case passedHere
        /// Its target is one of this process's listeners.
        case ownListener
    }

    /// The loop a request to `url` with `headers` would make; nil when it makes none.
    func loop(_ url: URL, headers: HTTPHeaders, proxyPort: Int) -> Loop? {
        if headers["Via"].contains(where: { $0.contains(pseudonym) }) { return .passedHere }
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        guard port == proxyPort || ownPorts().contains(port) else { return nil }
        let target = url.host(percentEncoded: false)?.lowercased() ?? ""
        let bare = target.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return IPAddress.isLoopback(host: bare) || bare == host.lowercased() || bare == "0.0.0.0" || bare == "::" ? .ownListener : nil
    }

    /// The 508 for `loop`, of a request (or a tunnel) to `target`.
    static func refusal(_ loop: Loop, target: String, tunnel: Bool) -> ProxyMessages.Refusal {
        let what = tunnel ? "tunnel" : "request"
        return switch loop {
        case .passedHere:
            ProxyMessages.Refusal(.loopDetected, "This \(what) has come through this Kiosk proxy already (its Via names it): another "
                                  + "proxy sent it back, and it would go round for ever.", closes: tunnel)
        case .ownListener:
            ProxyMessages.Refusal(.loopDetected, "\(target) is Kiosk itself: the \(what) would come back through the proxy for ever.",
                                  closes: tunnel)
        }
    }
}
