import Foundation
import KioskApp
import KioskCore
import KioskDebugger
import KioskDemoUpstream
import KioskNetwork
import KioskTestSupport
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import Testing

/// An app's upstream on loopback whose answers a test writes (`answer`), counting the connections it accepted and
/// the requests it answered; `stop` closes the listener and every open connection (a pooled one too), as a server
/// that went away.
final class ScriptedUpstream: Sendable {
    typealias Answer = (status: HTTPResponseStatus, headers: [(String, String)], body: String)
    private struct State {
        var answer: @Sendable (HTTPRequestHead) -> Answer = { _ in (.ok, [], "") }
        var connections = 0
        var requests: [HTTPRequestHead] = []
        var children: [any Channel] = []
        /// While set, answers wait for `release()`.
        var holding = false
        var held: [@Sendable () -> Void] = []
        /// While set, answers are chunked, their second half sent `pause` after the first (or, `cut`, never: the
        /// connection closes instead).
        var slowly: (pause: TimeAmount, cut: Bool)?
    }
    private let state = Mutex(State())
    private let listener = Mutex<(any Channel)?>(nil)
    let port: Int

    private init(port: Int) { self.port = port }

    static func start() async throws -> ScriptedUpstream {
        let box = Mutex<ScriptedUpstream?>(nil)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let upstream = box.withLock { $0 }
                upstream?.state.withLock { state in
                    state.connections += 1
                    state.children.append(channel)
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(upstream: upstream))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let upstream = ScriptedUpstream(port: channel.localAddress?.port ?? 0)
        upstream.listener.withLock { $0 = channel }
        box.withLock { $0 = upstream }
        return upstream
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Answers every request from now on with what `answer` returns for its head.
    func answer(_ answer: @escaping @Sendable (HTTPRequestHead) -> Answer) { state.withLock { $0.answer = answer } }

    /// Sends every answer from now on chunked and slow to end: its first half, then after `pause` its second (or with
    /// `cut`, the connection closed in its place); nil, as they come again.
    func answerSlowly(_ slowly: (pause: TimeAmount, cut: Bool)?) { state.withLock { $0.slowly = slowly } }

    /// Holds every answer from now on until `release()`.
    func hold() { state.withLock { $0.holding = true } }

    /// Sends the answers held, and answers at once again.
    func release() {
        let held = state.withLock { state in
            state.holding = false
            defer { state.held = [] }
            return state.held
        }
        for answer in held { answer() }
    }

    /// Connections accepted so far.
    var connections: Int { state.withLock { $0.connections } }
    /// The heads of the requests answered so far.
    var requests: [HTTPRequestHead] { state.withLock { $0.requests } }

    /// Goes away: the port refuses connections and every open one is closed.
    func stop() async {
        let (listener, children) = (self.listener.withLock { $0 }, state.withLock { $0.children })
        try? await listener?.close()
        for child in children {
            // Reset, not closed: a connection closed from this side would wait in TIME_WAIT on the port, and while one
            // does the port cannot be held below (a CI run got a 10 s timeout on the port another test's server took).
            try? await (child as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
            try? await child.close()
        }
        // The port is held from now on, refusing connections as a host that is down: given back, another test's server
        // asking for port 0 could get it and answer, or hang, in the stopped upstream's place.
        // (A second stop, as a test's own and then `withProxy`'s, keeps the hold: binding again would fail and let it go.)
        reservation.withLock { held in if held == nil { held = PortReservation(host: "127.0.0.1", port: port) } }
    }
    private let reservation = Mutex<PortReservation?>(nil)

    private final class Handler: ChannelInboundHandler {
        typealias Answer = ScriptedUpstream.Answer
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let upstream: ScriptedUpstream?

        init(upstream: ScriptedUpstream?) { self.upstream = upstream }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .head(let head) = unwrapInboundIn(data), let upstream else { return }
            let (answerer, holding) = upstream.state.withLock { state in
                state.requests.append(head)
                return (state.answer, state.holding)
            }
            let answer = answerer(head)
            guard !holding else {
                let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                let loop = context.eventLoop
                upstream.state.withLock { $0.held.append { loop.execute { bound.value.0.write(answer, head, bound.value.1) } } }
                return
            }
            write(answer, head, context)
        }

        private func write(_ answer: Answer, _ head: HTTPRequestHead, _ context: ChannelHandlerContext) {
            if let (pause, cut) = upstream?.state.withLock({ $0.slowly }), head.method != .HEAD, answer.status != .notModified {
                let body = Array(answer.body.utf8)
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: answer.status,
                                                                     headers: HTTPHeaders(answer.headers + [("Transfer-Encoding", "chunked")])))),
                              promise: nil)
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body.prefix(body.count / 2))))), promise: nil)
                let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: pause) {
                    let (handler, context) = bound.value
                    guard !cut else { return context.close(promise: nil) }
                    context.write(handler.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body.dropFirst(body.count / 2))))), promise: nil)
                    context.writeAndFlush(handler.wrapOutboundOut(.end(nil)), promise: nil)
                }
                return
            }
            var fields = HTTPHeaders(answer.headers)
            fields.replaceOrAdd(name: "Content-Length", value: String(answer.body.utf8.count))
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: answer.status, headers: fields))), promise: nil)
            if head.method != .HEAD, answer.status != .notModified {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: answer.body)))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}

/// `kiosk proxy`'s cache settings for a test: fallback unless said, online unless said.
private func caching(_ settings: ProxyCacheSettings = ProxyCacheSettings()) -> (inout KioskConfiguration) -> Void {
    { configuration in
        var cache = ProxyCacheConfiguration()
        cache.settings = settings
        configuration.proxyCache = cache
    }
}

