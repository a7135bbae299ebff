import Foundation
import KioskCore
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

// What `RequestTimings` holds of one exchange, from what Kiosk's client (UpstreamConnections.swift) sees on the
// connection's event loop: `queued` is the start until the request head is written, minus `connect`; `connect` is the
// part of that wait during which the connection that carried the request was being opened — dialled, through a proxy's
// tunnel, TLS's handshake — (nil when it was already open); `firstByte` is from the head written to the response head
// (the request body's upload, usually nothing, plus the server's time: HAR's `send` + `wait`); `download` is from the
// response head to the last body byte.

/// When each step of one exchange happened.
struct ExchangeMarks: Sendable, Equatable {
    /// The request head was written to a connection.
    var headSent: ContinuousClock.Instant?
    /// The response head arrived.
    var responseHead: ContinuousClock.Instant?
    /// The last body byte arrived.
    var finished: ContinuousClock.Instant?
    /// Whether the connection that carried the request was open before it (nil: no connection was had).
    var reused: Bool?
    /// The set-up of the connection opened for the request (nil when it was already open).
    var setup: ConnectionSetup?
}

/// When a connection was being opened: from dialling until it could carry a request.
struct ConnectionSetup: Sendable, Equatable {
    /// The pool decided to open it.
    var opened: ContinuousClock.Instant
    /// The host's addresses were looked up (nil: an address was dialled, no lookup made).
    var resolved: ContinuousClock.Instant?
    /// TCP was connected (and a proxy's tunnel opened) and the TLS handshake began (nil: plain HTTP).
    var connected: ContinuousClock.Instant?
    /// It was ready for requests; nil while it is still being set up (or if setting it up failed).
    var established: ContinuousClock.Instant?
}

extension RequestTimings {
    /// The phases of an exchange that started at `start` and ended (as the caller saw it) at `end`; `setup`
    /// is the set-up of the connection that carried it, if known. A phase whose marks are missing is nil.
    init(start: ContinuousClock.Instant, marks: ExchangeMarks, setup: ConnectionSetup?, end: ContinuousClock.Instant) {
        var connect: Duration?, dns: Duration?, tls: Duration?
        var queued: Duration?
        if let headSent = marks.headSent {
            let waited = headSent - start
            // Only the part of the set-up this request waited through counts: a connection that was
            // already open at the start (reused), or opened for nobody in particular, adds nothing. So with its steps:
            // the lookup (opened → resolved) and the handshake (connected → established), each as far as it was waited.
            let waitedThrough = { (from: ContinuousClock.Instant, to: ContinuousClock.Instant) -> Duration? in
                let overlap = min(to, headSent) - max(from, start)
                return overlap > .zero ? overlap : nil
            }
            if let setup, let established = setup.established, let whole = waitedThrough(setup.opened, established) {
                connect = whole
                dns = setup.resolved.map { waitedThrough(setup.opened, $0) ?? .zero }
                tls = setup.connected.map { waitedThrough($0, established) ?? .zero }
            }
            queued = waited - (connect ?? .zero)
        }
        let firstByte = marks.responseHead.map { $0 - (marks.headSent ?? start) }
        let download = marks.responseHead.flatMap { head in marks.finished.map { $0 - head } }
        self.init(queued: queued?.seconds, connect: connect?.seconds, dns: dns?.seconds, tls: tls?.seconds, firstByte: firstByte?.seconds,
                  download: download?.seconds, total: (end - start).seconds)
    }
}

/// Collects one response for `UpstreamTransport`: the head, the body (refused past `limit` bytes while it
/// streams in, or — for a proxy — streamed on past the limit, or when the process's `HeldBodies` budget has no room
/// for it) and when each step happened. The connection's handler calls it on its event loop, one call at a time; the
/// state sits in a `Mutex` because the transport reads it from its own task.
final class ResponseCollector: Sendable {
    /// The response and its marks: whole, or (streaming) its head and the bytes before `stream`.
    struct Collected: Sendable {
        var head: HTTPResponseHead
        /// The whole body (empty when it streams), counted against the held-bodies budget while any copy of it lives.
        var body: Data
        var marks: ExchangeMarks
        var stream: BodyStream?
        /// Whether it streams only because its body was slow to end (`slowBodyDelay`), within the limit so far.
        var slow = false
    }

