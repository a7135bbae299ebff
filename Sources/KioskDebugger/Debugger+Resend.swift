import Foundation
public import KioskCore
import KioskStore

/// A logged request as the composer edits it: method, URL without its query, query items, headers and
/// body, exactly as logged — secrets read `<redacted>` and are put back by the request's source when it
/// is sent, so the composer never shows or needs a key.
public struct ComposedRequest: Sendable, Hashable {
    /// One query item, decoded.
    public struct QueryItem: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public var method: String
    /// The URL up to its path (a query typed here is read as items before `queryItems`).
    public var url: String
    public var queryItems: [QueryItem]
    public var headers: [RequestRecord.HeaderField]
    /// The body as text; nil or empty for none.
    public var body: String?

    public init(method: String, url: String, queryItems: [QueryItem] = [], headers: [RequestRecord.HeaderField] = [],
                body: String? = nil) {
        self.method = method
        self.url = url
        self.queryItems = queryItems
        self.headers = headers
        self.body = body
    }

    /// The logged request as it was sent: where the composer starts, and what "Revert" restores.
    public init(_ record: RequestRecord) {
        let (url, items) = Self.split(record.url) ?? (record.url, [])
        self.init(method: record.method, url: url, queryItems: items, headers: record.requestHeaders,
                  body: record.requestBody.map { String(decoding: $0.data, as: UTF8.self) })
    }

    /// `url` as the composer edits it: up to its path, and its query's items decoded; nil when it is no URL. The log
    /// writes secrets as a bare `<redacted>`, which no URL parser takes: percent-encoded first, the URL parses wherever it
    /// is, and its items read `<redacted>` again.
    public static func split(_ url: String) -> (url: String, items: [QueryItem])? {
        guard var components = URLComponents(string: url.replacingOccurrences(of: Redactor.placeholder, with: "%3Credacted%3E")) else {
            return nil
        }
        let items = components.queryItems ?? []
        components.query = nil
        components.fragment = nil
        return (components.string ?? url, items.map { QueryItem(name: $0.name, value: $0.value ?? "") })
    }

    /// What differs from `original`, for the new exchange's record ("method GET → POST", "page=1 → page=2",
    /// "header X-Debug added" in English); empty when nothing does.
    public func changes(from original: ComposedRequest) -> [ExchangeTouch.ResendChange] {
        var changes: [ExchangeTouch.ResendChange] = []
        if method != original.method { changes.append(.method(from: original.method, to: method)) }
        if url != original.url { changes.append(.url(from: original.url, to: url)) }
        if queryItems != original.queryItems {
            func text(_ items: [QueryItem]) -> String { items.isEmpty ? "none" : items.map { "\($0.name)=\($0.value)" }.joined(separator: "&") }
            changes.append(.query(from: text(original.queryItems), to: text(queryItems)))
        }
        // Not those the composer never sends (the transport writes them): "content-length added" would say what did not go.
        let names = { (headers: [RequestRecord.HeaderField]) in
            Set(headers.map { $0.name.lowercased() }).subtracting(Debugger.composerDroppedHeaders)
        }
        let before = names(original.headers), after = names(headers)
        for name in after.subtracting(before).sorted() { changes.append(.headerAdded(name)) }
        for name in before.subtracting(after).sorted() { changes.append(.headerRemoved(name)) }
        for name in before.intersection(after).sorted() {
            let values = { (headers: [RequestRecord.HeaderField]) in headers.filter { $0.name.lowercased() == name }.map(\.value) }
            if values(original.headers) != values(headers) { changes.append(.headerChanged(name)) }
        }
        if (body ?? "") != (original.body ?? "") { changes.append(.body) }
        return changes
    }
}

/// What resending a logged request came to.
public struct Resent: Sendable {
    /// The answer, when one came.
    public var response: HTTPResponse?
    /// Why no answer came (offline, a timeout, a refusal by the outbound policy...).
    public var error: KioskError?
    /// The new exchange in the request log (its record links to the original); nil with capture off.
    public var recordID: Int64?
}

/// How a resend the console waits for went (`Debugger.resendUnlessPaused`).
public enum ResendOutcome: Sendable {
    /// It ended: its answer or its error, and its record.
    case ended(Resent)
    /// A breakpoint paused it: the pause's id.
    case paused(Int)
}

// Edit and resend: a logged request sent again, as it was or edited, through the whole transport stack.
extension Debugger {
    /// The request headers the composer never sends: the transport writes them for the body and connection
    /// it actually uses.
    static let composerDroppedHeaders: Set<String> = ["host", "content-length", "transfer-encoding", "connection", "keep-alive"]

