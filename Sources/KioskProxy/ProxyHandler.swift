import Foundation
import KioskCore
import KioskListener
import KioskNetwork
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS

/// One client connection of the proxy: reads a request (head, body up to the limit), answers it itself when it
/// cannot be forwarded (a bad target, a loop, a body too large), else forwards it and writes the answer. NIO's
/// pipelining handler before it hands over one request at a time; the upstream exchange runs as a task, cancelled
/// if the client goes away. A CONNECT turns the connection into a tunnel to its target: the HTTP handlers leave
/// and the bytes pass untouched both ways.
final class ProxyHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State {
        case idle
        /// Reading a request's body, held until its end (up to the limit) as the parts it came in, and their size: one
        /// growing buffer would be copied at every doubling, and hold twice the limit at the last. With a held-bodies
        /// budget, the size is what is counted against it.
        case receiving(HTTPRequestHead, CircularBuffer<ByteBuffer>, Int)
        /// Waiting for the upstream's answer (a streamed upload's body may still be arriving: `upload`).
        case forwarding
    }

    /// What every connection of a proxy shares.
    struct Settings: Sendable {
        let configuration: ProxyConfiguration
        let forward: @Sendable (HTTPRequest) async throws -> HTTPResponse
        /// The outbound policy, for what the proxy dials itself (a tunnel, a protocol switch): throws the refusal.
        let vet: @Sendable (URL, Bool) async throws -> CheckedAddresses
        /// TLS to an upstream the proxy dials itself (a `wss` switch): the system's roots and `--upstream-ca`'s.
        let upstreamTLS: NIOSSLContext?
        let via: String
        let loop: LoopGuard
        let boundPort: @Sendable () -> Int
        let onTunnel: @Sendable (TunnelSummary) -> Void
        let onCutShort: @Sendable (HTTPRequest, KioskError, Duration) -> Void
    }

    /// Where a listener's origin-form requests go: inside an intercepted CONNECT, its host and port over HTTPS;
    /// on a reverse listener, its upstream URL (and `Host` and redirects are rewritten both ways).
    struct Origin: Sendable {
        let base: URL
        let isReverse: Bool
    }

    private let settings: Settings
    /// Nil on the forward proxy's listener; the intercepted CONNECT's target inside one; a reverse listener's upstream.
    private let origin: Origin?
    private var state = State.idle
    /// The request could not be read to its end (a malformed body) and `ProxyProtocolErrors` answered it: nothing more is
    /// written on the connection, which closes (a second answer ends the process in NIO's pipelining handler).
    private var answeredAsUnreadable = false
    private var inFlight: Task<Void, Never>?
    /// The streamed answer being passed to the app, told why it stops when the connection goes (see `pass`).
    private var passing: BodyStream?
    /// Whether the client is on another machine (its requests then go out as `.proxiedForNetwork`).
    private var remoteClient = true
    /// The connection's event loop as a task executor: its exchanges run there (see `EventLoopTaskExecutor`).
    private var executor: EventLoopTaskExecutor?
    /// Whether the rest of an upload answered early is being read and dropped before the connection closes.
    private var draining = false
    /// Whether the app half-closed its connection (`nc -N`, a shell's `printf | socat`): it sends nothing more, but its
    /// request is answered, and the connection closes after that answer.
    private var inputClosed = false
    /// The app's side of the exchange awaiting its answer, closed when the app closes its side meanwhile.
    private var awaited: AppSide?
    /// A body larger than the limit, passing to the upstream as the app sends it, until its end: the pipe to the
    /// upstream's side, what arrived and is not handed over yet, whether the app's body has ended, and the request's URL
    /// (redacted) for the errors that end it.
    private var upload: (pipe: BodyPipe, backlog: CircularBuffer<ByteBuffer>, ended: Bool, url: String)?
    /// When the head of the request being read came: how long an app took before it gave up its body.
    private var headArrived = ContinuousClock.now
    /// When the app's request body must next have sent something: the head's timeout after its last part (nil when no
    /// body is awaited). An app that stops sending its body would otherwise hold its connection, and its place among
    /// the connections the listener holds, for ever.
    private var bodyDeadline: NIODeadline?
    /// Whether the request being read stops NIO's parser at its end though the proxy stays in HTTP (`resumeParsing`).
    private var parserStops = false
    /// Whether NIO's parser stopped after the request being answered, which asked for a switch the proxy would pass on:
    /// when the proxy answers it itself instead (its setup page, a refusal, a failed dial), `end` gives the connection a
    /// fresh parser, or the app's next request on it would never be read.
    private var awaitsSwitch = false
    /// Whether the app stopped sending a streamed upload's body partway (`checkBody`): the answer to it closes the
    /// connection, whose unread rest of that body would otherwise stand between the app and its next request.
    private var bodyAbandoned = false
    /// Whether an answer that closes the connection was written: a request pipelined behind it is read no further and
    /// never sent upstream (RFC 9112 §9.6), though NIO's pipelining handler hands it on once that answer has ended.
    private var closing = false
    /// The one timer watching `bodyDeadline`, moved on rather than made again for every part.
    private var bodyTimer: Scheduled<Void>?
    private var maximumBodyBytes: Int { settings.configuration.maximumRequestBodyBytes }
    private var via: String { settings.via }
    private var loop: LoopGuard { settings.loop }

    private init(settings: Settings, origin: Origin?) {
        self.settings = settings
        self.origin = origin
    }

    /// NIO's HTTP/1 server handlers and a proxy handler, for the proxy's listener (`origin` nil) or for what an app
    /// sends inside an intercepted CONNECT. Put together here rather than with `configureHTTPServerPipeline` so
    /// that the decoder hands on the bytes an app sends right after its CONNECT (a TLS hello) when it leaves.
    static func httpHandlers(_ settings: Settings, origin: Origin?) -> [any ChannelHandler] {
        return [
            VersionlessRequestLine(via: settings.via),
            // Framing is the proxy's (`ProxyMessages.responseHead`): the encoder, not told which request an answer is
            // for, would give a HEAD's answer that declares no length a chunked body's last chunk (`0`), which an app
            // reads as the start of the next answer.
            HTTPResponseEncoder(configuration: Self.encoderConfiguration),
            requestDecoder(settings),
            ReadWhileAnswering(),
            HTTPServerPipelineHandler(),
            AnswersTakenFirst(),
            NIOHTTPResponseHeadersValidator(),
            ProxyProtocolErrors(maximumHeaderBytes: settings.configuration.maximumHeaderBytes, via: settings.via),
            RequestHeadDeadline<NIOHTTP1Parts>(timeout: TimeAmount(settings.configuration.requestHeadTimeout)),
            ProxyHandler(settings: settings, origin: origin),
        ]
    }

    /// NIO's request parser with the proxy's limits, handing on what follows a request the proxy leaves HTTP after (a
    /// CONNECT, a protocol switch) when it is removed.
    private static func requestDecoder(_ settings: Settings) -> ByteToMessageHandler<HTTPRequestDecoder> {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderListSize = settings.configuration.maximumHeaderBytes
        limits.maxHeaderFieldSize = settings.configuration.maximumHeaderBytes
        return ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes, informationalResponseStrategy: .drop,
                                                       limitConfiguration: limits))
    }

    /// Whether NIO's parser reads no further request after this one (llhttp waits for the switch a request with `Upgrade`
    /// named in `Connection` asks for) though the proxy answers it over HTTP/1.1: `h2c`, which the proxy does not pass on.
    private static func parserStopsUnswitched(_ head: HTTPRequestHead) -> Bool {
        stopsParser(head) && ProxyMessages.upgrade(of: head) == nil
    }

    /// Whether NIO's parser reads no further request after this one: llhttp waits for the switch any request with
    /// `Upgrade` named in `Connection` asks for.
    private static func stopsParser(_ head: HTTPRequestHead) -> Bool {
        head.method != .CONNECT && head.headers.contains(name: "Upgrade") && ProxyMessages.namesUpgrade(head)
    }

    /// Gives the connection a fresh parser in place of one that stopped after a switch the proxy does not make (see
    /// `parserStopsUnswitched`), handed whatever the app sent after that request: without it the app's next request on
    /// its kept-alive connection (curl `--http2` asking for two URLs of a plain http:// origin) was never read.
    private func resumeParsing(context: ChannelHandlerContext) {
        let operations = context.pipeline.syncOperations
        guard let stopped = try? operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self) else { return }
        do {
            try operations.addHandler(Self.requestDecoder(settings), position: .after(stopped))
            operations.removeHandler(stopped, promise: nil)
        } catch {
            context.close(promise: nil)
        }
    }

    /// The response encoder's settings: framing fields written as the proxy sets them, never added.
    private static let encoderConfiguration: HTTPResponseEncoder.Configuration = {
        var configuration = HTTPResponseEncoder.Configuration()
        configuration.automaticallySetFramingHeaders = false
        return configuration
    }()

    func handlerAdded(context: ChannelHandlerContext) {
        executor = EventLoopTaskExecutor(context.eventLoop)
        remoteClient = !settings.configuration.isLocalPeer(context.channel.remoteAddress?.ipAddress.flatMap(IPAddress.init(literal:)))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // (What an upload answered early still sends goes on to `read`, which drops it and closes at its end.)
        if closing && !draining && upload == nil { return }
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let head):
            if head.headers.contains(name: "Transfer-Encoding") || (head.headers.first(name: "Content-Length").flatMap(Int.init) ?? 0) > 0 {
                awaitBody(context)
            }
            parserStops = Self.parserStopsUnswitched(head)
            awaitsSwitch = Self.stopsParser(head) && !parserStops
        case .body:
            if bodyDeadline != nil { bodyDeadline = .now() + bodySilence }
        case .end:
            bodyDeadline = nil
            if parserStops {
                parserStops = false
                resumeParsing(context: context)
            }
        }
        read(part, context: context)
    }

    private func read(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let head):
            headArrived = .now
            // A length past what a machine counts (2^63 and more, which NIO's parser takes) is no length to wait for.
            if let length = head.headers.first(name: "Content-Length"), Int(length.trimmingCharacters(in: .whitespaces)) == nil {
                state = .forwarding
                return write(ProxyMessages.Refusal(.badRequest, "The request's Content-Length is not a length Kiosk can count: "
                                                   + "\(length.prefix(30)).", closes: true), to: head, context: context)
            }
            // NIO's parser limits the fields' names and values: the head as sent, separators and request line included, is
            // held to the same limit here (a 431, as NIO's is).
            if head.uri.utf8.count + head.headers.sectionSize + 16 > settings.configuration.maximumHeaderBytes {
                state = .forwarding
                let (status, sentence) = ProxyProtocolErrors.refusal(for: .headerOverflow, maximumHeaderBytes: settings.configuration.maximumHeaderBytes)
                return write(ProxyMessages.Refusal(status, sentence, closes: true), to: head, context: context)
            }
            let declared = head.headers.first(name: "Content-Length").flatMap(Int.init)
            // The app waits for a go-ahead before sending its body (curl does for large ones): give it — never to an
            // HTTP/1.0 app, which knows no interim answer and would read it as the answer (RFC 9110 §15.2).
            if head.version != .http1_0, head.headers["Expect"].contains(where: { $0.lowercased() == "100-continue" }) {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))),
                                      promise: nil)
            }
            // A body declared larger than the limit goes to the upstream as it comes, from now on.
            if let declared, declared > maximumBodyBytes {
                return streamUpload(head, first: [], context: context)
            }
            state = .receiving(head, [], 0)
        case .body(let chunk):
            if upload != nil {
                upload?.backlog.append(chunk)
                return feed(context)
            }
            switch state {
            case .receiving(let head, var parts, let size):
                state = .idle  // the parts move out of the state without a copy
                parts.append(chunk)
                // A chunked body that grows past the limit, or that the process has no room to hold among the others:
                // what was held goes first, the rest as it comes.
                if size + chunk.readableBytes > maximumBodyBytes || settings.configuration.heldBodies?.reserve(chunk.readableBytes) == false {
                    settings.configuration.heldBodies?.release(size)
                    return streamUpload(head, first: parts, context: context)
                }
                state = .receiving(head, parts, size + chunk.readableBytes)
            default:
                break
            }
        case .end:
            if upload != nil {
                upload?.ended = true
                return feed(context)
            }
            if draining { return context.close(promise: nil) }
            switch state {
            case .receiving(let head, let parts, let size):
                state = .forwarding
                // One copy of the parts, carrying their count against the budget for as long as it lives.
                let body = HeldBodies.joined(parts, count: size, budget: settings.configuration.heldBodies, reserved: size) { part, use in
                    part.withUnsafeReadableBytes(use)
                }
                handle(head, body: body, context: context)
            case .idle, .forwarding:
                break
            }
        }
    }

    /// How long an app's request body may send nothing while it is read: the head's timeout.
    private var bodySilence: TimeAmount { TimeAmount(settings.configuration.requestHeadTimeout) }

    /// Starts timing the silences of the body a request head announced.
    private func awaitBody(_ context: ChannelHandlerContext) {
        bodyDeadline = .now() + bodySilence
        guard bodyTimer == nil else { return }
        scheduleBodyCheck(context)
    }

    private func scheduleBodyCheck(_ context: ChannelHandlerContext) {
        guard let deadline = bodyDeadline else { return bodyTimer = nil }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        bodyTimer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = bound.value
            handler.checkBody(context)
        }
    }

    /// At the body's deadline: a body still awaited and nothing read for the whole silence ends the exchange with a 408,
    /// unless the proxy itself stopped reading it (a streamed upload the upstream has not taken yet: the upstream's
    /// timeout bounds that wait).
    private func checkBody(_ context: ChannelHandlerContext) {
        bodyTimer = nil
        guard let deadline = bodyDeadline, context.channel.isActive else { return }
        let paused = upload != nil && (try? context.channel.syncOptions?.getOption(.autoRead)) == false
        guard deadline <= .now(), !paused else {
            if paused { bodyDeadline = .now() + bodySilence }
            return scheduleBodyCheck(context)
        }
        bodyDeadline = nil
        let seconds = Int(settings.configuration.requestHeadTimeout.components.seconds)
        let message = "The app sent nothing more of its request body for \(seconds) s: the request is dropped."
        switch state {
        case .receiving(let head, let parts, let size):
            // Logged as cut short, as a body the app gave up by closing is, and answered.
            abandon(head, parts: parts, size: size, why: "the app sent nothing more of its request body for \(seconds) s (answered 408)",
                    answering: ProxyMessages.Refusal(.requestTimeout, message, closes: true), context: context)
        default:
            // A streamed upload: the upstream's request ends with this error, and the answer to it goes to the app.
            upload?.pipe.finish(KioskError.transport(url: upload?.url ?? "", message: message))
            upload = nil
            bodyAbandoned = true
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // A request the parser could not read to its end, answered by `ProxyProtocolErrors` now: logged as refused by the
        // proxy, with its answer's sentence, and nothing more written on the connection, which it closes.
        if let answering = event as? ProxyProtocolErrors.Answering {
            if case .receiving(let head, let parts, let size) = state {
                answeredAsUnreadable = true
                // (The input ending within the body is its app giving it up, which that answer tells it, if it still reads.)
                let why = answering.error == .invalidEOFState ? "the app closed its side before the end of its request body"
                    : "Kiosk answered \(answering.status.code) and closed the connection, the rest of the request not being valid "
                        + "HTTP: \(answering.sentence)"
                abandon(head, parts: parts, size: size, why: why, context: context)
            }
            return
        }
        guard let event = event as? ChannelEvent, case .inputClosed = event else { return context.fireUserInboundEventTriggered(event) }
        inputClosed = true
        bodyDeadline = nil
        switch state {
        case .receiving(let head, let parts, let size):
            // A body that had not ended never will.
            abandon(head, parts: parts, size: size, why: "the app closed its side before the end of its request body", context: context)
        case .forwarding:
            // Answered as usual, then closed (`end`), the record saying the app closed its side first when the answer had
            // not come (the app may have given up: a fully closed connection reads the same as `nc -N`'s half-close); a
            // streamed upload cut short fails the upstream's request instead.
            awaited?.close()
            if let current = upload, !current.ended {
                settings.configuration.meter.count { $0.cutShort += 1 }
                current.pipe.finish(KioskError.transport(url: current.url, message: "the app closed its side before the end of its request body"))
                upload = nil
            }
        case .idle:
            if inFlight == nil { context.close(promise: nil) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// A streamed upload whose body NIO's parser stopped reading partway (a bad chunk size) fails its upstream request
    /// saying so, not as given up by its app when the connection then closes. (A held one is answered by
    /// `ProxyProtocolErrors`, which says so first: `ProxyProtocolErrors.Answering`.)
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // (The end of the input within a body is its app giving it up, which `channelInactive` or the half-close says.)
        if let parserError = error as? HTTPParserError, parserError != .invalidEOFState, let current = upload, !current.ended {
            let (_, sentence) = ProxyProtocolErrors.refusal(for: parserError, maximumHeaderBytes: settings.configuration.maximumHeaderBytes)
            settings.configuration.meter.count { $0.cutShort += 1 }
            current.pipe.finish(KioskError.transport(url: current.url, message: "the rest of its request body is not valid HTTP: \(sentence)"))
            upload = nil
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        bodyTimer?.cancel()
        bodyTimer = nil
        bodyDeadline = nil
        // A connection closed by Kiosk's stop is said to be, not the app's doing (the app may have been sending still).
        let cut = settings.configuration.stop.hasStarted ? "Kiosk stopped before the end of its request body"
            : "the app closed its connection before the end of its request body"
        if case .receiving(let head, let parts, let size) = state {
            abandon(head, parts: parts, size: size, why: cut, context: context)
        }
        // A stream cut by the stop is said to be, not the app's doing: told before its task's cancellation reaches it.
        passing?.cancel(because: settings.configuration.stop.hasStarted ? KioskStopping() : CancellationError())
        passing = nil
        inFlight?.cancel()
        inFlight = nil
        if let current = upload {
            if !current.ended { settings.configuration.meter.count { $0.cutShort += 1 } }
            current.pipe.finish(KioskError.transport(url: current.url, message: cut))
        }
        upload = nil
        context.fireChannelInactive()
    }

    /// A request whose app went away before the end of its body (`why`): not forwarded — no upstream should act on a
    /// request its app gave up — but logged as cut short, with what came of its body, as a streamed upload given up is
    /// (through the upstream's failed request); then the connection closes, after `answering` when the app still waits.
    private func abandon(_ head: HTTPRequestHead, parts: CircularBuffer<ByteBuffer>, size: Int, why: String,
                         answering: ProxyMessages.Refusal? = nil, context: ChannelHandlerContext) {
        settings.configuration.heldBodies?.release(size)
        state = .forwarding
        var body = Data(capacity: size)
        for part in parts { body.append(contentsOf: part.readableBytesView) }
        let declared = head.headers.first(name: "Content-Length").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let came = declared.map { "after \(size) of its \($0) bytes" } ?? "after \(size) bytes"
        handle(head, body: body, cutShort: "\(why), \(came)", answering: answering, context: context)
    }

    /// Forwards a request whose body is larger than the limit while the app is still sending it (`first`: what was
    /// held of it already).
    private func streamUpload(_ head: HTTPRequestHead, first: CircularBuffer<ByteBuffer>, context: ChannelHandlerContext) {
        state = .forwarding
        let channel = context.channel
        let pipe = BodyPipe(onStop: {
            // The upstream's side read no more (it answered early, or failed): the rest of the body is read and
            // dropped (the pipe takes no more), and the connection closes after the answer (see `write`).
            channel.eventLoop.execute { Self.resumeReading(channel) }
        })
        upload = (pipe, first, false, "")
        // From now an answer is coming, whatever happens to the body: the protocol errors' handler must not give another.
        context.triggerUserOutboundEvent(ProxyProtocolErrors.AnswerPending(), promise: nil)
        feed(context)
        handle(head, body: nil, stream: pipe.stream, context: context)
    }

    /// Hands what arrived of a streamed upload on, 64 KiB at a time, each part once the upstream took those before:
    /// while it has not, the app's connection is not read, so what waits in memory is at most what was held before
    /// streaming began and one read's worth. Ends the pipe after the body's last part.
    private func feed(_ context: ChannelHandlerContext) {
        let loop = context.eventLoop
        while var current = upload, var next = current.backlog.popFirst() {
            let part = next.readSlice(length: min(64 << 10, next.readableBytes))!
            if next.readableBytes > 0 { current.backlog.prepend(next) }
            upload = current
            let bound = NIOLoopBound((self, context), eventLoop: loop)
            let taken = current.pipe.offer(Data(part.readableBytesView)) {
                loop.execute { bound.value.0.feed(bound.value.1) }
            }
            if !taken {
                try? context.channel.syncOptions?.setOption(.autoRead, value: false)
                return
            }
        }
        guard let current = upload else { return }
        if current.ended {
            upload = nil
            current.pipe.finish()
        } else {
            Self.resumeReading(context.channel)
        }
    }

    private static func resumeReading(_ channel: any Channel) {
        guard (try? channel.syncOptions?.getOption(.autoRead)) == false else { return }
        try? channel.syncOptions?.setOption(.autoRead, value: true)
        channel.read()
    }

    /// Forwards the request `head` (its whole `body`, or the `stream` of a larger one) and writes the answer, or writes
    /// why the proxy answers it itself. With `cutShort` (why the app gave it up before its body's end), what would have
    /// been forwarded is logged as cut short instead, and the connection closes (after `answering`, when given).
    private func handle(_ head: HTTPRequestHead, body: Data?, stream: BodyStream? = nil, cutShort: String? = nil,
                        answering: ProxyMessages.Refusal? = nil, context: ChannelHandlerContext) {
        // The password is asked on the proxy's own listener; requests inside a CONNECT it let through are the same
        // client's, and a reverse listener is reachable from this machine only.
        if origin == nil, let credentials = settings.configuration.credentials, !credentials.admits(head.headers["Proxy-Authorization"]) {
            let refusal = ProxyMessages.Refusal(.proxyAuthenticationRequired,
                                                "This Kiosk proxy asks for its password: user \(ProxyCredentials.user), the password "
                                                + "`kiosk proxy` printed when it made it (`kiosk proxy password` makes a new one).",
                                                closes: head.method == .CONNECT, challenge: "Basic realm=\"Kiosk proxy\", charset=\"UTF-8\"")
            return write(refusal, to: head, context: context)
        }
        if head.method == .CONNECT, origin == nil { return cutShort == nil ? openTunnel(head, context: context) : context.close(promise: nil) }
        // A reverse listener answers its own names only, as every listener of Kiosk does: a web page whose name was made
        // to point at this machine (DNS rebinding) would otherwise read and write the app behind it, whose own check
        // of Host it passes, since the upstream gets the Host it expects.
        // (An HTTP/1.0 request may come without Host, RFC 9112 §3.2, and no browser sends one so: health checks, old tools.)
        // A whole URL as the target names the host asked for itself, whatever Host says (RFC 9112 §3.2.2).
        // (An HTTP/1.0 one without Host whose target is a whole URL still names a host: that one is judged.)
        let hostless = head.version == .http1_0 && !head.headers.contains(name: "Host")
        let targetAuthority = ListenerPolicy.authority(ofTarget: head.uri)
        let named = targetAuthority.map { head.headers["Host"].count == 1 || hostless ? [$0] : head.headers["Host"] } ?? head.headers["Host"]
        if origin?.isReverse == true, !hostless || targetAuthority != nil, let refusal = Self.reverseNames.nameRefusal(hosts: named) {
            return write(ProxyMessages.Refusal(HTTPResponseStatus(statusCode: refusal.status), refusal.message, closes: true),
                         to: head, context: context)
        }
        var request: HTTPRequest
        do {
            let url = try ProxyMessages.target(of: head, under: origin?.base)
            if origin?.isReverse != true, ProxySetup.isAddressed(url), let local = context.channel.localAddress,
               let setup = ProxySetup.answer(url, method: head.method, authority: settings.configuration.authority,
                                             proxy: Self.shown(local), boundHost: settings.configuration.host,
                                             language: ProxySetup.language(head.headers.first(name: "Accept-Language"))) {
                return write(setup, to: head, context: context)
            }
            if let loop = loop.loop(url, headers: head.headers, proxyPort: settings.boundPort()) {
                throw LoopGuard.refusal(loop, target: HTTPRequest.endpoint(of: url), tunnel: false)
            }
            // Max-Forwards 0 on OPTIONS or TRACE: this proxy is the recipient asked for (RFC 9110 §7.6.2).
            if let last = ProxyMessages.lastHop(head) { return write(last, to: head, context: context) }
            if cutShort == nil, let protocolName = ProxyMessages.upgrade(of: head), let body {
                return openUpgrade(head, url: url, protocolName: protocolName, body: context.channel.allocator.buffer(bytes: body),
                                   context: context)
            }
            let sent = (body?.count ?? 0) > 0 || head.headers.contains(name: "Content-Length")
                || head.headers.contains(name: "Transfer-Encoding")
            request = try ProxyMessages.request(head, url: url, body: sent && stream == nil ? body ?? Data() : nil,
                                                via: via, forNetwork: remoteClient, reverse: reverseAddresses(head, context: context))
            request.bodyStream = stream
            request.appURL = appAddress(head, context: context)
            // What names the upload's URL when its app gives it up (its errors are the upstream request's failure).
            if stream != nil { upload?.url = request.url.redactedString }
        } catch {
            write(error, to: head, context: context)
            return
        }
        if let cutShort {
            settings.configuration.meter.count { $0.cutShort += 1 }
            settings.onCutShort(request, KioskError.transport(url: request.url.redactedString, message: cutShort), .now - headArrived)
            state = .idle
            if let answering { return write(answering, to: head, context: context) }
            // (One the parser could not read is answered and closed by `ProxyProtocolErrors`, once this has logged it.)
            if answeredAsUnreadable { return }
            return context.close(promise: nil)
        }
        settings.configuration.meter.count { $0.requests += 1 }
        // The app closing its side while the answer is awaited is the record's to say (`userInboundEventTriggered`).
        let side = AppSide()
        request.appSide = side
        if inputClosed { side.close() }
        awaited = side
        // The upstream's interim answers (103 Early Hints) reach the app before the final one, as RFC 9110 §15.2 asks of
        // a proxy — never an HTTP/1.0 app, which cannot read them, nor once the exchange is over.
        if (head.version.major, head.version.minor) >= (1, 1) {
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let loop = context.eventLoop
            let url = request.url
            // (The side weakly: it keeps this relay, which would otherwise keep it, and with it the exchange's head, for ever.)
            side.onInterim { [weak side] status, fields in
                guard let side else { return }
                loop.execute {
                    let (handler, context) = bound.value
                    guard handler.awaited === side else { return }
                    let interim = ProxyMessages.responseHead(HTTPResponse(status: status, headers: HTTPHeaderFields(fields), body: Data(), url: url),
                                                             method: head.method, version: head.version, via: handler.via,
                                                             relocating: handler.reverseAddresses(head, context: context))
                    context.writeAndFlush(handler.wrapOutboundOut(.head(interim)), promise: nil)
                }
            }
        }
        let promise = context.eventLoop.makePromise(of: Result<HTTPResponse, any Error>.self)
        let forward = settings.forward
        inFlight = Task(executorPreference: executor) {
            do {
                promise.succeed(.success(try await forward(request)))
            } catch {
                promise.succeed(.failure(error))
            }
        }
        promise.futureResult.assumeIsolated().whenSuccess { [self] result in
            inFlight = nil
            awaited = nil
            switch result {
            case .success(let response):
                write(response, to: head, context: context)
            case .failure where side.isResetAsked:
                reset(context: context)
            case .failure(let error):
                write(ProxyMessages.failure(error, url: request.url), to: head, context: context)
            }
        }
    }

    /// Resets the app's connection, as a rule's `--fail reset` asks: SO_LINGER 0, then the socket closed under any TLS
    /// layer (whose close would first say goodbye with a close_notify), so that the kernel sends a TCP RST and the app
    /// sees a reset, as from an upstream that crashed.
    private func reset(context: ChannelHandlerContext) {
        state = .idle
        closing = true
        let pipeline = context.pipeline.syncOperations
        let below = (try? pipeline.context(handlerType: NIOSSLServerHandler.self)) ?? context
        let bound = NIOLoopBound(below, eventLoop: context.eventLoop)
        guard let socket = context.channel as? any SocketOptionProvider else { return below.close(promise: nil) }
        socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in bound.value.close(promise: nil) }
    }

    /// CONNECT: connects to the target, answers 200, then leaves the connection to the two tunnel ends. A target
    /// that cannot be reached is a 502 (and a tunnel logged with its error).
    private func openTunnel(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let target: (host: String, port: Int)
        do {
            target = try ProxyMessages.tunnelTarget(of: head)
            let url = URL(string: "https://\(target.host.contains(":") ? "[\(target.host)]" : target.host):\(target.port)/")
            if let url, let loop = loop.loop(url, headers: head.headers, proxyPort: settings.boundPort()) {
                throw LoopGuard.refusal(loop, target: "\(target.host):\(target.port)", tunnel: true)
            }
        } catch {
            write(error, to: head, context: context)
            return
        }
        if settings.configuration.intercepts(target.host) || settings.configuration.readsHelloToDecide(target.host),
           let authority = settings.configuration.authority {
            settings.configuration.meter.count { $0.intercepted += 1 }
            return intercept(head, target: target, authority: authority, context: context)
        }
        let opened = ContinuousClock.now
        let onTunnel = settings.onTunnel
        let meter = TunnelMeter(host: target.host, port: target.port, listedIn: settings.configuration.exchangesInFlight,
                                stopping: settings.configuration.stop, report: onTunnel)
        let host = target.host.contains(":") ? "[\(target.host)]" : target.host
        let eventLoop = context.eventLoop
        Self.dial(URL(string: "https://\(host):\(target.port)/"), host: target.host, port: target.port, tls: nil,
                  within: settings.configuration.connectTimeout, vet: settings.vet, forNetwork: remoteClient, on: eventLoop)
            .assumeIsolated()
            .whenComplete { [self] result in
                switch result {
                case .failure(let error):
                    let waited = ContinuousClock.now - opened
                    var failed = TunnelSummary(host: target.host, port: target.port, sent: 0, received: 0, duration: waited.seconds,
                                               error: Self.dialFailure(error, host: target.host, port: target.port))
                    // Logged with the Cache-Status its app gets (offline: detail=offline), as every answer is.
                    failed.cacheStatus = (error as? CacheMarkedFailure)?.cacheStatus
                    onTunnel(failed)
                    write(Self.dialRefusal(error, host: target.host, port: target.port), to: head, context: context)
                case .success(let upstream):
                    // Counted once its upstream is reached, as a protocol switch is: a refused one is counted refused.
                    settings.configuration.meter.count { $0.tunnels += 1 }
                    self.join(context: context, upstream: upstream, meter: meter, established: head.version)
                }
            }
    }

    /// CONNECT to a host Kiosk reads: answered 200 at once (nothing is asked of the upstream until a request comes:
    /// interception works offline), then TLS with a leaf of Kiosk's CA for the name the app's TLS hello asks for (SNI),
    /// else the CONNECT's host, and HTTP inside it, each request forwarded as `https://name:port/...`.
    private func intercept(_ head: HTTPRequestHead, target: (host: String, port: Int), authority: ProxyAuthority,
                           context: ChannelHandlerContext) {
        // Minting costs a signature and a TLS context: off the event loop.
        NIOThreadPool.singleton.runIfActive(eventLoop: context.eventLoop) { try authority.serverContext(for: target.host) }
            .assumeIsolated()
            .whenComplete { [self] result in
                switch result {
                case .failure(let error):
                    write(ProxyMessages.Refusal(.badGateway, "Kiosk could not make a certificate for \(target.host): \(error).",
                                                closes: true), to: head, context: context)
                case .success(let sslContext):
                    // The CONNECT's time, from which a tunnel opened later (the app silent first) is said to have lasted.
                    let opened = ContinuousClock.now
                    let channel = context.channel
                    let settings = settings
                    /// The handlers reading the app's requests as `scheme` URLs of `name` (the CONNECT's host unless the
                    /// app's TLS hello named another) and the CONNECT's port.
                    func inner(_ scheme: String, name: String = target.host, defaultPort: Int) -> [any ChannelHandler]? {
                        let host = name.contains(":") ? "[\(name)]" : name
                        guard let base = URL(string: "\(scheme)://\(host)\(target.port == defaultPort ? "" : ":\(target.port)")") else { return nil }
                        return Self.httpHandlers(settings, origin: Origin(base: base, isReverse: false))
                    }
                    guard let plain = inner("http", defaultPort: 80) else {
                        return channel.close(promise: nil)
                    }
                    /// A tunnel to the CONNECT's target, passed byte for byte and logged as one: for what is neither TLS
                    /// nor HTTP, which the proxy cannot read (a database's protocol, SSH), as if the host were not intercepted.
                    let remoteClient = remoteClient
                    func rawTunnel(note: String? = nil) -> RawTunnelOpener {
                        // Counted as read at its CONNECT: passed on unread after all, it is a tunnel instead, not both.
                        settings.configuration.meter.count { $0.intercepted -= 1; $0.tunnels += 1 }
                        let onTunnel = settings.onTunnel
                        let host = target.host.contains(":") ? "[\(target.host)]" : target.host
                        return RawTunnelOpener(meter: TunnelMeter(host: target.host, port: target.port, started: opened, note: note,
                                                                  listedIn: settings.configuration.exchangesInFlight,
                                                                  stopping: settings.configuration.stop, report: onTunnel),
                                               quietAfterHalfClose: settings.configuration.tunnelQuietAfterHalfClose, dial: { loop in
                            Self.dial(URL(string: "https://\(host):\(target.port)/"), host: target.host, port: target.port, tls: nil,
                                      within: settings.configuration.connectTimeout, vet: settings.vet, forNetwork: remoteClient, on: loop)
                        }, failed: { error in
                            let waited = ContinuousClock.now - opened
                            onTunnel(TunnelSummary(host: target.host, port: target.port, sent: 0, received: 0,
                                                   duration: waited.seconds,
                                                   error: Self.dialFailure(error, host: target.host, port: target.port)))
                        })
                    }
                    let timeout = settings.configuration.requestHeadTimeout
                    do {
                        // TLS (a handshake record first) is read with a leaf for the host; anything else as plain HTTP, which
                        // some apps send through a CONNECT too (`curl -p`, WebSocket clients for ws:// behind HTTPS_PROXY).
                        let sniffer = TunnelSniffer(timeout: timeout) { operations, sniffer, speech in
                            switch speech {
                            case .tls: break
                            case .http:
                                // Plain HTTP to an address read only for the name a TLS hello would give: not read.
                                guard settings.configuration.intercepts(target.host) else {
                                    return try operations.addHandler(rawTunnel(), position: .after(sniffer))
                                }
                                return try operations.addHandlers(plain, position: .after(sniffer))
                            case .other: return try operations.addHandler(rawTunnel(), position: .after(sniffer))
                            // Said so on its record: an app that only waited (before a TLS hello of its own) meets the
                            // upstream's own certificate, which the record alone would leave unexplained.
                            case .silent: return try operations.addHandler(rawTunnel(note: Self.silentAppNote), position: .after(sniffer))
                            }
                            // The hello is read whole first, for the name it asks for: an app that connected to an address
                            // (it resolved the name itself) verifies the leaf against that name, not the address. From now
                            // the handshake has the head's timeout to complete.
                            let began = ContinuousClock.now
                            let deadline = HandshakeDeadline(timeout: timeout) { problem in
                                // A handshake Kiosk's own stop cut is no fault of the app's.
                                guard !settings.configuration.stop.hasStarted else { return }
                                var failed = TunnelSummary(host: target.host, port: target.port, sent: 0, received: 0,
                                                           duration: (ContinuousClock.now - began).seconds, error: problem)
                                failed.wasToBeRead = true
                                settings.onTunnel(failed)
                            }
                            let hello = ByteToMessageHandler(ClientHelloReader { hello in
                                let name = ProxyMessages.serverName(hello?.serverName, connectedTo: target.host)
                                // A hello naming a host `--ignore` names, or one `--intercept` leaves out (an app that
                                // CONNECTs to an address it resolved itself), is not read either: it goes on to the target,
                                // hello and all, unread. So is a hello naming nothing to an address read for its name alone,
                                // and one offering only protocols the proxy cannot read (`h2` alone: gRPC), which would
                                // otherwise fail: the app keeps working, unread, rather than broken.
                                if !settings.configuration.intercepts(name) || hello?.speaksHTTP1 == false {
                                    // (Said on the record when it is the protocols: a host read otherwise shows unread.)
                                    let note = settings.configuration.intercepts(name) ? Self.onlyOtherProtocolsNote : nil
                                    return channel.eventLoop.makeCompletedFuture {
                                        let operations = channel.pipeline.syncOperations
                                        try operations.addHandler(rawTunnel(note: note), position: .after(deadline))
                                        operations.removeHandler(deadline, promise: nil)
                                    }.recover { _ in channel.close(promise: nil) }
                                }
                                let leaf = name == target.host ? channel.eventLoop.makeSucceededFuture((sslContext, name))
                                    : NIOThreadPool.singleton.runIfActive(eventLoop: channel.eventLoop) { try authority.serverContext(for: name) }
                                        .map { ($0, name) }
                                        // A name no leaf can be made for: the CONNECT's host's, which the app may still accept.
                                        .flatMapErrorThrowing { _ in (sslContext, target.host) }
                                // The requests go to the name the hello asks for only when the CONNECT named an address (the
                                // app resolved the name itself); a CONNECT to a name is where they go, whatever the hello asks
                                // for (curl's --connect-to sends one name in the hello and CONNECTs to another).
                                let connectedToName = IPAddress(literal: target.host) == nil
                                // On the connection's loop (the hello reader's callback runs there, and so does this).
                                return leaf.assumeIsolated().flatMapThrowing { context, leafName in
                                    let operations = channel.pipeline.syncOperations
                                    guard let secure = inner("https", name: connectedToName ? target.host : leafName, defaultPort: 443) else {
                                        throw ChannelError.inappropriateOperationForState
                                    }
                                    // Before the deadline, which must follow TLS to see its handshake end (and how it failed).
                                    try operations.addHandler(NIOSSLServerHandler(context: context), position: .before(deadline))
                                    deadline.leafName = leafName
                                    try operations.addHandlers(secure, position: .after(deadline))
                                }.recover { _ in channel.close(promise: nil) }.nonisolated()
                            })
                            try operations.addHandler(hello, position: .after(sniffer))
                            try operations.addHandler(deadline, position: .after(hello))
                        }
                        // After the HTTP decoder, which leaves on the loop's next turn handing on whatever the app sent past
                        // its CONNECT (a TLS hello sent before the 200): that reaches the sniffer as any later read does.
                        try channel.pipeline.syncOperations.addHandler(sniffer, position: .after(self))
                        try leaveHTTP(context: context, established: head.version)
                    } catch {
                        channel.close(promise: nil)
                    }
                }
            }
    }

    /// The note on a tunnel passed on unread because the app's TLS hello offered no protocol Kiosk reads inside HTTPS.
    static let onlyOtherProtocolsNote = "the app's TLS hello offered only protocols Kiosk does not read inside HTTPS (h2 alone, as gRPC "
        + "clients send), not http/1.1, so Kiosk passed it on unread rather than break it"
    /// The note on a tunnel passed on unread because the app said nothing after its CONNECT.
    static let silentAppNote = "the app sent nothing for 2 s after its CONNECT, so Kiosk passed it on unread, as it does a protocol "
        + "whose server speaks first (SSH, SMTP); an app that waits that long before its TLS hello meets the upstream's own certificate"

    /// The proxy's HTTP handlers and this one leave the connection (the decoder last, handing on what the app sent
    /// past the CONNECT), after the 200 is written as bytes (NIO's encoder, not knowing the request was a CONNECT,
    /// would frame it as a chunked body and write that body's end into the tunnel).
    /// With `established` nil (a protocol switch) nothing is written: the upstream's own answer is the app's.
    private func leaveHTTP(context: ChannelHandlerContext, established version: HTTPVersion?) throws {
        let operations = context.pipeline.syncOperations
        operations.removeHandler(try operations.handler(type: HTTPServerPipelineHandler.self), promise: nil)
        operations.removeHandler(try operations.handler(type: ReadWhileAnswering.self), promise: nil)
        operations.removeHandler(try operations.handler(type: AnswersTakenFirst.self), promise: nil)
        operations.removeHandler(try operations.handler(type: ProxyProtocolErrors.self), promise: nil)
        operations.removeHandler(try operations.handler(type: RequestHeadDeadline<NIOHTTP1Parts>.self), promise: nil)
        operations.removeHandler(try operations.handler(type: NIOHTTPResponseHeadersValidator.self), promise: nil)
        operations.removeHandler(try operations.handler(type: HTTPResponseEncoder.self), promise: nil)
        if let version {
            let line = "HTTP/\(version.major).\(version.minor) 200 Connection Established\r\n\r\n"
            context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: line)), promise: nil)
        }
        let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
        operations.removeHandler(context: context, promise: nil)
        operations.removeHandler(decoder, promise: nil)
    }

    /// A request that switches protocols (WebSocket): the upstream is dialled through the outbound policy (over TLS
    /// for https, verified as every upstream is), sent the request, and the two connections joined as a tunnel — the
    /// upstream's answer, 101 or not, and every frame after it pass untouched, and the exchange is logged once both
    /// ends close. A refusal or a failed dial is answered as any other failed exchange (502 saying why). A request
    /// breakpoint set for it holds it first (`ProxyConfiguration.holdSwitch`): sent as it was or edited, answered in its
    /// place, or aborted, as any request held there.
    private func openUpgrade(_ head: HTTPRequestHead, url: URL, protocolName: String, body: ByteBuffer, context: ChannelHandlerContext) {
        var bytes: ByteBuffer
        // The log keeps the request as the upstream got it (its Host, Via), as it does every other exchange's.
        let sentFields: [(name: String, value: String)]
        do {
            (bytes, sentFields) = try ProxyMessages.upgradeRequest(head, url: url, bodyLength: body.readableBytes, via: via,
                                                                   reverse: reverseAddresses(head, context: context))
        } catch {
            return write(error, to: head, context: context)
        }
        var body = body
        guard let hold = settings.configuration.holdSwitch else {
            bytes.writeBuffer(&body)
            return dialUpgrade(head, url: url, protocolName: protocolName, request: bytes, fields: sentFields, touches: [], context: context)
        }
        var asked = HTTPRequest(method: head.method.rawValue, url: url, headers: HTTPHeaderFields(sentFields),
                                body: body.readableBytes == 0 ? nil : Data(body.readableBytesView), endpoint: HTTPRequest.endpoint(of: url),
                                purpose: remoteClient ? .proxiedForNetwork : .proxied)
        asked.appURL = appAddress(head, context: context)
        let request = asked
        let decided = context.eventLoop.makePromise(of: SwitchHold.self)
        decided.completeWithTask { await hold(request) }
        decided.futureResult.assumeIsolated().whenSuccess { [self] outcome in
            // The app went while its switch was held: nothing to open it for.
            guard context.channel.isActive else { return }
            switch outcome {
            case .send(let sent, let touches):
                var message = bytes
                var fields = sentFields
                if sent != request {
                    do {
                        (message, fields) = try ProxyMessages.upgradeRequest(method: sent.method, url: sent.url, fields: Array(sent.headers))
                    } catch {
                        return write(error, to: head, context: context)
                    }
                    body = ByteBuffer(bytes: sent.body ?? Data())
                }
                message.writeBuffer(&body)
                dialUpgrade(head, url: sent.url, protocolName: protocolName, request: message, fields: fields, touches: touches, context: context)
            case .answer(let response):
                write(response, to: head, context: context)
            case .fail(let error):
                write(ProxyMessages.failure(error, url: url), to: head, context: context)
            }
        }
    }

    /// Dials the upstream of a protocol switch and sends it `request` (its head, as `fields` say, and body), then joins the
    /// two as a tunnel (see `openUpgrade`); its record carries `touches`.
    private func dialUpgrade(_ head: HTTPRequestHead, url: URL, protocolName: String, request: ByteBuffer,
                             fields sentFields: [(name: String, value: String)], touches: [ExchangeTouch], context: ChannelHandlerContext) {
        let host = (url.host(percentEncoded: false) ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let secure = url.scheme?.lowercased() == "https"
        let port = url.port ?? (secure ? 443 : 80)
        let onTunnel = settings.onTunnel
        let opened = ContinuousClock.now
        let upgrade = TunnelSummary.Upgrade(method: head.method.rawValue, url: url, protocolName: protocolName,
                                            requestHeaders: sentFields.map { RequestRecord.HeaderField(name: $0.name, value: $0.value) })
        let meter = TunnelMeter(host: host, port: port, upgrade: upgrade, touches: touches, listedIn: settings.configuration.exchangesInFlight,
                                stopping: settings.configuration.stop, report: onTunnel)
        Self.dial(url, host: host, port: port, tls: secure ? settings.upstreamTLS : nil,
                  checksCertificate: settings.configuration.verifiesUpstream, trustRoots: settings.configuration.upstreamTrustRoots,
                  within: settings.configuration.connectTimeout,
                  vet: settings.vet, forNetwork: remoteClient,
                  on: context.eventLoop)
            .flatMap { upstream in
                // Counted as the app's, as the upstream's 101 head is counted as received: the handshake both ways.
                meter.add(request, fromApp: true)
                return upstream.writeAndFlush(request).map { upstream }
            }
            .assumeIsolated()
            .whenComplete { [self] result in
                switch result {
                case .failure(let error):
                    let waited = ContinuousClock.now - opened
                    let reason = Self.dialFailure(error, host: host, port: port)
                    var failed = TunnelSummary(host: host, port: port, sent: 0, received: 0, duration: waited.seconds, error: reason,
                                               upgrade: upgrade)
                    failed.touches = touches
                    failed.cacheStatus = (error as? CacheMarkedFailure)?.cacheStatus
                    onTunnel(failed)
                    write(Self.dialRefusal(error, host: host, port: port), to: head, context: context)
                case .success(let upstream):
                    // Counted once its upstream is reached: a switch refused (offline, a failed dial) never happened.
                    settings.configuration.meter.count { $0.upgrades += 1 }
                    // Listed at the address the app opened (ws:, wss:), as its record will be.
                    var shown = URLComponents(url: url, resolvingAgainstBaseURL: false)
                    if protocolName == "websocket" { shown?.scheme = secure ? "wss" : "ws" }
                    let standard = secure ? 443 : 80
                    let name = host.contains(":") ? "[\(host)]" : host
                    meter.track(as: HTTPRequest(method: head.method.rawValue, url: shown?.url ?? url, headers: HTTPHeaderFields(sentFields),
                                                endpoint: port == standard ? name : "\(name):\(port)", purpose: .proxied),
                                startedAt: Date())
                    self.join(context: context, upstream: upstream, meter: meter, established: nil)
                }
            }
    }

    /// A connection to `host:port` for a tunnel, once the outbound policy allows `url`; over TLS with `tls` (SNI and
    /// the name checked unless the host is an address literal, a weak certificate refused when `checksCertificate`),
    /// ready once its handshake is done. The connection, and then the handshake, each get `timeout`.
    private static func dial(_ url: URL?, host: String, port: Int, tls: NIOSSLContext?, checksCertificate: Bool = false,
                             trustRoots: [String] = [], within timeout: Duration, vet: @escaping @Sendable (URL, Bool) async throws -> CheckedAddresses,
                             forNetwork: Bool, on eventLoop: any EventLoop) -> EventLoopFuture<any Channel> {
        let deadline = TimeAmount(timeout)
        guard let url else { return eventLoop.makeFailedFuture(ProxyMessages.Refusal(.badRequest, "\(host):\(port) is not an address.")) }
        return eventLoop.makeFutureWithTask { try await vet(url, forNetwork).addresses }.flatMap { addresses in
            // The bootstrap's one event loop is this one, so the upstream's handlers complete this promise here.
            let handshake = eventLoop.makePromise(of: Void.self)
            // The addresses the policy checked, and no later answer for the name (DialAddresses.swift).
            return ClientBootstrap(group: eventLoop)
                .resolver(FixedAddresses(addresses, on: eventLoop))
                .connectTimeout(deadline)
                .channelOption(.allowRemoteHalfClosure, value: true)
                .channelInitializer { channel in
                    guard let tls else { return channel.eventLoop.makeSucceededVoidFuture() }
                    return channel.eventLoop.makeCompletedFuture {
                        let name = IPAddress(literal: host) == nil ? host : nil
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: name))
                        try channel.pipeline.syncOperations.addHandler(HandshakeWaiter(promise: handshake, checking: checksCertificate ? host : nil))
                    }
                }
                .connect(host: host, port: port)
                .flatMapError { error in
                    handshake.fail(error)
                    return eventLoop.makeFailedFuture(error)
                }
                .flatMap { channel in
                    guard tls != nil else {
                        handshake.succeed()
                        return channel.eventLoop.makeSucceededFuture(channel)
                    }
                    // An upstream that takes the connection and never finishes the handshake would hold the app forever.
                    let stalled = eventLoop.scheduleTask(in: deadline) { handshake.fail(KioskError.offline(host: host, reason: .noHandshake)) }
                    handshake.futureResult.whenComplete { _ in stalled.cancel() }
                    return handshake.futureResult.map { channel }.flatMapError { error in
                        channel.close(promise: nil)
                        // A chain BoringSSL could not verify, said precisely (expired when, which issuer), as the
                        // transport says it of every other exchange.
                        guard case .transport(_, let message)? = UpstreamTransport.connectionFailure(error, url: url.absoluteString, host: host),
                              UpstreamTransport.isUnverifiedChain(message) else { return eventLoop.makeFailedFuture(error) }
                        return eventLoop.makeFutureWithTask {
                            let precise = await UpstreamTransport.diagnosedTrustFailure(message, host: host, certificateOf: host, at: addresses,
                                                                                        trusting: trustRoots)
                            throw KioskError.transport(url: url.absoluteString, message: precise ?? message)
                        }
                    }
                }
        }
    }

    /// Why a tunnel's upstream could not be reached, as its 502 and its log entry say it.
    private static func dialFailure(_ error: any Error, host: String, port: Int) -> String {
        if let refusal = error as? ProxyMessages.Refusal { return refusal.message }
        if case KioskError.refused(_, let reason)? = error.kioskError { return "Kiosk refused to connect to \(host):\(port): \(reason)." }
        let place = "\(host.contains(":") ? "[\(host)]" : host):\(port)"
        switch error.kioskError ?? UpstreamTransport.connectionFailure(error, url: place, host: host) {
        case .offline(_, .unresolved)?: return "Kiosk could not connect to \(place): the name does not resolve (DNS)."
        case .offline(_, .refused)?: return "Kiosk could not connect to \(place): it refused the connection (nothing listens on that port)."
        case .offline(_, .unreachable)?: return "Kiosk could not connect to \(place): no route to it."
        case .offline(_, .noAnswer)?: return "Kiosk could not connect to \(place): it did not answer the connection in time."
        case .offline(_, .noHandshake)?:
            return "Kiosk could not connect to \(place): it took the connection but did not answer its TLS handshake in time."
        case .transport(_, let message)?: return "Kiosk could not connect to \(place): \(message)."
        case let other?: return other.description + "."
        case nil:
            if error is NIOSSLError || error is BoringSSLError {
                return "The TLS handshake with \(place) failed (its certificate is not trusted, has expired or names another host): \(error)."
            }
            return "Kiosk could not connect to \(place): \(error)."
        }
    }

    /// What the app gets when a tunnel's or a protocol switch's upstream could not be dialled: a 502 saying why, or
    /// offline the 504 of an answer not stored, with the cache's `Cache-Status`, as any request then gets.
    private static func dialRefusal(_ error: any Error, host: String, port: Int) -> ProxyMessages.Refusal {
        let marked = error as? CacheMarkedFailure
        // Offline, or an upstream that did not answer the connection in time: a gateway's timeout, as for any request.
        var timedOut = marked?.cacheStatus.decision == .offline
        if case .offline(_, let reason)? = error.kioskError ?? UpstreamTransport.connectionFailure(error, url: "", host: host),
           reason == .noAnswer || reason == .noHandshake { timedOut = true }
        var refusal = ProxyMessages.Refusal(timedOut ? .gatewayTimeout : .badGateway, dialFailure(error, host: host, port: port), closes: true)
        refusal.cacheStatus = marked?.cacheStatus
        return refusal
    }

    /// A tunnel: the two ends join, and the HTTP handlers leave (`leaveHTTP`), with a 200 for a CONNECT (`established`)
    /// or nothing for a protocol switch.
    private func join(context: ChannelHandlerContext, upstream: any Channel, meter: TunnelMeter, established version: HTTPVersion?) {
        // The app went while the upstream was dialled: its end would never hear it close, nor close the upstream.
        guard context.channel.isActive else {
            upstream.close(promise: nil)
            return meter.abandon("The app closed its connection before the tunnel opened.")
        }
        let (appEnd, upstreamEnd) = TunnelEnd.pair(meter: meter, quietAfterHalfClose: settings.configuration.tunnelQuietAfterHalfClose)
        do {
            if let waiter = try? upstream.pipeline.syncOperations.handler(type: HandshakeWaiter.self) {
                upstream.pipeline.syncOperations.removeHandler(waiter, promise: nil)
            }
            try upstream.pipeline.syncOperations.addHandler(upstreamEnd)
            try context.pipeline.syncOperations.addHandler(appEnd, position: .after(self))
            try leaveHTTP(context: context, established: version)
            if version == nil { appEnd.watchForSwitchAnswer(within: settings.configuration.switchAnswerTimeout) } else { meter.trackConnect() }
        } catch {
            upstream.close(promise: nil)
            context.close(promise: nil)
        }
    }

    /// A reverse listener's upstream base and its own address as the app used it (its Host; without one, an HTTP/1.0
    /// app's, the listener's own address), between which redirects and origins are said both ways; nil on the forward
    /// listener.
    /// The address the app asked a reverse listener for — its path under the name it used, or the whole URL it wrote — which
    /// a rule, a mock or a breakpoint may name; nil off a reverse listener.
    private func appAddress(_ head: HTTPRequestHead, context: ChannelHandlerContext) -> URL? {
        guard let reverse = reverseAddresses(head, context: context) else { return nil }
        return head.uri.hasPrefix("/") ? URL(string: reverse.listener + head.uri) : URL(string: head.uri)
    }

    private func reverseAddresses(_ request: HTTPRequestHead, context: ChannelHandlerContext) -> (upstream: URL, listener: String)? {
        origin.flatMap { origin in
            origin.isReverse ? (request.headers.first(name: "Host") ?? context.channel.localAddress.map(Self.shown))
                .map { (origin.base, "http://\($0)") } : nil
        }
    }

    private func write(_ response: HTTPResponse, to request: HTTPRequestHead, context: ChannelHandlerContext) {
        guard !answeredAsUnreadable else {
            // (`ProxyProtocolErrors` closes the connection once its 400 is written.) A streamed answer nobody will read is
            // stopped, for its exchange to end and be logged.
            response.stream?.cancel()
            return
        }
        // A reverse listener's redirects point back at it, by the address the app used.
        let relocating = reverseAddresses(request, context: context)
        var head = ProxyMessages.responseHead(response, method: request.method, version: request.version, via: via,
                                              relocating: relocating)
        let carriesBody = ProxyMessages.carriesBody(head, method: request.method)
        // An HTTP/1.0 app learns where a streamed body of unknown length ends by the connection closing.
        // An upload still arriving when the answer is ready (the upstream answered early) is not read to its end.
        let keepAlive = Self.keepsAlive(request) && upload == nil && !bodyAbandoned
            && !(carriesBody && response.stream != nil && request.version == .http1_0 && !head.headers.contains(name: "Content-Length"))
        if !keepAlive {
            head.headers.replaceOrAdd(name: "Connection", value: "close")
        } else if request.version == .http1_0 {
            // An HTTP/1.0 app keeps a connection only when the answer says it stays open (`ab -k`, old clients).
            head.headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if carriesBody, response.stream == nil, response.body.count > Self.writeSlice {
            // A large held body goes out a slice at a time, each once the one before was taken: a slow app then keeps the
            // proxy's one copy of it (counted against the held-bodies budget until it is sent), not a second one waiting
            // whole in the connection.
            return pass(BodyStream.slices(of: response.body, size: Self.writeSlice), keepAlive: keepAlive, context: context)
        }
        if carriesBody, !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
        }
        guard let stream = response.stream else { return end(keepAlive: keepAlive, context: context) }
        guard carriesBody else {
            stream.cancel()
            return end(keepAlive: keepAlive, context: context)
        }
        pass(stream, keepAlive: keepAlive, context: context)
    }

    /// Whether the connection may stay open after the answer to `request`: as its version and `Connection` say, but never
    /// after an HTTP/1.0 request with `Transfer-Encoding`, whose framing RFC 9112 §6.1 calls faulty (1.0 has no chunks).
    private static func keepsAlive(_ request: HTTPRequestHead) -> Bool {
        request.isKeepAlive && !(request.version == .http1_0 && request.headers.contains(name: "Transfer-Encoding"))
    }

    /// The most of a held body written to an app at once (see `write`).
    static let writeSlice = 256 << 10

    /// The names a reverse listener answers, on loopback only: `localhost`, its subdomains and addresses.
    static let reverseNames = ListenerPolicy.loopback()

    /// Writes a streamed body to the app as it arrives, each chunk once the one before has gone out (a slow app holds
    /// the upstream back rather than filling memory), then ends the answer. A body cut short, or an app that went away,
    /// closes the connection: the app sees an unfinished answer, never a wrong whole one.
    private func pass(_ stream: BodyStream, keepAlive: Bool, context: ChannelHandlerContext) {
        context.flush()
        let channel = context.channel
        let stopping = settings.configuration.stop
        let passed = context.eventLoop.makePromise(of: Bool.self)
        inFlight = Task(executorPreference: executor) {
            do {
                while let chunk = try await stream.next() {
                    try await channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(channel.allocator.buffer(bytes: chunk))))
                }
                passed.succeed(true)
            } catch {
                // The app's connection went: closed by the app, or by the proxy at the end of its stop's grace.
                stream.cancel(because: stopping.hasStarted ? KioskStopping() : CancellationError())
                passed.succeed(false)
            }
        }
        passing = stream
        passed.futureResult.assumeIsolated().whenSuccess { [self] complete in
            inFlight = nil
            passing = nil
            if complete { end(keepAlive: keepAlive, context: context) } else { context.close(promise: nil) }
        }
    }

    /// An answer the proxy makes itself — the setup page's, a last hop's OPTIONS or TRACE — nothing forwarded or logged.
    private func write(_ setup: ProxySetup.Answer, to request: HTTPRequestHead, context: ChannelHandlerContext) {
        guard !answeredAsUnreadable else { return }  // (`ProxyProtocolErrors` closes the connection once its 400 is written.)
        var headers = HTTPHeaders([("Content-Type", setup.contentType), ("Content-Length", String(setup.body.count)),
                                   ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
                                   ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'"), ("Via", via)])
        headers.add(contentsOf: setup.fields)
        // An upload past the buffer limit still arriving is read to its end and dropped, and the connection then closes,
        // as after an upstream's early answer (`end`): kept open, its unread body would stall the app and the connection.
        let keepAlive = Self.keepsAlive(request) && upload == nil && !bodyAbandoned
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: setup.status, headers: headers))), promise: nil)
        if request.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: setup.body)))), promise: nil)
        }
        end(keepAlive: keepAlive, context: context)
    }

    /// A listener's address as a proxy setting names it: `host:port`, an IPv6 address bracketed.
    private static func shown(_ address: SocketAddress) -> String {
        let host = address.ipAddress ?? "127.0.0.1"
        return (host.contains(":") ? "[\(host)]" : host) + ":\(address.port ?? 0)"
    }

    private func write(_ refusal: ProxyMessages.Refusal, to request: HTTPRequestHead, context: ChannelHandlerContext) {
        guard !answeredAsUnreadable else { return }  // (`ProxyProtocolErrors` closes the connection once its 400 is written.)
        settings.configuration.meter.count { $0.refused += 1 }
        let text = refusal.message + "\n"
        var headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(text.utf8.count)),
                                   ("Cache-Control", "no-store"), ("Via", via)])
        if let challenge = refusal.challenge { headers.add(name: "Proxy-Authenticate", value: challenge) }
        if let cacheStatus = refusal.cacheStatus { headers.add(name: CacheStatus.headerName, value: cacheStatus.headerValue) }
        let keepAlive = Self.keepsAlive(request) && !refusal.closes && upload == nil && !bodyAbandoned
        if !keepAlive { headers.add(name: "Connection", value: "close") } else if request.version == .http1_0 { headers.add(name: "Connection", value: "keep-alive") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: refusal.status, headers: headers))),
                      promise: nil)
        if request.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: text)))), promise: nil)
        }
        end(keepAlive: keepAlive, context: context)
    }

    private func write(_ error: any Error, to request: HTTPRequestHead, context: ChannelHandlerContext) {
        let refusal = error as? ProxyMessages.Refusal ?? ProxyMessages.Refusal(.badRequest, "\(error)")
        write(refusal, to: request, context: context)
    }

    private func end(keepAlive: Bool, context: ChannelHandlerContext) {
        let keepAlive = keepAlive && !inputClosed && !bodyAbandoned
        bodyAbandoned = false
        state = .idle
        if !keepAlive { closing = true }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if awaitsSwitch {
            awaitsSwitch = false
            if keepAlive { resumeParsing(context: context) }
        }
        guard !keepAlive else { return }
        // An answer given before the end of the app's upload: closing now, with its body unread, would reset the
        // connection, and the app could lose the answer with it. Its side is shut instead, and what the app still
        // sends is read and dropped, until its body ends or for 5 s at most.
        let lingering = upload != nil
        written.assumeIsolated().whenComplete { [self] _ in
            guard lingering, let current = upload else { return context.close(promise: nil) }
            upload = nil
            draining = true
            current.pipe.finish(CancellationError())
            context.close(mode: .output, promise: nil)
            Self.resumeReading(context.channel)
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(5)) { bound.value.close(promise: nil) }
        }
    }
}

