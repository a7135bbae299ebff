import Foundation
import KioskCore
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import NIOPosix
import NIOSSL
import NIOTLS

// Kiosk's HTTP client, on SwiftNIO's own codecs: connections to upstreams, pooled per event loop, each carrying an
// exchange at a time (HTTP/1.1) or one on each of its streams (HTTP/2, when the upstream's TLS offers it). It replaced
// AsyncHTTPClient, whose request and pool machinery cost a proxied exchange about as much CPU again as reading, parsing
// and writing it (docs/PROXY.md): a proxy asks of a client only what this does. Everything here runs on the connection's
// event loop; the transport (`UpstreamTransport`) hops there first.

/// Where an upstream connection goes, and so which exchanges may share it.
struct UpstreamKey: Hashable, Sendable {
    /// Whether the connection speaks TLS to the upstream.
    var tls: Bool
    /// The host dialled (the origin's, or its `--connect-to` override's), and named in TLS's SNI and checked against the
    /// certificate.
    var host: String
    /// The port dialled.
    var port: Int
    /// The HTTP proxy the connection goes through, by a tunnel (CONNECT) to `host` and `port`, for plain HTTP too (so
    /// that the host dialled, a `--connect-to` override's, is the one the proxy reaches). nil: direct.
    var proxy: ProxyAddress?
    /// Whether every address dialled must be public (the outbound policy's rule for the request: an app's on another
    /// machine, a picture from outside the sources), checked on the addresses the connection dials.
    var publicOnly = false
}

/// An HTTP proxy's address.
struct ProxyAddress: Hashable, Sendable {
    var host: String
    var port: Int
}

/// What went wrong with an upstream connection that NIO's own errors do not say.
enum UpstreamError: Error, Equatable, Sendable {
    /// The connection closed (or was closed) before the answer's end.
    case closed
    /// The TLS handshake did not end within the connect timeout.
    case tlsHandshakeTimeout
    /// The HTTP proxy would not open a tunnel: its status (0: its answer was not HTTP).
    case tunnelRefused(status: Int)
    /// The exchange was stopped by its caller (its timer, the app gone, a cancelled task).
    case cancelled
    /// The transport was shut down.
    case shutDown
}

/// How the exchange's answer may go on after a part was read.
enum PartOutcome {
    /// Read on.
    case more
    /// Read no more until the future completes (the reader has not taken what it was given).
    case wait(EventLoopFuture<Void>)
    /// End the exchange with this error.
    case fail(any Error)
}

/// One exchange on an upstream connection: what to send, and who is told of the answer.
final class UpstreamExchange: @unchecked Sendable {
    // Unchecked: touched on its connection's event loop only, once it is started there.
    let head: HTTPRequestHead
    let body: ByteBuffer?
    let upload: BodyStream?
    let collector: ResponseCollector
    /// Told of each interim answer (1xx other than 100 and 101) before the final one, when someone passes them on.
    let interim: ((HTTPResponseHead) -> Void)?
    /// Told once how the exchange ended (see `end`).
    private let ended: (_ failure: (any Error)?) -> Void
    private var done = false
    /// The handler carrying it, once started (for `cancel`).
    fileprivate var handler: UpstreamExchangeHandler?
    /// Whether it was stopped by its caller: a connection it gets afterwards carries nothing for it.
    private(set) var cancelled = false

    init(head: HTTPRequestHead, body: ByteBuffer?, upload: BodyStream?, collector: ResponseCollector,
         interim: ((HTTPResponseHead) -> Void)? = nil, ended: @escaping (_ failure: (any Error)?) -> Void) {
        self.head = head
        self.body = body
        self.upload = upload
        self.collector = collector
        self.interim = interim
        self.ended = ended
    }

    /// Ends the exchange, once: nil when its answer's end was read, else why not. Later calls do nothing.
    func end(_ failure: (any Error)?) {
        guard !done else { return }
        done = true
        handler = nil
        ended(failure)
    }

    /// Stops the exchange, on its loop: ended at once, and its connection closed if it is on one (an HTTP/1.1 one cannot
    /// carry another mid-answer).
    func cancel() {
        cancelled = true
        if let handler { handler.stop(self, UpstreamError.cancelled) } else { end(UpstreamError.cancelled) }
    }
}

