import KioskCore
import KioskProxy
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import Testing

/// An upstream that reads requests and never answers; `heard` counts the connections that sent it something.
struct SilentUpstream: Sendable {
    private final class Count: Sendable {
        let value = Mutex(0)
    }

    private let server: LoopbackServer
    private let count: Count

    static func start() async throws -> SilentUpstream {
        let count = Count()
        let server = try await LoopbackServer.start { channel in
            try channel.pipeline.syncOperations.addHandler(Handler { count.value.withLock { $0 += 1 } })
        }
        return SilentUpstream(server: server, count: count)
    }

    var heard: Int { count.value.withLock { $0 } }
    var port: Int { server.port }
    func url(_ path: String) -> String { server.url(path) }
    func stop() async { await server.stop() }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private let heard: @Sendable () -> Void
        private var told = false
        init(heard: @escaping @Sendable () -> Void) { self.heard = heard }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if !told { told = true; heard() }
        }
    }
}

@Suite("Stopping the proxy")
struct ProxyStopTests {
    @Test("A stopping proxy gives exchanges in flight its grace, then closes an endless stream and a wait that never ends, logging both")
    func stopEndsWhatNeverEnds() async throws {
        // Given a proxy whose stop grace is 1 s, an upstream streaming a byte every 200 ms for minutes, and one that never answers
        let streaming = try await TricklingUpstream.start(body: String(repeating: "x", count: 1000), interval: .milliseconds(200))
        let silent = try await SilentUpstream.start()
        defer { Task { await streaming.stop(); await silent.stop() } }
        var configuration = ProxyConfiguration(port: 0)
        configuration.stop = StopDeadline(grace: .seconds(1))
        // (A body over the buffer limit streams on to the app as it comes.)
        let proxy = try await ProxyHarness.start(configuration, configure: { $0.proxyTransport.maximumBodyBytes = 100 })
        // And an app reading the stream, and another waiting for the silent upstream
        let stream = try await proxy.connect()
        let streamURL = streaming.url("/stream"), silentURL = silent.url("/waits")
        try await stream.executeThenClose { inbound, outbound in
            try await outbound.write(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: streamURL,
                                                           headers: ["Host": "127.0.0.1:\(streaming.port)"])))
            try await outbound.write(.end(nil))
            var parts = inbound.makeAsyncIterator()
            guard case .head(let head)? = try await parts.next() else { Issue.record("no head"); return }
            #expect(head.status == .ok)
            let waiting = Task { try? await proxy.send(.GET, silentURL) }
            // (Once the request reached the upstream: before, it is no exchange yet.)
            for _ in 0..<200 where silent.heard == 0 { try await Task.sleep(for: .milliseconds(50)) }
            // When the proxy is told to stop
            let clock = ContinuousClock()
            let started = clock.now
            await proxy.group.triggerGracefulShutdown()
            _ = try? await proxy.running.value
            // Then it has stopped soon after the grace, though neither exchange would ever end by itself
            #expect(clock.now - started < .seconds(15), "\(clock.now - started)")
            // And the app's stream ended (its connection closed) rather than hanging
            var ended = false
            do { while try await parts.next() != nil {} ; ended = true } catch { ended = true }
            #expect(ended)
            _ = await waiting.value
        }
        // And both exchanges are in the log: the stream as far as it came, the wait as cut short
        let records = try proxy.records()
        let streamed = try #require(records.first { $0.url == streamURL })
        #expect(streamed.status == 200)
        // (cut by the stop, which the record says, not by the app)
        let said = streamed.touchedBy.map(\.detail).joined(separator: " ")
        #expect(said.contains("until Kiosk stopped") && !said.contains("until the app closed"), "\(said)")
        let cut = try #require(records.first { $0.url == silentURL })
        #expect(cut.error?.contains("the app's connection closed before the answer came") == true, "\(cut.error ?? "no error")")
        await proxy.stop()
    }

    @Test("A request whose body was still coming when the proxy stopped is logged as cut by the stop, not by its app")
    func stopCutsAnUpload() async throws {
        // Given a proxy with a short grace, and an app that has sent 3 of the 100 bytes its POST declares, and waits
        let upstream = try await EchoUpstream.start()
        var configuration = ProxyConfiguration(port: 0)
        configuration.stop = StopDeadline(grace: .milliseconds(300))
        let proxy = try await ProxyHarness.start(configuration)
        let url = upstream.url("/echo?upload")
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: proxy.port) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        try await channel.executeThenClose { _, outbound in
            try await outbound.write(ByteBuffer(string: "POST \(url) HTTP/1.1\r\nHost: 127.0.0.1:\(upstream.port)\r\nContent-Length: 100\r\n\r\nabc"))
            try await Task.sleep(for: .milliseconds(200))
            // When the proxy stops, the app still there
            await proxy.group.triggerGracefulShutdown()
            _ = try? await proxy.running.value
        }
        // Then its record says Kiosk's stop cut it, after the bytes that came
        let record = try #require(try proxy.records().first { $0.url == url })
        #expect(record.error?.contains("Kiosk stopped before the end of its request body, after 3 of its 100 bytes") == true,
                "\(record.error ?? "no error")")
        await proxy.stop()
        await upstream.stop()
    }

    @Test("A proxy stopped while an app has sent part of its next request head closes that connection and stops, without a crash")
    func stopWithHalfAHead() async throws {
        let upstream = try await EchoUpstream.start()
        let proxy = try await ProxyHarness.start()
        // Given an app whose one write holds a whole request and the start of its next one (pipelined), answered the first
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: proxy.port) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        let received = try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: "GET \(upstream.url("/empty")) HTTP/1.1\r\nHost: 127.0.0.1:\(upstream.port)\r\n\r\n"
                                                + "GET \(upstream.url("/echo")) HTTP/1.1\r\nHost: 127.0"))
            var received = ""
            var parts = inbound.makeAsyncIterator()
            while !received.hasSuffix("\r\n\r\n"), let part = try await parts.next() { received += String(buffer: part) }
            // When the proxy is told to stop, the rest of that head still to come
            await proxy.group.triggerGracefulShutdown()
            _ = try? await proxy.running.value
            // (Then the connection closes: what else came on it is read to its end.)
            do { while let part = try await parts.next() { received += String(buffer: part) } } catch {}
            return received
        }
        // Then the proxy stopped (the process lives on), and the app got its first answer and nothing after it
        #expect(received.hasPrefix("HTTP/1.1 204 No Content") && received.hasSuffix("\r\n\r\n"), "\(received)")
        #expect(received.components(separatedBy: "HTTP/1.1 ").count == 2, "\(received)")
        await proxy.stop()
        await upstream.stop()
    }
}
