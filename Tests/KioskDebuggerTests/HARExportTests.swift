import Foundation
import KioskCore
@testable import KioskDebugger
import KioskTestSupport
import Testing
import KioskProcess

/// Issue 14, section 5: the archive Kiosk writes is one other tools read as they expect (pages, a
/// response for every entry, times that add up) and one Kiosk reads back into rules that answer the same.
@Suite("HAR export, and back")
struct HARExportTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    static func record(_ id: Int64, method: String = "GET", _ url: String, status: Int?, type: String? = nil, body: Data? = nil,
                       limit: Int = 1 << 20, error: String? = nil, timings: RequestTimings, decision: CacheDecision = .network) -> RequestRecord {
        RequestRecord(id: id, startedAt: start.addingTimeInterval(Double(id)), source: .rickandmorty, endpoint: "rickandmorty.characters",
                      method: method, url: url, status: status,
                      responseHeaders: (type.map { [.init(name: "Content-Type", value: $0)] } ?? []) + [.init(name: "ETag", value: "\"v\(id)\"")],
                      responseBody: body.map { CapturedBody(capturing: $0, limit: limit) }, error: error, timings: timings, decision: decision)
    }

    static let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF, 0xFE])

    /// A session as the log keeps it: answers from the network with every phase measured, from the store
    /// (total only), a mock, a 204, a 304, a binary body, a HEAD, a failure, and a body cut at capture.
    static let session: [RequestRecord] = [
        record(1, "https://rickandmortyapi.com/api/character?page=1", status: 200, type: "application/json",
               body: Data(#"{"results": [{"name": "Rick Sanchez"}]}"#.utf8),
               timings: RequestTimings(queued: 0.0021, connect: 0.0104, dns: 0.0011, tls: 0.0042, firstByte: 0.0533, download: 0.0047,
                                       total: 0.0705)),
        record(2, "https://rickandmortyapi.com/api/character?page=2", status: 200, type: "application/json",
               body: Data(#"{"results": []}"#.utf8), timings: RequestTimings(total: 0.0004), decision: .fresh),
        record(3, "https://rickandmortyapi.com/api/location/1", status: 200, type: "application/json", body: Data("{}".utf8),
               timings: RequestTimings(queued: 0.000_333_3, firstByte: 0, download: 0, total: 0.000_333_3), decision: .mocked),
        record(4, method: "POST", "https://example.test/dogs", status: 204,
               timings: RequestTimings(queued: 0, firstByte: 0.0123456, download: 0.0000004, total: 0.012346)),
        record(5, "https://rickandmortyapi.com/api/episode?page=1", status: 304,
               timings: RequestTimings(queued: 0.001, firstByte: 0.02, download: 0, total: 0.021), decision: .revalidated),
        record(6, "https://rickandmortyapi.com/api/character/avatar/1.jpeg", status: 200, type: "image/png", body: png,
               timings: RequestTimings(queued: 0, firstByte: 0.01, download: 0.03, total: 0.04)),
        record(7, method: "HEAD", "https://example.test/dogs/1", status: 200, type: "application/json", body: Data(),
               timings: RequestTimings(firstByte: 0.005, download: 0, total: 0.005)),
        record(8, "https://rickandmortyapi.com/api/character?page=3", status: nil, error: "offline: rickandmortyapi.com cannot be reached",
               timings: RequestTimings(queued: 0.5, total: 2.5)),
        record(9, "https://rickandmortyapi.com/api/character?page=4", status: 200, type: "application/json",
               body: Data(String(repeating: "x", count: 100).utf8), limit: 10, timings: RequestTimings(total: 0.1)),
    ]

    static func entries(_ archive: Data) throws -> (log: [String: Any], entries: [[String: Any]]) {
        let root = try #require(try JSONSerialization.jsonObject(with: archive) as? [String: Any])
        let log = try #require(root["log"] as? [String: Any])
        return (log, try #require(log["entries"] as? [[String: Any]]))
    }

    @Test("statusText is the registered reason phrase of every status, as Chrome and mitmproxy write it; empty for an unregistered one")
    func statusTexts() throws {
        // Given answers of statuses past the common few, and one no registry names
        let statuses = [203, 206, 307, 308, 405, 410, 418, 422, 451, 420]
        let records = statuses.enumerated().map { index, status in
            Self.record(Int64(index + 1), "https://api.example/\(status)", status: status, timings: RequestTimings(total: 0.01))
        }
        // When they are exported
        let (_, entries) = try Self.entries(try HAR.export(records))
        let texts = entries.map { ($0["response"] as? [String: Any])?["statusText"] as? String }
        // Then each carries its reason phrase
        #expect(texts == ["Non-Authoritative Information", "Partial Content", "Temporary Redirect", "Permanent Redirect",
                          "Method Not Allowed", "Gone", "I'm a teapot", "Unprocessable Entity", "Unavailable For Legal Reasons", ""])
    }

    @Test("A request body cut at capture says so in its postData, as an answer's does; a whole one carries no such note")
    func truncatedRequestBody() throws {
        // Given an upload of 3,000 bytes kept to its first 1,024, and one kept whole
        var cut = Self.record(1, method: "POST", "https://api.example/upload", status: 200, timings: RequestTimings(total: 0.01))
        cut.requestHeaders = [.init(name: "Content-Type", value: "text/plain")]
        cut.requestBody = CapturedBody(capturing: Data(String(repeating: "x", count: 3000).utf8), limit: 1024)
        var whole = Self.record(2, method: "POST", "https://api.example/note", status: 200, timings: RequestTimings(total: 0.01))
        whole.requestHeaders = [.init(name: "Content-Type", value: "text/plain")]
        whole.requestBody = CapturedBody(capturing: Data("hello".utf8), limit: 1024)
        // When they are exported
        let (_, entries) = try Self.entries(try HAR.export([cut, whole]))
        let post = { (index: Int) in (entries[index]["request"] as? [String: Any])?["postData"] as? [String: Any] }
        // Then the cut one says how much of it is kept, and the whole one says nothing of it
        #expect(post(0)?["_kioskTruncated"] as? Bool == true, "\(post(0) ?? [:])")
        #expect((post(0)?["comment"] as? String)?.contains("truncated by Kiosk's capture limit to 1024 of 3000 bytes") == true)
        #expect(post(1)?["_kioskTruncated"] == nil && post(1)?["comment"] == nil)
    }

    @Test("bodySize is what Content-Length says was sent, not the length redaction left; without one, the kept body's")
    func bodySizeAsSent() throws {
        // Given a login whose 47-byte JSON body redaction shortened, answered with 120 bytes that redaction shortened too
        var record = Self.record(1, method: "POST", "https://auth.example/login", status: 200, type: "application/json",
                                 body: Data(#"{"token":"<redacted>"}"#.utf8), timings: RequestTimings(total: 0.01))
        record.requestHeaders = [.init(name: "Content-Type", value: "application/json"), .init(name: "Content-Length", value: "47")]
        record.requestBody = CapturedBody(capturing: Data(#"{"user":"ann","password":"<redacted>"}"#.utf8), limit: 1 << 20)
        record.responseHeaders.append(.init(name: "Content-Length", value: "120"))
        var unsized = Self.record(2, "https://auth.example/me", status: 200, type: "application/json", body: Data("{}".utf8),
                                  timings: RequestTimings(total: 0.01))
        unsized.requestHeaders = []
        // When they are exported
        let (_, entries) = try Self.entries(try HAR.export([record, unsized]))
        // Then each size is the one sent, and a message without Content-Length has its kept body's
        #expect((entries[0]["request"] as? [String: Any])?["bodySize"] as? Int == 47)
        #expect((entries[0]["response"] as? [String: Any])?["bodySize"] as? Int == 120)
        #expect((entries[1]["response"] as? [String: Any])?["bodySize"] as? Int == 2)
        // And a HEAD's answer and a 204 received no body, whatever Content-Length says a GET's would be (HAR: bytes received)
        var head = Self.record(3, method: "HEAD", "https://auth.example/file", status: 200, type: "application/zip", body: nil,
                               timings: RequestTimings(total: 0.01))
        head.responseHeaders.append(.init(name: "Content-Length", value: "12345"))
        var noContent = Self.record(4, method: "DELETE", "https://auth.example/file", status: 204, type: "text/plain", body: nil,
                                    timings: RequestTimings(total: 0.01))
        noContent.responseHeaders.append(.init(name: "Content-Length", value: "0"))
        let (_, bodiless) = try Self.entries(try HAR.export([head, noContent]))
        #expect(bodiless.map { ($0["response"] as? [String: Any])?["bodySize"] as? Int } == [0, 0])
    }

    @Test("Copy as cURL leaves to curl the fields it writes itself and the hop's own, so the command runs as the request did")
    func curlCommand() {
        // Given a logged POST as the upstream got it: its Host, length, the proxy's Via, a compressed answer asked for
        let body = #"{"user":"bob","password":"<redacted>"}"#
        let record = RequestRecord(startedAt: Date(), source: nil, endpoint: "app.test", method: "POST", url: "http://app.test/login",
                                   requestHeaders: [.init(name: "Host", value: "app.test"), .init(name: "Content-Length", value: "41"),
                                                    .init(name: "Via", value: "1.1 kiosk-abc"), .init(name: "Accept-Encoding", value: "gzip, br"),
                                                    .init(name: "Content-Type", value: "application/json"),
                                                    .init(name: "X-Api-Key", value: "<redacted>")],
                                   requestBody: CapturedBody(data: Data(body.utf8), originalSize: body.utf8.count), status: 200,
                                   timings: RequestTimings(total: 0.1), decision: .network)
        // When it is copied as cURL
        let command = HAR.curl(record)
        // Then the body goes with no stale length, no Host or Via, and curl asks for the compressed answer itself
        #expect(command == "curl -X 'POST' 'http://app.test/login' --compressed -H 'Content-Type: application/json' "
                + "-H 'X-Api-Key: <redacted>' --data-raw '\(body)'", "\(command)")
    }

    @Test("Copy as cURL of a binary body (every byte, NUL and quotes too) gives a command whose shell writes those very bytes to curl")
    func curlBinaryBody() throws {
        // Given a logged upload of every byte value, and a form's file part around them
        let bytes = Data("--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"it's 100%.bin\"\r\n\r\n".utf8)
            + Data((0...255).map(UInt8.init)) + Data("\\x41\r\n--b--\r\n".utf8)
        let record = RequestRecord(startedAt: Date(), source: nil, endpoint: "app.test", method: "POST", url: "http://app.test/upload",
                                   requestHeaders: [.init(name: "Content-Type", value: "multipart/form-data; boundary=b")],
                                   requestBody: CapturedBody(data: bytes, originalSize: bytes.count), status: 200,
                                   timings: RequestTimings(total: 0.1), decision: .network)
        // When it is copied as cURL
        let command = HAR.curl(record)
        // Then curl reads the body from its input, and the shell's printf before the pipe writes exactly the logged bytes
        let pipe = try #require(command.range(of: " | curl -X 'POST' 'http://app.test/upload' "))
        #expect(command.hasSuffix("--data-binary @-"), "\(command)")
        let shell = try ChildProcess(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", String(command[..<pipe.lowerBound])],
                                     stdout: .pipe, stderr: .inherit)
        let written = shell.standardOutput?.readDataToEndOfFile() ?? Data()
        shell.waitUntilExit()
        #expect(written == bytes)
        // And a body cut at capture says so before the command
        let cut = RequestRecord(startedAt: Date(), source: nil, endpoint: "app.test", method: "POST", url: "http://app.test/upload",
                                requestBody: CapturedBody(capturing: bytes, limit: 100), status: 200, timings: RequestTimings(total: 0.1),
                                decision: .network)
        #expect(HAR.curl(cut).hasPrefix("# The body was cut by Kiosk's capture limit: this sends its first 100 of \(bytes.count) bytes.\ncurl "))
    }

    @Test("A cURL of an origin reached at another listener (the demo's demo.invalid) carries curl's --connect-to to it; others do not")
    func curlConnectsWhereKioskDid() throws {
        let record = RequestRecord(startedAt: Date(), source: .dogs, endpoint: "dogs.list", method: "GET", url: "http://demo.invalid/dogs/list.json",
                                   status: 200, timings: RequestTimings(total: 0.1), decision: .network)
        let overrides = [Origin(scheme: "http", host: "demo.invalid", port: 80): Origin(scheme: "http", host: "127.0.0.1", port: 41234),
                         Origin(scheme: "https", host: "v6.invalid", port: 443): Origin(scheme: "https", host: "::1", port: 8443)]
        #expect(HAR.curl(record, connectOverrides: overrides)
            == "curl 'http://demo.invalid/dogs/list.json' --connect-to 'demo.invalid:80:127.0.0.1:41234'")
        var v6 = record
        v6.url = "https://v6.invalid/x"
        #expect(HAR.curl(v6, connectOverrides: overrides) == "curl 'https://v6.invalid/x' --connect-to 'v6.invalid:443:[::1]:8443'")
        var other = record
        other.url = "http://demo.invalid:8080/x"
        #expect(HAR.curl(other, connectOverrides: overrides) == "curl 'http://demo.invalid:8080/x'")
    }

    @Test("The archive has a page holding every entry, a response for every entry, and each time is the sum of its timings")
    func shape() throws {
        // Given a session with every kind of answer and timing
        // When it is exported
        let (log, entries) = try Self.entries(try HAR.export(Self.session))
        // Then there is one page, starting with the first request, and every entry refers to it
        let pages = try #require(log["pages"] as? [[String: Any]])
        #expect(pages.count == 1 && pages[0]["startedDateTime"] as? String == entries.first?["startedDateTime"] as? String)
        let page = try #require(pages[0]["id"] as? String)
        #expect(pages[0]["title"] is String && pages[0]["pageTimings"] is [String: Any])
        #expect(entries.count == Self.session.count && entries.allSatisfy { $0["pageref"] as? String == page })
        for (entry, record) in zip(entries, Self.session) {
            // And every entry has a response; a failure is status 0 with its reason in _error
            let response = try #require(entry["response"] as? [String: Any])
            #expect(response["status"] as? Int == record.status ?? 0)
            #expect(response["_error"] as? String == (record.status == nil ? record.error : nil), "#\(record.id)")
            // And `time` is the sum of the timings that are not -1 (but `ssl`, which `connect` holds), to the microsecond,
            // near the measured total
            let timings = try #require(entry["timings"] as? [String: Double])
            let time = try #require(entry["time"] as? Double)
            let sum = timings.filter { $0.key != "ssl" && $0.value >= 0 }.values.reduce(0, +)
            #expect(abs(time - sum) < 0.000_000_1, "#\(record.id): time \(time), timings \(timings)")
            #expect(abs(time - record.timings.total * 1000) <= 0.002, "#\(record.id): time \(time), total \(record.timings.total)")
            for phase in ["blocked", "dns", "connect", "ssl", "send", "wait", "receive"] {
                let value = try #require(timings[phase], "#\(record.id) lacks \(phase)")
                #expect(value == -1 || value >= 0, "#\(record.id).\(phase) = \(value)")
                #expect(value == (value * 1000).rounded() / 1000, "#\(record.id).\(phase) = \(value) is not whole microseconds")
            }
        }
    }

    @Test("The same records make the same bytes, export after export, keys sorted and the creator on its key's line")
    func deterministicBytes() throws {
        // Given a session's records exported twice
        let exports = try (0..<5).map { _ in try HAR.export(Self.session) }
        // Then every export is byte for byte the first (a dictionary's order changes from one to the next)
        #expect(Set(exports).count == 1)
        let text = String(decoding: exports[0], as: UTF8.self)
        #expect(text.contains("\"creator\" : {\n") && text.contains("\"pages\" : [\n"), "\(text.prefix(300))")
    }

    @Test("A new connection's DNS lookup and TLS handshake are HAR's dns and ssl: dns outside connect, ssl within it")
    func connectionPhases() throws {
        // Given the session, whose first exchange opened its connection: 10.4 ms, of which 1.1 ms DNS and 4.2 ms TLS
        // When it is exported
        let (_, entries) = try Self.entries(try HAR.export(Self.session))
        // Then its timings say so in HAR's terms
        let first = try #require(entries.first?["timings"] as? [String: Double])
        #expect(first["dns"] == 1.1 && first["connect"] == 9.3 && first["ssl"] == 4.2, "\(first)")
        // And an exchange on a connection already open has neither
        let stored = try #require(entries[1]["timings"] as? [String: Double])
        #expect(stored["dns"] == -1 && stored["ssl"] == -1 && stored["connect"] == -1)
    }

    @Test("A redirect's entry names its target in redirectURL, as HAR 1.2 says; other entries leave it empty")
    func redirectTarget() throws {
        // Given a 302 with a Location, and a 200
        var moved = Self.record(1, "https://example.test/old", status: 302, timings: RequestTimings(total: 0.01))
        moved.responseHeaders.append(.init(name: "Location", value: "https://example.test/new?page=2"))
        let plain = Self.record(2, "https://example.test/new?page=2", status: 200, timings: RequestTimings(total: 0.01))
        // When they are exported
        let (_, entries) = try Self.entries(try HAR.export([moved, plain]))
        // Then the 302's redirectURL is its Location, the 200's is empty
        let targets = entries.compactMap { ($0["response"] as? [String: Any])?["redirectURL"] as? String }
        #expect(targets == ["https://example.test/new?page=2", ""])
    }

    @Test("A body is read as its content where it came coded and whole: gzip and br decoded with their coding named; cut, unknown or not coded as it is")
    func bodyReadAsContent() throws {
        let gzip = CapturedBody(data: try #require(Data(base64Encoded: "H4sIAAAAAAACA6tWykvMTVWyUlAKykzOVqoFAB+KiCoQAAAA")), originalSize: 36)
        let (content, coding) = gzip.decoded(contentEncoding: " GZIP ")
        #expect(coding == "gzip" && content.data == Data(#"{"name": "Rick"}"#.utf8) && content.originalSize == 16)
        let brotli = CapturedBody(data: try #require(Data(base64Encoded: "iweAeyJuYW1lIjogIlJpY2sifQM=")), originalSize: 20)
        #expect(brotli.decoded(contentEncoding: "br").coding == "br")
        // Cut at capture, in a coding Kiosk does not know, or not coded: as it is
        let cut = CapturedBody(data: gzip.data.prefix(10), originalSize: 36)
        for (body, encoding) in [(cut, "gzip"), (gzip, "zstd"), (gzip, nil)] as [(CapturedBody, String?)] {
            #expect(body.decoded(contentEncoding: encoding).coding == nil && body.decoded(contentEncoding: encoding).body == body)
        }
    }

    @Test("A small coded body that decodes to more than a page is given (a gzip bomb) is shown and exported as its first MB, its whole size said")
    func codedBombIsCut() throws {
        // Given an answer of 5 MB of JSON-ish text, some 5 KB as sent in gzip
        let content = Data(repeating: UInt8(ascii: "a"), count: 5 << 20)
        let gzipped = try #require(ContentCoding.encoded(content, coding: "gzip"))
        #expect(gzipped.count < 64 << 10)
        let sent = CapturedBody(capturing: gzipped, limit: 1 << 20)
        // When the console's pages and the terminal read it as its content
        let (shown, coding) = sent.decoded(contentEncoding: "gzip")
        // Then they get its first MB, its size the content's, marked cut
        #expect(coding == "gzip" && shown.data.count == 1 << 20 && shown.originalSize == 5 << 20 && shown.isTruncated)
        // And a HAR export keeps the same first MB, its size and what the coding saved whole, and says it was cut
        var record = Self.record(1, "https://example.test/bomb", status: 200, type: "text/plain", body: gzipped, timings: RequestTimings(total: 0.01))
        record.responseHeaders.append(.init(name: "Content-Encoding", value: "gzip"))
        let (_, entries) = try Self.entries(try HAR.export([record]))
        let exported = try #require((entries.first?["response"] as? [String: Any])?["content"] as? [String: Any])
        #expect((exported["text"] as? String)?.utf8.count == 1 << 20 && exported["size"] as? Int == 5 << 20, "\(exported.keys)")
        #expect(exported["compression"] as? Int == (5 << 20) - gzipped.count)
        #expect(exported["comment"] as? String == "decoded from gzip; the first 1048576 of its 5242880 bytes exported", "\(exported["comment"] ?? "")")
    }

    @Test("A content-coded body is exported decoded, as HAR 1.2 keeps bodies (gzip, deflate, brotli), with what the coding saved; one that cannot be (cut short, corrupt) is kept as sent and said so; a raw deflate stream decodes too",
          arguments: [
            ("gzip", "H4sIAAAAAAACA6tWykvMTVWyUlAKykzOVqoFAB+KiCoQAAAA", true),
            ("deflate", "eJyrVspLzE1VslJQCspMzlaqBQAq9QUF", true),
            ("deflate", "q1bKS8xNVbJSUArKTM5WqgUA", true),
            ("deflate", "q1bKS8xNVbJSUArKTM5W", false),
            ("deflate", "eJyrVspLzE1VslJQCspMzlaqBQAq9QUG", false),
            ("br", "iweAeyJuYW1lIjogIlJpY2sifQM=", true),
            ("br", "iweAeyJuYW1lIjogIlJpY2si", false),
            ("br", "CweAeyJuYW1lIjogIlJpY2sifQM=", false),
            ("gzip", "H4sIAAAAAAACA6tWykvMTVWyUlAK", false),
          ])
    func codedBodies(coding: String, base64: String, decodes: Bool) throws {
        // Given an answer logged as it came, coded
        let coded = try #require(Data(base64Encoded: base64))
        var record = Self.record(1, "https://example.test/coded", status: 200, type: "application/json", body: coded, timings: RequestTimings(total: 0.01))
        record.responseHeaders.append(.init(name: "Content-Encoding", value: coding))
        // When it is exported
        let (_, entries) = try Self.entries(try HAR.export([record]))
        let content = try #require((entries.first?["response"] as? [String: Any])?["content"] as? [String: Any])
        if decodes {
            // Then its text is the content, its size the content's, and `compression` what the coding saved
            #expect(content["text"] as? String == #"{"name": "Rick"}"# && content["size"] as? Int == 16, "\(content)")
            #expect(content["compression"] as? Int == 16 - coded.count && content["encoding"] == nil && content["comment"] == nil)
        } else {
            // Then it is the bytes as sent, in base64, and the comment says it is still coded
            #expect(content["text"] as? String == base64 && content["encoding"] as? String == "base64", "\(content)")
            #expect(content["compression"] == nil && (content["comment"] as? String)?.contains("coded as \(coding)") == true)
        }
    }

    @Test("Two Content-Encoding fields are one list of codings: a body gzipped twice is kept as sent, coded as gzip, gzip, not decoded once and called content")
    func twoCodingFields() throws {
        // Given an answer gzipped twice, its codings in two fields
        let json = Data(#"{"name": "Rick"}"#.utf8)
        let once = try #require(ContentCoding.encoded(json, coding: "gzip"))
        let twice = try #require(ContentCoding.encoded(once, coding: "gzip"))
        var record = Self.record(1, "https://example.test/twice", status: 200, type: "application/json", body: twice, timings: RequestTimings(total: 0.01))
        record.responseHeaders += [.init(name: "Content-Encoding", value: "gzip"), .init(name: "content-encoding", value: "gzip")]
        // When it is read as the console reads it, and exported
        #expect(RequestRecord.HeaderField.combined("Content-Encoding", in: record.responseHeaders) == "gzip, gzip")
        let (_, entries) = try Self.entries(try HAR.export([record]))
        let content = try #require((entries.first?["response"] as? [String: Any])?["content"] as? [String: Any])
        // Then it is the bytes as sent, said to be coded as both
        #expect(content["encoding"] as? String == "base64" && content["compression"] == nil, "\(content)")
        #expect((content["comment"] as? String)?.contains("coded as gzip, gzip") == true, "\(content)")
    }

    @Test("A coded body withheld at capture (it did not decode) is exported as not kept, saying why, and an import of the export skips it rather than store an empty answer")
    func withheldBody() throws {
        // Given an answer whose gzip body did not decode: nothing of its 28 bytes kept
        var record = Self.record(1, "https://example.test/corrupt", status: 200, type: "application/json", timings: RequestTimings(total: 0.01))
        record.responseBody = CapturedBody(redacted: Data(), ofFirst: 28, size: 28, limit: 1 << 20)
        record.responseHeaders.append(.init(name: "Content-Encoding", value: "gzip"))
        // When it is exported
        let archive = try HAR.export([record])
        let (_, entries) = try Self.entries(archive)
        let response = try #require(entries.first?["response"] as? [String: Any])
        let content = try #require(response["content"] as? [String: Any])
        // Then its comment says it was not kept and why, never "kept as sent", and it is marked as not whole
        #expect((content["comment"] as? String)?.hasPrefix("not kept: coded as gzip, and it could not be kept whole with its secrets hidden") == true,
                "\(content)")
        #expect(response["_kioskTruncated"] as? Bool == true)
        // And an import of the archive skips it as a body not kept whole
        let imported = try HARImportTests.importing(archive)
        #expect(imported.rules.isEmpty && imported.skipped[.bodyNotRecorded] == 1, "\(imported.skipped)")
    }

    @Test("A body in the Latin-1 charset its Content-Type names is text in the export and the JSON, not base64, and an import of the export gives the same bytes")
    func latin1Text() throws {
        // Given an answer sent in ISO-8859-1: "Café crème über £ 5", one byte a character
        let bytes = Data([0x43, 0x61, 0x66, 0xE9, 0x20, 0x63, 0x72, 0xE8, 0x6D, 0x65, 0x20, 0xFC, 0x62, 0x65, 0x72, 0x20, 0xA3, 0x20, 0x35])
        let record = Self.record(1, "https://example.test/latin", status: 200, type: "text/plain; charset=iso-8859-1", body: bytes,
                                 timings: RequestTimings(total: 0.01))
        // When it is exported, and read as the JSON API reads it
        let archive = try HAR.export([record])
        let (_, entries) = try Self.entries(archive)
        let content = try #require((entries.first?["response"] as? [String: Any])?["content"] as? [String: Any])
        // Then both hold its text
        #expect(content["text"] as? String == "Café crème über £ 5" && content["encoding"] == nil, "\(content)")
        #expect(RequestJSON(record).responseBody?.text == "Café crème über £ 5")
        // And the export imported again answers with the bytes it was sent in
        let imported = try HARImportTests.importing(archive)
        #expect(imported.rules.first?.body == bytes)
    }

    @Test("A UTF-8 body starting with a byte order mark keeps it in the export and the JSON (U+FEFF first), and an import of the export gives every byte back")
    func byteOrderMarkKept() throws {
        // Given an answer whose UTF-8 text starts with a BOM, as Windows tools write it
        let bytes = Data([0xEF, 0xBB, 0xBF] + Array("hello".utf8))
        let record = Self.record(1, "https://example.test/bom", status: 200, type: "text/plain; charset=utf-8", body: bytes,
                                 timings: RequestTimings(total: 0.01))
        // When it is exported, and read as the JSON API and `kiosk log show --json` read it
        let archive = try HAR.export([record])
        let (_, entries) = try Self.entries(archive)
        let content = try #require((entries.first?["response"] as? [String: Any])?["content"] as? [String: Any])
        // Then both hold the mark as the text's first character (in the archive's bytes: JSONSerialization, reading it here,
        // drops a string's leading BOM), the size counting its three bytes
        #expect(archive.range(of: Data(#""text" : "\#u{FEFF}hello""#.utf8)) != nil && content["size"] as? Int == 8, "\(content)")
        #expect(RequestJSON(record).responseBody?.text == "\u{FEFF}hello")
        // And the export imported again answers with the very bytes
        #expect(try HARImportTests.importing(archive).rules.first?.body == bytes)
    }

    @Test("A body in a multi-byte or Greek charset its Content-Type names (GBK, ISO-8859-7) is text in the export, and an import of the export gives the same bytes",
          arguments: [("text/html; charset=GBK", [0xD6, 0xD0, 0xCE, 0xC4, 0xCD, 0xF8, 0xD2, 0xB3], "中文网页"),
                      ("text/plain; charset=iso-8859-7", [0xC5, 0xEB, 0xEB, 0xE7, 0xED, 0xE9, 0xEA, 0xDC], "Ελληνικά")] as [(String, [UInt8], String)])
    func charsetText(contentType: String, bytes: [UInt8], text: String) throws {
        // Given an answer sent in the charset its Content-Type names
        let record = Self.record(1, "https://example.test/cs", status: 200, type: contentType, body: Data(bytes), timings: RequestTimings(total: 0.01))
        // When it is exported
        let archive = try HAR.export([record])
        let (_, entries) = try Self.entries(archive)
        let content = try #require((entries.first?["response"] as? [String: Any])?["content"] as? [String: Any])
        // Then it is its text, not base64
        #expect(content["text"] as? String == text && content["encoding"] == nil, "\(content)")
        // And the export imported again answers with the bytes it was sent in, under the same label
        let rule = try #require(try HARImportTests.importing(archive).rules.first)
        #expect(rule.body == Data(bytes))
        #expect(rule.headers.first { $0.name == "Content-Type" }?.value == contentType)
    }

    @Test("A brotli body that would decode past 64 MB (a bomb: 80 MB of zeros in 132 bytes) is not decoded, and brotli decodes here")
    func brotliBomb() throws {
        // Given the system's brotli decoder (Debian's libbrotli1, which curl needs, is on every machine Kiosk is tested on)
        #expect(ContentCoding.decodes("br"))
        // When a bomb is decoded, then it is not
        let bomb = try #require(Data(base64Encoded: "y///P/gnAOKxQCD3/o///3/wTwDEYRGA7v0f////4J8AiMMCAN37P/7//8E/ARCHBQC693/8//+DfwIgDgsAdO//+P//B/8EQBwWAOje//H//w/+CYA4LADQvf/j//8f/BMAcVgAoHv/x///P/gnAOKwAED3/o///3/wTwDEYQGA7v3f"))
        #expect(ContentCoding.decoded(bomb, coding: "br") == nil)
        // And an empty body is no brotli stream
        #expect(ContentCoding.decoded(Data(), coding: "br") == nil)
    }

    @Test("An empty log exports as an archive without pages or entries that still imports")
    func emptyLog() throws {
        // Given no record
        // When it is exported and imported back
        let archive = try HAR.export([])
        let (log, entries) = try Self.entries(archive)
        let result = try HAR.importArchive(archive, origin: "har: empty.har", folder: nil, ignoringQueryItems: [])
        // Then the archive has empty pages and entries, and the import finds nothing to replay or skip
        #expect((log["pages"] as? [Any])?.isEmpty == true && entries.isEmpty)
        #expect(result.rules.isEmpty && result.entries == 0 && result.skipped.isEmpty)
    }

    @Test("An archive made a batch at a time is the document made at once, handed on in parts, a batch's worth at a time")
    func streamedArchive() throws {
        // Given the session's records given in batches of three, with an empty batch among them (records evicted meanwhile)
        var batches = stride(from: 0, to: Self.session.count, by: 3).map { Array(Self.session[$0..<min($0 + 3, Self.session.count)]) }
        batches.insert([], at: 1)
        var given = 0
        let archive = HAR.ArchiveStream {
            defer { given += 1 }
            return given < batches.count ? batches[given] : nil
        }
        // When it is read part by part
        var parts: [Data] = []
        while let part = try archive.next() { parts.append(part) }
        // Then each part came from one batch (and the end), the whole is the archive `export` makes, and it counted them all
        #expect(parts.count == batches.count(where: { !$0.isEmpty }) + 1)
        let whole = parts.reduce(Data(), +)
        #expect(try JSONSerialization.jsonObject(with: whole) as? NSDictionary
                == (try JSONSerialization.jsonObject(with: try HAR.export(Self.session)) as? NSDictionary))
        #expect(archive.count == Self.session.count)
        #expect(try archive.next() == nil)
    }

    @Test("An exported session imported back gives rules answering every request as it was answered, and skips the rest")
    func roundTrip() async throws {
        // Given a session exported as HAR
        let archive = try HAR.export(Self.session)
        // When Kiosk imports it into its rules, in front of an upstream that must not be asked
        let result = try HAR.importArchive(archive, origin: "har: session.har", folder: nil, ignoringQueryItems: Redactor.standard.queryItems)
        let rules = MockRules(fileURL: nil, redactor: .standard)
        try rules.add(result.rules)
        let transport = MockingTransport(base: ScriptedTransport([]), rules: rules)
        // Then the failure and the body cut at capture are skipped, and said so
        #expect(result.entries == 9 && result.rules.count == 7)
        #expect(result.skipped == [.failed: 1, .bodyNotRecorded: 1])
        // And every other request is answered with its status, body and Content-Type, without the upstream
        for record in Self.session where record.status != nil && record.responseBody?.isTruncated != true {
            let request = HTTPRequest(method: record.method, url: try #require(URL(string: record.url)), endpoint: record.endpoint)
            let response = try await transport.send(request)
            #expect(response.status == record.status, "#\(record.id)")
            #expect(response.body == (record.responseBody?.data ?? Data()), "#\(record.id)")
            #expect(response.headers["Content-Type"] == record.responseHeaders.first { $0.name == "Content-Type" }?.value, "#\(record.id)")
            #expect(response.headers["ETag"] == "\"v\(record.id)\"", "#\(record.id)")
            #expect(response.headers[MockingTransport.markerHeader] != nil)
        }
    }
}
