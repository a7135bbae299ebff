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
/// `/cut?bytes=N` a Content-Length of 2N and then N bytes before it closes; `/upload` reads a request body, counting
/// what has arrived (`uploaded`), and answers its size, its framing and whether it matched `pattern`; `/refuse` answers
/// 403 at the head, reading no body.
final class StreamingUpstream: Sendable {
    private let channel: any Channel
    private let gate = Mutex<[@Sendable () -> Void]>([])
    private let received = Mutex(0)
    let port: Int

    /// The bytes of request bodies `/upload` has read so far.
    var uploaded: Int { received.withLock { $0 } }

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
                    }, count: { bytes in holder.withLock { $0?.received.withLock { $0 += bytes } } }))
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
        private let count: @Sendable (Int) -> Void
        /// The upload being read: its head and its bytes so far.
        private var upload: (head: HTTPRequestHead, body: Data)?

        init(hold: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void, count: @escaping @Sendable (Int) -> Void) {
            self.hold = hold
            self.count = count
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let head: HTTPRequestHead
            switch unwrapInboundIn(data) {
            case .head(let value):
                head = value
            case .body(let chunk):
                upload?.body.append(contentsOf: chunk.readableBytesView)
                count(chunk.readableBytes)
                return
            case .end:
                guard let (head, body) = upload else { return }
                upload = nil
                let text = #"{"bytes":\#(body.count),"pattern":\#(body == StreamingUpstream.pattern(body.count)),"#
                    + #""chunked":\#(head.headers["Transfer-Encoding"] == ["chunked"]),"length":"\#(head.headers["Content-Length"].first ?? "")"}"#
                let fields = HTTPHeaders([("Content-Type", "application/json"), ("Content-Length", String(text.utf8.count))])
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: fields))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            let path = head.uri.split(separator: "?").first.map(String.init) ?? head.uri
            let bytes = Int(head.uri.split(separator: "=").last ?? "") ?? 0
            switch path {
            case "/events", "/feed", "/slow":
                // An event stream, an NDJSON feed, and a JSON answer of no declared length slow to end: each sends its
                // first part and holds the rest.
                let type = ["/events": "text/event-stream", "/feed": "application/x-ndjson; charset=utf-8"][path] ?? "application/json"
                let fields = HTTPHeaders([("Content-Type", type), ("Cache-Control", "no-store")])
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
            case "/upload":
                upload = (head, Data())
            case "/refuse":
                let text = "no uploads here"
                let fields = HTTPHeaders([("Content-Length", String(text.utf8.count)), ("Connection", "close")])
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .forbidden, headers: fields))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
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

    @Test("An event stream sent again from the log is read to its end, or for a while when it holds on, and logged as the resend")
    func resentEventStream() async throws {
        try await Self.withStreamingProxy { proxy, upstream in
            // Given an event stream an app read through the proxy
            let url = upstream.url("/events")
            _ = try await Self.read(through: proxy, url) { reading in
                if !reading.body.isEmpty { upstream.release() }
                return false
            }
            let record = try #require(try await Self.record(of: url, in: proxy))
            // When it is sent again while the upstream ends it (its held event let go as it comes)
            let releasing = Task {
                while !Task.isCancelled {
                    upstream.release()
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
            let resent = try await proxy.kiosk.debugger.resend(record)
            releasing.cancel()
            // Then the resend's answer is the whole stream, and it names the new exchange, logged with both events
            #expect(resent.response.map { String(decoding: $0.body, as: UTF8.self) } == "data: one\n\ndata: two\n\n")
            let id = try #require(resent.recordID)
            let again = try #require(try proxy.kiosk.debugger.record(id: id))
            #expect(again.touchedBy.first?.kind == .resend)
            #expect(again.responseBody.map { String(decoding: $0.data, as: UTF8.self) } == "data: one\n\ndata: two\n\n")

            // When it is sent again and the upstream holds its second event
            let held = try await proxy.kiosk.debugger.resend(record, window: .milliseconds(300))
            // Then the resend answers with what came within its window, and that exchange is logged too
            #expect(held.response.map { String(decoding: $0.body, as: UTF8.self) } == "data: one\n\n")
            let heldID = try #require(held.recordID)
            #expect(try proxy.kiosk.debugger.record(id: heldID)?.responseBody.map { String(decoding: $0.data, as: UTF8.self) } == "data: one\n\n")
            upstream.release()
        }
    }

    @Test("A stream by its media type (NDJSON), and any body of no declared length not ended a second after its head, reach the app as they come",
          arguments: ["/feed", "/slow"])
    func slowOrStreamingBodies(path: String) async throws {
        try await Self.withStreamingProxy { proxy, upstream in
            // Given an upstream that sends a first part and holds the rest (let go after 15 s at the latest, so that a
            // proxy holding the body fails this test rather than hanging it)
            let url = upstream.url(path)
            let deadline = Task {
                try await Task.sleep(for: .seconds(15))
                upstream.release()
            }
            defer { deadline.cancel() }
            let started = ContinuousClock.now
            var firstPartAfter: Duration?
            // When an app reads it through the proxy
            let reading = try await Self.read(through: proxy, url) { reading in
                if firstPartAfter == nil {
                    // Then the first part arrives while the upstream still holds the rest
                    firstPartAfter = ContinuousClock.now - started
                    upstream.release()
                }
                return false
            }
            #expect(firstPartAfter.map { $0 < .seconds(10) } == true, "\(String(describing: firstPartAfter))")
            #expect(String(decoding: reading.body, as: UTF8.self) == "data: one\n\ndata: two\n\n" && reading.ended)
            // And the log keeps it whole, noted as streamed
            let record = try #require(try await Self.record(of: url, in: proxy))
            #expect(record.touchedBy.contains { $0.kind == .stream })
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

    /// Sends a POST of `size` bytes of `pattern` to `url` through `proxy`, in 16 KiB parts, with its length declared
    /// (else chunked); `after(sent)` is awaited after each part. Returns the answer (nil if the connection closed first).
    static func upload(through proxy: ProxyHarness, _ url: String, size: Int, declared: Bool,
                       after: (Int) async throws -> Void = { _ in }) async throws -> (head: HTTPResponseHead?, body: String) {
        try await proxy.connect().executeThenClose { inbound, outbound in
            let host = URLComponents(string: url).map { "\($0.host ?? ""):\($0.port ?? 80)" } ?? ""
            var fields = HTTPHeaders([("Host", host), ("Content-Type", "application/octet-stream")])
            fields.add(name: declared ? "Content-Length" : "Transfer-Encoding", value: declared ? String(size) : "chunked")
            try await outbound.write(.head(HTTPRequestHead(version: .http1_1, method: .POST, uri: url, headers: fields)))
            var sent = 0
            while sent < size {
                let count = min(16 << 10, size - sent)
                try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: StreamingUpstream.pattern(count, from: sent)))))
                sent += count
                try await after(sent)
            }
            try await outbound.write(.end(nil))
            return try await Self.answer(from: inbound)
        }
    }

    /// The answer read from `inbound`: its head and its body as text (no head if the connection closed first).
    static func answer(from inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>) async throws -> (head: HTTPResponseHead?, body: String) {
        var head: HTTPResponseHead?
        var body = ""
        for try await part in inbound {
            switch part {
            case .head(let value): head = value
            case .body(let chunk): body += String(buffer: chunk)
            case .end: return (head, body)
            }
        }
        return (head, body)
    }

    /// An HTTP client connection to `port` that can go on sending after the other side shuts its own (TCP half-close, as
    /// curl and browsers can).
    static func halfClosingClient(port: Int) async throws -> NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart> {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                }
            }
    }

    /// Waits (at most 10 s) until `condition` holds; false if it never did.
    static func eventually(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<500 {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    @Test("An upload past the buffer limit reaches the upstream while the app is still sending it, byte for byte, with its length")
    func uploadPastTheLimit() async throws {
        try await withProxy(ProxyConfiguration(port: 0, maximumRequestBodyBytes: 64 << 10), to: try await StreamingUpstream.start(),
                            stop: { await $0.stop() }) { proxy, upstream in
            // Given a proxy that holds 64 KiB of a request body, and an app uploading 2 MiB with its length declared
            let size = 2 << 20
            let url = upstream.url("/upload")
            var arrivedWhileSending = false
            // When the app has sent 256 KiB, it waits for the upstream to have some before sending the rest
            let answer = try await Self.upload(through: proxy, url, size: size, declared: true) { sent in
                if sent == 256 << 10 { arrivedWhileSending = try await Self.eventually { upstream.uploaded > 0 } }
            }
            // Then the upstream had the first parts while the app was still sending (a held body reaches it only whole)
            #expect(arrivedWhileSending)
            // And it got every byte in order, with the app's Content-Length, and answered
            #expect(answer.head?.status == .ok)
            #expect(answer.body == #"{"bytes":\#(size),"pattern":true,"chunked":false,"length":"\#(size)"}"#)
            // And the log keeps the body's first MiB and its whole size, noted as streamed
            let record = try #require(try await Self.record(of: url, in: proxy))
            let body = try #require(record.requestBody)
            #expect(body.data == StreamingUpstream.pattern(1 << 20) && body.originalSize == size)
            #expect(record.touchedBy.contains { $0.kind == .stream && $0.detail.hasPrefix("The request body, \(size) bytes") })
        }
    }

    @Test("A chunked upload that grows past the limit goes on chunked, what was held first; a small one is held whole")
    func chunkedUploadPastTheLimit() async throws {
        try await withProxy(ProxyConfiguration(port: 0, maximumRequestBodyBytes: 64 << 10), to: try await StreamingUpstream.start(),
                            stop: { await $0.stop() }) { proxy, upstream in
            // Given an app uploading 1 MiB chunked (no length) through a proxy that holds 64 KiB
            let size = 1 << 20
            let answer = try await Self.upload(through: proxy, upstream.url("/upload"), size: size, declared: false)
            // Then the upstream got it whole and in order, chunked
            #expect(answer.body == #"{"bytes":\#(size),"pattern":true,"chunked":true,"length":""}"#)
            // And a chunked upload within the limit is held, and sent with its length
            let small = try await Self.upload(through: proxy, upstream.url("/upload?small"), size: 40 << 10, declared: false)
            #expect(small.body == #"{"bytes":\#(40 << 10),"pattern":true,"chunked":false,"length":"\#(40 << 10)"}"#)
        }
    }

    @Test("An app that gives up an upload past the limit halfway ends that exchange only, logged as cut short; the proxy serves on")
    func uploadGivenUp() async throws {
        try await withProxy(ProxyConfiguration(port: 0, maximumRequestBodyBytes: 64 << 10), to: try await StreamingUpstream.start(),
                            stop: { await $0.stop() }) { proxy, upstream in
            // Given a proxy that holds 64 KiB of a request body, and an app that declares a 4 MiB upload
            let url = upstream.url("/upload?given-up")
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: proxy.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                    }
                }
            // When it sends 256 KiB of it, then closes its connection (a Cancel, a client's timeout)
            try await channel.executeThenClose { _, outbound in
                let fields = HTTPHeaders([("Host", "127.0.0.1:\(upstream.port)"), ("Content-Length", String(4 << 20))])
                try await outbound.write(.head(HTTPRequestHead(version: .http1_1, method: .POST, uri: url, headers: fields)))
                for offset in stride(from: 0, to: 256 << 10, by: 64 << 10) {
                    try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: StreamingUpstream.pattern(64 << 10, from: offset)))))
                }
                _ = try await Self.eventually { upstream.uploaded > 0 }
            }
            // Then the exchange is logged under its URL as the app cutting its body short, and counted so
            let record = try #require(try await Self.record(of: url, in: proxy))
            #expect(record.error?.hasPrefix("Network error for \(url): the app closed its") == true, "\(record.error ?? "no error")")
            #expect(record.error?.hasSuffix("before the end of its request body") == true, "\(record.error ?? "no error")")
            // (marked as a body that never came whole, which Replay does not send as it is)
            #expect(record.touchedBy.contains { $0.kind == .bodyCut && $0.phrase == .bodyCut(received: 256 << 10) }, "\(record.touchedBy)")
            #expect(proxy.meter.snapshot.cutShort == 1)
            // And the proxy (one answer per request: none given over the upstream's failure) serves the next app
            let next = try await Self.upload(through: proxy, upstream.url("/upload"), size: 1000, declared: true)
            #expect(next.head?.status == .ok)
        }
    }

    @Test("An upstream that answers an upload early: the app gets the answer, may send the rest of its body unreset, then the connection closes; the proxy serves on")
    func uploadAnsweredEarly() async throws {
        try await withProxy(ProxyConfiguration(port: 0, maximumRequestBodyBytes: 64 << 10), to: try await StreamingUpstream.start(),
                            stop: { await $0.stop() }) { proxy, upstream in
            // Given an upstream that refuses an upload at its head, and an app that can go on sending after the proxy
            // shuts its side (TCP half-close, as curl and browsers can)
            let url = upstream.url("/refuse")
            let channel = try await Self.halfClosingClient(port: proxy.port)
            // When it starts a 4 MiB upload and reads the answer after its first 128 KiB
            let (answer, restSent) = try await channel.executeThenClose { inbound, outbound in
                let size = 4 << 20
                let fields = HTTPHeaders([("Host", "127.0.0.1:\(upstream.port)"), ("Content-Length", String(size))])
                try await outbound.write(.head(HTTPRequestHead(version: .http1_1, method: .POST, uri: url, headers: fields)))
                try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: StreamingUpstream.pattern(128 << 10)))))
                let answer = try await Self.answer(from: inbound)
                // And then sends the rest of its body
                var sent = 128 << 10
                while sent < size {
                    try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: StreamingUpstream.pattern(64 << 10, from: sent)))))
                    sent += 64 << 10
                }
                try await outbound.write(.end(nil))
                // Then the proxy closes the connection once the body has ended (long before its 5 s at most)
                let closedByProxy = try await Self.eventually { proxy.meter.snapshot.openConnections == 0 }
                #expect(closedByProxy)
                return (answer, sent)
            }
            // And the app got the upstream's 403, told the connection closes, and could send all it meant to
            #expect(answer.head?.status == .forbidden && answer.body == "no uploads here")
            #expect(answer.head?.headers["Connection"] == ["close"])
            #expect(restSent == 4 << 20)
            // And the log says the upstream answered before the upload's end, and that the rest never went
            let refused = try #require(try await proxy.waitForRecord { $0.url.hasSuffix("/refuse") })
            let streamed = try #require(refused.touchedBy.first { $0.kind == .stream }, "\(refused.touchedBy)")
            #expect(streamed.detail.contains("The upstream answered before the end of the request body") && streamed.detail.contains("the rest did not"),
                    "\(streamed.detail)")
            // And the proxy serves the next app, whose whole upload is said to have gone
            let next = try await Self.upload(through: proxy, upstream.url("/upload"), size: 100_000, declared: true)
            #expect(next.head?.status == .ok)
            let uploaded = try #require(try await proxy.waitForRecord { $0.url.hasSuffix("/upload") })
            let whole = try #require(uploaded.touchedBy.first { $0.kind == .stream }, "\(uploaded.touchedBy)")
            #expect(whole.detail.hasPrefix("The request body, 100000 bytes, went to the upstream as the app sent it"), "\(whole.detail)")
        }
    }

    @Test("An answer the proxy makes itself (its setup page, a last hop's OPTIONS) to an upload past the limit waits out the rest of the body, then closes",
          arguments: [("POST", "http://kiosk.proxy/"), ("OPTIONS", "/last-hop")])
    func ownAnswerToAnUpload(method: String, target: String) async throws {
        try await withProxy(ProxyConfiguration(port: 0, maximumRequestBodyBytes: 64 << 10), to: try await StreamingUpstream.start(),
                            stop: { await $0.stop() }) { proxy, upstream in
            let url = target.hasPrefix("/") ? upstream.url(target) : target
            let channel = try await Self.halfClosingClient(port: proxy.port)
            // (Closed after 20 s whatever comes, so that a connection left waiting fails the test rather than hanging it.)
            let raw = channel.channel
            let closer = Task {
                try await Task.sleep(for: .seconds(20))
                try await raw.close()
            }
            defer { closer.cancel() }
            // Given an app sending a 16 MiB body to something the proxy answers itself (never forwarded)
            let size = 16 << 20
            let (answer, restSent, closedByProxy) = try await channel.executeThenClose { inbound, outbound in
                var fields = HTTPHeaders([("Host", URL(string: url)?.host ?? ""), ("Content-Length", String(size))])
                if method == "OPTIONS" { fields.add(name: "Max-Forwards", value: "0") }
                try await outbound.write(.head(HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: url, headers: fields)))
                try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: StreamingUpstream.pattern(128 << 10)))))
                // When it reads the answer and then sends the rest of its body
                let answer = try await Self.answer(from: inbound)
                var sent = 128 << 10
                while sent < size {
                    let part = min(256 << 10, size - sent)
                    try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: StreamingUpstream.pattern(part, from: sent)))))
                    sent += part
                }
                try await outbound.write(.end(nil))
                return (answer, sent, try await Self.eventually { proxy.meter.snapshot.openConnections == 0 })
            }
            // Then the app got the proxy's own answer, told the connection closes; all of its body was read, and the
            // connection closed at its end
            #expect(answer.head?.status == (method == "POST" ? .methodNotAllowed : .ok))
            #expect(answer.head?.headers["Connection"] == ["close"])
            #expect(restSent == size)
            #expect(closedByProxy)
            // And nothing reached the upstream, and the proxy serves the next app
            let next = try await Self.upload(through: proxy, upstream.url("/upload"), size: 1000, declared: true)
            #expect(next.head?.status == .ok)
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
