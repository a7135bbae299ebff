public import NIOCore
public import NIOHTTPTypes

/// Closes a connection that has not delivered a whole request head within `timeout` of opening (TLS
/// handshake included) or of its previous answer: a peer cannot hold a connection open for long by sending
/// nothing, or a header a line at a time (slowloris). Hummingbird's idle timeout restarts with every part of
/// a request decoded, so alone it lets such a peer stay for as long as it keeps a part coming. A request being
/// answered (a long download, a live event stream) is not timed.
public final class RequestHeadDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart
    public typealias OutboundIn = HTTPResponsePart
    public typealias OutboundOut = HTTPResponsePart

    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?
    /// Requests whose head arrived and whose answer has not ended.
    private var open = 0

    /// A deadline of `timeout` for each request head.
    public init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            open += 1
            disarm()
        }
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            open = max(0, open - 1)
            if open == 0 { arm(context) }
        }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext) {
        disarm()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            loopBound.value.close(promise: nil)
        }
    }

    private func disarm() {
        timer?.cancel()
        timer = nil
    }
}
