import Foundation
package import Hummingbird
import HummingbirdCore
import HummingbirdTLS
package import KioskApp
package import KioskCore
package import KioskListener
import Logging
import NIOCore

// The entirety of KioskWeb's public API: a configuration and the application builder, with what the
// configuration's HTTPS and pairing take (`TLSMaterial`, `MachineAddresses`, `PairingConfiguration`).

/// Where the web app listens; loopback by default so a reader is not exposed to the network by accident.
public struct WebConfiguration: Sendable {
    /// The interface to bind.
    public var host: String
    /// The TCP port (0 picks a free one).
    public var port: Int
    /// The network debugger's token: without one, `/debug` is served only on a loopback address; with
    /// one, it is served anywhere to a browser that entered it. At least `minimumDebugTokenLength` characters.
    public var debugToken: String?

    /// The debug token set in the environment (`KIOSK_DEBUG_TOKEN`), which every console Kiosk serves — `kiosk serve`'s
    /// and `kiosk proxy`'s — asks for once set.
    public static var environmentDebugToken: String? { ProcessInfo.processInfo.environment["KIOSK_DEBUG_TOKEN"] }
    /// Serve HTTPS with this certificate and key instead of plain HTTP; cookies are then `Secure`.
    public var tls: TLSMaterial?
    /// Require browsers on other machines to pair first (`serve --lan`); loopback peers are not asked.
    public var pairing: PairingConfiguration?
    /// Host names answered beyond loopback's, the certificate's and (off loopback) the machine's own: each an
    /// exact name or `.example.com` for a domain and its subdomains (`serve --allowed-host`).
    public var allowedHosts: [String]
    /// Off loopback, serve peers from any address, not only this machine's networks and local ranges.
    public var allowsGlobalPeers: Bool
    /// How long a connection may take to deliver a request head, from opening or from its previous answer.
    public var requestHeadTimeout: Duration
    /// How long a connection may sit with nothing read while a request is being read or none is open.
    public var idleTimeout: Duration
    /// The most connections open at once; more wait in the kernel's queue until some close. By default the open-file
    /// limit less a reserve: a process out of files is ended by libdispatch (see KioskProxy's `ConnectionBudget`).
    public var maximumConnections = WebConfiguration.connectionsForOpenFileLimit()

    /// The open-file limit now, less 128 for the databases, the event loops and outbound connections (at least 16).
    public static func connectionsForOpenFileLimit() -> Int {
        max(OpenFileLimit.current - 128, 16)
    }

    /// Loopback port 8080 over plain HTTP, answering loopback names, unless told otherwise.
    public init(host: String = "127.0.0.1", port: Int = 8080, debugToken: String? = nil, tls: TLSMaterial? = nil,
                pairing: PairingConfiguration? = nil, allowedHosts: [String] = [], allowsGlobalPeers: Bool = false,
                requestHeadTimeout: Duration = .seconds(20), idleTimeout: Duration = .seconds(60)) {
        self.host = host
        self.port = port
        self.debugToken = debugToken.flatMap { $0.isEmpty ? nil : $0 }
        self.tls = tls
        self.pairing = pairing
        self.allowedHosts = allowedHosts
        self.allowsGlobalPeers = allowsGlobalPeers
        self.requestHeadTimeout = requestHeadTimeout
        self.idleTimeout = idleTimeout
    }

    /// Whether `host` is a loopback address, reachable from this machine only.
    public var isLoopback: Bool { IPAddress.isLoopback(host: host) }

    /// The shortest debug token accepted: 24 characters (`openssl rand -hex 16` gives 32).
    public static let minimumDebugTokenLength = 24

    /// Throws `invalidRequest` saying what is wrong with the configuration: a debug token too short or with
    /// characters a header cannot carry, an `allowedHosts` entry that is not a host name.
    public func validate() throws {
        if let debugToken { try Self.validate(debugToken: debugToken) }
        for host in allowedHosts {
            if let problem = ListenerPolicy.allowedHostProblem(host) { throw KioskError.invalidRequest("--allowed-host \(host.prefix(80)) \(problem)") }
        }
    }

    /// The fewest different characters a debug token may have: a random one of 24 has 13 at the least likely (hex)
    /// but a few times in a billion; `aaaa…` or `abababab…` has one or two, and is guessed first.
    public static let minimumDebugTokenVariety = 8

