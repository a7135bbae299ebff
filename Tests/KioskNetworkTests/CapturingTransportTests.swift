import Foundation
import KioskCore
import KioskTestSupport
import Synchronization
import Testing
@testable import KioskNetwork

/// Collects what a capturing transport hands to its sink.
final class RecordSink: Sendable {
    private let records = Mutex<[RequestRecord]>([])
    var all: [RequestRecord] { records.withLock { $0 } }
    var closure: @Sendable (DeferredRecord) -> Void { { record in self.records.withLock { $0.append(record.make()) } } }
}

@Suite("Capture of upstream exchanges")
struct CapturingTransportTests {
    static let key = "nyt-secret-key-123456"
    let redactor = Redactor.standard.hiding([CapturingTransportTests.key])

    @Test("A response is recorded with its request, status, headers, body and timings, secrets redacted")
    func recordsResponse() async throws {
        // Given an upstream that echoes the key in a header and in its body
        let upstream = ScriptedTransport([
            .respond(200, headers: ["Content-Type": "application/json", "Set-Cookie": "session=abc", "X-Echo": "key \(Self.key)"],
                     body: #"{"copyright":"x","url":"https://api.example/?api-key=\#(Self.key)"}"#),
        ])
        let sink = RecordSink()
        let capture = CapturingTransport(base: upstream, redactor: redactor, sink: sink.closure)
        let url = URL(string: "https://api.nytimes.com/svc/mostpopular/v2/viewed/7.json?api-key=\(Self.key)")!
        // When a request is sent with the key in the URL and in an Authorization header
        let response = try await capture.send(HTTPRequest(url: url, headers: ["Authorization": "Bearer \(Self.key)"],
                                                          source: .nyt, endpoint: "nyt.mostpopular"))
        // Then the caller gets the response untouched
        #expect(String(decoding: response.body, as: UTF8.self).contains(Self.key))
        // And one record holds the exchange with no trace of the key anywhere
        let record = try #require(sink.all.first)
        #expect(sink.all.count == 1)
        #expect(record.source == .nyt && record.endpoint == "nyt.mostpopular" && record.method == "GET")
        #expect(record.status == 200 && record.decision == .network)
        #expect(record.url.hasSuffix("7.json?api-key=<redacted>"))
        #expect(record.requestHeaders == [.init(name: "Authorization", value: "<redacted>")])
        #expect(record.responseHeaders.first { $0.name == "Set-Cookie" }?.value == "<redacted>")
        #expect(record.responseHeaders.first { $0.name == "X-Echo" }?.value == "key <redacted>")
        let body = String(decoding: try #require(record.responseBody).data, as: UTF8.self)
        #expect(body.contains("api-key=<redacted>"))
        let everything = String(decoding: try JSONEncoder().encode(record), as: UTF8.self)
        #expect(!everything.contains(Self.key))
        #expect(record.timings.total >= 0)
    }

    @Test("An answer Kiosk made (a mock's, an edit's) without a length is logged with the Content-Length its app got; an upstream's and a HEAD's as they came",
          arguments: [("GET", true, true), ("GET", false, false), ("HEAD", true, false)])
    func madeAnswersLoggedWithTheirLength(method: String, mocked: Bool, expectsLength: Bool) async throws {
        // Given a transport answering 17 bytes without a Content-Length, made by a mock (or not)
        struct Maker: HTTPTransport {
            let mocked: Bool
            func send(_ request: HTTPRequest) async throws -> HTTPResponse {
                var response = HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(#"{"name":"Mocked"}"#.utf8),
                                            url: request.url)
                if mocked { response.headers[HTTPResponse.mockMarkerHeader] = "1" }
                return response
            }
        }
        let sink = RecordSink()
        let capture = CapturingTransport(base: Maker(mocked: mocked), redactor: redactor, sink: sink.closure)
        // When a request goes through the capture
        _ = try await capture.send(HTTPRequest(method: method, url: URL(string: "https://api.example/x")!, source: .nyt, endpoint: "x"))
        // Then the record says the length the app got when Kiosk made the body, and adds nothing otherwise
        let record = try #require(sink.all.first)
        let length = record.responseHeaders.first { $0.name == "Content-Length" }?.value
        #expect(length == (expectsLength ? "17" : nil), "\(record.responseHeaders)")
    }

    @Test("A body labelled gzip that is not gzip at all is kept as the plain body it is, redacted; a gzip body that does not decode is withheld and said so by its size")
    func mislabelledAndCorruptCodings() async throws {
        // Given an upstream answering plain JSON (echoing the key) under Content-Encoding: gzip, then gzip's magic bytes and garbage
        let plain = #"{"mislabelled":"plain json","key":"\#(Self.key)"}"#
        let corrupt = Data([0x1F, 0x8B, 0x08, 0x00]) + Data("garbage-not-really-gzip!".utf8)
        let upstream = ScriptedTransport([
            .respond(200, headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"], body: plain),
            .reply { request in HTTPResponse(status: 200, headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"],
                                             body: corrupt, url: request.url) },
        ])
        let sink = RecordSink()
        let capture = CapturingTransport(base: upstream, redactor: redactor, sink: sink.closure)
        // When both are fetched
        for path in ["plain", "corrupt"] {
            _ = try await capture.send(HTTPRequest(url: URL(string: "http://app.test/\(path)")!, endpoint: "app.test"))
        }
        // Then the mislabelled one is logged as it came, the key hidden: a server's bug a developer comes to see
        let records = sink.all
        #expect(records.count == 2)
        let kept = try #require(records.first?.responseBody)
        #expect(String(decoding: kept.data, as: UTF8.self) == #"{"mislabelled":"plain json","key":"<redacted>"}"#)
        #expect(!kept.isWithheld)
        // And of the corrupt one nothing is kept, its size saying there were bytes: withheld, not an empty answer
        let withheld = try #require(records.last?.responseBody)
        #expect(withheld.isWithheld && withheld.originalSize == corrupt.count && withheld.data.isEmpty)
    }

    @Test("An app's own credentials (a secret header's value, a token, a secret query item) are hidden where the upstream echoes them")
    func echoedCredentials() async throws {
        // Given an upstream that echoes the request's headers and query in its body, as httpbin does
        let upstream = ScriptedTransport([.respond(200, headers: ["Content-Type": "application/json"],
                                                   body: #"{"headers":{"Authorization":"Bearer APPTOKEN-123456","X-Api-Key":"KEYSECRET9"},"args":{"access_token":"QUERYTOK42"},"user":"bob"}"#)])
        let sink = RecordSink()
        let capture = CapturingTransport(base: upstream, redactor: redactor, sink: sink.closure)
        // When an app sends its token, its key and a query token (none of them Kiosk's own configured keys)
        _ = try await capture.send(HTTPRequest(url: URL(string: "http://app.test/echo?access_token=QUERYTOK42&page=2")!,
                                               headers: ["Authorization": "Bearer APPTOKEN-123456", "X-Api-Key": "KEYSECRET9"],
                                               endpoint: "app.test"))
        // Then the record's body has none of them, and the rest as it came
        let record = try #require(sink.all.first)
        let body = String(decoding: try #require(record.responseBody).data, as: UTF8.self)
        for secret in ["APPTOKEN-123456", "KEYSECRET9", "QUERYTOK42"] { #expect(!body.contains(secret), "\(body)") }
        #expect(body.contains(#""user":"bob""#) && body.contains(#""Authorization":"<redacted>""#), "\(body)")
    }

    @Test("A login form's password, sent urlencoded or multipart, is hidden where the upstream echoes it in a body that is not a form")
    func echoedFormSecrets() async throws {
        // Given an upstream that echoes the form it got as text, as httpbin's /anything does under "form"
        let forms: [(type: String, body: String)] = [
            ("application/x-www-form-urlencoded", "user=ann&password=FORMSECRET444"),
            ("multipart/form-data; boundary=b0", "--b0\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nFORMSECRET444\r\n--b0--\r\n"),
        ]
        for form in forms {
            let upstream = ScriptedTransport([.respond(200, headers: ["Content-Type": "text/plain"], body: "got password FORMSECRET444 from ann")])
            let sink = RecordSink()
            let capture = CapturingTransport(base: upstream, redactor: redactor, sink: sink.closure)
            // When the app posts it
            _ = try await capture.send(HTTPRequest(method: "POST", url: URL(string: "https://auth.example/login")!,
                                                   headers: ["Content-Type": form.type], body: Data(form.body.utf8), endpoint: "auth"))
            // Then neither the request's body nor the answer's keeps the password
            let record = try #require(sink.all.first)
            let everything = String(decoding: try JSONEncoder().encode(record), as: UTF8.self)
            #expect(!everything.contains("FORMSECRET444"), "\(form.type)")
            #expect(String(decoding: try #require(record.responseBody).data, as: UTF8.self) == "got password <redacted> from ann")
        }
    }

    @Test("A JSON login's password and the token answering it are redacted at capture, in the request and the response bodies")
    func jsonBodies() async throws {
        // Given a JSON login answered with an OAuth token, as a JSON document
        let upstream = ScriptedTransport([.respond(200, headers: ["Content-Type": "application/json"],
                                                   body: #"{"access_token":"TOKSECRET","token_type":"Bearer","expires_in":3600}"#)])
        let sink = RecordSink()
        let capture = CapturingTransport(base: upstream, redactor: redactor, sink: sink.closure)
        _ = try await capture.send(HTTPRequest(method: "POST", url: URL(string: "https://auth.example/login")!,
                                               headers: ["Content-Type": "application/json"],
                                               body: Data(#"{"user":"ann","password":"PWSECRET"}"#.utf8), endpoint: "auth"))
        // Then neither secret is in the record, and the rest of each body is as it came
        let record = try #require(sink.all.first)
        #expect(String(decoding: try #require(record.requestBody).data, as: UTF8.self) == #"{"user":"ann","password":"<redacted>"}"#)
        #expect(String(decoding: try #require(record.responseBody).data, as: UTF8.self)
                == #"{"access_token":"<redacted>","token_type":"Bearer","expires_in":3600}"#)
        // And a body redacted whole is not said to be cut by the capture limit (its size is what is kept)
        #expect(record.requestBody?.isTruncated == false && record.responseBody?.isTruncated == false)
        #expect(record.responseBody?.originalSize == record.responseBody?.data.count)
    }

    @Test("An answer's body that comes again is redacted as the first time, as its own type says, and scrubbed of a credential its request carried")
    func repeatedBodies() async throws {
        // Given an upstream that answers four times with the same bytes: a token in a JSON field, and an app's token echoed
        let text = #"{"access_token":"TOKSECRET","echo":"APPTOKEN-123456","user":"bob"}"#
        let json: HTTPHeaderFields = ["Content-Type": "application/json"]
        let upstream = ScriptedTransport([.respond(200, headers: json, body: text), .respond(200, headers: json, body: text),
                                          .respond(200, headers: json, body: text),
                                          .respond(200, headers: ["Content-Type": "text/plain"], body: text)])
        let sink = RecordSink()
        let capture = CapturingTransport(base: upstream, redactor: redactor, sink: sink.closure)
        let url = URL(string: "http://app.test/poll")!
        // When the app asks twice with no credential, then once with the echoed token as its own, then gets it as plain text
        for headers: HTTPHeaderFields in [[:], [:], ["Authorization": "Bearer APPTOKEN-123456"], [:]] {
            _ = try await capture.send(HTTPRequest(url: url, headers: headers, endpoint: "app.test"))
        }

        // Then the first two records show the same body, its JSON token field redacted and the rest as it came
        let bodies = sink.all.map { String(decoding: $0.responseBody?.data ?? Data(), as: UTF8.self) }
        try #require(bodies.count == 4)
        #expect(bodies[0] == #"{"access_token":"<redacted>","echo":"APPTOKEN-123456","user":"bob"}"#, "\(bodies[0])")
        #expect(bodies[1] == bodies[0])
        // And the third, whose request carried the token, has it scrubbed wherever it stands
        #expect(!bodies[2].contains("APPTOKEN-123456") && !bodies[2].contains("TOKSECRET"), "\(bodies[2])")
        // And the same bytes said to be plain text are read as the JSON they are (a beacon's, a misconfigured server's)
        #expect(bodies[3] == bodies[0], "\(bodies[3])")
    }

    @Test("A form body's secret fields, the same pairs sent as plain text, and the query secrets of a Location are redacted at capture; text naming no secret is kept")
    func formBodiesAndLocations() async throws {
        // Given an OAuth token request as a form, answered with a redirect whose Location carries a token
        let upstream = ScriptedTransport([.respond(302, headers: ["Location": "/next?token=LOCSECRET&step=2"]),
                                          .respond(200), .respond(200)])
        let sink = RecordSink()
        let capture = CapturingTransport(base: upstream, redactor: redactor, sink: sink.closure)
        let url = URL(string: "https://auth.example/token")!
        let form = "grant_type=refresh_token&refresh_token=BODYSECRET&user%5Bpassword%5D=PW&scope=read"
        _ = try await capture.send(HTTPRequest(method: "POST", url: url, headers: ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"],
                                               body: Data(form.utf8), endpoint: "auth"))
        // And the same text sent as plain text (a beacon's form), and plain text naming no secret
        _ = try await capture.send(HTTPRequest(method: "POST", url: url, headers: ["Content-Type": "text/plain"],
                                               body: Data(form.utf8), endpoint: "auth"))
        let plain = "grant_type=client_credentials&scope=read, see code=42 in the docs"
        _ = try await capture.send(HTTPRequest(method: "POST", url: url, headers: ["Content-Type": "text/plain"],
                                               body: Data(plain.utf8), endpoint: "auth"))
        // Then the form's secret fields are replaced, bracketed ones too, and the rest kept in order
        let records = sink.all
        #expect(String(decoding: try #require(records.first?.requestBody).data, as: UTF8.self)
                == "grant_type=refresh_token&refresh_token=<redacted>&user%5Bpassword%5D=<redacted>&scope=read")
        // And the Location's token is replaced
        #expect(records.first?.responseHeaders.first { $0.name == "Location" }?.value == "/next?token=<redacted>&step=2")
        // And the plain text's pairs are hidden as the form's are, though it does not say it is one
        #expect(String(decoding: try #require(records.dropLast().last?.requestBody).data, as: UTF8.self)
                == "grant_type=refresh_token&refresh_token=<redacted>&user%5Bpassword%5D=<redacted>&scope=read")
        // And text naming no secret is kept as it came (`code` is one only as a pair's name in a query or a form)
        #expect(String(decoding: try #require(records.last?.requestBody).data, as: UTF8.self) == plain)
    }

    @Test("A streamed answer's time after its head is its download, not a wait before the exchange")
    func streamedTimings() throws {
        // Given the record of an exchange whose head came after 20 ms (the transport's own timings) and whose body
        // streamed on for two seconds more
        let capture = CapturingTransport(base: ScriptedTransport([]), redactor: redactor, sink: { _ in })
        var response = HTTPResponse(status: 200, headers: [:], body: Data(), url: URL(string: "http://app.test/events")!)
        response.timings = RequestTimings(queued: 0.001, connect: 0.004, firstByte: 0.015, total: 0.02)
        let record = capture.record(HTTPRequest(url: response.url, endpoint: "app.test"), startedAt: Date(), response: response, error: nil,
                                    elapsed: .milliseconds(2020), headElapsed: .milliseconds(20))
        // Then nothing was queued beyond the transport's own, and the two seconds are the download, in the total
        #expect(abs((record.timings.queued ?? -1) - 0.001) < 0.0005, "\(record.timings)")
        #expect(abs((record.timings.download ?? 0) - 2.0) < 0.001, "\(record.timings)")
        #expect(abs(record.timings.total - 2.02) < 0.001)
    }

    @Test("A connection that could not be made is recorded as time spent connecting, not waiting for an answer never asked")
    func refusedConnectionTimedAsConnect() throws {
        // Given an exchange that failed after 40 ms because its upstream refused the connection
        let capture = CapturingTransport(base: ScriptedTransport([]), redactor: redactor, sink: RecordSink().closure)
        let request = HTTPRequest(url: URL(string: "http://127.0.0.1:9/")!, endpoint: "127.0.0.1:9")
        let record = capture.record(request, startedAt: Date(), response: nil,
                                    error: KioskError.offline(host: "127.0.0.1:9", reason: .refused), elapsed: .milliseconds(40), headElapsed: nil)
        // Then the 40 ms are its connect phase, and HAR's wait has nothing
        #expect(abs((record.timings.connect ?? 0) - 0.04) < 0.001, "\(record.timings)")
        #expect(record.timings.firstByte == nil)
        // And one that failed otherwise (an answer cut) keeps its time unassigned, as before
        let cut = capture.record(request, startedAt: Date(), response: nil, error: KioskError.timeout(url: "http://127.0.0.1:9/", seconds: 15),
                                 elapsed: .milliseconds(40), headElapsed: nil)
        #expect(cut.timings.connect == nil)
    }

    @Test("A 304 is recorded as a revalidation, a failure with its error and no status")
    func recordsRevalidationAndFailure() async throws {
        // Given an upstream that answers 304 and then refuses connections
        let upstream = ScriptedTransport([.respond(304), .fail(.offline(host: "api.nytimes.com"))])
        let sink = RecordSink()
        let capture = CapturingTransport(base: upstream, redactor: redactor, sink: sink.closure)
        let request = HTTPRequest(url: URL(string: "https://api.nytimes.com/a")!, source: .nyt, endpoint: "nyt.mostpopular")
        // When both exchanges happen
        _ = try await capture.send(request)
        await #expect(throws: KioskError.self) { try await capture.send(request) }
        // Then the first is a revalidation and the second an error without a status
        #expect(sink.all.map(\.decision) == [.revalidated, .network])
        #expect(sink.all[1].status == nil)
        #expect(sink.all[1].error?.isEmpty == false)
    }

    @Test("The transport's own phases are kept: its wait for a connection stays in queued, with any wait above it added")
    func keepsTransportPhases() async throws {
        // Given a transport that reports a 250 ms wait for a connection, 10 ms connecting, in a 1 s exchange
        let measured = RequestTimings(queued: 0.25, connect: 0.01, firstByte: 0.7, download: 0.04, total: 1)
        let upstream = ScriptedTransport([.reply { request in HTTPResponse(status: 200, url: request.url, timings: measured) }])
        let sink = RecordSink()
        let capture = CapturingTransport(base: upstream, redactor: redactor, sink: sink.closure)
        // When it answers (at once: nothing above it waited longer than the exchange it reports)
        _ = try await capture.send(HTTPRequest(url: URL(string: "https://x.example/")!, endpoint: "test"))
        // Then the record keeps every phase the transport measured
        let timings = try #require(sink.all.first?.timings)
        #expect(timings.queued == 0.25)
        #expect(timings.connect == 0.01 && timings.firstByte == 0.7 && timings.download == 0.04)
    }

    @Test("A body over the limit is cut and marked truncated, and a secret at the cut is still removed")
    func truncatesBodies() async throws {
        // Given a 100-byte limit and a body of 300 bytes with the key straddling the cut
        let body = String(repeating: "a", count: 90) + Self.key + String(repeating: "b", count: 300 - 90 - Self.key.count)
        let upstream = ScriptedTransport([.respond(200, body: body)])
        let sink = RecordSink()
        let capture = CapturingTransport(base: upstream, redactor: redactor, bodyLimit: 100, sink: sink.closure)
        // When it is captured
        _ = try await capture.send(HTTPRequest(url: URL(string: "https://x.example/")!, endpoint: "test"))
        // Then 100 bytes are kept, the original size is known, and no part of the key survives
        let captured = try #require(sink.all.first?.responseBody)
        #expect(captured.data.count == 100)
        #expect(captured.originalSize == 300)
        #expect(captured.isTruncated)
        let text = String(decoding: captured.data, as: UTF8.self)
        #expect(!text.contains(String(Self.key.prefix(8))))
    }

    @Test("A body over the limit echoing the request's own token across the cut keeps no part of it, though the token is longer than every configured key")
    func truncatesEchoedCredentials() async throws {
        // Given a 100-byte limit and an answer of 300 bytes echoing, across the cut, a token twice as long as the configured key
        let token = "APPTOKEN-" + String(repeating: "7", count: 2 * Self.key.count)
        let body = String(repeating: "a", count: 80) + token + String(repeating: "b", count: 300 - 80 - token.count)
        let upstream = ScriptedTransport([.respond(200, body: body)])
        let sink = RecordSink()
        let capture = CapturingTransport(base: upstream, redactor: redactor, bodyLimit: 100, sink: sink.closure)
        // When the app's request carrying that token as its bearer credential is captured
        _ = try await capture.send(HTTPRequest(url: URL(string: "https://x.example/")!, headers: ["Authorization": "Bearer \(token)"],
                                               endpoint: "test"))
        // Then 100 bytes are kept and not even the token's first part, before the cut, survives
        let captured = try #require(sink.all.first?.responseBody)
        #expect(captured.data.count == 100)
        let text = String(decoding: captured.data, as: UTF8.self)
        #expect(!text.contains("APPTOKEN-7"), "\(text)")
    }

    @Test("A request body over the limit is cut and marked truncated with its whole size, and a secret at the cut is still removed")
    func truncatesRequestBodies() async throws {
        // Given a 100-byte limit and a request body of 300 bytes with the key straddling the cut
        let body = String(repeating: "a", count: 90) + Self.key + String(repeating: "b", count: 300 - 90 - Self.key.count)
        let sink = RecordSink()
        let capture = CapturingTransport(base: ScriptedTransport([.respond(200)]), redactor: redactor, bodyLimit: 100, sink: sink.closure)
        // When it is sent and captured
        _ = try await capture.send(HTTPRequest(method: "POST", url: URL(string: "https://x.example/")!, body: Data(body.utf8), endpoint: "test"))
        // Then 100 bytes are kept, the whole size is known, and no part of the key survives
        let captured = try #require(sink.all.first?.requestBody)
        #expect(captured.data.count == 100 && captured.originalSize == 300 && captured.isTruncated)
        #expect(!String(decoding: captured.data, as: UTF8.self).contains(String(Self.key.prefix(8))))
    }

    /// Set once, from any thread.
    final class Flag: Sendable {
        private let state = Mutex(false)
        var isSet: Bool { state.withLock { $0 } }
        func set() { state.withLock { $0 = true } }
    }

    /// An upstream answering with a body it does not keep, whose bytes tell when they are freed.
    struct FreedBodyUpstream: HTTPTransport {
        let size: Int
        let freed: Flag

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            let bytes = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 1)
            bytes.initializeMemory(as: UInt8.self, repeating: UInt8(ascii: "x"), count: size)
            let body = Data(bytesNoCopy: bytes, count: size, deallocator: .custom { [freed] pointer, _ in
                pointer.deallocate()
                freed.set()
            })
            return HTTPResponse(status: 200, body: body, url: request.url)
        }
    }

    @Test("A record waiting to be made holds only what it keeps of a large answer: the whole body is freed with the answer")
    func waitingRecordFreesTheWholeBody() async throws {
        // Given a 1 KB capture limit and an upstream answering 3 MB whose bytes tell when they are freed
        let freed = Flag()
        let waiting = Mutex<[DeferredRecord]>([])
        let capture = CapturingTransport(base: FreedBodyUpstream(size: 3 << 20, freed: freed), redactor: redactor, bodyLimit: 1024,
                                         sink: { record in waiting.withLock { $0.append(record) } })
        // When the answer is given and let go, its record still waiting for the writer
        do {
            let response = try await capture.send(HTTPRequest(url: URL(string: "https://x.example/big")!, endpoint: "test"))
            #expect(response.body.count == 3 << 20)
        }
        // Then the 3 MB are freed already, and the record, made later, keeps its first KB and knows the whole size
        #expect(freed.isSet)
        let record = try #require(waiting.withLock { $0.first }).make()
        #expect(record.responseBody?.data.count == 1024 && record.responseBody?.originalSize == 3 << 20)
    }

    @Test("Secret values are scrubbed from text and bytes, longest first; short values are ignored")
    func scrubbing() {
        let redactor = Redactor.standard.hiding(["abcdef123", "abcdef123456", "abc"])
        #expect(redactor.scrub("x abcdef123456 y abcdef123 z abc") == "x <redacted> y <redacted> z abc")
        #expect(redactor.scrub(Data("abcdef123abcdef123".utf8)) == Data("<redacted><redacted>".utf8))
        #expect(Redactor.standard.scrub("nothing to hide") == "nothing to hide")
    }
}