/// Carries exchanges on one HTTP/1.1 connection (one after another) or one HTTP/2 stream, telling each's collector of
/// its answer as it is read, and reading no further while the collector's reader lags (back-pressure): parts one read
/// brought after the one the reader has not taken wait here, in order, until it has.
final class UpstreamExchangeHandler: ChannelDuplexHandler, @unchecked Sendable {
    // Unchecked: NIO calls a handler on its channel's loop only, and the pool does too.
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private var context: ChannelHandlerContext?
    private var exchange: UpstreamExchange?
    /// What the channel's pipeline said went wrong, told to the exchange when the channel closes.
    private var error: (any Error)?
    private var paused = false
    /// Parts read while paused, handed on in order once the reader took the one it lagged on.
    private var queued: CircularBuffer<HTTPClientResponsePart> = []
    /// Whether the channel closed while parts still waited: the exchange ends once they are handed on.
    private var closedWhilePaused = false
    private var readPending = false
    private var keepAlive = true
    private var requestSent = false
    /// Whether it carries an HTTP/2 stream, whose request's writes are watched (one refused after the connection's GOAWAY
    /// fails its write, not its read) and whose answer's head is the codec's translation.
    private let watchesWrites: Bool
    /// Told when an exchange ended on a connection that may carry another (HTTP/1.1 kept alive): the pool's.
    var reusable: (() -> Void)?
    /// Told once when the channel closed.
    var closed: (() -> Void)?

    init(watchesWrites: Bool = false) {
        self.watchesWrites = watchesWrites
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Whether the connection is open, with no exchange on it.
    var isIdle: Bool { exchange == nil && (context?.channel.isActive ?? false) }

    /// Sends `exchange`'s request and starts reading its answer.
    func begin(_ exchange: UpstreamExchange) {
        guard let context, context.channel.isActive else { return exchange.end(UpstreamError.closed) }
        self.exchange = exchange
        exchange.handler = self
        error = nil
        paused = false
        queued.removeAll()
        closedWhilePaused = false
        requestSent = false
        keepAlive = exchange.head.isKeepAlive
        var written: EventLoopPromise<Void>?
        if watchesWrites {
            let promise = context.eventLoop.makePromise(of: Void.self)
            promise.futureResult.assumeIsolatedUnsafeUnchecked().whenFailure { [self] error in stop(exchange, error) }
            written = promise
        }
        context.write(wrapOutboundOut(.head(exchange.head)), promise: written)
        if let body = exchange.body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        if let upload = exchange.upload {
            context.flush()
            exchange.collector.didSendRequestHead()
            send(upload, of: exchange, on: context.channel)
        } else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            exchange.collector.didSendRequestHead()
            requestSent = true
            exchange.collector.didSendRequest()
        }
        // A read the last exchange held back (its reader lagged as it ended) is this one's to make.
        if readPending {
            readPending = false
            context.read()
        }
    }