    /// Throws `invalidRequest` saying what is wrong when `token` cannot guard the debugger: too short or too
    /// repetitive to resist guessing, or with characters other than visible ASCII.
    static func validate(debugToken token: String) throws {
        guard token.utf8.count >= minimumDebugTokenLength else {
            throw KioskError.invalidRequest("KIOSK_DEBUG_TOKEN has \(token.utf8.count) characters; it guards the request log and "
                                            + "resends signed requests, so it needs at least \(minimumDebugTokenLength) "
                                            + "(`openssl rand -hex 16` makes one)")
        }
        guard token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw KioskError.invalidRequest("KIOSK_DEBUG_TOKEN holds characters other than visible ASCII (letters, digits, punctuation)")
        }
        guard Set(token.utf8).count >= minimumDebugTokenVariety else {
            throw KioskError.invalidRequest("KIOSK_DEBUG_TOKEN repeats itself: of its characters only \(Set(token.utf8).count) differ, "
                                            + "and it needs at least \(minimumDebugTokenVariety) different ones to resist guessing "
                                            + "(`openssl rand -hex 16` makes one)")
        }
    }

    /// The names and peers this listener answers: loopback names always; the certificate's names; off
    /// loopback, the machine's own names, and peers of local networks and of the machine's own networks.
    func listenerPolicy(machineNames: [String], machineNetworks: NeighbourNetworks) -> ListenerPolicy {
        let certificateNames = tls?.names.filter { IPAddress(literal: $0) == nil } ?? []
        let peers: PeerScope = isLoopback ? .loopback : allowsGlobalPeers ? .any(neighbours: machineNetworks)
            : .localNetworks(also: machineNetworks)
        return ListenerPolicy(names: allowedHosts + certificateNames + (isLoopback ? [] : machineNames), peers: peers,
                              hint: "If you reach Kiosk under this name on purpose, start it with --allowed-host NAME.")
    }
}

/// What pairing needs: who to tell of each pairing and each burned code (the codes and the paired devices
/// themselves are in the store, through `Kiosk.devices`).
public struct PairingConfiguration: Sendable {
    /// Called with a line for the person running `serve`: "Paired …", "The pairing code was burned …".
    public var report: @Sendable (String) -> Void

    /// Pairing that reports to `report`.
    public init(report: @escaping @Sendable (String) -> Void) {
        self.report = report
    }
}

/// A part of the web app beside the reader, with routes of its own (the network debugger's console, in
/// KioskConsole): the app registers it before the reader's routes, whose `/{source}` would otherwise take its
/// constant segments, and serves its scripts under `/static/` like its own.
package protocol WebFeature: Sendable {
    /// Registers the feature's routes.
    func register(on router: Router<WebRequestContext>)
    /// Its scripts, served at their content-addressed paths.
    var assets: [StaticAsset] { get }
    /// The path prefixes of its addresses that are never saved on a device nor answered from it (the service
    /// worker passes them to the network; a page of them opened while Kiosk is unreachable gets the device's offline
    /// page), in the client table's `networkOnly`.
    var networkOnlyPrefixes: [String] { get }
    /// The path prefixes of its JSON API: an error there is answered in JSON, as under `/api/`.
    var jsonPrefixes: [String] { get }
    /// The link every page's top bar shows to it, in `language`; nil for none.
    func menuLink(_ language: Language) -> MenuLink?
}

/// A link in the top bar of every page, to a part of the app a feature adds (the console).
package struct MenuLink: Sendable {
    package let label: String
    /// What it reads where space is short (a phone's top bar).
    package let shortLabel: String
    package let path: String

    /// A link to `path` that reads `label`, or `shortLabel` on a phone.
    package init(label: String, shortLabel: String? = nil, path: String) {
        self.label = label
        self.shortLabel = shortLabel ?? label
        self.path = path
    }
}

/// What a feature is made from when the app is built: Kiosk, the configuration, and what the app decided of it.
package struct WebFeatureContext: Sendable {
    package let kiosk: Kiosk
    package let configuration: WebConfiguration
    /// Whether the app serves HTTPS (cookies are then `Secure`).
    package let isSecure: Bool
    /// The peers the listener serves (a feature's limits count its neighbours one address each).
    package let peers: PeerScope
}

/// The web app over `kiosk`, ready to `runService()`; it serves the HTML screens, the JSON API, images and
/// static files, and the `features` made for it (the console), over HTTPS when the configuration has TLS
/// material, behind the pairing gate when it has pairing, and answers only its own host names and peers
/// (`WebConfiguration.listenerPolicy`). `onListening` is called with the bound port once the server accepts
/// connections (the configured port, or the one the system picked for port 0). Throws when the TLS material
/// or the configuration is refused.
package func buildApplication(kiosk: Kiosk, configuration: WebConfiguration,
                              features: @Sendable (WebFeatureContext) -> [any WebFeature] = { _ in [] },
                              onListening: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some ApplicationProtocol {
    try configuration.validate()
    var logger = Logger(label: "kiosk.web")
    logger.logLevel = .notice
    // Read at startup: `Bundle.module` stops the process when the resource bundle is not installed beside
    // the binary, and that must happen here, loudly, rather than on someone's request for a file.
    _ = OpenAPIDocument.data
    StaticAssets.preload()
    let secure = configuration.tls != nil
    let policy = configuration.listenerPolicy(
        machineNames: configuration.isLoopback ? [] : MachineAddresses.names(),
        machineNetworks: NeighbourNetworks { configuration.isLoopback ? [] : MachineAddresses.networks() })
    let pairing = configuration.pairing.map { pairing in
        PairingGate(devices: kiosk.devices, attempts: ClientAttempts(now: kiosk.now, peers: policy.peers), peer: socketPeer,
                    onEvent: { pairing.report($0.line) })
    }
    let made = features(WebFeatureContext(kiosk: kiosk, configuration: configuration, isSecure: secure, peers: policy.peers))
    let http1 = HTTP1Channel.Configuration(
        additionalChannelHandlers: [AbsoluteFormHostInstaller(),
                                    RequestHeadDeadline<HTTPTypesParts>(timeout: TimeAmount(configuration.requestHeadTimeout))],
        idleTimeout: TimeAmount(configuration.idleTimeout))
    let tlsConfiguration = try configuration.tls?.serverConfiguration()
    return Application(
        router: buildRouter(kiosk: kiosk, features: made, csrf: CSRFProtection(secureCookies: secure), pairing: pairing,
                            listener: policy),
        server: tlsConfiguration.map { .tlsAnsweringPlainHTTP(http1, tlsConfiguration: $0) } ?? .http1(configuration: http1),
        configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port),
                                                serverName: "Kiosk",
                                                availableConnectionsDelegate: MaximumAvailableConnections(configuration.maximumConnections)),
        onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
        logger: logger
    )
}

