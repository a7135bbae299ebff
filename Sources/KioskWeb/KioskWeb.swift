public import Hummingbird
import HummingbirdTLS
public import KioskApp
import KioskCore
import Logging

// The entirety of KioskWeb's public API: a configuration and the application builder, with what the
// configuration's HTTPS and pairing take (`TLSMaterial`, `MachineAddresses`, `PairingCode`).

/// Where the web app listens; loopback by default so a reader is not exposed to the network by accident.
public struct WebConfiguration: Sendable {
    /// The interface to bind.
    public var host: String
    /// The TCP port (0 picks a free one).
    public var port: Int
    /// The network debugger's token: without one, `/debug` is served only on a loopback address; with
    /// one, it is served anywhere to a browser that entered it.
    public var debugToken: String?
    /// Serve HTTPS with this certificate and key instead of plain HTTP; cookies are then `Secure`.
    public var tls: TLSMaterial?
    /// Require browsers on other machines to pair first (`serve --lan`); loopback peers are not asked.
    public var pairing: PairingConfiguration?

    /// Loopback port 8080 over plain HTTP, open to every peer, unless told otherwise.
    public init(host: String = "127.0.0.1", port: Int = 8080, debugToken: String? = nil, tls: TLSMaterial? = nil,
                pairing: PairingConfiguration? = nil) {
        self.host = host
        self.port = port
        self.debugToken = debugToken.flatMap { $0.isEmpty ? nil : $0 }
        self.tls = tls
        self.pairing = pairing
    }

    /// Whether `host` is a loopback address, reachable from this machine only.
    public var isLoopback: Bool { IPAddress.isLoopback(host: host) }
}

/// What pairing needs: the code this process accepts (the paired devices themselves are in the store).
public struct PairingConfiguration: Sendable {
    /// The code `serve` prints; new at each start.
    public var code: PairingCode

    /// Pairing with `code`.
    public init(code: PairingCode) {
        self.code = code
    }
}

/// The web app over `kiosk`, ready to `runService()`; it serves the HTML screens, the JSON API, images and
/// static files, over HTTPS when the configuration has TLS material, behind the pairing gate when it has
/// pairing. `onListening` is called with the bound port once the server accepts connections (the
/// configured port, or the one the system picked for port 0). Throws when the TLS material is refused.
public func buildApplication(kiosk: Kiosk, configuration: WebConfiguration,
                             onListening: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some ApplicationProtocol {
    var logger = Logger(label: "kiosk.web")
    logger.logLevel = .notice
    // Read at startup: `Bundle.module` stops the process when the resource bundle is not installed beside
    // the binary, and that must happen here, loudly, rather than on someone's request for a file.
    _ = OpenAPIDocument.data
    StaticAssets.preload()
    let secure = configuration.tls != nil
    let pairing = configuration.pairing.map { pairing in
        PairingGate(code: pairing.code, devices: kiosk.devices, attempts: PairingAttempts(now: kiosk.now), peer: PairingGate.socketPeer)
    }
    let tlsConfiguration = try configuration.tls?.serverConfiguration()
    return Application(
        router: buildRouter(kiosk: kiosk, csrf: CSRFProtection(secureCookies: secure),
                            debugAccess: DebugAccess(token: configuration.debugToken, isLoopback: configuration.isLoopback,
                                                     secureCookies: secure),
                            pairing: pairing),
        server: try tlsConfiguration.map { try .tls(.http1(), tlsConfiguration: $0) } ?? .http1(),
        configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port),
                                                serverName: "Kiosk"),
        onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
        logger: logger
    )
}

/// Every route of the web app, behind the pairing gate (when pairing is on), itself behind the middleware
/// that turns errors into pages and adds security headers (so refusals carry them too), behind the language
/// and CSRF middlewares (CSRF outermost, so error pages get the cookie too), which fill in the request's
/// `WebRequestContext`; HEAD is answered as GET in front of all of it. The CSRF secret and the gate are
/// parameters so tests can build the router with their own.
func buildRouter(kiosk: Kiosk, csrf: CSRFProtection = .random(),
                 debugAccess: DebugAccess = DebugAccess(token: nil, isLoopback: true),
                 pairing: PairingGate? = nil) -> WebRouter {
    let router = Router(context: WebRequestContext.self)
    router.add(middleware: CSRFMiddleware(protection: csrf))
    router.add(middleware: LanguageMiddleware())
    router.add(middleware: CatalogsMiddleware(catalogs: Catalogs(sources: Array(kiosk.catalog.sources.values))))
    router.add(middleware: WebErrorMiddleware())
    if let pairing {
        router.add(middleware: PairingMiddleware(gate: pairing))
        PairingController(gate: pairing).register(on: router)
    }
    // The debugger first: its constant "/debug" segments must exist before the catalog's "/{source}" routes.
    DebugController(kiosk: kiosk, access: debugAccess).register(on: router)
    WebController(kiosk: kiosk).register(on: router)
    return WebRouter(router: router)
}

/// The web app's router with HEAD answered in front of it (see `HeadAsGetResponder`).
struct WebRouter: HTTPResponderBuilder {
    /// The routes as registered: GET and POST only; HEAD is never registered per route.
    let router: Router<WebRequestContext>

    func buildResponder() -> HeadAsGetResponder<RouterResponder<WebRequestContext>> {
        HeadAsGetResponder(base: router.buildResponder())
    }
}

/// HEAD is GET without the body (RFC 9110 section 9.3.2), for every address in one place. It is done
/// before routing rather than with Hummingbird's `autoGenerateHeadEndpoints`, which leaves unrouted
/// addresses (404s) answering HEAD with a body and hands handlers a method they do not expect: here
/// every handler, middleware and error page sees a plain GET, so status and headers (Content-Type,
/// Content-Length of the GET body, ETag, Set-Cookie) are exactly GET's.
struct HeadAsGetResponder<Base: HTTPResponder>: HTTPResponder {
    let base: Base

    func respond(to request: Request, context: Base.Context) async throws -> Response {
        guard request.method == .head else { return try await base.respond(to: request, context: context) }
        var head = request.head
        head.method = .get
        return try await base.respond(to: Request(head: head, body: request.body), context: context).createHeadResponse()
    }
}