    /// Writes a streamed upload part by part, each once the one before was written (the app's side is held back
    /// meanwhile). An upload that ends early, or an exchange that ends before its upload, stops the other side.
    private func send(_ upload: BodyStream, of exchange: UpstreamExchange, on channel: any Channel) {
        let loop = channel.eventLoop
        let handler = NIOLoopBound(self, eventLoop: loop)
        let carried = NIOLoopBound(exchange, eventLoop: loop)
        let collector = exchange.collector
        Task {
            do {
                while let chunk = try await upload.next() {
                    try await channel.writeAndFlush(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: chunk)))).get()
                    collector.didSendUploadPart()
                }
                try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
                loop.execute {
                    guard handler.value.exchange === carried.value else { return }
                    handler.value.requestSent = true
                    carried.value.collector.didSendRequest()
                }
            } catch {
                upload.cancel()
                loop.execute { handler.value.stop(carried.value, error) }
            }
        }
    }

    /// Ends `exchange` with `error` if it is still this handler's, closing the channel (and stopping an upload still
    /// going).
    func stop(_ exchange: UpstreamExchange, _ error: any Error) {
        guard self.exchange === exchange else { return }
        detach(exchange)
        exchange.end(error)
        context?.close(promise: nil)
    }

    /// Lets go of `exchange`: nothing more of it is read, and an upload not yet sent whole is stopped.
    private func detach(_ exchange: UpstreamExchange) {
        self.exchange = nil
        paused = false
        queued.removeAll()
        if !requestSent { exchange.upload?.cancel() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let exchange else {
            // Bytes of an answer nobody asked for, on an idle connection: it cannot be trusted with another request.
            return context.close(promise: nil)
        }
        let part = unwrapInboundIn(data)
        if paused { return queued.append(part) }
        handle(part, of: exchange, context: context)
    }

    /// Hands `part` to `exchange`'s collector, pausing if it must wait.
    private func handle(_ part: HTTPClientResponsePart, of exchange: UpstreamExchange, context: ChannelHandlerContext) {
        let outcome: PartOutcome
        switch part {
        case .head(let head):
            // A status outside 100–599 is no HTTP status: NIO's parser reads it as a final answer, Kiosk refuses it.
            if !(100...599).contains(head.status.code) { return stop(exchange, NotAnHTTPStatus(code: head.status.code)) }
            // The limit NIO's parser keeps on names and values, kept on the section as it came (an interim answer's too):
            // short fields by the thousand passed it.
            if head.headers.sectionSize > UpstreamTransport.maximumAnswerHeadBytes { return stop(exchange, HTTPParserError.headerOverflow) }
            // An informational answer (103 Early Hints, 102) goes to whoever passes them on (the proxy's app) and the final
            // one follows; a 100 Continue is the proxy's own to give its app, never the upstream's.
            if head.status.code < 200 && head.status != .switchingProtocols {
                if head.status != .continue { exchange.interim?(head) }
                return
            }
            if !head.isKeepAlive { keepAlive = false }
            // HTTP/2 has no Transfer-Encoding: NIO's codec adds `chunked` to a head without a length, which the upstream
            // never sent; the log shows the answer's fields as they came.
            var head = head
            if watchesWrites { head.headers.remove(name: "Transfer-Encoding") }
            outcome = exchange.collector.didReceiveHead(head, of: exchange)
        case .body(let buffer):
            outcome = exchange.collector.didReceiveBodyPart(buffer, of: exchange)
        case .end:
            let reusable = keepAlive && requestSent
            detach(exchange)
            // An answer whose end only the connection's closing marks: the parser ends it as the connection goes, after the
            // pipeline said how it went. A plain close is its end; TLS closed without close_notify too, which the transport
            // notes on the exchange; a reset, or a TLS record that failed, cut it short: a failure, never a shorter answer.
            exchange.end(error)
            if reusable, let release = self.reusable { release() } else { context.close(promise: nil) }
            return
        }
        switch outcome {
        case .more:
            break
        case .fail(let error):
            stop(exchange, error)
        case .wait(let resumed):
            paused = true
            resumed.hop(to: context.eventLoop).assumeIsolatedUnsafeUnchecked().whenComplete { [self] _ in resume(exchange) }
        }
    }

    /// The reader took the part `exchange` waited on: the parts read meanwhile go on, then reading resumes.
    private func resume(_ exchange: UpstreamExchange) {
        guard paused, self.exchange === exchange, let context else { return }
        paused = false
        while !paused, let part = queued.popFirst() {
            guard let current = self.exchange else { return context.close(promise: nil) }
            handle(part, of: current, context: context)
        }
        if closedWhilePaused, !paused, let current = self.exchange {
            detach(current)
            current.end(error ?? UpstreamError.closed)
        }
        if !paused, readPending {
            readPending = false
            context.read()
        }
    }

    func read(context: ChannelHandlerContext) {
        if paused { readPending = true } else { context.read() }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if self.error == nil { self.error = error }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let exchange {
            if paused && !queued.isEmpty {
                // What was read before the close (the end of an answer delimited by it, say) still goes to the reader.
                closedWhilePaused = true
            } else {
                detach(exchange)
                exchange.end(error ?? UpstreamError.closed)
            }
        }
        closed?()
        closed = nil
        context.fireChannelInactive()
    }
}

