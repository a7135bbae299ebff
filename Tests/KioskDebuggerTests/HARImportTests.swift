import Foundation
import KioskCore
@testable import KioskDebugger
import KioskTestSupport
import Testing

/// Issue 14, section 5: what a HAR import makes of each kind of entry, says about what it skipped, and
/// refuses; body files never read from outside the archive's folder.
@Suite("HAR import")
struct HARImportTests {
    /// An archive of `entries` (JSON objects, written out as given).
    static func archive(creator: String = "test", _ entries: [String]) -> Data {
        Data(#"{"log": {"version": "1.2", "creator": {"name": "\#(creator)", "version": "1"}, "entries": [\#(entries.joined(separator: ",\n"))]}}"#.utf8)
    }

    /// One entry: `method url` answered by `response` (a JSON object, or nil for none).
    static func entry(method: String = "GET", _ url: String, response: String?) -> String {
        #"{"startedDateTime": "2026-11-23T10:00:00.000Z", "request": {"method": "\#(method)", "url": "\#(url)", "headers": []}"#
            + (response.map { #", "response": \#($0)}"# } ?? "}")
    }

    @Test("Answers Kiosk's proxy made itself (a 504 for what it had not stored) are not replayed; stored answers given offline are")
    func answersKioskMadeAreSkipped() throws {
        // Given Kiosk's own export: an offline miss, an only-if-cached miss, and stored answers given offline (a hit, and one
        // standing in for an unreachable upstream, stale), and an answer whose body the upstream cut (a status and an error)
        let made = { (url: String, status: Int, extra: String) in
            String(Self.entry(url, response: #"{"status": \#(status), "content": {"text": "x", "mimeType": "text/plain"}}"#).dropLast()) + ", " + extra + "}"
        }
        let data = Self.archive(creator: "Kiosk", [
            made("http://app.test/never", 504, #""_kioskDecision": "offline", "_kioskCacheStatus": "Kiosk; fwd=miss; detail=offline""#),
            made("http://app.test/only", 504, #""_kioskDecision": "only-if-cached", "_kioskCacheStatus": "Kiosk; fwd=miss""#),
            made("http://app.test/kept", 200, #""_kioskDecision": "offline", "_kioskCacheStatus": "Kiosk; hit; detail=offline""#),
            made("http://app.test/stood-in", 200, #""_kioskDecision": "offline", "_kioskCacheStatus": "Kiosk; fwd=stale; detail=offline""#),
            made("http://app.test/cut", 200, #""_kioskDecision": "network", "_kioskError": "the upstream closed before the end""#),
        ])
        // When it is imported, as mock rules and into the cache
        for result in [try Self.importing(data), try HAR.importArchive(data, origin: "har: k.har", folder: nil,
                                                                      ignoringQueryItems: [], byRecordedRequest: true)] {
            // Then the two Kiosk made are counted apart, saying why, the stored ones replayed, and the cut one not kept whole
            #expect(result.rules.map(\.urlPattern) == ["http://app.test/kept", "http://app.test/stood-in"])
            #expect(result.skipped == [.madeByKiosk: 2, .bodyNotRecorded: 1])
            #expect(result.skippedDescription.contains("2 answered by Kiosk itself, not the upstream (a 504 for what it had not stored)"))
        }
    }

    @Test("An import says how many of its mock rules answer what was recorded for a request with credentials")
    func credentialedAnswersAreSaid() throws {
        // Given an archive with an answer recorded for a cookie, one for an Authorization, and one for nobody
        let with = { (url: String, header: String) in
            Self.entry(url, response: Self.ok("x")).replacingOccurrences(of: #""headers": []"#, with: #""headers": [\#(header)]"#)
        }
        let data = Self.archive([with("https://example.test/me", #"{"name": "Cookie", "value": "session=abc"}"#),
                                 with("https://example.test/mine", #"{"name": "Authorization", "value": "Bearer t0ken"}"#),
                                 Self.entry("https://example.test/public", response: Self.ok("x"))])
        // When it is imported as mock rules
        let result = try Self.importing(data)
        // Then two are counted, and said to answer whoever asks
        #expect(result.credentialed == 2)
        #expect(HAR.Import.credentialedDescription(result.credentialed)?.hasPrefix("2 of them answer what was recorded for requests with credentials") == true)
        #expect(HAR.Import.credentialedDescription(0) == nil)
    }

    @Test("For the proxy's cache a URL whose query is in another order is another answer, both kept; as mock rules (which match a query in any order) one")
    func queryOrderForTheCache() throws {
        // Given answers to one query in two orders
        let data = Self.archive([Self.entry("https://example.test/o?x=1&y=2", response: Self.ok("XY")),
                                 Self.entry("https://example.test/o?y=2&x=1", response: Self.ok("YX"))])
        // When it is imported for the cache, which keys by the URL as sent, then both are kept
        let cached = try HAR.importArchive(data, origin: "har: test.har", folder: nil, ignoringQueryItems: Redactor.standard.queryItems,
                                           byRecordedRequest: true)
        #expect(cached.rules.map(\.urlPattern) == ["https://example.test/o?x=1&y=2", "https://example.test/o?y=2&x=1"])
        #expect(cached.skipped.isEmpty)
        // And as mock rules, one: the newest
        #expect(try Self.importing(data).rules.map(\.body) == [Data("YX".utf8)])
    }

    @Test("In an archive out of time order, the newest answer of a request is the one replayed, not the last in the file")
    func newestAnswerReplayed() throws {
        // Given two answers for one URL, the later in time first in the file (HAR only recommends sorting)
        let entry = { (time: String, text: String) in
            Self.entry("https://example.test/order", response: Self.ok(text))
                .replacingOccurrences(of: "2026-11-23T10:00:00.000Z", with: time)
        }
        let data = Self.archive([entry("2024-01-02T00:00:00.000Z", "newer"), entry("2024-01-01T00:00:00.000Z", "older")])
        // When it is imported
        let result = try Self.importing(data)
        // Then the newer answer is replayed, and the other counted as answered again
        #expect(result.rules.map(\.body) == [Data("newer".utf8)])
        #expect(result.skipped == [.answeredAgain: 1])
        // And in time order the last one is
        let ordered = try Self.importing(Self.archive([entry("2024-01-01T00:00:00.000Z", "older"), entry("2024-01-02T00:00:00.000Z", "newer")]))
        #expect(ordered.rules.map(\.body) == [Data("newer".utf8)])
    }

    static func ok(_ text: String, status: Int = 200) -> String {
        #"{"status": \#(status), "headers": [], "content": {"mimeType": "text/plain", "size": \#(text.utf8.count), "text": "\#(text)"}}"#
    }

    static func importing(_ data: Data, folder: URL? = nil) throws -> HAR.Import {
        try HAR.importArchive(data, origin: "har: test.har", folder: folder, ignoringQueryItems: Redactor.standard.queryItems)
    }

    @Test("A text body in a Latin-1 or Windows-1252 charset is replayed in the bytes it was sent in; UTF-8 and no charset as UTF-8",
          arguments: [("text/plain; charset=iso-8859-1", [0x63, 0x61, 0x66, 0xE9, 0x21]),
                      ("text/html; charset=\"Windows-1252\"", [0x63, 0x61, 0x66, 0xE9, 0x21]),
                      ("text/plain; charset=utf-8", [0x63, 0x61, 0x66, 0xC3, 0xA9, 0x21]),
                      ("text/plain", [0x63, 0x61, 0x66, 0xC3, 0xA9, 0x21])] as [(String, [UInt8])])
    func charsetOfText(mimeType: String, bytes: [UInt8]) throws {
        // Given an answer recorded as the text "café!" under a MIME type naming a charset, or none
        let response = #"{"status": 200, "headers": [], "content": {"mimeType": "\#(mimeType.replacingOccurrences(of: "\"", with: "\\\""))", "#
            + #""size": \#(bytes.count), "text": "café!"}}"#
        // When it is imported
        let result = try Self.importing(Self.archive([Self.entry("https://example.test/t", response: response)]))
        // Then the rule answers with the bytes that charset makes of it
        #expect(result.rules.first?.body == Data(bytes))
    }

    @Test("A text body under a Latin-1 label is encoded as browsers read that label (Windows-1252: its euro sign has a byte), and Shift_JIS's in Shift_JIS",
          arguments: [("text/plain; charset=iso-8859-1", "café €", [0x63, 0x61, 0x66, 0xE9, 0x20, 0x80]),
                      ("text/plain; charset=Shift_JIS", "日本", [0x93, 0xFA, 0x96, 0x7B]),
                      // (UTF-8 under the label, as Kiosk's own export of such an answer says by its size: kept UTF-8)
                      ("text/plain; charset=iso-8859-1", "café", [0x63, 0x61, 0x66, 0xC3, 0xA9])] as [(String, String, [UInt8])])
    func legacyCharsets(mimeType: String, text: String, bytes: [UInt8]) throws {
        // Given an answer recorded as text under a MIME type naming a legacy charset (Chrome reads iso-8859-1 as Windows-1252)
        let response = #"{"status": 200, "headers": [], "content": {"mimeType": "\#(mimeType)", "size": \#(bytes.count), "text": "\#(text)"}}"#
        // When it is imported
        let result = try Self.importing(Self.archive([Self.entry("https://example.test/t", response: response)]))
        // Then the rule answers with the bytes the server sent (they were UTF-8 under the label: mojibake to the app)
        #expect(result.rules.first?.body == Data(bytes))
    }

    @Test("Text under a charset its Content-Type field names (as Chrome records it: the MIME type without one) is replayed in that charset's bytes; text the label cannot hold, or under a label Kiosk cannot write, in UTF-8, the field saying utf-8",
          arguments: [("text/html; charset=GBK", "中文网页", [0xD6, 0xD0, 0xCE, 0xC4, 0xCD, 0xF8, 0xD2, 0xB3], "text/html; charset=GBK"),
                      ("text/html; charset=iso-8859-7", "Ελληνικά", [0xC5, 0xEB, 0xEB, 0xE7, 0xED, 0xE9, 0xEA, 0xDC], "text/html; charset=iso-8859-7"),
                      ("text/html; charset=iso-8859-7", "中文", [0xE4, 0xB8, 0xAD, 0xE6, 0x96, 0x87], "text/html; charset=utf-8"),
                      ("text/html; charset=x-user-defined", "café", [0x63, 0x61, 0x66, 0xC3, 0xA9], "text/html; charset=utf-8")]
            as [(String, String, [UInt8], String)])
    func charsetOfTheField(contentType: String, text: String, bytes: [UInt8], replayedType: String) throws {
        // Given an answer recorded as text, its Content-Type field naming a charset its MIME type leaves out
        let response = #"{"status": 200, "headers": [{"name": "content-type", "value": "\#(contentType)"}], "#
            + #""content": {"mimeType": "text/html", "text": "\#(text)"}}"#
        // When it is imported as a mock rule
        let result = try Self.importing(Self.archive([Self.entry("https://example.test/t", response: response)]))
        // Then the rule answers with the bytes its field's charset makes of the text, or UTF-8's under a field that says so
        let rule = try #require(result.rules.first)
        #expect(rule.body == Data(bytes))
        #expect(rule.headers == [.init(name: "content-type", value: replayedType)])
        // And the import counts the answers it relabelled
        #expect(result.inUTF8Instead == (replayedType == contentType ? 0 : 1))
    }

    @Test("A recorded URL's fragment, which no request carries, is left out: the rule answers the URL, and keeps no token written there")
    func fragmentLeftOut() throws {
        // Given an OAuth redirect recorded with its token in the fragment, as a browser records it
        let result = try Self.importing(Self.archive([
            Self.entry("https://app.test/cb?x=1#access_token=IQSECRETFRAG&state=s", response: Self.ok("signed in")),
        ]))
        // Then its rule names the URL without the fragment, and answers the request the app sends
        #expect(result.rules.map(\.urlPattern) == ["https://app.test/cb?x=1"])
        let rules = MockRules(fileURL: nil, redactor: .standard)
        try rules.add(result.rules)
        #expect(rules.match(HTTPRequest(url: URL(string: "https://app.test/cb?x=1")!, endpoint: "app.test"))?.body == Data("signed in".utf8))
    }

    @Test("A recorded URL whose scheme or host is in capitals, names its scheme's default port or has an empty path (RFC 3986: the same URL), is imported as apps send it; its path keeps its case")
    func capitalSchemeAndHost() throws {
        // Given entries recorded with an upper-case scheme, host, and a user's name in capitals before the host
        let result = try Self.importing(Self.archive([
            Self.entry("HTTP://A.TEST/Items/10?Q=X", response: Self.ok("ten")),
            Self.entry("HTTPS://Bob@API.Test:8443", response: Self.ok("root")),
            Self.entry("http://b.test:80/x", response: Self.ok("x")),
            Self.entry("https://b.test:443?y", response: Self.ok("y")),
            Self.entry("http://b.test:443/z", response: Self.ok("z")),
        ]))
        // Then each is a rule at the lower-cased address without a default port, path and query as written; the one with a
        // user's name is skipped (no app's request carries one: it would never match, and a password would be kept)
        #expect(result.skipped == [.unsendableURL: 1])
        #expect(result.rules.map(\.urlPattern) == ["http://a.test/Items/10?Q=X", "http://b.test/x",
                                                   "https://b.test/?y", "http://b.test:443/z"])
        let rules = MockRules(fileURL: nil, redactor: .standard)
        try rules.add(result.rules)
        #expect(rules.match(HTTPRequest(url: URL(string: "http://a.test/Items/10?Q=X")!, endpoint: "a.test"))?.body == Data("ten".utf8))
        // (an app asking for the one recorded without a path sends `/`)
        #expect(rules.match(HTTPRequest(url: URL(string: "https://b.test/?y")!, endpoint: "b.test"))?.body == Data("y".utf8))
    }

    @Test("A recorded URL with a % that starts no escape (a search for 100%) is kept as the proxy writes the app's request: %25")
    func strayPercentKept() throws {
        // Given a search for "100%" recorded as a browser sends it, the % as typed, and a path with a stray % and a valid escape
        let result = try Self.importing(Self.archive([
            Self.entry("https://shop.test/search?q=100%", response: Self.ok("found")),
            Self.entry("https://shop.test/50%off/%41", response: Self.ok("sale")),
        ]))
        // Then both are imported, each stray % written %25 and the valid escape as it was, as the proxy sends the app's target
        #expect(result.skippedCount == 0)
        #expect(result.rules.map(\.urlPattern) == ["https://shop.test/search?q=100%25", "https://shop.test/50%25off/%41"])
    }

    @Test("A * in a recorded URL is that character, not a wildcard: its rule answers that address and no other")
    func starInARecordedURL() throws {
        // Given answers recorded for /users/* and for ?fields=*
        let result = try Self.importing(Self.archive([
            Self.entry("https://example.test/users/*", response: Self.ok("all")),
            Self.entry("https://example.test/items?fields=*", response: Self.ok("fields")),
        ]))
        let rules = MockRules(fileURL: nil, redactor: .standard)
        try rules.add(result.rules)
        let request = { (url: String) in HTTPRequest(url: URL(string: url)!, endpoint: "example.test") }
        // Then each answers its own address, written with * or %2A
        #expect(rules.match(request("https://example.test/users/*"))?.body == Data("all".utf8))
        #expect(rules.match(request("https://example.test/users/%2A"))?.body == Data("all".utf8))
        #expect(rules.match(request("https://example.test/items?fields=*"))?.body == Data("fields".utf8))
        // And not the addresses a wildcard would have matched
        #expect(rules.match(request("https://example.test/users/42")) == nil)
        #expect(rules.match(request("https://example.test/items?fields=id")) == nil)
    }

    @Test("A body still coded is told from a decoded one: gzip by its bytes, another coding (or two stacked) when Kiosk's export kept it in base64; a mock skips it, the cache keeps it coded")
    func stillCodedBodies() throws {
        // Given Kiosk's export of answers under Content-Encoding: gzip bytes, br bytes in base64, and decoded text of each
        let coded = { (coding: String) in #"{"name": "Content-Encoding", "value": "\#(coding)"}"# }
        let data = Self.archive(creator: "Kiosk", [
            Self.entry("https://example.test/gzip", response: #"{"status": 200, "headers": [\#(coded("gzip"))], "#
                       + #""content": {"encoding": "base64", "text": "H4sIAAAAAAAAAw=="}}"#),
            Self.entry("https://example.test/br", response: #"{"status": 200, "headers": [\#(coded("br"))], "#
                       + #""content": {"encoding": "base64", "text": "GwMA+CUAoloMfg=="}}"#),
            Self.entry("https://example.test/gzip-text", response: #"{"status": 200, "headers": [\#(coded("gzip"))], "content": {"text": "{}"}}"#),
            Self.entry("https://example.test/br-text", response: #"{"status": 200, "headers": [\#(coded("br"))], "content": {"text": "{}"}}"#),
            // (brotli over gzip: its bytes are brotli's, no gzip header)
            Self.entry("https://example.test/gzip-br", response: #"{"status": 200, "headers": [\#(coded("gzip, br"))], "#
                       + #""content": {"encoding": "base64", "text": "GwMA+CUAoloMfg=="}}"#),
        ])
        // When imported as mocks, the coded ones are skipped and the decoded ones kept without a coding
        let mocks = try Self.importing(data)
        #expect(mocks.skipped == [.compressedBody: 3])
        #expect(mocks.rules.map(\.urlPattern) == ["https://example.test/gzip-text", "https://example.test/br-text"])
        #expect(mocks.rules.allSatisfy { !$0.headers.contains { $0.name.lowercased() == "content-encoding" } })
        // And for the cache, the coded ones are kept as they are, with their coding
        let cached = try HAR.importArchive(data, origin: "har", folder: nil, ignoringQueryItems: [], keepingContentCoding: true)
        #expect(cached.skipped.isEmpty && cached.rules.count == 5)
        let br = try #require(cached.rules.first { $0.urlPattern.hasSuffix("/br") })
        #expect(br.headers.contains { $0.name == "Content-Encoding" && $0.value == "br" })
        let stacked = try #require(cached.rules.first { $0.urlPattern.hasSuffix("/gzip-br") })
        #expect(stacked.headers.contains { $0.name == "Content-Encoding" && $0.value == "gzip, br" })
        #expect(br.body == Data(base64Encoded: "GwMA+CUAoloMfg=="))
    }

    @Test("A body mitmproxy wrote as Latin-1 text (a type naming no charset) is its bytes again, as many as its size; UTF-8 text stays UTF-8")
    func latin1Text() throws {
        // Given a PNG's first bytes and a UTF-8 text/plain body, as mitmproxy writes them: each byte one character
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF, 0xE9]
        let pngText = String(png.map { Character(Unicode.Scalar($0)) })
        let cafe = Array("café".utf8)
        let cafeText = String(cafe.map { Character(Unicode.Scalar($0)) })
        func json(_ text: String) throws -> String { String(decoding: try JSONEncoder().encode(text), as: UTF8.self) }
        let entries = [
            Self.entry("https://example.test/image.png", response: #"{"status": 200, "content": {"mimeType": "image/png", "size": \#(png.count), "text": \#(try json(pngText))}}"#),
            Self.entry("https://example.test/plain", response: #"{"status": 200, "content": {"mimeType": "text/plain", "size": \#(cafe.count), "text": \#(try json(cafeText))}}"#),
            // A browser's UTF-8 text, its size the UTF-8 length, is kept as UTF-8
            Self.entry("https://example.test/utf8", response: #"{"status": 200, "content": {"mimeType": "text/plain", "size": 5, "text": "café"}}"#),
        ]
        // When the archive is imported
        let result = try Self.importing(Self.archive(creator: "mitmproxy", entries))
        // Then each body is the bytes sent
        func body(_ url: String) throws -> [UInt8] { [UInt8](try #require(result.rules.first { $0.urlPattern == url }).body) }
        #expect(try body("https://example.test/image.png") == png)
        #expect(try body("https://example.test/plain") == cafe)
        #expect(try body("https://example.test/utf8") == Array("café".utf8))
    }

    @Test("A brotli body in base64 is taken as decoded from a browser's archive, as coded from Kiosk's export or when HAR's sizes say so")
    func brotliInBase64() throws {
        // Given a br body of 10 bytes in base64, decoded 3 bytes long
        let brotli = "GwMA+CUAoloMfg=="
        let response = { (sizes: String) in
            #"{"status": 200, "headers": [{"name": "Content-Encoding", "value": "br"}], \#(sizes) "#
                + #""content": {"mimeType": "application/json", "encoding": "base64", "text": "\#(brotli)"\#(sizes.isEmpty ? "" : #", "size": 3"#)}}"#
        }
        let entries = [Self.entry("https://example.test/plain", response: response("")),
                       Self.entry("https://example.test/sized", response: response(#""bodySize": 10,"#))]
        func coding(_ data: Data, _ url: String) throws -> String? {
            let cached = try HAR.importArchive(data, origin: "har", folder: nil, ignoringQueryItems: [], keepingContentCoding: true)
            return try #require(cached.rules.first { $0.urlPattern == url }).headers.first { $0.name == "Content-Encoding" }?.value
        }
        // When a browser's archive holds it without sizes, it is the content (Chrome and Firefox write bodies decoded)
        #expect(try coding(Self.archive(entries), "https://example.test/plain") == nil)
        // When Kiosk's export holds it, it is as sent
        #expect(try coding(Self.archive(creator: "Kiosk", entries), "https://example.test/plain") == "br")
        // When HAR's sizes differ and the body is as long as the bytes sent (10, not the 3 decoded), it is coded, whoever wrote it
        #expect(try coding(Self.archive(entries), "https://example.test/sized") == "br")
    }

    @Test("The summary counts every skipped entry under its reason and says so in one sentence")
    func summary() throws {
        // Given an archive with one entry for each way of giving no rule, and two that give one
        let data = Self.archive([
            Self.entry("https://example.test/a", response: Self.ok("first")),
            Self.entry("https://example.test/none", response: nil),
            Self.entry("https://example.test/null", response: "null"),
            Self.entry("https://example.test/failed", response: #"{"status": 0, "_error": "net::ERR_FAILED"}"#),
            Self.entry("https://example.test/playwright", response: #"{"status": -1}"#),
            Self.entry("data:text/css,body{}", response: Self.ok("body{}")),
            Self.entry("chrome-extension://abc/x.js", response: Self.ok("x")),
            Self.entry("wss://example.test/socket", response: #"{"status": 101}"#),
            Self.entry("https://example.test/socket", response: #"{"status": 101}"#),
            Self.entry("https://example.test/image", response: #"{"status": 200, "content": {"size": 5120, "mimeType": "image/png"}}"#),
            Self.entry("https://example.test/cut", response: #"{"status": 200, "_kioskTruncated": true, "content": {"size": 9, "text": "cut"}}"#),
            Self.entry("https://example.test/nulltext", response: #"{"status": 200, "content": {"size": 7, "mimeType": "text/plain", "text": null}}"#),
            Self.entry("https://example.test/gzip", response: #"{"status": 200, "headers": [{"name": "Content-Encoding", "value": "gzip"}], "#
                       + #""content": {"encoding": "base64", "text": "H4sIAAAAAAAAAw=="}}"#),
            Self.entry("https://example.test/a", response: Self.ok("second")),
            Self.entry("https://example.test/a", response: #"{"status": 304}"#),
            Self.entry("https://example.test/a", response: #"{"status": 503, "content": {"size": 0}}"#),
            Self.entry("https://example.test/b", response: Self.ok("b")),
            Self.entry("https://example.test/huge", response: #"{"status": 200, "headers": [{"name": "X-Pad", "value": "\#(String(repeating: "p", count: 81 << 10))"}], "#
                       + #""content": {"text": "x"}}"#),
            Self.entry("https://example.test/caf%FF", response: Self.ok("not text")),
            Self.entry("https://example.test/caf%E9", response: Self.ok("latin-1")),
            Self.entry("https://example.test/long?q=" + String(repeating: "q", count: 64 << 10), response: Self.ok("long")),
        ])
        // When it is imported
        let result = try Self.importing(data)
        // Then two rules come back, the last full answer for /a, and every other entry is counted once
        #expect(result.rules.map(\.urlPattern) == ["https://example.test/a", "https://example.test/b"])
        #expect(result.rules.first?.body == Data("second".utf8))
        #expect(result.entries == 21 && result.skippedCount == 19)
        #expect(result.skipped == [.noResponse: 2, .failed: 2, .unsupportedScheme: 3, .interim: 1, .bodyNotRecorded: 3,
                                   .compressedBody: 1, .answeredAgain: 1, .keptEarlierAnswer: 2, .headersTooLarge: 1, .unsendableURL: 3])
        #expect(result.skippedSchemes == ["chrome-extension", "data", "wss"])
        #expect(result.skippedDescription == "2 without a response, 2 failed (status 0 or below), 3 not http(s) (chrome-extension:, data:, wss:), "
                + "1 interim (1xx, such as a WebSocket upgrade), 3 whose body the archive did not keep whole, 1 whose body is still compressed, "
                + "1 answered again (the newest answer is replayed), 2 304 or temporary error after a full answer (the full answer is replayed), "
                + "1 whose header section is over 80 KB, more than an answer may have, "
                + "3 whose URL no app can send (a user's name before the host, path escapes that are not UTF-8, or over 64 KB)")
        // And one scheme alone is named as such
        let data2 = try Self.importing(Self.archive([Self.entry("data:,x", response: Self.ok("x"))]))
        #expect(data2.skippedDescription == "1 data: URL")
    }

    @Test("Requests differing only in secret query items or their order are one request: the last answer wins, and replaces an earlier import")
    func sameRequest() throws {
        // Given two Marvel pages recorded by a proxy, signed with different timestamps, keys in another order
        let first = "https://gateway.marvel.com/v1/public/characters?limit=20&offset=0&ts=1&apikey=k&hash=a"
        let second = "https://gateway.marvel.com/v1/public/characters?apikey=k&ts=2&hash=b&offset=0&limit=20"
        let result = try Self.importing(Self.archive([Self.entry(first, response: Self.ok("old")), Self.entry(second, response: Self.ok("new"))]))
        // When they are imported
        // Then one rule answers, with the later page
        #expect(result.rules.map(\.body) == [Data("new".utf8)] && result.skipped == [.answeredAgain: 1])
        // And importing it over a rule for the first URL replaces that rule instead of queueing behind it
        let rules = MockRules(fileURL: nil, redactor: .standard)
        try rules.add([MockRule(urlPattern: first, body: Data("older".utf8))])
        try rules.add(result.rules)
        let request = HTTPRequest(url: try #require(URL(string: "https://gateway.marvel.com/v1/public/characters?offset=0&limit=20&ts=9&apikey=real&hash=z")),
                                  endpoint: "marvel.characters")
        #expect(try rules.all().count == 1 && rules.match(request)?.body == Data("new".utf8))
    }

    @Test("A rule made from a recorded URL keeps none of its secret query items in the rules file, and still answers signed requests")
    func noKeyInRulesFile() throws {
        // Given a Marvel page recorded with its key and signature, and an NYT one with its key, percent-encoded
        let folder = try TemporaryDirectory.make("kiosk-har-keys")
        defer { try? FileManager.default.removeItem(at: folder) }
        let marvel = "https://gateway.marvel.com/v1/public/characters?limit=20&ts=1&apikey=pub-4f2a9c&hash=deadbeefcafe"
        let nyt = "https://api.nytimes.com/svc/mostpopular/v2/viewed/1.json?api%2Dkey=nyt-secret-77&q=caf%C3%A9"
        let result = try Self.importing(Self.archive([Self.entry(marvel, response: Self.ok("heroes")), Self.entry(nyt, response: Self.ok("news"))]))
        // When its rules are added to a rules file
        let file = folder.appendingPathComponent("mocks.json")
        let rules = MockRules(fileURL: file, redactor: .standard)
        try rules.add(result.rules)
        // Then the file holds neither key nor signature, the other query items as recorded
        let written = try String(contentsOf: file, encoding: .utf8)
        for secret in ["pub-4f2a9c", "deadbeefcafe", "nyt-secret-77"] { #expect(!written.contains(secret)) }
        #expect(try rules.all().map(\.urlPattern) == ["https://gateway.marvel.com/v1/public/characters?limit=20",
                                                       "https://api.nytimes.com/svc/mostpopular/v2/viewed/1.json?q=caf%C3%A9"])
        // And a request signed anew is still answered by each
        let signed = HTTPRequest(url: try #require(URL(string: "https://gateway.marvel.com/v1/public/characters?ts=9&limit=20&apikey=real&hash=z")),
                                 endpoint: "marvel.characters")
        #expect(rules.match(signed)?.body == Data("heroes".utf8))
        let keyed = HTTPRequest(url: try #require(URL(string: "https://api.nytimes.com/svc/mostpopular/v2/viewed/1.json?q=caf%C3%A9&api-key=mine")),
                                endpoint: "nyt.viewed")
        #expect(rules.match(keyed)?.body == Data("news".utf8))
    }

    @Test("A Playwright body file is read from the archive's folder, never through .., an absolute path, a link out, or standard input")
    func bodyFiles() throws {
        // Given an archive's folder holding a body file (in a subfolder), a secret beside the folder, and a link to it
        let root = try TemporaryDirectory.make("kiosk-har-files")
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("archive")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("bodies"), withIntermediateDirectories: true)
        try Data("attached".utf8).write(to: folder.appendingPathComponent("bodies/main.txt"))
        try Data("secret".utf8).write(to: root.appendingPathComponent("secret.txt"))
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("link.txt").path,
                                                   withDestinationPath: root.appendingPathComponent("secret.txt").path)
        // (and a pipe, which reading would wait on for ever)
        #expect(mkfifo(folder.appendingPathComponent("pipe").path, 0o600) == 0)
        func archive(_ file: String) -> Data {
            Self.archive([Self.entry("https://example.test/", response: Self.ok("fine")),
                          Self.entry("https://example.test/main",
                                     response: #"{"status": 200, "content": {"size": 8, "mimeType": "text/plain", "_file": "\#(file)"}}"#)])
        }
        // When an entry names a file in the folder
        // Then its bytes are the body
        #expect(try Self.importing(archive("bodies/main.txt"), folder: folder).rules.last?.body == Data("attached".utf8))
        // And a name leaving the folder refuses the whole archive, saying why, whatever it leads to
        for (name, reason) in [("../secret.txt", "an absolute path or .. is refused"), ("bodies/../../secret.txt", "an absolute path or .. is refused"),
                               (root.appendingPathComponent("secret.txt").path, "an absolute path or .. is refused"),
                               ("link.txt", "leads outside the archive's folder through a symbolic link"),
                               ("missing.txt", "Cannot read it"), ("pipe", "not a regular file (a pipe, a device)"),
                               ("bodies", "a folder, not a body's file")] {
            do {
                let result = try Self.importing(archive(name), folder: folder)
                Issue.record("\(name) imported \(result.rules.map(\.body))")
            } catch let error as HAR.ImportError {
                #expect(error.message.hasPrefix("log.entries[1].response.content._file (\(name))") && error.message.contains(reason),
                        "\(name): \(error.message)")
            }
        }
        // And an archive read from standard input has no folder, so it is refused too
        #expect(throws: HAR.ImportError.self) { try Self.importing(archive("bodies/main.txt"), folder: nil) }
    }

    @Test("The debugger imports a file by its path, body files beside it, and adds exactly the rules it reports")
    func debuggerImportsByPath() throws {
        // Given an archive on disk with a body file beside it, and a debugger without a log
        let folder = try TemporaryDirectory.make("kiosk-har-path")
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("from a file".utf8).write(to: folder.appendingPathComponent("body.txt"))
        let file = folder.appendingPathComponent("session.har")
        try Self.archive([Self.entry("https://example.test/a", response: #"{"status": 200, "content": {"size": 11, "_file": "body.txt"}}"#),
                          Self.entry("https://example.test/b", response: #"{"status": 0}"#)]).write(to: file)
        let debugger = Debugger(breakpoints: Breakpoints(fileURL: nil, redactor: .standard), mocks: MockRules(fileURL: nil, redactor: .standard),
                                rules: RewriteRules(fileURL: nil, redactor: .standard), log: nil, sources: [:], epoch: "test", send: { _ in throw KioskError.offline(host: "example.test") },
                                sendProxied: { _ in throw KioskError.offline(host: "example.test") })
        // When it imports the file
        let result = try debugger.importHAR(atPath: file.path)
        // Then the rule is added with its id and origin, and the summary matches what the rules hold
        let rules = try debugger.mocks.all()
        #expect(result.rules == rules && rules.count == 1)
        #expect(rules[0].body == Data("from a file".utf8) && rules[0].origin == "har: session.har" && rules[0].id > 0)
        #expect(result.skipped == [.failed: 1])
        // And a malformed file adds nothing
        try Data(#"{"log": {"entries": [{"request": {"method": "GET", "url": "https://x/"}, "response": {"status": 99}}]}}"#.utf8).write(to: file)
        #expect(throws: HAR.ImportError.self) { try debugger.importHAR(atPath: file.path) }
        #expect(try debugger.mocks.all() == rules)
    }

    @Test("Rules imported from an archive keep none of its secrets: no key in a field or body, no token field, a file its owner's only")
    func importedRulesKeepNoSecrets() throws {
        // Given an archive of an app's login answer: a token in a field, in a redirect's query and in its JSON body, the
        // configured key echoed in the body
        let folder = try TemporaryDirectory.make("kiosk-har-secrets")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("login.har")
        let response = #"{"status": 200, "headers": [{"name": "X-Auth-Token", "value": "hdr-7c1e9a"}, "#
            + #"{"name": "Content-Location", "value": "/next?access_token=loc-55aa33&step=2"}, {"name": "X-Trace", "value": "t-1"}], "#
            + #""content": {"mimeType": "application/json", "text": "{\"access_token\": \"body-31d0f2\", \"user\": \"ann\", \"echo\": \"CONFIGURED-KEY-9\"}"}}"#
        try Self.archive([Self.entry("https://app.test/login?token=url-88bb77", response: response)]).write(to: file)
        let redactor = Redactor(queryItems: Redactor.standard.queryItems, headers: Redactor.standard.headers, secretValues: ["CONFIGURED-KEY-9"])
        let mocksFile = folder.appendingPathComponent("data/kiosk-mocks.json")
        let debugger = Debugger(breakpoints: Breakpoints(fileURL: nil, redactor: redactor), mocks: MockRules(fileURL: mocksFile, redactor: redactor),
                                rules: RewriteRules(fileURL: nil, redactor: redactor), log: nil, sources: [:], epoch: "test",
                                send: { _ in throw KioskError.offline(host: "app.test") }, sendProxied: { _ in throw KioskError.offline(host: "app.test") })
        // When it is imported as mock rules
        _ = try debugger.importHAR(atPath: file.path)
        // Then the rules file holds none of the secrets, the rest of the answer as recorded
        let written = try String(contentsOf: mocksFile, encoding: .utf8)
        for secret in ["hdr-7c1e9a", "loc-55aa33", "body-31d0f2", "CONFIGURED-KEY-9", "url-88bb77"] {
            #expect(!written.contains(secret), "\(secret)")
        }
        let rule = try #require(try debugger.mocks.all().first)
        #expect(!rule.headers.contains { $0.name == "X-Auth-Token" })
        #expect(rule.headers.contains { $0.name == "X-Trace" && $0.value == "t-1" })
        #expect(String(decoding: rule.body, as: UTF8.self).contains(#""user": "ann""#), "\(String(decoding: rule.body, as: UTF8.self))")
        // And the file and its folder are their owner's only
        func mode(_ url: URL) throws -> Int { (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int ?? 0) & 0o777 }
        #expect(try mode(mocksFile) == 0o600)
        #expect(try mode(mocksFile.deletingLastPathComponent()) == 0o700)
    }

    @Test("RFC 3339's other spellings of a date are taken: a t or a space for the T, a z for the Z, a leap second; and a leap year's February 29th")
    func rfc3339Dates() throws {
        for (date, seconds) in [("2016-12-31T23:59:60Z", 1_483_228_799.0), ("2024-05-22T08:41:18.352z", 1_716_367_278.352),
                                ("2024-05-22 08:41:18Z", 1_716_367_278.0), ("2024-05-22t08:41:18+02:00", 1_716_360_078.0),
                                ("2024-02-29T12:00:00Z", 1_709_208_000.0)] {
            let archive = #"{"log": {"entries": [{"startedDateTime": "\#(date)", "request": {"method": "GET", "url": "https://x/"}, "#
                + #""response": {"status": 200, "content": {"text": "a"}}}]}}"#
            #expect(throws: Never.self, "\(date)") { try Self.importing(Data(archive.utf8)) }
            // (and read as the moment it names, which orders answers and dates the cache's)
            let read = try #require(HAR.date(date), "\(date)")
            #expect(abs(read.timeIntervalSince1970 - seconds) < 0.001, "\(date): \(read.timeIntervalSince1970)")
        }
    }

    @Test("Malformed entries refuse the archive with the JSON path of the problem")
    func malformedEntries() {
        let cases: [(String, String)] = [
            (#"{"log": {"version": 1.2, "entries": []}}"#, "log.version is not a string"),
            (#"{"log": {"pages": {}, "entries": []}}"#, "log.pages is not an array"),
            (#"{"log": {"pages": [{"startedDateTime": "2015-02-10T07:33:17.146"}], "entries": []}}"#, "log.pages[0].startedDateTime is not an ISO 8601"),
            (#"{"log": {"pages": [{"startedDateTime": "2024-02-30T07:33:17Z"}], "entries": []}}"#,
             "log.pages[0].startedDateTime names a day its month does not have (2024-02-30)"),
            (#"{"log": {"entries": [{"startedDateTime": "2023-02-29T00:00:00Z", "request": {"method": "GET", "url": "https://x/"}}]}}"#,
             "log.entries[0].startedDateTime names a day its month does not have (2023-02-29)"),
            (#"{"log": {"entries": [3]}}"#, "log.entries[0] is not an object"),
            (#"{"log": {"entries": [{"startedDateTime": "yesterday", "request": {"method": "GET", "url": "https://x/"}}]}}"#,
             "log.entries[0].startedDateTime is not an ISO 8601"),
            (#"{"log": {"entries": [{"request": {"method": "GET", "url": "https://x/"}, "response": "200"}]}}"#, "log.entries[0].response is not an object"),
            (#"{"log": {"entries": [{"request": {"method": "GET", "url": "https:///nohost"}, "response": {"status": 200}}]}}"#,
             "log.entries[0].request.url is not a valid http(s) URL"),
            (#"{"log": {"entries": [{"request": {"method": "GET", "url": "http://a.test:99999/p"}, "response": {"status": 200}}]}}"#,
             "log.entries[0].request.url is not a valid http(s) URL"),
            (#"{"log": {"entries": [{"request": {"method": "GET", "url": "https://x/"}, "response": {"status": 600}}]}}"#,
             "log.entries[0].response.status (600) is not an HTTP status"),
            (#"{"log": {"entries": [{"request": {"method": "GET", "url": "https://x/"}, "response": {"status": 200, "headers": {}}}]}}"#,
             "log.entries[0].response.headers is not an array"),
            (#"{"log": {"entries": [{"request": {"method": "GET", "url": "https://x/"}, "response": {"status": 200, "content": []}}]}}"#,
             "log.entries[0].response.content is not an object"),
            (#"{"log": {"entries": [{"request": {"method": "GET", "url": "https://x/"}, "response": {"status": 200, "content": {"text": 7}}}]}}"#,
             "log.entries[0].response.content.text is not a string"),
            (#"{"log": {"entries": [{"request": {"method": "GET", "url": "https://x/"}, "response": {"status": 200, "content": {"_file": 7}}}]}}"#,
             "log.entries[0].response.content._file is not a string"),
        ]
        for (text, reason) in cases {
            // Given an archive with one malformed spot
            // When it is imported
            // Then it is refused, the message starting with the spot's path
            do {
                let result = try Self.importing(Data(text.utf8))
                Issue.record("imported \(result.rules.count) rules from \(text)")
            } catch let error as HAR.ImportError {
                #expect(error.message.hasPrefix(reason), "\(text): \(error.message)")
            } catch {
                Issue.record("\(text): \(error)")
            }
        }
    }

    @Test("An archive whose fields around its entries, or one entry, hold more values than any real one is refused where the count ran out; many small entries are not")
    func tooManyValues() throws {
        // Given archives of 1.8 MB holding 600,000 empty objects in a custom field of the log, and in one entry
        let junk = Array(repeating: "{}", count: 600_000).joined(separator: ",")
        let entry = #"{"request": {"method": "GET", "url": "https://x/a"}, "response": \#(Self.ok("a"))"#
        let archives = [(#"{"log": {"version": "1.2", "entries": [], "_x": [\#(junk)]}}"#, "log._x["),
                        (#"{"log": {"entries": [\#(entry)}, \#(entry), "_x": [\#(junk)]}]}}"#, "log.entries[1]._x[")]
        for (text, path) in archives {
            // When each is imported, then it is refused, naming where the count ran out and why
            do {
                let result = try Self.importing(Data(text.utf8))
                Issue.record("imported \(result.rules.count) rules")
            } catch let error as HAR.ImportError {
                #expect(error.message.hasPrefix(path) && error.message.contains("more than 500,000 JSON values"), "\(error.message)")
            }
        }
        // And an archive of 30,000 small entries (600,000 values in all) is read, each entry counted alone
        let many = #"{"log": {"entries": ["# + (0..<30_000).map { #"{"request": {"method": "GET", "url": "https://x/\#($0)"}, "response": \#(Self.ok("b"))}"# }
            .joined(separator: ",") + "]}}"
        #expect(try Self.importing(Data(many.utf8)).rules.count == 30_000)
    }

    @Test("A text body that looks like hex stays text unless Polly.JS wrote it")
    func hexOnlyFromPolly() throws {
        // Given the same hex text, once from an ordinary tool and once from Polly.JS
        let response = #"{"status": 200, "content": {"size": 2, "mimeType": "text/plain", "text": "4142"}}"#
        let plain = try Self.importing(Self.archive([Self.entry("https://example.test/", response: response)]))
        let polly = try Self.importing(Data(String(decoding: Self.archive([Self.entry("https://example.test/", response: response)]), as: UTF8.self)
            .replacingOccurrences(of: #""name": "test""#, with: #""name": "Polly.JS""#).utf8))
        // Then only Polly's is read as bytes
        #expect(plain.rules.first?.body == Data("4142".utf8))
        #expect(polly.rules.first?.body == Data("AB".utf8))
    }
}
