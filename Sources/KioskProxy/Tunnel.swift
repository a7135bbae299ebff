import Foundation
import KioskCore
import KioskNetwork
import NIOCore
import Synchronization

/// The byte counts of one tunnel, shared by its two ends (on one event loop), reported when both have closed.
final class TunnelMeter: Sendable {
    private struct Counts {
        var sent = 0, received = 0, open = 2
        /// Whether the first end closed after the process began to stop: then Kiosk closed it, not either side.
        var cutByStop = false
        var status: Int?
        var responseHeaders: [RequestRecord.HeaderField] = []
        /// Why the tunnel failed (a protocol switch the upstream never answered), for its record.
        var error: String?
        /// Whether the tunnel was reported (once).
        var reported = false
        /// Whether the switch's outcome is settled without the upstream's answer (the app was answered, or left).
        var settled = false
        /// Where a refused switch's answer ends among the upstream's bytes (its head and Content-Length), when its first
        /// read told: past it the upstream stays in HTTP for requests the app will send on a new connection.
        var refusalEnd: Int?
    }
    private let counts = Mutex(Counts())
    private let host: String
    /// The host the tunnel or switch goes to, as errors name it.
    var hostName: String { host }
    private let port: Int
    private let started: ContinuousClock.Instant
    private let note: String?
    private let report: @Sendable (TunnelSummary) -> Void
    private let upgrade: TunnelSummary.Upgrade?
    private let stopping: StopDeadline
    /// Where the tunnel is listed while open (nil: not listed, capture off).
    private let list: ExchangesInFlight?
    /// The request log's recording generation when the tunnel was asked for: its record is logged only if it stays.
    private let generation: UInt64?
    /// What the debugger did to it before it opened (a switch held at a breakpoint), for its record.
    private let touches: [ExchangeTouch]
    /// Its ticket there, once listed (`track`, `trackConnect`).
    private let flight = Mutex<ExchangesInFlight.Ticket?>(nil)

    /// A meter for a CONNECT tunnel to `host:port`, or, with `upgrade`, for a protocol switch, open since `started`, its
    /// record carrying `note`, listed in `list` once open; `stopping` tells whether the process has begun to stop (its
    /// listeners then close what is still open).
    init(host: String, port: Int, upgrade: TunnelSummary.Upgrade? = nil, touches: [ExchangeTouch] = [], started: ContinuousClock.Instant = .now,
         note: String? = nil, listedIn list: ExchangesInFlight?, stopping: StopDeadline, report: @escaping @Sendable (TunnelSummary) -> Void) {
        self.touches = touches
        self.list = list
        generation = list?.currentGeneration
        self.started = started
        self.note = note
        self.host = host
        self.port = port
        self.upgrade = upgrade
        self.stopping = stopping
        self.report = report
    }

    /// Lists the protocol switch as `request` until it is reported; its status once the upstream's answer begins, and the
    /// bytes it sent so far.
    func track(as request: HTTPRequest, startedAt: Date) {
        guard let list, isOpen else { return }
        flight.withLock { $0 = list.begin(request, startedAt: startedAt, start: started, begunUnder: generation) }
    }

    /// Lists the CONNECT tunnel, open now (its 200 given), until it is reported, under its name in the log and with the
    /// bytes the upstream sent so far: as Charles and Proxyman list a tunnel they do not read.
    func trackConnect() {
        guard let list, upgrade == nil, isOpen else { return }
        let (endpoint, url) = TunnelSummary.connectName(host: host, port: port)
        guard let address = URL(string: url) else { return }
        let ticket = list.begin(HTTPRequest(method: "CONNECT", url: address, endpoint: endpoint, purpose: .proxied),
                                startedAt: Date().addingTimeInterval(-(ContinuousClock.now - started).seconds), start: started,
                                begunUnder: generation)
        flight.withLock { $0 = ticket }
        list.answered(ticket.id, status: 200) { [weak self] in self?.counts.withLock { $0.received } ?? 0 }
    }

    func add(_ bytes: ByteBuffer, fromApp: Bool) {
        let answered = counts.withLock { counts -> Int? in
            if fromApp {
                counts.sent += bytes.readableBytes
                return nil
            }
            defer { counts.received += bytes.readableBytes }
            // A protocol switch's first upstream bytes are its answer's status line: "HTTP/1.1 101 ...".
            guard upgrade != nil, counts.received == 0, let line = bytes.getString(at: bytes.readerIndex, length: min(bytes.readableBytes, 12)),
                  line.hasPrefix("HTTP/1."), line.count == 12 else { return nil }
            counts.status = Int(line.dropFirst(9).prefix(3))
            counts.responseHeaders = Self.fields(ofHeadIn: bytes)
            counts.refusalEnd = Self.refusalEnd(status: counts.status, in: bytes, fields: counts.responseHeaders)
            return counts.status
        }
        // (Told outside the meter's lock: the list reads the bytes so far through it.)
        if let answered, let list, let ticket = flight.withLock({ $0 }) {
            list.answered(ticket.id, status: answered) { [weak self] in self?.counts.withLock { $0.received } ?? 0 }
        }
    }

