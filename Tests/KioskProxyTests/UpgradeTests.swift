import Foundation
import KioskCore
import KioskDebugger
import KioskDemoUpstream
import KioskProxy
import KioskTestSupport
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization
import Testing

/// An upstream that answers every request head it reads `200 ok` and keeps the connection, counting the heads: one that
/// ignores `Upgrade`, as RFC 9110 §7.8 lets a server.
private final class KeptAliveOK: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    /// How many request heads one of these read, on any connection.
    final class Count: Sendable {
        let value = Mutex(0)
        /// Every byte read, as text.
        let received = Mutex("")
    }
    private let heads: Count
    private var pending = ""

    init(heads: Count) { self.heads = heads }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let text = String(buffer: unwrapInboundIn(data))
        heads.received.withLock { $0 += text }
        pending += text
        while let end = pending.range(of: "\r\n\r\n") {
            pending = String(pending[end.upperBound...])
            heads.value.withLock { $0 += 1 }
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")), promise: nil)
        }
    }
}

/// A WebSocket upstream on loopback (swift-nio's server upgrader, a real implementation of RFC 6455): `/ws` switches
/// and echoes every text frame back as `echo: <text>`; any other path is an ordinary 404 that refuses the switch.
private final class WebSocketUpstream: Sendable {
    private let channel: any Channel
    let port: Int

    private init(channel: any Channel) {
        self.channel = channel
        port = channel.localAddress?.port ?? 0
    }

    static func start() async throws -> WebSocketUpstream {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let upgrader = NIOWebSocketServerUpgrader(
                    shouldUpgrade: { channel, head in
                        // (Echoing the app's token in its answer, as a debugging server may.)
                        channel.eventLoop.makeSucceededFuture(head.uri.hasPrefix("/ws")
                            ? HTTPHeaders([("X-Upstream", "ws"), ("X-Echo-Authorization", head.headers["Authorization"].first ?? "")]) : nil)
                    },
                    upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            // The HTTP answerer leaves with the HTTP handlers; frames go to the echo.
                            let operations = channel.pipeline.syncOperations
                            operations.removeHandler(try operations.handler(type: NotFound.self), promise: nil)
                            try operations.addHandler(EchoFrames())
                        }
                    })
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                    try channel.pipeline.syncOperations.addHandler(NotFound())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return WebSocketUpstream(channel: channel)
    }

    func stop() async { try? await channel.close() }

    private final class EchoFrames: ChannelInboundHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.opcode {
            case .text:
                var data = frame.unmaskedData
                let text = data.readString(length: data.readableBytes) ?? ""
                let reply = context.channel.allocator.buffer(string: "echo: " + text)
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: reply)), promise: nil)
            case .connectionClose:
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: ByteBuffer())))
                    .assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            default:
                break
            }
        }
    }

    private final class NotFound: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .end = unwrapInboundIn(data) else { return }
            let body = context.channel.allocator.buffer(string: "no socket here\n")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .notFound,
                                                                 headers: ["Content-Length": String(body.readableBytes)]))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}