@Suite("kiosk proxy's cache: an app's answers kept and given back when the upstream fails or the proxy is offline")
struct ProxyCacheTests {
    @Test("A request sent again from the console goes to the upstream, edited or not, only where it went; its answer is never stored for the app")
    func resendNotStored() async throws {
        // Given an upstream whose answers are fresh for ten minutes, each naming what was asked, and a cache in http mode
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in (.ok, [("Cache-Control", "max-age=600")], head.uri) }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching(ProxyCacheSettings(mode: .http))) { proxy, upstream in
            // And an app's GET of page 1, stored
            _ = try await proxy.send(.GET, upstream.url("/items?page=1"))
            #expect(try proxy.kiosk.proxyCacheEntries().count == 1)
            let listed = try #require(try await proxy.waitForRecord { $0.url == upstream.url("/items?page=1") })
            let record = try #require(try proxy.kiosk.debugger.record(id: listed.id))
            // When it is sent again as it was, and edited to ask for page 2
            let again = try await proxy.kiosk.debugger.resend(record)
            var composed = ComposedRequest(record)
            composed.queryItems = [.init(name: "page", value: "2")]
            let edited = try await proxy.kiosk.debugger.resend(record, as: composed)
            // Then both went to the upstream (the fresh stored page 1 did not answer the first), and nothing more is stored
            #expect(again.response?.body == Data("/items?page=1".utf8) && edited.response?.body == Data("/items?page=2".utf8))
            #expect(upstream.requests.count == 3)
            #expect(try proxy.kiosk.proxyCacheEntries().count == 1)
            // And the app's own page 2 is asked of the upstream, not given the console's answer
            _ = try await proxy.send(.GET, upstream.url("/items?page=2"))
            #expect(upstream.requests.count == 4)
            // When the edit names another place (another port: Kiosk's own console, say)
            composed = ComposedRequest(record)
            composed.url = "http://127.0.0.1:\(proxy.port)/items"
            // Then it is refused before anything is sent, saying it may change what is asked, not where
            let refusal = await #expect(throws: ResendProblem.self) { try await proxy.kiosk.debugger.resend(record, as: composed) }
            #expect(refusal?.english.contains("not where it goes") == true)
            #expect(upstream.requests.count == 4)
        }
    }

    @Test("With the upstream gone, curl still gets the stored answer, with Cache-Status and Age; what was never stored is a 502 saying a miss, and what was stored for others says so")
    func fallbackWhenTheUpstreamIsGone() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.ok, [("Content-Type", "application/json")], #"{"n": 1}"#) }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given an answer fetched once through the proxy, by curl
            let first = try await runCurl(["-sS", "-i", "-x", "http://127.0.0.1:\(proxy.port)", upstream.url("/items")])
            let firstText = String(decoding: first.output, as: UTF8.self)
            #expect(firstText.contains("Cache-Status: Kiosk;fwd=uri-miss;fwd-status=200;ttl=0;stored;detail=network"), "\(firstText)")
            // (and another by an app with its session's cookie)
            #expect(try await proxy.send(.GET, upstream.url("/mine"), headers: [("Cookie", "sid=old")]).status == .ok)

            // When the upstream goes away
            await upstream.stop()
            let again = try await runCurl(["-sS", "-i", "-x", "http://127.0.0.1:\(proxy.port)", upstream.url("/items")])
            let text = String(decoding: again.output, as: UTF8.self)

            // Then curl gets the stored answer, saying it is a stored one and how old it is
            #expect(text.hasPrefix("HTTP/1.1 200"), "\(text)")
            #expect(text.contains("Cache-Status: Kiosk;fwd=stale;ttl=0;detail=fallback"), "\(text)")
            #expect(text.contains("\r\nAge: "), "\(text)")
            #expect(text.hasSuffix(#"{"n": 1}"#))
            // And a URL never fetched is the proxy's 502, saying the cache had nothing and no answer came back
            let never = try await proxy.send(.GET, upstream.url("/never"))
            #expect(never.status == .badGateway)
            #expect(never.text.contains("has no answer stored for ") && never.text.contains("refused the connection"), "\(never.text)")
            #expect(never.header("Cache-Status") == ["Kiosk;fwd=uri-miss;detail=network"])
            // And a URL stored for an identity, asked with another (a session's cookie renewed since), is a 502 saying answers
            // are held for other credentials, not that none is (vary-miss, as offline says it)
            let other = try await proxy.send(.GET, upstream.url("/mine"), headers: [("Cookie", "sid=renewed")])
            #expect(other.status == .badGateway)
            #expect(other.text.contains("holds answers for ") && other.text.contains("each for other credentials"), "\(other.text)")
            #expect(other.header("Cache-Status") == ["Kiosk;fwd=vary-miss;detail=network"])
            // And the log records both with the same decisions as the answers said
            let records = try proxy.records()
            #expect(records.contains { $0.url.hasSuffix("/items") && $0.cacheStatus.headerValue == "Kiosk;fwd=stale;ttl=0;detail=fallback" })
            #expect(records.contains { $0.url.hasSuffix("/never") && $0.cacheStatus.headerValue == "Kiosk;fwd=uri-miss;detail=network" })
        }
    }

    @Test("A list an app added to is still read offline through curl: the write's success marks it changed, and with the upstream gone it stands in")
    func changedListStandsIn() async throws {
        let upstream = try await ScriptedUpstream.start()
        let dogs = Mutex(["Rex"])
        upstream.answer { head in
            if head.method == .POST { dogs.withLock { $0.append("Fido") }; return (.created, [("Location", "/dogs/2")], "") }
            return (.ok, [("Content-Type", "application/json"), ("Cache-Control", "max-age=600")], #"["\#(dogs.withLock { $0.joined(separator: #"",""#) })"]"#)
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            let curl = { (arguments: [String]) in
                String(decoding: try await runCurl(["-sS", "-i", "-x", "http://127.0.0.1:\(proxy.port)"] + arguments).output, as: UTF8.self)
            }
            // Given the list read once, then a dog added, and the list read again
            #expect(try await curl([upstream.url("/dogs")]).hasSuffix(#"["Rex"]"#))
            #expect(try await curl(["-X", "POST", "--data", #"{"name":"Fido"}"#, upstream.url("/dogs")]).hasPrefix("HTTP/1.1 201"))
            // Then the read after the write goes upstream, though the list stored was fresh, and gets the new list
            let fresh = try await curl([upstream.url("/dogs")])
            #expect(fresh.hasSuffix(#"["Rex","Fido"]"#) && fresh.contains("Cache-Status: Kiosk;fwd=stale;fwd-status=200;ttl=") && fresh.contains(";stored;detail=network"), "\(fresh)")
            // When the app adds another dog and the upstream then goes away
            #expect(try await curl(["-X", "POST", "--data", #"{"name":"Fido"}"#, upstream.url("/dogs")]).hasPrefix("HTTP/1.1 201"))
            await upstream.stop()
            // Then the list the app saw last still answers, saying it stands in for the upstream
            let offline = try await curl([upstream.url("/dogs")])
            #expect(offline.hasPrefix("HTTP/1.1 200") && offline.hasSuffix(#"["Rex","Fido"]"#), "\(offline)")
            // (and with no freshness left, though its max-age had ten minutes: RFC 9111 §4.4, the write made it not fresh)
            #expect(offline.contains("Cache-Status: Kiosk;fwd=stale;ttl=0;detail=fallback"), "\(offline)")
        }
    }

    @Test("In fallback, an upstream gone with only another language's answer stored names the header it varies by")
    func fallbackNamesTheVaryHeader() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.ok, [("Vary", "accept-language"), ("Content-Language", "fr")], "bonjour") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given the French answer stored
            #expect(try await proxy.send(.GET, upstream.url("/hello"), headers: [("Accept-Language", "fr")]).text == "bonjour")
            // When the upstream goes away and German is asked for
            await upstream.stop()
            let german = try await proxy.send(.GET, upstream.url("/hello"), headers: [("Accept-Language", "de")])
            // Then the proxy's 502 says answers are held for other values of the header they vary by, named as servers spell it
            #expect(german.status == .badGateway)
            #expect(german.text.contains("for other values of the request headers they vary by (Vary: Accept-Language), not this request's"),
                    "\(german.text)")
        }
    }

    @Test("A 5xx from the upstream is replaced by the stored answer, saying which status came back")
    func fallbackOnServerError() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.ok, [("Content-Type", "text/plain")], "good") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            _ = try await proxy.send(.GET, upstream.url("/page"))
            upstream.answer { _ in (.serviceUnavailable, [], "down") }
            let answer = try await proxy.send(.GET, upstream.url("/page"))
            #expect(answer.status == .ok)
            #expect(answer.text == "good")
            #expect(answer.header("Cache-Status") == ["Kiosk;fwd=stale;fwd-status=503;ttl=0;detail=fallback"])
            // A 5xx with nothing stored reaches the app as it came
            let unstored = try await proxy.send(.GET, upstream.url("/other"))
            #expect(unstored.status == .serviceUnavailable)
            #expect(unstored.header("Cache-Status") == ["Kiosk;fwd=uri-miss;fwd-status=503;detail=network"])
        }
    }

    @Test("A GET with a body (a search's query) is never answered from the store nor stored, nor joined to another: its answer is its body's")
    func getWithBody() async throws {
        // Given an upstream whose answers are fresh for five minutes, and a cache in http mode
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.ok, [("Cache-Control", "max-age=300"), ("Content-Type", "application/json")], #"{"hits":[]}"#) }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching(ProxyCacheSettings(mode: .http))) { proxy, upstream in
            // When three searches are sent as GETs with their queries in their bodies
            for query in ["alpha", "beta", "gamma"] {
                let answer = try await proxy.send(.GET, upstream.url("/_search"), headers: [("Content-Type", "application/json")],
                                                  body: #"{"q":"\#(query)"}"#)
                // Then each went upstream, said so, and was not stored
                #expect(answer.header("Cache-Status") == ["Kiosk;fwd=request;fwd-status=200;detail=network"], "\(answer.header("Cache-Status"))")
            }
            #expect(upstream.requests.count == 3)
            #expect(try proxy.kiosk.proxyCacheEntries().isEmpty)
            // And offline, one is not given another's answer
            try proxy.kiosk.switchProxyCache(mode: .http, offline: true)
            let offline = try await proxy.send(.GET, upstream.url("/_search"), body: #"{"q":"beta"}"#)
            #expect(offline.status == .gatewayTimeout && offline.text.contains("with a body (a search's query) is never stored"), "\(offline.text)")
        }
    }

    @Test("A 304 to a request that named no validator is the upstream's own answer, not a revalidation")
    func unsolicitedNotModified() async throws {
        // Given an upstream that answers 304 to anything
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.notModified, [], "") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // When an app asks without a validator, then with one
            let plain = try await proxy.send(.GET, upstream.url("/odd"))
            let conditional = try await proxy.send(.GET, upstream.url("/odd"), headers: [("If-None-Match", #""v1""#)])
            // Then the first is said to be the network's answer, the second a revalidation
            #expect(plain.header("Cache-Status").first?.hasSuffix("detail=network") == true, "\(plain.header("Cache-Status"))")
            #expect(conditional.header("Cache-Status").first?.hasSuffix("detail=revalidated") == true, "\(conditional.header("Cache-Status"))")
        }
    }

    @Test("A page stored before its app set a cookie stands in for the app with the cookie when the upstream cannot answer, offline or failing; never while it answers")
    func anonymousAnswerStandsIn() async throws {
        // Given a page stored when the app had no cookie yet (its first visit), then an upstream that names who asks
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            head.headers["Cookie"].isEmpty ? (.ok, [("Content-Type", "text/html")], "<p>welcome</p>")
                : (.ok, [("Content-Type", "text/html"), ("Cache-Control", "no-store")], "<p>hello, signed in</p>")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            let page = upstream.url("/")
            #expect(try await proxy.send(.GET, page).text == "<p>welcome</p>")
            // When the app, now with its session cookie, asks while the upstream answers
            let signedIn = try await proxy.send(.GET, page, headers: [("Cookie", "sid=7f3a")])
            // Then it gets the upstream's own page, not the stored one
            #expect(signedIn.text == "<p>hello, signed in</p>")
            // And offline, the stored page stands in for it, said to be another's key (vary-miss), rather than a 504
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: true)
            let offline = try await proxy.send(.GET, page, headers: [("Cookie", "sid=7f3a")])
            #expect(offline.status == .ok && offline.text == "<p>welcome</p>", "\(offline.status) \(offline.text)")
            #expect(offline.header("Cache-Status").first?.contains("fwd=vary-miss") == true, "\(offline.header("Cache-Status"))")
            // And with the upstream failing (a 503), then gone, in fallback, it stands in too, said as another key's
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: false)
            upstream.answer { _ in (.serviceUnavailable, [], "down") }
            let erring = try await proxy.send(.GET, page, headers: [("Cookie", "sid=7f3a")])
            #expect(erring.status == .ok && erring.text == "<p>welcome</p>", "\(erring.status) \(erring.text)")
            #expect(erring.header("Cache-Status").first?.contains("fwd=vary-miss;fwd-status=503") == true, "\(erring.header("Cache-Status"))")
            await upstream.stop()
            let failing = try await proxy.send(.GET, page, headers: [("Cookie", "sid=7f3a")])
            #expect(failing.status == .ok && failing.text == "<p>welcome</p>", "\(failing.status) \(failing.text)")
            #expect(failing.header("Cache-Status").first?.contains("fwd=vary-miss") == true
                    && failing.header("Cache-Status").first?.contains("detail=fallback") == true, "\(failing.header("Cache-Status"))")
        }
    }

    @Test("A 304 whose Vary names a field the stored answer was not kept by does not renew it for every request: the next with another value goes upstream")
    func notModifiedAddingVary() async throws {
        // Given an upstream whose answer carries no Vary at first, and whose 304 says it varies on X-A
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            head.headers["If-None-Match"].first == #""vx""#
                ? (.notModified, [("ETag", #""vx""#), ("Cache-Control", "max-age=100"), ("Vary", "X-A")], "")
                : (.ok, [("ETag", #""vx""#), ("Cache-Control", "max-age=1")], "for \(head.headers["X-A"].first ?? "none")")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching(ProxyCacheSettings(mode: .http))) { proxy, upstream in
            #expect(try await proxy.send(.GET, upstream.url("/vx"), headers: [("X-A", "1")]).text == "for 1")
            await proxy.harness.now.advance(by: .seconds(2))
            // When the stale answer is revalidated for X-A: 1, and the upstream's 304 adds Vary: X-A
            let revalidated = try await proxy.send(.GET, upstream.url("/vx"), headers: [("X-A", "1")])
            #expect(revalidated.status == .ok && revalidated.text == "for 1")
            // Then a request with X-A: 2 is not given X-A: 1's answer as fresh: it goes upstream and gets its own
            let before = upstream.requests.count
            let other = try await proxy.send(.GET, upstream.url("/vx"), headers: [("X-A", "2")])
            #expect(other.text == "for 2" && upstream.requests.count == before + 1, "\(other.header("Cache-Status"))")
        }
    }

    @Test("A browser's conditional request with nothing stored gets the upstream's 304 at once, and the whole answer is fetched behind it and kept: offline it answers")
    func warmBrowserFillsTheCache() async throws {
        // Given an upstream whose page has an ETag and must be revalidated, and a browser that has it in its own cache
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            head.headers["If-None-Match"].first == #""p1""# ? (.notModified, [("ETag", #""p1""#)], "")
                : (.ok, [("ETag", #""p1""#), ("Cache-Control", "no-cache"), ("Content-Type", "text/html")], "<p>page</p>")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // When the browser asks with its validator, the proxy holding nothing for the page
            let revalidated = try await proxy.send(.GET, upstream.url("/page"), headers: [("If-None-Match", #""p1""#)])
            // Then it gets the upstream's 304, its validator sent
            #expect(revalidated.status == .notModified && revalidated.body.isEmpty, "\(revalidated.status)")
            #expect(upstream.requests.first?.headers["If-None-Match"] == [#""p1""#])
            // And the whole page is fetched behind it, without the validator, and kept
            var kept = false
            for _ in 0..<500 where !kept {
                kept = try proxy.kiosk.proxyCacheEntries().contains { $0.url.hasSuffix("/page") }
                if !kept { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(kept)
            #expect(upstream.requests.contains { $0.uri == "/page" && $0.headers["If-None-Match"].isEmpty })
            // And offline, the page is answered from what was kept
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: true)
            let offline = try await proxy.send(.GET, upstream.url("/page"))
            #expect(offline.status == .ok && offline.text == "<p>page</p>", "\(offline.status) \(offline.text)")
        }
    }

    @Test("Offline, the proxy opens no connection at all: stored answers are hits, the rest a 504 that says it is not stored")
    func offlineNeverDials() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.ok, [("ETag", #""v1""#)], "stored body") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given an answer stored while online
            _ = try await proxy.send(.GET, upstream.url("/a"))
            let connections = upstream.connections
            let requests = upstream.requests.count

            // When the proxy goes offline (the console's switch)
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: true)
            let stored = try await proxy.send(.GET, upstream.url("/a"))
            let head = try await proxy.send(.HEAD, upstream.url("/a"))
            let conditional = try await proxy.send(.GET, upstream.url("/a"), headers: [("If-None-Match", #""v1""#)])
            let missing = try await proxy.send(.GET, upstream.url("/b"))
            let post = try await proxy.send(.POST, upstream.url("/a"), body: "x")

            // Then the stored answer is a hit, a HEAD gets no body, a matching validator a 304
            #expect(stored.status == .ok && stored.text == "stored body")
            #expect(stored.header("Cache-Status") == ["Kiosk;hit;ttl=0;detail=offline"])
            #expect(head.status == .ok && head.body.isEmpty)
            #expect(conditional.status == .notModified && conditional.body.isEmpty)
            // And what is not stored is a 504 saying so
            #expect(missing.status == .gatewayTimeout)
            #expect(missing.header("Cache-Status") == ["Kiosk;fwd=miss;detail=offline"])
            #expect(missing.text.contains("no stored answer"))
            #expect(post.status == .gatewayTimeout)
            // And the upstream saw no new connection and no new request
            #expect(upstream.connections == connections)
            #expect(upstream.requests.count == requests)
            // And a CONNECT tunnel and a WebSocket switch are not dialled: each is the 504 of what is not stored, marked offline
            let tunnel = try await rawExchange(port: proxy.port, "CONNECT 127.0.0.1:\(upstream.port) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(tunnel.hasPrefix("HTTP/1.1 504"), "\(tunnel)")
            #expect(tunnel.contains("Cache-Status: Kiosk;fwd=miss;detail=offline\r\n") && tunnel.contains("the proxy is offline"), "\(tunnel)")
            let upgrade = try await rawExchange(port: proxy.port, "GET \(upstream.url("/ws")) HTTP/1.1\r\nHost: 127.0.0.1:\(upstream.port)\r\n"
                                                + "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                                                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
            #expect(upgrade.hasPrefix("HTTP/1.1 504") && upgrade.contains("Cache-Status: Kiosk;fwd=miss;detail=offline\r\n"), "\(upgrade)")
            #expect(upstream.connections == connections)
            // (and the proxy page counts neither as a tunnel or a protocol switch: neither happened)
            #expect(proxy.meter.snapshot.upgrades == 0 && proxy.meter.snapshot.tunnels == 0)
            // And each is logged with the status and Cache-Status its app got, as every answer is: a 504, not an answer from
            // the store (the Errors filter lists it)
            var logged: [String: String] = [:]
            for _ in 0..<500 where logged.count < 2 {
                try proxy.kiosk.debugger.flush()
                for record in try proxy.records() where record.method == "CONNECT" || record.url.hasPrefix("ws://") {
                    logged[record.method] = "\(record.status.map(String.init) ?? "-") \(record.cacheStatus.headerValue)"
                }
                if logged.count < 2 { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(logged == ["CONNECT": "504 Kiosk;fwd=miss;detail=offline", "GET": "504 Kiosk;fwd=miss;detail=offline"], "\(logged)")
        }
    }

    @Test("A browser's CORS preflight answered online stands in, for its origin and what it asked, when the upstream is gone (fallback and http) and offline; never while the upstream answers")
    func preflightStandsIn() async throws {
        // Given an API that allows a page's origin to send it a token, and answers its GETs with JSON
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            guard head.method == .OPTIONS else { return (.ok, [("Content-Type", "application/json")], #"{"items":[]}"#) }
            // (One API's answer names another origin than the one asking: allowed for none but that one.)
            if head.headers["Origin"].first == "https://other.test" {
                return (.noContent, [("Access-Control-Allow-Origin", "https://app.test"), ("Access-Control-Allow-Methods", "GET")], "")
            }
            guard head.headers["Origin"].first == "https://app.test" else { return (.forbidden, [], "") }
            return (.noContent, [("Access-Control-Allow-Origin", "https://app.test"), ("Access-Control-Allow-Credentials", "true"),
                                 ("Access-Control-Allow-Methods", "GET"), ("Access-Control-Allow-Headers", "authorization"),
                                 ("Access-Control-Max-Age", "5")], "")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            func preflight(origin: String = "https://app.test", headers: String = "authorization") async throws -> ProxyHarness.Answer {
                try await proxy.send(.OPTIONS, upstream.url("/api/items"), headers: [
                    ("Origin", origin), ("Access-Control-Request-Method", "GET"), ("Access-Control-Request-Headers", headers),
                ])
            }
            // And the page's preflight answered once through the proxy: stored
            let first = try await preflight()
            #expect(first.status == .noContent && first.header("Cache-Status").first?.contains(";stored;") == true, "\(first.header("Cache-Status"))")
            // When it is sent again while the upstream answers
            let again = try await preflight()
            // Then it went to the upstream, not the store, the store passed over by its configuration (never "stale")
            #expect(again.status == .noContent && upstream.requests.count == 2)
            #expect(again.header("Cache-Status").first?.contains("fwd=bypass") == true, "\(again.header("Cache-Status"))")
            // And a refused one (another origin) is not stored, nor one that allowed another origin than the one asking
            #expect(try await preflight(origin: "https://evil.test").status == .forbidden)
            let otherOrigin = try await preflight(origin: "https://other.test")
            #expect(otherOrigin.status == .noContent && otherOrigin.header("Cache-Status").first?.contains(";stored") == false)

            // When the upstream goes away
            await upstream.stop()
            // Then the stored preflight stands in for the page's origin and the headers it asked for
            let standIn = try await preflight()
            #expect(standIn.status == .noContent && standIn.header("Access-Control-Allow-Origin") == ["https://app.test"])
            #expect(standIn.header("Cache-Status").first?.hasSuffix("detail=fallback") == true, "\(standIn.header("Cache-Status"))")
            // But not for another origin, nor other headers asked: those were never allowed
            #expect(try await preflight(origin: "https://evil.test").status == .badGateway)
            #expect(try await preflight(origin: "https://other.test").status == .badGateway)
            #expect(try await preflight(headers: "authorization,x-other").status == .badGateway)
            // And the headers asked are one list whatever their case
            #expect(try await preflight(headers: "Authorization").status == .noContent)
            // And in http mode as well: a preflight is never fresh, only a stand-in
            try proxy.kiosk.switchProxyCache(mode: .http, offline: false)
            #expect(try await preflight().status == .noContent)
            // And offline it is a hit; an OPTIONS that is no preflight is not stored
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: true)
            let offline = try await preflight()
            #expect(offline.status == .noContent && offline.header("Cache-Status") == ["Kiosk;hit;ttl=0;detail=offline"])
            let plain = try await proxy.send(.OPTIONS, upstream.url("/api/items"))
            #expect(plain.status == .gatewayTimeout && plain.text.contains("browsers' CORS preflights"), "\(plain.text)")
        }
    }

    @Test("Offline, a URL stored only for other credentials is a 504 saying so (vary-miss), not that it was never fetched")
    func offlineOtherIdentity() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.ok, [], "alice's page") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given an answer stored for a request made with Alice's cookie
            _ = try await proxy.send(.GET, upstream.url("/me"), headers: [("Cookie", "session=alice")])
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: true)
            // When, offline, the URL is asked for without it
            let other = try await proxy.send(.GET, upstream.url("/me"))
            // Then the answer is not given, and the 504 says it is stored for other credentials
            #expect(other.status == .gatewayTimeout && !other.text.contains("alice's page"))
            #expect(other.text.contains("each for other credentials or headers"), "\(other.text)")
            #expect(other.header("Cache-Status") == ["Kiosk;fwd=vary-miss;detail=offline"])
            // And with the cookie it was stored for, it is given
            #expect(try await proxy.send(.GET, upstream.url("/me"), headers: [("Cookie", "session=alice")]).text == "alice's page")
        }
    }

    @Test("A HEAD's answer is stored on its own and answers HEADs offline, never a GET; a stored GET's answers HEADs first")
    func headAnswersAreStoredApart() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            (.ok, [("ETag", #""v1""#), ("X-Method", head.method.rawValue)], head.method == .HEAD ? "" : "body of \(head.uri)")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given an app that only ever asked HEAD of /h, and both GET and then HEAD of /g, while online
            let first = try await proxy.send(.HEAD, upstream.url("/h"))
            #expect(first.header("Cache-Status") == ["Kiosk;fwd=uri-miss;fwd-status=200;ttl=0;stored;detail=network"])
            _ = try await proxy.send(.GET, upstream.url("/g"))
            let headOfStored = try await proxy.send(.HEAD, upstream.url("/g"))
            // (its 200, with the stored GET answer's ETag, renews that answer's fields: RFC 9111 §4.3.5)
            #expect(headOfStored.header("Cache-Status") == ["Kiosk;fwd=stale;fwd-status=200;ttl=0;stored;detail=network"])
            let entries = try proxy.kiosk.proxyCacheEntries()
            // Then /g keeps one answer, the GET's, and /h a HEAD's without a body
            #expect(entries.map { "\($0.method) \(URL(string: $0.url)!.path)" }.sorted() == ["GET /g", "HEAD /h"])

            // When the proxy goes offline
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: true)
            let head = try await proxy.send(.HEAD, upstream.url("/h"))
            let get = try await proxy.send(.GET, upstream.url("/h"))
            let headOfGET = try await proxy.send(.HEAD, upstream.url("/g"))
            // Then a HEAD of /h is answered from its HEAD's answer, headers and all
            #expect(head.status == .ok && head.body.isEmpty && head.header("X-Method") == ["HEAD"])
            #expect(head.header("Cache-Status") == ["Kiosk;hit;ttl=0;detail=offline"])
            // And a GET of /h is not given the HEAD's empty answer: it was never stored
            #expect(get.status == .gatewayTimeout && get.text.contains("has only a HEAD's answer"), "\(get.text)")
            // And a HEAD of /g gets the GET's answer's headers, its body's length too (renewed by the HEAD's fields)
            #expect(headOfGET.status == .ok && headOfGET.body.isEmpty && headOfGET.header("X-Method") == ["HEAD"])
            #expect(headOfGET.header("Content-Length") == ["\("body of /g".utf8.count)"], "\(headOfGET.header("Content-Length"))")
        }
    }

    @Test("Answers are kept apart by the headers Vary names and by credentials; Vary: * and no-store are never stored")
    func varyAndCredentials() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            let language = head.headers["Accept-Language"].first ?? "none"
            // The body names the identity without its credential, so that the file can be searched for the credential
            let who = head.headers["Authorization"].first.map { $0.replacingOccurrences(of: "Bearer ", with: "") }
                ?? head.headers["X-Api-Key"].first.map { $0.replacingOccurrences(of: "key-", with: "") } ?? "nobody"
            switch head.uri {
            case "/star": return (.ok, [("Vary", "*")], "star")
            case "/nostore": return (.ok, [("Cache-Control", "private, no-store")], "secret")
            default: return (.ok, [("Vary", "Accept-Language"), ("Cache-Control", "private")], "\(language) for \(who)")
            }
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given answers fetched in two languages and for two identities
            for (language, who) in [("en", "Bearer alice"), ("fr", "Bearer alice"), ("en", "Bearer bob")] {
                _ = try await proxy.send(.GET, upstream.url("/greeting"), headers: [("Accept-Language", language), ("Authorization", who)])
            }
            // and one for an API key sent in a header of its own, which the answer's Vary does not name
            _ = try await proxy.send(.GET, upstream.url("/greeting"), headers: [("Accept-Language", "en"), ("X-Api-Key", "key-carol-0001")])
            _ = try await proxy.send(.GET, upstream.url("/star"))
            _ = try await proxy.send(.GET, upstream.url("/nostore"))

            // When the upstream is gone
            await upstream.stop()
            func ask(_ language: String, _ who: String?) async throws -> ProxyHarness.Answer {
                try await proxy.send(.GET, upstream.url("/greeting"),
                                     headers: [("Accept-Language", language)] + (who.map { [("Authorization", $0)] } ?? []))
            }

            // Then each request gets the answer made for its own language and identity
            #expect(try await ask("fr", "Bearer alice").text == "fr for alice")
            #expect(try await ask("en", "Bearer alice").text == "en for alice")
            #expect(try await ask("en", "Bearer bob").text == "en for bob")
            func askWithKey(_ key: String) async throws -> ProxyHarness.Answer {
                try await proxy.send(.GET, upstream.url("/greeting"), headers: [("Accept-Language", "en"), ("X-Api-Key", key)])
            }
            #expect(try await askWithKey("key-carol-0001").text == "en for carol-0001")
            // And another API key gets nothing stored: the key is an identity as a bearer token is
            #expect(try await askWithKey("key-mallory-01").status == .badGateway)
            // And another identity, no identity or another language gets nothing stored
            #expect(try await ask("en", "Bearer mallory").status == .badGateway)
            #expect(try await ask("en", nil).status == .badGateway)
            #expect(try await ask("de", "Bearer alice").status == .badGateway)
            #expect(try await proxy.send(.GET, upstream.url("/star")).status == .badGateway)
            #expect(try await proxy.send(.GET, upstream.url("/nostore")).status == .badGateway)
            // And the credentials are nowhere in the cache's file
            let file = try Data(contentsOf: proxy.harness.directory.appendingPathComponent("kiosk-proxy-cache.sqlite"))
                + ((try? Data(contentsOf: proxy.harness.directory.appendingPathComponent("kiosk-proxy-cache.sqlite-wal"))) ?? Data())
            #expect(file.range(of: Data("Bearer alice".utf8)) == nil && file.range(of: Data("key-carol".utf8)) == nil)
            #expect(try proxy.kiosk.proxyCacheEntries().count == 4)
        }
    }

    @Test("A 304 to the app's own conditional request reaches the app and refreshes the stored answer's fields")
    func notModifiedRefreshes() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.ok, [("ETag", #""v1""#), ("X-Version", "1")], "body one") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            _ = try await proxy.send(.GET, upstream.url("/doc"))
            upstream.answer { head in
                head.headers["If-None-Match"].first == #""v1""# ? (.notModified, [("ETag", #""v1""#), ("X-Version", "2")], "")
                    : (.ok, [("ETag", #""v2""#)], "other")
            }
            let revalidated = try await proxy.send(.GET, upstream.url("/doc"), headers: [("If-None-Match", #""v1""#)])
            #expect(revalidated.status == .notModified)
            #expect(revalidated.header("Cache-Status") == ["Kiosk;fwd=stale;fwd-status=304;ttl=0;stored;detail=revalidated"])

            await upstream.stop()
            let stored = try await proxy.send(.GET, upstream.url("/doc"))
            #expect(stored.text == "body one")
            #expect(stored.header("X-Version") == ["2"])
        }
    }

    @Test("Identical requests in flight go upstream once when the answer may be kept and is fresh; one that may not, or says nothing of its freshness, or must be revalidated, is each request's own; with --cache off every one goes",
          arguments: [ProxyCacheMode.fallback, .off])
    func collapsing(_ mode: ProxyCacheMode) async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            switch head.uri {
            case "/private": (.ok, [("Cache-Control", "no-store")], "mine")
            case "/session": (.ok, [("Cache-Control", "max-age=60"), ("Set-Cookie", "sid=\(UUID().uuidString)")], "yours")
            // Storable, but with no freshness lifetime: stale as it comes, so no request may have it without asking.
            case "/unstated": (.ok, [], "each its own")
            case "/revalidated": (.ok, [("Cache-Control", "max-age=60, no-cache")], "each its own")
            case "/aged": (.ok, [("Cache-Control", "max-age=60"), ("Age", "60")], "each its own")
            // Dated two minutes ago, with a minute to live from then: stale as it comes (RFC 9111 §4.2.3's apparent age).
            case "/dated": (.ok, [("Date", HTTPDate.format(Date().addingTimeInterval(-120))),
                                  ("Expires", HTTPDate.format(Date().addingTimeInterval(-60)))], "each its own")
            default: (.ok, [("Cache-Control", "max-age=60")], "shared")
            }
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching(ProxyCacheSettings(mode: mode))) { proxy, upstream in
            // (An answer that sets a cookie is not shared: each app would get the same session.)
            for (path, expectedRequests) in [("/shared", mode == .off ? 5 : 1), ("/private", 5), ("/session", 5), ("/unstated", 5),
                                             ("/revalidated", 5), ("/aged", 5), ("/dated", 5)] {
                // Given an upstream that holds its answers, and five identical requests sent meanwhile
                upstream.hold()
                let before = upstream.requests.count
                let forwarded = proxy.meter.snapshot.requests
                let answers = try await withThrowingTaskGroup(of: ProxyHarness.Answer.self) { group in
                    for _ in 0..<5 { group.addTask { try await proxy.send(.GET, upstream.url(path)) } }
                    // When the first has reached the upstream and all five the proxy (the others waiting behind the
                    // first, however slow a loaded machine makes them: a second after the proxy counted them, since a
                    // loaded loop once took longer than a fifth of one to bring a request from there to the collapsing)
                    for _ in 0..<1000 where upstream.requests.count == before || proxy.meter.snapshot.requests < forwarded + 5 {
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    try await Task.sleep(for: .seconds(1))
                    upstream.release()
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                // Then a storable answer went upstream once and every app got it, the others marked collapsed
                #expect(upstream.requests.count - before == expectedRequests, "\(path)")
                #expect(answers.allSatisfy { $0.status == .ok })
                let collapsed = answers.filter { $0.header("Cache-Status").first?.contains(";collapsed") == true }.count
                #expect(collapsed == 5 - expectedRequests, "\(path)")
            }
        }
    }

    @Test("Identical requests for a stored answer as it expires revalidate it once: the upstream's 304 renews it for every one of them")
    func collapsedRevalidation() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            head.headers["If-None-Match"].first == #""e1""#
                ? (.notModified, [("ETag", #""e1""#), ("Cache-Control", "max-age=60")], "")
                : (.ok, [("ETag", #""e1""#), ("Cache-Control", "max-age=10")], "the body")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching(ProxyCacheSettings(mode: .http))) { proxy, upstream in
            // Given an answer stored for 10 s, now stale
            #expect(try await proxy.send(.GET, upstream.url("/expiring")).text == "the body")
            await proxy.harness.now.advance(by: .seconds(20))
            // When five apps ask for it at once, the upstream holding its answer until all have reached the proxy
            upstream.hold()
            let before = upstream.requests.count
            let forwarded = proxy.meter.snapshot.requests
            let answers = try await withThrowingTaskGroup(of: ProxyHarness.Answer.self) { group in
                for _ in 0..<5 { group.addTask { try await proxy.send(.GET, upstream.url("/expiring")) } }
                for _ in 0..<1000 where upstream.requests.count == before || proxy.meter.snapshot.requests < forwarded + 5 {
                    try await Task.sleep(for: .milliseconds(10))
                }
                try await Task.sleep(for: .seconds(1))
                upstream.release()
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // Then one conditional request went upstream, and every app got the whole stored answer, renewed
            #expect(upstream.requests.count - before == 1, "\(upstream.requests.dropFirst(before).map(\.headers))")
            #expect(answers.allSatisfy { $0.status == .ok && $0.text == "the body" })
            let statuses = answers.compactMap { $0.header("Cache-Status").first }
            #expect(statuses.allSatisfy { $0.contains("fwd=stale;fwd-status=304") && $0.contains("detail=revalidated") }, "\(statuses)")
            #expect(statuses.filter { $0.contains(";collapsed") }.count == 4, "\(statuses)")
            // And the fields the 304 renewed keep the names as it spelled them
            #expect(answers.allSatisfy { answer in answer.head.headers.contains { $0.name == "ETag" } && !answer.head.headers.contains { $0.name == "etag" } })
            // And the next one is fresh for the 304's minute, asking nobody
            let after = try await proxy.send(.GET, upstream.url("/expiring"))
            #expect(after.header("Cache-Status").first?.hasPrefix("Kiosk;hit") == true && upstream.requests.count - before == 1)
        }
    }

    @Test("With --cache off nothing is stored, and every answer says the cache was bypassed, the proxy's own 502 too")
    func cacheOff() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.ok, [], "fresh") }
        try await withProxy(to: upstream, stop: { await $0.stop() },
                            configure: caching(ProxyCacheSettings(mode: .off))) { proxy, upstream in
            let answer = try await proxy.send(.GET, upstream.url("/x"))
            #expect(answer.header("Cache-Status") == ["Kiosk;fwd=bypass;fwd-status=200;detail=network"])
            #expect(try proxy.kiosk.proxyCacheEntries().isEmpty)
            // And with the upstream gone, the proxy's own 502 says so too
            await upstream.stop()
            let failed = try await proxy.send(.GET, upstream.url("/x"))
            #expect(failed.status == .badGateway)
            #expect(failed.header("Cache-Status") == ["Kiosk;fwd=bypass;detail=network"])
        }
    }

    @Test("A rule's change to a stored answer standing in for an upstream gone is logged with the Cache-Status the app gets: stale, edited")
    func ruleOnAFallback() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.ok, [("Content-Type", "application/json")], #"{"n":1}"#) }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given an answer stored, a rule answering its URL with a 203, and the upstream gone
            #expect(try await proxy.send(.GET, upstream.url("/r")).text == #"{"n":1}"#)
            _ = try proxy.kiosk.debugger.rules.add(try RewriteRule(json: Data(#"{"match": {"urlPattern": "\#(upstream.url("/r"))"}, "actions": {"status": 203}}"#.utf8),
                                                                 origin: "test"))
            await upstream.stop()
            // When the app asks
            let answer = try await proxy.send(.GET, upstream.url("/r"))
            // Then it gets the stored answer changed, said to stand in for the upstream, and the log says the same
            let told = try #require(answer.header("Cache-Status").last)
            #expect(answer.status.code == 203 && told.contains("fwd=stale") && told.hasSuffix("detail=edited"), "\(told)")
            let logged = try await proxy.waitForRecords(count: 2) { $0.url.hasSuffix("/r") }.max { $0.id < $1.id }
            #expect(logged?.cacheStatus.headerValue == told, "\(logged?.cacheStatus.headerValue ?? "none")")
        }
    }

    @Test("An export of the cache imported again holds each answer once, saying the rest were held already; a cleared host's come back")
    func exportImportedAgain() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in (.ok, [("Cache-Control", "max-age=600")], "answer of \(head.uri)") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given two answers the proxy stored, exported
            #expect(try await proxy.send(.GET, upstream.url("/a")).text == "answer of /a")
            #expect(try await proxy.send(.GET, upstream.url("/b")).text == "answer of /b")
            try await Task.sleep(for: .milliseconds(100))
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-cache-export-\(UUID().uuidString).har")
            defer { try? FileManager.default.removeItem(at: file) }
            try proxy.kiosk.proxyCacheArchive().whole().write(to: file)
            #expect(try proxy.kiosk.proxyCacheEntries().count == 2)
            // When the export is imported again
            let imported = try proxy.kiosk.importIntoProxyCache(atPath: file.path)
            // Then nothing is stored twice, and the summary says why
            #expect(imported.stored == 0 && imported.alreadyHeld == 2, "\(imported)")
            #expect(try proxy.kiosk.proxyCacheEntries().count == 2)
            // And after one answer is removed, importing brings that one back alone
            let removed = try #require(try proxy.kiosk.proxyCacheEntries().first { $0.url.hasSuffix("/a") })
            #expect(try proxy.kiosk.removeProxyCacheEntry(id: removed.id))
            let again = try proxy.kiosk.importIntoProxyCache(atPath: file.path)
            #expect(again.stored == 1 && again.alreadyHeld == 1, "\(again)")
            #expect(try proxy.kiosk.proxyCacheEntries().count == 2)
        }
    }

    /// `../shared/corpus/har` from the repository's root.
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("../shared/corpus/har").standardizedFileURL

    @Test("An archive Fiddler recorded of an HTTPS API replays offline through the intercepting proxy to curl, byte for byte",
          .enabled(if: FileManager.default.fileExists(atPath: corpus.appendingPathComponent("fiddler-4.6_swapi-json-bom.har").path)))
    func harImportThenOfflineReplay() async throws {
        let upstream = try await ScriptedUpstream.start()
        try await withProxy(to: upstream, stop: { await $0.stop() }, intercepting: true,
                            configure: caching(ProxyCacheSettings(mode: .fallback, offline: true))) { proxy, _ in
            // Given a real third-party archive imported into the cache
            let archive = Self.corpus.appendingPathComponent("fiddler-4.6_swapi-json-bom.har")
            let imported = try proxy.kiosk.importIntoProxyCache(atPath: archive.path)
            #expect(imported.stored == 1 && imported.entries == 1)
            let stored = try #require(try proxy.kiosk.proxyCacheEntries().first)
            #expect(stored.url == "https://swapi.co/api/people/1/")

            // When an app asks for it through the offline proxy, over HTTPS read with Kiosk's CA
            let authority = try #require(proxy.authorityFile)
            let (status, output) = try await runCurl(["-sS", "-i", "--max-time", "10", "-x", "http://127.0.0.1:\(proxy.port)",
                                                      "--cacert", authority, stored.url])
            let text = String(decoding: output, as: UTF8.self)

            // Then it gets the archived answer, marked as a stored one
            #expect(status == 0)
            #expect(text.contains("Cache-Status: Kiosk;hit;ttl=-") && text.contains(";detail=offline"), "\(text.prefix(600))")
            let entry = try #require(try proxy.kiosk.proxyCacheEntry(id: stored.id))
            #expect(output.range(of: entry.body) != nil)
            #expect(String(decoding: entry.body, as: UTF8.self).contains("Luke Skywalker"))

            // And an app that sends a cookie and a token gets it too: an archive's answer belongs to no identity
            let (withCredentials, credentialed) = try await runCurl(["-sS", "-i", "--max-time", "10", "-x", "http://127.0.0.1:\(proxy.port)",
                                                                     "--cacert", authority, "-H", "Cookie: session=abc",
                                                                     "-H", "Authorization: Bearer token", stored.url])
            #expect(withCredentials == 0)
            #expect(String(decoding: credentialed, as: UTF8.self).contains("Cache-Status: Kiosk;hit;ttl=-"))
        }
    }

    @Test("An imported answer is as old as its archive says, and kept for the credentials it was recorded with; hidden ones are left out")
    func importedAgesAndIdentities() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.ok, [("Cache-Control", "max-age=3600")], "from the upstream") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching(ProxyCacheSettings(mode: .http))) { proxy, upstream in
            // Given an archive recorded an hour and a half before the proxy's clock (max-age 3600), one recorded now, one
            // made with a token, and one whose cookie a redacting exporter hid
            let format = Date.ISO8601FormatStyle()
            let old = format.format(proxy.harness.now.date.addingTimeInterval(-5400)), recent = format.format(proxy.harness.now.date)
            let entry = { (path: String, started: String, requestHeaders: String, body: String) in
                #"{"startedDateTime": "\#(started)", "time": 1, "request": {"method": "GET", "url": "\#(upstream.url(path))", "headers": [\#(requestHeaders)]}, "#
                    + #""response": {"status": 200, "headers": [{"name": "Cache-Control", "value": "max-age=3600"}], "content": {"mimeType": "text/plain", "text": "\#(body)"}}}"#
            }
            // and three a cache may not keep, each for its own reason
            let raw = { (method: String, path: String, status: Int, control: String) -> String in
                let fields: String = control.isEmpty ? "" : #"{"name": "Cache-Control", "value": "\#(control)"}"#
                let request: String = #"{"startedDateTime": "\#(recent)", "time": 1, "request": {"method": "\#(method)", "url": "\#(upstream.url(path))", "headers": []}, "#
                return request + #""response": {"status": \#(status), "headers": [\#(fields)], "content": {"mimeType": "text/plain", "text": "x"}}}"#
            }
            let leftOut: [String] = [raw("POST", "/posted", 200, ""), raw("GET", "/secret", 200, "no-store"), raw("GET", "/broken", 500, "")]
            let file = try archiveURL("ages.har")
            try Data((#"{"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": ["#
                      + [entry("/old", old, "", "recorded long ago"), entry("/recent", recent, "", "recorded now"),
                         entry("/mine", recent, #"{"name": "Authorization", "value": "Bearer alice"}"#, "alice's"),
                         entry("/hidden", recent, #"{"name": "Cookie", "value": "<redacted>"}"#, "someone's")
                        ].joined(separator: ",") + "," + leftOut.joined(separator: ",")
                      + "]}}").utf8).write(to: file)
            let imported = try proxy.kiosk.importIntoProxyCache(atPath: file.path)
            #expect(imported.stored == 3 && imported.hiddenCredentials == 1 && imported.forCredentials == 1, "\(imported)")
            // And those left out are counted by why: not a read, no-store, a status kept by no cache without a lifetime
            #expect(imported.notRead == 1 && imported.noStore == 1 && imported.notCacheable == 1 && imported.notStorable == 3, "\(imported)")
            // When each is asked for: the old one is stale (30 minutes past its hour) and goes upstream; the recent one is a hit
            let stale = try await proxy.send(.GET, upstream.url("/old"))
            #expect(stale.text == "from the upstream" && stale.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=stale;") == true,
                    "\(stale.header("Cache-Status"))")
            let fresh = try await proxy.send(.GET, upstream.url("/recent"))
            #expect(fresh.text == "recorded now" && fresh.header("Cache-Status").first?.hasPrefix("Kiosk;hit;") == true)
            // And the answer made with a token is given to that token only; the hidden one to no one
            #expect(try await proxy.send(.GET, upstream.url("/mine"), headers: [("Authorization", "Bearer alice")]).text == "alice's")
            #expect(try await proxy.send(.GET, upstream.url("/mine"), headers: [("Authorization", "Bearer mallory")]).text == "from the upstream")
            #expect(try await proxy.send(.GET, upstream.url("/mine")).text == "from the upstream")
            #expect(try await proxy.send(.GET, upstream.url("/hidden"), headers: [("Cookie", "s=1")]).text == "from the upstream")
        }
    }

    @Test("An archive's CORS preflights are kept, a whole 206 as its 200; answers its request's no-store or Kiosk's debugger made are left out, not hiding the upstream's")
    func importedPreflightsRangesAndDebuggerAnswers() async throws {
        let upstream = try await ScriptedUpstream.start()
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching(ProxyCacheSettings(mode: .fallback, offline: true))) { proxy, upstream in
            // Given an archive of a browser's cross-origin session (a preflight, then its GET), a media element's whole
            // answer to `Range: bytes=0-`, a request that said no-store, and Kiosk's own export of a mock's and an edit's answers
            // (the edit, made at a breakpoint, logged after the upstream's answer it changed)
            let recent = Date.ISO8601FormatStyle().format(proxy.harness.now.date)
            let field = { (name: String, value: String) in #"{"name": "\#(name)", "value": "\#(value)"}"# }
            let entry = { (method: String, path: String, request: [String], status: Int, response: [String], text: String, extra: String) in
                #"{"startedDateTime": "\#(recent)", "time": 1, "request": {"method": "\#(method)", "url": "\#(upstream.url(path))", "#
                    + #""headers": [\#(request.joined(separator: ","))]}, "response": {"status": \#(status), "headers": [\#(response.joined(separator: ","))], "#
                    + #""content": {"mimeType": "text/plain", "text": "\#(text)"}}\#(extra)}"#
            }
            let cors = [field("Origin", "http://app.test"), field("Access-Control-Request-Method", "GET"),
                        field("Access-Control-Request-Headers", "x-client")]
            let entries = [
                entry("OPTIONS", "/api", cors, 204, [field("Access-Control-Allow-Origin", "http://app.test"),
                                                     field("Access-Control-Allow-Headers", "x-client"), field("Access-Control-Max-Age", "600")], "", ""),
                entry("GET", "/api", [field("Origin", "http://app.test")], 200, [field("Cache-Control", "max-age=600")], "the api", ""),
                entry("GET", "/clip", [field("Range", "bytes=0-")], 206, [field("Content-Range", "bytes 0-9/10"),
                                                                          field("Cache-Control", "max-age=600")], "0123456789", ""),
                entry("GET", "/private", [field("Cache-Control", "no-store")], 200, [field("Cache-Control", "max-age=600")], "not kept", ""),
                entry("GET", "/mocked", [], 200, [field("Cache-Control", "max-age=600")], "a mock's", #", "_kioskDecision": "mocked""#),
                entry("GET", "/edited", [], 200, [field("Cache-Control", "max-age=600")], "the upstream's", #", "_kioskDecision": "network""#),
                entry("GET", "/edited", [], 200, [field("Cache-Control", "max-age=600")], "an edit's", #", "_kioskDecision": "edited""#),
            ]
            let file = try archiveURL("cors.har")
            try Data((#"{"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": ["#
                      + entries.joined(separator: ",") + "]}}").utf8).write(to: file)
            // When it is imported
            let imported = try proxy.kiosk.importIntoProxyCache(atPath: file.path)
            // Then the preflight, the GET, the whole clip and the answer the edit changed are stored; the others are counted by why
            #expect(imported.stored == 4 && imported.notRead == 0 && imported.noStore == 1 && imported.madeByDebugger == 2, "\(imported)")
            // And offline, the browser's preflight is answered from it, for the origin, method and headers it asked
            let preflight = try await proxy.send(.OPTIONS, upstream.url("/api"), headers: [
                ("Origin", "http://app.test"), ("Access-Control-Request-Method", "GET"), ("Access-Control-Request-Headers", "x-client")])
            #expect(preflight.status == .noContent && preflight.header("Access-Control-Allow-Origin") == ["http://app.test"],
                    "\(preflight.status) \(preflight.header("Cache-Status"))")
            let otherOrigin = try await proxy.send(.OPTIONS, upstream.url("/api"), headers: [
                ("Origin", "http://evil.test"), ("Access-Control-Request-Method", "GET"), ("Access-Control-Request-Headers", "x-client")])
            #expect(otherOrigin.status == .gatewayTimeout)
            // And the clip is its 200 to a request without a Range, and the part asked to one with
            let whole = try await proxy.send(.GET, upstream.url("/clip"))
            #expect(whole.status == .ok && whole.text == "0123456789" && whole.header("Content-Range").isEmpty)
            let part = try await proxy.send(.GET, upstream.url("/clip"), headers: [("Range", "bytes=2-4")])
            #expect(part.status == .partialContent && part.text == "234" && part.header("Content-Range") == ["bytes 2-4/10"])
            // And nothing the request said not to keep, nor any answer the debugger made, stands in for the upstream's
            for path in ["/private", "/mocked"] {
                #expect(try await proxy.send(.GET, upstream.url(path)).status == .gatewayTimeout, "\(path)")
            }
            #expect(try await proxy.send(.GET, upstream.url("/edited")).text == "the upstream's")
        }
    }

    @Test("An archive's variants of one URL are kept apart by the request fields its Vary names: a request that matches one gets it, any other the newest")
    func importedVariants() async throws {
        let upstream = try await ScriptedUpstream.start()
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching(ProxyCacheSettings(mode: .fallback, offline: true))) { proxy, upstream in
            // Given an archive with the English and then the French answer of one URL, varying on Accept-Language
            let format = Date.ISO8601FormatStyle()
            let entry = { (language: String, secondsAgo: Double, body: String) in
                #"{"startedDateTime": "\#(format.format(proxy.harness.now.date.addingTimeInterval(-secondsAgo)))", "time": 1, "#
                    + #""request": {"method": "GET", "url": "\#(upstream.url("/greeting"))", "headers": [{"name": "accept-language", "value": "\#(language)"}, "#
                    + #"{"name": "User-Agent", "value": "Recorder/1"}]}, "response": {"status": 200, "headers": [{"name": "Vary", "value": "Accept-Language"}, "#
                    + #"{"name": "Cache-Control", "value": "max-age=60"}], "content": {"mimeType": "text/plain", "text": "\#(body)"}}}"#
            }
            let file = try archiveURL("variants.har")
            try Data((#"{"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": ["#
                      + [entry("en", 20, "hello"), entry("fr", 10, "bonjour")].joined(separator: ",") + "]}}").utf8).write(to: file)
            let imported = try proxy.kiosk.importIntoProxyCache(atPath: file.path)
            #expect(imported.stored == 2, "\(imported)")

            // When apps ask offline in English, in French, and in German (recorded by no one), or without saying
            let english = try await proxy.send(.GET, upstream.url("/greeting"), headers: [("Accept-Language", "en")])
            let french = try await proxy.send(.GET, upstream.url("/greeting"), headers: [("Accept-Language", "fr")])
            let german = try await proxy.send(.GET, upstream.url("/greeting"), headers: [("Accept-Language", "de")])
            let unsaid = try await proxy.send(.GET, upstream.url("/greeting"))
            // Then each matching request gets its own variant, and the others the newest, the French one
            #expect(english.text == "hello" && french.text == "bonjour")
            #expect(german.text == "bonjour" && unsaid.text == "bonjour")
            #expect([english, french, german, unsaid].allSatisfy { $0.header("Vary") == ["Accept-Language"] })
            // And a HEAD gets the stored answer's length, which the archive did not record as a field
            let head = try await proxy.send(.HEAD, upstream.url("/greeting"))
            #expect(head.status == .ok && head.body.isEmpty && head.header("Content-Length") == ["7"], "\(head.header("Content-Length"))")
            #expect(upstream.requests.isEmpty)
        }
    }

    @Test("Kiosk's Cache-Status member follows an upstream cache's; an upstream value that is no RFC 8941 list is dropped, not joined")
    func upstreamCacheStatus() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            (.ok, [("Cache-Status", head.uri == "/cdn" ? "ExampleCDN; hit; ttl=30" : #"bad value (((, "x"#)], "body")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            let cdn = try await proxy.send(.GET, upstream.url("/cdn"))
            #expect(cdn.header("Cache-Status") == ["ExampleCDN; hit; ttl=30, Kiosk;fwd=uri-miss;fwd-status=200;ttl=0;stored;detail=network"])
            let bad = try await proxy.send(.GET, upstream.url("/bad"))
            #expect(bad.header("Cache-Status") == ["Kiosk;fwd=uri-miss;fwd-status=200;ttl=0;stored;detail=network"])
        }
    }

    @Test("A malformed archive stores nothing and says where it is wrong")
    func malformedArchive() async throws {
        let upstream = try await ScriptedUpstream.start()
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, _ in
            let file = try archiveURL("bad.har")
            try Data(#"{"log": {"entries": [{"startedDateTime": "2026-01-01T00:00:00Z", "request": {"method": "GET", "url": "http://a.test/"}, "response": {"status": "x"}}]}}"#.utf8)
                .write(to: file)
            #expect(throws: (any Error).self) { try proxy.kiosk.importIntoProxyCache(atPath: file.path) }
            do {
                _ = try proxy.kiosk.importIntoProxyCache(atPath: file.path)
            } catch {
                #expect("\(error)".contains("log.entries[0].response.status"))
            }
            #expect(try proxy.kiosk.proxyCacheEntries().isEmpty)
        }
    }

    @Test("In fallback, a request for a stored answer goes forward as configured: fwd=bypass while the answer is fresh, fwd=stale once not")
    func fallbackForwardReason() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in (.ok, [("Cache-Control", head.uri.hasSuffix("/stale") ? "max-age=0" : "max-age=600")], "stored") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given a fresh answer and a stale one stored
            _ = try await proxy.send(.GET, upstream.url("/fresh"))
            _ = try await proxy.send(.GET, upstream.url("/stale"))
            // When each is asked again
            let fresh = try await proxy.send(.GET, upstream.url("/fresh")).header("Cache-Status").first ?? ""
            let stale = try await proxy.send(.GET, upstream.url("/stale")).header("Cache-Status").first ?? ""
            // Then both went upstream, the fresh one said to by the mode (RFC 9211: the cache's configuration), not as stale
            #expect(fresh.hasPrefix("Kiosk;fwd=bypass;fwd-status=200"), "\(fresh)")
            #expect(stale.hasPrefix("Kiosk;fwd=stale;fwd-status=200"), "\(stale)")
            // And when the upstream fails, the answer standing in says the same of why the request went forward
            upstream.answer { _ in (.serviceUnavailable, [], "down") }
            let freshStandIn = try await proxy.send(.GET, upstream.url("/fresh"))
            let staleStandIn = try await proxy.send(.GET, upstream.url("/stale"))
            #expect(freshStandIn.text == "stored" && freshStandIn.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=bypass;fwd-status=503") == true,
                    "\(freshStandIn.header("Cache-Status"))")
            #expect(staleStandIn.text == "stored" && staleStandIn.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=stale;fwd-status=503") == true,
                    "\(staleStandIn.header("Cache-Status"))")
        }
    }

    @Test("In fallback, a request only-if-cached is never sent upstream: a fresh stored answer is given, else a 504")
    func onlyIfCachedInFallback() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in (.ok, [("Cache-Control", head.uri.hasSuffix("/stale") ? "max-age=0" : "max-age=600")], "stored") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given a fresh answer and a stale one stored
            _ = try await proxy.send(.GET, upstream.url("/fresh"))
            _ = try await proxy.send(.GET, upstream.url("/stale"))
            let asked = upstream.requests.count
            let onlyCached = [("Cache-Control", "only-if-cached")]
            // When the app asks for each, and for one never stored, only if cached
            let fresh = try await proxy.send(.GET, upstream.url("/fresh"), headers: onlyCached)
            let stale = try await proxy.send(.GET, upstream.url("/stale"), headers: onlyCached)
            let never = try await proxy.send(.GET, upstream.url("/never"), headers: onlyCached)
            // Then the fresh one is given from the cache, the others are 504s, and the upstream was not asked
            #expect(fresh.status == .ok && fresh.text == "stored" && fresh.header("Cache-Status").first?.hasPrefix("Kiosk;hit;") == true)
            #expect(stale.status == .gatewayTimeout && never.status == .gatewayTimeout)
            #expect(upstream.requests.count == asked)
        }
    }

    @Test("What the cache exports is HAR 1.2's decoded body, which imports back whole: a gzip answer replays offline as its content")
    func exportImportRoundTrip() async throws {
        let upstream = try await EchoUpstream.start()
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given a gzip answer stored as it came
            let sent = try await proxy.send(.GET, upstream.url("/gzip"))
            #expect(sent.header("Content-Encoding") == ["gzip"] && sent.body == EchoUpstream.gzipped)
            #expect(sent.header("Cache-Status").first?.contains("stored") == true)
            // When the cache is exported
            let file = TemporaryDirectory.url("kiosk-cache-roundtrip").appendingPathExtension("har")
            let archive = try proxy.kiosk.proxyCacheArchive().whole()
            try archive.write(to: file)
            // Then the archive holds the body decoded, its decoded size and what the coding saved (HAR 1.2 §content)
            let document = try #require(try JSONSerialization.jsonObject(with: archive) as? [String: Any])
            let entry = try #require(((document["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first)
            let content = try #require((entry["response"] as? [String: Any])?["content"] as? [String: Any])
            #expect(content["text"] as? String == "hello, proxy\n" && content["size"] as? Int == 13, "\(content)")
            #expect(content["compression"] as? Int == 13 - EchoUpstream.gzipped.count && content["encoding"] == nil)
            // And says what the entry is, the upstream's answer as stored, not a hit of the export's moment
            #expect(entry["_kioskDecision"] as? String == "network" && entry["_kioskCacheStatus"] as? String == "Kiosk;fwd=miss;fwd-status=200;stored;detail=network",
                    "\(entry.filter { $0.key.hasPrefix("_kiosk") })")
            // And, cleared and imported back, offline the app gets that content
            try proxy.kiosk.clearProxyCache()
            let imported = try proxy.kiosk.importIntoProxyCache(atPath: file.path)
            #expect(imported.stored == 1, "\(imported)")
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: true)
            let replayed = try await proxy.send(.GET, upstream.url("/gzip"))
            #expect(replayed.status == .ok && replayed.header("Content-Encoding") == [])
            #expect(replayed.text == "hello, proxy\n")
        }
    }

    @Test("A stored gzip answer is given decoded to a client that does not take gzip (curl, a script), coded to one that does",
          arguments: [(nil as String?, false), ("gzip, deflate, br", true), ("identity", false), ("gzip;q=0, identity", false), ("*", true),
                      ("x-gzip", true), ("br", false)])
    func storedCodingAsAccepted(acceptEncoding: String?, coded: Bool) async throws {
        let upstream = try await EchoUpstream.start()
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given a gzip answer stored as it came (for a browser, which takes gzip), and the proxy offline
            _ = try await proxy.send(.GET, upstream.url("/gzip"), headers: [("Accept-Encoding", "gzip")])
            try await Task.sleep(for: .milliseconds(100))
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: true)
            // When a client asks for it with this Accept-Encoding
            let answer = try await proxy.send(.GET, upstream.url("/gzip"), headers: acceptEncoding.map { [("Accept-Encoding", $0)] } ?? [])
            // Then one that takes gzip gets the stored bytes, any other the content, with its length, varying by Accept-Encoding
            #expect(answer.status == .ok && answer.header("Cache-Status").first?.hasPrefix("Kiosk;hit") == true)
            if coded {
                #expect(answer.header("Content-Encoding") == ["gzip"] && answer.body == EchoUpstream.gzipped)
            } else {
                #expect(answer.header("Content-Encoding") == [] && answer.text == "hello, proxy\n", "\(answer.header("Content-Encoding"))")
                #expect(answer.header("Content-Length") == ["13"])
                #expect(answer.header("Vary").joined().lowercased().contains("accept-encoding"))
            }
        }
    }

    @Test("A stored gzip answer that says no-transform is given as it came, whatever the client takes: no intermediary may decode it")
    func noTransformKeptCoded() async throws {
        let upstream = try await EchoUpstream.start()
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given a gzip answer marked no-transform, stored for a browser, and the proxy offline
            _ = try await proxy.send(.GET, upstream.url("/gzip-no-transform"), headers: [("Accept-Encoding", "gzip")])
            try await Task.sleep(for: .milliseconds(100))
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: true)
            // When a client that takes no gzip asks for it
            let answer = try await proxy.send(.GET, upstream.url("/gzip-no-transform"), headers: [("Accept-Encoding", "identity")])
            // Then it gets the stored bytes with their coding (RFC 9111 §5.2.2.6), not the content decoded
            #expect(answer.status == .ok && answer.header("Cache-Status").first?.hasPrefix("Kiosk;hit") == true)
            #expect(answer.header("Content-Encoding") == ["gzip"] && answer.body == EchoUpstream.gzipped)
        }
    }

    @Test("Exported and imported again, an identity's answer is left out (never given to anyone), named by the fields it was asked with, and a URL's Vary variants stay apart")
    func exportKeepsIdentitiesAndVariants() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            if head.uri.hasPrefix("/mine") { return (.ok, [("Content-Type", "application/json")], #"{"account": "alice"}"#) }
            let language = head.headers["Accept-Language"].first ?? "none"
            return (.ok, [("Content-Type", "text/plain"), ("Vary", "Accept-Language")], "greeting in \(language)")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given an answer stored for a signed-in request, and two variants of one URL by Accept-Language
            _ = try await proxy.send(.GET, upstream.url("/mine"), headers: [("Authorization", "Bearer alice-token")])
            _ = try await proxy.send(.GET, upstream.url("/mine?by=cookie"), headers: [("Cookie", "sid=alice-cookie")])
            _ = try await proxy.send(.GET, upstream.url("/mine?by=key"), headers: [("X-Api-Key", "alice-api-key")])
            _ = try await proxy.send(.GET, upstream.url("/greet"), headers: [("Accept-Language", "es")])
            _ = try await proxy.send(.GET, upstream.url("/greet"), headers: [("Accept-Language", "en")])

            // When the cache is exported, cleared and the archive imported back
            let file = TemporaryDirectory.url("kiosk-cache-identities").appendingPathExtension("har")
            let archive = try proxy.kiosk.proxyCacheArchive().whole()
            try archive.write(to: file)
            try proxy.kiosk.clearProxyCache()
            let imported = try proxy.kiosk.importIntoProxyCache(atPath: file.path)

            // Then the signed-in answer is left out as one whose credentials the archive hides, the token appears nowhere,
            // and both variants are stored again
            #expect(imported.stored == 2 && imported.hiddenCredentials == 3, "\(imported)")
            let text = String(decoding: archive, as: UTF8.self)
            #expect(!text.contains("alice-token") && !text.contains("alice-cookie") && !text.contains("alice-api-key"))
            // And each signed-in answer's request names the field its credentials came in, hidden, and no other
            let document = try #require(try JSONSerialization.jsonObject(with: archive) as? [String: Any])
            let entries = try #require((document["log"] as? [String: Any])?["entries"] as? [[String: Any]])
            func requestFields(_ path: String) throws -> [String] {
                let entry = try #require(entries.first { (($0["request"] as? [String: Any])?["url"] as? String)?.hasSuffix(path) == true })
                return ((entry["request"] as? [String: Any])?["headers"] as? [[String: Any]] ?? []).map { "\($0["name"] ?? ""): \($0["value"] ?? "")" }
            }
            #expect(try requestFields("/mine") == ["Authorization: <redacted>"])
            #expect(try requestFields("/mine?by=cookie") == ["Cookie: <redacted>"])
            #expect(try requestFields("/mine?by=key") == ["X-Api-Key: <redacted>"])
            // And offline, each language gets its own variant, and nobody gets the signed-in answer
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: true)
            #expect(try await proxy.send(.GET, upstream.url("/greet"), headers: [("Accept-Language", "es")]).text == "greeting in es")
            #expect(try await proxy.send(.GET, upstream.url("/greet"), headers: [("Accept-Language", "en")]).text == "greeting in en")
            #expect(try await proxy.send(.GET, upstream.url("/mine")).status == .gatewayTimeout)
            #expect(try await proxy.send(.GET, upstream.url("/mine"), headers: [("Authorization", "Bearer mallory")]).status == .gatewayTimeout)
        }
    }

    @Test("An archive's HEAD answer replays offline with the length its GET's body has, as recorded")
    func importedHeadKeepsItsLength() async throws {
        let upstream = try await ScriptedUpstream.start()
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given an archive with a HEAD's answer saying a 106-byte body
            let file = try archiveURL("head.har")
            try Data(#"{"log": {"entries": [{"startedDateTime": "2026-01-01T00:00:00Z", "request": {"method": "HEAD", "url": "\#(upstream.url("/hd"))", "headers": []}, "response": {"status": 200, "headers": [{"name": "Content-Length", "value": "106"}, {"name": "Content-Type", "value": "text/plain"}], "content": {"mimeType": "text/plain", "size": 0, "text": ""}}}]}}"#.utf8).write(to: file)
            #expect(try proxy.kiosk.importIntoProxyCache(atPath: file.path).stored == 1)
            // When it is asked for offline
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: true)
            let head = try await proxy.send(.HEAD, upstream.url("/hd"))
            // Then it says the recorded length, with no body
            #expect(head.status == .ok && head.body.isEmpty)
            #expect(head.header("Content-Length") == ["106"], "\(head.header("Content-Length"))")
        }
    }

    @Test("An archive's text under a charset its Content-Type names (GBK, ISO-8859-7) replays offline in that charset's bytes; under a label Kiosk cannot write, in UTF-8, the field saying utf-8")
    func importedCharsets() async throws {
        let upstream = try await ScriptedUpstream.start()
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching(ProxyCacheSettings(mode: .fallback, offline: true))) { proxy, upstream in
            // Given entries as Chrome records them: the body decoded to text, the charset named by the Content-Type field, not
            // the MIME type; and one whose MIME type alone names a label Kiosk cannot write
            let started = Date.ISO8601FormatStyle().format(proxy.harness.now.date)
            let entry = { (path: String, contentType: String?, mimeType: String, text: String) in
                let field = contentType.map { #", {"name": "content-type", "value": "\#($0)"}"# } ?? ""
                return #"{"startedDateTime": "\#(started)", "request": {"method": "GET", "url": "\#(upstream.url(path))", "headers": []}, "#
                    + #""response": {"status": 200, "headers": [{"name": "Cache-Control", "value": "max-age=600"}\#(field)], "#
                    + #""content": {"mimeType": "\#(mimeType)", "text": "\#(text)"}}}"#
            }
            let file = try archiveURL("charsets.har")
            try Data((#"{"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": ["#
                      + [entry("/gbk", "text/html; charset=GBK", "text/html", "中文网页"),
                         entry("/greek", "text/plain; charset=iso-8859-7", "text/plain", "Ελληνικά"),
                         entry("/unknown", nil, "text/plain; charset=x-user-defined", "café")].joined(separator: ",")
                      + "]}}").utf8).write(to: file)
            // When it is imported into the cache, and each answer asked for offline
            let imported = try proxy.kiosk.importIntoProxyCache(atPath: file.path)
            #expect(imported.stored == 3 && imported.inUTF8Instead == 1, "\(imported)")
            let gbk = try await proxy.send(.GET, upstream.url("/gbk"))
            let greek = try await proxy.send(.GET, upstream.url("/greek"))
            let unknown = try await proxy.send(.GET, upstream.url("/unknown"))
            // Then each answer's bytes are those of the charset its Content-Type names
            #expect(gbk.body == Data([0xD6, 0xD0, 0xCE, 0xC4, 0xCD, 0xF8, 0xD2, 0xB3]) && gbk.header("Content-Type") == ["text/html; charset=GBK"])
            #expect(greek.body == Data([0xC5, 0xEB, 0xEB, 0xE7, 0xED, 0xE9, 0xEA, 0xDC])
                    && greek.header("Content-Type") == ["text/plain; charset=iso-8859-7"])
            #expect(unknown.body == Data("café".utf8) && unknown.header("Content-Type") == ["text/plain; charset=utf-8"],
                    "\(unknown.header("Content-Type"))")
            #expect(upstream.requests.isEmpty)
        }
    }

    @Test("An answer starting with a UTF-8 byte order mark is exported by the cache with it, and imported again replays every byte")
    func byteOrderMarkExportedAndBack() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.ok, [("Cache-Control", "max-age=600"), ("Content-Type", "text/plain; charset=utf-8")], "\u{FEFF}hello") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given an answer whose text starts with a BOM, stored by the proxy
            let bytes = Data([0xEF, 0xBB, 0xBF] + Array("hello".utf8))
            #expect(try await proxy.send(.GET, upstream.url("/bom")).body == bytes)
            try await Task.sleep(for: .milliseconds(100))
            // When the cache is exported
            let file = try archiveURL("bom.har")
            try proxy.kiosk.proxyCacheArchive().whole().write(to: file)
            // Then the archive's text starts with the mark (read as bytes: JSONSerialization drops a string's leading BOM)
            #expect(try Data(contentsOf: file).range(of: Data(#""text" : "\#u{FEFF}hello""#.utf8)) != nil)
            // And imported into the emptied cache, it replays offline byte for byte
            try proxy.kiosk.clearProxyCache()
            #expect(try proxy.kiosk.importIntoProxyCache(atPath: file.path).stored == 1)
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: true)
            #expect(try await proxy.send(.GET, upstream.url("/bom")).body == bytes)
        }
    }

    @Test("An archive older than the answer stored for a request, imported or fetched by the proxy, leaves that answer, the entry counted as left; a newer one replaces it")
    func olderArchiveLeavesNewerAnswer() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.ok, [("Cache-Control", "max-age=600")], "fetched") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            let format = Date.ISO8601FormatStyle()
            let archive = { (name: String, path: String, secondsAgo: Double, text: String, before: Date?) throws -> String in
                let file = try archiveURL(name)
                let started = format.format((before ?? proxy.harness.now.date).addingTimeInterval(-secondsAgo))
                try Data((#"{"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": [{"startedDateTime": "\#(started)", "#
                          + #""request": {"method": "GET", "url": "\#(upstream.url(path))", "headers": []}, "response": {"status": 200, "#
                          + #""headers": [{"name": "Cache-Control", "value": "max-age=600"}], "content": {"mimeType": "text/plain", "text": "\#(text)"}}}]}}"#).utf8)
                    .write(to: file)
                return file.path
            }
            // Given an answer imported from an archive of a minute ago, and one the proxy fetched itself
            #expect(try proxy.kiosk.importIntoProxyCache(atPath: archive("newer.har", "/o", 60, "newer", nil)).stored == 1)
            #expect(try await proxy.send(.GET, upstream.url("/f")).text == "fetched")
            try await Task.sleep(for: .milliseconds(100))
            let fetchedAt = try #require(try proxy.kiosk.proxyCacheEntries().first { $0.url.hasSuffix("/f") }).responseTime
            // When archives recorded before each are imported
            let older = try proxy.kiosk.importIntoProxyCache(atPath: archive("older.har", "/o", 86_400 * 365, "older", nil))
            let beforeFetch = try proxy.kiosk.importIntoProxyCache(atPath: archive("before-fetch.har", "/f", 3600, "archived", fetchedAt))
            // Then neither stores its answer, and each says why
            #expect(older.stored == 0 && older.newerHeld == 1, "\(older)")
            #expect(beforeFetch.stored == 0 && beforeFetch.newerHeld == 1, "\(beforeFetch)")
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: true)
            #expect(try await proxy.send(.GET, upstream.url("/o")).text == "newer")
            #expect(try await proxy.send(.GET, upstream.url("/f")).text == "fetched")
            // And an archive newer than the stored answer still replaces it
            let newest = try proxy.kiosk.importIntoProxyCache(atPath: archive("newest.har", "/o", 0, "newest", nil))
            #expect(newest.stored == 1 && newest.newerHeld == 0, "\(newest)")
            #expect(try await proxy.send(.GET, upstream.url("/o")).text == "newest")
        }
    }

    @Test("An archive's answer recorded with an API key's header is that key's alone offline, as one the proxy stored for it would be")
    func importedAPIKeyIsAnIdentity() async throws {
        let upstream = try await ScriptedUpstream.start()
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given an archive with an answer asked with X-Api-Key
            let file = try archiveURL("api-key.har")
            try Data(#"{"log": {"entries": [{"startedDateTime": "2026-01-01T00:00:00Z", "request": {"method": "GET", "url": "\#(upstream.url("/account"))", "headers": [{"name": "X-Api-Key", "value": "key-of-alice-42"}]}, "response": {"status": 200, "headers": [], "content": {"mimeType": "text/plain", "text": "alice's account"}}}]}}"#.utf8).write(to: file)
            #expect(try proxy.kiosk.importIntoProxyCache(atPath: file.path).stored == 1)
            // When it is asked for offline with that key, another, and none
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: true)
            // Then that key gets it, and nobody else does
            #expect(try await proxy.send(.GET, upstream.url("/account"), headers: [("X-Api-Key", "key-of-alice-42")]).text == "alice's account")
            #expect(try await proxy.send(.GET, upstream.url("/account"), headers: [("X-Api-Key", "key-of-mallory")]).status == .gatewayTimeout)
            #expect(try await proxy.send(.GET, upstream.url("/account")).status == .gatewayTimeout)
        }
    }

    @Test("Two answers of one URL whose credentials an exporter hid are each counted as hidden, not as one answered again")
    func hiddenIdentitiesCountedApart() async throws {
        let upstream = try await ScriptedUpstream.start()
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given an archive with a URL's answers for two identities, both hidden
            let entry = { (body: String) in
                #"{"startedDateTime": "2026-01-01T00:00:00Z", "request": {"method": "GET", "url": "\#(upstream.url("/me"))", "headers": [{"name": "Authorization", "value": "<redacted>"}]}, "response": {"status": 200, "headers": [], "content": {"mimeType": "text/plain", "text": "\#(body)"}}}"#
            }
            let file = try archiveURL("hidden.har")
            try Data(#"{"log": {"entries": [\#(entry("alice's")), \#(entry("bob's"))]}}"#.utf8).write(to: file)
            // When it is imported
            let imported = try proxy.kiosk.importIntoProxyCache(atPath: file.path)
            // Then neither is stored, both are said to be hidden, and none "answered again (the newest answer is replayed)"
            #expect(imported.stored == 0 && imported.hiddenCredentials == 2, "\(imported)")
            #expect(!imported.skippedDescription.contains("answered again"), "\(imported.skippedDescription)")
        }
    }

    @Test("An archive's credentials hidden by other tools' words (REDACTED, [filtered], ***) leave its answer out, as Kiosk's own placeholder does",
          arguments: ["REDACTED", "session=[REDACTED]", "[Filtered]", "********", "<redacted>"])
    func otherToolsPlaceholders(value: String) throws {
        #expect(HAR.isHiddenCredential(value))
        #expect(!HAR.isHiddenCredential("session=abc123") && !HAR.isHiddenCredential("Bearer eyJhbGciOi"))
    }

    @Test("The export is a HAR archive of what is stored, its URL's key, its fields' credentials and its body's secret fields redacted")
    func export() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in
            (.ok, [("Content-Type", "application/json"), ("X-Api-Key", "k-123456789")], #"{"ok": true, "access_token": "tok-987654321"}"#)
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            _ = try await proxy.send(.GET, upstream.url("/data?apikey=s3cr3t-value"))
            let archive = try proxy.kiosk.proxyCacheArchive().whole()
            let document = try #require(try JSONSerialization.jsonObject(with: archive) as? [String: Any])
            let entries = try #require((document["log"] as? [String: Any])?["entries"] as? [[String: Any]])
            #expect(entries.count == 1)
            let text = String(decoding: archive, as: UTF8.self)
            #expect(text.contains("/data?apikey="))
            #expect(!text.contains("s3cr3t-value") && !text.contains("k-123456789") && !text.contains("tok-987654321"))
            // And the body, redacted, is not said to be cut
            let response = try #require(entries.first?["response"] as? [String: Any])
            #expect(response["_kioskTruncated"] as? Bool != true)
        }
    }

    @Test("An answer echoing its app's credentials inside a gzip or deflate coding reaches the app exactly; the log, the cache's page and both exports hide them in the decoded body",
          arguments: ["/echo-gzip", "/echo-deflate"])
    func echoedInsideACoding(path: String) async throws {
        try await withProxy(to: try await EchoUpstream.start(), stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given an app asking, with its token, its cookie (percent-encoded, as Express writes one) and a key in the query
            // (escaped), for an answer that echoes the request inside a content coding
            let url = upstream.url(path + "?token=query-token-123456%2F%2B")
            let asked = try await proxy.send(.GET, url, headers: [("Authorization", "Bearer bearer-secret-0001"),
                                                                   ("Cookie", "theme=dark; sid=s%3Acookie-sid-7654321")])
            // Then the app gets the coded answer exactly, its credentials inside
            let coding = String(path.dropFirst("/echo-".count))
            let decoded = try #require(ContentCoding.decoded(asked.body, coding: coding))
            let sent = String(decoding: decoded, as: UTF8.self)
            #expect(sent.contains("bearer-secret-0001") && sent.contains("query-token-123456%2F%2B") && sent.contains("s%3Acookie-sid-7654321"))
            let secrets = ["bearer-secret-0001", "query-token-123456", "cookie-sid-7654321"]
            // And the log's record, decoded as the console and `kiosk log show` read it, holds none of them
            let listed = try #require(try await proxy.waitForRecord { $0.url.contains(path) })
            let record = try #require(try proxy.kiosk.debugger.record(id: listed.id))
            let body = try #require(record.responseBody)
            let (shown, undone) = body.decoded(contentEncoding: coding)
            #expect(undone == coding)
            let logged = String(decoding: shown.data, as: UTF8.self)
            #expect(logged.contains("<redacted>") && !secrets.contains { logged.contains($0) }, "\(logged)")
            // And nor does the cache's page of the stored answer, nor either export
            let entry = try #require(try proxy.kiosk.proxyCacheEntries().first)
            let page = try #require(try proxy.kiosk.redactedProxyCacheEntry(id: entry.id))
            let pageText = String(decoding: ContentCoding.decoded(page.body, coding: coding) ?? page.body, as: UTF8.self)
            #expect(pageText.contains("<redacted>") && !secrets.contains { pageText.contains($0) }, "\(pageText)")
            for archive in [try proxy.kiosk.proxyCacheArchive().whole(), try proxy.kiosk.debugger.harArchive(matching: RequestFilter()).whole()] {
                let text = String(decoding: archive, as: UTF8.self)
                #expect(!secrets.contains { text.contains($0) }, "\(text.prefix(2000))")
            }
        }
    }

    @Test("An answer echoing its app's own credentials is replayed exactly, but its page, the list and the export hide them")
    func echoedCredentialsHidden() async throws {
        // Given an upstream that echoes what it was sent, as httpbin's /anything does, in its body and its fields
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            let echo = "\(head.uri) \(head.headers["Authorization"].first ?? "") \(head.headers["Cookie"].first ?? "")"
            return (.ok, [("Content-Type", "application/json"), ("X-Echo", echo), ("ETag", "\"\(head.headers["Authorization"].first ?? "")\"")],
                    #"{"url": "\#(head.uri)", "auth": "\#(head.headers["Authorization"].first ?? "")", "sid": "cookie-sid-7654321"}"#)
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // When an app asks with its token, its cookie and a key in the query
            let url = upstream.url("/me?token=query-token-123456")
            let asked = try await proxy.send(.GET, url, headers: [("Authorization", "Bearer bearer-secret-0001"),
                                                                   ("Cookie", "theme=dark; sid=cookie-sid-7654321")])
            #expect(asked.status == .ok)
            // Then offline the app gets the stored answer exactly as it was, its credentials and all
            try proxy.kiosk.switchProxyCache(mode: .fallback, offline: true)
            let replayed = try await proxy.send(.GET, url, headers: [("Authorization", "Bearer bearer-secret-0001"),
                                                                      ("Cookie", "theme=dark; sid=cookie-sid-7654321")])
            #expect(replayed.body == asked.body && replayed.header("X-Echo") == asked.header("X-Echo"))
            #expect(String(decoding: replayed.body, as: UTF8.self).contains("bearer-secret-0001"))
            // But the entry's page, the list and the export show none of them
            let id = try #require(try proxy.kiosk.proxyCacheEntries().first?.id)
            let entry = try #require(try proxy.kiosk.redactedProxyCacheEntry(id: id))
            let listed = try proxy.kiosk.proxyCacheEntries()
            let archive = String(decoding: try proxy.kiosk.proxyCacheArchive().whole(), as: UTF8.self)
            let shown = [String(decoding: entry.body, as: UTF8.self), entry.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n"),
                         listed.flatMap { $0.headers.map(\.value) }.joined(separator: "\n"), archive]
            for (index, text) in shown.enumerated() {
                for secret in ["bearer-secret-0001", "cookie-sid-7654321", "query-token-123456"] {
                    #expect(!text.contains(secret), "\(secret) is shown in \(index)")
                }
            }
            #expect(shown[0].contains(#""auth": "<redacted>""#) && shown[1].contains("X-Echo: "))
        }
    }
}

