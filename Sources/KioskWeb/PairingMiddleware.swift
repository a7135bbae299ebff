package import Foundation
package import Hummingbird
import KioskApp
package import KioskCore
import Synchronization

/// Wrong secrets (pairing codes, the debug token) per client over a sliding window: at most `perClient`
/// attempts a window per client address (an IPv6 client's whole /64; on this machine, per local user). There is no overall limit: one host
/// spending it would lock everyone else out. What bounds guessing overall is the secret itself — a pairing
/// code is burned after `PairedDevices.maximumPairingFailures` wrong tries, a debug token is long. Every
/// attempt counts when it is made (two at once cannot both slip under the limit); a right one clears its
/// client's count.
package final class ClientAttempts: Sendable {
    /// The limits: 5 attempts a minute per client.
    package struct Limits: Sendable {
        var perClient: Int
        var window: TimeInterval
        /// The most clients remembered at once; past it the oldest are forgotten (a flood of spoofed
        /// addresses must not grow the table without bound).
        var clients: Int

        /// Limits of `perClient` attempts each `window` seconds, for at most `clients` clients at once.
        package init(perClient: Int = 5, window: TimeInterval = 60, clients: Int = 10_000) {
            self.perClient = perClient
            self.window = window
            self.clients = clients
        }
    }

    /// Whether an attempt may be checked: with how many are left to this client, or after how many seconds.
    package enum Decision: Sendable, Equatable {
        case allowed(remaining: Int)
        case limited(retryAfter: Int)
    }

    let limits: Limits
    /// The listener's peers: its neighbours are counted one address each (see `client`).
    let peers: PeerScope
    private let now: @Sendable () -> Date
    private let byClient = Mutex<[String: [Date]]>([:])

    package init(limits: Limits = Limits(), now: @escaping @Sendable () -> Date,
         peers: PeerScope = .localNetworks(also: NeighbourNetworks([]))) {
        self.limits = limits
        self.now = now
        self.peers = peers
    }

    /// Counts an attempt by `client` unless its limit is reached, in which case nothing is counted.
    package func attempt(by client: String) -> Decision {
        let now = now()
        let start = now.addingTimeInterval(-limits.window)
        return byClient.withLock { byClient in
            let mine = (byClient[client] ?? []).filter { $0 > start }
            if mine.count >= limits.perClient {
                return .limited(retryAfter: max(1, Int(mine[0].addingTimeInterval(limits.window).timeIntervalSince(now).rounded(.up))))
            }
            if byClient[client] == nil, byClient.count >= limits.clients {
                // Forgetting clients whose attempts are all old first; only then the oldest of the rest.
                byClient = byClient.filter { $0.value.contains { $0 > start } }
                if byClient.count >= limits.clients, let oldest = byClient.min(by: { ($0.value.last ?? now) < ($1.value.last ?? now) })?.key {
                    byClient.removeValue(forKey: oldest)
                }
            }
            byClient[client] = mine + [now]
            return .allowed(remaining: limits.perClient - mine.count - 1)
        }
    }

    /// A right secret: the client's earlier wrong ones no longer count against it.
    package func succeeded(by client: String) {
        _ = byClient.withLock { $0.removeValue(forKey: client) }
    }

    /// The key attempts are counted under: the address itself for a neighbour (every phone of a home network
    /// shares its IPv6 /64, so counting the /64 would let one of them lock the others out), and a stranger's
    /// whole IPv6 /64 (any host can use any address of its own /64). Only a listener serving any peer meets
    /// strangers; wherever a peer cannot be read, the listener's guard has refused the request already. Every loopback
    /// address is this machine: one client per local user who owns the connecting socket (`owner`, when it could be
    /// told: `SocketOwner`), whatever its address (a local user can send from any of 127.0.0.0/8's 16 million).
    package func client(_ address: IPAddress?, owner: UInt32? = nil) -> String {
        guard let address = address?.unmapped else { return "unknown" }
        if address.isLoopback { return owner.map { "loopback uid \($0)" } ?? "loopback" }
        guard address.bytes.count == 16, !peers.isNeighbour(address) else { return address.description }
        return Hex.encode(address.bytes.prefix(8)) + "::/64"
    }
}

