public import Foundation
public import KioskCore
import Synchronization

/// What a breakpoint does at one phase of an endpoint's exchanges.
public enum BreakpointMode: String, Sendable, Hashable, Codable, CaseIterable {
    case ignore
    case pause
}

/// An endpoint's three switches: pause before sending, on the response, on an error.
public struct BreakpointSetting: Sendable, Hashable, Codable {
    public var request: BreakpointMode = .ignore
    public var response: BreakpointMode = .ignore
    public var error: BreakpointMode = .ignore

    public init(request: BreakpointMode = .ignore, response: BreakpointMode = .ignore, error: BreakpointMode = .ignore) {
        self.request = request
        self.response = response
        self.error = error
    }

    /// Whether every switch is off.
    public var isOff: Bool { request == .ignore && response == .ignore && error == .ignore }
}

/// Where an exchange is paused.
public enum PausePhase: String, Sendable, Hashable, Codable {
    /// Before it is sent: its query items and headers can be edited.
    case request
    /// After the upstream answered: the body can be edited.
    case response
    /// After it failed: it can fail as it did, or be answered with a substitute response.
    case error
}

/// One exchange held at a breakpoint, as the console shows it (redacted: the URL and headers of the
/// paused request never show a key).
public struct PausedExchange: Sendable, Hashable, Identifiable, Encodable {
    public let id: Int
    public let phase: PausePhase
    public let endpoint: String
    public let source: SourceID?
    public let method: String
    /// The URL, redacted.
    public let url: String
    /// Request headers, redacted.
    public let requestHeaders: [RequestRecord.HeaderField]
    public let status: Int?
    public let responseHeaders: [RequestRecord.HeaderField]
    /// The response body as text (redacted), for editing.
    public let responseText: String?
    /// Whether that text is the body itself, so that it can be edited and sent back: a body with no content coding
    /// (a gzip answer's text would be its compressed bytes), valid UTF-8, without control characters but tabs and
    /// line breaks (what a form's textarea carries back unchanged).
    public let responseIsText: Bool
    /// The response body's size in bytes as it came (0 without a response).
    public let responseSize: Int
    /// The content coding (gzip, deflate, br) the answer came in when its body is shown decoded for editing: an edit is
    /// sent uncoded, without `Content-Encoding`; sent unchanged, it goes as it came. nil for an answer without one.
    public var decodedFrom: String? = nil
    /// The request's body as text (redacted), for editing at a request breakpoint; nil when it has none or it is not text.
    public var requestText: String? = nil
    public let error: String?
    public let pausedAt: Date
    /// When it continues unchanged by itself.
    public let deadline: Date
    /// Whether the app closed its side of the connection while the exchange waited (it may have given up, and may
    /// not read the answer): read when the paused exchanges are listed.
    public var appClosed = false
    /// The logged request this exchange sends again (the console's Replay or edit and resend); nil for an app's own.
    public var resending: Int64? = nil

    /// The URL's percent-encoded path, as the request editor shows it.
    public var path: String { URLComponents(string: url)?.percentEncodedPath ?? "" }

    /// Whether the paused answer is JSON (its body parses, or is empty and its Content-Type says JSON): its edit must be
    /// JSON too; any other is edited as text. An error being answered instead has no answer of its own: JSON.
    public var answersJSON: Bool {
        guard phase == .response, let text = responseText, responseIsText else { return true }
        if text.isEmpty {
            return responseHeaders.first { $0.name.lowercased() == "content-type" }.map { $0.value.lowercased().contains("json") } ?? true
        }
        return (try? OrderedJSON.parse(Data(text.utf8))) != nil
    }

    /// What `/debug/api/paused` lists: the summary, without headers or the body.
    enum CodingKeys: String, CodingKey {
        case id, phase, endpoint, method, url, status, error, pausedAt, deadline, appClosed
    }
}

/// A change of the paused exchanges, as `Breakpoints.changes()` tells it.
public enum PauseChange: Sendable, Hashable {
    /// The exchange with this id paused.
    case paused(Int)
    /// Its pause ended (decided, timed out, or its caller went away).
    case ended(Int)
}

/// How a paused exchange goes on.
public enum PauseDecision: Sendable, Hashable {
    /// As it was.
    case continueUnchanged
    /// Request phase: send with these query items and headers instead (secret items are kept as they were), this body
    /// (nil: the request's own), this method and this percent-encoded path (nil: the request's own).
    case continueWithRequest(query: [(name: String, value: String)], headers: [(name: String, value: String)], body: Data? = nil,
                             method: String? = nil, path: String? = nil)
    /// Response or error phase: answer with this status and body instead (marked edited, never stored), and these header
    /// fields (nil: the answer's own; a redacted value shown unchanged keeps the real one).
    case continueWithResponse(status: Int, body: Data, headers: [(name: String, value: String)]? = nil)
    /// Fail the request: the view shows an error.
    case abort

