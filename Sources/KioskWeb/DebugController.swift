import Foundation
import Hummingbird
import KioskApp
import KioskCore
import KioskDebugger

/// The network debugger's console under `/debug` and its JSON under `/debug/api`: the request log with
/// filters and search, and each request in full. Served only to loopback listeners unless a token is
/// configured (see `DebugAccess`).
struct DebugController: Sendable {
    let kiosk: Kiosk
    let access: DebugAccess

    func register(on router: Router<BasicRequestContext>) {
        router.get("/debug") { request, _ in
            try await access.check(request)
            let (filter, query) = try Self.filter(request)
            let records = try withLog().records(matching: filter)
            return Pages.response(DebugPages.requests(records, query: query, filter: filter, count: try withLog().count(),
                                                      paused: kiosk.debugger.breakpoints.paused.count))
        }
        router.get("/debug/requests/{id}") { request, context in
            try await access.check(request)
            let record = try record(try context.parameters.require("id"))
            return Pages.response(DebugPages.request(record))
        }
        router.get("/debug/api/requests") { request, _ in
            try await access.check(request)
            let (filter, _) = try Self.filter(request)
            return try JSONResponse.ok(try withLog().records(matching: filter).map(RequestJSON.init))
        }
        router.get("/debug/api/requests/{id}") { request, context in
            try await access.check(request)
            return try JSONResponse.ok(RequestJSON(try record(try context.parameters.require("id"))))
        }
        router.get("/debug/har") { request, _ in
            try await access.check(request)
            let (filter, query) = try Self.filter(request)
            // The whole log (or all that match) unless a limit is asked for.
            let maximum = query["limit"] == nil ? 100_000 : filter.limit
            let data = try withLog().exportHAR(matching: filter, maximum: maximum).archive
            let name = "kiosk-\(Int(kiosk.now().timeIntervalSince1970)).har"
            return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8",
                                                   .contentDisposition: "attachment; filename=\"\(name)\""],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }
        router.get("/debug/endpoints") { request, _ in
            try await access.check(request)
            return Pages.response(DebugPages.endpoints(endpoints(), settings: try kiosk.debugger.breakpoints.settings()))
        }
        router.get("/debug/api/endpoints") { request, _ in
            try await access.check(request)
            return try JSONResponse.ok(endpoints())
        }
        router.get("/debug/paused") { request, _ in
            try await access.check(request)
            return Pages.response(DebugPages.paused(kiosk.debugger.breakpoints.paused, now: kiosk.now()))
        }
        router.get("/debug/api/paused") { request, _ in
            try await access.check(request)
            return try JSONResponse.ok(kiosk.debugger.breakpoints.paused.map(PausedJSON.init))
        }
        router.get("/debug/paused/{id}") { request, context in
            try await access.check(request)
            let exchange = try paused(try context.parameters.require("id"))
            return Pages.response(DebugPages.pausedExchange(exchange, error: nil, draft: nil))
        }
        router.post("/debug/paused/{id}") { request, context in
            try await access.check(request)
            let form = try await CSRFProtection.verifiedForm(request, maximumBytes: Self.maximumEditBytes, allowsLineBreaks: true)
            return try decide(try paused(try context.parameters.require("id")), form: form)
        }
        router.post("/debug/breakpoints/{endpoint}") { request, context in
            try await access.check(request)
            let form = try await CSRFProtection.verifiedForm(request)
            let endpoint = try context.parameters.require("endpoint")
            guard endpoints().contains(where: { $0.name == endpoint }) else {
                throw WebError.notFound("There is no endpoint named “\(endpoint.prefix(60))”.")
            }
            func mode(_ name: String) throws -> BreakpointMode {
                guard let raw = form[name], let mode = BreakpointMode(rawValue: raw) else {
                    throw WebError.badRequest("\(name) must be pause or ignore.")
                }
                return mode
            }
            try kiosk.debugger.breakpoints.set(BreakpointSetting(request: try mode("request"), response: try mode("response"),
                                                        error: try mode("error")), for: endpoint)
            return WebController.seeOther("/debug/endpoints#" + endpoint)
        }
        router.get("/debug/mocks") { request, _ in
            try await access.check(request)
            return Pages.response(DebugPages.mocks(try kiosk.debugger.mocks.all()))
        }
        // One click from a logged response to a rule that answers it from now on.
        router.post("/debug/requests/{id}/mock") { request, context in
            try await access.check(request)
            _ = try await CSRFProtection.verifiedForm(request)
            let record = try record(try context.parameters.require("id"))
            guard let status = record.status, let body = record.responseBody else {
                throw WebError.badRequest("Request #\(record.id) has no response to mock.")
            }
            guard !body.isTruncated else {
                throw WebError.badRequest("Request #\(record.id)'s body was truncated at capture, so it cannot be replayed whole.")
            }
            let headers = record.responseHeaders.filter {
                !["content-length", "content-encoding", "transfer-encoding", "connection", "set-cookie",
                  MockingTransport.markerHeader.lowercased()].contains($0.name.lowercased())
            }
            try kiosk.debugger.mocks.add([MockRule(method: record.method, urlPattern: record.url, status: status, headers: headers,
                                          body: body.data, origin: "from request #\(record.id)")])
            return WebController.seeOther("/debug/mocks")
        }
        router.post("/debug/requests/{id}/replay") { request, context in
            try await access.check(request)
            _ = try await CSRFProtection.verifiedForm(request)
            let record = try record(try context.parameters.require("id"))
            do {
                _ = try await kiosk.debugger.replay(record)
            } catch let error as KioskError where error.isConnectivityFailure || error.isRetryable {
                // The failed exchange is in the log like any other; the list shows it.
            }
            return WebController.seeOther("/debug")
        }
        router.post("/debug/mocks/{id}/{action}") { request, context in
            try await access.check(request)
            _ = try await CSRFProtection.verifiedForm(request)
            guard let id = Int(try context.parameters.require("id")) else { throw WebError.badRequest("A rule id is a whole number.") }
            do {
                switch try context.parameters.require("action") {
                case "enable": try kiosk.debugger.mocks.setEnabled(true, id: id)
                case "disable": try kiosk.debugger.mocks.setEnabled(false, id: id)
                case "delete": try kiosk.debugger.mocks.remove(id: id)
                default: throw WebError.notFound("There is no such action on a mock rule.")
                }
            } catch KioskError.notFound {
                throw WebError.notFound("There is no mock rule \(id).")
            }
            return WebController.seeOther("/debug/mocks")
        }
        router.post("/debug/login") { request, _ in try await access.login(request) }
    }

    /// The largest edit form accepted: a response body may be big (a Marvel page is ~75 KB).
    static let maximumEditBytes = 8 << 20

    private func paused(_ rawID: String) throws -> PausedExchange {
        guard let id = Int(rawID), id > 0 else { throw WebError.badRequest("A paused request's id is a positive whole number.") }
        guard let exchange = kiosk.debugger.breakpoints.paused(id: id) else {
            throw WebError.notFound("Request \(id) is not paused any more: it was decided or its timeout continued it.")
        }
        return exchange
    }

    /// Applies the console's decision: continue, abort, or an edit (checked first; a bad edit is shown
    /// again with its error and the request stays paused).
    private func decide(_ exchange: PausedExchange, form: QueryString) throws -> Response {
        let decision: PauseDecision
        switch form["action"] {
        case "continue": decision = .continueUnchanged
        case "abort": decision = .abort
        case "edit":
            switch exchange.phase {
            case .request:
                decision = .continueWithRequest(query: Self.lines(form["query"] ?? "", separator: "="),
                                                headers: Self.lines(form["headers"] ?? "", separator: ":"))
            case .response, .error:
                let body = Data((form["body"] ?? "").utf8)
                guard let status = Int(form["status"] ?? ""), (100...599).contains(status) else {
                    return Pages.response(DebugPages.pausedExchange(exchange, error: "The status must be a number from 100 to 599.",
                                                                    draft: form["body"]), status: .unprocessableContent)
                }
                do {
                    try kiosk.debugger.validateEdit(endpoint: exchange.endpoint, url: URL(string: exchange.url) ?? URL(string: "http://invalid/")!,
                                                   status: status, body: body)
                } catch let error as KioskError {
                    return Pages.response(DebugPages.pausedExchange(exchange, error: error.description, draft: form["body"]),
                                          status: .unprocessableContent)
                }
                decision = .continueWithResponse(status: status, body: body)
            }
        default:
            throw WebError.badRequest("The action must be continue, abort or edit.")
        }
        guard kiosk.debugger.breakpoints.decide(exchange.id, decision) else {
            throw WebError.notFound("Request \(exchange.id) is not paused any more: its timeout continued it.")
        }
        return WebController.seeOther("/debug/paused")
    }

    /// "name=value" or "Name: value" lines; blank lines skipped.
    static func lines(_ text: String, separator: Character) -> [(name: String, value: String)] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let parts = line.split(separator: separator, maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return nil }
            return (name, parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        }
    }

    private func endpoints() -> [EndpointDescription] { kiosk.debugger.endpoints }

    /// The debugger, when it has a request log to read; else a 404 page saying capture is off.
    private func withLog() throws -> Debugger {
        guard kiosk.debugger.hasRequestLog else {
            throw WebError(status: .notFound, title: "Capture is off",
                           message: "The request log is disabled in the configuration (\"capture\": false).", retryPath: nil)
        }
        return kiosk.debugger
    }

    private func record(_ rawID: String) throws -> RequestRecord {
        guard let id = Int64(rawID), id > 0 else { throw WebError.badRequest("A request id is a positive whole number.") }
        guard let record = try withLog().record(id: id) else {
            throw WebError.notFound("There is no request \(id) in the log; it may have been evicted.")
        }
        return record
    }

    /// The list's filter from `?q=&source=&status=&method=&decision=&min_ms=&before=&limit=`; 400 for
    /// anything unknown or malformed.
    static func filter(_ request: Request) throws -> (RequestFilter, QueryString) {
        let query = try QueryString(parsing: request.uri.query)
        let known: Set<String> = ["q", "source", "status", "method", "decision", "min_ms", "before", "limit"]
        for name in query.names where !known.contains(name) {
            throw WebError.badRequest("Unknown parameter \"\(name.prefix(40))\"; valid: \(known.sorted().joined(separator: ", ")).")
        }
        var filter = RequestFilter(limit: 100)
        if let text = query["q"]?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
            guard text.count <= 200 else { throw WebError.badRequest("The search text is longer than 200 characters.") }
            filter.text = text
        }
        if let raw = query["source"], !raw.isEmpty {
            guard let source = SourceID(rawValue: raw) else { throw WebError.badRequest("There is no source named “\(raw.prefix(40))”.") }
            filter.source = source
        }
        if let raw = query["status"], !raw.isEmpty {
            guard let statusClass = StatusClass(raw) else { throw WebError.badRequest("The status must be 2xx, 3xx, 4xx, 5xx or error.") }
            filter.statusClass = statusClass
        }
        if let raw = query["method"], !raw.isEmpty {
            guard raw.count <= 10, raw.allSatisfy(\.isLetter) else { throw WebError.badRequest("That is not an HTTP method.") }
            filter.method = raw.uppercased()
        }
        if let raw = query["decision"], !raw.isEmpty {
            guard let decision = CacheDecision(rawValue: raw) else {
                throw WebError.badRequest("The decision must be one of \(CacheDecision.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            filter.decision = decision
        }
        if let raw = query["min_ms"], !raw.isEmpty {
            guard let milliseconds = Double(raw), milliseconds >= 0, milliseconds < 86_400_000 else {
                throw WebError.badRequest("min_ms must be a number of milliseconds from 0.")
            }
            filter.minimumDuration = milliseconds / 1000
        }
        if let raw = query["before"], !raw.isEmpty {
            guard let id = Int64(raw), id > 0 else { throw WebError.badRequest("before must be a request id.") }
            filter.beforeID = id
        }
        if let raw = query["limit"], !raw.isEmpty {
            guard let limit = Int(raw), (1...1000).contains(limit) else { throw WebError.badRequest("limit must be from 1 to 1000.") }
            filter.limit = limit
        }
        return (filter, query)
    }

    }

