import Foundation
import Hummingbird
import KioskApp
import KioskCore
import Synchronization

/// The code a browser on another machine enters once to pair with `serve --lan`: 8 random digits, shown as
/// `1234-5678`, valid while that process runs. It is a secret: `description` hides it, so a log line or an
/// error that interpolates it shows nothing; only `displayed`, for `serve`'s own terminal line, has it.
public struct PairingCode: Sendable, CustomStringConvertible {
    /// The 8 digits.
    let digits: String

    /// A code of exactly 8 ASCII digits.
    init?(digits: String) {
        guard digits.utf8.count == 8, digits.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        self.digits = digits
    }

    /// A code drawn uniformly from `generator` (tests inject theirs).
    public static func random(using generator: inout some RandomNumberGenerator) -> PairingCode {
        let value = Int.random(in: 0..<100_000_000, using: &generator)
        let text = String(value)
        return PairingCode(digits: String(repeating: "0", count: 8 - text.count) + text)!
    }

    /// A code from the system's cryptographically secure generator.
    public static func random() -> PairingCode {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// "1234-5678": for the terminal line `serve` prints, and nowhere else.
    public var displayed: String { String(digits.prefix(4)) + "-" + String(digits.suffix(4)) }

    /// Never the code.
    public var description: String { "••••-••••" }

    /// Whether `input` is this code, however it was typed ("1234-5678", "1234 5678", "12345678"), compared in
    /// constant time so response times tell a guesser nothing.
    func matches(_ input: String) -> Bool {
        let typed = String(input.unicodeScalars.filter { $0 != "-" && $0 != " " && $0 != "\u{A0}" }.map(Character.init))
        return CSRFProtection.constantTimeEqual(typed, digits)
    }
}

/// Wrong pairing codes over a sliding window: at most `perClient` attempts per client address and `overall`
/// in all, so guessing 8 digits takes years. Every attempt counts when it is made (two at once cannot both
/// slip under the limit); a right code clears its client's count.
final class PairingAttempts: Sendable {
    /// The limits: 5 attempts a minute per client, 30 in all.
    struct Limits: Sendable {
        var perClient = 5
        var overall = 30
        var window: TimeInterval = 60
    }

    /// Whether an attempt may be checked: with how many are left to this client, or after how many seconds.
    enum Decision: Sendable, Equatable {
        case allowed(remaining: Int)
        case limited(retryAfter: Int)
    }

    private struct State {
        var byClient: [String: [Date]] = [:]
        var overall: [Date] = []
    }

    let limits: Limits
    private let now: @Sendable () -> Date
    private let state = Mutex(State())

    init(limits: Limits = Limits(), now: @escaping @Sendable () -> Date) {
        self.limits = limits
        self.now = now
    }

    /// Counts an attempt by `client` unless a limit is reached, in which case nothing is counted.
    func attempt(by client: String) -> Decision {
        let now = now()
        let start = now.addingTimeInterval(-limits.window)
        return state.withLock { state in
            state.overall.removeAll { $0 <= start }
            // Forgetting every client whose attempts are all old keeps the table as small as the overall limit.
            state.byClient = state.byClient.compactMapValues { dates in
                let recent = dates.filter { $0 > start }
                return recent.isEmpty ? nil : recent
            }
            let mine = state.byClient[client] ?? []
            if mine.count >= limits.perClient { return .limited(retryAfter: retryAfter(mine[0], now: now)) }
            if state.overall.count >= limits.overall { return .limited(retryAfter: retryAfter(state.overall[0], now: now)) }
            state.byClient[client] = mine + [now]
            state.overall.append(now)
            return .allowed(remaining: limits.perClient - mine.count - 1)
        }
    }

    /// A right code: the client's earlier wrong ones no longer count against it.
    func succeeded(by client: String) {
        _ = state.withLock { $0.byClient.removeValue(forKey: client) }
    }

    private func retryAfter(_ oldest: Date, now: Date) -> Int {
        max(1, Int(oldest.addingTimeInterval(limits.window).timeIntervalSince(now).rounded(.up)))
    }
}

/// Who may use a `serve --lan` listener: loopback peers as before, and other machines only once paired — a
/// cookie whose token the store knows, looked up on every request so a revocation counts at once.
struct PairingGate: Sendable {
    /// This process's code.
    let code: PairingCode
    /// The paired devices (the store, through `Kiosk`).
    let devices: PairedDevices
    /// Wrong codes, rate-limited.
    let attempts: PairingAttempts
    /// The peer's address: the socket's, except in tests, which pretend to be another machine
    /// (HummingbirdTesting's router has no socket).
    let peer: @Sendable (Request, WebRequestContext) -> IPAddress?