/// Tells its connection's pool when an HTTP/2 upstream sends GOAWAY: the connection finishes its streams but takes no
/// new one, so the next exchange opens another.
private final class GoAwayWatcher: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    var goingAway: (() -> Void)?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .goAway = unwrapInboundIn(data).payload {
            goingAway?()
            goingAway = nil
        }
    }
}

/// One connection to an upstream, ready to carry exchanges.
final class UpstreamConnection: @unchecked Sendable {
    // Unchecked: touched on its channel's loop only.
    let channel: any Channel
    let key: UpstreamKey
    /// When it was dialled and when it could carry a request.
    let setup: ConnectionSetup
    /// HTTP/1.1's one handler, or HTTP/2's streams.
    let protocolState: ProtocolState
    /// When it last went idle: HTTP/1.1 between exchanges, HTTP/2 with no stream open.
    var idleSince = NIODeadline.now()
    /// Whether it takes no new exchange: the upstream sent GOAWAY (HTTP/2), or another connection to the same upstream
    /// was ready first (HTTP/2: one carries them all); it closes once the streams it carries end.
    var draining = false
    /// HTTP/2 streams open on it.
    private var streams = 0
    /// Whether an HTTP/2 stream is open on it.
    var carriesStreams: Bool { streams > 0 }

    /// An HTTP/2 stream ended: the connection goes idle with its last, and closes then when draining.
    private func streamEnded() {
        streams -= 1
        guard streams == 0 else { return }
        idleSince = NIODeadline.now()
        if draining { channel.close(promise: nil) }
    }

    enum ProtocolState {
        case http1(UpstreamExchangeHandler)
        case http2(NIOHTTP2Handler.StreamMultiplexer, decompresses: Bool)
    }

    init(channel: any Channel, key: UpstreamKey, setup: ConnectionSetup, protocolState: ProtocolState) {
        self.channel = channel
        self.key = key
        self.setup = setup
        self.protocolState = protocolState
    }

    /// Takes no new exchange, and closes once the streams it carries end (at once if none).
    func drain() {
        draining = true
        if streams == 0 { channel.close(promise: nil) }
    }

    /// Tells `goingAway` when the upstream sends GOAWAY on this (HTTP/2) connection.
    func watchGoAway(_ goingAway: @escaping () -> Void) {
        (try? channel.pipeline.syncOperations.handler(type: GoAwayWatcher.self))?.goingAway = goingAway
    }

    /// Starts `exchange` on this connection: on it (HTTP/1.1), or on a new stream of it (HTTP/2).
    func start(_ exchange: UpstreamExchange) {
        switch protocolState {
        case .http1(let handler):
            // Stopped while this connection was being opened for it: the connection is the pool's, unused.
            if exchange.cancelled { return handler.reusable?() ?? channel.close(promise: nil) }
            handler.begin(exchange)
        case .http2(let multiplexer, let decompresses):
            if exchange.cancelled { return }
            streams += 1
            let opened = channel.eventLoop.makePromise(of: (any Channel).self)
            multiplexer.createStreamChannel(promise: opened) { stream in
                stream.eventLoop.makeCompletedFuture {
                    let operations = stream.pipeline.syncOperations
                    try operations.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https))
                    if decompresses { try operations.addHandler(NIOHTTPResponseDecompressor(limit: .ratio(UpstreamTransport.decompressionRatio))) }
                    try operations.addHandler(UpstreamExchangeHandler(watchesWrites: true))
                }
            }
            opened.futureResult.assumeIsolatedUnsafeUnchecked().whenComplete { [self] result in
                switch result {
                case .success(let stream):
                    stream.closeFuture.assumeIsolatedUnsafeUnchecked().whenComplete { [self] _ in streamEnded() }
                    guard let handler = try? stream.pipeline.syncOperations.handler(type: UpstreamExchangeHandler.self),
                          !exchange.cancelled else {
                        exchange.end(UpstreamError.cancelled)
                        return stream.close(promise: nil)
                    }
                    handler.begin(exchange)
                case .failure(let error):
                    streamEnded()
                    exchange.end(error)
                }
            }
        }
    }
}

