import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KioskApp
import KioskCore
import KioskDebugger
import KioskDemoUpstream
import KioskSources
import NIOCore
import Testing
@testable import KioskConsole
@testable import KioskWeb

/// The console's composer: a logged request edited and sent again, over the demo upstream.
@Suite("Edit and resend in the console")
struct WebComposerTests {
    static let token = String(repeating: "7", count: 64)

    /// The newest logged Marvel request's JSON.
    static func newestMarvel(_ client: any TestClientProtocol) async throws -> [String: Any] {
        let list = try JSONSerialization.jsonObject(with: Data(try await client.get("/debug/api/requests?source=marvel&limit=1").bytes))
        return try #require((list as? [[String: Any]])?.first)
    }

    /// The form fields of `record`'s composer with the query item `name` set to `value`.
    static func form(_ record: [String: Any], setting name: String, to value: String, url: String? = nil) throws -> [(String, String)] {
        let logged = try #require(record["url"] as? String)
        var components = try #require(URLComponents(string: logged))
        let items = (components.queryItems ?? []).map { $0.name == name ? URLQueryItem(name: name, value: value) : $0 }
        components.query = nil
        return [("csrf", token), ("method", "GET"), ("url", url ?? components.string!),
                ("query", items.map { "\($0.name)=\($0.value ?? "")" }.joined(separator: "\n")), ("headers", "Accept: application/json"),
                ("body", "")]
    }

    @Test("A logged Marvel request, edited in the composer, is sent signed anew, logged as a new request linked to its original, and not stored")
    func composeAndSend() async throws {
        try await withWeb { harness, client in
            // Given a logged Marvel list request (its keys redacted in the log)
            _ = try await client.get("/marvel")
            let original = try await Self.newestMarvel(client)
            let id = try #require(original["id"] as? Int)
            let storedBefore = try harness.kiosk.database.snapshot(forKey: PageRequest(source: .marvel).cacheKey)?.metadata
            let keys = await harness.demo.keys
            // When its page offers the composer, which shows the request with its secrets as placeholders
            #expect(try await client.get("/debug/requests/\(id)").body.contains("action=\"/debug/requests/\(id)/compose\""))
            let composer = try await client.get("/debug/requests/\(id)/compose")
            #expect(composer.status == .ok && composer.body.contains("apikey=&lt;redacted&gt;"))
            #expect(!composer.body.contains(keys.marvelPublic) && !composer.body.contains(keys.marvelPrivate))
            // And the request is sent with its offset changed
            let sent = try await client.post("/debug/requests/\(id)/compose", form: try Self.form(original, setting: "offset", to: "20"),
                                             cookie: Self.token)
            // Then the browser goes to the new exchange: a 200 (Marvel accepted the fresh signature) for the edited URL
            #expect(sent.status == .seeOther)
            let newest = try await Self.newestMarvel(client)
            let newID = try #require(newest["id"] as? Int)
            #expect(newID > id && sent.header("Location") == "/debug/requests/\(newID)")
            #expect(newest["status"] as? Int == 200)
            let url = try #require(newest["url"] as? String)
            #expect(url.contains("offset=20") && url.contains("apikey=<redacted>") && !url.contains(keys.marvelPublic), "\(url)")
            // And the new exchange names its original and what changed, and its page links back
            let full = try JSONSerialization.jsonObject(with: Data(try await client.get("/debug/api/requests/\(newID)").bytes)) as? [String: Any]
            let touch = try #require((full?["touchedBy"] as? [[String: Any]])?.first)
            #expect(touch["kind"] as? String == "resend" && touch["id"] as? Int == id)
            #expect((touch["detail"] as? String)?.contains("offset=0") == true && (touch["detail"] as? String)?.contains("offset=20") == true)
            #expect(try await client.get("/debug/requests/\(newID)").body.contains("href=\"/debug/requests/\(id)\""))
            // And the store keeps what the app read, not the composer's answer
            #expect(try harness.kiosk.database.snapshot(forKey: PageRequest(source: .marvel).cacheKey)?.metadata == storedBefore)
        }
    }

