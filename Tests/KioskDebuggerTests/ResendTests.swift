import Foundation
import KioskCore
import KioskDebugger
import KioskSources
import Synchronization
import Testing

/// Edit and resend, at the debugger: what is sent for a logged request as composed, signed by its source,
/// and what is refused before anything is sent. The transport is a closure that keeps what it was given.
@Suite("Edit and resend")
struct ResendTests {
    static let nytKey = "nyt-key-1234567890"

    /// A debugger without a log, over the live sources' origins with an NYT key, whose sends are kept.
    final class Sent: Sendable {
        let requests = Mutex<[HTTPRequest]>([])
        /// For each request, whether it went through the proxy's pipeline.
        let viaProxy = Mutex<[Bool]>([])
        var all: [HTTPRequest] { requests.withLock { $0 } }
    }

    static func debugger(_ sent: Sent) -> Debugger {
        var configuration = SourceConfiguration.live
        configuration.nytAPIKey = nytKey
        let answer: @Sendable (HTTPRequest, Bool) -> HTTPResponse = { request, proxied in
            sent.requests.withLock { $0.append(request) }
            sent.viaProxy.withLock { $0.append(proxied) }
            return HTTPResponse(status: 200, body: Data("{}".utf8), url: request.url)
        }
        return Debugger(breakpoints: Breakpoints(fileURL: nil, redactor: .standard), mocks: MockRules(fileURL: nil, redactor: .standard),
                        rules: RewriteRules(fileURL: nil, redactor: .standard), log: nil, sources: Sources.make(configuration),
                        epoch: "test", send: { answer($0, false) }, sendProxied: { answer($0, true) })
    }

