import AsyncHTTPClient
import Foundation
import KioskApp
import KioskCore
import KioskProxy
import KioskTestSupport
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization
import KioskProcess

/// A test server on a free loopback port, each of whose connections `initialize` sets up on its loop.
struct LoopbackServer: Sendable {
    private let channel: any Channel
    /// The port it listens on.
    let port: Int

    static func start(_ initialize: @escaping @Sendable (any Channel) throws -> Void) async throws -> LoopbackServer {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in channel.eventLoop.makeCompletedFuture { try initialize(channel) } }
            .bind(host: "127.0.0.1", port: 0).get()
        return LoopbackServer(channel: channel, port: channel.localAddress?.port ?? 0)
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The address of `path` over HTTPS, by the name the test CA's leaf carries.
    func secureURL(_ path: String) -> String { "https://localhost:\(port)\(path)" }

    func stop() async { try? await channel.close() }
}

/// An app's upstream on loopback: `/echo` answers what it received (method, path, fields, body) as JSON,
/// `/redirect` a 302 to `/echo`, `/gzip` a gzip-encoded body with its Content-Encoding, `/big?bytes=N` N bytes,
/// anything else a 404. Counts its requests.
final class EchoUpstream: Sendable {
    /// "hello, proxy\n" gzipped.
    static let gzipped = Data(base64Encoded: "H4sIAAAAAAAC/8tIzcnJ11EoKMqvqOQCACr/YTcNAAAA")!

    private let server: LoopbackServer
    private let counter: Counter

    private final class Counter: Sendable {
        let value = Mutex(0)
    }

    private init(server: LoopbackServer, counter: Counter) {
        self.server = server
        self.counter = counter
    }

    var port: Int { server.port }

    /// Requests received so far.
    var requests: Int { counter.value.withLock { $0 } }

    /// An upstream on a free loopback port; over HTTPS with `tls` (a context of the test CA's leaf).
    static func start(tls: NIOSSLContext? = nil) async throws -> EchoUpstream {
        let counter = Counter()
        let server = try await LoopbackServer.start { channel in
            if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
            try channel.pipeline.syncOperations.addHandler(EchoHandler(counter: { counter.value.withLock { $0 += 1 } }))
        }
        return EchoUpstream(server: server, counter: counter)
    }

    func url(_ path: String) -> String { server.url(path) }

    /// The address of `path` over HTTPS, by the name the test CA's leaf carries.
    func secureURL(_ path: String) -> String { server.secureURL(path) }

    func stop() async { await server.stop() }

    private final class EchoHandler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        private var head: HTTPRequestHead?
        private var body = ByteBuffer()
        private let counter: () -> Void