/// The connections of one event loop, to every upstream: HTTP/1.1 ones idle between exchanges, the HTTP/2 one of each
/// upstream that speaks it. An exchange takes the most recently idle connection (the likeliest to be still open), or
/// opens one; none waits for another's connection to come free, so a proxy carries an app's parallel requests as the
/// app sends them.
final class UpstreamPool: @unchecked Sendable {
    // Unchecked: touched on `loop` only.
    let loop: any EventLoop
    private let connector: UpstreamConnector
    private var idle: [UpstreamKey: [UpstreamConnection]] = [:]
    private var http2: [UpstreamKey: UpstreamConnection] = [:]
    private var all: [ObjectIdentifier: UpstreamConnection] = [:]
    private var sweeper: RepeatedTask?
    private var shutDown = false
    /// Connections idle longer than this are closed, HTTP/1.1 and HTTP/2 alike (servers close theirs after 5 s to a few
    /// minutes; a proxy that ran for days must not keep one to every host an app ever asked).
    private let idleTimeout: TimeAmount
    /// Idle connections kept to one upstream at most.
    static let idleLimit = 256

    init(loop: any EventLoop, connector: UpstreamConnector, idleTimeout: TimeAmount) {
        self.loop = loop
        self.connector = connector
        self.idleTimeout = idleTimeout
    }

    /// A connection for `key`: an open one (`reused`), or one opened now.
    enum Lease {
        case reused(UpstreamConnection)
        case opening(EventLoopFuture<UpstreamConnection>)
    }

    /// A connection for `key`, on this pool's loop; `url` words a refusal of the addresses a new one would dial.
    func lease(_ key: UpstreamKey, url: URL) -> Lease {
        loop.preconditionInEventLoop()
        if shutDown { return .opening(loop.makeFailedFuture(UpstreamError.shutDown)) }
        if let connection = http2[key], connection.channel.isActive, !connection.draining { return .reused(connection) }
        while let connection = idle[key]?.popLast() {
            if case .http1(let handler) = connection.protocolState, handler.isIdle { return .reused(connection) }
        }
        let opening = connector.open(key, url: url, on: loop).assumeIsolatedUnsafeUnchecked().map { [self] connection in
            adopt(connection)
            return connection
        }
        return .opening(opening.nonisolated())
    }

    /// Takes `connection` into the pool: kept while open, idle between exchanges if HTTP/1.1.
    private func adopt(_ connection: UpstreamConnection) {
        let id = ObjectIdentifier(connection)
        all[id] = connection
        if sweeper == nil {
            // Looked at every 10 s, or twice per timeout when it is shorter.
            let every = min(TimeAmount.seconds(10), TimeAmount.nanoseconds(idleTimeout.nanoseconds / 2))
            sweeper = loop.scheduleRepeatedTask(initialDelay: every, delay: every) { [self] _ in sweep() }
        }
        switch connection.protocolState {
        case .http1(let handler):
            handler.reusable = { [self, unowned connection] in release(connection) }
            handler.closed = { [self, unowned connection] in forget(connection) }
        case .http2:
            connection.channel.closeFuture.assumeIsolatedUnsafeUnchecked().whenComplete { [self] _ in forget(connection) }
            connection.watchGoAway { [self, unowned connection] in
                if http2[connection.key] === connection { http2[connection.key] = nil }
                connection.drain()
            }
            // Requests that found no connection to an upstream each opened one; of those that speak HTTP/2, the first
            // ready carries every later exchange, and the others close once their first exchange ends.
            if let ready = http2[connection.key], ready.channel.isActive, !ready.draining {
                connection.draining = true
            } else {
                http2[connection.key] = connection
            }
        }
        if shutDown { connection.channel.close(promise: nil) }
    }

    /// An HTTP/1.1 connection whose exchange ended and which may carry another.
    private func release(_ connection: UpstreamConnection) {
        guard !shutDown, (idle[connection.key]?.count ?? 0) < Self.idleLimit else {
            return connection.channel.close(promise: nil)
        }
        connection.idleSince = .now()
        idle[connection.key, default: []].append(connection)
    }

    /// A connection that closed.
    private func forget(_ connection: UpstreamConnection) {
        all[ObjectIdentifier(connection)] = nil
        if http2[connection.key] === connection { http2[connection.key] = nil }
        idle[connection.key]?.removeAll { $0 === connection }
        if idle[connection.key]?.isEmpty == true { idle[connection.key] = nil }
    }