    private struct State {
        var marks = ExchangeMarks()
        var head: HTTPResponseHead?
        /// The body held so far, as the parts it came in (joined once at the end: a buffer grown part by part would
        /// be copied at each doubling and hold up to twice the limit).
        var parts: CircularBuffer<ByteBuffer> = []
        var received = 0
        /// Bytes of `parts` counted against the held-bodies budget, given back when they go on (see `HeldBodies`).
        var reserved = 0
        var expectedLength: Int?
        /// Set once the answer is handed on before its end: the rest of the body goes through it.
        var pipe: BodyPipe?
        var delivered = false
        /// How the client said the request failed, before it was put in words.
        var failure: (any Error)?
        /// The timer that streams a body not ended `slowBodyDelay` after its head (see `didReceiveHead`).
        var slowBodyTimer: Scheduled<Void>?
        /// The exchange's one timer (see `watch`), and whether the exchange ended, after which none is armed again.
        var watchdog: Scheduled<Void>?
        var watchEnded = false
        /// Whether the request's end was sent: an upload still going is no silence of the upstream's.
        var requestSent = false
        /// When a streamed upload's end was sent: the wait for the answer's head runs from then (see `watch`).
        var uploadSent: NIODeadline?
        /// Whether the request's body streams (an upload the app sends as it comes).
        var uploads = false
        /// When the exchange last moved: a part of its upload or its end sent, a part of the answer read, or one taken by
        /// the app.
        var lastActivity = NIODeadline.now()
    }

    /// How long after its head a body may take before it is streamed rather than held
    /// (`TransportConfiguration.slowBodyDelay`): an endless feed (NDJSON, a token stream, a long poll's drip), or a body
    /// of declared length that comes slowly or stalls, would otherwise not reach the app (an app's read timeout ends it
    /// first), while a whole answer ends well within it and is held (and so can be paused and rewritten).
    private let slowBodyDelay: TimeAmount
    /// Whether a body of declared length within the limit is held however slowly it comes (a layer above acts on it
    /// whole: `HTTPRequest.holdsWholeAnswer`).
    private let holdsDeclaredLength: Bool

    /// Media types whose bodies are streams by design, passed on from their head like `text/event-stream`.
    static let streamingMediaTypes: Set<String> = [
        "text/event-stream", "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines",
        "application/json-seq", "application/stream+json", "multipart/x-mixed-replace",
    ]

    private let state = Mutex(State())
    private let limit: Int
    private let streams: Bool
    /// What every held body of the process counts against (a proxy's; nil: no budget).
    private let budget: HeldBodies?
    /// The request's URL, named (redacted) in errors.
    let target: URL
    /// Where the exchange's capture learns how far the answer came (its head, its bytes), for its list in flight.
    private let progress: ExchangeTouches?
    /// The request's URL as errors name it: redacted, and made only for an error.
    var url: String { target.redactedString }
    private let clock = ContinuousClock()
    private let ready: EventLoopPromise<Collected>
    /// The loop the exchange runs on.
    private var loop: any EventLoop { ready.futureResult.eventLoop }

