import Foundation
import Hummingbird
import KioskListener
import KioskCore

/// The API listener's responder: routes by path prefix, counts the request, applies faults, then
/// answers from the handlers with ETag / `If-None-Match` support.
///
/// A hand-written dispatcher rather than a `Router`: the real paths carry parameters inside file
/// names (`7.json`, `portrait_xlarge.jpg`, `1,2,3`), and faults and counting must wrap every route,
/// unknown ones included, before any routing decision.
struct APIResponder: HTTPResponder {
    typealias Context = PeerRequestContext

    let core: UpstreamCore

    /// Which API a path belongs to, and so which source's faults apply.
    enum Route {
        case nyt, marvel, rickAndMorty, dogs
        case image(SourceID)
        case webPage, index, unknown

        init(path: String) {
            if path.hasPrefix("/svc/") {
                self = .nyt
            } else if path.hasPrefix("/v1/public") {
                self = .marvel
            } else if path.hasPrefix("/api/character/avatar/") {
                self = .image(.rickandmorty)
            } else if path == "/api" || path.hasPrefix("/api/") {
                self = .rickAndMorty
            } else if path == "/dogs.json" {
                self = .dogs
            } else if path.hasPrefix("/images/nyt/") {
                self = .image(.nyt)
            } else if path.hasPrefix("/images/marvel/") {
                self = .image(.marvel)
            } else if path.hasPrefix("/images/dogs/") {
                self = .image(.dogs)
            } else if path.hasPrefix("/web/") {
                self = .webPage
            } else if path == "/" {
                self = .index
            } else {
                self = .unknown
            }
        }

        /// The source whose faults apply; nil for routes that are not part of an emulated API.
        var faultSource: SourceID? {
            switch self {
            case .nyt: .nyt
            case .marvel: .marvel
            case .rickAndMorty: .rickandmorty
            case .dogs: .dogs
            case .image(let source): source
            case .webPage, .index, .unknown: nil
            }
        }
    }

    func respond(to request: Request, context: Context) async throws -> Response {
        let path = request.uri.path
        let query = QueryItems(request.uri.query)
        let route = Route(path: path)
        let (base, fault) = core.state.begin(requestKey: query.countingKey(path: path), source: route.faultSource)

        if fault.latencyMilliseconds > 0 {
            // Sleeps the task, never the event loop, so other connections keep being served.
            try await Task.sleep(for: .milliseconds(fault.latencyMilliseconds))
        }
        guard request.method == .get || request.method == .head else {
            var response = Self.response(for: .error(.methodNotAllowed, Documents.rickAndMortyError("Method not allowed")),
                                         request: request, outcome: .none)
            response.headers[.allow] = "GET, HEAD"
            return response
        }
        let echo = fault.echoesCredentials ? CredentialEcho(query: query, state: core.state) : nil
        switch fault.outcome {
        case .serverError:
            return Self.response(for: FaultReplies.serverError(route.faultSource), request: request, outcome: .none, echo: echo)
        case .rateLimited(let seconds):
            return Self.response(for: FaultReplies.rateLimited(route.faultSource, retryAfterSeconds: seconds),
                                 request: request, outcome: .none, echo: echo)
        case .none, .truncated, .malformed, .badItem:
            break
        }

        var reply: Reply = switch route {
        case .nyt: core.nyt(path: path, query: query, base: base)
        case .marvel: core.marvel(path: path, query: query, base: base)
        case .rickAndMorty: core.rickAndMorty(path: path, query: query, base: base)
        case .dogs: core.cache.reply(for: "dogs") {
            .json(.ok, Documents.dogs(base: base), cacheControl: Reply.Lifetime.dogs)
        }
        case .image: core.image(path: path)
        case .webPage: Self.webPage(path: path)
        case .index: core.cache.reply(for: "index") { Self.index(base: base) }
        case .unknown: .notFoundText
        }
        if fault.outcome == .badItem {
            // Before the If-None-Match check: the altered page is another document with its own ETag.
            reply = BadItemFault.apply(to: reply, route: route, path: path, cache: core.cache)
        }
        return Self.response(for: reply, request: request, outcome: fault.outcome, echo: echo)
    }