    @Test("An app's exchange through the proxy is sent again through the proxy's pipeline, to its own host; Kiosk's image fetch is not")
    func proxiedResend() async throws {
        // Given a logged exchange of an app through kiosk proxy, and one of Kiosk's picture fetches
        let sent = Sent()
        let debugger = Self.debugger(sent)
        let app = RequestRecord(id: 7, startedAt: Date(timeIntervalSince1970: 1_800_000_000), source: nil, endpoint: "api.example.test",
                                method: "POST", url: "https://api.example.test/items?page=2",
                                requestHeaders: [.init(name: "Content-Type", value: "application/json")],
                                requestBody: CapturedBody(data: Data(#"{"a":1}"#.utf8), originalSize: 7),
                                status: 201, timings: RequestTimings(total: 0.1), decision: .network)
        var image = app
        image.endpoint = "image"
        image.method = "GET"
        image.url = "https://images.example.test/a.png"
        image.requestBody = nil
        // When both are sent again
        _ = try await debugger.resend(app)
        _ = try await debugger.resend(image)
        // Then the app's went through the proxy's pipeline as it was, the picture through Kiosk's own
        let requests = sent.all
        #expect(sent.viaProxy.withLock { $0 } == [true, false])
        #expect(requests[0].purpose == .proxied && requests[0].method == "POST" && requests[0].url.absoluteString == app.url)
        #expect(requests[0].body == Data(#"{"a":1}"#.utf8))
        #expect(requests[1].purpose != .proxied)
    }

    /// A logged NYT request, its key redacted as capture writes it.
    static let logged = RequestRecord(
        id: 42, startedAt: Date(timeIntervalSince1970: 1_800_000_000), source: .nyt, endpoint: "nyt.mostPopular", method: "GET",
        url: "https://api.nytimes.com/svc/mostpopular/v2/viewed/7.json?api-key=<redacted>",
        requestHeaders: [.init(name: "Accept", value: "application/json"), .init(name: "Authorization", value: Redactor.placeholder)],
        status: 200, timings: RequestTimings(total: 0.1), decision: .network)

    @Test("A binary body (a protobuf) is sent again as its bytes, unchanged or with another field edited; a body typed instead goes as typed")
    func binaryBodyResent() async throws {
        // Given an app's logged upload whose body is not UTF-8
        let sent = Sent()
        let debugger = Self.debugger(sent)
        let bytes = Data([0x0A, 0x03, 0x66, 0x6F, 0x6F, 0x10, 0xFF, 0x01, 0x00, 0xC3, 0x28])
        let app = RequestRecord(id: 9, startedAt: Date(timeIntervalSince1970: 1_800_000_000), source: nil, endpoint: "api.example.test",
                                method: "POST", url: "https://api.example.test/rpc",
                                requestHeaders: [.init(name: "Content-Type", value: "application/x-protobuf")],
                                requestBody: CapturedBody(data: bytes, originalSize: bytes.count),
                                status: 200, timings: RequestTimings(total: 0.1), decision: .network)
        // When it is sent again as it was, then with a header added, then with a body typed
        _ = try await debugger.resend(app)
        var composed = ComposedRequest(app)
        composed.headers.append(.init(name: "X-Debug", value: "1"))
        _ = try await debugger.resend(app, as: composed)
        composed.body = "typed"
        _ = try await debugger.resend(app, as: composed)
        // Then the first two carried the very bytes logged, the third what was typed
        #expect(sent.all.map(\.body) == [bytes, bytes, Data("typed".utf8)])
    }

    @Test("The composer starts from the request as logged: URL without its query, items decoded, secrets as placeholders")
    func startsAsLogged() {
        // Given a logged request
        // When the composer reads it
        let composed = ComposedRequest(Self.logged)
        // Then each part is as logged, and nothing differs from the original
        #expect(composed.method == "GET")
        #expect(composed.url == "https://api.nytimes.com/svc/mostpopular/v2/viewed/7.json")
        #expect(composed.queryItems == [.init(name: "api-key", value: Redactor.placeholder)])
        #expect(composed.headers.map(\.name) == ["Accept", "Authorization"])
        #expect(composed.changes(from: ComposedRequest(Self.logged)).isEmpty)
    }

    @Test("An edited request is sent as composed, signed anew by its source, values encoded, hop headers and unknown secrets left out")
    func sentAsComposed() async throws {
        // Given a debugger and a logged NYT request, edited: another period, an item whose value needs encoding, a header added
        let sent = Sent()
        var composed = ComposedRequest(Self.logged)
        composed.url = "https://api.nytimes.com/svc/mostpopular/v2/viewed/30.json"
        composed.queryItems.append(.init(name: "q", value: "a+b&c=d <e>"))
        composed.headers.append(.init(name: "X-Debug", value: "1"))
        composed.headers.append(.init(name: "Host", value: "elsewhere.example"))
        // When it is resent
        let resent = try await Self.debugger(sent).resend(Self.logged, as: composed)
        // Then one request went, to the edited URL with the configured key put back and the value encoded as data
        let request = try #require(sent.all.first)
        #expect(sent.all.count == 1 && resent.response?.status == 200 && resent.error == nil && resent.recordID == nil)
        let items = try #require(URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems)
        #expect(request.url.path == "/svc/mostpopular/v2/viewed/30.json")
        #expect(items == [URLQueryItem(name: "api-key", value: Self.nytKey), URLQueryItem(name: "q", value: "a+b&c=d <e>")])
        // And its headers are those typed, without Authorization (never learnt back) or Host (the transport's)
        #expect(request.headers["X-Debug"] == "1" && request.headers["Accept"] == "application/json")
        #expect(request.headers["Authorization"] == nil && request.headers["Host"] == nil)
        #expect(request.source == .nyt && request.endpoint == "nyt.mostPopular")
    }

    @Test("What changed is said in words; sent unchanged says so")
    func changesInWords() {
        // Given the original and an edit of each part
        let original = ComposedRequest(Self.logged)
        var edited = original
        edited.method = "HEAD"
        edited.queryItems = [.init(name: "api-key", value: Redactor.placeholder), .init(name: "page", value: "2")]
        edited.headers = [.init(name: "Accept", value: "text/plain"), .init(name: "X-New", value: "1"), .init(name: "Content-Length", value: "5")]
        edited.body = "hello"
        // When the changes are listed
        // Then each is named, old → new where it helps; a header the composer never sends (Content-Length) is no change
        #expect(edited.changes(from: original).map(\.english) == [
            "method GET → HEAD", "query api-key=<redacted> → api-key=<redacted>&page=2",
            "header x-new added", "header authorization removed", "header accept changed", "body changed",
        ])
    }