    /// `__Host-`: the browser keeps it only if it is Secure, for the whole site, and set by this host itself.
    static let cookieName = "__Host-kiosk_device"
    /// 400 days, the longest a browser keeps a cookie (RFC 6265bis).
    static let cookieMaxAge = 400 * 86_400

    /// The peer as `WebRequestContext` has it.
    static let socketPeer: @Sendable (Request, WebRequestContext) -> IPAddress? = { _, context in
        context.remoteAddress?.ipAddress.flatMap(IPAddress.init(literal:))
    }

    /// Whether a connection from `address` comes from this machine: 127.0.0.0/8, `::1`, or either as a
    /// dual-stack socket reports IPv4 (`::ffff:127.0.0.1`). Stricter than `IPAddress.isLoopback`, which also
    /// reads 6to4 and NAT64 forms (a guard for outbound requests): a LAN host can hold such an address, while
    /// the kernel drops packets from outside that claim these.
    static func isLoopbackPeer(_ address: IPAddress?) -> Bool {
        guard let address = address.map(unmapped) else { return false }
        if address.bytes.count == 4 { return address.bytes[0] == 127 }
        return address.bytes[0..<15].allSatisfy({ $0 == 0 }) && address.bytes[15] == 1
    }

    /// The IPv4 address a dual-stack socket reports as `::ffff:a.b.c.d`, or `address` itself.
    static func unmapped(_ address: IPAddress) -> IPAddress {
        let bytes = address.bytes
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return address }
        return IPAddress(bytes: Array(bytes[12..<16])) ?? address
    }

    /// What an unpaired browser may still fetch: the pairing page and its form, the language switch on it,
    /// and what a page or an installing browser loads without cookies (the manifest, `/static/*` — icons,
    /// styles and scripts, public and content-addressed —, the service worker, the favicon).
    static func isOpen(method: HTTPRequest.Method, path: String) -> Bool {
        switch method {
        case .get:
            if path.hasPrefix("/static/") { return !path.dropFirst("/static/".count).contains("/") }
            return path == PairingController.path || path == WebManifest.path || path == ServiceWorker.path || path == "/favicon.ico"
        case .post:
            return path == PairingController.path || path == "/language"
        default:
            return false
        }
    }

    /// The key wrong codes are counted under: the address, or an IPv6 address's /64 (one host can use any
    /// address of its network's /64).
    func client(_ request: Request, _ context: WebRequestContext) -> String { Self.client(peer(request, context)) }

    /// The key of `address` (see `client(_:_:)`).
    static func client(_ address: IPAddress?) -> String {
        guard let address = address.map(unmapped) else { return "unknown" }
        guard address.bytes.count == 16 else { return address.description }
        return Hex.encode(address.bytes.prefix(8)) + "::/64"
    }

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

    /// What an unpaired browser gets instead: a page navigation goes to the pairing page (and back afterwards);
    /// anything else (the JSON API, pictures, scripts' fetches) is a 401 with a JSON reason.
    func refusal(_ request: Request, context: WebRequestContext) -> Response {
        if request.method == .get, request.headers[.accept]?.contains("text/html") == true {
            return WebController.seeOther(PairingController.path + "?next=" + QueryString.encode(context.path))
        }
        var response = JSONResponse.error(WebError(status: .unauthorized, title: "Not paired",
                                                   message: "This device is not paired with Kiosk: open \(PairingController.path) "
                                                       + "and enter the code that kiosk serve --lan shows.", retryPath: nil))
        response.headers[.wwwAuthenticate] = "KioskPairing realm=\"Kiosk\""
        response.headers[.cacheControl] = "no-store"
        return response
    }
}

/// The pairing gate in front of every route: loopback peers and the open addresses pass, a paired device passes
/// (its "last seen" noted), anything else is sent to pair.
struct PairingMiddleware: RouterMiddleware {
    let gate: PairingGate

    func handle(_ request: Request, context: WebRequestContext,
                next: (Request, WebRequestContext) async throws -> Response) async throws -> Response {
        if PairingGate.isLoopbackPeer(gate.peer(request, context)) || PairingGate.isOpen(method: request.method, path: request.uri.path) {
            return try await next(request, context)
        }
        guard let device = try gate.device(request) else { return gate.refusal(request, context: context) }
        // "Last seen" is a convenience for `kiosk devices list`: failing to note it must not refuse the request.
        try? gate.devices.touch(device)
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