    /// The header fields of an answer's head that a first read holds whole (up to 16 KB; else none): what the console
    /// shows of a protocol switch's handshake.
    private static func fields(ofHeadIn bytes: ByteBuffer) -> [RequestRecord.HeaderField] {
        let view = bytes.readableBytesView.prefix(16 << 10)
        guard let end = view.firstRange(of: "\r\n\r\n".utf8) else { return [] }
        return String(decoding: view[..<end.lowerBound], as: UTF8.self).split(separator: "\r\n").dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return RequestRecord.HeaderField(name: String(line[..<colon]),
                                             value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
    }

    /// Where the answer refusing a switch (a final status, `bytes` its first read) ends: its head, and a body of the
    /// Content-Length it names or none (204, 304); nil when that cannot be told (a switch, a chunked body, a head cut).
    private static func refusalEnd(status: Int?, in bytes: ByteBuffer, fields: [RequestRecord.HeaderField]) -> Int? {
        guard let status, status >= 200, let end = bytes.readableBytesView.prefix(16 << 10).firstRange(of: "\r\n\r\n".utf8) else { return nil }
        let head = bytes.readableBytesView.distance(from: bytes.readableBytesView.startIndex, to: end.upperBound)
        if status == 204 || status == 304 { return head }
        let lengths = fields.filter { HTTPHeaderFields.sameName($0.name, "Content-Length") }.compactMap { Int($0.value) }
        guard !fields.contains(where: { HTTPHeaderFields.sameName($0.name, "Transfer-Encoding") }), lengths.count == 1,
              let length = lengths.first, length >= 0 else { return nil }
        return head + length
    }

    /// Whether the process has begun to stop (its listeners close what is still open).
    var isStopping: Bool { stopping.hasStarted }

    /// Whether neither end has closed yet: a tunnel whose end closed as it was joined (the app gone during the dial) is
    /// not listed, for nothing would end its entry.
    private var isOpen: Bool { counts.withLock { !$0.reported && $0.open == 2 } }

    /// Whether all of the answer refusing a switch has come: the tunnel has nothing more to carry.
    var refusalEnded: Bool {
        counts.withLock { counts in counts.refusalEnd.map { counts.received >= $0 } ?? false }
    }

    /// Whether the upstream answered a protocol switch with a final status other than 101: it stayed in HTTP, so what
    /// the app sends next is a new request, which must not reach this upstream through a tunnel that skips the proxy
    /// (its rules, its log, the host it names).
    var switchRefused: Bool {
        upgrade != nil && counts.withLock { ($0.status ?? 0) >= 200 }
    }

    /// Whether this is a protocol switch whose upstream has sent nothing yet: no answer has begun.
    var awaitsSwitchAnswer: Bool {
        upgrade != nil && counts.withLock { $0.received == 0 && !$0.settled }
    }

    /// Notes why the tunnel failed (the first reason given stands), for its record; the switch is settled by it: the app
    /// is answered (or gone) once.
    func fail(_ reason: String) {
        counts.withLock { counts in
            if counts.error == nil { counts.error = reason }
            counts.settled = true
        }
    }

    /// Reports the tunnel failed for `reason` before it was joined (its app left while the upstream was dialled): its
    /// ends will never close to report it.
    func abandon(_ reason: String) {
        let first = counts.withLock { counts -> Bool in
            defer { counts.reported = true }
            return !counts.reported
        }
        guard first else { return }
        if let list, let ticket = flight.withLock({ $0 }) { list.end(ticket.id) }
        var summary = TunnelSummary(host: host, port: port, sent: 0, received: 0, duration: (ContinuousClock.now - started).seconds,
                                    error: reason, upgrade: upgrade)
        summary.note = note
        summary.generation = generation
        summary.touches = touches
        report(summary)
    }

    /// One end closed; the second reports the tunnel.
    func closed() {
        let stopped = stopping.hasStarted
        let done = counts.withLock { counts -> Counts? in
            if counts.open == 2 { counts.cutByStop = stopped }
            counts.open -= 1
            // Cut by the stop, it is reported as its first end closes: the process may be gone before the other's close
            // completes (a TLS upstream's waits for its close_notify), and the record with it.
            guard !counts.reported, counts.open == 0 || counts.cutByStop else { return nil }
            counts.reported = true
            return counts
        }
        guard var done else { return }
        let ticket = flight.withLock { $0 }
        if let list, let ticket { list.end(ticket.id) }
        // A switch's answer that began and ended before its status line did: no HTTP answer at all.
        if upgrade != nil, done.status == nil, done.error == nil, done.received > 0 {
            done.error = "The upstream's answer to the protocol switch ended before its status line did (\(done.received) bytes came)."
        }
        let elapsed = ContinuousClock.now - started
        var upgrade = upgrade
        upgrade?.status = done.status
        upgrade?.responseHeaders = done.responseHeaders
        var summary = TunnelSummary(host: host, port: port, sent: done.sent, received: done.received, duration: elapsed.seconds,
                                    error: done.error, upgrade: upgrade, cutByStop: done.cutByStop)
        summary.note = note
        summary.generation = generation
        summary.touches = touches
        report(summary)
    }
}

/// One end of a tunnel: what it reads is written to its partner, with the partner's backpressure (it reads only
/// while the partner can write), a half-close passed on, and a full close of either closing both. Both ends run on
/// one event loop, so they call each other directly.
final class TunnelEnd: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var partner: TunnelEnd?
    private var context: ChannelHandlerContext?
    private var pendingRead = false
    private let meter: TunnelMeter
    /// Whether this end is the app's connection (its reads are bytes the app sent).
    private let isApp: Bool
    private var counted = false
    private var hasRead = false
    /// How long the one direction still open after a half-close may carry nothing before the tunnel closes.
    private let quietLimit: TimeAmount
    private var lastRead = NIODeadline.now()
    private var quietWatch: Scheduled<Void>?
    private var switchWatch: Scheduled<Void>?