        init(counter: @escaping () -> Void) { self.counter = counter }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body.clear()
            case .body(var chunk):
                body.writeBuffer(&chunk)
            case .end:
                guard let head else { return }
                counter()
                let (status, headers, payload) = answer(head)
                var fields = HTTPHeaders(headers)
                // `/unsized` declares no length: chunked to a GET, a HEAD's answer with neither field.
                if !head.uri.hasPrefix("/unsized") { fields.replaceOrAdd(name: "Content-Length", value: String(payload.count)) }
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: fields))), promise: nil)
                if head.method != .HEAD {
                    context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: payload)))), promise: nil)
                }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }

        private func answer(_ head: HTTPRequestHead) -> (HTTPResponseStatus, [(String, String)], Data) {
            let path = head.uri.split(separator: "?").first.map(String.init) ?? head.uri
            switch path {
            case "/echo-gzip", "/echo-deflate":
                // What /echo answers, in a content coding (an echo service behind a compressing server).
                let query = head.uri.firstIndex(of: "?").map { String(head.uri[$0...]) } ?? ""
                let (status, fields, data) = answer(HTTPRequestHead(version: head.version, method: head.method, uri: "/echo" + query,
                                                                    headers: head.headers))
                let coding = path == "/echo-gzip" ? "gzip" : "deflate"
                return (status, fields + [("Content-Encoding", coding)], ContentCoding.encoded(data, coding: coding) ?? Data())
            case "/echo":
                let echo: [String: Any] = [
                    "method": head.method.rawValue, "uri": head.uri,
                    "headers": head.headers.map { [$0.name, $0.value] },
                    "body": String(buffer: body),
                ]
                let data = (try? JSONSerialization.data(withJSONObject: echo, options: [.sortedKeys])) ?? Data()
                return (.ok, [("Content-Type", "application/json"), ("X-Upstream", "echo"), ("Connection", "keep-alive, X-Upstream-Hop"),
                              ("X-Upstream-Hop", "1"), ("Keep-Alive", "timeout=5"), ("Proxy-Foo", "bar")], data)
            case "/redirect":
                return (.found, [("Location", "/echo")], Data())
            case "/redirect-absolute":
                let host = head.headers.first(name: "Host") ?? "127.0.0.1"
                return (.found, [("Location", "http://\(host)/echo?from=redirect")], Data())
            case "/gzip":
                return (.ok, [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")], EchoUpstream.gzipped)
            case "/gzip-no-transform":
                return (.ok, [("Content-Type", "text/plain"), ("Content-Encoding", "gzip"), ("Cache-Control", "max-age=60, no-transform")],
                        EchoUpstream.gzipped)
            case "/empty":
                return (.noContent, [], Data())
            case "/cached":
                return (.notModified, [("ETag", "\"v1\"")], Data())
            case "/unsized":
                return (.ok, [("Content-Type", "text/plain")], Data("no length declared\n".utf8))
            case "/big":
                let bytes = Int(head.uri.split(separator: "=").last ?? "0") ?? 0
                return (.ok, [("Content-Type", "application/octet-stream")], Data(repeating: 0x61, count: bytes))
            default:
                return (.notFound, [("Content-Type", "text/plain")], Data("no such path\n".utf8))
            }
        }
    }
}

/// A Kiosk (on the test harness's demo upstream and clock) with `kiosk proxy`'s listener in front of it, on port 0.
struct ProxyHarness {
    let harness: Harness
    let port: Int
    let group: ServiceGroup
    let running: Task<Void, any Error>
    /// An HTTP client whose proxy is this one; bodies as sent (no decompression), no redirect followed.
    let http: HTTPClient
    /// The listener's live counts.
    let meter: ProxyMeter

    var kiosk: Kiosk { harness.kiosk }