    /// Holds bodies up to `limit` bytes, naming the (redacted) `url` in errors. Past the limit the body is refused,
    /// unless `streams`: then the answer, and from the head on an event stream's, is handed on (`ready`) with the rest
    /// of its body streaming — as is one `budget` has no room for. `ready` gets the whole answer otherwise (from
    /// `deliver`); a body not ended `slowBodyDelay` after its head streams, but one of declared length when
    /// `holdsDeclaredLength`. `progress` is told of the
    /// head and each part of the body as they come.
    init(limit: Int, streams: Bool, budget: HeldBodies? = nil, slowBodyDelay: TimeAmount = .seconds(1), holdsDeclaredLength: Bool = false,
         url: URL, progress: ExchangeTouches? = nil, ready: EventLoopPromise<Collected>) {
        self.slowBodyDelay = slowBodyDelay
        self.holdsDeclaredLength = holdsDeclaredLength
        self.progress = progress
        self.limit = limit
        self.streams = streams
        self.budget = streams ? budget : nil
        target = url
        self.ready = ready
    }

    deinit {
        // Parts held by an exchange that failed or was cancelled before its end.
        budget?.release(state.withLock { $0.reserved })
        // A request that was never sent (its URL refused, the transport shut down) leaves its promise to be ended here:
        // NIO traps on a promise dropped unfulfilled.
        if !state.withLock({ $0.delivered }) { ready.fail(KioskError.cancelled) }
    }

    /// Body bytes received so far, for telling a truncated body from other failures.
    var received: Int { state.withLock { $0.received } }
    /// The response's `Content-Length`, once its head arrived.
    var expectedLength: Int? { state.withLock { $0.expectedLength } }
    /// Whether the response's head has arrived.
    var hasHead: Bool { state.withLock { $0.head != nil } }
    /// Whether, the head come, the timer `watch` armed waits for silence (`idle`) rather than for the whole answer.
    var waitsForSilence: Bool { streams && hasHead }
    /// The marks so far.
    var marks: ExchangeMarks { state.withLock { $0.marks } }

    /// How the client said the request failed, if it did.
    var failure: (any Error)? { state.withLock { $0.failure } }

    /// Notes how the client said the request failed.
    func noteFailure(_ error: any Error) {
        state.withLock { $0.failure = error }
    }

    /// Notes the connection the request was put on: one open before it, or one opened for it (`setup`).
    func noteConnection(reused: Bool, setup: ConnectionSetup?) {
        state.withLock { state in
            state.marks.reused = reused
            state.marks.setup = setup
        }
    }

    /// Bounds the exchange with one timer, armed once (not one per part read): `expire` runs when no answer's head
    /// came within `timeout` of now — with an upload (`uploads`), within `timeout` of its end, and while it is sent,
    /// when no part of it went for `idle` (an upstream may answer only once it has read the whole body, as a server
    /// storing a file does, and a large upload from a slow app takes longer than any timeout); once a head came, when
    /// `streams`, after `idle` with nothing sent, read or taken by the app since the request's end was sent (an answer
    /// the app gets as it comes may last as long as data keeps coming, and an upload as long as the app sends it, as
    /// they would without the proxy in between; an app reading slowly is no silence of the upstream's), and otherwise
    /// at `timeout` however much came. `endWatch` stops it.
    func watch(timeout: TimeAmount, idle: TimeAmount, uploads: Bool = false, on loop: any EventLoop,
               expire: @escaping @Sendable () -> Void) {
        state.withLock { $0.uploads = uploads }
        arm(at: .now() + timeout, timeout: timeout, idle: idle, on: loop, expire: expire)
    }

    /// Notes that a part of a streamed upload was written to the upstream (see `watch`).
    func didSendUploadPart() {
        noteActivity()
    }

    /// Notes that the exchange moved now (see `watch`).
    private func noteActivity() {
        let now = NIODeadline.now()
        state.withLock { $0.lastActivity = now }
    }