/// Who may use the debugger. It shows every request Kiosk makes (redacted, but still a view into the
/// user's reading), so by default only a loopback listener serves it; with a token configured, any
/// listener serves it to a browser that proved it knows the token.
struct DebugAccess: Sendable {
    /// The shared secret, when one is configured.
    let token: String?
    /// Whether the web app listens on a loopback address only.
    let isLoopback: Bool

    static let cookieName = "kiosk_debug"

    /// Throws a 403 page (with a token form when a token is configured) unless the request may see the debugger.
    func check(_ request: Request) async throws {
        if let token {
            guard let presented = request.cookies[Self.cookieName]?.value,
                  CSRFProtection.constantTimeEqual(presented, token) else {
                throw WebError(status: .forbidden, title: "Debugger locked",
                               message: "Enter the debug token (KIOSK_DEBUG_TOKEN) to open the network debugger.",
                               retryPath: nil, showsDebugLogin: true)
            }
            return
        }
        guard isLoopback else {
            throw WebError.forbidden("The network debugger is only served when Kiosk listens on loopback; "
                                     + "set KIOSK_DEBUG_TOKEN to use it from another machine.")
        }
    }

    /// `POST /debug/login`: a correct token sets the debug cookie and opens the console.
    func login(_ request: Request) async throws -> Response {
        let form = try await CSRFProtection.verifiedForm(request)
        guard let token else { return WebController.seeOther("/debug") }
        guard let presented = form["token"], CSRFProtection.constantTimeEqual(presented, token) else {
            throw WebError(status: .forbidden, title: "Debugger locked", message: "That is not the debug token.",
                           retryPath: nil, showsDebugLogin: true)
        }
        var response = WebController.seeOther("/debug")
        response.headers[.setCookie] = "\(Self.cookieName)=\(token); HttpOnly; SameSite=Strict; Path=/debug"
        return response
    }
}

/// A paused exchange in `/debug/api/paused`.
struct PausedJSON: Encodable {
    let id: Int
    let phase: String
    let endpoint: String
    let method: String
    let url: String
    let status: Int?
    let error: String?
    let pausedAt: Date
    let deadline: Date

    init(_ exchange: PausedExchange) {
        id = exchange.id
        phase = exchange.phase.rawValue
        endpoint = exchange.endpoint
        method = exchange.method
        url = exchange.url
        status = exchange.status
        error = exchange.error
        pausedAt = exchange.pausedAt
        deadline = exchange.deadline
    }
}