/// Every route of the web app, behind the pairing gate (when pairing is on), itself behind the middleware
/// that turns errors into pages and adds security headers (so refusals carry them too), behind the language
/// and CSRF middlewares (CSRF outermost, so error pages get the cookie too), which fill in the request's
/// `WebRequestContext`; HEAD is answered as GET in front of all of it, and the listener's guard in front of
/// that. The CSRF secret, the gate and the policy are parameters so tests can build the router with their own
/// (by default, the router alone, as HummingbirdTesting runs it in-process: loopback names, and any peer, since
/// there is no socket to have one).
package func buildRouter(kiosk: Kiosk, features: [any WebFeature], csrf: CSRFProtection = CSRFProtection(),
                         pairing: PairingGate? = nil, listener: ListenerPolicy = ListenerPolicy(names: [], peers: .any())) -> WebRouter {
    let router = Router(context: WebRequestContext.self)
    router.add(middleware: CSRFMiddleware(protection: csrf))
    router.add(middleware: LanguageMiddleware())
    router.add(middleware: CatalogsMiddleware(catalogs: Catalogs(sources: Array(kiosk.catalog.sources.values), features: features)))
    router.add(middleware: WebErrorMiddleware(jsonPrefixes: features.flatMap(\.jsonPrefixes)))
    router.add(middleware: CrossSiteReadGuard())
    if let pairing {
        router.add(middleware: PairingMiddleware(gate: pairing))
        PairingController(gate: pairing).register(on: router)
    } else {
        // A browser sent to /pair (a bookmark, the docs) learns there is nothing to pair here, rather than of a catalog
        // called "pair".
        router.get(Route.Kind.pair.pattern) { _, context in Pages.response(PairingPages.notNeeded(context: context.view)) }
    }
    // The features first: their constant segments ("/debug") must exist before the catalog's "/{source}" routes.
    for feature in features { feature.register(on: router) }
    WebController(kiosk: kiosk, secureCookies: csrf.secureCookies).register(on: router)
    return WebRouter(router: router, listener: listener)
}

extension PairingEvent {
    /// What `serve` prints.
    var line: String {
        switch self {
        case .paired(let device, let peer):
            "Paired \(device.name) (\(peer)) as device \(device.id); `kiosk devices revoke \(device.id)` undoes it."
        case .burned(let peer):
            "The pairing code was burned after \(PairedDevices.maximumPairingFailures) wrong tries (the last from \(peer)); "
                + "`kiosk devices pair` shows a new one."
        }
    }
}

/// The web app's router with HEAD answered in front of it (see `HeadAsGetResponder`), behind the listener's
/// guard (`GuardedResponder`): a request for another host name or from a peer not served reaches nothing.
package struct WebRouter: HTTPResponderBuilder {
    /// The routes as registered: GET and POST only; HEAD is never registered per route.
    let router: Router<WebRequestContext>
    /// The names and peers answered.
    let listener: ListenerPolicy

    package func buildResponder() -> GuardedResponder<HeadAsGetResponder<RouterResponder<WebRequestContext>>> {
        GuardedResponder(policy: listener, base: HeadAsGetResponder(base: router.buildResponder()))
    }
}

/// HEAD is GET without the body (RFC 9110 section 9.3.2), for every address in one place. It is done
/// before routing rather than with Hummingbird's `autoGenerateHeadEndpoints`, which leaves unrouted
/// addresses (404s) answering HEAD with a body and hands handlers a method they do not expect: here
/// every handler, middleware and error page sees a plain GET, so status and headers (Content-Type,
/// Content-Length of the GET body, ETag, Set-Cookie) are exactly GET's.
package struct HeadAsGetResponder<Base: HTTPResponder>: HTTPResponder {
    let base: Base

    package func respond(to request: Request, context: Base.Context) async throws -> Response {
        guard request.method == .head else { return try await base.respond(to: request, context: context) }
        var head = request.head
        head.method = .get
        return try await base.respond(to: Request(head: head, body: request.body), context: context).createHeadResponse()
    }
}