/// Reads a request's peer: the socket's, except in tests, which pretend to be another machine
/// (HummingbirdTesting's router has no socket).
package typealias PeerReader = @Sendable (Request, WebRequestContext) -> IPAddress?

/// The socket's peer, as `WebRequestContext` has it.
package let socketPeer: PeerReader = { _, context in
    context.remoteAddress?.ipAddress.flatMap(IPAddress.init(literal:))
}

/// Who may use a `serve --lan` listener: loopback peers as before, and other machines only once paired — a
/// cookie whose token the store knows, looked up on every request so a revocation counts at once. The code
/// a browser pairs with is the store's open one (`PairedDevices.openPairingWindow`).
package struct PairingGate: Sendable {
    /// The paired devices and the pairing window (the store, through `Kiosk`).
    let devices: PairedDevices
    /// Wrong codes, rate-limited per client.
    let attempts: ClientAttempts
    /// The peer's address.
    let peer: PeerReader
    /// Told of each pairing and each burned code (`serve` prints them).
    let onEvent: @Sendable (PairingEvent) -> Void

    /// `__Host-`: the browser keeps it only if it is Secure, for the whole site, and set by this host itself.
    static let cookieName = "__Host-kiosk_device"
    /// 400 days, the longest a browser keeps a cookie (RFC 6265bis).
    static let cookieMaxAge = 400 * 86_400

    /// What an unpaired browser may still fetch: the pairing page and its form, the language switch on it,
    /// and what a page or an installing browser loads without cookies (the manifest, `/static/*` — icons,
    /// styles and scripts, public and content-addressed —, the service worker, the favicon).
    static func isOpen(method: HTTPRequest.Method, path: String) -> Bool {
        switch method {
        case .get:
            if path.hasPrefix("/static/") { return !path.dropFirst("/static/".count).contains("/") }
            return path == PairingController.path || path == WebManifest.path || path == ServiceWorker.path || path == Route.favicon.path
        case .post:
            return path == PairingController.path || path == "/language"
        default:
            return false
        }
    }

    /// The key wrong codes are counted under (`ClientAttempts.client`).
    func client(_ request: Request, _ context: WebRequestContext) -> String { attempts.client(peer(request, context)) }

    /// Whether the request comes from this machine, which needs no pairing.
    func isLoopback(_ request: Request, _ context: WebRequestContext) -> Bool { peer(request, context)?.isLoopbackPeer ?? false }

    /// The paired device the request's cookie belongs to, or nil.
    func device(_ request: Request) throws -> PairedDevice? {
        guard let token = request.cookies[Self.cookieName]?.value else { return nil }
        return try devices.device(forToken: token)
    }

    /// The cookie that makes a browser a paired device.
    func cookie(_ token: String) -> Cookie {
        Cookie(name: Self.cookieName, value: token, maxAge: Self.cookieMaxAge, path: "/", secure: true, httpOnly: true,
               sameSite: .lax)
    }

    /// Whether the request carries the cookie of a device revoked from this store, so what its browser saved of
    /// Kiosk must go. A cookie the store never knew (a device paired while `serve` used other data) is only
    /// refused: its saved pages and its waiting edits are kept for when that data is served again.
    func carriesRevokedCookie(_ request: Request) -> Bool {
        guard let token = request.cookies[Self.cookieName]?.value else { return false }
        return devices.isRevoked(token: token)
    }

    /// What an unpaired browser gets instead: a page navigation goes to the pairing page (and back afterwards);
    /// anything else (the JSON API, pictures, scripts' fetches) is a 401 with a JSON reason. A revoked device is
    /// also told to forget its cookie and everything it saved of Kiosk (`forgetRevokedDevice`).
    func refusal(_ request: Request, context: WebRequestContext) -> Response {
        var response: Response
        if request.method == .get, request.headers[.accept]?.contains("text/html") == true {
            response = WebController.seeOther(PairingController.path + "?next=" + QueryString.encode(context.path))
        } else {
            response = JSONResponse.error(WebError(status: .unauthorized, title: "Not paired",
                                                   message: "This device is not paired with Kiosk: open \(PairingController.path) "
                                                       + "and enter the code that kiosk devices pair shows.", retryPath: nil))
            response.headers[.wwwAuthenticate] = "KioskPairing realm=\"Kiosk\""
            response.headers[.cacheControl] = "no-store"
        }
        if carriesRevokedCookie(request) { forgetRevokedDevice(&response) }
        return response
    }

    /// Tells a revoked device's browser to drop its device cookie and what it saved of Kiosk — saved pages and
    /// pictures, the outbox, the service worker (`Clear-Site-Data`, honoured over HTTPS by Chromium and
    /// Firefox; Safari drops the cookie and caches). Its edits still waiting are dropped too: a revoked
    /// device may not write.
    func forgetRevokedDevice(_ response: inout Response) {
        response.headers.append(HTTPFields.Element(name: Self.clearSiteData, value: "\"cache\", \"storage\""))
        response.setCookie(Cookie(name: Self.cookieName, value: "", maxAge: 0, path: "/", secure: true, httpOnly: true, sameSite: .lax))
    }

    static let clearSiteData = HTTPFields.Element.Name("Clear-Site-Data")!
}

