import Foundation
import KioskCore
import KioskProxy
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import Testing

/// An upstream that keeps its first connection alive after one answer, then closes it on the next request, unanswered —
/// as a server closing an idle kept-alive connection does when a request crosses its close. Every later connection is
/// answered as usual. It records each request it read as "connection number, method, path".
final class KeepAliveClosingUpstream: Sendable {
    private let channel: any Channel
    private let log = Mutex<[String]>([])
    private let connections = Mutex(0)
    let port: Int

    /// The requests read so far, as "1 GET /a" (the connection's number, from 1, then the request line's method and path).
    var requests: [String] { log.withLock { $0 } }

    private init(channel: any Channel) {
        self.channel = channel
        port = channel.localAddress?.port ?? 0
    }

    static func start() async throws -> KeepAliveClosingUpstream {
        let holder = Mutex<KeepAliveClosingUpstream?>(nil)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                let number = holder.withLock { upstream in upstream?.connections.withLock { count in count += 1; return count } } ?? 0
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler(number: number) { line in
                        holder.withLock { upstream in upstream?.log.withLock { $0.append(line) } }
                    })
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let upstream = KeepAliveClosingUpstream(channel: channel)
        holder.withLock { $0 = upstream }
        return upstream
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    func stop() async { try? await channel.close() }

    /// Reads request heads (and bodies of a declared length) from raw bytes, answering or closing as the type says.
    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private let number: Int
        private let note: @Sendable (String) -> Void
        private var pending = ByteBuffer()
        private var answered = 0

        init(number: Int, note: @escaping @Sendable (String) -> Void) {
            self.number = number
            self.note = note
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            pending.writeBuffer(&bytes)
            while let request = nextRequest() {
                note("\(number) \(request)")
                // The first connection's second request meets the server's close.
                if number == 1 && answered == 1 {
                    context.close(promise: nil)
                    return
                }
                answered += 1
                let body = "answer \(answered) on connection \(number) to \(request)"
                let text = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text)), promise: nil)
            }
        }

        /// The next whole request's method and path, its bytes (and its body's) taken from `pending`; nil until one is whole.
        private func nextRequest() -> String? {
            let text = String(decoding: pending.readableBytesView, as: UTF8.self)
            guard let end = text.range(of: "\r\n\r\n") else { return nil }
            let head = text[..<end.lowerBound]
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            let headBytes = text[..<end.upperBound].utf8.count
            guard pending.readableBytes >= headBytes + length else { return nil }
            pending.moveReaderIndex(forwardBy: headBytes + length)
            let parts = head.split(separator: " ")
            // An absolute-form target (through a proxy) is shown by its path.
            let target = parts.count > 1 ? String(parts[1]) : ""
            let path = URLComponents(string: target)?.path.isEmpty == false ? URLComponents(string: target)!.path : target
            return "\(parts.first ?? "") \(path)"
        }
    }
}

@Suite("A kept-alive upstream connection that the server closes as a request crosses it")
struct StaleConnectionTests {
    @Test("A GET lost to a connection the server closed goes again on a new one: the app gets its answer, logged once")
    func getIsSentAgain() async throws {
        let upstream = try await KeepAliveClosingUpstream.start()
        try await withProxy(to: upstream, stop: { await $0.stop() }) { proxy, upstream in
            // Given an app whose first answer left its upstream connection open in the pool (the app's next request comes
            // on its own kept-alive connection, as an app's do: the proxy's pools are per event loop)
            // When the app's next GET goes out on that connection and the server closes it instead of answering
            let answers = try await proxy.send(keptAlive: [.init(url: upstream.url("/first")), .init(url: upstream.url("/second"))])
            let (first, second) = (answers[0], answers[1])
            #expect(first.status == .ok)
            // Then the app gets the answer of a new connection, not a 502
            #expect(second.status == .ok, "\(second.text)")
            #expect(second.text == "answer 1 on connection 2 to GET /second")
            #expect(upstream.requests == ["1 GET /first", "1 GET /second", "2 GET /second"])
            // And the log holds one exchange per request the app made
            let records = try proxy.records().filter { $0.url.hasPrefix(upstream.url("/")) }
            #expect(records.map(\.url) == [upstream.url("/second"), upstream.url("/first")])
            #expect(records.map(\.status) == [200, 200])
        }
    }

    @Test("A POST lost the same way is not sent twice: the app gets a 502 that says the connection closed")
    func postIsNotSentAgain() async throws {
        let upstream = try await KeepAliveClosingUpstream.start()
        try await withProxy(to: upstream, stop: { await $0.stop() }) { proxy, upstream in
            // Given an app whose first answer left its upstream connection open in the pool
            // When the app's POST, on its same connection, goes out on that upstream connection and the server closes it
            // instead of answering
            let answers = try await proxy.send(keptAlive: [.init(url: upstream.url("/first")),
                                                           .init(method: .POST, url: upstream.url("/order"), body: #"{"pizza":1}"#)])
            #expect(answers[0].status == .ok)
            let answer = answers[1]
            // Then the server saw it once, and the app is told what happened rather than risking a second order
            #expect(upstream.requests == ["1 GET /first", "1 POST /order"])
            #expect(answer.status == .badGateway)
            #expect(answer.text.contains("closed"), "\(answer.text)")
        }
    }
}