    /// The file of Kiosk's CA certificate, when it intercepts.
    var authorityFile: String? {
        let path = harness.directory.appendingPathComponent(ProxyAuthority.certificateFileName).path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// With `intercepting`, Kiosk's CA (made in the harness's data directory) reads inside CONNECTs, and the upstream
    /// HTTPS of the test CA is trusted.
    /// `configure` changes Kiosk's configuration (the proxy's buffer limit, say) before it starts.
    static func start(_ configuration: ProxyConfiguration = ProxyConfiguration(port: 0), intercepting: Bool = false,
                      configure: (inout KioskConfiguration) -> Void = { _ in }) async throws -> ProxyHarness {
        let harness = try await Harness.start { kiosk in
            if intercepting { kiosk.proxyTransport.additionalTrustRoots = [TestAuthority.shared.certificateFile.path] }
            configure(&kiosk)
        }
        var configuration = configuration
        if intercepting { configuration.authority = try ProxyAuthority.inDirectory(harness.directory) }
        configuration.connectTimeout = harness.kiosk.configuration.proxyTransport.connectTimeout
        let meter = configuration.meter
        let kiosk = harness.kiosk
        // As `kiosk proxy` lists its open protocol switches.
        configuration.exchangesInFlight = kiosk.exchangesInFlight
        configuration.holdSwitch = { await kiosk.holdSwitch($0) }
        let (bound, continuation) = AsyncStream<Int>.makeStream()
        let proxy = ProxyServer(configuration: configuration, forward: { try await kiosk.forward($0) }, vet: { try await kiosk.vetProxied($0, forNetwork: $1) },
                                onTunnel: { kiosk.recordTunnel($0) },
                                onCutShort: { kiosk.recordCutShort($0, error: $1, after: $2) }) { port in
            continuation.yield(port)
            continuation.finish()
        }
        let group = ServiceGroup(services: [proxy], logger: .init(label: "proxy-tests"))
        let running = Task { try await group.run() }
        var iterator = bound.makeAsyncIterator()
        guard let port = await iterator.next() else {
            running.cancel()
            await harness.stop()
            throw KioskError.transport(url: "proxy", message: "did not start")
        }
        var client = HTTPClient.Configuration(proxy: .server(host: "127.0.0.1", port: port))
        client.decompression = .disabled
        client.redirectConfiguration = .disallow
        if let authority = configuration.authority {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(authority.certificatePEM.utf8), format: .pem)])
            client.tlsConfiguration = tls
        }
        return ProxyHarness(harness: harness, port: port, group: group, running: running,
                            http: HTTPClient(eventLoopGroupProvider: .singleton, configuration: client), meter: meter)
    }

    func stop() async {
        try? await http.shutdown()
        await group.triggerGracefulShutdown()
        _ = try? await running.value
        await harness.stop()
    }

    /// An answer as the app got it.
    struct Answer {
        let head: HTTPResponseHead
        let body: Data
        var status: HTTPResponseStatus { head.status }
        func header(_ name: String) -> [String] { head.headers[name] }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// One request of an app: method, whole URL, fields, body.
    struct Request {
        var method: HTTPMethod = .GET
        var url: String
        var headers: [(String, String)] = []
        var body: String?
    }

    /// Sends one request for a whole URL to the proxy on a fresh connection, as an app with an HTTP proxy set does
    /// for http:// URLs (curl, a browser, HTTP_PROXY), and reads the answer as sent: no decompression, no redirect.
    func send(_ method: HTTPMethod = .GET, _ url: String, headers: [(String, String)] = [], body: String? = nil) async throws -> Answer {
        try await send(keptAlive: [Request(method: method, url: url, headers: headers, body: body)])[0]
    }

    /// Sends `requests` one after the other on one kept-alive connection, each once the answer before it has ended, as
    /// an app does; the answers in order.
    func send(keptAlive requests: [Request]) async throws -> [Answer] {
        try await connect().executeThenClose { inbound, outbound in
            var parts = inbound.makeAsyncIterator()
            var answers: [Answer] = []
            for request in requests {
                var fields = HTTPHeaders(request.headers)
                if !fields.contains(name: "Host"), let host = URLComponents(string: request.url)?.host {
                    fields.add(name: "Host", value: host + (URLComponents(string: request.url)?.port.map { ":\($0)" } ?? ""))
                }
                if let body = request.body { fields.replaceOrAdd(name: "Content-Length", value: String(body.utf8.count)) }
                try await outbound.write(.head(HTTPRequestHead(version: .http1_1, method: request.method, uri: request.url, headers: fields)))
                if let body = request.body { try await outbound.write(.body(.byteBuffer(ByteBuffer(string: body)))) }
                try await outbound.write(.end(nil))
                var head: HTTPResponseHead?
                var received = ByteBuffer()
                answer: while true {
                    switch try await parts.next() {
                    case .head(let value): head = value
                    case .body(var chunk): received.writeBuffer(&chunk)
                    case .end: break answer
                    case nil:
                        throw KioskError.transport(url: request.url, message: "the proxy closed the connection before the answer's end")
                    }
                }
                answers.append(Answer(head: head!, body: Data(received.readableBytesView)))
            }
            return answers
        }
    }

    /// An answer as an app reads it to its end or to the proxy's close: its head (nil if none came) and when it came, the
    /// body's bytes that came, and whether the answer ended whole (false: the connection closed first, or an error).
    struct ReadAnswer {
        let head: HTTPResponseHead?
        let headAfter: Duration?
        let body: Data
        let ended: Bool
    }

    /// Sends a GET for `url` on a new connection and reads what comes (see `ReadAnswer`), never throwing for a cut.
    func read(_ url: String) async throws -> ReadAnswer {
        let started = ContinuousClock.now
        return try await connect().executeThenClose { inbound, outbound in
            var fields = HTTPHeaders()
            if let components = URLComponents(string: url), let host = components.host {
                fields.add(name: "Host", value: host + (components.port.map { ":\($0)" } ?? ""))
            }
            try await outbound.write(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: url, headers: fields)))
            try await outbound.write(.end(nil))
            var head: HTTPResponseHead?, headAfter: Duration?, received = ByteBuffer()
            do {
                for try await part in inbound {
                    switch part {
                    case .head(let value): (head, headAfter) = (value, ContinuousClock.now - started)
                    case .body(var chunk): received.writeBuffer(&chunk)
                    case .end: return ReadAnswer(head: head, headAfter: headAfter, body: Data(received.readableBytesView), ended: true)
                    }
                }
            } catch {}
            return ReadAnswer(head: head, headAfter: headAfter, body: Data(received.readableBytesView), ended: false)
        }
    }

    /// A new HTTP/1.1 client connection to the proxy's listener, as an app with the proxy set opens one.
    func connect() async throws -> NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart> {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                }
            }
    }

    /// What an app receives, to the proxy's close, that sends `request` (raw HTTP/1.1) on a new connection and then closes
    /// its side, as `nc -N` does.
    func halfClosedExchange(_ request: String) async throws -> String {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel,
                                                                configuration: .init(isOutboundHalfClosureEnabled: true))
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: request))
            outbound.finish()
            var all = ByteBuffer()
            for try await var part in inbound { all.writeBuffer(&part) }
            return String(buffer: all)
        }
    }

    /// The log's records, newest first, once what was captured is written.
    func records() throws -> [RequestRecord] {
        try kiosk.debugger.flush()
        return try kiosk.debugger.records(matching: RequestFilter())
    }

    /// The newest logged record matching `predicate`, waiting up to 10 s for it (a tunnel is logged once both ends close).
    func waitForRecord(_ predicate: (RequestRecord) -> Bool) async throws -> RequestRecord? {
        try await waitForRecords(count: 1, predicate).first
    }

    /// The records `predicate` picks, once there are `count` of them (or what there are after 10 s).
    func waitForRecords(count: Int, _ predicate: (RequestRecord) -> Bool) async throws -> [RequestRecord] {
        let deadline = ContinuousClock.now + .seconds(10)
        var found: [RequestRecord] = []
        while ContinuousClock.now < deadline {
            found = try records().filter(predicate)
            if found.count >= count { return found }
            try await Task.sleep(for: .milliseconds(50))
        }
        return found
    }
}

