import NIOCore
import NIOHTTP1

/// Holds an app's next request back while the answers before it wait in the connection unsent (the channel not
/// writable), and asks for no more of what the app sends meanwhile; above NIO's pipelining handler, which hands on the
/// next request as soon as the last answer's end is written, however much of it the app has yet to take.
///
/// Why: an app that pipelines requests and never reads (a broken client, or a hostile one) had each of its requests
/// answered into the connection's outbound buffer: 80,000 answers of 60 KB took the proxy to 5 GB, not given back when
/// the app left. With the gate the answers waiting for one app are one buffer's worth (NIO's high-water mark) and the
/// answer being written. Only between requests: a request whose head has passed has its body passed too (an app that
/// sends its whole upload before it reads must not wait on its own answers' reading).
final class AnswersTakenFirst: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// What the app sent, held from a request's head on while the connection was not writable.
    private var held = CircularBuffer<NIOAny>()
    /// Whether a request's head has been handed on and its end not yet: its parts pass.
    private var inRequest = false
    /// Whether a read was asked for while held back.
    private var readWanted = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if held.isEmpty, inRequest || context.channel.isWritable {
            pass(data, context: context)
        } else {
            held.append(data)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        context.fireChannelWritabilityChanged()
        guard context.channel.isWritable else { return }
        release(context: context)
    }

    func read(context: ChannelHandlerContext) {
        guard held.isEmpty, inRequest || context.channel.isWritable else {
            readWanted = true
            return
        }
        context.read()
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Nothing held can be answered now; what it held is let go with the connection.
        held.removeAll()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Leaving HTTP (a CONNECT's tunnel) happens within a request handed on, so nothing is held then; were anything,
        // it goes on rather than being lost.
        while let data = held.popFirst() { context.fireChannelRead(data) }
        if readWanted { context.read() }
    }

    /// Hands on what is held while the connection can take more, a request at a time, then reads again if asked.
    private func release(context: ChannelHandlerContext) {
        while let first = held.first, inRequest || context.channel.isWritable {
            held.removeFirst()
            pass(first, context: context)
        }
        if held.isEmpty, readWanted, inRequest || context.channel.isWritable {
            readWanted = false
            context.read()
        }
    }

    private func pass(_ data: NIOAny, context: ChannelHandlerContext) {
        switch unwrapInboundIn(data) {
        case .head: inRequest = true
        case .body: break
        case .end: inRequest = false
        }
        context.fireChannelRead(data)
    }
}
