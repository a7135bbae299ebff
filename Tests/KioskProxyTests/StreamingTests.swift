import Foundation
import KioskApp
import KioskCore
import KioskProxy
import KioskTestSupport
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import Testing

/// An upstream that answers as it goes: `/events` an event stream whose second event waits for `release()`,
/// `/chunked?bytes=N` N bytes in 16 KiB parts with no declared size, `/sized?bytes=N` the same with a Content-Length,
/// `/cut?bytes=N` a Content-Length of 2N and then N bytes before it closes.
final class StreamingUpstream: Sendable {
    private let channel: any Channel
    private let gate = Mutex<[@Sendable () -> Void]>([])
    let port: Int

    private init(channel: any Channel) {
        self.channel = channel
        port = channel.localAddress?.port ?? 0
    }

    static func start() async throws -> StreamingUpstream {
        let holder = Mutex<StreamingUpstream?>(nil)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(hold: { step in
                        holder.withLock { $0?.gate.withLock { $0.append(step) } }
                    }))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let upstream = StreamingUpstream(channel: channel)
        holder.withLock { $0 = upstream }
        return upstream
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Sends every event stream's held event and ends it.
    func release() {
        for step in gate.withLock({ steps in defer { steps = [] }; return steps }) { step() }
    }

    func stop() async { try? await channel.close() }

    static func pattern(_ count: Int, from start: Int = 0) -> Data {
        Data((start..<(start + count)).map { UInt8(truncatingIfNeeded: $0 % 251) })
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        private let hold: @Sendable (@escaping @Sendable () -> Void) -> Void

        init(hold: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) { self.hold = hold }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .head(let head) = unwrapInboundIn(data) else { return }
            let path = head.uri.split(separator: "?").first.map(String.init) ?? head.uri
            let bytes = Int(head.uri.split(separator: "=").last ?? "") ?? 0
            switch path {
            case "/events":
                let fields = HTTPHeaders([("Content-Type", "text/event-stream"), ("Cache-Control", "no-store")])
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: fields))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "data: one\n\n")))), promise: nil)
                let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                let eventLoop = context.eventLoop
                hold {
                    eventLoop.execute {
                        let (handler, context) = bound.value
                        context.write(handler.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "data: two\n\n")))), promise: nil)
                        context.writeAndFlush(handler.wrapOutboundOut(.end(nil)), promise: nil)
                    }
                }
            case "/chunked", "/sized", "/cut":
                var fields = HTTPHeaders([("Content-Type", "application/octet-stream")])
                if path == "/sized" { fields.add(name: "Content-Length", value: String(bytes)) }
                if path == "/cut" { fields.add(name: "Content-Length", value: String(bytes * 2)) }
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: fields))), promise: nil)
                var offset = 0
                while offset < bytes {
                    let count = min(16 << 10, bytes - offset)
                    context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: StreamingUpstream.pattern(count, from: offset))))),
                                  promise: nil)
                    offset += count
                }
                if path == "/cut" {
                    context.flush()
                    context.close(promise: nil)
                } else {
                    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                }
            default:
                let fields = HTTPHeaders([("Content-Length", "0")])
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .notFound, headers: fields))),
                                      promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}

@Suite("kiosk proxy: event streams and bodies past the buffer limit go to the app as they arrive")
struct StreamingTests {
    /// What an app reading through the proxy saw: the head, the body parts in order, and whether the answer ended
    /// cleanly (false: the connection closed first).
    struct Reading {
        var head: HTTPResponseHead?
        var body = Data()
        var ended = false
    }