    public static func == (lhs: PauseDecision, rhs: PauseDecision) -> Bool {
        switch (lhs, rhs) {
        case (.continueUnchanged, .continueUnchanged), (.abort, .abort): true
        case (.continueWithResponse(let a, let b, let x), .continueWithResponse(let c, let d, let y)):
            a == c && b == d && x?.map { [$0.name, $0.value] } == y?.map { [$0.name, $0.value] }
        case (.continueWithRequest(let a, let b, let x, let m, let p), .continueWithRequest(let c, let d, let y, let n, let q)):
            a.elementsEqual(c, by: { $0 == $1 }) && b.elementsEqual(d, by: { $0 == $1 }) && x == y && m == n && p == q
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .continueUnchanged: hasher.combine(0)
        case .abort: hasher.combine(1)
        case .continueWithResponse(let status, let body, let headers):
            hasher.combine(2); hasher.combine(status); hasher.combine(body)
            hasher.combine(headers?.map { [$0.name, $0.value] })
        case .continueWithRequest(let query, let headers, let body, let method, let path):
            hasher.combine(3)
            for item in query { hasher.combine(item.name); hasher.combine(item.value) }
            for item in headers { hasher.combine(item.name); hasher.combine(item.value) }
            hasher.combine(body); hasher.combine(method); hasher.combine(path)
        }
    }
}

/// The breakpoints: per-endpoint settings (persisted as JSON beside the database) and the exchanges
/// paused right now. Every pause ends — by a decision from the console or the CLI, or by its timeout
/// (default 5 minutes) continuing it unchanged — so a forgotten breakpoint never hangs a request.
public final class Breakpoints: Sendable {
    /// The settings file; nil keeps them in memory.
    public var fileURL: URL? { file.url }
    /// How long a pause waits for a decision before continuing unchanged.
    public let timeout: Duration
    private let clock: any Clock<Duration>
    /// Wall time, as injected (pauses and the records of edits are dated with it).
    let now: @Sendable () -> Date
    private let redactor: Redactor
    private let state = Mutex<State>(State())
    private let file: SharedJSONFile<File>

    private struct Waiter {
        var exchange: PausedExchange
        /// The request's body as it came (`exchange` shows it redacted), to put back what an edit left as shown.
        var requestBody: Data?
        /// The answer's body as it came (shown with the request's own credentials hidden, where it echoes them).
        var responseBody: Data?
        /// The app's side of a proxied exchange's connection, which may close while the exchange waits.
        var appSide: AppSide?

        /// The exchange as it stands now: whether its app has closed its side meanwhile.
        var current: PausedExchange {
            var exchange = exchange
            exchange.appClosed = appSide?.closedAt != nil
            return exchange
        }
        var continuation: CheckedContinuation<PauseDecision, Never>?
        var timer: Task<Void, Never>?
    }

    private struct State {
        var paused: [Int: Waiter] = [:]
        var nextID = 1
        var observers: [UInt64: AsyncStream<PauseChange>.Continuation] = [:]
        var nextObserver: UInt64 = 0
        var isActive = true
    }

    /// Breakpoints kept in `fileURL`; a pause ends after `timeout` on `clock`; `report` is told when a version of the
    /// file that exchanges would use cannot be read (the settings read before stay in use).
    public init(fileURL: URL?, timeout: Duration = .seconds(300), clock: any Clock<Duration> = ContinuousClock(),
                now: @escaping @Sendable () -> Date = { Date() }, redactor: Redactor, report: (@Sendable (String) -> Void)? = nil) {
        file = SharedJSONFile(url: fileURL, empty: File(), name: "the breakpoints", report: report)
        self.timeout = timeout
        self.clock = clock
        self.now = now
        self.redactor = redactor
    }

    // MARK: Settings

    /// Every endpoint with a switch on, by name.
    public func settings() throws -> [String: BreakpointSetting] { try file.read().breakpoints }

    /// The switches of one endpoint, host or URL pattern, as set (all off when never set).
    public func setting(for endpoint: String) -> BreakpointSetting {
        let key = keptKey(endpoint), raw = Self.key(endpoint)
        // (A file an older Kiosk wrote may hold the pattern as typed, a key in it.)
        return file.modify { $0.breakpoints[key] ?? $0.breakpoints[raw] } ?? BreakpointSetting()
    }

    /// The switches that apply to `request`: those of the longest URL pattern its URL matches (a path of an app's host,
    /// `http://localhost:3000/api/users`, or a pattern with `*`), else those of its endpoint (a catalog's endpoint, or
    /// the app's host).
    public func setting(for request: HTTPRequest) -> BreakpointSetting {
        match(for: request)?.setting ?? BreakpointSetting()
    }