    /// Sends `record`'s request again — as `composed` when given, else as it was logged — through the whole
    /// transport stack (the outbound policy, breakpoints, mocks and rules apply; capture logs it as a new
    /// exchange whose `touchedBy` names the original and what was changed). Its source signs it anew; a
    /// source's request may only go to that source's origins, so a key never leaves for another host.
    /// Throws `invalidRequest` (or `unauthorized`) for a request that cannot be sent, sending nothing;
    /// a failure on the way is returned in `Resent.error`, like an answer. An answer that streams (an event stream) is
    /// read until it ends, for at most `window` or its first MB, then closed: what came is the answer, and the log's.
    public func resend(_ record: RequestRecord, as composed: ComposedRequest? = nil,
                       window: Duration = Debugger.streamedAnswerWindow) async throws -> Resent {
        let original = ComposedRequest(record)
        let composed = composed ?? original
        var request = try sendable(record, as: composed)
        let changes = composed.changes(from: original)
        let touch = ExchangeTouch(kind: .resend, id: Int(record.id), name: "request #\(record.id)", phrase: .resent(changes: changes))
        let lastBefore = try log?.records(matching: RequestFilter(limit: 1)).first?.id ?? 0
        var result = Resent()
        // An app's exchange through the proxy goes back the way it came: the proxy's pipeline, to any host.
        let proxied = record.source == nil && !ownEndpoints.contains(record.endpoint)
        if proxied { request.purpose = .proxied }
        do {
            request.touches.append(touch)
            var response = try await (proxied ? sendProxied : send)(request)
            // Nobody else reads the rest of a streamed answer: unread, the exchange would wait on it for good, never logged.
            if let stream = response.stream {
                response.body.append(await Self.drained(stream, within: window, upTo: Self.streamedAnswerBytes))
                response.stream = nil
            }
            result.response = response
        } catch is CancellationError {
            throw KioskError.cancelled
        } catch {
            guard let failure = error.kioskError, failure != .cancelled else { throw error }
            result.error = failure
        }
        // The newest record this resend made (a retried exchange makes one per attempt; the last is the answer).
        if let log {
            try log.flush()
            let made = try log.records(matching: RequestFilter(afterID: lastBefore, limit: 100))
            // Its touch as sent; else as the capture scrubbed it — a secret typed into the edit is hidden in the logged
            // change ("query api_key=<redacted>"), so the newest resend of this record.
            result.recordID = (made.first { $0.touchedBy.first == touch }
                ?? made.first { $0.touchedBy.first.map { $0.kind == .resend && $0.id == touch.id } == true })?.id
        }
        return result
    }

    /// `resend(_:as:)`, returning as soon as a breakpoint pauses the exchange it sends (`.paused`, with the pause's id):
    /// a page waiting for the resend would wait for a decision taken on another page, for as long as the pause lasts.
    /// The resend goes on meanwhile, and is logged once the pause is decided.
    public func resendUnlessPaused(_ record: RequestRecord, as composed: ComposedRequest? = nil) async throws -> ResendOutcome {
        let (outcomes, continuation) = AsyncThrowingStream.makeStream(of: ResendOutcome.self)
        let pauses = breakpoints.changes()
        // Unstructured, both: the resend outlives this call when it pauses (a task group would wait for it).
        let watching = Task { [breakpoints] in
            for await change in pauses {
                if case .paused(let id) = change, breakpoints.paused(id: id)?.resending == record.id { continuation.yield(.paused(id)) }
            }
        }
        defer { watching.cancel() }
        Task {
            do { continuation.yield(.ended(try await resend(record, as: composed))) } catch { continuation.finish(throwing: error) }
            continuation.finish()
        }
        for try await outcome in outcomes { return outcome }
        throw CancellationError()
    }

    /// How long a resend reads an answer that streams: an event stream may never end by itself.
    public static let streamedAnswerWindow: Duration = .seconds(10)
    /// How much of an answer that streams a resend reads (the log keeps a streamed body's first MB too).
    static let streamedAnswerBytes = 1 << 20

