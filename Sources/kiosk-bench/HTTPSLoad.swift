// The HTTPS load client of kiosk-bench --proxy: what wrk is for plain HTTP, for an app that reads HTTPS through a
// forward proxy. Each connection asks the proxy for a CONNECT tunnel, speaks TLS inside it (trusting the proxy's CA,
// as an app set up for interception does), then sends GETs one after another on it, keep-alive, for the run.
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization

/// `connections` keep-alive HTTPS clients through the forward proxy on `proxyPort` (nil: straight to the target) to
/// `https://127.0.0.1:targetPort`, asking for `path` for `duration` after a short warm-up: the answers per second, and
/// how many answers in all (the warm-up's too). `caPEM` is the CA the certificates presented are trusted by. Runs on event loops of its
/// own, as wrk is a process of its own.
func httpsLoad(proxyPort: Int?, targetPort: Int, path: String, caPEM: String, connections: Int = 32,
               duration: Duration) async throws -> (rate: Double, requests: Int) {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    defer { group.shutdownGracefully { _ in } }
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(caPEM.utf8), format: .pem)])
    tls.applicationProtocols = ["http/1.1"]
    let context = try NIOSSLContext(configuration: tls)
    let counter = LoadCounter()
    let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: ["Host": "127.0.0.1:\(targetPort)"])
    var channels: [any Channel] = []
    for _ in 0..<connections {
        let ready = ReadyOnce(group.any().makePromise(of: Void.self))
        let channel = try await ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        TunnelOpener(target: proxyPort == nil ? nil : "127.0.0.1:\(targetPort)", tls: context, ready: ready) { operations in
                            try operations.addHTTPClientHandlers(position: .last)
                            try operations.addHandler(RequestLoop(request: request, counter: counter, ready: ready), position: .last)
                        })
                }
            }
            .connect(host: "127.0.0.1", port: proxyPort ?? targetPort).get()
        channels.append(channel)
        try await ready.future.get()
    }
    // Every connection is inside TLS and asking: count what a steady run answers.
    try await Task.sleep(for: .milliseconds(500))
    let first = counter.answers
    let start = ContinuousClock.now
    try await Task.sleep(for: duration)
    let answered = counter.answers - first
    let elapsed = ContinuousClock.now - start
    counter.stop()
    for channel in channels { try? await channel.close() }
    // Every answer, the warm-up's and those that came while the connections closed included: what a log must hold.
    let total = counter.answers
    if let failure = counter.failure { throw BenchFailure("HTTPS through port \(proxyPort ?? targetPort): \(failure)") }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return (Double(answered) / seconds, total)
}

/// A connection's promise of being ready (inside TLS, its first answer in), completed once whatever fails after.
private final class ReadyOnce: Sendable {
    private let promise: EventLoopPromise<Void>
    private let done = Mutex(false)

    init(_ promise: EventLoopPromise<Void>) { self.promise = promise }

    var future: EventLoopFuture<Void> { promise.futureResult }

    func succeed() { if first() { promise.succeed() } }
    func fail(_ error: any Error) { if first() { promise.fail(error) } }

    private func first() -> Bool { done.withLock { done in defer { done = true }; return !done } }
}

/// What the load's connections have answered, and whether to go on.
private final class LoadCounter: Sendable {
    private let state = Mutex((answers: 0, running: true, failure: String?.none))

    var answers: Int { state.withLock { $0.answers } }
    var running: Bool { state.withLock { $0.running } }
    var failure: String? { state.withLock { $0.failure } }

    func answered() { state.withLock { $0.answers += 1 } }
    func stop() { state.withLock { $0.running = false } }
    func fail(_ reason: String) { state.withLock { if $0.failure == nil, $0.running { $0.failure = reason } } }
}