    /// The key whose switches apply to `request` (see `setting(for:)`), with them: a URL pattern, an endpoint or a host;
    /// nil when none is set for it. What an exchange it paused is said to be touched by.
    public func match(for request: HTTPRequest) -> (key: String, setting: BreakpointSetting)? {
        file.modify { file in
            guard !file.breakpoints.isEmpty else { return nil }
            var best: (key: String, setting: BreakpointSetting)?
            // The URL sent, or the one the app asked a reverse listener for (and that one's host).
            let urls = request.matchedURLs
            for (key, setting) in file.breakpoints where Self.isURLPattern(key) && key.count > (best?.key.count ?? -1) {
                if urls.contains(where: { Self.url($0, matches: key, ignoring: redactor.queryItems) }) { best = (key, setting) }
            }
            if let best { return best }
            if let setting = file.breakpoints[request.endpoint] { return (request.endpoint, setting) }
            let appHost = request.appURL.map(HTTPRequest.endpoint(of:))
            return appHost.flatMap { host in file.breakpoints[host].map { (host, $0) } }
        }
    }

    /// Whether a breakpoint's key is a URL pattern (`http://…`, `https://…`, or a WebSocket's `ws://…`, `wss://…`) rather
    /// than an endpoint or a host.
    public static func isURLPattern(_ key: String) -> Bool {
        key.hasPrefix("http://") || key.hasPrefix("https://") || key.hasPrefix("ws://") || key.hasPrefix("wss://")
    }

    /// A breakpoint's key as it is kept: a WebSocket's address (`wss://host/ws`, as the log lists its exchange) as the
    /// http(s) one its handshake asks for, which is what a request is matched by.
    public static func key(_ endpoint: String) -> String {
        if endpoint.hasPrefix("ws://") { return "http://" + endpoint.dropFirst("ws://".count) }
        if endpoint.hasPrefix("wss://") { return "https://" + endpoint.dropFirst("wss://".count) }
        return endpoint
    }

    /// The key `endpoint`'s switches are kept under (`key`): a URL pattern without its secret query items
    /// (`URLPattern.kept`), which matching ignores and which must reach neither the file nor a page.
    public func keptKey(_ endpoint: String) -> String {
        let key = Self.key(endpoint)
        guard Self.isURLPattern(key) else { return key }
        let kept = URLPattern.kept(key, ignoring: redactor.queryItems)
        // (A pattern whose query held secret items alone still compares the query: with none, only a bare one matches.)
        return key.contains("?") && !kept.contains("?") ? kept + "?" : kept
    }

    /// Whether `url` matches the URL pattern `pattern`: `*` any run of characters, the rest literally (scheme and host
    /// in any case); without a `?` in the pattern the URL's query is not compared, so a path's breakpoint holds for
    /// every query of it. With one, the query is compared as mocks and rewrite rules compare it (`URLPattern`): its
    /// items in any order, those named in `names` (the redactor's secret ones) left out, so one pattern selects the
    /// same requests for all three.
    static func url(_ url: URL, matches pattern: String, ignoring names: Set<String>) -> Bool {
        let key = lowercasedOrigin(pattern)
        guard pattern.contains("?") else {
            let target = lowercasedOrigin(String(url.absoluteString.prefix { $0 != "?" && $0 != "#" }))
            return key.contains("*") ? URLPattern.wildcard(key, target) : key == target
        }
        return URLPattern(key, ignoring: names).matches(lowercasedOrigin(URLPattern.normalized(url.absoluteString, ignoring: names)))
    }

    /// `text` with its scheme and authority (up to the path) lowercased.
    private static func lowercasedOrigin(_ text: String) -> String {
        guard let schemeEnd = text.range(of: "://") else { return text }
        let pathStart = text[schemeEnd.upperBound...].firstIndex(of: "/") ?? text.endIndex
        return text[..<pathStart].lowercased() + text[pathStart...]
    }

    /// Sets an endpoint's switches and saves them.
    public func set(_ setting: BreakpointSetting, for endpoint: String) throws {
        let key = keptKey(endpoint), raw = Self.key(endpoint)
        try file.update { file in
            // The pattern as an older Kiosk kept it, a key in it, goes: replaced by its kept form.
            if raw != key { file.breakpoints[raw] = nil }
            file.breakpoints[key] = setting.isOff ? nil : setting
        }
    }

    // MARK: Pausing

    /// The exchanges paused now, oldest first.
    public var paused: [PausedExchange] {
        state.withLock { $0.paused.values.map(\.current).sorted { $0.id < $1.id } }
    }

    /// One paused exchange.
    public func paused(id: Int) -> PausedExchange? { state.withLock { $0.paused[id]?.current } }