    /// What `stream` brings until it ends, `window` passes or `limit` bytes came, whichever is first; then it is closed
    /// (the capture logs it as cut where it was). A failure of the stream ends what it brings.
    static func drained(_ stream: BodyStream, within window: Duration, upTo limit: Int) async -> Data {
        let timer = Task {
            try? await Task.sleep(for: window)
            if !Task.isCancelled { stream.cancel() }
        }
        // The caller gone (a console's request closed) closes the stream too, rather than reading on for the window.
        let collected = await withTaskCancellationHandler {
            var collected = Data()
            while collected.count < limit, !Task.isCancelled, let chunk = try? await stream.next() { collected.append(chunk) }
            return collected
        } onCancel: {
            stream.cancel()
        }
        timer.cancel()
        // Ended by the limit (or the window), not by the upstream: closed, so that the exchange ends and is logged.
        stream.cancel()
        return collected
    }

    /// Why `record` cannot be sent again as it was logged ("a secret of it is not known": an app's token the log hides),
    /// nil when it can: what a page says in place of its Replay button.
    public func replayRefusal(_ record: RequestRecord) -> ResendProblem? {
        do {
            _ = try sendable(record, as: ComposedRequest(record))
            return nil
        } catch {
            return error
        }
    }

    /// The request `composed` (of `record`) sends, signed by its source; throws the `ResendProblem` of one that cannot be
    /// sent: a field that cannot, a body cut at capture and not edited, another origin than its source's, a secret the
    /// log hides and nothing puts back, keys its source lacks.
    private func sendable(_ record: RequestRecord, as composed: ComposedRequest) throws(ResendProblem) -> HTTPRequest {
        // A WebSocket's record is its handshake and the bytes that passed: sent again, it would be a handshake with no app
        // to speak the protocol it opens (and its ws: address is no URL of an HTTP request).
        if record.url.hasPrefix("ws://") || record.url.hasPrefix("wss://") { throw .webSocket(id: record.id) }
        var request = try httpRequest(composed, for: record)
        if let body = record.requestBody, body.isTruncated, composed.body == ComposedRequest(record).body {
            throw .truncatedBody(id: record.id)
        }
        // What came of a body its app never finished is not the request it meant to send: an upstream would act on a part.
        if record.touchedBy.contains(where: { $0.kind == .bodyCut }), composed.body == ComposedRequest(record).body {
            throw .incompleteBody(id: record.id)
        }
        if let sourceID = record.source, let source = sources[sourceID] {
            guard let origin = Origin(request.url), source.origins.contains(origin) else {
                throw .notSourceOrigin(id: record.id, source: sourceID.displayName,
                                       allowed: source.origins.map(\.description).sorted().joined(separator: ", "),
                                       keysPutBack: record.url.contains(Redactor.placeholder))
            }
            do {
                request = try source.signed(request)
            } catch {
                throw .cannotSign(error.kioskError?.description ?? String(describing: error))
            }
        } else if let logged = URL(string: ComposedRequest(record).url), let origin = Origin(logged), Origin(request.url) != origin {
            // An app's exchange (or Kiosk's own without a source) goes again where it went: an edit changes what is asked,
            // not of whom — the proxy's guards (its own listeners, which it answers 508) and the log's endpoint stay true.
            throw .otherOrigin(id: record.id, origin: origin.description)
        }
        // The body too: a login's `{"password": "<redacted>"}` sent again would set the app's password to that text.
        let bodyHidesSecrets = request.body.map { $0.range(of: Data(Redactor.placeholder.utf8)) != nil } ?? false
        if bodyHidesSecrets || request.url.absoluteString.contains("%3Credacted%3E")
            || request.headers.fields.contains(where: { $0.value.contains(Redactor.placeholder) }) {
            // Named, so that the developer knows what to type in the composer.
            let query = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            let names = query.filter { $0.value?.contains(Redactor.placeholder) == true }.map { ResendProblem.HiddenSecret(name: $0.name, place: .query) }
                + request.headers.fields.filter { $0.value.contains(Redactor.placeholder) }.map { ResendProblem.HiddenSecret(name: $0.name, place: .header) }
                + (bodyHidesSecrets ? Self.hiddenBodyFields(request.body ?? Data()) : [])
            throw .hiddenSecrets(id: record.id, Array(Set(names)).sorted { ($0.name ?? "", $0.place) < ($1.name ?? "", $1.place) })
        }
        return request
    }