    @Test("A request that cannot be sent is refused before anything goes, saying why",
          arguments: [
            ("method", "GE T", "not an HTTP method"),
            ("url", "ftp://api.nytimes.com/x", "http(s) URL"),
            ("method", "CONNECT", "CONNECT asks for a tunnel"),
            ("url", "https://evil@api.nytimes.com/svc/mostpopular/v2/viewed/7.json", "no user name"),
            ("url", "https://rickandmortyapi.com/api/character", "can only go to https://api.nytimes.com"),
            ("header", "X-Bad: a\r\nInjected: 1", "not a valid HTTP field value"),
            ("header", "Bad Name: 1", "not a valid HTTP header name"),
            ("query", "token=<redacted>", "the secret token is not known"),
            ("header", "X-Leak: <redacted>", "X-Leak"),
          ])
    func refused(part: String, value: String, message: String) async throws {
        // Given a logged request composed with one bad part
        let sent = Sent()
        var composed = ComposedRequest(Self.logged)
        switch part {
        case "method": composed.method = value
        case "url": composed.url = value
        case "header":
            let parts = value.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            composed.headers.append(.init(name: parts[0], value: String(value.split(separator: ":", maxSplits: 1)[1].dropFirst())))
        default: composed.queryItems = [.init(name: "api-key", value: Redactor.placeholder), .init(name: "token", value: Redactor.placeholder)]
        }
        // When it is resent
        // Then it is refused with the reason, and nothing was sent
        await #expect {
            _ = try await Self.debugger(sent).resend(Self.logged, as: composed)
        } throws: { error in
            guard let problem = error as? ResendProblem else { return false }
            return problem.english.contains(message)
        }
        #expect(sent.all.isEmpty)
    }

    @Test("An app's request whose body never came whole is not sent again as it was; with a body typed in full it is")
    func incompleteBody() async throws {
        // Given an app's POST through the proxy whose app sent 10 of its 100 bytes, logged as never sent
        let sent = Sent()
        let debugger = Self.debugger(sent)
        let record = RequestRecord(id: 9, startedAt: Date(timeIntervalSince1970: 1_800_000_000), source: nil, endpoint: "127.0.0.1:9",
                                   method: "POST", url: "http://127.0.0.1:9/upload",
                                   requestHeaders: [.init(name: "Content-Type", value: "text/plain")],
                                   requestBody: CapturedBody(data: Data("0123456789".utf8), originalSize: 10), status: nil,
                                   timings: RequestTimings(total: 0.1), decision: .network,
                                   touchedBy: [ExchangeTouch(kind: .bodyCut, id: 0, name: "127.0.0.1:9", phrase: .bodyCut(received: 10))])
        // When it is replayed as logged
        // Then it is refused, saying why, and nothing is sent
        #expect(debugger.replayRefusal(record) == .incompleteBody(id: 9))
        await #expect(throws: ResendProblem.incompleteBody(id: 9)) { _ = try await debugger.resend(record) }
        #expect(sent.all.isEmpty)
        // And with a body typed in Edit and resend, it goes
        var composed = ComposedRequest(record)
        composed.body = "the whole body"
        _ = try await debugger.resend(record, as: composed)
        #expect(sent.all.count == 1 && sent.all.first?.body == Data("the whole body".utf8))
    }

    @Test("A request of a source whose key is not configured is refused, saying which keys to set; nothing sent")
    func keyMissing() async throws {
        // Given a logged Marvel request and no Marvel keys
        let sent = Sent()
        var record = Self.logged
        record.source = .marvel
        record.endpoint = "marvel.characters"
        record.url = "https://gateway.marvel.com/v1/public/characters?ts=<redacted>&apikey=<redacted>&hash=<redacted>"
        // When it is resent unchanged
        // Then it is refused, saying which keys to set
        await #expect {
            _ = try await Self.debugger(sent).resend(record)
        } throws: { error in
            guard case .cannotSign(let reason)? = error as? ResendProblem else { return false }
            return reason.contains("Marvel")
        }
        #expect(sent.all.isEmpty)
    }
}