/// Tells what an app speaks inside an intercepted CONNECT by its first bytes: a TLS handshake record (0x16), plain HTTP
/// (a method's capitals and a space: `curl -p`, ws:// behind HTTPS_PROXY), or anything else — a binary protocol, one a
/// client starts with its own words (Redis's `PING`), or one where the server speaks first (SSH, SMTP), told by the app
/// saying nothing for `serverFirstAfter`. `configure` adds the handlers that read it after this one, which then hands
/// on what it read and leaves. A tunnel that must open to be told apart closes if nothing comes within `timeout`.
final class TunnelSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    /// What the app speaks; `silent` when it said nothing for `serverFirstAfter` (a protocol whose server speaks first).
    enum Speech { case tls, http, other, silent }
    typealias Configure = (ChannelPipeline.SynchronousOperations, TunnelSniffer, Speech) throws -> Void
    private let timeout: Duration
    private let serverFirstAfter: Duration
    private let configure: Configure
    private var deadline: Scheduled<Void>?
    private var silence: Scheduled<Void>?
    private var decided = false
    /// What the app sent before it could be told apart (a method's first capitals).
    private var pending: ByteBuffer?

    init(timeout: Duration, serverFirstAfter: Duration = .seconds(2), configure: @escaping Configure) {
        self.timeout = timeout
        self.serverFirstAfter = serverFirstAfter
        self.configure = configure
    }

    func handlerAdded(context: ChannelHandlerContext) {
        deadline = closing(context.channel, after: timeout)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        silence = context.eventLoop.scheduleTask(in: TimeAmount(serverFirstAfter)) {
            let (sniffer, context) = bound.value
            if !sniffer.decided && sniffer.pending == nil { sniffer.decide(.silent, context: context) }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        silence?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !decided else { return context.fireChannelRead(data) }
        var buffer = unwrapInboundIn(data)
        if var held = pending {
            held.writeBuffer(&buffer)
            buffer = held
        }
        guard let speech = Self.speech(buffer.readableBytesView) else {
            pending = buffer
            return
        }
        pending = buffer
        decide(speech, context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The app finished sending before its first bytes could be told apart (it CONNECTed, read the 200 and closed):
        // there is nothing to read or tunnel, and a target dialled now would be held open by no one.
        if !decided, let event = event as? ChannelEvent, case .inputClosed = event {
            decided = true
            deadline?.cancel()
            silence?.cancel()
            return context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// What `bytes` (the app's first) are in, or nil when too few to tell.
    static func speech(_ bytes: ByteBufferView) -> Speech? {
        guard let first = bytes.first else { return nil }
        if first == 0x16 { return .tls }
        // A method is a token (RFC 9110 §9.1); llhttp knows capitals only, as every client sends them.
        let capitals = bytes.prefix { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
        if capitals.count == bytes.count { return capitals.count > 24 ? .other : nil }
        return !capitals.isEmpty && bytes[bytes.index(bytes.startIndex, offsetBy: capitals.count)] == UInt8(ascii: " ") ? .http : .other
    }

    private func decide(_ speech: Speech, context: ChannelHandlerContext) {
        decided = true
        deadline?.cancel()
        silence?.cancel()
        do {
            try configure(context.pipeline.syncOperations, self, speech)
        } catch {
            return context.close(promise: nil)
        }
        if let held = pending {
            pending = nil
            context.fireChannelRead(NIOAny(held))
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

/// Inside an intercepted CONNECT whose app speaks neither TLS nor HTTP: dials the CONNECT's target (through the outbound
/// policy) while holding what the app sent, then joins the two as a tunnel passed byte for byte and logged as one, as a
/// host not intercepted is — and leaves. The app's connection closes if the target cannot be reached (its 200 is sent).
final class RawTunnelOpener: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias Dial = (any EventLoop) -> EventLoopFuture<any Channel>
    private let dial: Dial
    private let meter: TunnelMeter
    private let quietAfterHalfClose: Duration
    private let failed: (any Error) -> Void
    private var held: [NIOAny] = []
    private var joined = false

    init(meter: TunnelMeter, quietAfterHalfClose: Duration, dial: @escaping Dial, failed: @escaping (any Error) -> Void) {
        self.meter = meter
        self.quietAfterHalfClose = quietAfterHalfClose
        self.dial = dial
        self.failed = failed
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // Nothing more is read until the upstream can take it.
        try? context.channel.syncOptions?.setOption(.autoRead, value: false)
        dial(context.eventLoop).assumeIsolated().whenComplete { [self] result in
            switch result {
            case .failure(let error):
                failed(error)
                context.close(promise: nil)
            case .success(let upstream):
                // The app went while the target was dialled: nothing to join (its end would never hear it close).
                guard context.channel.isActive else {
                    upstream.close(promise: nil)
                    return
                }
                let (appEnd, upstreamEnd) = TunnelEnd.pair(meter: meter, quietAfterHalfClose: quietAfterHalfClose)
                do {
                    try upstream.pipeline.syncOperations.addHandler(upstreamEnd)
                    try context.pipeline.syncOperations.addHandler(appEnd, position: .after(self))
                } catch {
                    upstream.close(promise: nil)
                    return context.close(promise: nil)
                }
                joined = true
                meter.trackConnect()
                for data in held { context.fireChannelRead(data) }
                held = []
                context.fireChannelReadComplete()
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                try? context.channel.syncOptions?.setOption(.autoRead, value: true)
                context.read()
            }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if joined { return context.fireChannelRead(data) }
        held.append(data)
    }
}

/// Closes `channel` `timeout` from now, unless the task returned is cancelled first.
private func closing(_ channel: any Channel, after timeout: Duration) -> Scheduled<Void> {
    return channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
        channel.close(promise: nil)
    }
}

/// Closes an app's intercepted connection whose TLS handshake has not completed within `timeout` of its hello's first
/// byte, else leaves once the app's first request comes: an app that sends half a hello, or never its last flight, does
/// not hold its connection for ever. A handshake that fails is reported once, saying why: most often the app does not
/// trust Kiosk's CA, the first thing a developer setting up interception meets, which was seen nowhere. So is an app
/// that refuses the certificate once the handshake is done (TLS 1.3 ends the server's side first; a pinned app checks
/// after it), with an alert or by closing at once, before any request.
final class HandshakeDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    private let timeout: Duration
    private var deadline: Scheduled<Void>?
    /// The name of the leaf Kiosk answers the app's hello with, once chosen: its handshake has begun.
    var leafName: String?
    private var report: ((String) -> Void)?
    /// When the handshake completed, while no request has come after it.
    private var completedAt: ContinuousClock.Instant?
    /// How soon after the handshake a close without a request is read as a refusal of the certificate: an app that
    /// checks it itself closes at once; one that opened a connection ahead of need (a browser's preconnect) idles first.
    static let refusalWindow = Duration.seconds(1)

    init(timeout: Duration, report: @escaping (String) -> Void) {
        self.timeout = timeout
        self.report = report
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let timeout = timeout
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(timeout)) { [self] in
            let within = "The app's TLS handshake did not complete within " + String(format: "%g", timeout.seconds) + " s"
            tell(within + (leafName.map { ", after Kiosk's certificate for \($0): the app stopped answering." }
                           ?? ": it sent part of its hello and stopped."))
            context.channel.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        report = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        context.fireUserInboundEventTriggered(event)
        if case .handshakeCompleted? = event as? TLSUserEvent {
            deadline?.cancel()
            completedAt = .now
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // The app's first request: it took the certificate. Nothing more to watch.
        context.fireChannelRead(data)
        if completedAt != nil {
            report = nil
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let leafName {
            // After the handshake, only an alert refusing the certificate says so; any other end is judged as it closes.
            if completedAt == nil { tell(Self.failure(error, leafName: leafName)) } else if let refusal = Self.refusal(error, leafName: leafName) {
                tell(refusal)
            }
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let leafName {
            if let completedAt {
                if ContinuousClock.now - completedAt < Self.refusalWindow { tell(Self.closedAfterHandshake(leafName)) }
            } else {
                tell(Self.closed(leafName))
            }
        }
        context.fireChannelInactive()
    }

    /// Closed at once after a completed handshake, before any request: an app that checks the certificate itself.
    private static func closedAfterHandshake(_ leafName: String) -> String {
        "The app closed its connection right after its TLS handshake with Kiosk's certificate for \(leafName), before any "
            + "request: an app that checks the certificate itself once the handshake is done (one that pins its server's key, or "
            + "one that does not trust Kiosk's CA under TLS 1.3) does this. `kiosk proxy --ignore \(leafName)` passes its "
            + "connections on unread; `kiosk proxy ca` prints the CA for an app that only needs to trust it."
    }

    /// Closed with no alert after Kiosk's certificate went to it: what an app that refuses a certificate often does.
    /// (NIOSSL tells it as an error first, "EOF during handshake".)
    private static func closed(_ leafName: String) -> String {
        "The app closed its connection during the TLS handshake, after Kiosk's certificate for \(leafName): most likely it "
            + "does not trust Kiosk's CA. `kiosk proxy ca` prints the CA for the app to trust; the console's proxy page says how."
    }

    private func tell(_ problem: String) {
        report?(problem)
        report = nil
    }

    /// BoringSSL's reasons in `error` (`…:OPENSSL_internal:TLSV1_ALERT_UNKNOWN_CA at file:line`), without its source paths.
    private static func reasons(_ error: any Error) -> [String] {
        String(describing: error).components(separatedBy: "OPENSSL_internal:").dropFirst()
            .map { String($0.prefix { $0.isLetter || $0.isNumber || $0 == "_" }) }.filter { !$0.isEmpty }
    }

    private static let trust = "`kiosk proxy ca` prints the CA for the app to trust; the console's proxy page says how."

    /// The sentence for an alert in `error` by which the app refused Kiosk's certificate; nil when it holds none.
    static func refusal(_ error: any Error, leafName: String) -> String? {
        let reasons = reasons(error)
        let refusals = [("ALERT_UNKNOWN_CA", "unknown CA"), ("ALERT_BAD_CERTIFICATE", "bad certificate"),
                        ("ALERT_CERTIFICATE_UNKNOWN", "certificate unknown"), ("ALERT_UNSUPPORTED_CERTIFICATE", "unsupported certificate"),
                        ("ALERT_CERTIFICATE_EXPIRED", "certificate expired"), ("ALERT_ACCESS_DENIED", "access denied")]
        guard let (_, alert) = refusals.first(where: { refusal in reasons.contains { $0.hasSuffix(refusal.0) } }) else { return nil }
        let clock = alert == "certificate expired" ? " (or its clock is wrong: the certificate is valid from a day ago for 45 days)" : ""
        return "The app refused Kiosk's certificate for \(leafName) (TLS alert: \(alert))\(clock): it does not trust Kiosk's CA. " + trust
    }

    /// Why the app's side of the handshake failed, from the alert it sent (BoringSSL names it in its error).
    static func failure(_ error: any Error, leafName: String) -> String {
        let text = String(describing: error)
        if text.contains("EOF during handshake") || text.contains("Connection reset by peer") { return closed(leafName) }
        if let refusal = refusal(error, leafName: leafName) { return refusal }
        let reasons = reasons(error)
        if reasons.contains(where: { ["NO_SHARED_CIPHER", "NO_SHARED_GROUP", "WRONG_CURVE", "UNSUPPORTED_PROTOCOL", "ALERT_PROTOCOL_VERSION"].contains($0) }) {
            return "The app's TLS and Kiosk's have nothing in common (Kiosk speaks TLS 1.2 and 1.3, with current ciphers and "
                + "ECDHE key exchange): " + reasons.joined(separator: ", ") + "."
        }
        // A hello Kiosk could not read, before its certificate was sent: no question of trust.
        if reasons.contains(where: { ["CLIENTHELLO_PARSE_FAILED", "EXCESSIVE_MESSAGE_SIZE", "WRONG_VERSION_NUMBER"].contains($0) }) {
            return "The app's TLS hello could not be read, so no certificate went to it (" + reasons.joined(separator: ", ") + ")."
        }
        // Most often an app that refused the certificate with an alert Kiosk could not read (curl's, under TLS 1.3).
        return "The app ended the TLS handshake after Kiosk's certificate for \(leafName) ("
            + (reasons.isEmpty ? text : reasons.joined(separator: ", ")) + "): most likely it does not trust Kiosk's CA. " + trust
    }
}

/// Completes `promise` once the TLS handshake of an upstream connection is done, or fails it with why it was not.
final class HandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    let promise: EventLoopPromise<Void>
    /// The host whose certificate is refused when too weak to trust or naming it only by its address
    /// (`CertificateStrength`); nil with `--insecure-upstream`.
    private let checkedHost: String?
    private var done = false

    init(promise: EventLoopPromise<Void>, checking host: String?) {
        self.promise = promise
        self.checkedHost = host
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent {
            do {
                if let checkedHost { try context.pipeline.syncOperations.refuseWeakPeerCertificate(naming: checkedHost) }
                finish(nil)
            } catch {
                finish(error)
                context.close(promise: nil)
                return
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(error)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(ChannelError.eof)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish(ChannelError.ioOnClosedChannel)
    }

    private func finish(_ error: (any Error)?) {
        guard !done else { return }
        done = true
        if let error { promise.fail(error) } else { promise.succeed() }
    }
}
