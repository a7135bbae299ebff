public import NIOCore
import KioskCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Makes a request whose target is in absolute form (`GET http://name/path HTTP/1.1`) name, in `Host`, the host its
/// target names. RFC 9112 §3.2.2: a server given such a target uses its authority and ignores `Host`. Hummingbird's
/// conversion to swift-http-types keeps `Host` and drops the target's authority, so a listener judging `Host` alone
/// would answer a request for `http://rebound.example/` sent with `Host: 127.0.0.1` as one for its own name. With the
/// authority moved into `Host` before the conversion, the listener's policy (`GuardedResponder`) judges the name
/// asked for. A request with no `Host`, or several, keeps them: HTTP/1.1 refuses it either way (400).
///
/// It also says, in the one spelling Hummingbird reads (`Connection: close`, the whole field), that a request does not
/// keep its connection: an HTTP/1.0 request without `keep-alive` (the version is gone after the conversion, and
/// Hummingbird would wait for a next request until the idle deadline while the client waits for the close that ends
/// its answer), or `close` among other tokens or in capitals (RFC 9110 §7.6.1: tokens are case-insensitive).
final class AbsoluteFormHost: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        var changed = false
        if let authority = ListenerPolicy.authority(ofTarget: head.uri), head.headers["Host"].count == 1 {
            head.headers.replaceOrAdd(name: "Host", value: authority)
            changed = true
        }
        // NIO's reading: HTTP/1.1 keeps alive unless a token says close, HTTP/1.0 closes unless one says keep-alive.
        if !head.isKeepAlive, head.headers["Connection"] != ["close"] {
            head.headers.replaceOrAdd(name: "Connection", value: "close")
            changed = true
        }
        context.fireChannelRead(changed ? wrapInboundOut(.head(head)) : data)
    }
}

/// Puts an `AbsoluteFormHost` ahead of Hummingbird's HTTP/1 conversion when a listener's channel is set up, for
/// `HTTP1Channel.Configuration.additionalChannelHandlers`: Hummingbird adds those after the conversion, where a target's
/// authority is already gone. Without that conversion in the pipeline (another server), adding it fails the channel's
/// setup rather than leave the listener judging `Host` alone.
public final class AbsoluteFormHostInstaller: ChannelInboundHandler, RemovableChannelHandler {
    /// Whatever comes, passed on (NIO's default) in the moment before it goes: a pipeline's handlers must be inbound or
    /// outbound.
    public typealias InboundIn = NIOAny

    public init() {}

    public func handlerAdded(context: ChannelHandlerContext) {
        let operations = context.pipeline.syncOperations
        do {
            let conversion = try operations.handler(type: HTTP1ToHTTPServerCodec.self)
            try operations.addHandler(AbsoluteFormHost(), position: .before(conversion))
            operations.removeHandler(context: context, promise: nil)
        } catch {
            context.fireErrorCaught(error)
            context.close(promise: nil)
        }
    }
}