/// Runs `body` with a started proxy and upstream, always stopping both.
/// With `reverse`, the proxy is a reverse one to the upstream.
func withProxy(_ configuration: ProxyConfiguration = ProxyConfiguration(port: 0), intercepting: Bool = false, reverse: Bool = false,
               _ body: (ProxyHarness, EchoUpstream) async throws -> Void) async throws {
    let upstream = try await EchoUpstream.start(tls: intercepting ? try TestAuthority.shared.upstreamContext() : nil)
    var configuration = configuration
    if reverse { configuration.reverseTo = URL(string: upstream.url("/")) }
    try await withProxy(configuration, to: upstream, stop: { await $0.stop() }, intercepting: intercepting, body)
}

/// Runs `body` with a started proxy in front of `upstream`, always stopping both (`stop` stops the upstream);
/// `configure` changes Kiosk's configuration first.
func withProxy<Upstream>(_ configuration: ProxyConfiguration = ProxyConfiguration(port: 0), to upstream: Upstream,
                         stop: (Upstream) async -> Void, intercepting: Bool = false,
                         configure: (inout KioskConfiguration) -> Void = { _ in },
                         _ body: (ProxyHarness, Upstream) async throws -> Void) async throws {
    let proxy: ProxyHarness
    do {
        proxy = try await ProxyHarness.start(configuration, intercepting: intercepting, configure: configure)
    } catch {
        await stop(upstream)
        throw error
    }
    do {
        try await body(proxy, upstream)
    } catch {
        await proxy.stop()
        await stop(upstream)
        throw error
    }
    await proxy.stop()
    await stop(upstream)
}