/// A WebSocket client speaking raw bytes to `port`: sends `request` (the upgrade), reads the answer's head, then, when it
/// switched, sends `message` in one masked text frame and reads the one frame that comes back.
private func webSocketExchange(port: Int, request: String, message: String) async throws -> (head: String, reply: String?) {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
    return try await channel.executeThenClose { inbound, outbound in
        try await outbound.write(ByteBuffer(string: request))
        var received = ByteBuffer()
        var iterator = inbound.makeAsyncIterator()
        var head = ""
        while true {
            guard var chunk = try await iterator.next() else { return (String(buffer: received), nil) }
            received.writeBuffer(&chunk)
            let text = String(buffer: received)
            if let end = text.range(of: "\r\n\r\n") {
                head = String(text[..<end.upperBound])
                received.moveReaderIndex(forwardBy: head.utf8.count)
                break
            }
        }
        guard head.hasPrefix("HTTP/1.1 101") else { return (head, nil) }
        // A client's frame is masked (RFC 6455 §5.3): FIN + text, the length with the mask bit, the key, the payload.
        let payload = Array(message.utf8)
        precondition(payload.count < 126)
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        var frame = ByteBuffer(bytes: [0x81, 0x80 | UInt8(payload.count)] + key)
        frame.writeBytes(payload.enumerated().map { $0.element ^ key[$0.offset % 4] })
        try await outbound.write(frame)
        // The server's frame is not masked: FIN + text, the length, the payload.
        while received.readableBytes < 2 || received.readableBytes < 2 + Int(received.getInteger(at: received.readerIndex + 1, as: UInt8.self)! & 0x7F) {
            guard var chunk = try await iterator.next() else { return (head, nil) }
            received.writeBuffer(&chunk)
        }
        let length = Int(received.getInteger(at: received.readerIndex + 1, as: UInt8.self)! & 0x7F)
        return (head, received.getString(at: received.readerIndex + 2, length: length))
    }
}

/// Closes its connection as soon as anything is read, having written `first` (nothing: an upstream that takes a request
/// and goes without a word; half a status line: one that dies answering).
private final class CloseOnRead: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let first: String
    init(first: String = "") { self.first = first }
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !first.isEmpty { context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: first)), promise: nil) }
        context.close(promise: nil)
    }
}

private func upgradeRequest(_ target: String, host: String) -> String {
    "GET \(target) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ws-secret-token\r\n\r\n"
}

