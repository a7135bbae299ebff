import Foundation
import Hummingbird
import HummingbirdTesting
import KioskApp
import KioskCore
import KioskStore
import Synchronization
import KioskTestSupport
import Testing
@testable import KioskConsole
@testable import KioskWeb

/// The header through which these tests say which address a request comes from: HummingbirdTesting's router
/// has no socket, so the gate is given this reader instead of the socket's (`PairingGate.peer`).
let testPeerHeader = HTTPFields.Element.Name("X-Test-Peer")!

/// The code every pairing test's window is opened with.
let testCode = PairingCode(digits: "80271946")!

/// The peer a test's request says it comes from (`testPeerHeader`), since the router has no socket.
let testPeer: PeerReader = { request, _ in request.headers[testPeerHeader].flatMap(IPAddress.init(literal:)) }

/// The lines the gate reported for `serve` to print.
final class ReportedLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// Opens a pairing window for `testCode` at the harness's time, as `kiosk devices pair` does.
func openTestWindow(_ harness: Harness) throws {
    _ = try harness.kiosk.devices.openPairingWindow(code: testCode, now: harness.now.date)
}

/// Runs `body` with the router behind a pairing gate whose peer is read from `testPeerHeader`, a pairing
/// window open for `testCode`, and the debugger open to paired devices (its live stream rechecking quickly).
func withPairing(limits: ClientAttempts.Limits = .init(), csrf: CSRFProtection = CSRFProtection(), reported: ReportedLines = ReportedLines(),
                 _ body: @Sendable (Harness, any TestClientProtocol) async throws -> Void) async throws {
    let harness = try await Harness.start()
    do {
        try openTestWindow(harness)
        let gate = PairingGate(devices: harness.kiosk.devices, attempts: ClientAttempts(limits: limits, now: harness.now.dateSource),
                               peer: testPeer, onEvent: { reported.append($0.line) })
        let debug = DebugAccess(token: nil, isLoopback: true, peer: testPeer, recheckInterval: .milliseconds(50))
        let app = Application(router: buildRouter(kiosk: harness.kiosk, csrf: csrf, debugAccess: debug, pairing: gate))
        try await app.test(.router) { client in try await body(harness, client) }
    } catch {
        await harness.stop()
        throw error
    }
    await harness.stop()
}

/// A browser at `address`: sends its cookies, keeps the ones it is given, asks for HTML like a navigation
/// unless told otherwise.
final class Browser: Sendable {
    let client: any TestClientProtocol
    let address: String
    let userAgent: String
    private let jar = Mutex<[String: String]>([:])

    init(_ client: any TestClientProtocol, address: String,
         userAgent: String = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36") {
        self.client = client
        self.address = address
        self.userAgent = userAgent
    }

    func cookie(_ name: String) -> String? { jar.withLock { $0[name] } }
    func setCookie(_ name: String, _ value: String?) { jar.withLock { $0[name] = value } }

    func get(_ uri: String, accept: String = "text/html,application/xhtml+xml") async throws -> Fetched {
        try await send(uri, method: .get, headers: [.accept: accept], body: nil)
    }

    /// A form POST carrying the CSRF token this browser was given (fetching a page first if it has none).
    func post(_ uri: String, form: [(String, String)], headers extra: HTTPFields = [:]) async throws -> Fetched {
        if cookie(CSRFProtection.cookieName) == nil { _ = try await get(PairingController.path) }
        let fields = form + [(CSRFProtection.fieldName, cookie(CSRFProtection.cookieName) ?? "")]
        let body = fields.map { QueryString.encode($0.0) + "=" + QueryString.encode($0.1) }.joined(separator: "&")
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        headers.append(contentsOf: extra)
        return try await send(uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    private func send(_ uri: String, method: HTTPRequest.Method, headers extra: HTTPFields, body: ByteBuffer?) async throws -> Fetched {
        var headers = extra
        headers[testPeerHeader] = address
        headers[.userAgent] = userAgent
        let cookies = jar.withLock { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } }
        if !cookies.isEmpty { headers[.cookie] = cookies.joined(separator: "; ") }
        let fetched = try await client.execute(uri: uri, method: method, headers: headers, body: body) { response in
            Fetched(status: response.status, headers: response.headers, body: String(buffer: response.body),
                    bytes: Array(response.body.readableBytesView))
        }
        for line in fetched.headers[values: .setCookie] {
            let pair = line.prefix { $0 != ";" }.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { setCookie(String(pair[0]), String(pair[1])) }
        }
        return fetched
    }
}

@Suite("Pairing a browser on another machine")
struct PairingTests {
    static let remote = "192.168.1.23"

