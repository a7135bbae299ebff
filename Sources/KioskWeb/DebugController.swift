import Foundation
import Hummingbird
import KioskApp
import KioskCore
import KioskStore

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
            let records = try log().records(matching: filter)
            return Pages.response(DebugPages.requests(records, query: query, filter: filter, count: try log().count()))
        }
        router.get("/debug/requests/{id}") { request, context in
            try await access.check(request)
            let record = try record(try context.parameters.require("id"))
            return Pages.response(DebugPages.request(record))
        }
        router.get("/debug/api/requests") { request, _ in
            try await access.check(request)
            let (filter, _) = try Self.filter(request)
            return try JSONResponse.ok(try log().records(matching: filter).map(RequestJSON.init))
        }
        router.get("/debug/api/requests/{id}") { request, context in
            try await access.check(request)
            return try JSONResponse.ok(RequestJSON(try record(try context.parameters.require("id"))))
        }
        router.get("/debug/har") { request, _ in
            try await access.check(request)
            let (filter, query) = try Self.filter(request)
            try log().flushQuietly()
            // The whole log (or all that match) unless a limit is asked for.
            let maximum = query["limit"] == nil ? 100_000 : filter.limit
            let data = try HAR.export(try log().fullRecords(matching: filter, maximum: maximum))
            let name = "kiosk-\(Int(kiosk.now().timeIntervalSince1970)).har"
            return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8",
                                                   .contentDisposition: "attachment; filename=\"\(name)\""],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }
        router.get("/debug/endpoints") { request, _ in
            try await access.check(request)
            return Pages.response(DebugPages.endpoints(endpoints()))
        }
        router.get("/debug/api/endpoints") { request, _ in
            try await access.check(request)
            return try JSONResponse.ok(endpoints())
        }
        router.get("/debug/mocks") { request, _ in
            try await access.check(request)
            return Pages.response(DebugPages.mocks(try kiosk.mocks.all()))
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
            try kiosk.mocks.add([MockRule(method: record.method, urlPattern: record.url, status: status, headers: headers,
                                          body: body.data, origin: "from request #\(record.id)")])
            return WebController.seeOther("/debug/mocks")
        }
        router.post("/debug/mocks/{id}/{action}") { request, context in
            try await access.check(request)
            _ = try await CSRFProtection.verifiedForm(request)
            guard let id = Int(try context.parameters.require("id")) else { throw WebError.badRequest("A rule id is a whole number.") }
            do {
                switch try context.parameters.require("action") {
                case "enable": try kiosk.mocks.setEnabled(true, id: id)
                case "disable": try kiosk.mocks.setEnabled(false, id: id)
                case "delete": try kiosk.mocks.remove(id: id)
                default: throw WebError.notFound("There is no such action on a mock rule.")
                }
            } catch KioskError.notFound {
                throw WebError.notFound("There is no mock rule \(id).")
            }
            return WebController.seeOther("/debug/mocks")
        }
        router.post("/debug/login") { request, _ in try await access.login(request) }
    }

    /// Every endpoint of every configured source, then the image fetches.
    private func endpoints() -> [EndpointDescription] {
        let hosts = kiosk.catalog.sources.values.flatMap(\.imageHosts).sorted()
        return SourceID.allCases.compactMap { kiosk.catalog.sources[$0] }.flatMap(\.endpoints) + [
            EndpointDescription(name: "image", source: nil, host: Set(hosts).sorted().joined(separator: ", "), template: "{the picture's URL}",
                                contentType: "image/png, image/jpeg, image/gif, image/webp", responseModel: "raster image bytes",
                                cachePolicy: "memory cache, then a 200 MB disk cache (LRU); ETag revalidated; else 7 days",
                                headers: ["Accept: image/*"]),
        ]
    }

    private func log() throws -> RequestLog {
        guard let log = kiosk.requestLog else {
            throw WebError(status: .notFound, title: "Capture is off",
                           message: "The request log is disabled in the configuration (\"capture\": false).", retryPath: nil)
        }
        return log
    }

    private func record(_ rawID: String) throws -> RequestRecord {
        guard let id = Int64(rawID), id > 0 else { throw WebError.badRequest("A request id is a positive whole number.") }
        try log().flushQuietly()
        guard let record = try log().record(id: id) else {
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
            guard let statusClass = statusClasses[raw] else { throw WebError.badRequest("The status must be 2xx, 3xx, 4xx, 5xx or error.") }
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

    static let statusClasses: [String: Int] = ["2xx": 2, "3xx": 3, "4xx": 4, "5xx": 5, "error": 0]
}

extension RequestLog {
    /// Writes queued records so a page shows the request that was just made; a failure only means the
    /// newest records show a moment later.
    func flushQuietly() throws { try? flush() }
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
