public import NIOCore
public import NIOHTTP1
public import NIOHTTPTypes

/// The request and response parts a `RequestHeadDeadline` watches: which part starts a request, which ends its
/// answer. Hummingbird's listeners speak swift-http-types' parts, the proxy NIO's own (which keep the request
/// line's absolute URI).
public protocol HTTPExchangeParts {
    associatedtype RequestPart
    associatedtype ResponsePart
    static func isHead(_ part: RequestPart) -> Bool
    static func isEnd(_ part: ResponsePart) -> Bool
}

/// swift-http-types' parts (Hummingbird).
public enum HTTPTypesParts: HTTPExchangeParts {
    public static func isHead(_ part: HTTPRequestPart) -> Bool { if case .head = part { true } else { false } }
    public static func isEnd(_ part: HTTPResponsePart) -> Bool { if case .end = part { true } else { false } }
}

/// NIO's HTTP/1 server parts (the proxy).
public enum NIOHTTP1Parts: HTTPExchangeParts {
    public static func isHead(_ part: HTTPServerRequestPart) -> Bool { if case .head = part { true } else { false } }
    public static func isEnd(_ part: HTTPServerResponsePart) -> Bool { if case .end = part { true } else { false } }
}

/// Closes a connection that has not delivered a whole request head within `timeout` of opening (TLS
/// handshake included) or of its previous answer: a peer cannot hold a connection open for long by sending
/// nothing, or a header a line at a time (slowloris). Hummingbird's idle timeout restarts with every part of
/// a request decoded, so alone it lets such a peer stay for as long as it keeps a part coming. A request being
/// answered (a long download, a live event stream) is not timed.
public final class RequestHeadDeadline<Parts: HTTPExchangeParts>: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = Parts.RequestPart
    public typealias InboundOut = Parts.RequestPart
    public typealias OutboundIn = Parts.ResponsePart
    public typealias OutboundOut = Parts.ResponsePart

    private let timeout: TimeAmount
    /// When the head now awaited must have arrived; nil while a request is being answered.
    private var deadline: NIODeadline?
    /// The one timer of the connection, if scheduled: it is moved on rather than cancelled and made again for
    /// each request, which would cost a scheduling and a cancellation on the event loop per request.
    private var timer: Scheduled<Void>?
    /// Requests whose head arrived and whose answer has not ended.
    private var open = 0

    /// A deadline of `timeout` for each request head.
    public init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startWaiting(context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        startWaiting(context)
        context.fireChannelActive()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if Parts.isHead(unwrapInboundIn(data)) {
            open += 1
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if Parts.isEnd(unwrapOutboundIn(data)) {
            open = max(0, open - 1)
            if open == 0 { startWaiting(context) }
        }
        context.write(data, promise: promise)
    }

    /// Starts awaiting a head: by `timeout` from now.
    private func startWaiting(_ context: ChannelHandlerContext) {
        deadline = .now() + timeout
        if timer == nil { schedule(context, at: deadline!) }
    }

    /// When the timer fires: closes the connection if the head is late, else waits for the deadline now in
    /// force (a later one, or none while a request is answered, until the next wait starts it again).
    private func fire(_ context: ChannelHandlerContext) {
        timer = nil
        guard let deadline else { return }
        if deadline <= .now(), !context.channel.isWritable {
            // An answer is still being taken (a slow reader, or requests pipelined behind it and held until it is: see
            // the proxy's AnswersTakenFirst): the wait for the next head starts once the connection can take more.
            self.deadline = .now() + timeout
            schedule(context, at: self.deadline!)
        } else if deadline <= .now() {
            context.close(promise: nil)
        } else {
            schedule(context, at: deadline)
        }
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            let (handler, context) = loopBound.value
            handler.fire(context)
        }
    }

    private func stop() {
        timer?.cancel()
        timer = nil
        deadline = nil
    }
}