    private func arm(at deadline: NIODeadline, timeout: TimeAmount, idle: TimeAmount, on loop: any EventLoop,
                     expire: @escaping @Sendable () -> Void) {
        let timer = loop.scheduleTask(deadline: deadline) { [self] in
            enum Next { case ended, expire, wait(NIODeadline) }
            let next: Next = state.withLock { state in
                if state.watchEnded { return .ended }
                let now = NIODeadline.now()
                if state.head == nil, state.uploads {
                    guard let sent = state.uploadSent else {
                        return state.lastActivity + idle > now ? .wait(state.lastActivity + idle) : .expire
                    }
                    return sent + timeout > now ? .wait(sent + timeout) : .expire
                }
                guard streams, state.head != nil else { return .expire }
                guard state.requestSent else { return .wait(now + idle) }
                return state.lastActivity + idle > now ? .wait(state.lastActivity + idle) : .expire
            }
            switch next {
            case .ended: return
            case .expire: expire()
            case .wait(let due): arm(at: due, timeout: timeout, idle: idle, on: loop, expire: expire)
            }
        }
        let ended = state.withLock { state in
            if !state.watchEnded { state.watchdog = timer }
            return state.watchEnded
        }
        if ended { timer.cancel() }
    }

    /// Stops the timer `watch` armed: the exchange ended.
    func endWatch() {
        state.withLock { state in
            state.watchEnded = true
            defer { state.watchdog = nil }
            return state.watchdog
        }?.cancel()
    }

    /// Completes `ready` with how the request ended, unless the answer was already handed on (then its stream ends
    /// with it).
    func deliver(_ result: Result<Collected, any Error>) {
        let (first, pipe) = state.withLock { state in
            defer { state.delivered = true }
            state.slowBodyTimer?.cancel()
            state.slowBodyTimer = nil
            return (!state.delivered, state.pipe)
        }
        if first { ready.completeWith(result) }
        if let pipe {
            if case .failure(let error) = result { pipe.finish(error) } else { pipe.finish() }
        }
    }

    /// The request's head was written to the connection.
    func didSendRequestHead() {
        let now = clock.now
        state.withLock { $0.marks.headSent = now }
    }

    /// The request's end was written.
    func didSendRequest() {
        let now = NIODeadline.now()
        state.withLock { state in
            state.requestSent = true
            if state.uploads { state.uploadSent = now }
            state.lastActivity = max(state.lastActivity, now)
        }
    }

    /// The answer's head came for `exchange`: whether to read on.
    func didReceiveHead(_ head: HTTPResponseHead, of exchange: UpstreamExchange) -> PartOutcome {
        // Answers no request of Kiosk's asks for, refused rather than passed on half-made: a protocol switch (an upgrade
        // goes through a tunnel of its own, never here), and a transfer coding besides chunked, which NIO does not
        // undo (the body would go on coded, with nothing saying so).
        if head.status == .switchingProtocols {
            return .fail(KioskError.transport(
                url: url, message: "the upstream switched protocols (101) although the request asked for no upgrade"))
        }
        if head.headers.contains(name: "transfer-encoding"),
           let coding = head.headers[canonicalForm: "transfer-encoding"].map({ $0.lowercased() }).first(where: { $0 != "chunked" }) {
            return .fail(KioskError.transport(
                url: url, message: "the upstream's answer has the transfer coding \(coding.prefix(40)), which Kiosk does not decode"))
        }
        let now = clock.now
        let length = head.headers.first(name: "content-length").flatMap(Int.init)
        let read = NIODeadline.now()
        state.withLock { state in
            state.lastActivity = read
            state.marks.responseHead = now
            state.head = head
            state.expectedLength = length
        }
        progress?.answerBegan(status: Int(head.status.code), contentType: head.headers.first(name: "content-type"))
        guard streams else { return .more }
        // An event stream never ends by design, and a declared size past the limit would be held in vain.
        let mediaType = head.headers.first(name: "content-type").map(HTTPSyntax.mediaType)
        if mediaType.map(Self.streamingMediaTypes.contains) == true || (length ?? 0) > limit {
            startStreaming(exchange)
        } else if head.status.mayHaveResponseBody, length == nil || (length != 0 && !holdsDeclaredLength) {
            // (A declared length too: an upstream that sends its body slowly, or stops halfway, would otherwise hold the
            // app's first byte until its end, past an app's read timeout, or for ever.)
            let timer = loop.scheduleTask(in: slowBodyDelay) { [self] in _ = streamHeld(exchange, slow: true) }
            state.withLock { $0.slowBodyTimer = timer }
        }
        return .more
    }