    private init(meter: TunnelMeter, isApp: Bool, quietLimit: TimeAmount) {
        self.meter = meter
        self.isApp = isApp
        self.quietLimit = quietLimit
    }

    /// The app's end and the upstream's, joined. Once one side has finished sending (a half-close), the tunnel closes
    /// when the other sends nothing for `quietAfterHalfClose`: a peer that went away without a word (a phone that lost
    /// its network) would otherwise hold both connections for ever, as HAProxy's `timeout client-fin` guards against.
    static func pair(meter: TunnelMeter, quietAfterHalfClose: Duration) -> (app: TunnelEnd, upstream: TunnelEnd) {
        let limit = TimeAmount(quietAfterHalfClose)
        let app = TunnelEnd(meter: meter, isApp: true, quietLimit: limit), upstream = TunnelEnd(meter: meter, isApp: false, quietLimit: limit)
        app.partner = upstream
        upstream.partner = app
        return (app, upstream)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
        quietWatch?.cancel()
        switchWatch?.cancel()
        finish()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if quietWatch != nil { lastRead = .now() }
        if isApp, meter.switchRefused {
            // The app's next request after a refused switch: both connections close, and the app (as any HTTP client
            // whose kept-alive connection closed) sends it again on a new one, which the proxy reads as HTTP.
            partner?.context?.close(promise: nil)
            return context.close(promise: nil)
        }
        var bytes = unwrapInboundIn(data)
        meter.add(bytes, fromApp: isApp)
        if hasRead {
            partner?.context?.write(data, promise: nil)
        } else {
            // The first read may be what the app sent right behind its CONNECT or upgrade, handed on by the HTTP
            // decoder as it left — outside any read cycle, so no read-complete would flush it.
            hasRead = true
            if !isApp, meter.switchRefused { Self.sayClose(&bytes) }
            partner?.context?.writeAndFlush(NIOAny(bytes), promise: nil)
        }
        // A refused switch's answer has all come: the app, told `Connection: close`, gets it and its connection closes, as
        // the upstream's (which stays in HTTP) — neither is held until one side thinks of closing.
        if !isApp, meter.refusalEnded {
            partner?.closeAfterWrites(mode: .all)
            context.close(promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner?.context?.flush()
    }

    /// An answer that refuses a protocol switch (its head starting `bytes`), told to the app as closing its connection:
    /// the upstream stayed in HTTP and may keep its connection, but the app's next request must come on a new one, read
    /// by the proxy (`channelRead` closes the tunnel when it comes). `Connection: close` after the status line.
    private static func sayClose(_ bytes: inout ByteBuffer) {
        guard let lineEnd = bytes.readableBytesView.firstRange(of: "\r\n".utf8) else { return }
        let statusLength = bytes.readableBytesView.distance(from: bytes.readableBytesView.startIndex, to: lineEnd.upperBound)
        var said = ByteBuffer()
        said.reserveCapacity(bytes.readableBytes + 19)
        said.writeBytes(bytes.readableBytesView.prefix(statusLength))
        said.writeString("Connection: close\r\n")
        said.writeBytes(bytes.readableBytesView.dropFirst(statusLength))
        bytes = said
    }

    func channelInactive(context: ChannelHandlerContext) {
        if meter.awaitsSwitchAnswer {
            // The app gave up first, or Kiosk's stop closed it (the first reason stands), or the upstream ended without a word.
            if isApp {
                meter.fail(meter.isStopping ? "Kiosk stopped before the upstream answered the protocol switch."
                           : "The app closed its connection before the upstream answered the protocol switch.")
            } else {
                refuseUnanswered()
            }
        }
        partner?.closeAfterWrites(mode: .all)
        finish()
        context.fireChannelInactive()
    }

    /// The upstream of a protocol switch ended before it began an answer: the app, which waits for one, is told so with a
    /// 502 (rather than a connection closed without a word), and the record says why.
    private func refuseUnanswered(_ why: String? = nil) {
        let reason = why.map { "The upstream ended the connection without answering the protocol switch: \($0)." }
            ?? "The upstream closed the connection without answering the protocol switch (no status line came)."
        meter.fail(reason)
        partner?.answer(status: "502 Bad Gateway", reason)
    }

    /// Writes the proxy's own plain-text answer to this end (the app's), its connection closing after it.
    func answer(status: String, _ text: String) {
        guard let context else { return }
        let body = text + "\n"
        let head = "HTTP/1.1 \(status)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: head + body)), promise: nil)
    }

    /// For a protocol switch: when the upstream has begun no answer `timeout` after it was sent the request, the app gets a
    /// 504 and both connections close, as any request the upstream does not answer in time.
    func watchForSwitchAnswer(within timeout: Duration) {
        guard isApp, let context else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        switchWatch = context.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            let end = bound.value
            guard end.context != nil, end.meter.awaitsSwitchAnswer else { return }
            let reason = "The upstream did not answer the protocol switch within \(String(format: "%g", timeout.seconds)) s."
            end.meter.fail(reason)
            end.answer(status: "504 Gateway Timeout", reason)
            end.partner?.context?.close(promise: nil)
            end.closeAfterWrites(mode: .all)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, case .inputClosed = event, !isApp, meter.awaitsSwitchAnswer {
            // The upstream finished sending before any answer: nothing more will come, and the app is told so.
            refuseUnanswered()
            partner?.closeAfterWrites(mode: .all)
            context.close(promise: nil)
        } else if let event = event as? ChannelEvent, case .inputClosed = event {
            // The peer finished sending: so does this side of the partner's connection, and the partner's peer, the one
            // still sending, must say something now and then.
            partner?.closeAfterWrites(mode: .output)
            partner?.watchForQuiet()
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Closes this end (`mode`) once what its partner read is written to it: a close, or a half-close that NIO makes a
    /// whole one (the other direction already closed), fails the writes still pending, and an app reading slowly lost
    /// the tail of what the upstream sent before it closed. An app that reads nothing more is closed after a minute.
    private func closeAfterWrites(mode: CloseMode) {
        guard let context else { return }
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let deadline = context.eventLoop.scheduleTask(in: .seconds(60)) { bound.value.close(promise: nil) }
        // Writes complete in order: an empty one completes once every write before it has.
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(capacity: 0))).assumeIsolated().whenComplete { _ in
            deadline.cancel()
            bound.value.close(mode: mode, promise: nil)
        }
    }

    /// Closes both ends when this one reads nothing for `quietLimit`, checked at the limit after its last read.
    private func watchForQuiet() {
        guard quietWatch == nil else { return }
        lastRead = .now()
        checkForQuiet(at: lastRead + quietLimit)
    }

    private func checkForQuiet(at deadline: NIODeadline) {
        guard let context else { return }
        quietWatch = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            guard self.context != nil else { return }
            let due = lastRead + quietLimit
            if due > .now() { return checkForQuiet(at: due) }
            partner?.context?.close(promise: nil)
            self.context?.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !isApp, meter.awaitsSwitchAnswer {
            // An upstream's TLS that ended in an error before any answer (TLS 1.3 refuses a missing client certificate
            // after its handshake; a close without close_notify) is a switch left unanswered: the app, which waits, is told
            // why with a 502 before its connection closes, as on the plain path.
            refuseUnanswered(UpstreamTransport.tlsFailure(error, host: meter.hostName))
            partner?.closeAfterWrites(mode: .all)
            context.close(promise: nil)
            return
        }
        partner?.context?.close(promise: nil)
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let partner, partner.pendingRead {
            partner.pendingRead = false
            partner.context?.read()
        }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if partner?.context?.channel.isWritable ?? false {
            context.read()
        } else {
            pendingRead = true
        }
    }

    private func finish() {
        guard !counted else { return }
        counted = true
        meter.closed()
    }
}