    @Test("Where Kiosk serves this machine alone, /pair says there is nothing to pair and how a phone reaches it, in the page's language")
    func pairWithoutLAN() async throws {
        try await withWeb { _, client in
            // Given `kiosk serve` without --lan, when a browser opens /pair in English and in Spanish
            let english = try await client.get("/pair")
            let spanish = try await client.get("/pair", headers: [.acceptLanguage: "es"])
            // Then each is a page saying how, not a catalog that is not found
            // (each command a code of its own, which a phone does not break at its hyphens)
            #expect(english.status == .ok && english.body.contains(#"start it with <code class="command">kiosk serve --lan</code>"#),
                    "\(english.body.prefix(400))")
            #expect(spanish.status == .ok && spanish.body.contains(#"inícialo con <code class="command">kiosk serve --lan</code>"#))
            #expect(english.body.contains(#"which <code class="command">kiosk devices pair</code> shows."#))
            #expect(!english.body.contains("named “pair”") && !spanish.body.contains("«pair»"))
        }
    }

    @Test("An unpaired remote browser's navigation goes to the pairing page with where it was going, and the API answers 401 JSON")
    func unpairedIsSentToPair() async throws {
        try await withPairing { _, client in
            // Given a browser on another machine that never paired
            let browser = Browser(client, address: Self.remote)
            // When it opens a list, the JSON API, a picture, the debugger and an unknown address
            let page = try await browser.get("/rickandmorty?page=2")
            let api = try await browser.get("/api/rickandmorty", accept: "application/json")
            let image = try await browser.get("/image?url=x", accept: "image/avif,image/webp,*/*")
            let debug = try await browser.get("/debug")
            let unknown = try await browser.get("/no-such-page")
            // Then the page navigations are sent to /pair, knowing where to come back to
            #expect(page.status == .seeOther)
            #expect(page.header("Location") == "/pair?next=%2Frickandmorty%3Fpage%3D2")
            #expect(debug.header("Location") == "/pair?next=%2Fdebug")
            #expect(unknown.header("Location") == "/pair?next=%2Fno-such-page")
            // And the rest is a 401 with a JSON reason, never the data
            for refused in [api, image] {
                #expect(refused.status == .unauthorized)
                #expect(refused.header("Content-Type") == "application/json; charset=utf-8")
                #expect((try refused.json()["error"] as? String)?.contains("/pair") == true)
                #expect(refused.header("WWW-Authenticate") != nil)
                #expect(refused.header("Content-Security-Policy") == SecurityHeaders.contentSecurityPolicy)
            }
        }
    }

    @Test("What a page and an installing browser load without cookies stays reachable unpaired")
    func openAddresses() async throws {
        try await withPairing { _, client in
            // Given an unpaired remote browser
            let browser = Browser(client, address: Self.remote)
            // When it loads the pairing page, the manifest, the stylesheet, an icon, the service worker's address, and
            // switches the language
            let pair = try await browser.get("/pair?next=/dogs")
            let manifest = try await browser.get("/manifest.webmanifest", accept: "*/*")
            let stylesheet = try await browser.get(StaticAssets.stylesheet.path, accept: "text/css")
            let icon = try await browser.get(StaticAssets.icon192.path, accept: "image/png")
            let worker = try await browser.get("/sw.js", accept: "*/*")
            let favicon = try await browser.get("/favicon.ico", accept: "image/*")
            let language = try await browser.post("/language", form: [("lang", "es"), ("return", "/pair?next=%2Fdogs")])
            // Then each is answered as it is for anyone: the page and files, and no pairing refusal for the worker
            #expect(pair.status == .ok)
            #expect(pair.body.contains("name=\"code\""))
            #expect(pair.body.contains("name=\"next\" value=\"/dogs\""))
            #expect(manifest.status == .ok)
            #expect(stylesheet.status == .ok)
            #expect(icon.status == .ok)
            #expect(worker.status != .unauthorized && worker.status != .seeOther)
            // And the icon browsers ask for by themselves leads to the app's icon
            #expect(favicon.status == .found && favicon.header("Location") == StaticAssets.icon192.path, "\(favicon.status)")
            // And the pairing page's language switch works before pairing
            #expect(language.status == .seeOther)
            #expect(language.header("Location") == "/pair?next=%2Fdogs")
            #expect(browser.cookie(Language.cookieName) == "es")
        }
    }