    /// Exchanges as they pause and as their pauses end (for live views and tests).
    public func changes() -> AsyncStream<PauseChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: PauseChange.self)
        let id = state.withLock { state -> UInt64 in
            state.nextObserver += 1
            state.observers[state.nextObserver] = continuation
            return state.nextObserver
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.observers.removeValue(forKey: id) } }
        return stream
    }

    /// Ends a pause with `decision`; false when no such exchange is paused (it ended already).
    @discardableResult
    public func decide(_ id: Int, _ decision: PauseDecision) -> Bool {
        let (waiter, observers) = state.withLock { ($0.paused.removeValue(forKey: id), Array($0.observers.values)) }
        guard let waiter else { return false }
        waiter.timer?.cancel()
        waiter.continuation?.resume(returning: decision)
        for observer in observers { observer.yield(.ended(id)) }
        return true
    }

    /// Ends every pause with its exchange unchanged and pauses no more (the process is stopping): each app gets the
    /// answer it was waiting for, or its request is sent, rather than a connection closed under it.
    public func releaseAll() {
        let ids = state.withLock { state -> [Int] in
            state.isActive = false
            return Array(state.paused.keys)
        }
        for id in ids { decide(id, .continueUnchanged) }
    }

    /// Whether switches pause at all. Only a process with a console to decide in (`kiosk serve`) turns this
    /// on; a command-line run would otherwise sit silently until the timeout.
    public var isActive: Bool {
        get { state.withLock { $0.isActive } }
        set { state.withLock { $0.isActive = newValue } }
    }

    /// The largest edit the console takes in one form (a paused body, a rule's, a mock's): a coded answer whose content is
    /// larger is not decoded for editing, since no edit of it could be sent back (and ten such pauses held 64 MB each).
    public static let maximumEditBytes = 8 << 20

    /// A coded answer's body decoded for editing at a breakpoint, with its coding: one Kiosk decodes (gzip, deflate, br)
    /// whose bytes decode whole to at most `maximumEditBytes`; nil otherwise (no coding, another one, bytes that do not
    /// decode or decode larger).
    static func decodedForEditing(_ response: HTTPResponse) -> (body: Data, coding: String)? {
        guard let coding = ContentCoding.single(response.headers.combined("Content-Encoding")), ContentCoding.decodes(coding),
              let body = ContentCoding.decoded(response.body, coding: coding, maximumBytes: maximumEditBytes) else { return nil }
        return (body, coding)
    }

    /// Whether `response`'s body reads as editable text (`PausedExchange.responseIsText`).
    static func isEditableText(_ response: HTTPResponse) -> Bool {
        if ContentCoding.single(response.headers.combined("Content-Encoding")) != nil { return false }
        guard let text = String(validating: response.body, as: UTF8.self) else { return false }
        return !text.unicodeScalars.contains { $0.properties.generalCategory == .control && !["\t", "\n", "\r"].contains($0) }
    }

    /// Holds an exchange until a decision or the timeout; called by the breakpoint transport. Returns the
    /// decision and the id the exchange was paused under.
    func pause(phase: PausePhase, request: HTTPRequest, response: HTTPResponse?,
               error: (any Error)?) async -> (id: Int, decision: PauseDecision) {
        let pausedAt = now()
        let shown = shownRedactor(for: request)
        // A coded answer (a browser's request nearly always takes gzip or br) is shown and edited as its content, as DevTools
        // shows it; its coding and length are the original bytes' and are not shown to be edited.
        let decoded = phase == .response ? response.flatMap(Self.decodedForEditing) : nil
        var editable = response
        if let decoded {
            editable?.body = decoded.body
            editable?.headers["Content-Encoding"] = nil
            editable?.headers["Content-Length"] = nil
        }
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let exchange = PausedExchange(
            id: id, phase: phase, endpoint: request.endpoint, source: request.source, method: request.method,
            url: redactor.redact(request.url),
            requestHeaders: redactor.redact(request.headers).map { .init(name: $0.name, value: $0.value) },
            status: response?.status,
            responseHeaders: editable.map { shown.redact($0.headers).map { .init(name: $0.name, value: $0.value) } } ?? [],
            // As the log shows it: a JSON answer's secret fields (`token`, `password`) hidden as well as the values the request sent.
            responseText: editable.map { String(decoding: shown.redactBody($0.body, contentType: $0.headers["Content-Type"],
                                                                           contentEncoding: $0.headers.combined("Content-Encoding")), as: UTF8.self) },
            responseIsText: editable.map(Self.isEditableText) ?? false, responseSize: response?.body.count ?? 0,
            decodedFrom: decoded?.coding,
            requestText: request.body.flatMap { body in
                Self.isEditableText(HTTPResponse(status: 200, headers: request.headers, body: body, url: request.url))
                    ? String(decoding: redactor.redactBody(body, contentType: request.headers["Content-Type"],
                                                           contentEncoding: request.headers.combined("Content-Encoding")), as: UTF8.self) : nil
            },
            error: error.map { redactor.scrub(($0 as? KioskError)?.description ?? String(describing: $0)) },
            pausedAt: pausedAt, deadline: pausedAt.addingTimeInterval(timeout.seconds),
            resending: request.touches.first { $0.kind == .resend }.map { Int64($0.id) })
        let decision = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<PauseDecision, Never>) in
                let clock = self.clock, timeout = self.timeout
                // The timer continues the exchange unchanged: a pause nobody answers must not hang the app. Unless its app has
                // gone meanwhile (a client's timeout, a cancelled search): then nobody waits for it, and a request sent
                // now would act for an app that gave up (a POST creating what its retry creates again) — it is aborted.
                let timer = Task { [weak self] in
                    do { try await clock.sleep(for: timeout) } catch { return }
                    guard let self else { return }
                    let gone = self.state.withLock { $0.paused[id]?.current.appClosed } ?? false
                    self.decide(id, gone ? .abort : .continueUnchanged)
                }
                let observers = state.withLock { state -> [AsyncStream<PauseChange>.Continuation] in
                    state.paused[id] = Waiter(exchange: exchange, requestBody: request.body, responseBody: editable?.body,
                                              appSide: request.appSide,
                                              continuation: continuation, timer: timer)
                    return Array(state.observers.values)
                }
                for observer in observers { observer.yield(.paused(id)) }
            }
        } onCancel: {
            // The caller went away (the page was closed): nothing waits for a decision any more.
            self.decide(id, .abort)
        }
        return (id, decision)
    }

    /// What a paused answer is shown through: the redactor, hiding as well what its request sent under secret names (its
    /// token, its cookies), which an upstream may echo — as the log hides them.
    func shownRedactor(for request: HTTPRequest) -> Redactor {
        redactor.hidingCredentials(of: request)
    }

    /// The answer body to send for `edited`, the console's edit of paused answer `id`'s body as it was `shown`: what was
    /// left as shown goes as the upstream sent it, echoed secrets and all; nil when `<redacted>` stands in a changed part.
    public func restoringHiddenSecrets(inAnswer edited: String, shown: String, ofPaused id: Int) -> Data? {
        guard let original = state.withLock({ $0.paused[id]?.responseBody }) else { return nil }
        return Self.restoringHiddenSecrets(in: edited, shown: shown, original: original)
    }

    /// The body to send for `edited`, the console's edit of paused request `id`'s body as it was `shown` (redacted): a
    /// JSON value or a form field left as shown goes as the request had it, secrets and all; nil when `<redacted>`
    /// stands in a part the user changed (it would go as those letters), or the request is no longer paused.
    public func restoringHiddenSecrets(in edited: String, shown: String, ofPaused id: Int) -> Data? {
        guard let original = state.withLock({ $0.paused[id]?.requestBody }) else { return nil }
        return Self.restoringHiddenSecrets(in: edited, shown: shown, original: original)
    }

    private struct File: Codable {
        var breakpoints: [String: BreakpointSetting] = [:]
    }
}