    /// Turns a reply into a response: 304 for a matching `If-None-Match`, then the body fault if any
    /// (truncated or malformed; a bad item is a content change, already made in `reply` by the caller).
    static func response(for reply: Reply, request: Request, outcome: FaultOutcome, echo: CredentialEcho? = nil) -> Response {
        var reply = reply
        if let echo { reply = echo.apply(to: reply) }
        var headers = HTTPFields()
        if let echo { headers[.init("X-Echo")!] = echo.text }
        headers[.contentType] = reply.contentType
        headers[.cacheControl] = reply.cacheControl
        if let etag = reply.etag { headers[.eTag] = etag }
        if let retryAfter = reply.retryAfterSeconds { headers[.retryAfter] = String(retryAfter) }

        if reply.status == .ok, let etag = reply.etag, let candidates = request.headers[.ifNoneMatch],
           echo.map({ $0.matches(ifNoneMatch: candidates, etag: etag) }) ?? Self.matches(ifNoneMatch: candidates, etag: etag) {
            headers[.contentType] = nil
            var response = Response(status: .notModified, headers: headers)
            response.headers[.contentLength] = nil
            return response
        }

        var body = reply.body
        let fullLength = body.readableBytes
        switch outcome {
        case .truncated where reply.status == .ok && fullLength > 1:
            // Content-Length promises the whole body; half of it is written, then the handler throws,
            // which makes Hummingbird close the connection: the client sees a short read.
            let half = body.getSlice(at: body.readerIndex, length: fullLength / 2) ?? body
            headers[.contentLength] = String(fullLength)
            if request.method == .head { return Response(status: reply.status, headers: headers) }
            return Response(status: reply.status, headers: headers, body: ResponseBody(contentLength: fullLength) { writer in
                try await writer.write(half)
                throw TruncatedOnPurpose()
            })
        case .malformed where reply.status == .ok:
            body = Self.malformed(body, isJSON: reply.contentType.hasPrefix("application/json"))
        default:
            break
        }
        if request.method == .head {
            headers[.contentLength] = String(body.readableBytes)
            return Response(status: reply.status, headers: headers)
        }
        return Response(status: reply.status, headers: headers, body: ResponseBody(byteBuffer: body))
    }

    /// Whether an `If-None-Match` list names `etag` (weak comparison, as RFC 9110 prescribes for it).
    static func matches(ifNoneMatch: String, etag: String) -> Bool {
        let wanted = etag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        return ifNoneMatch.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            // Accept the tag unquoted too: Marvel clients often echo the body's bare `etag` field.
            return tag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) == wanted
        }
    }

    /// A body that cannot be parsed but has an honest Content-Length.
    private static func malformed(_ body: ByteBuffer, isJSON: Bool) -> ByteBuffer {
        let bytes = body.getBytes(at: body.readerIndex, length: body.readableBytes) ?? []
        if isJSON {
            // A strict prefix of a JSON document followed by ",,": two commas are invalid outside a
            // string, and inside one the string is never closed, so no parser can accept it.
            return ByteBuffer(bytes: bytes.prefix(bytes.count * 2 / 3) + Array(",,}".utf8))
        }
        return ByteBuffer(bytes: bytes.prefix(bytes.count / 2))
    }

    private struct TruncatedOnPurpose: Error {}

    private static func webPage(path: String) -> Reply {
        // Stands in for the public web pages the data links to (articles, Marvel wiki), so links work offline.
        let escaped = path.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        let html = "<!doctype html><html><head><meta charset=\"utf-8\"><title>Kiosk demo page</title></head>"
            + "<body><p>This page stands in for <code>\(escaped)</code> on the real site.</p></body></html>"
        return Reply(status: .ok, body: ByteBuffer(string: html), contentType: "text/html; charset=utf-8",
                     etag: "\"\(Hashing.entityTag(Array(html.utf8)))\"", cacheControl: Reply.Lifetime.images)
    }

    private static func index(base: String) -> Reply {
        .json(.ok, OrderedJSON.object([
            ("nyt", .string("\(base)/svc/mostpopular/v2")),
            ("marvel", .string("\(base)/v1/public")),
            ("rickandmorty", .string("\(base)/api")),
            ("dogs", .string("\(base)/dogs.json")),
        ]).compactBytes, cacheControl: Reply.Lifetime.dogs)
    }
}

/// The bodies each API sends with a 500 or a 429.
enum FaultReplies {
    static func serverError(_ source: SourceID?) -> Reply {
        let body: [UInt8] = switch source {
        case .nyt: Documents.nytFault("Internal Server Error", code: "messaging.adaptors.http.flow.InternalServerError")
        case .marvel: Documents.marvelStatus(500, "Internal Server Error")
        default: Documents.rickAndMortyError("Internal Server Error")
        }
        return .error(.internalServerError, body)
    }

    static func rateLimited(_ source: SourceID?, retryAfterSeconds: Int) -> Reply {
        let body: [UInt8] = switch source {
        case .nyt: Documents.nytFault("Rate limit quota violation. Quota limit exceeded.", code: "policies.ratelimit.QuotaViolation")
        case .marvel: Documents.marvelMessage("RequestThrottled", "You have exceeded your rate limit.  Please try again later.")
        default: Documents.rickAndMortyError("Too many requests, please try again later.")
        }
        var reply = Reply.error(.tooManyRequests, body)
        reply.retryAfterSeconds = retryAfterSeconds
        return reply
    }
}
