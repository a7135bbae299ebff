import KioskProxy
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// An upstream that answers each request with raw bytes of the test's choosing, then closes: answers no HTTP library
/// would write (a 200 KB header, two lengths, a bad chunk), as broken or hostile servers send them.
final class RawBytesUpstream: Sendable {
    private let channel: any Channel
    let port: Int

    private init(channel: any Channel) {
        self.channel = channel
        port = channel.localAddress?.port ?? 0
    }

    /// A server on a free loopback port whose answer to a request for `/name` is `answers["/name"]` (else a 404).
    static func start(_ answers: [String: String]) async throws -> RawBytesUpstream {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Handler(answers: answers)) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return RawBytesUpstream(channel: channel)
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    func stop() async { try? await channel.close() }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private let answers: [String: String]
        private var pending = ""

        init(answers: [String: String]) { self.answers = answers }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            pending += String(buffer: unwrapInboundIn(data))
            guard let end = pending.range(of: "\r\n\r\n") else { return }
            // The request line's target, absolute-form through a proxy: its path picks the answer.
            let target = pending[..<end.lowerBound].split(separator: " ").dropFirst().first.map(String.init) ?? "/"
            let path = target.hasPrefix("/") ? target : "/" + target.split(separator: "/", maxSplits: 3).dropFirst(2).joined(separator: "/")
            let answer = answers[path] ?? "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: answer))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }
    }
}

@Suite("An upstream answer that is not valid HTTP/1.1")
struct MalformedUpstreamTests {
    @Test("The app gets a 502 whose sentence says what was wrong with the answer, and the proxy serves the next request",
          arguments: [
              ("/huge-header", "HTTP/1.1 200 OK\r\nX-Big: \(String(repeating: "a", count: 200_000))\r\nContent-Length: 2\r\n\r\nhi",
               "header section larger than 80 KB"),
              ("/two-lengths", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello12", "two different Content-Lengths"),
              ("/length-and-chunked", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
               "a Transfer-Encoding with a Content-Length"),
              ("/bad-length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nhi", "Content-Length is not a valid length"),
              ("/bad-chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nhello\r\n0\r\n\r\n", "chunk whose size line is not valid"),
              ("/nul", "HTTP/1.1 200 OK\r\nX-Bad: a\u{0}b\r\nContent-Length: 2\r\n\r\nhi", "header line that is not valid HTTP/1.1"),
              ("/not-http", "\u{16}\u{3}\u{1}\u{2}\u{0}garbage\r\n\r\n", "does not begin with an HTTP/1.x status line"),
              ("/unasked-switch", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nframes",
               "switched protocols (101) although the request asked for no upgrade"),
              ("/gzip-coded", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
               "transfer coding gzip, which Kiosk does not decode"),
          ])
    func unreadableAnswer(_ path: String, _ answer: String, _ says: String) async throws {
        let upstream = try await RawBytesUpstream.start([path: answer, "/fine": "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nfine"])
        try await withProxy(to: upstream, stop: { await $0.stop() }) { proxy, upstream in
            // When the upstream answers with bytes NIO's HTTP/1 parser cannot read
            let reply = try await proxy.send(.GET, upstream.url(path))
            // Then the app gets a 502 whose body names the fault in words, not llhttp's ("invalid constant string")
            #expect(reply.status == .badGateway)
            #expect(reply.text.contains(says), "\(reply.text)")
            // And the log says the same
            let record = try #require(try proxy.records().first { $0.url == upstream.url(path) })
            #expect(record.error?.contains(says) == true, "\(record.error ?? "no error")")
            // And the next request is served as ever
            let next = try await proxy.send(.GET, upstream.url("/fine"))
            #expect(next.status == .ok && next.text == "fine")
        }
    }
}