    /// The fields of a body holding the log's placeholder: a JSON document's members (at any depth) or a form's pairs
    /// whose value it is; one secret of the body unnamed when it is elsewhere (inside a text, a body of another kind).
    static func hiddenBodyFields(_ body: Data) -> [ResendProblem.HiddenSecret] {
        var names: [String] = []
        if let document = try? OrderedJSON.parse(body) {
            func walk(_ value: OrderedJSON) {
                switch value {
                case .object(let members):
                    for member in members {
                        if case .string(Redactor.placeholder) = member.value { names.append(member.key) } else { walk(member.value) }
                    }
                case .array(let elements): elements.forEach(walk)
                default: break
                }
            }
            walk(document)
        } else if let text = String(data: body, encoding: .utf8) {
            for pair in text.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2 else { continue }
                let value = String(parts[1]).removingPercentEncoding ?? String(parts[1])
                if value == Redactor.placeholder { names.append(String(parts[0]).removingPercentEncoding ?? String(parts[0])) }
            }
        }
        return names.isEmpty ? [ResendProblem.HiddenSecret(name: nil, place: .body)] : names.map { ResendProblem.HiddenSecret(name: $0, place: .body) }
    }

    /// The request `composed` describes, unsigned, with `record`'s source and endpoint; throws the `ResendProblem` of a
    /// method, URL or header that cannot be sent.
    private func httpRequest(_ composed: ComposedRequest, for record: RequestRecord) throws(ResendProblem) -> HTTPRequest {
        let method = composed.method.trimmingCharacters(in: .whitespaces)
        let fields = composed.headers.map { RequestRecord.HeaderField(name: $0.name.trimmingCharacters(in: .whitespaces), value: $0.value) }
        guard HTTPSyntax.isToken(method) else { throw .badMethod }
        // CONNECT asks for a tunnel to an authority, not for a URL (RFC 9110 §9.3.6): sent with one, no server reads it so.
        guard method.uppercased() != "CONNECT" else { throw .tunnelMethod }
        for (position, header) in fields.enumerated() {
            guard HTTPSyntax.isToken(header.name) else { throw .badHeaderName(position: position + 1) }
            guard HTTPSyntax.isFieldValue(header.value) else { throw .badHeaderValue(name: header.name) }
        }
        let text = composed.url.trimmingCharacters(in: .whitespaces)
        guard var components = URLComponents(string: text.replacingOccurrences(of: Redactor.placeholder, with: "%3Credacted%3E")),
              let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", components.host?.isEmpty == false,
              // A user name before the host is sent to no one (the proxy refuses such a target): logged, it would be a lie.
              components.user == nil, components.password == nil else {
            throw .notHTTPURL(String(text.prefix(200)))
        }
        // A query typed into the URL comes first, then the listed items; the placeholder is percent-encoded
        // like any value, which the source's signing reads back as `<redacted>`.
        let items = (components.queryItems ?? []) + composed.queryItems.map { URLQueryItem(name: $0.name, value: $0.value) }
        components.fragment = nil
        components.percentEncodedQuery = items.isEmpty ? nil : items.map { item in
            PercentEncoding.unreserved(item.name) + "=" + PercentEncoding.unreserved(item.value ?? "")
        }.joined(separator: "&")
        guard let url = components.url else { throw .unsendableURL(String(text.prefix(200))) }
        var headers = HTTPHeaderFields()
        // The headers capture hid in this record, by name.
        let hiddenAtCapture = Set(record.requestHeaders.filter { $0.value == Redactor.placeholder }.map { $0.name.lowercased() })
        for header in fields {
            // A header logged as `<redacted>` (Authorization, Cookie) is one Kiosk never learns back: left out of a source's
            // request, which its source signs anew; kept in an app's, so that sending it asks for it (`sendable`) rather than
            // sending the app's request without its credentials. One the developer typed so (added, or renamed) is theirs:
            // kept too, and asked for, rather than left out while the log says it was added.
            let leftOut = header.value == Redactor.placeholder && record.source != nil && hiddenAtCapture.contains(header.name.lowercased())
            guard !leftOut, !Self.composerDroppedHeaders.contains(header.name.lowercased()) else { continue }
            headers.add(name: header.name, value: header.value.trimmingCharacters(in: .whitespaces))
        }
        // A body left as logged goes as its bytes: the composer's text of a binary one (a protobuf, a file in a form)
        // holds U+FFFD for what is not UTF-8, and sent, it would be another body.
        let unchanged = composed.body == ComposedRequest(record).body
        let body = unchanged ? record.requestBody.flatMap { $0.data.isEmpty ? nil : $0.data }
            : composed.body.flatMap { $0.isEmpty ? nil : Data($0.utf8) }
        return HTTPRequest(method: method, url: url, headers: headers, body: body,
                           source: record.source, endpoint: record.endpoint)
    }
}