    @Test("Loopback peers need no pairing, however the socket reports them; a 6to4 address that embeds 127.0.0.1 is not loopback",
          arguments: [("127.0.0.1", true), ("127.8.9.10", true), ("::1", true), ("::ffff:127.0.0.1", true),
                      ("2002:7f00:1::1", false), ("::127.0.0.1", false), ("64:ff9b::7f00:1", false), ("192.168.1.23", false),
                      ("fd00::2", false)])
    func loopbackIsOpen(address: String, open: Bool) async throws {
        try await withPairing { _, client in
            // Given a browser at that address, never paired
            let browser = Browser(client, address: address)
            // When it asks for the JSON API
            let api = try await browser.get("/api/favorites", accept: "application/json")
            // Then only a loopback peer is served
            #expect((api.status == .ok) == open, "\(address)")
            #expect((api.status == .unauthorized) == !open, "\(address)")
        }
    }

    @Test("The right code pairs: a long-lived Secure HttpOnly SameSite=Lax cookie, back to where it was going, and pages open")
    func rightCodePairs() async throws {
        try await withPairing { harness, client in
            // Given an unpaired remote browser sent to the pairing page from a list
            let browser = Browser(client, address: Self.remote)
            _ = try await browser.get("/pair?next=%2Fdogs")
            // When it enters the code as the terminal shows it
            let answer = try await browser.post("/pair", form: [("code", "8027-1946"), ("next", "/dogs")])
            // Then it is sent on to the list with a device cookie for 400 days, for HTTPS only, out of scripts' reach
            #expect(answer.status == .seeOther)
            #expect(answer.header("Location") == "/dogs")
            let cookie = try #require(answer.headers[values: .setCookie].first { $0.hasPrefix(PairingGate.cookieName + "=") })
            for attribute in ["Max-Age=34560000", "Path=/", "Secure", "HttpOnly", "SameSite=Lax"] {
                #expect(cookie.contains(attribute), "\(attribute) in \(cookie)")
            }
            #expect(!cookie.contains("Domain="))
            let token = try #require(browser.cookie(PairingGate.cookieName))
            #expect(token.count == 43)
            // And the list, the API and the debugger's gate now let it through
            #expect(try await browser.get("/dogs").status == .ok)
            #expect(try await browser.get("/api/favorites", accept: "application/json").status == .ok)
            // And the device is listed under its browser's name
            let devices = try harness.kiosk.devices.list()
            #expect(devices.map(\.name) == ["Chrome on Android"])
        }
    }

    @Test("Only the token's hash is stored: the token is nowhere in the database files")
    func tokenNotStoredInClear() async throws {
        try await withPairing { harness, client in
            // Given a paired browser
            let browser = Browser(client, address: Self.remote)
            _ = try await browser.post("/pair", form: [("code", "80271946"), ("next", "/")])
            let token = try #require(browser.cookie(PairingGate.cookieName))
            // When every file of the data directory is read as bytes
            let files = try FileManager.default.contentsOfDirectory(at: harness.directory, includingPropertiesForKeys: nil)
            let bytes = try files.flatMap { Array(try Data(contentsOf: $0)) }
            // Then neither the token nor the code appears; the token's SHA-256 finds the device
            #expect(!files.isEmpty)
            #expect(bytes.firstRange(of: Array(token.utf8)) == nil)
            #expect(bytes.firstRange(of: Array("80271946".utf8)) == nil)
            #expect(try harness.kiosk.database.device(tokenHash: PairedDevices.hash(token)) != nil)
        }
    }

