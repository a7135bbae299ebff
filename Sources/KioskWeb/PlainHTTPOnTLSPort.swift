import HummingbirdCore
import KioskCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL

/// A TLS listener (`serve --lan`) that answers plain HTTP with a 400 naming the address to use instead: a phone given
/// `192.168.1.5:8443`, or `http://` typed by habit, otherwise sees an empty reply (the TLS handler drops what is not a
/// handshake), which says nothing of why (nginx answers the same slip with "The plain HTTP request was sent to HTTPS
/// port"). The address offered is the listener's own, never the request's `Host`, which no policy has judged here.
struct PlainHTTPAnswered<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // Ahead of the TLS handler the base adds, so the first bytes are read before it does.
            try channel.pipeline.syncOperations.addHandler(PlainHTTPOnTLSPort())
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 in TLS, as Hummingbird's `.tls(.http1(configuration:))`, with plain HTTP answered (`PlainHTTPAnswered`).
    static func tlsAnsweringPlainHTTP(_ http1: HTTP1Channel.Configuration, tlsConfiguration: TLSConfiguration) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            PlainHTTPAnswered(base: try TLSChannel(HTTP1Channel(responder: responder, configuration: http1),
                                                   tlsConfiguration: tlsConfiguration))
        }
    }
}

/// Reads a connection's first bytes ahead of the TLS handler: a TLS record (0x16) or anything else that is not a
/// letter passes on untouched and the watcher leaves; a letter (a request line's method, as no TLS record begins)
/// is answered with a 400 written as bytes. The rest of the request is read and dropped while the answer goes, and the
/// connection is closed for writing, then whole: closed with the request unread, it would be reset, the 400 lost.
final class PlainHTTPOnTLSPort: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Whether the 400 was written: what comes after is the same plain request's, dropped.
    private var answered = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        guard let first = unwrapInboundIn(data).readableBytesView.first else { return context.fireChannelRead(data) }
        guard (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else {
            context.fireChannelRead(data)
            // Once what it read is passed on: a handler that left hands nothing on.
            return context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        answered = true
        let address = Self.httpsAddress(context.channel.localAddress)
        let text = "This address speaks HTTPS: open \(address)\nEsta dirección usa HTTPS: abre \(address)\n"
        let answer = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(text.utf8.count)\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n" + text
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: answer)))
            .assumeIsolated().whenComplete { _ in
                context.close(mode: .output, promise: nil)
                // A client that never closes its side is not waited for long.
                channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
            }
    }

    /// `https://` and the listener's own address and port: an IPv4 address as itself even on a dual-stack socket (which
    /// reports `::ffff:a.b.c.d`, no address a certificate names), an IPv6 one in brackets, its zone left out.
    static func httpsAddress(_ local: SocketAddress?) -> String {
        guard let local, let text = local.ipAddress, let port = local.port else { return "https://" }
        let ip = IPAddress(literal: text)?.unmapped.description ?? String(text.split(separator: "%").first ?? "")
        let host = ip.contains(":") ? "[\(ip)]" : ip
        return port == 443 ? "https://\(host)/" : "https://\(host):\(port)/"
    }
}