/// Pauses exchanges whose endpoint has a breakpoint on, and applies the decision: an edited request is
/// sent, an edited response is answered marked `isEdited` (never stored), an abort fails the request.
/// It sits above the capture, so the log holds what was really sent and received, and it adds an
/// `edited` record for an answer changed at a breakpoint.
public final class BreakpointTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let breakpoints: Breakpoints
    private let redactor: Redactor
    private let record: (@Sendable (RequestRecord) -> Void)?

    public init(base: any HTTPTransport, breakpoints: Breakpoints, redactor: Redactor,
                record: (@Sendable (RequestRecord) -> Void)? = nil) {
        self.base = base
        self.breakpoints = breakpoints
        self.redactor = redactor
        self.record = record
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let match = breakpoints.match(for: request)
        let setting = match?.setting ?? BreakpointSetting()
        let heldBy = match?.key ?? request.endpoint
        // A browser's CORS preflight is the browser's own, before the request the developer paused its URL for: it goes on
        // (a rule or a mock of method OPTIONS changes it).
        guard !setting.isOff, breakpoints.isActive, !request.isCORSPreflight else { return try await base.send(request) }
        var outgoing = request
        // An answer to pause must come whole, however slowly (one of declared length: of no declared length, it may never end).
        if setting.response == .pause { outgoing.holdsWholeAnswer = true }
        var requestChanged = false
        // What the log says an edit or an abort took: the app waited through the pause too.
        let started = breakpoints.now()
        if setting.request == .pause {
            let (id, decision) = await breakpoints.pause(phase: .request, request: request, response: nil, error: nil)
            switch decision {
            case .abort: throw abort(request, since: started, touch: Self.touch(id, heldBy, .requestAborted))
            case .continueWithRequest(let query, let headers, let body, let method, let path):
                outgoing = try Self.edited(request, query: query, headers: headers, body: body, method: method, path: path,
                                           shownAs: redactor.redact(request.headers))
                // The capture below records the edit with the exchange it sends, and the app's wait through the pause.
                outgoing.touches.append(Self.touch(id, heldBy, .requestEdited))
                outgoing.heldAtBreakpoint = max(0, breakpoints.now().timeIntervalSince(started))
                // The answer to another request than the one asked is no answer to that one: shown, never stored under it.
                // Compared as read, not as written: the edit writes the query again (`%2C` as `,`), which asks the same.
                let read = { (url: URL) in URLComponents(url: url, resolvingAgainstBaseURL: false).map { ($0.path, $0.queryItems ?? []) } }
                requestChanged = outgoing.method != request.method || read(outgoing.url)?.0 != read(request.url)?.0
                    || read(outgoing.url)?.1 != read(request.url)?.1 || outgoing.headers != request.headers || outgoing.body != request.body
            case .continueWithResponse(let status, let body, let headers):
                return answer(request, status: status, body: body, headers: Self.fields(headers, keeping: [:], shownAs: [:]),
                              since: started, touch: Self.touch(id, heldBy, .answeredAtRequest))
            case .continueUnchanged:
                // The capture below counts the wait before it as the exchange's (queued), and the touch says it.
                outgoing.heldAtBreakpoint = max(0, breakpoints.now().timeIntervalSince(started))
                outgoing.touches.append(Self.touch(id, heldBy, .requestHeld(seconds: Int(outgoing.heldAtBreakpoint.rounded()))))
            }
        }
        // A response breakpoint holds the answer after the capture below has made its record: kept back until the pause
        // ends, for it to say how long the app waited (the record's timings end when the upstream's answer came).
        let hold = setting.response == .pause ? RecordHold() : nil
        outgoing.recordHold = hold
        var heldTouches: [ExchangeTouch] = []
        defer { hold?.release(adding: heldTouches) }
        // What came from below is logged before what the pause made of it (an edit, an abort): the log's order is the
        // exchange's, so comparing a row with the one before it shows the edit, not its undoing.
        let logReceived = { hold?.release(adding: []) }
        var response: HTTPResponse
        do {
            response = try await base.send(outgoing)
            if requestChanged { response.isEdited = true }
        } catch {
            guard setting.error == .pause, !(error is CancellationError), (error as? KioskError) != .cancelled else { throw error }
            let (id, decision) = await breakpoints.pause(phase: .error, request: outgoing, response: nil, error: error)
            if case .continueWithResponse = decision { logReceived() } else if case .abort = decision { logReceived() }
            switch decision {
            case .continueWithResponse(let status, let body, let headers):
                return answer(outgoing, status: status, body: body, headers: Self.fields(headers, keeping: [:], shownAs: [:]),
                              since: started, touch: Self.touch(id, heldBy, .answeredAtError))
            case .abort: throw abort(outgoing, since: started, touch: Self.touch(id, heldBy, .errorAborted))
            case .continueUnchanged, .continueWithRequest: throw error
            }
        }
        // A streamed answer is already on its way to the app: there is no whole body to hold and edit.
        guard setting.response == .pause, response.stream == nil else { return response }
        let pausedAt = breakpoints.now()
        let (id, decision) = await breakpoints.pause(phase: .response, request: outgoing, response: response, error: nil)
        if case .continueWithResponse = decision { logReceived() } else if case .abort = decision { logReceived() }
        switch decision {
        case .continueWithResponse(let status, let body, let headers):
            var fields = headers.map {
                Self.fields($0, keeping: response.headers, shownAs: breakpoints.shownRedactor(for: outgoing).redact(response.headers))
            }
                ?? response.headers
            // An edited body is the user's, uncoded: the answer's own coding named the bytes it came in.
            if headers == nil { fields["Content-Encoding"] = nil }
            return answer(outgoing, status: status, body: body, headers: fields, since: started,
                          touch: Self.touch(id, heldBy, .responseEdited), upstreamStatus: response.status)
        case .abort:
            throw abort(outgoing, since: started,
                        touch: Self.touch(id, heldBy, .responseAborted(status: response.status)))
        case .continueUnchanged, .continueWithRequest:
            let held = Int(max(0, breakpoints.now().timeIntervalSince(pausedAt)).rounded())
            heldTouches = [Self.touch(id, heldBy, .responseHeld(seconds: held))]
            return response
        }
    }

    /// Holds a protocol switch (a WebSocket's handshake, which goes through a tunnel, not through `send`) at its
    /// request breakpoint, as `send` holds any request there: it is sent as it was or edited, answered in its place, or
    /// aborted — the last two logged here. Sent at once when no request breakpoint is set for it.
    public func holdSwitch(_ request: HTTPRequest) async -> SwitchHold {
        let match = breakpoints.match(for: request)
        guard match?.setting.request == .pause, breakpoints.isActive else { return .send(request, touches: []) }
        let heldBy = match?.key ?? request.endpoint
        let started = breakpoints.now()
        // Shown at the address the app opened (ws:, wss:), as its log record and the breakpoint's pattern name it.
        var shown = request
        if request.headers["Upgrade"]?.lowercased().contains("websocket") == true,
           var address = URLComponents(url: request.url, resolvingAgainstBaseURL: false) {
            address.scheme = request.url.scheme?.lowercased() == "https" ? "wss" : "ws"
            shown.url = address.url ?? request.url
        }
        let (id, decision) = await breakpoints.pause(phase: .request, request: shown, response: nil, error: nil)
        switch decision {
        case .abort:
            return .fail(abort(request, since: started, touch: Self.touch(id, heldBy, .requestAborted)))
        case .continueWithRequest(let query, let headers, let body, let method, let path):
            do {
                let edited = try Self.edited(request, query: query, headers: headers, body: body, method: method, path: path,
                                             shownAs: redactor.redact(request.headers))
                return .send(edited, touches: [Self.touch(id, heldBy, .requestEdited)])
            } catch {
                return .fail((error as? KioskError) ?? .invalidRequest("\(error)"))
            }
        case .continueWithResponse(let status, let body, let headers):
            return .answer(answer(request, status: status, body: body, headers: Self.fields(headers, keeping: [:], shownAs: [:]),
                                  since: started, touch: Self.touch(id, heldBy, .answeredAtRequest)))
        case .continueUnchanged:
            let held = Int(max(0, breakpoints.now().timeIntervalSince(started)).rounded())
            return .send(request, touches: [Self.touch(id, heldBy, .requestHeld(seconds: held))])
        }
    }

    /// Named by the breakpoint that held it (`heldBy`: a path's URL pattern, else its endpoint or host, as it was when it
    /// held it), as a rule or a mock is.
    private static func touch(_ id: Int, _ heldBy: String, _ outcome: ExchangeTouch.BreakpointOutcome) -> ExchangeTouch {
        ExchangeTouch(kind: .breakpoint, id: id, name: heldBy, phrase: .breakpoint(outcome))
    }

    /// An answer made at a breakpoint: marked edited (the store never keeps it) and logged as `edited`; its `fwd-status` the
    /// upstream's when it edits one (a 500 made a 200 is still found by `status:5xx`, as a rule's edit is), else its own.
    private func answer(_ request: HTTPRequest, status: Int, body: Data, headers: HTTPHeaderFields = [:], since started: Date,
                        touch: ExchangeTouch, upstreamStatus: Int? = nil) -> HTTPResponse {
        var fields = headers
        // The answer's framing is the transport's to write for the body it now has.
        fields["Content-Length"] = nil
        fields["Transfer-Encoding"] = nil
        if fields["Content-Type"] == nil { fields["Content-Type"] = "application/json" }
        // The app is told what the log says: Kiosk's member of Cache-Status is the edit's, not the cache's decision on
        // the answer it replaces (other caches' members stay).
        let edited = CacheStatus(recordedAs: .edited, status: upstreamStatus ?? status, isConditional: false, hasError: false)
        edited.replaceKiosksMember(in: &fields)
        var response = HTTPResponse(status: status, headers: fields, body: body, url: request.url, timings: RequestTimings(total: 0))
        response.isEdited = true
        response.cacheStatus = edited
        // Logged as the capture logs an exchange: what the app sent is hidden wherever the answer repeats it (an edit left
        // the echoed token as the upstream sent it, which the console showed hidden).
        let redactor = redactor.hidingCredentials(of: request)
        record?(RequestRecord(startedAt: started, source: request.source, endpoint: request.endpoint, method: request.method,
                              url: redactor.redact(request.url),
                              requestHeaders: redactor.redact(request.headers).map { .init(name: $0.name, value: $0.value) },
                              status: status,
                              responseHeaders: redactor.redact(response.framedHeaders(method: request.method)).map { .init(name: $0.name, value: $0.value) },
                              responseBody: CapturedBody(redacted: redactor.redactBody(body, contentType: fields["Content-Type"]),
                                                         ofFirst: body.count, size: body.count, limit: .max),
                              timings: elapsed(since: started), decision: .edited, cacheStatus: edited, touchedBy: [touch]))
        return response
    }

    /// The error an abort at a breakpoint gives the app, logged as what the app got (the capture below saw, at most,
    /// the upstream's answer that never reached it). An exchange whose app had closed its connection by then (a pause
    /// timed out after the app gave up, as pauses of gone apps end) is logged as dropped for that, not as an edit: the app
    /// got nothing either way, and nobody chose it.
    private func abort(_ request: HTTPRequest, since started: Date, touch: ExchangeTouch) -> KioskError {
        let error = Self.aborted(request)
        let redactor = redactor.hidingCredentials(of: request)
        let gone = request.appSide?.closedAt != nil
        var touch = touch
        if gone { touch.phrase = .breakpoint(.droppedAppGone) }
        let decision: CacheDecision = gone ? .network : .edited
        let said = gone ? "the app closed its connection while the exchange was held at a breakpoint: dropped, never answered" : error.description
        record?(RequestRecord(startedAt: started, source: request.source, endpoint: request.endpoint, method: request.method,
                              url: redactor.redact(request.url),
                              requestHeaders: redactor.redact(request.headers).map { .init(name: $0.name, value: $0.value) },
                              error: redactor.scrub(said), timings: elapsed(since: started), decision: decision,
                              cacheStatus: CacheStatus(recordedAs: decision, status: nil, isConditional: false, hasError: true),
                              touchedBy: [touch]))
        return error
    }

    private func elapsed(since started: Date) -> RequestTimings {
        RequestTimings(total: max(0, breakpoints.now().timeIntervalSince(started)))
    }

    static func aborted(_ request: HTTPRequest) -> KioskError {
        .transport(url: request.url.redactedString, message: "aborted at a breakpoint")
    }

    /// The request with its query items and headers replaced. Secret query items and headers keep their
    /// real values: the console only ever saw `<redacted>`, and sending that would break the request.
    static func edited(_ request: HTTPRequest, query: [(name: String, value: String)],
                       headers: [(name: String, value: String)], body: Data? = nil,
                       method: String? = nil, path: String? = nil, shownAs shown: HTTPHeaderFields) throws -> HTTPRequest {
        guard var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false) else { return request }
        if let path, path != components.percentEncodedPath {
            // Checked first: Foundation traps on a percent-encoded path it cannot take.
            guard HTTPSyntax.isAbsolutePath(path) else {
                throw KioskError.invalidRequest("The edited path is not a URL path (it starts with / and escapes other characters as %XX).")
            }
            components.percentEncodedPath = path
        }
        if let method, !HTTPSyntax.isToken(method) {
            throw KioskError.invalidRequest("The edited method is not an HTTP method (letters, digits and !#$%&'*+-.^_`|~ only).")
        }
        let original = components.queryItems ?? []
        var items: [URLQueryItem] = []
        for item in query {
            if item.value == Redactor.placeholder, let real = original.first(where: { $0.name == item.name }) {
                items.append(real)
            } else {
                items.append(URLQueryItem(name: item.name, value: item.value))
            }
        }
        // A query sent back as shown goes as the app wrote it: written again, a bare `flag` became `flag=` and `%2F` a `/`,
        // which some servers read apart (an edit meant for a header changed the query).
        let asShown = { (items: [URLQueryItem]) in items.map { [$0.name, $0.value ?? ""] } }
        if asShown(items) != asShown(original) { components.queryItems = items.isEmpty ? nil : items }
        guard let url = components.url else {
            throw KioskError.invalidRequest("The edited query does not make a valid URL.")
        }
        var edited = request
        edited.url = url
        if let method { edited.method = method }
        var fields = fields(headers, keeping: request.headers, shownAs: shown)
        // The framing is the transport's to write, whatever was typed for it: a length kept from an old body, or typed
        // over an unchanged one, would cut or pad it, or keep the upstream waiting for bytes that never come. An unchanged
        // body goes with the framing the app sent it with.
        fields.removeAll(named: "Content-Length")
        fields.removeAll(named: "Transfer-Encoding")
        if let body {
            edited.body = body
        } else {
            for name in ["Content-Length", "Transfer-Encoding"] {
                for value in request.headers.values(for: name) { fields.add(name: name, value: value) }
            }
        }
        edited.headers = fields
        return edited
    }

    /// Header fields as edited, where a value left as it was `shown` (redacted) is the `original`'s own: a secret is never
    /// shown, and sending it on unchanged must not need it typed. The n-th field of a name is matched with the n-th shown.
    static func fields(_ edited: [(name: String, value: String)]?, keeping original: HTTPHeaderFields,
                       shownAs shown: HTTPHeaderFields) -> HTTPHeaderFields {
        var fields = HTTPHeaderFields()
        var seen: [String: Int] = [:]
        // A name shown with a secret hidden in it (an upstream echoing a token in a field's name) is the original's own,
        // as a hidden value is: `shown` is `original` redacted, field for field.
        var named: [String: String] = [:]
        for (shownField, originalField) in zip(shown, original) where shownField.name != originalField.name {
            named[shownField.name.lowercased()] = originalField.name
        }
        for header in edited ?? [] {
            let name = named[header.name.lowercased()] ?? header.name
            let key = name.lowercased()
            let index = seen[key, default: 0]
            seen[key] = index + 1
            let shownValues = shown.values(for: header.name), originalValues = original.values(for: name)
            let kept = index < shownValues.count && index < originalValues.count && shownValues[index] == header.value
            fields.add(name: name, value: kept ? originalValues[index] : header.value)
        }
        return fields
    }
}
