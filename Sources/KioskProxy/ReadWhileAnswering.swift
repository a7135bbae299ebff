import NIOCore
import NIOHTTP1

/// Keeps an app's connection asking for reads while the proxy answers its one request, so that a keep-alive app
/// costs no epoll_ctl(2) per exchange; below NIO's pipelining handler, which holds every read back until the answer
/// ends.
///
/// Why: NIO stops watching a socket for reads whenever a read is done and none was asked for again, and the pipelining
/// handler asks for none while an answer is pending — so each exchange took read interest off the app's socket and put
/// it back when the answer ended: two system calls, ~2% of a proxy's CPU under load. An app that waits for its answer
/// sends nothing meanwhile, so reading on costs nothing; one that pipelines has what it sends read once more and held by
/// the pipelining handler (one socket read's worth at most: no read is asked for once the next request has begun), as
/// before. A request whose body is still arriving is left alone: its reads are the proxy's to pace (`autoRead`). So is
/// a CONNECT or a request to switch protocols: the parser reads no request after one, and what the app sends next (a TLS
/// hello, WebSocket frames) would pile up in the decoder's buffer while the upstream is dialled, not paced by the tunnel.
final class ReadWhileAnswering: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// Requests begun (their head read) whose answers have not ended.
    private var open = 0
    /// Whether the last request begun has been read to its end.
    private var lastEnded = false
    /// Whether the last request begun asks for a tunnel or another protocol: nothing is read on behind it.
    private var lastSwitches = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            open += 1
            lastEnded = false
            // Any `Upgrade` field counts, named in `Connection` (where the parser stops) or not: a rare request, not worth
            // telling apart.
            lastSwitches = head.method == .CONNECT || head.headers.contains(name: "Upgrade")
        case .body:
            break
        case .end:
            lastEnded = true
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.fireChannelReadComplete()
        // Exactly one request, read whole, waiting for its answer: read on (see above). NIO then finds a read asked for
        // and leaves the socket watched; the read the pipelining handler holds back changes nothing when it comes.
        guard open == 1, lastEnded, !lastSwitches, context.channel.isActive, context.channel.isWritable,
              (try? context.channel.syncOptions?.getOption(.autoRead)) == true else { return }
        context.read()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // Informational heads (100 Continue) come without an end: only a final answer's end closes a request.
        if case .end = unwrapOutboundIn(data), open > 0 { open -= 1 }
        context.write(data, promise: promise)
    }
}