    /// Closes the connections idle past `idleTimeout`: HTTP/1.1 ones between exchanges, HTTP/2 ones with no stream open.
    /// Each leaves the pool first: closing TLS waits for its close_notify to go out, and a connection still open
    /// meanwhile must not be given to an exchange.
    private func sweep() {
        let oldest = NIODeadline.now() - idleTimeout
        for (key, connections) in idle {
            let stale = connections.filter { $0.idleSince < oldest }
            guard !stale.isEmpty else { continue }
            idle[key] = connections.filter { $0.idleSince >= oldest }
            if idle[key]?.isEmpty == true { idle[key] = nil }
            for connection in stale { connection.channel.close(promise: nil) }
        }
        for (key, connection) in http2 where !connection.carriesStreams && connection.idleSince < oldest {
            http2[key] = nil
            connection.draining = true
            connection.channel.close(promise: nil)
        }
    }

    /// Closes every connection, and opens none again.
    func close() -> EventLoopFuture<Void> {
        loop.submit { [self] in
            shutDown = true
            sweeper?.cancel()
            sweeper = nil
            return all.values.map(\.channel)
        }.flatMap { channels in
            EventLoopFuture.andAllComplete(channels.map { $0.close() }, on: self.loop)
        }
    }
}

/// Opens connections to upstreams: TCP (through an HTTP proxy's tunnel when there is one), TLS with ALPN, then
/// HTTP/1.1 or HTTP/2 as the upstream chose.
final class UpstreamConnector: Sendable {
    private let connectTimeout: TimeAmount
    /// The TLS every upstream connection speaks, or why it cannot be made (an unreadable `--upstream-ca`).
    private let tls: Result<NIOSSLContext, any Error>
    /// Whether certificates are checked, and so refused when too weak (`CertificateStrength`): not with `--insecure-upstream`.
    private let checksCertificates: Bool
    /// Whether answers' content codings are undone (Kiosk's own requests; never a proxy's).
    let decompresses: Bool
    /// Looks names up for the connections it dials (DialAddresses.swift).
    let resolver: any HostResolver

    init(connectTimeout: TimeAmount, tls configuration: TLSConfiguration, decompresses: Bool, resolver: any HostResolver) {
        self.connectTimeout = connectTimeout
        var configuration = configuration
        configuration.applicationProtocols = ["h2", "http/1.1"]
        tls = Result { try NIOSSLContext(configuration: configuration) }
        checksCertificates = configuration.certificateVerification != .none
        self.decompresses = decompresses
        self.resolver = resolver
    }