/// What a raw connection to `port` receives after sending `bytes`: until the first answer is whole (by its
/// Content-Length), or with `toClose` until the server closes the connection. Past `timeout` the connection is
/// closed and the call throws `RawExchangeTimeout` with what had arrived: a server that never answers or never closes
/// fails the test that waits for it, rather than hanging the run.
/// Runs `body` on a raw connection to `port`, closed after 20 s whatever comes, so that a tunnel left open fails the test
/// rather than hanging it.
func withRawConnection<Result: Sendable>(
    port: Int,
    _ body: (NIOAsyncChannelInboundStream<ByteBuffer>, NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws -> Result
) async throws -> Result {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
    let raw = channel.channel
    let closer = Task {
        try await Task.sleep(for: .seconds(20))
        try await raw.close()
    }
    defer { closer.cancel() }
    return try await channel.executeThenClose { inbound, outbound in try await body(inbound, outbound) }
}

func rawExchange(port: Int, _ bytes: String, timeout: Duration = .seconds(20), toClose: Bool = false) async throws -> String {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
    let expired = ExpiryFlag()
    let (seconds, attoseconds) = timeout.components
    let timer = channel.channel.eventLoop.scheduleTask(in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) {
        expired.set()
        channel.channel.close(promise: nil)
    }
    defer { timer.cancel() }
    let received: String = try await channel.executeThenClose { inbound, outbound in
        try await outbound.write(ByteBuffer(string: bytes))
        var received = ""
        do {
            for try await chunk in inbound {
                received += String(buffer: chunk)
                if !toClose, received.contains("\r\n\r\n"), let length = contentLength(received),
                   received.utf8.count >= (received.range(of: "\r\n\r\n").map { received.utf8.distance(from: received.startIndex, to: $0.upperBound) } ?? 0) + length {
                    break
                }
            }
        } catch where expired.isSet {}
        return received
    }
    if expired.isSet { throw RawExchangeTimeout(timeout: timeout, received: received) }
    return received
}

/// Set once, from the timer's event loop, read by the waiting test.
private final class ExpiryFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// A raw exchange that did not end within its time: the server neither finished its answer nor closed.
struct RawExchangeTimeout: Error, CustomStringConvertible {
    let timeout: Duration
    let received: String
    var description: String { "no end within \(timeout) (answer not whole, or connection not closed); received: \(received.prefix(300))" }
}

private func contentLength(_ response: String) -> Int? {
    for line in response.components(separatedBy: "\r\n") where line.lowercased().hasPrefix("content-length:") {
        return Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
    }
    return nil
}

/// Runs curl with `arguments` and returns its exit status and what it wrote to standard output. The waiting happens
/// on a thread of its own: blocking a thread of the tests' small cooperative pool could starve the proxy under test.
func runCurl(_ arguments: [String]) async throws -> (status: Int32, output: Data) {
    let curl = try ChildProcess(URL(fileURLWithPath: "/usr/bin/curl"), arguments: arguments, stdout: .pipe, stderr: .inherit)
    return await ChildProcess.offThePool {
        let output = curl.standardOutput?.readDataToEndOfFile() ?? Data()
        return (curl.waitUntilExit(), output)
    }
}