    /// Sends a GET for `url` through `proxy`, calling `onPart` with what has arrived after each body part
    /// (returning true stops reading there).
    static func read(through proxy: ProxyHarness, _ url: String,
                     onPart: (Reading) async throws -> Bool = { _ in false }) async throws -> Reading {
        try await proxy.connect().executeThenClose { inbound, outbound in
            let host = URLComponents(string: url).map { "\($0.host ?? ""):\($0.port ?? 80)" } ?? ""
            try await outbound.write(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: url, headers: ["Host": host])))
            try await outbound.write(.end(nil))
            var reading = Reading()
            do {
                for try await part in inbound {
                    switch part {
                    case .head(let head): reading.head = head
                    case .body(let chunk):
                        reading.body.append(contentsOf: chunk.readableBytesView)
                        if try await onPart(reading) { return reading }
                    case .end:
                        reading.ended = true
                        return reading
                    }
                }
            } catch let error as HTTPParserError {
                // The proxy closed the connection in the middle of a chunked body: the app's parser says so.
                _ = error
            }
            return reading
        }
    }

    static func withStreamingProxy(limit: Int = 64 << 10,
                                   _ body: (ProxyHarness, StreamingUpstream) async throws -> Void) async throws {
        try await withProxy(to: try await StreamingUpstream.start(), stop: { await $0.stop() },
                            configure: { $0.proxyTransport.maximumBodyBytes = limit }, body)
    }

    /// The log's record of `url`, once it is written (a streamed exchange is recorded when its body ends).
    static func record(of url: String, in proxy: ProxyHarness) async throws -> RequestRecord? {
        for _ in 0..<200 {
            if let found = try proxy.records().first(where: { $0.url == url }) { return try proxy.kiosk.debugger.record(id: found.id) }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    @Test("An event stream reaches the app event by event while the upstream holds it open, and is logged as streamed")
    func eventStream() async throws {
        try await Self.withStreamingProxy { proxy, upstream in
            // Given an upstream that sends one event and holds the stream open
            let url = upstream.url("/events")
            var sawFirstBeforeTheEnd = false
            // When an app reads it through the proxy
            let reading = try await Self.read(through: proxy, url) { reading in
                if String(decoding: reading.body, as: UTF8.self) == "data: one\n\n" {
                    // Then the first event arrived while the upstream still holds the second
                    sawFirstBeforeTheEnd = true
                    upstream.release()
                }
                return false
            }
            #expect(sawFirstBeforeTheEnd)
            // And the whole stream arrived, ended cleanly, as text/event-stream without a length
            #expect(String(decoding: reading.body, as: UTF8.self) == "data: one\n\ndata: two\n\n")
            #expect(reading.ended)
            #expect(reading.head?.headers["Content-Type"] == ["text/event-stream"])
            #expect(reading.head?.headers["Content-Length"] == [])
            // And the log holds it, with both events and a note that it was streamed
            let record = try #require(try await Self.record(of: url, in: proxy))
            #expect(record.status == 200 && record.error == nil)
            #expect(record.responseBody.map { String(decoding: $0.data, as: UTF8.self) } == "data: one\n\ndata: two\n\n")
            #expect(record.touchedBy.contains { $0.kind == .stream && $0.detail.hasPrefix("22 bytes passed on") })
        }
    }

    @Test("A body of no declared size past the buffer limit passes whole and chunked; the log keeps its first part and its size")
    func bodyPastTheLimitWithoutALength() async throws {
        try await Self.withStreamingProxy(limit: 64 << 10) { proxy, upstream in
            // Given an answer of 3 MiB, sent chunked, through a proxy that holds 64 KiB
            let size = 3 << 20
            let url = upstream.url("/chunked?bytes=\(size)")
            // When an app fetches it
            let reading = try await Self.read(through: proxy, url)
            // Then every byte arrived in order, chunked
            #expect(reading.ended && reading.head?.status == .ok)
            #expect(reading.body == StreamingUpstream.pattern(size))
            #expect(reading.head?.headers["Transfer-Encoding"] == ["chunked"])
            // And the log has its first MiB and its whole size, noted as streamed
            let record = try #require(try await Self.record(of: url, in: proxy))
            let body = try #require(record.responseBody)
            #expect(body.data == StreamingUpstream.pattern(1 << 20))
            #expect(body.originalSize == size && record.responseSize == size)
            #expect(record.touchedBy.map(\.kind) == [.stream])
        }
    }

    @Test("A body whose declared size is past the limit passes as it arrives, with that Content-Length")
    func bodyPastTheLimitWithALength() async throws {
        try await Self.withStreamingProxy(limit: 64 << 10) { proxy, upstream in
            let size = 1 << 20
            let url = upstream.url("/sized?bytes=\(size)")
            let reading = try await Self.read(through: proxy, url)
            #expect(reading.ended && reading.body == StreamingUpstream.pattern(size))
            #expect(reading.head?.headers["Content-Length"] == [String(size)])
            #expect(try await Self.record(of: url, in: proxy)?.touchedBy.map(\.kind) == [.stream])
        }
    }

    @Test("A streamed body the upstream cuts short closes the app's connection unfinished, and the log says why")
    func cutShort() async throws {
        try await Self.withStreamingProxy(limit: 64 << 10) { proxy, upstream in
            // Given an upstream that promises 512 KiB and closes after at most 256 KiB
            let url = upstream.url("/cut?bytes=\(256 << 10)")
            // When an app fetches it through the proxy
            let reading = try await Self.read(through: proxy, url)
            // Then the app got the bytes that came and an answer that never ended: never a wrong whole one
            #expect(!reading.ended)
            #expect(reading.body.count <= 256 << 10 && reading.body == StreamingUpstream.pattern(reading.body.count))
            // And the record says the upstream closed early
            let record = try #require(try await Self.record(of: url, in: proxy))
            #expect(record.error?.hasPrefix("Truncated response") == true && record.error?.hasSuffix("of 524288 bytes") == true,
                    "\(record.error ?? "no error")")
        }
    }

    @Test("A body within the limit is still held whole, with its exact Content-Length and no streaming note")
    func smallBodiesStayWhole() async throws {
        try await Self.withStreamingProxy(limit: 64 << 10) { proxy, upstream in
            let url = upstream.url("/chunked?bytes=\(32 << 10)")
            let reading = try await Self.read(through: proxy, url)
            #expect(reading.ended && reading.body == StreamingUpstream.pattern(32 << 10))
            #expect(reading.head?.headers["Content-Length"] == [String(32 << 10)])
            #expect(try await Self.record(of: url, in: proxy)?.touchedBy.isEmpty == true)
        }
    }
}