    @Test("A request that cannot be sent is shown again with the reason and what was typed; nothing is sent")
    func refusedKeepsTheForm() async throws {
        try await withWeb { _, client in
            // Given a logged Marvel request
            _ = try await client.get("/marvel")
            let original = try await Self.newestMarvel(client)
            let id = try #require(original["id"] as? Int)
            // When it is composed to go to another upstream's origin (its keys would go with it)
            // (the demo serves every upstream from one origin, so the real Rick and Morty one; nothing is sent there)
            let elsewhere = "https://rickandmortyapi.com/api/character"
            let refused = try await client.post("/debug/requests/\(id)/compose",
                                                form: try Self.form(original, setting: "offset", to: "40", url: elsewhere), cookie: Self.token)
            // Then the form is shown again, saying why, with the URL and items as typed
            #expect(refused.status == .unprocessableContent)
            #expect(refused.body.contains("Not sent:") && refused.body.contains("can only go to"))
            #expect(refused.body.contains(elsewhere) && refused.body.contains("offset=40"))
            // And a page in Spanish says why in Spanish
            let spanish = try await client.post("/debug/requests/\(id)/compose", form: try Self.form(original, setting: "offset", to: "40", url: elsewhere),
                                                cookie: Self.token, headers: [.acceptLanguage: "es"])
            #expect(spanish.status == .unprocessableContent)
            #expect(spanish.body.contains("es de Marvel") && spanish.body.contains("así que solo puede ir a"), "\(spanish.body.prefix(3000))")
            #expect(!spanish.body.contains("can only go to"))
            // And a header line that is no "Name: value" is shown again in place too, with what was typed
            let fields = try Self.form(original, setting: "offset", to: "60").map { $0.0 == "headers" ? ($0.0, "Accept application/json") : $0 }
            let noColon = try await client.post("/debug/requests/\(id)/compose", form: fields, cookie: Self.token)
            #expect(noColon.status == .unprocessableContent && noColon.body.contains("Each header is a line “Name: value”"), "\(noColon.status)")
            #expect(noColon.body.contains("offset=60"))
            // And so is a query line with no name before its "=", which was left out without a word, in Spanish too
            let noName = try Self.form(original, setting: "offset", to: "80").map { $0.0 == "query" ? ($0.0, $0.1 + "\n=x") : $0 }
            let nameless = try await client.post("/debug/requests/\(id)/compose", form: noName, cookie: Self.token, headers: [.acceptLanguage: "es"])
            #expect(nameless.status == .unprocessableContent && nameless.body.contains("con nombre (se recibió «=x»)"), "\(nameless.status)")
            #expect(nameless.body.contains("offset=80"))
            // And nothing was sent
            #expect(try await Self.newestMarvel(client)["id"] as? Int == id)
            // And a post without the CSRF token is refused
            let forged = try await client.post("/debug/requests/\(id)/compose", form: try Self.form(original, setting: "offset", to: "40"))
            #expect(forged.status == .forbidden)
        }
    }

    @Test("The JSON API resends with the fields given (201, Location of the new exchange); other sites and other content types are refused")
    func jsonResend() async throws {
        try await withWeb { _, client in
            func post(_ uri: String, _ body: String, headers: HTTPFields = [.contentType: "application/json"]) async throws -> Fetched {
                try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body)) { response in
                    Fetched(status: response.status, headers: response.headers, body: String(buffer: response.body),
                            bytes: Array(response.body.readableBytesView))
                }
            }
            // Given a logged Marvel request
            _ = try await client.get("/marvel")
            let id = try #require(try await Self.newestMarvel(client)["id"] as? Int)
            // When it is resent with one header added
            let resent = try await post("/debug/api/requests/\(id)/resend", #"{"headers": [{"name": "X-Debug", "value": "1"}]}"#)
            // Then the answer says where the new exchange is, and how it went
            #expect(resent.status == .created)
            let json = try resent.json()
            let newID = try #require(json["id"] as? Int)
            #expect(newID > id && json["status"] as? Int == 200 && resent.header("Location") == "/debug/api/requests/\(newID)")
            // And an empty object sends it unchanged
            #expect(try await post("/debug/api/requests/\(id)/resend", "{}").status == .created)
            // And a bad field is a 400 saying why, another site a 403, a form a 415, an unknown id a 404
            let bad = try await post("/debug/api/requests/\(id)/resend", #"{"method": "GE T"}"#)
            #expect(bad.status == .badRequest && bad.body.contains("not an HTTP method"))
            #expect(try await post("/debug/api/requests/\(id)/resend", "{}", headers: [.contentType: "application/json", .origin: "https://evil.example"])
                .status == .forbidden)
            #expect(try await post("/debug/api/requests/\(id)/resend", "a=1", headers: [.contentType: "application/x-www-form-urlencoded"])
                .status == .unsupportedMediaType)
            #expect(try await post("/debug/api/requests/999999/resend", "{}").status == .notFound)
        }
    }
}