    @Test("A wrong code is refused with the tries left; past 5 in a minute even the right code is a 429 with Retry-After")
    func wrongCodesAreRateLimited() async throws {
        try await withPairing { harness, client in
            // Given a remote browser
            let browser = Browser(client, address: Self.remote)
            // When it tries five wrong codes
            var answers: [Fetched] = []
            for guess in ["00000000", "11111111", "22222222", "33333333", "44444444"] {
                answers.append(try await browser.post("/pair", form: [("code", guess)]))
                await harness.now.advance(by: .seconds(1))
            }
            // Then each is refused on the page, saying how many tries are left, and sets no device cookie
            #expect(answers.allSatisfy { $0.status == .forbidden })
            #expect(answers[0].body.contains("That is not the pairing code"))
            #expect(answers[0].body.contains("4 more tries this minute."))
            #expect(answers[3].body.contains("1 more try this minute."))
            #expect(browser.cookie(PairingGate.cookieName) == nil)
            // And the sixth, even right, is not checked: 429, with when to come back, said on the page too
            let limited = try await browser.post("/pair", form: [("code", "80271946")])
            #expect(limited.status == .tooManyRequests)
            #expect(limited.header("Retry-After") == "55")
            #expect(limited.body.contains("Too many wrong codes were tried. Try again in 55 s."))
            #expect(limited.body.contains("role=\"alert\""))
            #expect(browser.cookie(PairingGate.cookieName) == nil)
            // And another machine is not held back by it
            let other = Browser(client, address: "192.168.1.40")
            #expect(try await other.post("/pair", form: [("code", "80271946")]).status == .seeOther)
            // And once the first wrong code is a minute old, the right code of a new window pairs
            await harness.now.advance(by: .seconds(55))
            try openTestWindow(harness)
            #expect(try await browser.post("/pair", form: [("code", "80271946")]).status == .seeOther)
            #expect(browser.cookie(PairingGate.cookieName) != nil)
        }
    }

    @Test("A code pairs one browser only: the second browser to enter it is told no code is open")
    func singleUse() async throws {
        try await withPairing { harness, client in
            // Given a browser that paired with the open code
            #expect(try await Browser(client, address: Self.remote).post("/pair", form: [("code", "80271946")]).status == .seeOther)
            // When another machine enters the same code
            let second = try await Browser(client, address: "192.168.1.77").post("/pair", form: [("code", "8027-1946")])
            // Then it is refused, told how to get a code, and only the first device exists
            #expect(second.status == .forbidden)
            #expect(second.body.contains("No pairing code is open"))
            #expect(second.body.contains(#"<code class="command">kiosk devices pair</code>"#))
            #expect(try harness.kiosk.devices.list().count == 1)
        }
    }

    @Test("A code stops working 10 minutes after it was shown")
    func codesExpire() async throws {
        try await withPairing { harness, client in
            // Given the open code, 10 minutes and a second later
            await harness.now.advance(by: .seconds(PairedDevices.pairingWindow + 1))
            // When a browser enters it
            let answer = try await Browser(client, address: Self.remote).post("/pair", form: [("code", "80271946")])
            // Then no code is open and nothing is paired
            #expect(answer.status == .forbidden)
            #expect(answer.body.contains("No pairing code is open"))
            #expect(try harness.kiosk.devices.list().isEmpty)
            // And a code shown a minute before its end still works
            try openTestWindow(harness)
            await harness.now.advance(by: .seconds(PairedDevices.pairingWindow - 60))
            #expect(try await Browser(client, address: Self.remote).post("/pair", form: [("code", "80271946")]).status == .seeOther)
        }
    }

    @Test("A new code replaces the one shown before")
    func newCodeReplacesOld() async throws {
        try await withPairing { harness, client in
            // Given the open test code, when another window is opened (a second `kiosk devices pair`)
            let window = try harness.kiosk.devices.openPairingWindow(now: harness.now.date)
            // Then the old code is refused and the new one pairs
            #expect(try await Browser(client, address: Self.remote).post("/pair", form: [("code", "80271946")]).status == .forbidden)
            let paired = try await Browser(client, address: "192.168.1.78").post("/pair", form: [("code", window.code.displayed)])
            #expect(paired.status == .seeOther)
        }
    }