/// Each a first CONNECT to a host the proxy has not seen (`new-N.bench.test`, so it mints a leaf), then the same host's
/// again (its leaf cached): how long from opening the connection to the TLS handshake's end, in seconds. The proxy's
/// interception answers a CONNECT without asking any upstream, so no upstream is needed.
func handshakeTimes(proxyPort: Int, caPEM: String, count: Int) async throws -> (fresh: [Double], cached: [Double]) {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(caPEM.utf8), format: .pem)])
    let context = try NIOSSLContext(configuration: tls)
    let run = UUID().uuidString.prefix(8).lowercased()
    func handshake(_ host: String) async throws -> Double {
        let ready = ReadyOnce(MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self))
        let start = ContinuousClock.now
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        TunnelOpener(target: "\(host):443", tls: context, serverHostname: host, ready: ready) { operations in
                            try operations.addHandler(HandshakeWatcher(ready: ready), position: .last)
                        })
                }
            }
            .connect(host: "127.0.0.1", port: proxyPort).get()
        try await ready.future.get()
        let elapsed = ContinuousClock.now - start
        try? await channel.close()
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
    var fresh: [Double] = [], cached: [Double] = []
    for index in 0..<count {
        let host = "new-\(index)-\(run).bench.test"
        fresh.append(try await handshake(host))
        cached.append(try await handshake(host))
    }
    return (fresh.sorted(), cached.sorted())
}

/// Completes `ready` when the TLS handshake is done.
private final class HandshakeWatcher: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let ready: ReadyOnce

    init(ready: ReadyOnce) { self.ready = ready }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent { ready.succeed() }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        ready.fail(error)
        context.close(promise: nil)
    }
}

/// Sends the CONNECT, reads the proxy's answer to it, then puts TLS and what `then` adds in its place (at once with
/// no `target`: a connection straight to the upstream).
private final class TunnelOpener: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    private let target: String?
    private let tls: NIOSSLContext
    private let serverHostname: String?
    private let ready: ReadyOnce
    private let then: (ChannelPipeline.SynchronousOperations) throws -> Void
    private var answer = ByteBuffer()

    init(target: String?, tls: NIOSSLContext, serverHostname: String? = nil, ready: ReadyOnce,
         then: @escaping (ChannelPipeline.SynchronousOperations) throws -> Void) {
        self.target = target
        self.tls = tls
        self.serverHostname = serverHostname
        self.ready = ready
        self.then = then
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        guard let target else { return enterTLS(context) }
        let connect = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n\r\n"
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: connect)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var part = unwrapInboundIn(data)
        answer.writeBuffer(&part)
        guard let text = answer.getString(at: answer.readerIndex, length: answer.readableBytes), text.contains("\r\n\r\n") else { return }
        guard text.hasPrefix("HTTP/1.1 200") || text.hasPrefix("HTTP/1.0 200") else {
            ready.fail(BenchFailure("the proxy refused the CONNECT: \(text.prefix(80))"))
            return context.close(promise: nil)
        }
        enterTLS(context)
    }

    private func enterTLS(_ context: ChannelHandlerContext) {
        do {
            let operations = context.pipeline.syncOperations
            try operations.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: serverHostname), position: .after(self))
            try then(operations)
            operations.removeHandler(context: context, promise: nil)
        } catch {
            ready.fail(error)
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        ready.fail(error)
        context.close(promise: nil)
    }
}

/// Asks again as each answer ends, while the load runs.
private final class RequestLoop: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart
    private let request: HTTPRequestHead
    private let counter: LoadCounter
    private let ready: ReadyOnce
    private var started = false

    init(request: HTTPRequestHead, counter: LoadCounter, ready: ReadyOnce) {
        self.request = request
        self.counter = counter
        self.ready = ready
    }

    func handlerAdded(context: ChannelHandlerContext) { ask(context) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head) where head.status != .ok:
            counter.fail("status \(head.status.code)")
        case .end:
            if !started {
                started = true
                ready.succeed()
            }
            counter.answered()
            if counter.running { ask(context) }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        ready.fail(error)
        counter.fail("\(error)")
        context.close(promise: nil)
    }

    private func ask(_ context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(request)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
