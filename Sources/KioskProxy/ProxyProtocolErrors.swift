import NIOCore
import NIOHTTP1

/// Answers a request NIO's HTTP/1 decoder could not read with a status and a sentence that say why — 431 for a
/// header section past the limit, 400 for the rest (a version other than HTTP/1.x, HTTP/2 prior knowledge among
/// them: bad input is the app's, and the sentence names the version) — and closes the connection once that is written (the decoder reads nothing more after a parse error, and
/// nothing else closes it: left open, it would wait for the head deadline, or for ever once a head had been handed on
/// before the error, as llhttp does with HTTP/2's preface). In place of NIO's `HTTPServerProtocolErrorHandler`, whose
/// answer is a bare 400; like it, it writes no answer of its own once one has begun, and closes when that one ends.
/// Nor while a request forwarded with its body still arriving (a streamed upload) waits for its answer: an app cutting
/// that body short is a parse error to llhttp, and the request's own answer (its upstream's failure) is its one answer,
/// after which the connection closes. (A held body cut short has no answer coming: that one gets the 400.)
final class ProxyProtocolErrors: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let maximumHeaderBytes: Int
    private let via: String
    private var answering = false
    /// A request forwarded while its body arrives waits for its answer (`AnswerPending`), until that answer ends.
    private var awaitingAnswer = false

    /// Sent down the pipeline by the proxy's handler when it forwards a request whose body is still arriving.
    struct AnswerPending {}
    /// Sent up the pipeline, just before this handler answers a request it could not read to its end (`status`,
    /// `sentence`) and closes the connection: the proxy's handler logs the request so, and writes nothing more.
    struct Answering {
        let error: HTTPParserError
        let status: HTTPResponseStatus
        let sentence: String
    }
    /// A parse error came while an answer was being written: the connection closes once it ends.
    private var closesAfterAnswer = false
    /// An answer said the connection closes (RFC 9112 §9.6): nothing is written after it, whatever the app sent behind its
    /// request — llhttp reads such bytes as an error ("data received after completed connection: close message").
    private var saidClose = false

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
        case .paused:
            return (.badRequest,
                    "Kiosk's proxy speaks HTTP/1.1 and HTTP/1.0; this request is in another version (HTTP/2 without an upgrade?).")
        // llhttp says the same of `HTTP/2.0` and of `HTTP/1.1` ended by a bare LF: both are named.
        case .invalidVersion:
            return (.badRequest,
                    "Kiosk's proxy speaks HTTP/1.1 and HTTP/1.0; this request line names another version, or does not end "
                    + "with CR LF (a bare LF).")
        case .invalidContentLength, .unexpectedContentLength:
            return (.badRequest, "The request's Content-Length is not valid, or comes with Transfer-Encoding (refused: "
                    + "the two could frame the body differently).")
        // llhttp's words for these say where it stopped, not what was wrong.
        case .invalidConstant, .invalidURL, .invalidPath, .invalidQueryString, .invalidFragment:
            return (.badRequest, "The request line is not valid HTTP/1.1: its target has a space, a control character or a "
                    + "byte outside ASCII (percent-encode it: é as %C3%A9), or the line does not end with CR LF.")
        case .lfExpected, .strictModeAssertion, .invalidCharactersUsed:
            return (.badRequest, "The request is not valid HTTP/1.1: a line does not end with CR LF (a lone CR or LF), or "
                    + "has a control character.")
        case .invalidMethod:
            return (.badRequest, "The request's method is not one Kiosk's HTTP/1.1 parser reads (extension methods outside "
                    + "the registered ones, or a method not in capitals).")
        case .invalidChunkSize:
            return (.badRequest, "The request's chunked body has a chunk-size line that is not valid (a space before its "
                    + "extension, a size that is not hex).")
        case .unknown:
            return (.badRequest, "The request is not valid HTTP/1.1: a Transfer-Encoding that does not end in chunked, given "
                    + "twice, or beside a Content-Length; or a line of its chunked body not ended by CR LF.")
        default:
            return (.badRequest, "The request is not valid HTTP/1.1: \(error.debugDescription).")
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        if saidClose {
            // The connection closes once that answer is written (`ProxyHandler.end`).
        } else if answering || awaitingAnswer {
            closesAfterAnswer = true
        } else if context.channel.isActive {
            // (A closed connection has no one to answer: the decoder reads what was left in it as it closes — part of a
            // head when a stopping proxy closed it between requests — and NIO's pipelining handler, once such a stop
            // closed it, ends the process on any write.)
            let (status, sentence) = Self.refusal(for: parserError, maximumHeaderBytes: maximumHeaderBytes)
            // The handlers after this one learn of the answer first, while the connection is open: the proxy's logs the
            // request whose body could not be read as refused here, and writes nothing of its own; the close that follows
            // would otherwise reach it first, as its app giving the body up.
            context.fireUserInboundEventTriggered(Answering(error: parserError, status: status, sentence: sentence))
            let text = sentence + "\n"
            let headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(text.utf8.count)),
                                       ("Cache-Control", "no-store"), ("Connection", "close"), ("Via", via)])
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: text)))), promise: nil)
            let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
        context.fireErrorCaught(error)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is AnswerPending else { return context.triggerUserOutboundEvent(event, promise: promise) }
        awaitingAnswer = true
        promise?.succeed(())
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.code >= 200:
            answering = true
            if !head.isKeepAlive { saidClose = true }
        case .end where closesAfterAnswer:
            answering = false
            awaitingAnswer = false
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.cascade(to: promise)
            context.writeAndFlush(data, promise: written)
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            return
        case .end:
            answering = false
            awaitingAnswer = false
        default: break
        }
        context.write(data, promise: promise)
    }
}