    /// The answer as received so far when it is one whose end only the connection's closing marks (a head with neither
    /// Content-Length nor Transfer-Encoding): what an upstream that closed its TLS connection without close_notify sent
    /// before it closed, taken as whole as browsers and curl take it; nil for any other answer, or none yet.
    func closeDelimitedAnswer() -> Collected? {
        let now = clock.now
        return state.withLock { state in
            guard let head = state.head, !head.headers.contains(name: "content-length"),
                  !head.headers.contains(name: "transfer-encoding") else { return nil }
            if state.pipe != nil {
                state.marks.finished = now
                return Collected(head: head, body: Data(), marks: state.marks)
            }
            return finish(&state, head: head, at: now)
        }
    }

    /// The answer whole, ended `now`: its held parts joined in one copy (a budgeted body's reservation goes with it).
    private func finish(_ state: inout State, head: HTTPResponseHead, at now: ContinuousClock.Instant) -> Collected {
        state.marks.finished = now
        let body = HeldBodies.joined(state.parts, count: state.parts.reduce(0) { $0 + $1.readableBytes }, budget: budget,
                                     reserved: state.reserved) { part, use in part.withUnsafeReadableBytes(use) }
        state.parts = []
        state.reserved = 0
        return Collected(head: head, body: body, marks: state.marks)
    }

    /// Hands the answer on now with what is held of its body, the rest to stream as it comes (a body past the limit, or
    /// one `slow` to end); nothing when it was handed on already.
    @discardableResult
    private func streamHeld(_ exchange: UpstreamExchange, slow: Bool = false) -> BodyPipe? {
        guard state.withLock({ !$0.delivered && $0.pipe == nil }) else { return nil }
        let (pipe, held) = startStreaming(exchange, slow: slow)
        for part in held { _ = pipe.offer(Data(part.readableBytesView), resume: {}) }
        budget?.release(state.withLock { state in
            defer { state.reserved = 0 }
            return state.reserved
        })
        return pipe
    }

    /// A part of the answer's body came for `exchange`: whether to read on.
    func didReceiveBodyPart(_ buffer: ByteBuffer, of exchange: UpstreamExchange) -> PartOutcome {
        enum Next { case held, pastTheLimit, stream(BodyPipe) }
        let read = NIODeadline.now()
        progress?.answerReceived(buffer.readableBytes)
        let next: Next = state.withLock { state in
            state.lastActivity = read
            state.received += buffer.readableBytes
            if let pipe = state.pipe { return .stream(pipe) }
            guard state.received <= limit else { return .pastTheLimit }
            if let budget {
                // No room among the bodies held in the process: this one streams as if past the limit.
                guard budget.reserve(buffer.readableBytes) else { return .pastTheLimit }
                state.reserved += buffer.readableBytes
            }
            state.parts.append(buffer)
            return .held
        }
        switch next {
        case .held:
            return .more
        case .pastTheLimit where streams:
            // Past the limit with no size declared: what was held goes first through the stream, then this part; the
            // upstream is read no further until the reader has taken them all.
            guard let pipe = streamHeld(exchange) else {
                // Answered already (the timer won against the head): nobody will read the rest.
                return .fail(UpstreamError.cancelled)
            }
            return offer(buffer, to: pipe)
        case .pastTheLimit:
            return .fail(KioskError.unreadableAnswer(url: url, problem: .larger(than: limit)))
        case .stream(let pipe):
            return offer(buffer, to: pipe)
        }
    }