/// The composer's form and the body it sends: what a browser's textarea does to a body, and a body no textarea carries.
@Suite("The composer's form")
struct ComposeFormTests {
    static func record(body: Data, type: String) -> RequestRecord {
        RequestRecord(id: 3, startedAt: Date(), source: nil, endpoint: "api.example.test", method: "POST", url: "https://api.example.test/rpc",
                      requestHeaders: [.init(name: "Content-Type", value: type)], requestBody: CapturedBody(data: body, originalSize: body.count),
                      status: 200, timings: RequestTimings(total: 0.1), decision: .network)
    }

    @Test("A resend's JSON whose url carries a query sends that query instead of the logged one, with its query items after it")
    func resendURLWithQuery() throws {
        // Given a logged request with two query items
        let logged = RequestRecord(id: 4, startedAt: Date(), source: nil, endpoint: "api.example.test", method: "GET",
                                   url: "https://api.example.test/echo?z=1&keep=a", requestHeaders: [], requestBody: nil,
                                   status: 200, timings: RequestTimings(total: 0.1), decision: .network)
        let original = ComposedRequest(logged)
        let decode = { (json: String) in try JSONDecoder().decode(ResendJSON.self, from: Data(json.utf8)).applied(to: original) }
        // When the JSON names the URL with a query of its own, alone and then with items
        let alone = try decode(#"{"url": "https://api.example.test/echo?z=5"}"#)
        let withItems = try decode(#"{"url": "https://api.example.test/echo?z=5", "query": [{"name": "p", "value": "2"}]}"#)
        // Then the URL's query replaces the logged items, not added to them (`?z=5&z=1&keep=a`), and the change said is the query's
        #expect(alone.url == "https://api.example.test/echo" && alone.queryItems == [.init(name: "z", value: "5")])
        #expect(alone.changes(from: original) == [.query(from: "z=1&keep=a", to: "z=5")])
        #expect(withItems.queryItems == [.init(name: "z", value: "5"), .init(name: "p", value: "2")])
        // And a URL without a query keeps the logged items, as before
        #expect(try decode(#"{"url": "https://api.example.test/other"}"#).queryItems == original.queryItems)
        // And the logged URL copied with a secret as the log writes it, one item edited, is read as that URL too
        let copied = try decode(#"{"url": "https://api.example.test/echo?api_key=<redacted>&z=2"}"#)
        #expect(copied.url == "https://api.example.test/echo")
        #expect(copied.queryItems == [.init(name: "api_key", value: "<redacted>"), .init(name: "z", value: "2")])
    }

    @Test("A binary body (a protobuf starting with a line feed) is not put in a textarea: it is kept, and goes as logged whatever else is edited")
    func binaryBodyKept() throws {
        // Given a logged protobuf upload
        let record = Self.record(body: Data([0x0A, 0x03, 0x66, 0x6F, 0x6F, 0x10, 0xFF, 0x01, 0x00]), type: "application/x-protobuf")
        // When its composer is made
        var form = ComposeForm(record)
        // Then its body is kept, not shown as text
        #expect(form.keepsBody && form.body.isEmpty)
        // And the form sent with a header changed asks for the logged body, which the debugger sends as its bytes
        form.headers += "\nX-Debug: 1"
        let original = ComposedRequest(record)
        let request = try form.request(.english, original: original)
        #expect(request.body == original.body && request.headers.contains { $0.name == "X-Debug" })
    }

    @Test("A text body sent back as the textarea gives it (CRLF line breaks, a first line break dropped) is the body as logged; an edit is the edit")
    func textareaLineBreaks() throws {
        // Given a logged body of several lines, starting with a line break
        let record = Self.record(body: Data("\n{\n  \"a\": 1\n}".utf8), type: "application/json")
        let original = ComposedRequest(record)
        var form = ComposeForm(record)
        #expect(!form.keepsBody)
        // When the browser posts it back as its textarea holds it
        form.body = "{\r\n  \"a\": 1\r\n}"
        // Then it is the logged body
        #expect(try form.request(.english, original: original).body == original.body)
        // And an edit is sent as typed
        form.body = "{\r\n  \"a\": 2\r\n}"
        #expect(try form.request(.english, original: original).body == "{\r\n  \"a\": 2\r\n}")
    }
}