/// Why a logged request cannot be sent again, as it was or as edited: `english` for the CLI, the JSON API and the log;
/// the console says it in the page's language (ConsoleWords).
public enum ResendProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// A secret the log hid in place of its value: a query item's, a header's or a body's (a field of it, named when it
    /// can be).
    public struct HiddenSecret: Sendable, Hashable {
        /// Where a secret was hidden.
        public enum Place: Int, Sendable, Hashable, Comparable {
            case query, header, body
            public static func < (lhs: Place, rhs: Place) -> Bool { lhs.rawValue < rhs.rawValue }
        }

        /// The item's, header's or field's name; nil for a secret somewhere in a body.
        public let name: String?
        public let place: Place

        public init(name: String?, place: Place) {
            self.name = name
            self.place = place
        }
    }

    case badMethod
    /// The method is CONNECT, which asks for a tunnel, not a URL.
    case tunnelMethod
    /// The header at this position (from 1) has a name that is no RFC 9110 token.
    case badHeaderName(position: Int)
    case badHeaderValue(name: String)
    /// The URL typed (cut to 200 characters) is no http(s) URL with a host, or names a user before it.
    case notHTTPURL(String)
    case unsendableURL(String)
    /// The request's body was cut at capture and the edit did not replace it.
    case truncatedBody(id: Int64)
    /// The request's body never came whole from its app (it was not sent), and the edit did not replace it.
    case incompleteBody(id: Int64)
    /// A catalog's request sent elsewhere than its source's origins (`allowed`); `keysPutBack` when its URL carries keys.
    case notSourceOrigin(id: Int64, source: String, allowed: String, keysPutBack: Bool)
    /// An app's request sent to another origin than the one it went to.
    case otherOrigin(id: Int64, origin: String)
    /// Secrets the log hid, which nothing puts back (an app's own token): typed in Edit and resend, or removed.
    case hiddenSecrets(id: Int64, [HiddenSecret])
    /// Its source could not sign it (its keys are not configured): the reason, in English.
    case cannotSign(String)
    /// The record is a WebSocket's, which is not sent again.
    case webSocket(id: Int64)

    /// The problem in an English sentence.
    public var english: String {
        switch self {
        case .badMethod: "The method is not an HTTP method (RFC 9110 token: letters, digits and !#$%&'*+-.^_`|~ only)."
        case .badHeaderName(let position): "Header \(position)'s name is not a valid HTTP header name (RFC 9110 token)."
        case .badHeaderValue(let name):
            "The value of header \(name) is not a valid HTTP field value (CR, LF, NUL and other control characters but the tab are not allowed)."
        case .tunnelMethod: "CONNECT asks for a tunnel, not for a URL, so a request is not sent with it."
        case .notHTTPURL(let text): "The URL must be an http(s) URL with a host, and no user name before it (got “\(text)”)."
        case .unsendableURL(let text): "The URL cannot be sent: “\(text)”."
        case .truncatedBody(let id): "Request #\(id)'s body was truncated at capture, so it cannot be sent again whole; edit it first."
        case .incompleteBody(let id):
            "Request #\(id)'s body never came whole from its app, so it was not sent, nor is it sent again as a part; type the body in Edit and resend."
        case .notSourceOrigin(let id, let source, let allowed, let keysPutBack):
            "Request #\(id) is \(source)'s\(keysPutBack ? " (Kiosk puts its keys back when sending it)" : ""), so it can only go to \(allowed)."
        case .otherOrigin(let id, let origin):
            "Request #\(id) went to \(origin); an edit may change its method, path, query, headers and body, not where it goes. "
                + "Copy it as cURL to send it elsewhere."
        case .hiddenSecrets(let id, let secrets):
            "Cannot send request #\(id) again as it was: Kiosk hid \(Self.listed(secrets, query: "query", header: "header", body: "body", none: "a secret")) "
                + "when it logged it, and does not know it. Type it in Edit and resend (or remove it)."
        case .cannotSign(let reason): reason
        case .webSocket(let id): "Request #\(id) opened a WebSocket, which is not sent again: Replay would open one with nobody to speak "
            + "on it. Open it again from the app."
        }
    }

    public var description: String { english }

    /// The hidden secrets named for a sentence, each with where it was (`query`, `header` or `body` in the sentence's
    /// language); a secret of a body with no name is the body's own.
    public static func listed(_ secrets: [HiddenSecret], query: String, header: String, body: String, none: String) -> String {
        secrets.isEmpty ? none : secrets.map { secret in
            let place = switch secret.place { case .query: query; case .header: header; case .body: body }
            return secret.name.map { "\($0) (\(place))" } ?? none + " (\(place))"
        }.joined(separator: ", ")
    }
}
