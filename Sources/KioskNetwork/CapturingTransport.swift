public import Foundation
public import KioskCore
import Synchronization

/// Records every exchange that passes through it — request, response or error, timings — redacted at
/// capture, and hands the record to `sink` (the request log's non-blocking enqueue) to be made there, off the
/// request's path: the exchange's values are fixed when it ends, and redacting them is the log writer's work. It sits at the
/// bottom of the stack, so each real exchange on the wire is one record: a retry is a second record,
/// and requests merged by coalescing are one.
public final class CapturingTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let redactor: Redactor
    private let bodyLimit: Int
    /// The most a coded body is decoded to, to be redacted: one that grows past it is withheld.
    private let decodeLimit: Int
    private let now: @Sendable () -> Date
    private let sink: @Sendable (DeferredRecord) -> Void
    /// Waits while the sink is too far behind to take another record (the request log's `waitForRoom`).
    private let room: (@Sendable () async -> Void)?
    /// Where the exchanges it has begun and not yet ended are listed, for a debugger to show them as they go.
    private let inFlight: ExchangesInFlight?
    /// The last few answers' bodies redacted by `redactor` itself (no secrets of their requests' own), as they came and as
    /// redacted: an app polling a URL gets the same body again and again, and scanning it for keys again finds what it
    /// found before. Held for the life of the transport: at most `redactedBodiesKept` bodies of `redactedBodyLimit` bytes.
    private let redactedBodies = Mutex<[(raw: Data, contentType: String?, coding: String?, redacted: Data)]>([])
    /// How many redacted bodies are kept: a few URLs polled at once.
    private static let redactedBodiesKept = 4
    /// The largest body kept redacted: an API's answer (the scan costs ~1 µs a KB), not a download, so that what stays
    /// in memory after its exchange is at most half a megabyte a transport.
    private static let redactedBodyLimit = 64 << 10

    /// `bodyLimit` caps each captured body (1 MB by default); the rest is dropped and marked truncated. A coded body is
    /// decoded to be redacted up to `decodingAtMost` bytes (the proxy's buffer limit), and withheld past it: a 1 MB gzip
    /// bomb must not take 64 MB per exchange. `room`, if given, is awaited before each exchange: the sink's pace.
    /// `inFlight`, if given, lists each exchange from its start to its end.
    public init(base: any HTTPTransport, redactor: Redactor, bodyLimit: Int = 1 << 20,
                decodingAtMost: Int = ContentCoding.maximumDecodedBytes,
                now: @escaping @Sendable () -> Date = { Date() }, room: (@Sendable () async -> Void)? = nil,
                inFlight: ExchangesInFlight? = nil, sink: @escaping @Sendable (DeferredRecord) -> Void) {
        self.room = room
        self.inFlight = inFlight
        self.base = base
        self.redactor = redactor
        self.bodyLimit = bodyLimit
        decodeLimit = decodingAtMost
        self.now = now
        self.sink = sink
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        // Before the exchange starts, so that a wait for the log is not counted among its phases.
        if let room { await room() }
        let startedAt = now()
        let clock = ContinuousClock()
        let start = clock.now
        // The layers below note the mocks and rules that act on this exchange; it starts with what acted on the
        // request above (a resend, a request edited at a breakpoint), and each attempt of a retry is its own.
        let touches = ExchangeTouches(request.touches)
        var recorded = request
        recorded.recorder = touches
        // A streamed upload is kept as it passes: its first bytes and its whole size, read when the exchange is recorded.
        let upload = request.bodyStream.map { _ in Tally(keep: bodyLimit + margin(for: request)) }
        if let stream = request.bodyStream, let upload {
            recorded.bodyStream = stream.observed(chunk: { upload.add($0) }, end: { if $0 == nil { upload.finish() } })
        }
        var request = request
        request.bodyStream = nil
        let flight = inFlight?.begin(request, startedAt: startedAt, start: start, progress: touches)
        do {
            var response = try await base.send(recorded)
            noteAppClosed(request, since: start, on: touches)
            if let stream = response.stream {
                // Recorded once the body has passed on to its end, with its first bytes.
                response.stream = recording(stream, of: request, answer: response, startedAt: startedAt, start: start, touches: touches,
                                            upload: upload, flight: flight)
                return response
            }
            if let flight { inFlight?.end(flight.id) }
            let elapsed = clock.now - start
            log(request, deferred(request, startedAt: startedAt, response: response, error: nil, elapsed: elapsed, touches: touches.all,
                          upload: upload?.total), generation: flight?.generation)
            return response
        } catch {
            if let flight { inFlight?.end(flight.id) }
            let elapsed = clock.now - start
            // Cancellation of Kiosk's own request is Kiosk walking away, not something that happened on the wire. A proxied
            // one is an app's request that was sent and never answered: a debugger shows it, as DevTools shows "(canceled)".
            if !Task.isCancelled {
                noteAppClosed(request, since: start, on: touches)
                log(request, deferred(request, startedAt: startedAt, response: nil, error: error, elapsed: elapsed, touches: touches.all,
                              upload: upload?.total), generation: flight?.generation)
            } else if request.purpose.isProxied {
                let cut = KioskError.transport(url: request.url.redactedString,
                                               message: "the app's connection closed before the answer came (the app gave up, or Kiosk stopped)")
                log(request, deferred(request, startedAt: startedAt, response: nil, error: cut, elapsed: elapsed, touches: touches.all,
                              upload: upload?.total), generation: flight?.generation)
            }
            throw error
        }
    }

    /// Notes on the exchange that its app closed its side of the connection before the answer (or the failure) came, when
    /// it did: the app may have given up (a timeout, a cancelled search), which its answer's record would otherwise hide,
    /// or only stopped sending (`nc -N`); the proxy cannot tell which, and sends the answer all the same.
    private func noteAppClosed(_ request: HTTPRequest, since start: ContinuousClock.Instant, on touches: ExchangeTouches) {
        guard let closed = request.appSide?.closedAt else { return }
        // Closed before the capture began: the request was held above it (a breakpoint) and not yet sent.
        let milliseconds = closed < start ? nil : Int(((closed - start).seconds * 1000).rounded())
        touches.add(ExchangeTouch(kind: .appClosed, id: 0, name: request.endpoint, phrase: .appClosedFirst(milliseconds: milliseconds)))
    }

    /// Logs `record` of `request`, begun under the log's recording `generation` (`ExchangesInFlight.Ticket`), or leaves it
    /// with the request's hold (a layer above may still hold the answer).
    private func log(_ request: HTTPRequest, _ record: DeferredRecord, generation: UInt64? = nil) {
        var record = record
        record.generation = generation
        if let hold = request.recordHold { hold.keep(record, log: sink) } else { sink(record) }
    }

    /// Records `request` as an exchange that ended with `error` before it went any further (its app gave it up before its
    /// body's end), `elapsed` after it began: the record any failed exchange gets, redacted the same way.
    public func recordUnsent(_ request: HTTPRequest, error: any Error, elapsed: Duration) {
        let cut = ExchangeTouch(kind: .bodyCut, id: 0, name: request.endpoint, phrase: .bodyCut(received: request.body?.count ?? 0))
        log(request, deferred(request, startedAt: now().addingTimeInterval(-elapsed.seconds), response: nil, error: error, elapsed: elapsed,
                      touches: [cut], upload: nil))
    }

    /// A streamed body as it passed: its first `keep` bytes and how many passed in all.
    final class Tally: Sendable {
        private let seen: Mutex<(kept: Data, size: Int, ended: Bool)>
        private let keep: Int

        init(keep: Int, first: Data = Data()) {
            self.keep = keep
            seen = Mutex((kept: first.prefix(keep), size: first.count, ended: false))
        }

        func add(_ chunk: Data) {
            seen.withLock { seen in
                if seen.kept.count < keep { seen.kept.append(chunk.prefix(keep - seen.kept.count)) }
                seen.size += chunk.count
            }
        }

        /// Notes that the body reached its end (not cut, nor left unread).
        func finish() { seen.withLock { $0.ended = true } }

        /// What passed so far: the first bytes, how many in all, and whether that was the whole body.
        var total: (kept: Data, size: Int, ended: Bool) { seen.withLock { $0 } }
    }

    /// `stream`, recording the exchange when it ends: the answer's head, the body's first `bodyLimit` bytes (and a
    /// secret's length more, to scrub across the cut), its whole size, how it ended (an upstream that closed early
    /// is the record's error; an app that went away is not), and a stream touch saying so.
    private func recording(_ stream: BodyStream, of request: HTTPRequest, answer: HTTPResponse, startedAt: Date,
                           start: ContinuousClock.Instant, touches: ExchangeTouches, upload: Tally?, flight: ExchangesInFlight.Ticket?) -> BodyStream {
        let seen = Tally(keep: bodyLimit + margin(for: request), first: answer.body)
        if let flight { inFlight?.answered(flight.id, status: answer.status, contentType: answer.headers["Content-Type"]) { seen.total.size } }
        // When the head came: the time after it is the body's download, not a wait before the exchange.
        let headElapsed = ContinuousClock.now - start
        return stream.observed(chunk: { seen.add($0) }, end: { [self] error in
            if let flight { inFlight?.end(flight.id) }
            let elapsed = ContinuousClock.now - start
            let (kept, size, _) = seen.total
            var whole = answer
            whole.body = kept
            whole.stream = nil
            // Cut by the app, or by Kiosk stopping with it in flight: said, and no failure of the upstream's.
            let closedByApp = error is CancellationError, stopped = error is KioskStopping
            let detail = "\(size) bytes passed on to the app as they arrived, in \(String(format: "%.1f", elapsed.seconds)) s"
                + (closedByApp ? ", until the app closed the connection" : stopped ? ", until Kiosk stopped" : "")
                + "; the log keeps the first \(Self.size(bodyLimit)). Breakpoints and body rules do not act on a streamed body."
            touches.add(ExchangeTouch(kind: .stream, id: 0, name: request.endpoint, detail: detail))
            log(request, deferred(request, startedAt: startedAt, response: whole, error: closedByApp || stopped ? nil : error, elapsed: elapsed,
                          headElapsed: headElapsed, touches: touches.all, bodySize: size, upload: upload?.total), generation: flight?.generation)
        })
    }

    /// How far past `bodyLimit` a body is kept until it is scrubbed: the longest secret it may hold — a configured key,
    /// the request's own signature values, or a credential it sent (an answer may echo its token across the cut, and
    /// the part of it before the cut would otherwise stay, matching nothing whole).
    private func margin(for request: HTTPRequest) -> Int {
        let values = Array(redactor.secretValues) + Array(request.secrets) + redactor.credentials(of: request)
        // (Three times it: a secret may come back %XX-escaped, each of its bytes as three.)
        return 3 * (values.map(\.utf8.count).max() ?? 0)
    }

    /// The record of one exchange that ended, made when the sink asks for it (see `record`). What waits for the writer
    /// holds of each body only what the record keeps of it (the first `bodyLimit` bytes and a key's length more, to
    /// scrub across the cut): the rest of an answer held whole, up to the proxy's 16 MB buffer, is freed with the answer.
    private func deferred(_ request: HTTPRequest, startedAt: Date, response: HTTPResponse?, error: (any Error)?, elapsed: Duration,
                          headElapsed: Duration? = nil, touches: [ExchangeTouch], bodySize: Int? = nil,
                          upload: (kept: Data, size: Int, ended: Bool)?) -> DeferredRecord {
        // Worked out only for a body past the limit: nearly every exchange's bodies are within it.
        let keep = { [self] in bodyLimit + margin(for: request) }
        var request = request
        var requestBodySize: Int?
        if let body = request.body, body.count > bodyLimit, body.count > keep() {
            requestBodySize = body.count
            request.body = Data(body.prefix(keep()))
        }
        var response = response
        var bodySize = bodySize
        if let body = response?.body, body.count > bodyLimit, body.count > keep() {
            bodySize = bodySize ?? body.count
            response?.body = Data(body.prefix(keep()))
        }
        let bodyBytes = min(bodyLimit, upload?.kept.count ?? request.body?.count ?? 0) + min(bodyLimit, response?.body.count ?? 0)
        return DeferredRecord(bodyBytes: bodyBytes, urlBytes: request.url.absoluteString.utf8.count) { [self, request, response, bodySize, requestBodySize] in
            record(request, startedAt: startedAt, response: response, error: error, elapsed: elapsed, headElapsed: headElapsed,
                   touches: touches, bodySize: bodySize, requestBodySize: requestBodySize, upload: upload)
        }
    }

    /// The redacted record of one exchange; `touches` are what the debugger's mocks and rules did to it; `bodySize` and
    /// `requestBodySize` are the answer's and the request's whole sizes when their bodies hold only the first part
    /// (streamed, or cut to what is kept); `upload` what passed of a streamed request body (its first bytes and its
    /// whole size).
    func record(_ request: HTTPRequest, startedAt: Date, response: HTTPResponse?, error: (any Error)?,
                elapsed: Duration, headElapsed: Duration? = nil, touches: [ExchangeTouch] = [], bodySize: Int? = nil,
                requestBodySize: Int? = nil, upload: (kept: Data, size: Int, ended: Bool)? = nil) -> RequestRecord {
        // The request's own signature values (Marvel's ts and hash) are secrets too, wherever they appear; and so are the
        // credentials it sent under secret names (an app's token), which an upstream may echo in its body (httpbin does).
        // A form's or a JSON body's secret fields too (a login's password), which an echo service returns.
        let uploaded = upload.map { self.redactor.credentials(inBody: $0.kept, contentType: request.headers["Content-Type"]) } ?? []
        let redactor = redactor.hidingCredentials(of: request, extra: uploaded)
        // (Only added to: none of the request's own, and a redaction made for another exchange reads the same.)
        let reusable = redactor.secretValues.count == self.redactor.secretValues.count
        var touches = touches
        let contentType = request.headers["Content-Type"], coding = request.headers.combined("Content-Encoding")
        var requestBody = request.body.map { body in
            CapturedBody(redacted: redactor.redactBody(body, contentType: contentType, contentEncoding: coding, decodingAtMost: decodeLimit), ofFirst: body.count,
                         size: requestBodySize ?? body.count, limit: bodyLimit)
        }
        if let (kept, size, ended) = upload {
            requestBody = CapturedBody(redacted: redactor.redactBody(kept, contentType: contentType, contentEncoding: coding, decodingAtMost: decodeLimit), ofFirst: kept.count,
                                       size: size, limit: bodyLimit)
            // An upstream may answer before it has read the whole upload (a 413, a 401): what the app sent after that
            // never went, which "went to the upstream" alone would hide.
            // (Whole when its stream ended, or when it held the length it declared: the transport needs no end to read then.)
            let whole = ended || request.headers["Content-Length"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } == size
            let passed = whole || response == nil ? "The request body, \(size) bytes, went to the upstream as the app sent it"
                : "The upstream answered before the end of the request body, which went to it as the app sent it: \(size) bytes "
                    + "of it went, and the rest did not"
            touches.append(ExchangeTouch(kind: .stream, id: 0, name: request.endpoint,
                                         detail: passed + "; the log keeps the first \(Self.size(bodyLimit)), so it cannot be sent again whole."))
            // Cut before its end with no answer (its app stopped sending): what came is no request to send again, however
            // little of it there was (the log keeps it whole then, and Replay would send it as the whole).
            if !whole && response == nil {
                touches.append(ExchangeTouch(kind: .bodyCut, id: 0, name: request.endpoint, phrase: .bodyCut(received: size)))
            }
        }
        // A request held at a breakpoint before it came here was the app's wait too: the record starts when it asked.
        let held = request.heldAtBreakpoint
        let total = elapsed.seconds + held
        var timings = response?.timings ?? RequestTimings(queued: held > 0 ? held : nil, total: total)
        // The transport measured its own exchange, its own wait for a connection included; anything above
        // it in time (the outbound policy's checks, a slot wait, a breakpoint's pause) is queueing too. A streamed body's
        // time after its head (`headElapsed`) is its download.
        let untilHead = (headElapsed?.seconds ?? elapsed.seconds) + held
        timings.queued = (timings.queued ?? 0) + max(0, untilHead - timings.total)
        if headElapsed != nil { timings.download = (timings.download ?? 0) + max(0, total - untilHead) }
        timings.total = total
        // A connection that could not be made (refused, unanswered, a handshake never answered, a name that does not
        // resolve) spent its time connecting: no request was sent, so none of it was a wait for an answer (HAR's `wait`).
        // (The proxy's cache wraps such a failure with its Cache-Status: the same failure.)
        if response == nil, case .offline? = error?.kioskError {
            timings.connect = max(0, total - (timings.queued ?? 0))
        }
        let errorText: String? = error.map { error in
            redactor.scrub((error as? KioskError)?.description ?? String(describing: error))
        }
        // A failure a rule made (its reset, its offline, its timeout) is the rule's edit, as an answer it changed is: no failure
        // of the network's, and found among the edits.
        let ruleFailed = response == nil && touches.contains { touch in
            if case .ruleFailed? = touch.phrase { true } else { false }
        }
        var record = RequestRecord(
            startedAt: startedAt.addingTimeInterval(-held), source: request.source, endpoint: request.endpoint, method: request.method,
            url: redactor.redact(request.url), requestHeaders: fields(request.headers, redactor),
            requestBody: requestBody,
            status: response?.status, responseHeaders: response.map { fields($0.framedHeaders(method: request.method), redactor) } ?? [],
            responseBody: response.map { body($0, redactor, reusable: reusable, size: bodySize) },
            error: errorText, timings: timings,
            decision: response.map { $0.isEdited || $0.isMocked ? CacheDecision(forwardedAnswer: $0) : $0.cacheStatus?.decision
                                           ?? CacheDecision(forwardedAnswer: $0) } ?? (ruleFailed ? .edited : .network),
            // An answer a rule changed carries what the app is told (the cache's word on the answer it changed: a stored one
            // standing in for a 503 says so, edited); a mocked one had no cache's word.
            cacheStatus: response.map { $0.isMocked ? nil : $0.cacheStatus }
                ?? (ruleFailed ? CacheStatus(recordedAs: .edited, status: nil, isConditional: false, hasError: true)
                    : (error as? CacheMarkedFailure)?.cacheStatus),
            touchedBy: touches.map { $0.mapText(redactor.scrub) })
        record.httpVersion = response?.httpVersion
        return record
    }

    /// A capture limit as a person reads it: "1 MB" for 1,048,576 bytes, "64 KB", else its bytes.
    static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KB" }
        return "\(bytes) bytes"
    }

    private func fields(_ headers: HTTPHeaderFields, _ redactor: Redactor) -> [RequestRecord.HeaderField] {
        redactor.redact(headers).map { RequestRecord.HeaderField(name: $0.name, value: $0.value) }
    }

    /// Only the kept prefix is scrubbed (a secret cut in half by the cap cannot be matched, so the
    /// cut is made after scrubbing the kept part plus a secret's length, then trimmed).
    /// `reusable`: `redactor` is this transport's own, so that the body redacted before stands for the same bytes again.
    private func body(_ response: HTTPResponse, _ redactor: Redactor, reusable: Bool, size: Int? = nil) -> CapturedBody {
        let data = response.body
        // Scrubbed once already above the wire: the bytes are only capped here.
        if response.isScrubbed { return CapturedBody(data: data.prefix(bodyLimit), originalSize: size ?? data.count) }
        let margin = redactor.secretValues.map(\.utf8.count).max() ?? 0
        // Scanned in place: `scrub` copies only a body it changes (a key in it, nearly never), and a body past the limit is
        // scanned as far as the limit plus a key's length (rebased, as `scrub` returns what it is given).
        let kept = data.count > bodyLimit ? Data(data.prefix(bodyLimit + margin)) : data
        let contentType = response.headers["Content-Type"], coding = response.headers.combined("Content-Encoding")
        let redacted = reusable && kept.count <= Self.redactedBodyLimit
            ? redactedAgain(kept, contentType: contentType, coding: coding, redactor)
            : redactor.redactBody(kept, contentType: contentType, contentEncoding: coding, decodingAtMost: decodeLimit)
        return CapturedBody(redacted: redacted, ofFirst: kept.count, size: size ?? data.count, limit: bodyLimit)
    }

    /// `body` redacted by this transport's own redactor: as it was the last time these bytes of this type were, else anew
    /// (and kept, the least recently redacted let go).
    private func redactedAgain(_ body: Data, contentType: String?, coding: String?, _ redactor: Redactor) -> Data {
        let known = redactedBodies.withLock { kept -> Data? in
            guard let index = kept.firstIndex(where: { $0.raw.count == body.count && $0.contentType == contentType && $0.coding == coding
                                                       && $0.raw == body })
            else { return nil }
            let found = kept.remove(at: index)
            kept.insert(found, at: 0)
            return found.redacted
        }
        if let known { return known }
        let redacted = redactor.redactBody(body, contentType: contentType, contentEncoding: coding, decodingAtMost: decodeLimit)
        // Copies of their own: a held answer's bytes are counted against the process's budget until freed (HeldBodies),
        // and what is kept here must not keep them.
        let ownRaw = body.withUnsafeBytes { Data($0) }, ownRedacted = redacted.withUnsafeBytes { Data($0) }
        redactedBodies.withLock { kept in
            if kept.count == Self.redactedBodiesKept { kept.removeLast() }
            kept.insert((raw: ownRaw, contentType: contentType, coding: coding, redacted: ownRedacted), at: 0)
        }
        return redacted
    }
}
