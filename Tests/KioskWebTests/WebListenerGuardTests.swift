import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import KioskApp
import KioskCore
import KioskDemoUpstream
import NIOCore
import NIOHTTP1
import NIOPosix
import KioskTestSupport
import Testing
@testable import KioskWeb

/// One request over a real socket with the Host header a browser would send for `host`.
struct RawExchange: Sendable {
    let status: Int
    let headers: HTTPHeaders
    let body: String
}

func exchange(_ http: HTTPClient, port: Int, method: HTTPMethod = .GET, path: String, host: String,
              headers extra: [(String, String)] = [], body: String? = nil) async throws -> RawExchange {
    var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
    request.method = method
    request.headers.add(name: "Host", value: host)
    for (name, value) in extra { request.headers.add(name: name, value: value) }
    if let body { request.body = .bytes(ByteBuffer(string: body)) }
    let response = try await http.execute(request, timeout: .seconds(10))
    let bytes = try await response.body.collect(upTo: 1 << 20)
    return RawExchange(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
}

@Suite("Every listener answers only its own names (DNS rebinding)")
struct WebListenerGuardTests {
    @Test("A request for a rebound name is refused with 421 on every route family, and touches no state")
    func reboundNameRefused() async throws {
        try await withLiveWeb { harness, _, http, port in
            // Given a page on rebound.example whose name now points at 127.0.0.1, and what Kiosk holds before
            let host = "rebound.example:\(port)"
            let origin = "http://\(host)"
            let csrf = String(repeating: "a", count: 64)
            let image = try await harness.listedPictureURI()
            let dog = try await Self.firstDog(harness)
            try harness.kiosk.debugger.flush()
            let loggedBefore = try harness.kiosk.debugger.count()
            let upstreamBefore = await harness.demo.requestCount(pathPrefix: "/")
            // When it reads pages, the JSON API, the debugger, its live stream, the HAR export, a picture and static
            // files, and writes a rule, a favorite and a dogs edit
            let reads = ["/", "/rickandmorty", "/rickandmorty/1", "/api/rickandmorty", "/api/connectivity", "/debug",
                         "/debug/api/requests", "/debug/events", "/debug/har", image, StaticAssets.stylesheet.path, "/sw.js",
                         "/manifest.webmanifest"]
            var answers: [(String, RawExchange)] = []
            for path in reads {
                answers.append((path, try await exchange(http, port: port, path: path, host: host, headers: [("Origin", origin)])))
            }
            answers.append(("POST rule", try await exchange(
                http, port: port, method: .POST, path: "/debug/api/rules", host: host,
                headers: [("Origin", origin), ("Content-Type", "application/json")],
                body: #"{"match": {"endpoint": "rickandmorty.characters"}, "actions": {"status": 503}}"#)))
            for path in ["/favorites/rickandmorty/1", "/dogs/\(dog)/delete"] {
                answers.append(("POST \(path)", try await exchange(
                    http, port: port, method: .POST, path: path, host: host,
                    headers: [("Origin", origin), ("Content-Type", "application/x-www-form-urlencoded"),
                              ("Cookie", "\(CSRFProtection.cookieName)=\(csrf)")],
                    body: "action=add&csrf=\(csrf)")))
            }
            // Then each is a 421 in plain text naming the host, with no cookie handed out
            for (what, answer) in answers {
                #expect(answer.status == 421, "\(what): \(answer.status)")
                #expect(answer.headers.first(name: "Content-Type") == "text/plain; charset=utf-8", "\(what)")
                #expect(answer.body.contains("does not answer to the name \u{201C}rebound.example\u{201D}"), "\(what)")
                #expect(answer.body.contains("--allowed-host rebound.example"), "\(what)")
                #expect(answer.headers["Set-Cookie"].isEmpty, "\(what)")
            }
            // And nothing changed: no rule, no favorite, the dogs as they were, no upstream request, no log record
            #expect(try harness.kiosk.debugger.rules.all().isEmpty)
            #expect(try harness.kiosk.catalog.favorites().isEmpty)
            #expect(await harness.demo.requestCount(pathPrefix: "/") == upstreamBefore)
            try harness.kiosk.debugger.flush()
            #expect(try harness.kiosk.debugger.count() == loggedBefore)
            #expect(try await harness.kiosk.catalog.page(PageRequest(source: .dogs)).page.items.count == DemoData.dogsCount)
        }
    }

    @Test("A HEAD for a rebound name is refused with the headers alone, so the connection's next answer is read right")
    func headRefusalHasNoBody() async throws {
        try await withLiveWeb { _, _, http, port in
            // When a HEAD and then a GET are sent for a rebound name (AHC reuses the connection)
            let head = try await exchange(http, port: port, method: .HEAD, path: "/api/connectivity", host: "rebound.example")
            let get = try await exchange(http, port: port, path: "/api/connectivity", host: "localhost")
            // Then the HEAD is a 421 without a body, and the GET after it is answered as usual
            #expect(head.status == 421 && head.body.isEmpty)
            #expect(get.status == 200 && get.body.contains("\"online\""))
        }
    }

    @Test("The machine's own networks: an IPv6 address stands for its /64, IPv4 for its netmask but no wider than /16; tunnels and local ranges for none")
    func neighbourNetworks() {
        func network(_ address: String, _ mask: String?) -> String? {
            MachineAddresses.neighbours(of: IPAddress(literal: address)!, netmask: mask.flatMap(IPAddress.init(literal:)))?.description
        }
        #expect(network("2001:db8:1:2::5", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff") == "2001:db8:1:2::5/64")
        #expect(network("2001:db8:1:2::5", "ffff::") == "2001:db8:1:2::5/64")
        #expect(network("203.0.113.10", "255.255.255.0") == "203.0.113.10/24")
        #expect(network("203.0.113.10", "255.0.0.0") == "203.0.113.10/16")
        #expect(network("203.0.113.10", nil) == "203.0.113.10/32")
        #expect(network("2002:cb00:710a::1", "ffff::") == nil)
        #expect(network("2001:0:4136:e378::1", nil) == nil)
        #expect(network("192.168.1.4", "255.255.255.0") == nil)
        #expect(network("fd00::4", nil) == nil)
    }

    @Test("Loopback names and addresses, and names given with --allowed-host, are answered", arguments: [
        "localhost", "127.0.0.1", "[::1]", "LOCALHOST.", "app.localhost", "127.0.0.2", "kiosk.example", "phone.lan.example",
    ])
    func ownNamesAnswered(name: String) async throws {
        let configuration = WebConfiguration(host: "127.0.0.1", port: 0, allowedHosts: ["kiosk.example", ".lan.example"])
        try await withLiveWeb(configuration) { _, _, http, port in
            // When a request names the listener so, then it is answered
            let answer = try await exchange(http, port: port, path: "/api/connectivity", host: "\(name):\(port)")
            #expect(answer.status == 200, "\(name): \(answer.body)")
        }
    }

    @Test("Two Host headers, or one that is not a host, are a 400", arguments: [
        [("Host", "localhost"), ("Host", "rebound.example")], [("Host", "localhost@rebound.example")], [("Host", "local host")],
        [("Host", "localhost:80x")], [("Host", "[::1")],
    ])
    func malformedHost(headers: [(String, String)]) async throws {
        try await withLiveWeb { _, _, http, port in
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/connectivity")
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            let response = try await http.execute(request, timeout: .seconds(10))
            #expect(response.status == .badRequest, "\(headers)")
        }
    }

    @Test("A request whose target is a whole URL is judged by the URL's host, not its Host header (RFC 9112 §3.2.2)")
    func absoluteFormJudgedByItsAuthority() async throws {
        try await withLiveWeb { _, _, _, port in
            // Given requests whose target names a host of its own, sent as a proxy-minded client would send them
            let foreign = "GET http://rebound.example:\(port)/api/connectivity HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
            let own = "GET http://127.0.0.1:\(port)/api/connectivity HTTP/1.1\r\nHost: rebound.example\r\nConnection: close\r\n\r\n"
            let withUser = "GET http://127.0.0.1@rebound.example/api/connectivity HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
            // When each is sent to the listener
            // Then the one for a rebound name is refused though its Host is the listener's, the one for the listener's
            // own name is answered though its Host is not, and a target with user information names no valid host
            // (Of any scheme: the path of ftp:// or ws:// is read as http://'s.)
            let otherSchemes = ["ftp", "ws", "wss"].map {
                "GET \($0)://rebound.example:\(port)/api/connectivity HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
            }
            let answers = [try await rawAnswer(port: port, foreign), try await rawAnswer(port: port, own),
                           try await rawAnswer(port: port, withUser)]
            for request in otherSchemes {
                let answer = try await rawAnswer(port: port, request)
                #expect(answer.hasPrefix("HTTP/1.1 421"), "\(request.prefix(40)): \(answer.prefix(200))")
            }
            #expect(answers[0].hasPrefix("HTTP/1.1 421"), "\(answers[0].prefix(200))")
            #expect(answers[1].hasPrefix("HTTP/1.1 200"), "\(answers[1].prefix(200))")
            #expect(answers[2].hasPrefix("HTTP/1.1 400"), "\(answers[2].prefix(200))")
            // And an ordinary request is answered as before
            let ordinary = try await rawAnswer(port: port, "GET /api/connectivity HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            #expect(ordinary.hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test("A request that does not keep its connection has it closed after its answer, not at the next request's deadline", arguments: [
        "GET /api/connectivity HTTP/1.0\r\nHost: localhost\r\n\r\n",
        "GET /api/connectivity HTTP/1.1\r\nHost: localhost\r\nConnection: Close\r\n\r\n",
        "GET /api/connectivity HTTP/1.1\r\nHost: localhost\r\nConnection: TE, close\r\nTE: trailers\r\n\r\n",
    ])
    func connectionClosedAfterAnswer(request: String) async throws {
        try await withLiveWeb { _, _, _, port in
            // Given a request that asks, in one of HTTP's spellings, for its connection to end with its answer
            let start = ContinuousClock.now
            // When it is sent and read until the listener closes
            let answer = try await rawAnswer(port: port, request)
            // Then it is answered once and closed at once (the next request head's deadline is 20 s)
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
            #expect(answer.components(separatedBy: "HTTP/1.1 ").count == 2)
            #expect(ContinuousClock.now - start < .seconds(10))
        }
    }

    @Test("An HTTP/1.0 request with keep-alive keeps its connection for the next request")
    func http10KeepAliveKept() async throws {
        try await withLiveWeb { _, _, _, port in
            // Given two HTTP/1.0 requests on one connection, the first asking to keep it
            let first = "GET /api/connectivity HTTP/1.0\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n"
            let second = "GET /api/connectivity HTTP/1.0\r\nHost: localhost\r\n\r\n"
            // When both are sent
            let answer = try await rawAnswer(port: port, first + second)
            // Then both are answered on it, and it closes after the second
            #expect(answer.components(separatedBy: "HTTP/1.1 200").count == 3, "\(answer.prefix(400))")
        }
    }

    @Test("The demo upstream's API and control listeners refuse a rebound name too, changing no fault")
    func demoUpstreamRefusesReboundNames() async throws {
        // Given an embedded demo upstream, whose answers name demo.invalid
        var configuration = DemoUpstreamConfiguration()
        configuration.publicBaseURL = DemoUpstream.canonicalBaseURL
        let demo = DemoUpstream(configuration: configuration)
        try await demo.start()
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let api = try #require(await demo.baseURL.port), control = try #require(await demo.controlURL.port)
            // When a rebound page asks the API and switches the upstream offline through the control port
            let read = try await exchange(http, port: api, path: "/dogs.json", host: "rebound.example:\(api)")
            let write = try await exchange(http, port: control, method: .PUT, path: "/faults", host: "rebound.example:\(control)",
                                           headers: [("Content-Type", "application/json")], body: #"{"offline": true}"#)
            // Then both are refused and the faults are unchanged
            #expect(read.status == 421)
            #expect(write.status == 421)
            #expect(await demo.faults == .none)
            #expect(await demo.requestCount(pathPrefix: "/") == 0)
            // And the names it is served under are answered: demo.invalid and loopback on the API, loopback on control
            #expect(try await exchange(http, port: api, path: "/dogs.json", host: "demo.invalid").status == 200)
            #expect(try await exchange(http, port: api, path: "/dogs.json", host: "127.0.0.1:\(api)").status == 200)
            #expect(try await exchange(http, port: control, path: "/faults", host: "localhost:\(control)").status == 200)
            #expect(try await exchange(http, port: control, path: "/faults", host: "demo.invalid").status == 421)
            // And a whole URL naming a rebound host is refused whatever Host says
            let whole = "GET http://rebound.example:\(api)/dogs.json HTTP/1.1\r\nHost: 127.0.0.1:\(api)\r\nConnection: close\r\n\r\n"
            let wholeAnswer = try await rawAnswer(port: api, whole)
            #expect(wholeAnswer.hasPrefix("HTTP/1.1 421"))
        } catch {
            try? await http.shutdown()
            await demo.stop()
            throw error
        }
        try await http.shutdown()
        await demo.stop()
    }

    @Test("A connection that sends half a request head and then nothing is closed at the deadline, without an answer")
    func requestHeadDeadline() async throws {
        let configuration = WebConfiguration(host: "127.0.0.1", port: 0, requestHeadTimeout: .seconds(1))
        try await withLiveWeb(configuration) { _, _, _, port in
            // Given a raw connection that sends half a request head and then nothing
            let socket = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port) { channel in
                    channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
                }
            let start = ContinuousClock.now
            let received = try await socket.executeThenClose { inbound, outbound in
                var received = 0
                do {
                    try await outbound.write(ByteBuffer(string: "GET /api/connectivity HTTP/1.1\r\nHost: localhost\r\n"))
                    // When the deadline passes, then the server closes it (the stream ends) without a byte of answer
                    for try await chunk in inbound { received += chunk.readableBytes }
                } catch let error as ChannelError where error == .ioOnClosedChannel {
                    // closed by the server before the half head could even be written: no answer either
                }
                return received
            }
            #expect(received == 0)
            #expect(ContinuousClock.now - start < .seconds(15))
        }
    }

    static func firstDog(_ harness: Harness) async throws -> String {
        try #require(try await harness.kiosk.catalog.page(PageRequest(source: .dogs)).page.items.first?.itemID)
    }
}

/// What a listener on loopback `port` sends back for `request` (raw bytes, the request asking it to close), as text.
func rawAnswer(port: Int, _ request: String) async throws -> String {
    let socket = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
    return try await socket.executeThenClose { inbound, outbound in
        try await outbound.write(ByteBuffer(string: request))
        var received = ""
        for try await chunk in inbound { received += String(buffer: chunk) }
        return received
    }
}
