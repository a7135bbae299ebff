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
/// sends its whole upload before it reads must not wait on its own answers' reading). What comes after a held request
/// (the app's half-close, a parse error of its body) is held behind it, in order: passed first, a half-close would close
/// the connection under the answers still to be written.
final class AnswersTakenFirst: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// What arrived from below while a request was held, in order.
    private enum Held {
        case read(NIOAny)
        case event(Any)
        case error(any Error)
    }

    /// What the app sent, held from a request's head on while the connection was not writable.
    private var held = CircularBuffer<Held>()
    /// Whether a request's head has been handed on and its end not yet: its parts pass.
    private var inRequest = false
    /// Whether a read was asked for while held back.
    private var readWanted = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if held.isEmpty, inRequest || context.channel.isWritable {
            pass(data, context: context)
        } else {
            held.append(.read(data))
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if held.isEmpty { context.fireUserInboundEventTriggered(event) } else { held.append(.event(event)) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if held.isEmpty { context.fireErrorCaught(error) } else { held.append(.error(error)) }
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
        while let first = held.popFirst() { fire(first, context: context) }
        if readWanted { readIfAutomatic(context: context) }
    }

    /// Hands on what is held while the connection can take more, a request at a time, then reads again if asked.
    private func release(context: ChannelHandlerContext) {
        while let first = held.first, inRequest || context.channel.isWritable {
            held.removeFirst()
            fire(first, context: context)
        }
        if held.isEmpty, readWanted, inRequest || context.channel.isWritable {
            readWanted = false
            readIfAutomatic(context: context)
        }
    }

    /// A read asked for while held, asked for now — unless the proxy has since taken reads into its own hands (a
    /// streamed upload it paces with `autoRead`), whose reads are its to ask for.
    private func readIfAutomatic(context: ChannelHandlerContext) {
        guard (try? context.channel.syncOptions?.getOption(.autoRead)) != false else { return }
        context.read()
    }

    private func fire(_ held: Held, context: ChannelHandlerContext) {
        switch held {
        case .read(let data): pass(data, context: context)
        case .event(let event): context.fireUserInboundEventTriggered(event)
        case .error(let error): context.fireErrorCaught(error)
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
