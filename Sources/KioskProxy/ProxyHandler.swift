import Foundation
import KioskCore
import KioskListener
import NIOCore
import NIOHTTP1
import NIOPosix

/// One client connection of the proxy: reads a request (head, body up to the limit), answers it itself when it
/// cannot be forwarded (a bad target, a loop, a body too large), else forwards it and writes the answer. NIO's
/// pipelining handler before it hands over one request at a time; the upstream exchange runs as a task, cancelled
/// if the client goes away. A CONNECT turns the connection into a tunnel to its target: the HTTP handlers leave
/// and the bytes pass untouched both ways.
final class ProxyHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State {
        case idle
        /// Reading a request's body.
        case receiving(HTTPRequestHead, ByteBuffer)
        /// Reading past the body limit: the rest is dropped, then a 413 is written.
        case discarding(HTTPRequestHead)
        /// Waiting for the upstream's answer.
        case forwarding
    }

    private let forward: @Sendable (HTTPRequest) async throws -> HTTPResponse
    private let via: String
    private let loop: LoopGuard
    private let maximumBodyBytes: Int
    private let boundPort: @Sendable () -> Int
    private let onTunnel: @Sendable (TunnelSummary) -> Void
    private var state = State.idle
    private var inFlight: Task<Void, Never>?

    init(forward: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse, via: String, loop: LoopGuard,
         maximumBodyBytes: Int, boundPort: @escaping @Sendable () -> Int,
         onTunnel: @escaping @Sendable (TunnelSummary) -> Void) {
        self.forward = forward
        self.onTunnel = onTunnel
        self.via = via
        self.loop = loop
        self.maximumBodyBytes = maximumBodyBytes
        self.boundPort = boundPort
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            let declared = head.headers.first(name: "Content-Length").flatMap(Int.init)
            if let declared, declared > maximumBodyBytes {
                state = .discarding(head)
                return
            }
            // The app waits for a go-ahead before sending its body (curl does for large ones): give it.
            if head.headers["Expect"].contains(where: { $0.lowercased() == "100-continue" }) {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))),
                                      promise: nil)
            }
            state = .receiving(head, context.channel.allocator.buffer(capacity: min(declared ?? 0, 1 << 20)))
        case .body(var chunk):
            switch state {
            case .receiving(let head, var body):
                if body.readableBytes + chunk.readableBytes > maximumBodyBytes {
                    state = .discarding(head)
                } else {
                    state = .idle  // body moves out of the state without a copy
                    body.writeBuffer(&chunk)
                    state = .receiving(head, body)
                }
            default:
                break
            }
        case .end:
            switch state {
            case .receiving(let head, let body):
                state = .forwarding
                handle(head, body: body, context: context)
            case .discarding(let head):
                state = .forwarding
                let refusal = ProxyMessages.Refusal(.payloadTooLarge,
                                                    "The request body is larger than the proxy's \(maximumBodyBytes >> 20) MB limit.",
                                                    closes: true)
                write(refusal, to: head, context: context)
            case .idle, .forwarding:
                break
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        inFlight?.cancel()
        inFlight = nil
        context.fireChannelInactive()
    }

    private func handle(_ head: HTTPRequestHead, body: ByteBuffer, context: ChannelHandlerContext) {
        if head.method == .CONNECT { return openTunnel(head, context: context) }
        let request: HTTPRequest
        do {
            let url = try ProxyMessages.target(of: head)
            if loop.isLoop(url, headers: head.headers, proxyPort: boundPort()) {
                throw ProxyMessages.Refusal(.loopDetected, "\(ProxyMessages.endpoint(of: url)) is Kiosk itself: the request would "
                                            + "come back through the proxy for ever.")
            }
            let sent = body.readableBytes > 0 || head.headers.contains(name: "Content-Length")
                || head.headers.contains(name: "Transfer-Encoding")
            request = try ProxyMessages.request(head, url: url, body: sent ? Data(body.readableBytesView) : nil, via: via)
        } catch {
            write(error, to: head, context: context)
            return
        }
        let promise = context.eventLoop.makePromise(of: Result<HTTPResponse, any Error>.self)
        let forward = forward
        inFlight = Task {
            do {
                promise.succeed(.success(try await forward(request)))
            } catch {
                promise.succeed(.failure(error))
            }
        }
        promise.futureResult.assumeIsolated().whenSuccess { [self] result in
            inFlight = nil
            switch result {
            case .success(let response):
                write(response, to: head, context: context)
            case .failure(let error):
                write(ProxyMessages.failure(error, url: request.url), to: head, context: context)
            }
        }
    }

    /// CONNECT: connects to the target, answers 200, then leaves the connection to the two tunnel ends. A target
    /// that cannot be reached is a 502 (and a tunnel logged with its error).
    private func openTunnel(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let target: (host: String, port: Int)
        do {
            target = try ProxyMessages.tunnelTarget(of: head)
            let url = URL(string: "https://\(target.host.contains(":") ? "[\(target.host)]" : target.host):\(target.port)/")
            if let url, loop.isLoop(url, headers: head.headers, proxyPort: boundPort()) {
                throw ProxyMessages.Refusal(.loopDetected, "\(target.host):\(target.port) is Kiosk itself: the tunnel would come back "
                                            + "through the proxy for ever.", closes: true)
            }
        } catch {
            write(error, to: head, context: context)
            return
        }
        let opened = ContinuousClock.now
        let meter = TunnelMeter(host: target.host, port: target.port, report: onTunnel)
        let onTunnel = onTunnel
        ClientBootstrap(group: context.eventLoop)
            .connectTimeout(.seconds(10))
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(host: target.host, port: target.port)
            .assumeIsolated()
            .whenComplete { [self] result in
                switch result {
                case .failure(let error):
                    let waited = ContinuousClock.now - opened
                    onTunnel(TunnelSummary(host: target.host, port: target.port, sent: 0, received: 0,
                                           duration: Double(waited.components.seconds) + Double(waited.components.attoseconds) / 1e18,
                                           error: "cannot connect: \(error)"))
                    write(ProxyMessages.Refusal(.badGateway, "Kiosk could not connect to \(target.host):\(target.port): \(error).",
                                                closes: true), to: head, context: context)
                case .success(let upstream):
                    self.join(context: context, upstream: upstream, meter: meter, version: head.version)
                }
            }
    }

    /// The HTTP handlers leave, the 200 is written as bytes (NIO's encoder, not knowing the request was a CONNECT,
    /// would frame it as a chunked body and write that body's end into the tunnel), and the two ends join; the
    /// decoder leaves last, handing on whatever bytes the app already sent past the CONNECT.
    private func join(context: ChannelHandlerContext, upstream: any Channel, meter: TunnelMeter, version: HTTPVersion) {
        let (appEnd, upstreamEnd) = TunnelEnd.pair(meter: meter)
        do {
            try upstream.pipeline.syncOperations.addHandler(upstreamEnd)
            let operations = context.pipeline.syncOperations
            operations.removeHandler(try operations.handler(type: HTTPServerPipelineHandler.self), promise: nil)
            operations.removeHandler(try operations.handler(type: HTTPServerProtocolErrorHandler.self), promise: nil)
            operations.removeHandler(try operations.handler(type: RequestHeadDeadline<NIOHTTP1Parts>.self), promise: nil)
            operations.removeHandler(try operations.handler(type: NIOHTTPResponseHeadersValidator.self), promise: nil)
            operations.removeHandler(try operations.handler(type: HTTPResponseEncoder.self), promise: nil)
            let line = "HTTP/\(version.major).\(version.minor) 200 Connection Established\r\n\r\n"
            context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: line)), promise: nil)
            try operations.addHandler(appEnd, position: .after(self))
            operations.removeHandler(context: context, promise: nil)
            operations.removeHandler(try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self), promise: nil)
        } catch {
            upstream.close(promise: nil)
            context.close(promise: nil)
        }
    }

    private func write(_ response: HTTPResponse, to request: HTTPRequestHead, context: ChannelHandlerContext) {
        var head = ProxyMessages.responseHead(response, method: request.method, version: request.version, via: via)
        if !request.isKeepAlive { head.headers.replaceOrAdd(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if ProxyMessages.carriesBody(head, method: request.method), !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
        }
        end(keepAlive: request.isKeepAlive, context: context)
    }

    private func write(_ refusal: ProxyMessages.Refusal, to request: HTTPRequestHead, context: ChannelHandlerContext) {
        let text = refusal.message + "\n"
        var headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(text.utf8.count)),
                                   ("Cache-Control", "no-store"), ("Via", via)])
        let keepAlive = request.isKeepAlive && !refusal.closes
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: refusal.status, headers: headers))),
                      promise: nil)
        if request.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: text)))), promise: nil)
        }
        end(keepAlive: keepAlive, context: context)
    }

    private func write(_ error: any Error, to request: HTTPRequestHead, context: ChannelHandlerContext) {
        let refusal = error as? ProxyMessages.Refusal ?? ProxyMessages.Refusal(.badRequest, "\(error)")
        write(refusal, to: request, context: context)
    }

    private func end(keepAlive: Bool, context: ChannelHandlerContext) {
        state = .idle
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }
}