/// An upstream answer body that counts: "v1", "v2"... at each full answer.
private final class Versions: Sendable {
    private let count = Mutex(0)
    func next() -> String { count.withLock { $0 += 1; return "v\($0)" } }
    var current: String { count.withLock { "v\($0)" } }
}

@Suite("kiosk proxy --cache http: an RFC 9111 private cache with RFC 5861's stale answers")
struct ProxyHTTPCacheTests {
    private static var http: (inout KioskConfiguration) -> Void { caching(ProxyCacheSettings(mode: .http)) }

    @Test("An answer slow to end (its head, then a pause) is stored once it ended whole, and stands in when the upstream is gone")
    func slowAnswerIsStoredWhenWhole() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.ok, [("Content-Type", "application/json"), ("Cache-Control", "max-age=100")], #"{"items": [1, 2, 3, 4]}"#) }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.slowAfterATenth(caching())) { proxy, upstream in
            // Given an upstream that sends the head and half the body, then the rest after a pause past the proxy's wait
            // for a body's end (a tenth of a second here), so that the answer reaches the app as it comes
            upstream.answerSlowly((pause: .milliseconds(400), cut: false))
            let first = try await proxy.send(.GET, upstream.url("/slow"))
            #expect(first.status == .ok && first.text == #"{"items": [1, 2, 3, 4]}"#, "\(first.text)")
            let record = try #require(try await StreamingTests.record(of: upstream.url("/slow"), in: proxy))
            #expect(record.touchedBy.contains { $0.kind == .stream }, "it streamed: \(record.touchedBy)")
            // (It is stored behind its end, not in the app's last read: by the time an app could notice its network gone.)
            #expect(try await StreamingTests.eventually { (try? proxy.kiosk.proxyCacheEntries().count) == 1 }, "it was stored")