    /// A connection for `key` on `loop`, ready for requests; `url` words a refusal of its addresses.
    func open(_ key: UpstreamKey, url: URL, on loop: any EventLoop) -> EventLoopFuture<UpstreamConnection> {
        let opened = ContinuousClock.now
        let dialled = key.proxy.map { ($0.host, $0.port) } ?? (key.host, key.port)
        let timeout = connectTimeout
        let decompresses = decompresses
        let tls = tls
        let checksCertificates = checksCertificates
        // Through an HTTP proxy, the addresses dialled are the proxy's: the upstream's name is the proxy's to resolve.
        let publicOnly = key.publicOnly && key.proxy == nil
        // An address is dialled as it is, at once: asking a resolver for it (both families, as for a name) waits on one
        // that may not answer (no network but loopback), and a refusal would then be told as a timeout. A name is looked
        // up first (timed: the exchange's DNS phase) within the connect timeout, and its addresses raced, in the time
        // left, as NIO races a name's.
        let connecting: EventLoopFuture<(any Channel, ContinuousClock.Instant?)>
        if let address = try? SocketAddress(ipAddress: dialled.0, port: dialled.1) {
            if publicOnly, let reason = DialAddresses.refusal(of: [address], host: dialled.0) {
                return loop.makeFailedFuture(KioskError.refused(url: url.redactedString, reason: reason))
            }
            connecting = ClientBootstrap(group: loop).connectTimeout(timeout).connect(to: address).map { ($0, nil) }
        } else {
            let resolver = resolver
            connecting = loop.makeFutureWithTask {
                try await DialAddresses.look(up: dialled.0, port: dialled.1, publicOnly: publicOnly, resolver: resolver,
                                             within: Self.duration(timeout), url: { url.redactedString })
            }.flatMap { addresses in
                let resolved = ContinuousClock.now
                let left = max(TimeAmount.milliseconds(1), timeout - TimeAmount.nanoseconds(Int64(Self.nanoseconds(resolved - opened))))
                return ClientBootstrap(group: loop).connectTimeout(left).resolver(FixedAddresses(addresses, on: loop))
                    .connect(host: dialled.0, port: dialled.1).map { ($0, resolved) }
            }
        }
        return connecting
            .flatMap { channel, resolved -> EventLoopFuture<UpstreamConnection> in
                let closeOnFailure: @Sendable (any Error) -> EventLoopFuture<UpstreamConnection> = { error in
                    channel.close(promise: nil)
                    return channel.eventLoop.makeFailedFuture(error)
                }
                // The protocol TLS's ALPN chose, and when TCP (and the tunnel) was up and the handshake began: the start
                // of the exchange's TLS phase.
                var ready = channel.eventLoop.makeSucceededFuture((negotiated: String?.none, connected: ContinuousClock.Instant?.none))
                if let proxy = key.proxy {
                    ready = Self.tunnel(channel, through: proxy, to: key, timeout: timeout).map { (nil, nil) }
                }
                if key.tls {
                    ready = ready.flatMap { _ in
                        let connected = ContinuousClock.now
                        return channel.eventLoop.makeCompletedFuture { try tls.get() }.flatMap { context in
                            Self.handshake(channel, context: context, serverName: key.host, checksCertificate: checksCertificates,
                                           timeout: timeout)
                        }.map { (negotiated: $0, connected: connected) }
                    }
                }
                return ready.flatMapThrowing { negotiated, connected in
                    let setup = ConnectionSetup(opened: opened, resolved: resolved, connected: connected, established: ContinuousClock.now)
                    let operations = channel.pipeline.syncOperations
                    if negotiated == "h2" {
                        let multiplexer = try operations.configureHTTP2Pipeline(
                            mode: .client, connectionConfiguration: .init(), streamConfiguration: .init()
                        ) { stream in stream.close() }
                        try operations.addHandler(GoAwayWatcher())
                        return UpstreamConnection(channel: channel, key: key, setup: setup,
                                                  protocolState: .http2(multiplexer, decompresses: decompresses))
                    }
                    // What addHTTPClientHandlers adds, with a proxy's interim answers read rather than dropped (a
                    // decompressing client, Kiosk's own, has no use for them).
                    try operations.addHandler(HTTPRequestEncoder())
                    try operations.addHandler(ByteToMessageHandler(HTTPResponseDecoder(
                        leftOverBytesStrategy: .fireError, informationalResponseStrategy: decompresses ? .drop : .forward)))
                    try operations.addHandler(NIOHTTPRequestHeadersValidator())
                    if decompresses { try operations.addHandler(NIOHTTPResponseDecompressor(limit: .ratio(UpstreamTransport.decompressionRatio))) }
                    let handler = UpstreamExchangeHandler()
                    try operations.addHandler(handler)
                    return UpstreamConnection(channel: channel, key: key, setup: setup, protocolState: .http1(handler))
                }.flatMapError(closeOnFailure)
            }
    }

    /// `amount` as a Duration.
    private static func duration(_ amount: TimeAmount) -> Duration { .nanoseconds(amount.nanoseconds) }

