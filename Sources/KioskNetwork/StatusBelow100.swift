import NIOCore
import NIOHTTP1

/// An upstream's answer whose status is below 100 (`HTTP/1.1 099 …`, `:status: 000`), refused before AsyncHTTPClient
/// sees it. NIO's parser reads such an answer as a final one, with a body; AsyncHTTPClient 1.37 takes any status under
/// 200 for an informational answer, ignores its head and then traps on the body or end that follows
/// (HTTPRequestStateMachine.swift:532, 595, 627), ending the whole process. One hostile server must not do that.
struct StatusBelow100: Error, Equatable {
    /// The status the upstream sent.
    let code: UInt

    /// The status as it appeared on the wire: three digits.
    var shown: String { String(repeating: "0", count: max(0, 3 - String(code).count)) + String(code) }

    /// Puts the guard into `channel`'s pipeline right after the handler `parser` finds (the one that makes response
    /// parts), on the channel's loop.
    static func guardAnswers(of channel: any Channel,
                             after parser: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> any ChannelHandler)
        -> EventLoopFuture<Void> {
        let add: @Sendable () throws -> Void = {
            let operations = channel.pipeline.syncOperations
            try operations.addHandler(Guard(), position: .after(try parser(operations)))
        }
        if channel.eventLoop.inEventLoop { return channel.eventLoop.makeCompletedFuture(withResultOf: add) }
        return channel.eventLoop.submit(add)
    }

    /// Passes response parts on, unless an answer's head has a status below 100: then the exchange fails with
    /// `StatusBelow100`, the connection (or HTTP/2 stream) closes, and nothing more of it goes on.
    private final class Guard: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias InboundOut = HTTPClientResponsePart
        private var refused = false

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !refused else { return }
            if case .head(let head) = unwrapInboundIn(data), head.status.code < 100 {
                refused = true
                context.fireErrorCaught(StatusBelow100(code: head.status.code))
                context.close(promise: nil)
                return
            }
            context.fireChannelRead(data)
        }
    }
}
