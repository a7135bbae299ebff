// Bare relays beside Kiosk in kiosk-bench --proxy: what any proxy written on SwiftNIO costs at the least on this machine,
// as nginx shows it for one written in C. Each parses a request with NIO's HTTP/1 codec and passes it on, then the answer
// back, and does nothing else: no capture, no log, no hop-by-hop fields removed, no limits. Two ways to the upstream:
// NIO's own client codec on one upstream connection per client connection (the floor), or AsyncHTTPClient, one client
// per event loop as Kiosk's transport uses it, each answer collected whole (what the library adds to that floor). Never
// proxies to use: only what the throughput targets are read against.

import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A reverse relay on a loopback port of its own, to `upstream`'s port, on two event loops of its own.
final class BareRelay: Sendable {
    /// How the relay reaches the upstream.
    enum Client {
        /// NIO's HTTP/1 client codec, one upstream connection per client connection.
        case nio
        /// AsyncHTTPClient, one client (and pool) per event loop.
        case asyncHTTPClient
    }

    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let clients: [HTTPClient]

    private init(port: Int, group: MultiThreadedEventLoopGroup, channel: any Channel, clients: [HTTPClient]) {
        self.port = port
        self.group = group
        self.channel = channel
        self.clients = clients
    }

    /// A relay listening on 127.0.0.1 (a free port), passing every request to 127.0.0.1:`upstream` through `client`.
    static func start(upstream: Int, client: Client) async throws -> BareRelay {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var clients: [ObjectIdentifier: HTTPClient] = [:]
        if client == .asyncHTTPClient {
            var configuration = HTTPClient.Configuration()
            // As Kiosk's transport sets it for a proxy: an app's parallel requests not queued behind eight connections,
            // and no tracing span per request.
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 256
            configuration.tracing.tracer = nil
            for loop in group.makeIterator() {
                clients[ObjectIdentifier(loop)] = HTTPClient(eventLoopGroupProvider: .shared(loop), configuration: configuration)
            }
        }
        let byLoop = clients
        let base = URL(string: "http://127.0.0.1:\(upstream)")!
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    if let http = byLoop[ObjectIdentifier(channel.eventLoop)] {
                        try channel.pipeline.syncOperations.addHandler(ThroughAsyncHTTPClient(http: http, base: base))
                    } else {
                        try channel.pipeline.syncOperations.addHandler(ClientSide(upstream: upstream))
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return BareRelay(port: channel.localAddress?.port ?? 0, group: group, channel: channel, clients: Array(clients.values))
    }

    /// Closes the listener and the clients, and stops the loops.
    func stop() async {
        try? await channel.close()
        for client in clients { try? await client.shutdown() }
        try? await group.shutdownGracefully()
    }

    /// A client connection whose requests (bodies ignored: the bench sends GETs) go through AsyncHTTPClient.
    private final class ThroughAsyncHTTPClient: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        private let http: HTTPClient
        private let base: URL
        private var head: HTTPRequestHead?

        init(http: HTTPClient, base: URL) {
            self.http = http
            self.base = base
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): self.head = head
            case .body: break
            case .end:
                guard let head, let url = URL(string: head.uri, relativeTo: base)?.absoluteURL,
                      let request = try? HTTPClient.Request(url: url, method: head.method, headers: head.headers) else {
                    return context.close(promise: nil)
                }
                let version = head.version
                let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
                http.execute(request: request, delegate: Collector(), deadline: .now() + .seconds(30)).futureResult.whenComplete { result in
                    let context = bound.value
                    guard case .success(let (answer, body)) = result else { return context.close(promise: nil) }
                    var headers = answer.headers
                    headers.add(name: "Via", value: "1.1 bare-relay")
                    context.write(NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: version, status: answer.status,
                                                                                      headers: headers))), promise: nil)
                    context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(body))), promise: nil)
                    context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
                }
            }
        }
    }

    /// An answer's head and its body, collected whole.
    private final class Collector: HTTPClientResponseDelegate, @unchecked Sendable {
        // Unchecked: AsyncHTTPClient calls a delegate on its task's event loop only, one call after another.
        typealias Response = (HTTPResponseHead, ByteBuffer)
        private var head: HTTPResponseHead?
        private var body = ByteBuffer()

        func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            self.head = head
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            var buffer = buffer
            body.writeBuffer(&buffer)
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
            guard let head else { throw HTTPClientError.remoteConnectionClosed }
            return (head, body)
        }
    }

    /// A client connection: its requests' parts written to its upstream connection as they come.
    private final class ClientSide: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        private let upstream: Int
        private var connection: EventLoopFuture<any Channel>?

        init(upstream: Int) {
            self.upstream = upstream
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let part: HTTPClientRequestPart
            switch unwrapInboundIn(data) {
            case .head(var head):
                head.headers.add(name: "Via", value: "1.1 bare-relay")
                part = .head(head)
            case .body(let bytes): part = .body(.byteBuffer(bytes))
            case .end(let trailers): part = .end(trailers)
            }
            if connection == nil {
                let client = NIOLoopBound(context.channel, eventLoop: context.eventLoop)
                connection = ClientBootstrap(group: context.eventLoop)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHTTPClientHandlers()
                            try channel.pipeline.syncOperations.addHandler(UpstreamSide(client: client.value))
                        }
                    }
                    .connect(host: "127.0.0.1", port: upstream)
                let clientChannel = client
                connection?.whenFailure { _ in clientChannel.value.close(promise: nil) }
            }
            let isEnd = if case .end = part { true } else { false }
            connection?.assumeIsolated().whenSuccess { upstream in
                if isEnd { upstream.writeAndFlush(part, promise: nil) } else { upstream.write(part, promise: nil) }
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            connection?.whenSuccess { $0.close(promise: nil) }
            context.fireChannelInactive()
        }
    }

    /// The upstream connection of one client connection: the answer's parts written back to the client as they come.
    private final class UpstreamSide: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        private let client: any Channel

        init(client: any Channel) {
            self.client = client
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(var head):
                head.headers.add(name: "Via", value: "1.1 bare-relay")
                client.write(HTTPServerResponsePart.head(head), promise: nil)
            case .body(let bytes): client.write(HTTPServerResponsePart.body(.byteBuffer(bytes)), promise: nil)
            case .end(let trailers): client.writeAndFlush(HTTPServerResponsePart.end(trailers), promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            client.close(promise: nil)
            context.fireChannelInactive()
        }
    }
}