@Suite("kiosk proxy passes protocol switches (WebSocket) through as tunnels")
struct UpgradeTests {
    @Test("A WebSocket through the forward proxy switches, carries frames both ways, and is logged as one exchange")
    func webSocketThroughTheForwardProxy() async throws {
        let upstream = try await WebSocketUpstream.start()
        defer { Task { await upstream.stop() } }
        try await withProxy { proxy, _ in
            // Given an app whose HTTP proxy is Kiosk, opening ws://127.0.0.1:PORT/ws (sent in absolute-form)
            let target = "http://127.0.0.1:\(upstream.port)/ws?room=1"
            // When it asks to switch and sends a frame
            let (head, reply) = try await webSocketExchange(port: proxy.port, request: upgradeRequest(target, host: "127.0.0.1:\(upstream.port)"),
                                                            message: "hello through kiosk")
            // Then the upstream's 101 reaches it (its accept key computed from the app's key, so the app's fields
            // arrived), and the echo of its frame comes back through the tunnel
            #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
            #expect(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "\(head)")
            #expect(head.contains("X-Upstream: ws"))
            #expect(reply == "echo: hello through kiosk")
            // And once closed, the log holds one exchange: the request's method and URL (the ws: address the app
            // opened), status 101, a tunnel touch with the bytes each way and no body said cut, the app's Authorization nowhere
            let record = try #require(try await proxy.waitForRecord { $0.url.contains("/ws") })
            #expect(record.method == "GET")
            #expect(record.status == 101)
            #expect(record.url == "ws://127.0.0.1:\(upstream.port)/ws?room=1")
            // And Replay says a WebSocket is not sent again, rather than that its address is no http(s) URL
            await #expect { _ = try await proxy.kiosk.debugger.resend(record) } throws: { error in
                "\(error)".contains("opened a WebSocket, which is not sent again")
            }
            let touch = try #require(record.touchedBy.first)
            #expect(touch.kind == .tunnel)
            #expect(touch.detail.hasPrefix("websocket: ") && !touch.detail.contains("Kiosk stopped"), "\(touch.detail)")
            // (the bytes sent count the app's handshake request, as those received count the upstream's 101)
            let sent = touch.detail.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            #expect(sent > upgradeRequest(target, host: "127.0.0.1:\(upstream.port)").utf8.count / 2, "\(touch.detail)")
            #expect(record.responseSize ?? 0 > 0)
            let stored = try #require(try proxy.kiosk.debugger.record(id: record.id))
            #expect(stored.responseBody == nil && stored.responseSize == record.responseSize)
            // And the handshake's fields are kept both ways, the app's token redacted
            #expect(stored.requestHeaders.contains { $0.name == "Sec-WebSocket-Version" && $0.value == "13" })
            #expect(stored.requestHeaders.contains { $0.name == "Authorization" && $0.value == Redactor.placeholder })
            #expect(stored.responseHeaders.contains { $0.name == "Sec-WebSocket-Accept" && $0.value == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" })
            #expect(!String(describing: record).contains("ws-secret-token"))
            // (the token echoed in the upstream's 101 too, which the app gets as sent)
            #expect(head.contains("X-Echo-Authorization: Bearer ws-secret-token"))
            #expect(stored.responseHeaders.contains { $0.name == "X-Echo-Authorization" && $0.value.contains(Redactor.placeholder) },
                    "\(stored.responseHeaders)")
            #expect(!String(describing: stored).contains("ws-secret-token"))
        }
    }

    @Test("An open WebSocket is listed in flight at the address the app opened, with its 101, until it closes")
    func webSocketListedInFlight() async throws {
        // Given an upstream that switches /ws
        let upstream = try await WebSocketUpstream.start()
        defer { Task { await upstream.stop() } }
        try await withProxy { proxy, _ in
            let target = "http://127.0.0.1:\(upstream.port)/ws?token=ws-secret-1"
            try await withRawConnection(port: proxy.port) { inbound, outbound in
                // When an app opens a WebSocket and keeps it open
                try await outbound.write(ByteBuffer(string: upgradeRequest(target, host: "127.0.0.1:\(upstream.port)")))
                var head = ""
                var parts = inbound.makeAsyncIterator()
                while !head.contains("\r\n\r\n"), let part = try await parts.next() { head += String(buffer: part) }
                #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
                // Then it is in flight, at its ws: address, its token hidden, switched
                let listed = proxy.kiosk.debugger.inFlight(matching: RequestFilter(), olderThan: .zero)
                #expect(listed.map(\.url) == ["ws://127.0.0.1:\(upstream.port)/ws?token=<redacted>"], "\(listed)")
                #expect(listed.first?.status == 101 && listed.first?.method == "GET")
            }
            // And once it closed and was logged, it is not
            _ = try #require(try await proxy.waitForRecord { $0.url.contains(":\(upstream.port)/ws") })
            #expect(proxy.kiosk.debugger.inFlight(matching: RequestFilter(), olderThan: .zero).isEmpty)
        }
    }

    @Test("A request breakpoint holds a WebSocket's handshake: sent edited, it switches with the edit and is logged so; answered or aborted there, the app gets that and nothing goes upstream")
    func handshakeHeldAtABreakpoint() async throws {
        let upstream = try await WebSocketUpstream.start()
        defer { Task { await upstream.stop() } }
        try await withProxy { proxy, _ in
            // Given a request breakpoint on the WebSocket's host
            let breakpoints = proxy.kiosk.debugger.breakpoints
            try breakpoints.set(BreakpointSetting(request: .pause), for: "127.0.0.1:\(upstream.port)")
            let target = "http://127.0.0.1:\(upstream.port)/ws?room=1"
            func open() -> Task<(head: String, reply: String?), any Error> {
                Task { try await webSocketExchange(port: proxy.port, request: upgradeRequest(target, host: "127.0.0.1:\(upstream.port)"),
                                                   message: "held") }
            }
            func pause() async throws -> PausedExchange {
                let deadline = ContinuousClock.now + .seconds(10)
                while breakpoints.paused.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
                return try #require(breakpoints.paused.first)
            }

            // When an app opens it, it is held before it goes upstream, its token hidden, listed in flight as paused
            let edited = open()
            let held = try await pause()
            #expect(held.phase == .request && held.method == "GET" && held.url.contains("/ws?room=1"), "\(held.url)")
            // (at the address the app opened, as its record will name it)
            #expect(held.url.hasPrefix("ws://127.0.0.1:\(upstream.port)/"), "\(held.url)")
            #expect(held.requestHeaders.contains { $0.name == "Authorization" && $0.value == Redactor.placeholder })
            #expect(proxy.kiosk.debugger.pausedInFlight(matching: RequestFilter()).map(\.id) == [held.id])
            // And sent edited (another room, another token)
            let headers = held.requestHeaders.map { field in
                (name: field.name, value: field.name == "Authorization" ? "Bearer edited-token" : field.value)
            }
            #expect(breakpoints.decide(held.id, .continueWithRequest(query: [(name: "room", value: "2")], headers: headers)))
            // Then it switches with the edit (the upstream echoes the token it got), frames pass
            let (head, reply) = try await edited.value
            #expect(head.hasPrefix("HTTP/1.1 101") && head.contains("X-Echo-Authorization: Bearer edited-token"), "\(head)")
            #expect(reply == "echo: held")
            // And its record is the switch as sent, saying it was edited at the breakpoint
            let record = try #require(try await proxy.waitForRecord { $0.url.contains("/ws?room=2") })
            #expect(record.status == 101 && record.touchedBy.contains { $0.kind == .breakpoint }, "\(record.touchedBy)")

            // When the next is answered at the breakpoint instead
            let answered = open()
            let second = try await pause()
            #expect(breakpoints.decide(second.id, .continueWithResponse(status: 403, body: Data(#"{"error":"closed"}"#.utf8))))
            // Then the app gets that answer, no switch
            let (refused, none) = try await answered.value
            #expect(refused.hasPrefix("HTTP/1.1 403") && none == nil, "\(refused)")

            // When the last is aborted
            let aborted = open()
            let third = try await pause()
            #expect(breakpoints.decide(third.id, .abort))
            // Then the app gets a 502 saying so, and both are logged as made at the breakpoint
            let (failed, _) = try await aborted.value
            #expect(failed.hasPrefix("HTTP/1.1 502"), "\(failed)")
            let made = try await proxy.waitForRecords(count: 2) { $0.decision == .edited && $0.url.contains("/ws?room=1") }
            #expect(made.count == 2)
        }
    }

    @Test("A WebSocket through a reverse listener switches with Host naming the upstream")
    func webSocketThroughAReverseListener() async throws {
        let upstream = try await WebSocketUpstream.start()
        defer { Task { await upstream.stop() } }
        var configuration = ProxyConfiguration(port: 0)
        configuration.reverseTo = URL(string: "http://127.0.0.1:\(upstream.port)")
        try await withProxy(configuration) { proxy, _ in
            // Given an app whose base URL is the reverse listener, opening /ws on it
            let (head, reply) = try await webSocketExchange(port: proxy.port, request: upgradeRequest("/ws", host: "127.0.0.1:\(proxy.port)"),
                                                            message: "reverse")
            // Then it switches and frames pass
            #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
            #expect(reply == "echo: reverse")
            // And the log keeps the request as the upstream got it: its Host the upstream's, with Kiosk's Via
            let record = try #require(try await proxy.waitForRecord { $0.url.contains("/ws") })
            #expect(record.requestHeaders.filter { $0.name == "Host" }.map(\.value) == ["127.0.0.1:\(upstream.port)"], "\(record.requestHeaders)")
            #expect(record.requestHeaders.contains { $0.name == "Via" && $0.value.hasPrefix("1.1 kiosk-") })
        }
    }

    @Test("An upgrade the upstream refuses reaches the app as the upstream's own answer")
    func refusedUpgrade() async throws {
        let upstream = try await WebSocketUpstream.start()
        defer { Task { await upstream.stop() } }
        try await withProxy { proxy, _ in
            // Given a path where the upstream has no socket
            let target = "http://127.0.0.1:\(upstream.port)/nothing"
            let (head, reply) = try await webSocketExchange(port: proxy.port, request: upgradeRequest(target, host: "127.0.0.1:\(upstream.port)"),
                                                            message: "x")
            // Then the app gets the upstream's 404, told that its connection closes (its next request, on a new one, is
            // read by the proxy), and the log says 404
            #expect(head.hasPrefix("HTTP/1.1 404 Not Found\r\nConnection: close\r\n"), "\(head)")
            #expect(reply == nil)
            let record = try #require(try await proxy.waitForRecord { $0.url.contains("/nothing") })
            #expect(record.status == 404)
        }
    }

    @Test("After an upstream answers an upgrade request without switching, the app's next request on the connection never reaches that upstream")
    func refusedSwitchEndsTheTunnel() async throws {
        // Given an upstream that ignores Upgrade (RFC 9110 lets it), answering every request 200 on a kept-alive connection
        let heads = KeptAliveOK.Count()
        let upstream = try await LoopbackServer.start { try $0.pipeline.syncOperations.addHandler(KeptAliveOK(heads: heads)) }
        defer { Task { await upstream.stop() } }
        try await withProxy { proxy, other in
            let received = try await withRawConnection(port: proxy.port) { inbound, outbound in
                // When the app asks it to switch, and reads its 200
                try await outbound.write(ByteBuffer(string: upgradeRequest("http://127.0.0.1:\(upstream.port)/ws", host: "127.0.0.1:\(upstream.port)")))
                var received = ""
                var iterator = inbound.makeAsyncIterator()
                while !received.hasSuffix("ok"), let chunk = try await iterator.next() { received += String(buffer: chunk) }
                // And then sends, on the same connection, a request for another host with its cookie (if the proxy has not
                // closed the connection already, as it does once the refusal's whole answer came)
                try? await outbound.write(ByteBuffer(string: "GET \(other.url("/echo")) HTTP/1.1\r\nHost: 127.0.0.1:\(other.port)\r\n"
                                                     + "Cookie: session=for-the-other-host\r\n\r\n"))
                while let chunk = try? await iterator.next() { received += String(buffer: chunk) }
                return received
            }
            // Then the connection closed (an HTTP client sends the request again on a new one) and the upstream that refused
            // the switch got the upgrade request alone
            #expect(received.hasPrefix("HTTP/1.1 200") && received.hasSuffix("ok"), "\(received)")
            #expect(heads.value.withLock { $0 } == 1)
        }
    }

    @Test("A refused switch's answer, once all of it came, closes the app's connection at once, not when the kept-alive upstream does; the log times the answer")
    func refusedSwitchCloses() async throws {
        // Given an upstream that ignores Upgrade and keeps its connection open after a 200 of 2 bytes
        let heads = KeptAliveOK.Count()
        let upstream = try await LoopbackServer.start { try $0.pipeline.syncOperations.addHandler(KeptAliveOK(heads: heads)) }
        defer { Task { await upstream.stop() } }
        try await withProxy { proxy, _ in
            // When an app asks it to switch and reads until its connection closes
            let target = "http://127.0.0.1:\(upstream.port)/ws"
            let received = try await rawExchange(port: proxy.port, upgradeRequest(target, host: "127.0.0.1:\(upstream.port)"),
                                                 timeout: .seconds(5), toClose: true)
            // Then the answer came whole and the connection closed (no timeout), and the record is not the tunnel's idle time
            #expect(received.hasPrefix("HTTP/1.1 200") && received.hasSuffix("ok"), "\(received)")
            let record = try #require(try await proxy.waitForRecord { $0.url.contains(":\(upstream.port)/ws") })
            #expect(record.status == 200 && record.timings.total < 2, "\(record.timings.total)")
        }
    }

    @Test("An upgrade request's chunked body reaches the upstream framed by its length, not as the switched protocol's first bytes")
    func chunkedUpgradeBody() async throws {
        // Given an upstream that reads whatever comes
        let heads = KeptAliveOK.Count()
        let upstream = try await LoopbackServer.start { try $0.pipeline.syncOperations.addHandler(KeptAliveOK(heads: heads)) }
        defer { Task { await upstream.stop() } }
        try await withProxy { proxy, _ in
            // When an app asks to switch with a request whose body is chunked
            let target = "http://127.0.0.1:\(upstream.port)/ws"
            let request = "POST \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(upstream.port)\r\nConnection: Upgrade\r\nUpgrade: example/1\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
            let (head, _) = try await webSocketExchange(port: proxy.port, request: request, message: "x")
            #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")
            // Then the upstream read one request whose length says where its body ends, and the body whole after it
            let received = heads.received.withLock { $0 }
            let parts = received.components(separatedBy: "\r\n\r\n")
            #expect(parts.count == 2 && parts[1] == "hello world", "\(received)")
            #expect(parts[0].lowercased().contains("content-length: 11"), "\(received)")
            #expect(!parts[0].lowercased().contains("transfer-encoding"), "\(received)")
        }
    }

    @Test("An upgrade to an upstream that refuses connections is a 502 saying so, logged with the reason")
    func upgradeToAClosedPort() async throws {
        let reservation = try #require(PortReservation(host: "127.0.0.1", port: 0))
        try await withProxy { proxy, _ in
            let target = "http://127.0.0.1:\(reservation.port)/ws"
            let (head, _) = try await webSocketExchange(port: proxy.port, request: upgradeRequest(target, host: "127.0.0.1:\(reservation.port)"),
                                                        message: "x")
            #expect(head.hasPrefix("HTTP/1.1 502"), "\(head)")
            let record = try #require(try await proxy.waitForRecord { $0.url.contains(":\(reservation.port)/ws") })
            #expect(record.status == nil)
            #expect(record.error == "Kiosk could not connect to 127.0.0.1:\(reservation.port): it refused the connection "
                + "(nothing listens on that port).", "\(record.error ?? "")")
        }
    }

    @Test("A WebSocket whose upstream reads the switch and closes without a word is a 502 saying so, logged as failed, not as an answer")
    func upgradeClosedUnanswered() async throws {
        // Given an upstream that closes every connection once the request came
        let closing = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(CloseOnRead()) } }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(closing.localAddress?.port)
        try await withProxy { proxy, _ in
            // When an app opens a WebSocket to it through the forward proxy
            let target = "http://127.0.0.1:\(port)/ws"
            let head = try await rawExchange(port: proxy.port, upgradeRequest(target, host: "127.0.0.1:\(port)"), timeout: .seconds(15),
                                             toClose: true)
            // Then it gets a 502 saying the upstream never answered, once, and the log has the exchange failed with why
            #expect(head.hasPrefix("HTTP/1.1 502") && head.contains("closed the connection without answering the protocol switch"), "\(head)")
            #expect(head.components(separatedBy: "HTTP/1.1 ").count == 2, "\(head)")
            let record = try #require(try await proxy.waitForRecord { $0.url.contains(":\(port)/ws") })
            #expect(record.status == nil && !record.isAnsweredFromStore)
            #expect(record.error?.contains("closed the connection without answering the protocol switch") == true, "\(record.error ?? "")")
        }
        try await closing.close()
    }

    @Test("A WebSocket whose upstream dies after half a status line is logged as failed, saying so, not as an answer from the store")
    func upgradeHalfStatusLine() async throws {
        let dying = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(CloseOnRead(first: "HTTP/1.1 10")) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(dying.localAddress?.port)
        try await withProxy { proxy, _ in
            // When an app opens a WebSocket to it
            _ = try await rawExchange(port: proxy.port, upgradeRequest("http://127.0.0.1:\(port)/ws", host: "127.0.0.1:\(port)"),
                                      timeout: .seconds(15), toClose: true)
            // Then the record fails, saying the answer ended before its status line
            let record = try #require(try await proxy.waitForRecord { $0.url.contains(":\(port)/ws") })
            #expect(record.status == nil && !record.isAnsweredFromStore)
            #expect(record.error?.contains("ended before its status line did") == true, "\(record.error ?? "")")
        }
        try await dying.close()
    }

    @Test("A WebSocket whose upstream takes the connection and never answers the switch is a 504 after the switch timeout, logged so")
    func upgradeNeverAnswered() async throws {
        // Given an upstream whose connections open and never hear a byte, and a switch timeout of half a second
        let silent = try #require(UnansweringPort(taking: true))
        var configuration = ProxyConfiguration(port: 0)
        configuration.switchAnswerTimeout = .milliseconds(500)
        try await withProxy(configuration, to: silent, stop: { _ in }) { proxy, _ in
            // When an app opens a WebSocket to it
            let target = "http://127.0.0.1:\(silent.port)/ws"
            let head = try await rawExchange(port: proxy.port, upgradeRequest(target, host: "127.0.0.1:\(silent.port)"), timeout: .seconds(15),
                                             toClose: true)
            // Then it gets a gateway's timeout, one answer only, and the log says why
            #expect(head.hasPrefix("HTTP/1.1 504") && head.contains("did not answer the protocol switch within 0.5 s"), "\(head)")
            #expect(head.components(separatedBy: "HTTP/1.1 ").count == 2, "\(head)")
            let record = try #require(try await proxy.waitForRecord { $0.url.contains(":\(silent.port)/ws") })
            #expect(record.status == nil && record.error?.contains("did not answer the protocol switch") == true, "\(record.error ?? "")")
        }
    }

    @Test("A WebSocket to an HTTPS upstream whose certificate expired is a 502 saying when, as any other exchange's, not BoringSSL's three maybes")
    func upgradeToExpiredCertificate() async throws {
        // Given a reverse listener to an HTTPS upstream from a trusted CA whose certificate expired yesterday
        let upstream = try await EchoUpstream.start(tls: try TestAuthority.shared.upstreamContext(expired: true))
        defer { Task { await upstream.stop() } }
        var configuration = ProxyConfiguration(port: 0)
        configuration.reverseTo = URL(string: upstream.secureURL("/"))
        configuration.upstreamTrustRoots = [TestAuthority.shared.certificateFile.path]
        try await withProxy(configuration) { proxy, _ in
            // When an app opens a WebSocket on it
            let (head, _) = try await webSocketExchange(port: proxy.port, request: upgradeRequest("/ws", host: "127.0.0.1:\(proxy.port)"),
                                                        message: "x")
            // Then the 502 and the log say the certificate expired, and on which day
            let yesterday = Date().addingTimeInterval(-86_400).formatted(Date.ISO8601FormatStyle().year().month().day())
            #expect(head.hasPrefix("HTTP/1.1 502"), "\(head)")
            let record = try #require(try await proxy.waitForRecord { $0.url.contains("/ws") })
            #expect(record.error?.contains("certificate for localhost is not trusted: it expired on \(yesterday)") == true, "\(record.error ?? "")")
        }
    }

    @Test("A WebSocket to an HTTPS upstream that refuses it after the TLS handshake (a client certificate asked for) is a 502 saying why, not a closed connection")
    func upgradeRefusedAfterTheHandshake() async throws {
        // Given a reverse listener to an HTTPS upstream that asks for a client certificate, which TLS 1.3 refuses only after
        // the client's side of the handshake ended
        let upstream = try await EchoUpstream.start(tls: try TestAuthority.shared.upstreamContext(requiresClientCertificate: true))
        defer { Task { await upstream.stop() } }
        var configuration = ProxyConfiguration(port: 0)
        configuration.reverseTo = URL(string: upstream.secureURL("/"))
        configuration.upstreamTrustRoots = [TestAuthority.shared.certificateFile.path]
        try await withProxy(configuration) { proxy, _ in
            // When an app opens a WebSocket on it
            let head = try await rawExchange(port: proxy.port, upgradeRequest("/ws", host: "127.0.0.1:\(proxy.port)"), timeout: .seconds(15),
                                             toClose: true)
            // Then it gets a 502, and it and the log say the upstream asks for a client certificate
            #expect(head.hasPrefix("HTTP/1.1 502") && head.contains("asks for a client certificate"), "\(head)")
            let record = try #require(try await proxy.waitForRecord { $0.url.contains("/ws") })
            #expect(record.status == nil && record.error?.contains("asks for a client certificate") == true, "\(record.error ?? "")")
        }
    }

    @Test("A WebSocket to an HTTPS upstream that takes the connection and never answers its TLS hello is a 504 after the connect timeout, not a hung app")
    func upgradeToASilentTLSUpstream() async throws {
        // Given a reverse listener to an HTTPS upstream whose connections open and never hear a byte, and a connect
        // timeout of 500 ms
        let silent = try #require(UnansweringPort(taking: true))
        var configuration = ProxyConfiguration(port: 0)
        configuration.reverseTo = URL(string: "https://127.0.0.1:\(silent.port)/")
        try await withProxy(configuration, to: silent, stop: { _ in }, configure: { $0.proxyTransport.connectTimeout = .milliseconds(500) }) { proxy, _ in
            // When an app opens a WebSocket on it
            let head = try await rawExchange(port: proxy.port, upgradeRequest("/ws", host: "127.0.0.1:\(proxy.port)"), timeout: .seconds(15))
            // Then it gets a gateway's timeout saying the upstream took the connection and did not answer its handshake,
            // long before its own patience ends
            #expect(head.hasPrefix("HTTP/1.1 504"), "\(head)")
            let record = try #require(try await proxy.waitForRecord { $0.url.contains("/ws") })
            #expect(record.error == "Kiosk could not connect to 127.0.0.1:\(silent.port): it took the connection but did not answer its TLS handshake in time.",
                    "\(record.error ?? "")")
        }
    }

    @Test("A WebSocket still open when the proxy stops is closed after the grace, and its record says Kiosk's stop cut it")
    func webSocketCutByTheStop() async throws {
        // Given a proxy whose stop grace is 1 s, and an app with a WebSocket open through it
        let upstream = try await WebSocketUpstream.start()
        defer { Task { await upstream.stop() } }
        var configuration = ProxyConfiguration(port: 0)
        configuration.stop = StopDeadline(grace: .seconds(1))
        let proxy = try await ProxyHarness.start(configuration)
        let target = "http://127.0.0.1:\(upstream.port)/ws"
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: proxy.port) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        let closed = try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: upgradeRequest(target, host: "127.0.0.1:\(upstream.port)")))
            var parts = inbound.makeAsyncIterator()
            var head = ""
            while !head.contains("\r\n\r\n"), let part = try await parts.next() { head += String(buffer: part) }
            #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
            // When the proxy is told to stop while it is open
            await proxy.group.triggerGracefulShutdown()
            _ = try? await proxy.running.value
            // Then the app's connection is closed
            do { while try await parts.next() != nil {} } catch {}
            return true
        }
        #expect(closed)
        // And the log says the tunnel was cut by Kiosk's stop, neither end having closed it
        let record = try #require(try await proxy.waitForRecord { $0.url.contains("/ws") })
        #expect(record.touchedBy.first?.detail.contains("cut when Kiosk stopped with it open") == true, "\(record.touchedBy)")
        await proxy.stop()
    }

    @Test("Upgrade: h2c is not a switch: the request is forwarded as HTTP/1.1 and read like any other")
    func h2cStaysHTTP1() async throws {
        try await withProxy { proxy, upstream in
            // Given curl --http2 on a plain URL, which offers h2c
            let answer = try await proxy.send(.GET, upstream.url("/echo"),
                                              headers: [("Connection", "Upgrade, HTTP2-Settings"), ("Upgrade", "h2c"), ("HTTP2-Settings", "AAMAAABkAAQCAAAAAAIAAAAA")])
            // Then the upstream answers over HTTP/1.1 without seeing the offer, and the exchange is logged with its body
            #expect(answer.status == .ok)
            #expect(!answer.text.lowercased().contains("h2c"))
            #expect(!answer.text.lowercased().contains("http2-settings"))
        }
    }
}