            // When the upstream goes away
            await upstream.stop()
            let again = try await proxy.send(.GET, upstream.url("/slow"))

            // Then the answer kept as it passed stands in, whole
            #expect(again.status == .ok && again.text == #"{"items": [1, 2, 3, 4]}"#, "\(again.text)")
            #expect(again.header("Cache-Status").first?.hasSuffix("detail=fallback") == true, "\(again.header("Cache-Status"))")
        }
    }

    @Test("An answer cut short as it streams stores nothing and leaves the stored one to stand in, in http and fallback",
          arguments: [ProxyCacheMode.http, .fallback])
    func cutAnswerKeepsTheStoredOne(mode: ProxyCacheMode) async throws {
        let upstream = try await ScriptedUpstream.start()
        let body = Mutex("GOOD COPY")
        upstream.answer { _ in (.ok, [("Cache-Control", "max-age=1, stale-if-error=600")], body.withLock { $0 }) }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.slowAfterATenth(caching(ProxyCacheSettings(mode: mode)))) { proxy, upstream in
            // Given a stored answer, stale two seconds later
            #expect(try await proxy.send(.GET, upstream.url("/crash")).text == "GOOD COPY")
            await proxy.harness.now.advance(by: .seconds(2))

            // When the upstream's next answer, newer and slow to end, is cut before its end
            body.withLock { $0 = String(repeating: "half a new copy ", count: 64) }
            upstream.answerSlowly((pause: .milliseconds(400), cut: true))
            let cut = try? await proxy.send(.GET, upstream.url("/crash"))
            #expect(cut.map { $0.text.count < 1024 } ?? true, "the app sees it cut: \(String(describing: cut?.text.count))")

            // Then, the upstream gone, the stored answer still stands in
            await upstream.stop()
            let again = try await proxy.send(.GET, upstream.url("/crash"))
            #expect(again.status == .ok && again.text == "GOOD COPY", "\(again.status) \(again.text)")
            #expect(again.header("Cache-Status").first?.contains("fwd=stale") == true, "\(again.header("Cache-Status"))")
        }
    }

    @Test("In http, a newer answer the cache may not keep whose head names another ETag drops the stored one at its head, however its body ends")
    func changedHeadDropsTheStoredOne() async throws {
        let upstream = try await ScriptedUpstream.start()
        let newer = Mutex(false)
        upstream.answer { _ in
            newer.withLock { $0 } ? (.ok, [("ETag", #""v2""#), ("Cache-Control", "no-store")], String(repeating: "new ", count: 64))
                : (.ok, [("ETag", #""v1""#), ("Cache-Control", "max-age=0")], "old copy")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.slowAfterATenth(Self.http)) { proxy, upstream in
            // Given a stored answer with ETag "v1"
            #expect(try await proxy.send(.GET, upstream.url("/v")).text == "old copy")
            let stored = try proxy.kiosk.proxyCacheEntries()
            #expect(stored.count == 1)
            // When the upstream's next answer, ETag "v2" and no-store, streams and is cut before its end
            newer.withLock { $0 = true }
            upstream.answerSlowly((pause: .milliseconds(400), cut: true))
            _ = try? await proxy.send(.GET, upstream.url("/v"))
            // Then the stored "v1" is gone: the head said it is out of date, whatever became of the body
            let left = try proxy.kiosk.proxyCacheEntries()
            #expect(left.isEmpty, "\(left.map(\.url))")
        }
    }

    @Test("A whole 206 stored as its 200 says the lifetime the stored 200 has (Last-Modified's heuristic), not a 206's none")
    func wholePartialContentTTL() async throws {
        let upstream = try await ScriptedUpstream.start()
        let modified = HTTPDate.format(Date().addingTimeInterval(-20 * 86_400))
        upstream.answer { _ in
            (.partialContent, [("Content-Range", "bytes 0-3/4"), ("Last-Modified", modified), ("Content-Type", "audio/mpeg")], "abcd")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // When a player asks for the whole of it as a range, and it comes whole
            let answer = try await proxy.send(.GET, upstream.url("/song"), headers: [("Range", "bytes=0-")])
            // Then it is stored, fresh for a tenth of the time since it changed, at most a day (RFC 9111 §4.2.2)
            #expect(answer.header("Cache-Status").first?.contains(";ttl=86400;stored;") == true, "\(answer.header("Cache-Status"))")
        }
    }

    /// `configure`, with the proxy's wait for a body of unknown length to end cut to a tenth of a second.
    private static func slowAfterATenth(_ configure: @escaping (inout KioskConfiguration) -> Void) -> (inout KioskConfiguration) -> Void {
        { configuration in
            configure(&configuration)
            configuration.proxyTransport.slowBodyDelay = .milliseconds(100)
        }
    }

    @Test("A fresh answer is given without asking, with Age and its ttl; once stale it is revalidated, and a 304 renews it")
    func freshThenRevalidated() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            head.headers["If-None-Match"].first == #""e1""# ? (.notModified, [("ETag", #""e1""#), ("Cache-Control", "max-age=60")], "")
                : (.ok, [("ETag", #""e1""#), ("Cache-Control", "max-age=60")], "body")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given an answer fresh for 60 s
            let first = try await proxy.send(.GET, upstream.url("/r"))
            #expect(first.header("Cache-Status") == ["Kiosk;fwd=uri-miss;fwd-status=200;ttl=60;stored;detail=network"])

            // When asked again 20 s later: a hit, without the upstream
            await proxy.harness.now.advance(by: .seconds(20))
            let hit = try await proxy.send(.GET, upstream.url("/r"))
            #expect(hit.text == "body" && hit.header("Age") == ["20"])
            #expect(hit.header("Cache-Status") == ["Kiosk;hit;ttl=40;detail=fresh"])
            #expect(upstream.requests.count == 1)

            // When asked 50 s after that: revalidated with its ETag, the 304 renews it, the app gets the body
            await proxy.harness.now.advance(by: .seconds(50))
            let renewed = try await proxy.send(.GET, upstream.url("/r"))
            #expect(renewed.status == .ok && renewed.text == "body")
            #expect(renewed.header("Cache-Status") == ["Kiosk;fwd=stale;fwd-status=304;ttl=60;stored;detail=revalidated"])
            #expect(upstream.requests.count == 2 && upstream.requests.last?.headers["If-None-Match"] == [#""e1""#])
            // And it is fresh again
            #expect(try await proxy.send(.GET, upstream.url("/r")).header("Cache-Status").first?.hasPrefix("Kiosk;hit;") == true)
            #expect(upstream.requests.count == 2)
        }
    }

    @Test("An answer that came without a Date is dated when it came, and keeps that date at every use, its Age counting from it")
    func dateOfADatelessAnswer() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.ok, [("Cache-Control", "max-age=60")], "undated") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given an answer with no Date, stored
            let first = try await proxy.send(.GET, upstream.url("/undated"))
            let dated = try #require(first.header("Date").first)
            // (kept with it: the date it came, not one made at each use)
            #expect(try proxy.kiosk.proxyCacheEntries().first?.headers["Date"] == dated)
            // When it is given again 20 s later, from the store
            await proxy.harness.now.advance(by: .seconds(20))
            let hit = try await proxy.send(.GET, upstream.url("/undated"))
            // Then it carries the date it came with, 20 s older than its use, as its Age says
            #expect(hit.header("Cache-Status").first?.hasPrefix("Kiosk;hit") == true)
            #expect(hit.header("Date") == [dated] && hit.header("Age") == ["20"])
        }
    }

    @Test("An answer that sets a cookie is never a hit nor revalidated: each app gets its own cookie; with the upstream gone, the stored page stands in without it")
    func setsCookie() async throws {
        let upstream = try await ScriptedUpstream.start()
        let version = Versions()
        upstream.answer { _ in
            let token = version.next()
            return (.ok, [("ETag", #""e1""#), ("Cache-Control", "max-age=300"), ("Set-Cookie", "csrf=\(token); Path=/")], "form")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given a form fresh for five minutes whose answer sets a CSRF cookie, stored
            let first = try await proxy.send(.GET, upstream.url("/form"))
            #expect(first.header("Set-Cookie") == ["csrf=v1; Path=/"] && first.header("Cache-Status").first?.contains(";stored") == true)

            // When another app asks a minute later
            await proxy.harness.now.advance(by: .seconds(60))
            let second = try await proxy.send(.GET, upstream.url("/form"))
            // Then it went upstream as the app asked (no validator added) and got its own cookie
            #expect(second.header("Set-Cookie") == ["csrf=v2; Path=/"], "\(second.header("Cache-Status"))")
            #expect(upstream.requests.count == 2 && upstream.requests.last?.headers["If-None-Match"] == [])
            #expect(second.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=bypass;fwd-status=200") == true, "\(second.header("Cache-Status"))")

            // And when the upstream is gone, the stored page stands in, setting no cookie
            await upstream.stop()
            let offline = try await proxy.send(.GET, upstream.url("/form"))
            #expect(offline.status == .ok && offline.text == "form" && offline.header("Set-Cookie") == [])
            #expect(offline.header("Cache-Status").first?.contains("detail=offline") == true, "\(offline.header("Cache-Status"))")
        }
    }

    @Test("A request that changes a resource and succeeds has what is stored for it, every variant and identity, and what its Location names, asked for again",
          arguments: ["POST", "PUT", "DELETE", "PATCH"])
    func unsafeMethodInvalidates(_ method: String) async throws {
        let upstream = try await ScriptedUpstream.start()
        let version = Versions()
        upstream.answer { head in
            switch (head.method, head.uri.hasSuffix("/item") || head.uri.hasSuffix("/item/")) {
            case (.GET, _): return (.ok, [("Cache-Control", "max-age=600"), ("Vary", "Accept-Language")], version.current)
            case (_, true): _ = version.next(); return (.ok, [("Location", "/created")], "done")
            default: return (.badRequest, [], "refused")
            }
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given /item stored fresh in two languages and for a signed-in user, and /created and /other stored too
            for headers in [[("Accept-Language", "en")], [("Accept-Language", "fr")], [("Authorization", "Bearer t")]] {
                _ = try await proxy.send(.GET, upstream.url("/item"), headers: headers)
            }
            _ = try await proxy.send(.GET, upstream.url("/created"))
            _ = try await proxy.send(.GET, upstream.url("/other"))
            #expect(try await proxy.send(.GET, upstream.url("/item"), headers: [("Accept-Language", "en")])
                .header("Cache-Status").first?.hasPrefix("Kiosk;hit") == true)
            // When a request of another kind to /other fails, nothing is dropped
            _ = try await proxy.send(HTTPMethod(rawValue: method), upstream.url("/other"), body: "x")
            #expect(try await proxy.send(.GET, upstream.url("/other")).header("Cache-Status").first?.hasPrefix("Kiosk;hit") == true)
            // When the app changes /item and the upstream says it did
            let change = try await proxy.send(HTTPMethod(rawValue: method), upstream.url("/item"), body: #"{"name": "new"}"#)
            #expect(change.status == .ok)
            // Then every answer stored for /item goes upstream again and gets the new version
            for headers in [[("Accept-Language", "en")], [("Accept-Language", "fr")], [("Authorization", "Bearer t")]] {
                let again = try await proxy.send(.GET, upstream.url("/item"), headers: headers)
                #expect(again.text == "v1" && again.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=") == true,
                        "\(headers) \(again.text) \(again.header("Cache-Status"))")
            }
            // And so does the URL its Location named, while another stays stored
            #expect(try await proxy.send(.GET, upstream.url("/created")).header("Cache-Status").first?.hasPrefix("Kiosk;fwd=stale") == true)
            #expect(try await proxy.send(.GET, upstream.url("/other")).header("Cache-Status").first?.hasPrefix("Kiosk;hit") == true)
        }
    }

    @Test("A 304 that says no-store, or Vary: *, drops the answer it confirms: the app gets it, nothing stays to stand in later",
          arguments: ["no-store", "vary"])
    func notModifiedForbidsKeeping(_ forbids: String) async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            head.headers["If-None-Match"].isEmpty
                ? (.ok, [("ETag", #""v1""#), ("Cache-Control", "max-age=0")], "original")
                : (.notModified, [("ETag", #""v1""#)] + (forbids == "vary" ? [("Vary", "*")] : [("Cache-Control", "no-store")]), "")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given an answer stored stale at once
            #expect(try await proxy.send(.GET, upstream.url("/r")).text == "original")
            #expect(try proxy.kiosk.proxyCacheEntries().count == 1)
            // When its revalidation's 304 says the answer may not be kept
            let renewed = try await proxy.send(.GET, upstream.url("/r"))
            // Then the app gets the answer, not said stored, and the cache holds nothing for it
            #expect(renewed.status == .ok && renewed.text == "original")
            #expect(renewed.header("Cache-Status").first?.contains("stored") == false, "\(renewed.header("Cache-Status"))")
            #expect(try proxy.kiosk.proxyCacheEntries().isEmpty)
            // And with the upstream gone there is nothing to give
            await upstream.stop()
            #expect(try await proxy.send(.GET, upstream.url("/r")).status == .badGateway)
        }
    }

    @Test("A 304 is never stored: an app that asked for the whole answer and got a 304 leaves nothing to answer the next one with")
    func notModifiedIsNotStored() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.notModified, [("ETag", #""x""#), ("Cache-Control", "max-age=60")], "") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given a plain GET the upstream answered with a 304
            let first = try await proxy.send(.GET, upstream.url("/n"))
            #expect(first.status == .notModified && first.header("Cache-Status").first?.contains("stored") == false)
            // When the same GET comes again
            let second = try await proxy.send(.GET, upstream.url("/n"))
            // Then it goes upstream: no empty 304 was kept to answer it with
            #expect(second.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=uri-miss") == true, "\(second.header("Cache-Status"))")
            #expect(upstream.requests.count == 2)
        }
    }

    @Test("A 304 naming another representation renews nothing: the app's request goes upstream again as it was, and gets the new answer")
    func notModifiedOfAnotherRepresentation() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            head.headers["If-None-Match"].isEmpty
                ? (.ok, [("ETag", #""v1""#), ("Content-Type", "text/plain"), ("Cache-Control", "max-age=0")], "first")
                : (.ok, [], "")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given an answer stored with ETag "v1", stale at once
            #expect(try await proxy.send(.GET, upstream.url("/v")).text == "first")
            // When the upstream now answers a revalidation with a 304 for "v2", and a plain GET with v2's body
            upstream.answer { head in
                head.headers["If-None-Match"].isEmpty
                    ? (.ok, [("ETag", #""v2""#), ("Content-Type", "application/json"), ("Cache-Control", "max-age=60")], #"{"v":2}"#)
                    : (.notModified, [("ETag", #""v2""#), ("Content-Type", "application/json"), ("Cache-Control", "max-age=60")], "")
            }
            let second = try await proxy.send(.GET, upstream.url("/v"))
            // Then the app gets v2 whole, not v1's body under v2's fields
            #expect(second.status == .ok && second.text == #"{"v":2}"# && second.header("ETag") == [#""v2""#], "\(second.text)")
            #expect(upstream.requests.count == 3 && upstream.requests.last?.headers["If-None-Match"].isEmpty == true)
            // And v2 is what is stored from now on
            let third = try await proxy.send(.GET, upstream.url("/v"))
            #expect(third.text == #"{"v":2}"# && third.header("Cache-Status").first?.hasPrefix("Kiosk;hit;") == true)
        }
    }

    @Test("An answer stored without Vary does not hide a variant stored after it: of the answers that match, the newest is given (RFC 9111 §4.1)")
    func newestMatchingVariant() async throws {
        let upstream = try await ScriptedUpstream.start()
        // A server that adds Vary: Origin to its CORS answers only
        upstream.answer { head in
            head.headers["Origin"].isEmpty ? (.ok, [("Cache-Control", "max-age=100")], "plain")
                : (.ok, [("Cache-Control", "max-age=100"), ("Vary", "Origin")], "cors")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given the plain answer stored, then the CORS variant fetched and stored after it
            #expect(try await proxy.send(.GET, upstream.url("/v")).text == "plain")
            let cors = try await proxy.send(.GET, upstream.url("/v"), headers: [("Origin", "http://a.test"), ("Cache-Control", "no-cache")])
            #expect(cors.text == "cors" && cors.header("Cache-Status").first?.contains("stored") == true)
            // When the CORS request comes again
            let again = try await proxy.send(.GET, upstream.url("/v"), headers: [("Origin", "http://a.test")])
            // Then it is a hit of the newer variant, not the older answer that matches everything
            #expect(again.text == "cors" && again.header("Cache-Status").first?.hasPrefix("Kiosk;hit;") == true, "\(again.text)")
            #expect(upstream.requests.count == 2)
        }
    }

    @Test("A 304 without validators to the app's own If-Modified-Since or If-None-Match renews no stored copy those are not the validators of")
    func notModifiedWithoutValidators() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            head.headers["If-Modified-Since"].isEmpty && head.headers["If-None-Match"].isEmpty
                ? (.ok, [("Cache-Control", "max-age=1"), ("Last-Modified", "Wed, 01 Jan 2020 00:00:00 GMT"), ("ETag", #""e1""#)], "old")
                : (.notModified, [("Cache-Control", "max-age=100")], "")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given a copy of 2020 stored, now stale
            #expect(try await proxy.send(.GET, upstream.url("/d")).text == "old")
            await proxy.harness.now.advance(by: .seconds(5))
            // When an app asks "modified since 2024?", then "not e2?", and each is answered 304 without a validator
            let since = try await proxy.send(.GET, upstream.url("/d"), headers: [("If-Modified-Since", "Mon, 01 Jan 2024 00:00:00 GMT")])
            let tag = try await proxy.send(.GET, upstream.url("/d"), headers: [("If-None-Match", #""e2""#)])
            #expect(since.status == .notModified && tag.status == .notModified)
            // Then the stored copy is still stale: the next plain request goes upstream rather than being a fresh hit
            let asked = upstream.requests.count
            let next = try await proxy.send(.GET, upstream.url("/d"))
            #expect(upstream.requests.count == asked + 1, "\(next.header("Cache-Status"))")
            // While a 304 to the copy's own validator does renew it
            await proxy.harness.now.advance(by: .seconds(5))
            _ = try await proxy.send(.GET, upstream.url("/d"), headers: [("If-None-Match", #""e1""#)])
            let renewed = try await proxy.send(.GET, upstream.url("/d"))
            #expect(renewed.text == "old" && renewed.header("Cache-Status").first?.hasPrefix("Kiosk;hit;") == true)
        }
    }

    @Test("A field Vary names that the request lacks matches only its lack, not the field sent empty (RFC 9111 §4.1)")
    func emptyIsNotAbsent() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in (.ok, [("Cache-Control", "max-age=100"), ("Vary", "X-Team")], "for [\(head.headers["X-Team"].first ?? "none")]") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given the answer to a request that sends X-Team empty stored
            let empty = try await proxy.send(.GET, upstream.url("/t"), headers: [("X-Team", "")])
            // When a request without X-Team comes, then again
            let absent = try await proxy.send(.GET, upstream.url("/t"))
            let again = try await proxy.send(.GET, upstream.url("/t"))
            // Then the first of them went upstream for its own variant, and the second was a hit of it
            #expect(empty.text == "for []" && absent.text == "for [none]" && again.text == "for [none]")
            #expect(upstream.requests.count == 2)
            #expect(again.header("Cache-Status").first?.hasPrefix("Kiosk;hit;") == true)
        }
    }

    @Test("The upstream's Age counts in a stored answer's age; the same answer sent again, younger, is as young as it came")
    func upstreamAge() async throws {
        let upstream = try await ScriptedUpstream.start()
        // An answer 50 s old when it comes (from a cache on the way), fresh for 60; then the same answer, new
        let ages = Mutex(["50", "0"])
        upstream.answer { _ in (.ok, [("Cache-Control", "max-age=60"), ("Age", ages.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] })], "aged") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            #expect(try await proxy.send(.GET, upstream.url("/a")).header("Age") == ["50"])
            // When asked 5 s later: a hit 55 s old, fresh for 5 s more
            await proxy.harness.now.advance(by: .seconds(5))
            let hit = try await proxy.send(.GET, upstream.url("/a"))
            #expect(hit.header("Age") == ["55"])
            #expect(hit.header("Cache-Status") == ["Kiosk;hit;ttl=5;detail=fresh"])
            // When asked 10 s after that: stale, so it goes upstream, which sends the same answer, 0 s old
            await proxy.harness.now.advance(by: .seconds(10))
            let again = try await proxy.send(.GET, upstream.url("/a"))
            #expect(again.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=stale;fwd-status=200;") == true)
            #expect(upstream.requests.count == 2)
            // Then the stored answer is as young as that one: a hit 10 s later is 10 s old, fresh for 50 more
            _ = try proxy.kiosk.proxyCacheStats()
            await proxy.harness.now.advance(by: .seconds(10))
            let young = try await proxy.send(.GET, upstream.url("/a"))
            #expect(young.header("Age") == ["10"])
            #expect(young.header("Cache-Status") == ["Kiosk;hit;ttl=50;detail=fresh"])
            #expect(upstream.requests.count == 2)
        }
    }

    @Test("A 304 without Age or Date leaves none of the renewed answer's: its age starts again from the 304")
    func renewedAge() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            head.headers["If-None-Match"].first == #""e1""# ? (.notModified, [("ETag", #""e1""#), ("Cache-Control", "max-age=60")], "")
                : (.ok, [("ETag", #""e1""#), ("Cache-Control", "max-age=60"), ("Age", "40")], "body")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            _ = try await proxy.send(.GET, upstream.url("/r"))
            // Stale 30 s later (40 + 30 > 60): revalidated, and renewed by a 304 that carries no Age
            await proxy.harness.now.advance(by: .seconds(30))
            let renewed = try await proxy.send(.GET, upstream.url("/r"))
            #expect(renewed.header("Cache-Status") == ["Kiosk;fwd=stale;fwd-status=304;ttl=60;stored;detail=revalidated"])
            // Then 20 s on it is 20 s old, not 60
            await proxy.harness.now.advance(by: .seconds(20))
            let hit = try await proxy.send(.GET, upstream.url("/r"))
            #expect(hit.header("Age") == ["20"])
            #expect(hit.header("Cache-Status") == ["Kiosk;hit;ttl=40;detail=fresh"])
        }
    }

    /// Waits (up to 30 s: the whole suite running at once on two cores once kept a renewal from being stored within 5)
    /// until the one stored answer's body is `body`, as a revalidation sent behind stores it.
    private static func waitForStoredBody(_ body: String, in proxy: ProxyHarness) async throws {
        let id = try #require(try proxy.kiosk.proxyCacheEntries().first?.id)
        // A `for … where` loop would go on reading the entry 3,000 times after it changed: stop once it has.
        let deadline = ContinuousClock.now + .seconds(30)
        while try proxy.kiosk.proxyCacheEntry(id: id)?.body != Data(body.utf8), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test("Within stale-while-revalidate a stale answer is given at once; the next request sees the revalidated body; the revalidation is in the log")
    func staleWhileRevalidate() async throws {
        let upstream = try await ScriptedUpstream.start()
        let versions = Versions()
        upstream.answer { _ in (.ok, [("Cache-Control", "max-age=10, stale-while-revalidate=100")], versions.next()) }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            #expect(try await proxy.send(.GET, upstream.url("/s")).text == "v1")
            await proxy.harness.now.advance(by: .seconds(30))
            // When stale within the window: the stored answer at once
            let stale = try await proxy.send(.GET, upstream.url("/s"))
            #expect(stale.text == "v1")
            #expect(stale.header("Cache-Status") == ["Kiosk;hit;ttl=-20;detail=stale-while-revalidate"])
            // And a second request at once gets the stale one or the renewed one, never a second revalidation
            #expect(["v1", "v2"].contains(try await proxy.send(.GET, upstream.url("/s")).text))
            // Then the revalidation behind them stores the new answer, which the next request gets, fresh
            try await Self.waitForStoredBody("v2", in: proxy)
            let next = try await proxy.send(.GET, upstream.url("/s"))
            #expect(next.text == "v2")
            #expect(next.header("Cache-Status").first?.hasPrefix("Kiosk;hit;ttl=10;") == true)
            #expect(upstream.requests.count == 2)
            // And the log holds the revalidation sent behind them, as it holds every exchange with the upstream
            let revalidation = try await proxy.waitForRecord { $0.url.hasSuffix("/s") && $0.cacheStatus.forward == .stale && $0.status == 200 }
            let logged = try proxy.records().map { "\($0.url) \($0.cacheStatus.headerValue)" }
            #expect(revalidation?.cacheStatus.isStored == true, "\(logged)")
        }
    }

    @Test("A HEAD given a stale GET answer within stale-while-revalidate renews it behind with a GET, which the next GET gets")
    func staleWhileRevalidateForAHead() async throws {
        let upstream = try await ScriptedUpstream.start()
        let versions = Versions()
        upstream.answer { _ in (.ok, [("Cache-Control", "max-age=10, stale-while-revalidate=100")], versions.next()) }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given a GET's answer stored and gone stale within its window
            #expect(try await proxy.send(.GET, upstream.url("/sh")).text == "v1")
            await proxy.harness.now.advance(by: .seconds(30))
            // When an app asks for it with HEAD: answered at once from the stored GET's
            let head = try await proxy.send(.HEAD, upstream.url("/sh"))
            #expect(head.status == .ok && head.header("Cache-Status") == ["Kiosk;hit;ttl=-20;detail=stale-while-revalidate"])
            // Then the revalidation behind it is a GET, whose answer is stored, and the next GET gets it
            try await Self.waitForStoredBody("v2", in: proxy)
            #expect(upstream.requests.map(\.method) == [.GET, .GET])
            #expect(try await proxy.send(.GET, upstream.url("/sh")).text == "v2")
        }
    }

    @Test("A newer answer this cache may not keep (no-store, Vary: *) drops the stored one: the next request is not given the older as fresh",
          arguments: ["no-store", "vary"])
    func newerAnswerNotKept(_ forbids: String) async throws {
        let upstream = try await ScriptedUpstream.start()
        let versions = Versions()
        upstream.answer { _ in
            let version = versions.next()
            return version == "v1" ? (.ok, [("Cache-Control", "max-age=600")], version)
                : (.ok, forbids == "vary" ? [("Cache-Control", "max-age=600"), ("Vary", "*")] : [("Cache-Control", "no-store")], version)
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given an answer stored fresh for 10 minutes
            #expect(try await proxy.send(.GET, upstream.url("/u")).text == "v1")
            // When a reload gets a newer answer that may not be kept
            let reload = try await proxy.send(.GET, upstream.url("/u"), headers: [("Cache-Control", "no-cache")])
            #expect(reload.text == "v2")
            // Then the older answer is gone, and the next request goes upstream for the answer as it is now
            #expect(try proxy.kiosk.proxyCacheEntries().isEmpty)
            let next = try await proxy.send(.GET, upstream.url("/u"))
            #expect(next.text == "v3" && next.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=uri-miss;") == true, "\(next.header("Cache-Status"))")
        }
    }

    @Test("A part of the answer (a 206 to a Range the cache could not serve) leaves the stored whole answer to stand in")
    func partialKeepsTheStored() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            head.headers["Range"].isEmpty ? (.ok, [("Cache-Control", "max-age=0")], "0123456789")
                : (.partialContent, [("Content-Range", "bytes 0-3/10"), ("Cache-Control", "max-age=0")], "0123")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given a whole answer stored, stale at once, without validators
            let whole = try await proxy.send(.GET, upstream.url("/v"))
            #expect(whole.text == "0123456789")
            // When a Range request goes upstream and a 206 comes back
            let part = try await proxy.send(.GET, upstream.url("/v"), headers: [("Range", "bytes=0-3")])
            #expect(part.status.code == 206)
            // Then the whole answer is still stored, to stand in when the upstream cannot answer
            let stored = try proxy.kiosk.proxyCacheEntries()
            #expect(stored.count == 1)
        }
    }

    @Test("A newer answer that is a server error or a 429 leaves the stored answer, still fresh")
    func newerFailureKeepsTheStored() async throws {
        let upstream = try await ScriptedUpstream.start()
        let versions = Versions()
        upstream.answer { _ in
            let version = versions.next()
            return switch version {
            case "v1": (.ok, [("Cache-Control", "max-age=600")], version)
            case "v2": (.serviceUnavailable, [("Cache-Control", "no-store")], version)
            default: (.tooManyRequests, [("Cache-Control", "no-store")], version)
            }
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given an answer stored fresh for 10 minutes
            #expect(try await proxy.send(.GET, upstream.url("/f")).text == "v1")
            // When reloads get a 503 and a 429, neither of which may be kept
            #expect(try await proxy.send(.GET, upstream.url("/f"), headers: [("Cache-Control", "no-cache")]).status == .serviceUnavailable)
            #expect(try await proxy.send(.GET, upstream.url("/f"), headers: [("Cache-Control", "no-cache")]).status == .tooManyRequests)
            // Then the stored answer stays, and is given fresh
            let next = try await proxy.send(.GET, upstream.url("/f"))
            #expect(next.text == "v1" && next.header("Cache-Status").first?.hasPrefix("Kiosk;hit") == true, "\(next.header("Cache-Status"))")
        }
    }

    @Test("In fallback a newer answer that may not be kept leaves the stored one to stand in for a failure, however old")
    func fallbackKeepsTheStoredPastANewerNoStore() async throws {
        let upstream = try await ScriptedUpstream.start()
        let versions = Versions()
        upstream.answer { _ in
            let version = versions.next()
            return (.ok, version == "v1" ? [] : [("Cache-Control", "no-store")], version)
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // Given an answer stored by --cache fallback, then a newer one that may not be kept
            #expect(try await proxy.send(.GET, upstream.url("/p")).text == "v1")
            #expect(try await proxy.send(.GET, upstream.url("/p")).text == "v2")
            #expect(try proxy.kiosk.proxyCacheEntries().count == 1)
            // When the upstream goes away
            await upstream.stop()
            // Then the stored answer stands in, said to
            let offline = try await proxy.send(.GET, upstream.url("/p"))
            #expect(offline.text == "v1" && offline.header("Cache-Status").first?.hasSuffix("detail=fallback") == true, "\(offline.header("Cache-Status"))")
        }
    }

    @Test("must-understand keeps an answer only of a status RFC 9110 defines, and then overrides its no-store (RFC 9111 §5.2.2.3)")
    func mustUnderstand() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            head.uri == "/299" ? (HTTPResponseStatus(statusCode: 299), [("Cache-Control", "max-age=100, must-understand")], "odd")
                : (.ok, [("Cache-Control", "max-age=100, no-store, must-understand")], "known")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given an answer of a status no RFC defines, and a 200 whose no-store is there for caches that do not understand
            for path in ["/299", "/200"] { _ = try await proxy.send(.GET, upstream.url(path)) }
            // When each is asked again
            let odd = try await proxy.send(.GET, upstream.url("/299"))
            let known = try await proxy.send(.GET, upstream.url("/200"))
            // Then the 299 goes upstream again (never stored), the 200 is a hit
            #expect(odd.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=uri-miss;") == true, "\(odd.header("Cache-Status"))")
            #expect(known.text == "known" && known.header("Cache-Status").first?.hasPrefix("Kiosk;hit;") == true, "\(known.header("Cache-Status"))")
        }
    }

    @Test("A HEAD's 200 whose ETag differs from the stored GET answer's drops that answer; the next GET goes upstream (RFC 9111 §4.3.5)")
    func headSaysChanged() async throws {
        let upstream = try await ScriptedUpstream.start()
        let versions = Versions()
        upstream.answer { _ in
            let version = versions.next()
            return (.ok, [("Cache-Control", "max-age=0"), ("ETag", "\"\(version)\"")], version)
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given a GET's answer stored, stale at once, with ETag "v1"
            #expect(try await proxy.send(.GET, upstream.url("/hc")).text == "v1")
            // When a HEAD revalidates it and the upstream answers 200 with ETag "v2"
            let head = try await proxy.send(.HEAD, upstream.url("/hc"))
            #expect(head.status == .ok && head.header("ETag") == [#""v2""#])
            // Then the stored answer is gone, and the next GET fetches the current one
            #expect(try proxy.kiosk.proxyCacheEntries().isEmpty)
            let next = try await proxy.send(.GET, upstream.url("/hc"))
            #expect(next.text == "v3" && next.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=uri-miss;") == true, "\(next.header("Cache-Status"))")
        }
    }

    @Test("A HEAD's 200 with the stored GET answer's ETag renews that answer's fields: fresh again, the next GET is a hit (RFC 9111 §4.3.5)")
    func headRenews() async throws {
        let upstream = try await ScriptedUpstream.start()
        let renewed = Mutex(false)
        upstream.answer { _ in
            (.ok, [("Cache-Control", renewed.withLock { $0 } ? "max-age=100" : "max-age=0"), ("ETag", #""g""#)], "the body")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given a GET's answer stored, stale at once, with ETag "g"
            #expect(try await proxy.send(.GET, upstream.url("/hr")).text == "the body")
            // When a HEAD goes upstream and the answer, the same ETag, says fresh for 100 s now
            renewed.withLock { $0 = true }
            let head = try await proxy.send(.HEAD, upstream.url("/hr"))
            #expect(head.status == .ok && head.header("Cache-Status").first?.contains(";ttl=100;stored;") == true, "\(head.header("Cache-Status"))")
            // Then the next GET is answered from the store, fresh, without asking the upstream
            let asked = upstream.requests.count
            let next = try await proxy.send(.GET, upstream.url("/hr"))
            #expect(next.text == "the body" && next.header("Cache-Status").first?.hasPrefix("Kiosk;hit;ttl=") == true, "\(next.header("Cache-Status"))")
            #expect(upstream.requests.count == asked)
        }
    }

    @Test("A revalidation sent behind an app that half-closed its connection is not noted as closed on: no app waits for it")
    func revalidationBehindAHalfClose() async throws {
        let upstream = try await ScriptedUpstream.start()
        let versions = Versions()
        upstream.answer { _ in (.ok, [("Cache-Control", "max-age=10, stale-while-revalidate=100")], versions.next()) }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given a stored answer gone stale within its stale-while-revalidate window
            #expect(try await proxy.send(.GET, upstream.url("/h")).text == "v1")
            await proxy.harness.now.advance(by: .seconds(30))
            // When an app asks for it and closes its side at once (nc -N), reading what comes
            let received = try await proxy.halfClosedExchange("GET \(upstream.url("/h")) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(received.hasPrefix("HTTP/1.1 200") && received.hasSuffix("v1"), "\(received)")
            // Then the revalidation behind it, its own exchange, carries no note of the app's close
            let revalidation = try #require(try await proxy.waitForRecord {
                $0.url.hasSuffix("/h") && $0.cacheStatus.forward == .stale && $0.status == 200
            })
            #expect(!revalidation.touchedBy.contains { $0.kind == .appClosed }, "\(revalidation.touchedBy)")
        }
    }

    @Test("The request's no-cache, max-age=0, Pragma, If-Match and If-Unmodified-Since go forward; only-if-cached with nothing fresh is a 504")
    func requestDirectives() async throws {
        let upstream = try await ScriptedUpstream.start()
        let versions = Versions()
        upstream.answer { _ in (.ok, [("Cache-Control", "max-age=600")], versions.next()) }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            _ = try await proxy.send(.GET, upstream.url("/d"))
            for headers in [[("Cache-Control", "no-cache")], [("Cache-Control", "max-age=0")], [("Pragma", "no-cache")]] {
                let forced = try await proxy.send(.GET, upstream.url("/d"), headers: headers)
                #expect(forced.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=request;fwd-status=200;") == true, "\(headers)")
            }
            #expect(upstream.requests.count == 4)
            // only-if-cached: the fresh stored answer, or a 504 for what is not stored
            let cached = try await proxy.send(.GET, upstream.url("/d"), headers: [("Cache-Control", "only-if-cached")])
            #expect(cached.text == versions.current)
            let missing = try await proxy.send(.GET, upstream.url("/never"), headers: [("Cache-Control", "only-if-cached")])
            #expect(missing.status == .gatewayTimeout && missing.text.contains("only-if-cached"))
            #expect(upstream.requests.count == 4)
            // min-fresh: an answer fresh for 600 s more will do for 300, not for 900
            let fresh = try await proxy.send(.GET, upstream.url("/d"), headers: [("Cache-Control", "min-fresh=300")])
            #expect(fresh.header("Cache-Status").first?.hasPrefix("Kiosk;hit;") == true)
            let fresher = try await proxy.send(.GET, upstream.url("/d"), headers: [("Cache-Control", "min-fresh=900")])
            #expect(fresher.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=request;fwd-status=200;") == true)
            #expect(upstream.requests.count == 5)
            // If-Match and If-Unmodified-Since are the origin's to judge: a fresh stored answer does not stand in for them
            for headers in [[("If-Match", #""other""#)], [("If-Unmodified-Since", "Sat, 01 Jan 2000 00:00:00 GMT")]] {
                let preconditioned = try await proxy.send(.GET, upstream.url("/d"), headers: headers)
                #expect(preconditioned.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=request;") == true, "\(headers)")
                #expect(upstream.requests.last?.headers.first(name: headers[0].0) == headers[0].1)
            }
            #expect(upstream.requests.count == 7)
        }
    }

    @Test("A request's max-stale is given the stale stored answer without asking upstream, within its bound and not past must-revalidate")
    func requestMaxStale() async throws {
        let upstream = try await ScriptedUpstream.start()
        let versions = Versions()
        upstream.answer { head in
            (.ok, [("Cache-Control", head.uri == "/strict" ? "max-age=10, must-revalidate" : "max-age=10")], versions.next())
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            let first = try await proxy.send(.GET, upstream.url("/d")).text
            _ = try await proxy.send(.GET, upstream.url("/strict"))
            await proxy.harness.now.advance(by: .seconds(40))
            // Given: both answers 30 s stale. When the app accepts 60 s of staleness, then the stored answer is a hit
            let stale = try await proxy.send(.GET, upstream.url("/d"), headers: [("Cache-Control", "max-stale=60")])
            #expect(stale.text == first)
            #expect(stale.header("Cache-Status") == ["Kiosk;hit;ttl=-30;detail=max-stale"])
            #expect(stale.header("Age") == ["40"])
            // And with only-if-cached too (a stale answer it accepts is in the cache)
            let onlyCached = try await proxy.send(.GET, upstream.url("/d"), headers: [("Cache-Control", "max-stale, only-if-cached")])
            #expect(onlyCached.text == first)
            #expect(upstream.requests.count == 2)
            // When it accepts less staleness than the answer has, or the answer must be revalidated, then it goes forward
            let tooStale = try await proxy.send(.GET, upstream.url("/d"), headers: [("Cache-Control", "max-stale=20")])
            #expect(tooStale.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=stale;fwd-status=200;") == true)
            let strict = try await proxy.send(.GET, upstream.url("/strict"), headers: [("Cache-Control", "max-stale")])
            #expect(strict.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=stale;fwd-status=200;") == true)
            #expect(upstream.requests.count == 4)
        }
    }

    @Test("A range of a stored whole answer is that part (206), offline too; past its end a 416; several ranges, an invalid one or an If-Range of another version get it whole",
          arguments: [
            ("bytes=2-4", nil, 206, "234", "bytes 2-4/10"), ("bytes=-3", nil, 206, "789", "bytes 7-9/10"),
            ("bytes=8-", nil, 206, "89", "bytes 8-9/10"), ("bytes=5-99", nil, 206, "56789", "bytes 5-9/10"),
            ("bytes=20-", nil, 416, "", "bytes */10"), ("bytes=-0", nil, 416, "", "bytes */10"),
            ("bytes=0-1,4-5", nil, 200, "0123456789", nil), ("bytes=5-2", nil, 200, "0123456789", nil), ("items=1-2", nil, 200, "0123456789", nil),
            ("bytes=2-4", #""r1""#, 206, "234", "bytes 2-4/10"), ("bytes=2-4", #""r0""#, 200, "0123456789", nil),
            ("bytes=2-4", #"W/"r1""#, 200, "0123456789", nil), ("bytes=2-4", "Tue, 01 Jan 2030 00:00:00 GMT", 206, "234", "bytes 2-4/10"),
          ] as [(String, String?, Int, String, String?)])
    func rangeOfStored(range: String, ifRange: String?, status: Int, body: String, contentRange: String?) async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { _ in (.ok, [("ETag", #""r1""#), ("Last-Modified", "Tue, 01 Jan 2030 00:00:00 GMT"), ("Cache-Control", "max-age=60")], "0123456789") }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            // Given a whole answer stored, and the proxy offline
            _ = try await proxy.send(.GET, upstream.url("/media"))
            try proxy.kiosk.switchProxyCache(offline: true)
            // When an app asks for a range of it
            let answer = try await proxy.send(.GET, upstream.url("/media"), headers: [("Range", range)] + (ifRange.map { [("If-Range", $0)] } ?? []))
            // Then it gets the part it asked for, or the whole, as the upstream would
            #expect(Int(answer.status.code) == status && answer.text == body, "\(answer.status) \(answer.text)")
            #expect(answer.header("Content-Range") == (contentRange.map { [$0] } ?? []))
            #expect(answer.header("Content-Length") == [String(body.utf8.count)])
            #expect(upstream.requests.count == 1)
        }
    }

    @Test("A 206 holding the whole of its representation (a media element's bytes=0-) is stored as its 200, and plays offline whole or by range; a part is not stored")
    func wholeRangeStored() async throws {
        // Given an upstream answering ranges as a file server does, with an ETag and no freshness of its own
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            let range = head.headers["Range"].first ?? ""
            if range == "bytes=0-" { return (.partialContent, [("ETag", #""a1""#), ("Content-Range", "bytes 0-9/10")], "0123456789") }
            if range == "bytes=0-3" { return (.partialContent, [("ETag", #""a1""#), ("Content-Range", "bytes 0-3/10")], "0123") }
            return (.ok, [("ETag", #""a1""#)], "0123456789")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: caching()) { proxy, upstream in
            // When a player asks for /part's first bytes and for /audio's from its start, as Chromium does
            let part = try await proxy.send(.GET, upstream.url("/part"), headers: [("Range", "bytes=0-3")])
            let first = try await proxy.send(.GET, upstream.url("/audio"), headers: [("Range", "bytes=0-")])
            // Then each gets the upstream's 206, and only the whole one is stored, as a 200 of ten bytes
            #expect(part.status == .partialContent && first.status == .partialContent && first.text == "0123456789")
            #expect(first.header("Cache-Status").first?.contains(";stored") == true, "\(first.header("Cache-Status"))")
            #expect(part.header("Cache-Status").first?.contains(";stored") == false, "\(part.header("Cache-Status"))")
            let entries = try proxy.kiosk.proxyCacheEntries()
            #expect(entries.count == 1 && entries.first?.url.hasSuffix("/audio") == true && entries.first?.status == 200)
            // And offline the player gets it, from its start as it asked, or a range of it
            try proxy.kiosk.switchProxyCache(offline: true)
            let replayed = try await proxy.send(.GET, upstream.url("/audio"), headers: [("Range", "bytes=0-")])
            #expect(replayed.status == .partialContent && replayed.text == "0123456789" && replayed.header("Content-Range") == ["bytes 0-9/10"],
                    "\(replayed.status) \(replayed.header("Content-Range"))")
            let middle = try await proxy.send(.GET, upstream.url("/audio"), headers: [("Range", "bytes=4-6")])
            #expect(middle.status == .partialContent && middle.text == "456")
            #expect(try await proxy.send(.GET, upstream.url("/audio")).text == "0123456789")
            #expect(try await proxy.send(.GET, upstream.url("/part"), headers: [("Range", "bytes=0-3")]).status == .gatewayTimeout)
        }
    }

    @Test("stale-if-error lets a stale answer stand in for a 5xx within its window; must-revalidate never lets it, and disconnected makes it a 504")
    func staleIfError() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            head.uri == "/strict" ? (.ok, [("Cache-Control", "max-age=10, must-revalidate")], "strict")
                : (.ok, [("Cache-Control", "max-age=10, stale-if-error=60")], "lenient")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            _ = try await proxy.send(.GET, upstream.url("/lenient"))
            _ = try await proxy.send(.GET, upstream.url("/strict"))
            upstream.answer { _ in (.serviceUnavailable, [], "down") }
            await proxy.harness.now.advance(by: .seconds(30))
            let lenient = try await proxy.send(.GET, upstream.url("/lenient"))
            #expect(lenient.text == "lenient")
            #expect(lenient.header("Cache-Status") == ["Kiosk;fwd=stale;fwd-status=503;ttl=-20;detail=stale-if-error"])
            #expect(try await proxy.send(.GET, upstream.url("/strict")).status == .serviceUnavailable)
            // Past the window the 503 reaches the app
            await proxy.harness.now.advance(by: .seconds(60))
            #expect(try await proxy.send(.GET, upstream.url("/lenient")).status == .serviceUnavailable)
            // Disconnected, a stale answer stands in unless must-revalidate forbids it (RFC 9111 §4.2.4): then the proxy's
            // answer is a 504 saying why (§5.2.2.2), where a URL with nothing stored gets the 502 of a refused connection
            await upstream.stop()
            #expect(try await proxy.send(.GET, upstream.url("/lenient")).text == "lenient")
            let strict = try await proxy.send(.GET, upstream.url("/strict"))
            #expect(strict.status == .gatewayTimeout && strict.text.contains("never be given unconfirmed (must-revalidate or no-cache)"),
                    "\(strict.status) \(strict.text)")
            #expect(strict.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=stale") == true, "\(strict.header("Cache-Status"))")
            #expect(try await proxy.send(.GET, upstream.url("/never-stored")).status == .badGateway)
        }
    }

    @Test("Without explicit freshness a Last-Modified gives a tenth of its age (RFC 9111 §4.2.2); without either, every use asks")
    func heuristicFreshness() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.answer { head in
            head.uri == "/modified" ? (.ok, [("Date", "Wed, 02 Jan 2030 00:00:00 GMT"), ("Last-Modified", "Tue, 01 Jan 2030 00:00:00 GMT")], "m")
                : (.ok, [], "plain")
        }
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: Self.http) { proxy, upstream in
            _ = try await proxy.send(.GET, upstream.url("/modified"))
            _ = try await proxy.send(.GET, upstream.url("/plain"))
            let heuristic = try await proxy.send(.GET, upstream.url("/modified"))
            // A day since it was modified: fresh for 8640 s, less the apparent age the Date gives
            #expect(heuristic.header("Cache-Status").first?.hasPrefix("Kiosk;hit;") == true, "\(heuristic.header("Cache-Status"))")
            let plain = try await proxy.send(.GET, upstream.url("/plain"))
            #expect(plain.header("Cache-Status").first?.hasPrefix("Kiosk;fwd=stale;fwd-status=200;") == true)
            #expect(upstream.requests.count == 3)
        }
    }
}

/// A path for an archive named `name` in a scratch folder of its own, the folder made.
private func archiveURL(_ name: String) throws -> URL {
    let file = TemporaryDirectory.url("kiosk-proxy-cache-har").appendingPathComponent(name)
    try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    return file
}