/// What happened at the pairing page that the person running `serve` should hear of.
enum PairingEvent: Sendable {
    /// A browser at `peer` paired as `device`.
    case paired(PairedDevice, peer: String)
    /// Too many wrong codes, the last from `peer`: the open code no longer works.
    case burned(peer: String)
}

/// The pairing gate in front of every route: loopback peers and the open addresses pass, a paired device passes
/// (its "last seen" noted), anything else is sent to pair.
struct PairingMiddleware: RouterMiddleware {
    let gate: PairingGate

    func handle(_ request: Request, context: WebRequestContext,
                next: (Request, WebRequestContext) async throws -> Response) async throws -> Response {
        if gate.isLoopback(request, context) || PairingGate.isOpen(method: request.method, path: request.uri.path) {
            return try await next(request, context)
        }
        guard let device = try gate.device(request), let token = request.cookies[PairingGate.cookieName]?.value else {
            return gate.refusal(request, context: context)
        }
        // "Last seen" is a convenience for `kiosk devices list`: failing to note it must not refuse the request.
        try? gate.devices.touch(device)
        var context = context
        context.writeScope = .device(device.id)
        // A long answer (the console's live stream) ends once the device is revoked.
        let devices = gate.devices, earlier = context.stillAuthorized
        context.stillAuthorized = { earlier() && devices.isPaired(token: token) }
        return try await next(request, context)
    }
}

/// "Chrome on Android": what `kiosk devices list` calls a device, from its User-Agent. Only the summary is
/// stored, never the header (it is long, and fingerprints the browser to the minor version).
enum UserAgentSummary {
    static func summary(_ userAgent: String?) -> String {
        guard let agent = userAgent, !agent.isEmpty else { return "Unknown browser" }
        let browsers: [(marker: String, name: String)] = [
            ("SamsungBrowser/", "Samsung Internet"), ("Edg", "Edge"), ("OPR/", "Opera"), ("Firefox/", "Firefox"),
            ("FxiOS/", "Firefox"), ("CriOS/", "Chrome"), ("Chrome/", "Chrome"), ("Chromium/", "Chromium"),
            ("Safari/", "Safari"), ("curl/", "curl"),
        ]
        let systems: [(marker: String, name: String)] = [
            ("iPhone", "iPhone"), ("iPad", "iPad"), ("Android", "Android"), ("CrOS", "ChromeOS"), ("Windows", "Windows"),
            ("Macintosh", "macOS"), ("Linux", "Linux"),
        ]
        let browser = browsers.first { agent.contains($0.marker) }?.name ?? "Unknown browser"
        guard let system = systems.first(where: { agent.contains($0.marker) })?.name else { return browser }
        return "\(browser) on \(system)"
    }
}