/// Watches the first request line of a connection, ahead of NIO's HTTP handlers, for one without a version (`GET /`, as
/// HTTP/0.9 and a hand-typed request send it): llhttp then waits for header lines that never come, and the app for an
/// answer until the head's deadline. Such a line is answered here, a 400 written as bytes (no request reached the HTTP
/// handlers, which hold no answer to give), and the connection closed. The bytes pass on untouched as they come; the
/// watcher leaves once the first line has ended.
final class VersionlessRequestLine: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let via: String
    /// Spaces seen in the line so far, and whether any other byte was (empty lines before a request are allowed).
    private var spaces = 0
    private var started = false

    init(via: String) {
        self.via = via
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        // A TLS handshake record (0x16) where a request line starts: the app was given the proxy as https:// (a common
        // HTTPS_PROXY=https://… slip), which llhttp would call a bad method.
        if !started, buffer.readableBytesView.first(where: { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }) == 0x16 {
            return refuse(context, "Kiosk's proxy speaks plain HTTP, and this connection began a TLS handshake: give the proxy as "
                          + "http://host:port (HTTPS_PROXY=http://…, not https://); HTTPS goes inside its CONNECT.")
        }
        var ended = false
        buffer.withUnsafeReadableBytes { bytes in
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\n") where started: ended = true
                case UInt8(ascii: "\n"), UInt8(ascii: "\r"): break
                case UInt8(ascii: " "): spaces += 1
                default: started = true
                }
                if ended { break }
            }
        }
        guard ended else { return context.fireChannelRead(data) }
        // A method alone (`CONNECT`, typed by hand): llhttp would call it a bad method, though it knows it.
        if spaces == 0 {
            return refuse(context, "This request line is a method alone: write it as METHOD target HTTP/1.1 (CONNECT takes host:port, "
                          + "as CONNECT example.com:443 HTTP/1.1).")
        }
        guard spaces == 1 else {
            context.fireChannelRead(data)
            // Once what it read is passed on: a handler that left hands nothing on.
            return context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        // The decoder holds the line's start and would wait on; it is given nothing more.
        refuse(context, "Kiosk's proxy speaks HTTP/1.1 and HTTP/1.0; this request line names no version (HTTP/0.9, or a line cut "
               + "short): write it as METHOD target HTTP/1.1.")
    }

    /// Answers `sentence` in a 400 written as bytes, and closes the connection.
    private func refuse(_ context: ChannelHandlerContext, _ sentence: String) {
        let text = sentence + "\n"
        let answer = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(text.utf8.count)\r\nCache-Control: no-store\r\nConnection: close\r\nVia: \(via)\r\n\r\n" + text
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: answer)))
            .assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