    /// `duration` in whole nanoseconds.
    private static func nanoseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
    }

    /// Adds TLS to `channel` and waits for its handshake (at most `timeout`), refusing a weak certificate when
    /// `checksCertificate`: the protocol the upstream chose by ALPN.
    private static func handshake(_ channel: any Channel, context: NIOSSLContext, serverName: String, checksCertificate: Bool,
                                  timeout: TimeAmount) -> EventLoopFuture<String?> {
        let done = channel.eventLoop.makePromise(of: String?.self)
        do {
            // An IP address is no name for SNI (RFC 6066 §3): the certificate is then checked against the peer's address.
            let named = IPAddress(literal: serverName) == nil ? serverName : nil
            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: named))
            try channel.pipeline.syncOperations.addHandler(HandshakeWaiter(done: done, checking: checksCertificate ? serverName : nil,
                                                                                timeout: timeout))
        } catch {
            done.fail(error)
        }
        return done.futureResult
    }

    /// Asks `proxy` (the channel's peer) for a tunnel to `key`'s host and port, and waits at most `timeout` for its yes.
    private static func tunnel(_ channel: any Channel, through proxy: ProxyAddress, to key: UpstreamKey,
                               timeout: TimeAmount) -> EventLoopFuture<Void> {
        let done = channel.eventLoop.makePromise(of: Void.self)
        let authority = key.host.contains(":") ? "[\(key.host)]:\(key.port)" : "\(key.host):\(key.port)"
        do {
            try channel.pipeline.syncOperations.addHandler(TunnelRequest(authority: authority, done: done, timeout: timeout))
        } catch {
            done.fail(error)
        }
        return done.futureResult
    }
}

/// A timer that fails `promise` with `error` and closes `channel` after `timeout`: the bound of a connection's set-up step.
private func closing<Value>(_ channel: any Channel, after timeout: TimeAmount, failing promise: EventLoopPromise<Value>,
                            with error: any Error) -> Scheduled<Void> {
    channel.eventLoop.scheduleTask(in: timeout) {
        promise.fail(error)
        channel.close(promise: nil)
    }
}

/// Waits for a TLS handshake's end, failing it after a timeout, then leaves the pipeline.
private final class HandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let done: EventLoopPromise<String?>
    /// The host whose certificate is refused when too weak or naming it only by its address; nil when none is checked.
    private let checkedHost: String?
    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?

    init(done: EventLoopPromise<String?>, checking host: String?, timeout: TimeAmount) {
        self.done = done
        self.checkedHost = host
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        timer = closing(context.channel, after: timeout, failing: done, with: UpstreamError.tlsHandshakeTimeout)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted(let negotiated) = event {
            timer?.cancel()
            if let checkedHost {
                do {
                    try context.pipeline.syncOperations.refuseWeakPeerCertificate(naming: checkedHost)
                } catch {
                    done.fail(error)
                    context.close(promise: nil)
                    return
                }
            }
            done.succeed(negotiated)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        timer?.cancel()
        done.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        done.fail(UpstreamError.closed)
        context.fireChannelInactive()
    }
}

/// Sends CONNECT to an HTTP proxy and reads its answer's head (raw, before any HTTP codec is in the pipeline): a 2xx
/// opens the tunnel and this handler leaves; anything else fails it.
private final class TunnelRequest: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private let authority: String
    private let done: EventLoopPromise<Void>
    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?
    private var received = ByteBuffer()

    init(authority: String, done: EventLoopPromise<Void>, timeout: TimeAmount) {
        self.authority = authority
        self.done = done
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        timer = closing(context.channel, after: timeout, failing: done, with: ChannelError.connectTimeout(timeout))
        let request = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n\r\n"
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: request)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var part = unwrapInboundIn(data)
        received.writeBuffer(&part)
        let bytes = received.readableBytesView
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else {
            if received.readableBytes > 16 << 10 { fail(context, UpstreamError.tunnelRefused(status: 0)) }
            return
        }
        // "HTTP/1.1 200 Connection established": the status is the second word of the first line.
        let line = String(decoding: bytes[bytes.startIndex..<end.lowerBound].prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
        let words = line.split(separator: " ")
        let status = words.count > 1 && words[0].hasPrefix("HTTP/") ? Int(words[1]) ?? 0 : 0
        guard (200..<300).contains(status) else { return fail(context, UpstreamError.tunnelRefused(status: status)) }
        // Nothing may come through a tunnel before the client's first bytes: more is no proxy's answer.
        guard end.upperBound == bytes.endIndex else { return fail(context, UpstreamError.tunnelRefused(status: 0)) }
        timer?.cancel()
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        done.succeed()
    }

    private func fail(_ context: ChannelHandlerContext, _ error: any Error) {
        timer?.cancel()
        done.fail(error)
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { fail(context, error) }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        done.fail(UpstreamError.closed)
        context.fireChannelInactive()
    }
}