    /// The answer's end was read: the answer whole (or, streamed, as handed on).
    func didFinish() -> Result<Collected, any Error> {
        let now = clock.now
        do {
            return .success(try state.withLock { state throws(KioskError) in
            state.marks.finished = now
            state.slowBodyTimer?.cancel()
            state.slowBodyTimer = nil
            // The parser ends an answer only after its head; this guards the contract rather than a known path.
            guard let head = state.head else { throw KioskError.transport(url: url, message: "the response ended before its head") }
            if state.pipe != nil { return Collected(head: head, body: Data(), marks: state.marks) }
            return finish(&state, head: head, at: now)
        })
        } catch {
            return .failure(error)
        }
    }

    /// Hands the answer on now, its whole body to come through a pipe (only because it is `slow` to end, or not); returns
    /// the pipe and the parts held so far, which the caller offers to it first.
    @discardableResult
    private func startStreaming(_ exchange: UpstreamExchange, slow: Bool = false) -> (pipe: BodyPipe, held: CircularBuffer<ByteBuffer>) {
        let loop = loop
        let pipe = BodyPipe(onStop: { loop.execute { exchange.cancel() } })
        let (collected, held): (Collected?, CircularBuffer<ByteBuffer>) = state.withLock { state in
            guard let head = state.head, !state.delivered else { return (nil, []) }
            state.pipe = pipe
            state.delivered = true
            defer { state.parts = [] }
            return (Collected(head: head, body: Data(), marks: state.marks, stream: pipe.stream, slow: slow), state.parts)
        }
        // Already answered (the timer won against the head): nobody will read the stream.
        guard let collected else {
            loop.execute { exchange.cancel() }
            return (pipe, [])
        }
        ready.succeed(collected)
        return (pipe, held)
    }

    /// Offers a part to the stream's reader: read on, or wait (the connection is read no further) while the reader has
    /// not taken the part before.
    private func offer(_ buffer: ByteBuffer, to pipe: BodyPipe) -> PartOutcome {
        let promise = loop.makePromise(of: Void.self)
        // The app taking a part it had not taken is the exchange moving (see `watch`).
        if pipe.offer(Data(buffer.readableBytesView), resume: { [self] in noteActivity(); promise.succeed() }) {
            promise.succeed()
            return .more
        }
        return .wait(promise.futureResult)
    }
}

/// A request lost to a connection its server closed while the request was on its way: HTTP/1.1 lets either side close an
/// idle kept-alive connection at any moment (RFC 9112 §9.3), and a server that does (Node's default after 5 idle seconds,
/// nginx's after 75) may do it just as a request is written to that connection. The request then dies unanswered though
/// the server is up; clients and proxies (browsers, curl, nginx's `proxy_next_upstream error`) send it again, on another
/// connection, when that cannot do harm (RFC 9110 §9.2.2: an idempotent method; RFC 9112 §9.3.1: a body that can be sent
/// again). A request on a connection opened for it that dies is the server's answer to that request, and is not sent again.
enum StaleConnection {
    /// The methods a request may be sent again with (RFC 9110 §9.2.2; a method's name is case-sensitive, §9.1).
    static let replayableMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]
    /// Attempts in all: each pooled connection that went stale at once (a server restarted) costs one.
    static let maxAttempts = 4

    /// Whether an exchange that failed with `error` died unanswered on a connection opened before it: it was put on that
    /// connection, no byte of an answer came, and the connection closed or was reset (while the request was
    /// written, or after).
    static func diedUnanswered(_ error: any Error, marks: ExchangeMarks) -> Bool {
        // A connection opened for this exchange is not a stale one.
        guard marks.responseHead == nil, marks.reused == true else { return false }
        switch error {
        case let error as UpstreamError:
            return error == .closed
        case let error as IOError:
            return [ECONNRESET, EPIPE].contains(error.errnoCode)
        case let error as NIOSSLError:
            // A TLS connection closed without its close_notify.
            if case .uncleanShutdown = error { return true }
            return false
        default:
            return false
        }
    }
}