    @Test("Twenty wrong codes, spread over machines, burn the code: even the right one no longer pairs, and serve is told")
    func burnedAfterRepeatedFailures() async throws {
        let reported = ReportedLines()
        try await withPairing(reported: reported) { harness, client in
            // Given 19 wrong codes from four machines (under each one's own limit)
            for attempt in 0..<19 {
                let answer = try await Browser(client, address: "10.0.0.\(attempt / 5 + 1)").post("/pair", form: [("code", "00000000")])
                #expect(answer.status == .forbidden)
                #expect(answer.body.contains("That is not the pairing code"))
            }
            #expect(reported.all.isEmpty)
            // When a twentieth wrong code comes from a fifth machine
            let last = try await Browser(client, address: "10.0.0.9").post("/pair", form: [("code", "11111111")])
            // Then the page says the code no longer works and how to get another, and serve hears of it
            #expect(last.status == .forbidden)
            #expect(last.body.contains("no longer works"))
            #expect(reported.all == ["The pairing code was burned after 20 wrong tries (the last from 10.0.0.9); "
                                     + "`kiosk devices pair` shows a new one."])
            // And the right code is refused from then on
            let right = try await Browser(client, address: Self.remote).post("/pair", form: [("code", "80271946")])
            #expect(right.status == .forbidden)
            #expect(right.body.contains("No pairing code is open"))
            #expect(try harness.kiosk.devices.list().isEmpty)
        }
    }

    @Test("Each pairing is reported for serve to print, with the device's name, address and id")
    func pairingIsReported() async throws {
        let reported = ReportedLines()
        try await withPairing(reported: reported) { _, client in
            // When a phone pairs
            _ = try await Browser(client, address: Self.remote).post("/pair", form: [("code", "80271946")])
            // Then serve is told who paired and how to undo it
            #expect(reported.all == ["Paired Chrome on Android (192.168.1.23) as device 1; `kiosk devices revoke 1` undoes it."])
        }
    }

    @Test("A stranger's IPv6 /64 counts as one client, and loopback as one; neighbours count one address each, so one cannot lock the others out")
    func clientKeys() {
        // Given the keys wrong codes are counted under by a --lan listener whose machine has 2001:db8:1:2::/64,
        // and by one that serves every peer
        let lan = ClientAttempts(now: { Date() }, peers: .localNetworks(also: NeighbourNetworks([IPNetwork(IPAddress(literal: "2001:db8:1:2::")!, prefixLength: 64)!])))
        let open = ClientAttempts(now: { Date() }, peers: .any())
        func key(_ attempts: ClientAttempts, _ address: String) -> String { attempts.client(IPAddress(literal: address)) }
        // Then phones of the home network's /64, of a ULA or link-local network, count apart
        #expect(key(lan, "2001:db8:1:2::10") != key(lan, "2001:db8:1:2:aaaa::99"))
        #expect(key(lan, "fd00::10") != key(lan, "fd00::11"))
        #expect(key(lan, "fe80::1") != key(lan, "fe80::2"))
        // And a stranger's addresses of one /64 count as one, other /64s apart
        #expect(key(open, "2001:db8:9:2::10") == key(open, "2001:db8:9:2:aaaa::99"))
        #expect(key(open, "2001:db8:9:2::10") != key(open, "2001:db8:9:3::10"))
        // And with every peer served, phones of the machine's own global /64 are still neighbours, one address each
        let openOnLAN = ClientAttempts(now: { Date() },
                                       peers: .any(neighbours: NeighbourNetworks([IPNetwork(IPAddress(literal: "2001:db8:1:2::")!, prefixLength: 64)!])))
        #expect(key(openOnLAN, "2001:db8:1:2::2") != key(openOnLAN, "2001:db8:1:2::3"))
        #expect(key(openOnLAN, "2001:db8:9:2::10") == key(openOnLAN, "2001:db8:9:2:aaaa::99"))
        // And an IPv4 peer of a dual-stack socket counts as itself, other IPv4 hosts apart
        #expect(key(lan, "::ffff:192.168.1.5") == key(lan, "192.168.1.5"))
        #expect(key(lan, "192.168.1.5") != key(lan, "192.168.1.6"))
        // And every loopback address is this machine, one client however it sends (127.0.0.0/8 has 16 million)
        #expect(Set(["127.0.0.1", "127.0.9.44", "127.255.0.3", "::1", "::ffff:127.0.0.2"].map { key(open, $0) }).count == 1)
        #expect(key(open, "127.0.0.1") != key(open, "192.168.1.5"))
    }

    @Test("Revoking a device stops its cookie at its next request")
    func revocation() async throws {
        try await withPairing { harness, client in
            // Given a paired browser that reads a list
            let browser = Browser(client, address: Self.remote)
            _ = try await browser.post("/pair", form: [("code", "80271946")])
            #expect(try await browser.get("/api/favorites", accept: "application/json").status == .ok)
            // When its device is revoked, as `kiosk devices revoke` does
            let device = try #require(try harness.kiosk.devices.list().first)
            try harness.kiosk.devices.revoke(id: device.id)
            // Then its very next request is refused
            #expect(try await browser.get("/api/favorites", accept: "application/json").status == .unauthorized)
            #expect(try await browser.get("/favorites").header("Location") == "/pair?next=%2Ffavorites")
        }
    }

    @Test("A revoked device is told to forget its cookie and everything its browser saved of Kiosk")
    func revokedDeviceForgetsWhatItSaved() async throws {
        try await withPairing { harness, client in
            // Given a paired browser, then revoked
            let browser = Browser(client, address: Self.remote)
            _ = try await browser.post("/pair", form: [("code", "80271946")])
            let token = try #require(browser.cookie(PairingGate.cookieName))
            try harness.kiosk.devices.revoke(id: try #require(try harness.kiosk.devices.list().first).id)
            // When it opens a page, the JSON API, and the pairing page it is sent to
            let page = try await browser.get("/rickandmorty")
            browser.setCookie(PairingGate.cookieName, token)
            let api = try await browser.get("/api/favorites", accept: "application/json")
            browser.setCookie(PairingGate.cookieName, token)
            let pair = try await browser.get("/pair")
            // Then each answer clears the site's storage and caches and expires the device cookie
            for answer in [page, api, pair] {
                #expect(answer.header("Clear-Site-Data") == "\"cache\", \"storage\"")
                #expect(answer.headers[values: .setCookie].contains { $0.hasPrefix(PairingGate.cookieName + "=;") && $0.contains("Max-Age=0") })
            }
            // And a browser that was never paired is not told to clear anything
            let stranger = try await Browser(client, address: "192.168.1.60").get("/rickandmorty")
            #expect(stranger.header("Clear-Site-Data") == nil)
            // And neither is one whose cookie this store never knew (paired while serve used other data): it is
            // refused, and keeps what it saved and the edits it holds for when that data is served again
            let elsewhere = Browser(client, address: "192.168.1.61")
            elsewhere.setCookie(PairingGate.cookieName, String(repeating: "Q", count: 43))
            let refused = try await elsewhere.get("/rickandmorty")
            #expect(refused.status == .seeOther)
            #expect(refused.header("Clear-Site-Data") == nil)
            #expect(elsewhere.cookie(PairingGate.cookieName) == String(repeating: "Q", count: 43))
        }
    }

    @Test("A revoked device's open live stream of the console ends")
    func revocationEndsLiveStream() async throws {
        try await withPairing { harness, client in
            // Given a paired browser following the console's live stream
            let browser = Browser(client, address: Self.remote)
            _ = try await browser.post("/pair", form: [("code", "80271946")])
            // (its "last seen" stale, so the gate notes this request: that says the stream is past the gate)
            await harness.now.advance(by: .seconds(PairedDevice.lastSeenResolution + 1))
            let stream = Task { try await browser.get("/debug/events", accept: "text/event-stream") }
            let deadline = ContinuousClock.now + .seconds(10)
            while try harness.kiosk.devices.list().first?.lastSeenAt != harness.now.date, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            // When its device is revoked
            try harness.kiosk.devices.revoke(id: try #require(try harness.kiosk.devices.list().first).id)
            // Then the stream ends within seconds (the router hands the whole body over only once it has); after 10 s
            // the test gives up and cancels it
            let clock = ContinuousClock(), revoked = clock.now
            let giveUp = Task {
                try await Task.sleep(for: .seconds(10))
                stream.cancel()
            }
            let answer = try await stream.value
            giveUp.cancel()
            #expect(clock.now - revoked < .seconds(5), "the stream was still open 5 s after the revocation")
            #expect(answer.status == .ok)
            #expect(answer.body.hasPrefix("retry: "))
        }
    }

    @Test("An idempotency key belongs to the device that sent it: another device's write with the same key is its own")
    func writeKeysPerDevice() async throws {
        try await withPairing { harness, client in
            // Given two paired phones
            let phone = Browser(client, address: Self.remote), tablet = Browser(client, address: "192.168.1.24")
            _ = try await phone.post("/pair", form: [("code", "80271946")])
            try openTestWindow(harness)
            _ = try await tablet.post("/pair", form: [("code", "80271946")])
            let key: HTTPFields = [HTTPFields.Element.Name("Idempotency-Key")!: "4f0c2d7e-key-from-the-phone"]
            #expect(try await phone.get("/rickandmorty").status == .ok)
            // When the phone stars a character with a key, and the tablet stars another with the same key
            let first = try await phone.post("/favorites/rickandmorty/1", form: [("action", "add")], headers: key)
            let second = try await tablet.post("/favorites/rickandmorty/2", form: [("action", "add")], headers: key)
            // Then both are applied: the tablet's is neither refused as a reused key nor answered with the phone's answer
            #expect(first.status == .seeOther, "\(first.status): \(first.body.prefix(300))")
            #expect(second.status == .seeOther, "\(second.status): \(second.body.prefix(300))")
            #expect(second.header("X-Kiosk-Replayed") == nil)
            #expect(Set(try harness.kiosk.catalog.favorites().map(\.itemID)) == ["1", "2"])
        }
    }

    @Test("A forged or tampered device cookie opens nothing")
    func forgedCookie() async throws {
        try await withPairing { _, client in
            // Given a paired browser's token, changed in its last character, and a made-up one
            let browser = Browser(client, address: Self.remote)
            _ = try await browser.post("/pair", form: [("code", "80271946")])
            let token = try #require(browser.cookie(PairingGate.cookieName))
            for forged in [String(token.dropLast()) + (token.last == "A" ? "B" : "A"), "x", String(repeating: "A", count: 43)] {
                // When a browser presents it
                let other = Browser(client, address: "192.168.1.99")
                other.setCookie(PairingGate.cookieName, forged)
                // Then it is refused
                #expect(try await other.get("/api/favorites", accept: "application/json").status == .unauthorized)
            }
        }
    }

    @Test("After pairing, only a path of this site is followed: anything else goes home", arguments: [
        ("/dogs?edit=1", "/dogs?edit=1"), ("//evil.example/x", "/"), ("https://evil.example/", "/"), ("/\\evil.example", "/"),
        ("/pair", "/"), ("/pair?next=/x", "/"), ("", "/"), ("javascript:alert(1)", "/"),
    ])
    func nextIsLocal(next: String, expected: String) async throws {
        try await withPairing { _, client in
            // Given a remote browser that enters the right code with that `next`
            let browser = Browser(client, address: Self.remote)
            let answer = try await browser.post("/pair", form: [("code", "80271946"), ("next", next)])
            // Then it is sent to that path only when it is one of this site
            #expect(answer.header("Location") == expected)
            // And the page renders the same rule in its hidden field
            let page = try await browser.get("/pair?next=" + QueryString.encode(next))
            #expect(page.body.contains("name=\"next\" value=\"\(HTML.escape(expected))\""))
        }
    }

    @Test("The pairing form needs the page's CSRF token, like every form")
    func csrf() async throws {
        try await withPairing { harness, client in
            // Given a POST with the right code but no CSRF field or cookie (another site's form)
            let forged = try await client.execute(uri: "/pair", method: .post,
                                                  headers: [.contentType: "application/x-www-form-urlencoded", testPeerHeader: Self.remote],
                                                  body: ByteBuffer(string: "code=80271946")) { $0.status }
            // Then it is refused, and no device is paired
            #expect(forged == .forbidden)
            #expect(try harness.kiosk.devices.list().isEmpty)
        }
    }

    @Test("The pairing code never reaches a page, and printing the code's value hides it")
    func codeIsSecret() async throws {
        try await withPairing { _, client in
            // Given the pages a remote browser sees while pairing, rightly and wrongly
            let browser = Browser(client, address: Self.remote)
            let pages = [try await browser.get("/pair"), try await browser.post("/pair", form: [("code", "1")])]
            // Then none holds the code
            for page in pages { #expect(!page.body.contains("80271946") && !page.body.contains("8027-1946")) }
            // And the code's description, what string interpolation in a log would show, is not the code
            #expect("\(testCode)" == "••••-••••")
            #expect(testCode.displayed == "8027-1946")
        }
    }

    @Test("The pairing page is in Spanish for a Spanish browser")
    func spanish() async throws {
        try await withPairing { _, client in
            // Given a remote browser that prefers Spanish
            // When it opens the pairing page
            let page = try await client.execute(uri: "/pair", method: .get,
                                                headers: [testPeerHeader: Self.remote, .acceptLanguage: "es-ES,es;q=0.9"]) {
                String(buffer: $0.body)
            }
            // Then the page is in Spanish
            #expect(page.contains("Vincular este dispositivo"))
            #expect(page.contains("<html lang=\"es\">"))
        }
    }

    @Test("Under TLS the CSRF cookie and the language's are Secure")
    func secureCSRFCookie() async throws {
        try await withPairing(csrf: CSRFProtection(secureCookies: true)) { _, client in
            // Given the protection an HTTPS listener uses
            // When a first page hands out the CSRF cookie
            let browser = Browser(client, address: "127.0.0.1")
            let page = try await browser.get("/")
            // Then the browser is told to send it over HTTPS only
            let cookie = try #require(page.headers[values: .setCookie].first { $0.hasPrefix(CSRFProtection.cookieName) })
            #expect(cookie.contains("; Secure"))
            // And so is the language chosen (one sent in clear, anyone on the network could set)
            let chosen = try await browser.post("/language", form: [("lang", "es"), ("return", "/")])
            let language = try #require(chosen.headers[values: .setCookie].first { $0.hasPrefix("kiosk_lang=es") }, "\(chosen.headers)")
            #expect(language.contains("; Secure"), "\(language)")
        }
    }

    @Test("Codes are 8 digits drawn from the injected generator, typed with or without separators")
    func codes() {
        // Given a generator that always gives the same number
        var generator = FixedGenerator()
        // When codes are drawn
        let code = PairingCode.random(using: &generator)
        // Then the code is 8 digits, zero-padded, and typing it with a dash or spaces reads as it while other text does not
        #expect(code.digits.count == 8 && code.digits.allSatisfy(\.isNumber))
        #expect(PairingCode.digits(of: code.displayed) == code.digits)
        #expect(PairingCode.digits(of: "8027 1946") == "80271946" && PairingCode.digits(of: " 80271946 ") == "80271946")
        #expect(PairingCode.digits(of: "8027194") == nil && PairingCode.digits(of: "802719460") == nil)
        #expect(PairingCode.digits(of: "abcdefgh") == nil)
        #expect(PairingCode(digits: "8027194") == nil && PairingCode(digits: "8027194a") == nil)
    }

    @Test("A User-Agent is summarised as browser and system", arguments: [
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
         "Safari on iPhone"),
        ("Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0 Mobile Safari/537.36",
         "Samsung Internet on Android"),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36 Edg/126.0",
         "Edge on Windows"),
        ("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "Firefox on Linux"),
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0 Safari/537.36", "Chrome on Linux"),
        ("curl/8.5.0", "curl"), ("", "Unknown browser"),
    ])
    func userAgents(agent: String, expected: String) {
        // Given a browser's User-Agent, when it is summarised, then it reads as the browser and its system
        #expect(UserAgentSummary.summary(agent) == expected)
    }
}

/// Always the same draw: 42.
struct FixedGenerator: RandomNumberGenerator {
    mutating func next() -> UInt64 { 42 }
}
