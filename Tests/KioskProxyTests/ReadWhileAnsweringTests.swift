@testable import KioskProxy
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@Suite("An app's connection stays watched for reads while the proxy answers it")
struct ReadWhileAnsweringTests {
    /// Counts the reads that reach the socket (the head of the pipeline) from the handlers above it.
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = Any
        var reads = 0
        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    /// The proxy's order: the counter where the socket is, then the handler, then NIO's pipelining handler, which holds
    /// every read back while an answer is pending.
    private func channel() throws -> (EmbeddedChannel, ReadCounter) {
        let counter = ReadCounter()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers([counter, ReadWhileAnswering(), HTTPServerPipelineHandler()])
        // Active, as an app's accepted connection is.
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        // Counted from here: becoming active asked for the first read.
        counter.reads = 0
        return (channel, counter)
    }

    /// A request's parts as one socket read hands them on (the read's completion is the test's to fire).
    private func request(_ channel: EmbeddedChannel, ended: Bool = true, method: HTTPMethod = .GET, uri: String = "/a",
                         headers: HTTPHeaders = [:]) throws {
        let operations = channel.pipeline.syncOperations
        operations.fireChannelRead(NIOAny(HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: method, uri: uri,
                                                                                      headers: headers))))
        if ended { operations.fireChannelRead(NIOAny(HTTPServerRequestPart.end(nil))) }
    }

    private func answer(_ channel: EmbeddedChannel) throws {
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
    }

    @Test("A request read whole while its answer is pending leaves a read asked of the socket, which the pipelining handler would hold back")
    func readsOnWhileAnswering() throws {
        // Given a request read whole, its answer not yet written
        let (channel, counter) = try channel()
        try request(channel)
        // When the socket's read completes, and the channel asks for the next read as autoRead does
        channel.pipeline.syncOperations.fireChannelReadComplete()
        channel.pipeline.syncOperations.read()
        // Then one read reached the socket: NIO keeps it watched, no epoll_ctl(2) to take read interest off and back
        #expect(counter.reads == 1)
        // And once the answer ends, the read the pipelining handler held back passes as before
        try answer(channel)
        #expect(counter.reads == 2)
        _ = try channel.finish()
    }

    @Test("Once the app has sent a next request (pipelined), nothing more is read until the first is answered")
    func pipelinedRequestStopsReading() throws {
        // Given a request read whole and a second one, whole too, behind it
        let (channel, counter) = try channel()
        try request(channel)
        try request(channel)
        // When the read completes
        channel.pipeline.syncOperations.fireChannelReadComplete()
        channel.pipeline.syncOperations.read()
        // Then no read is asked: what the app sends is held back by the kernel, not by the proxy's memory
        #expect(counter.reads == 0)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test("A request whose body is still arriving is not read on by this handler: its reads are the proxy's to pace")
    func bodyStillArriving() throws {
        // Given a request's head, its body still to come
        let (channel, counter) = try channel()
        try request(channel, ended: false)
        // When the read completes
        channel.pipeline.syncOperations.fireChannelReadComplete()
        // Then the handler itself asked for nothing
        #expect(counter.reads == 0)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test("Behind a CONNECT or a request to switch protocols nothing is read on: what the app sends next waits in the kernel while the upstream is dialled",
          arguments: [(HTTPMethod.CONNECT, "a.test:443", HTTPHeaders()),
                      (.GET, "/chat", HTTPHeaders([("Upgrade", "websocket"), ("Connection", "Upgrade")])),
                      (.GET, "/", HTTPHeaders([("Upgrade", "h2c"), ("Connection", "Upgrade, HTTP2-Settings")]))])
    func noReadBehindASwitch(method: HTTPMethod, uri: String, headers: HTTPHeaders) throws {
        // Given such a request read whole, its answer (the tunnel, the upstream's 101) not yet begun
        let (channel, counter) = try channel()
        try request(channel, method: method, uri: uri, headers: headers)
        // When the read completes
        channel.pipeline.syncOperations.fireChannelReadComplete()
        // Then the handler asked for nothing: the parser would read no request in what follows, and buffer all of it
        #expect(counter.reads == 0)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test("An informational head (100 Continue) does not count as the answer's end")
    func informationalHeadIsNotTheEnd() throws {
        // Given a request answered so far by a 100 Continue only
        let (channel, counter) = try channel()
        try request(channel)
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .continue)))
        // When the read completes
        channel.pipeline.syncOperations.fireChannelReadComplete()
        // Then the request is still the one awaiting its answer, and the socket is still read
        #expect(counter.reads == 1)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }
}
