import NIOCore
import NIOHTTP1

/// Answers a request NIO's HTTP/1 decoder could not read with a status and a sentence that say why — 431 for a
/// header section past the limit, 505 for a version other than HTTP/1.x (HTTP/2 prior knowledge), 400 for the
/// rest — and the connection closes (the decoder cannot go on after a parse error). In place of NIO's
/// `HTTPServerProtocolErrorHandler`, whose answer is a bare 400; like it, it writes nothing once an answer has begun.
final class ProxyProtocolErrors: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let maximumHeaderBytes: Int
    private let via: String
    private var answering = false

    init(maximumHeaderBytes: Int, via: String) {
        self.maximumHeaderBytes = maximumHeaderBytes
        self.via = via
    }

    /// The status and sentence for a request that failed to parse with `error`.
    static func refusal(for error: HTTPParserError, maximumHeaderBytes: Int) -> (HTTPResponseStatus, String) {
        switch error {
        case .headerOverflow:
            return (.requestHeaderFieldsTooLarge,
                    "The request's header section is larger than the proxy's limit of \(maximumHeaderBytes / 1024) KB.")
        // llhttp pauses at HTTP/2's connection preface ("PRI * HTTP/2.0"), which is how prior knowledge starts.
        case .invalidVersion, .paused:
            return (.httpVersionNotSupported,
                    "Kiosk's proxy speaks HTTP/1.1 and HTTP/1.0; this request is in another version (HTTP/2 without an upgrade?).")
        case .invalidContentLength, .unexpectedContentLength:
            return (.badRequest, "The request's Content-Length is not valid, or comes with Transfer-Encoding (refused: "
                    + "the two could frame the body differently).")
        default:
            return (.badRequest, "The request is not valid HTTP/1.1: \(error.debugDescription).")
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        // The decoder closes the connection right after this returns: the answer is written now or never.
        if !answering {
            let (status, sentence) = Self.refusal(for: parserError, maximumHeaderBytes: maximumHeaderBytes)
            let text = sentence + "\n"
            let headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(text.utf8.count)),
                                       ("Cache-Control", "no-store"), ("Connection", "close"), ("Via", via)])
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: text)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.code >= 200: answering = true
        case .end: answering = false
        default: break
        }
        context.write(data, promise: promise)
    }
}
