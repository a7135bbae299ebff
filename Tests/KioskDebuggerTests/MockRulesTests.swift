import Foundation
import KioskCore
import KioskDebugger
import Testing

/// The mock rules' own operations, on a real rules file.
@Suite("Mock rules")
struct MockRulesTests {
    @Test("A rule's answer is replaced whole — status, headers, body — keeping its match, state, hits and origin; the file holds it for the next reader")
    func updateAnswer() throws {
        // Given a rules file with a rule that answered twice, switched off
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-mocks-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("mocks.json")
        let rules = MockRules(fileURL: file, redactor: .standard)
        let added = try rules.add([MockRule(urlPattern: "http://app.test/items", status: 200, headers: [.init(name: "A", value: "1")],
                                            body: Data("old".utf8), origin: "from request #4")])[0]
        for _ in 0..<2 { _ = rules.match(HTTPRequest(url: URL(string: "http://app.test/items")!, endpoint: "app.test")) }
        try rules.setEnabled(false, id: added.id)

        // When its answer is replaced
        let updated = try rules.update(id: added.id, status: 503, headers: [.init(name: "Retry-After", value: "5")], body: Data("new".utf8))

        // Then the rule answers with it, and is otherwise the same rule — as another reader of the file sees it
        let read = try MockRules(fileURL: file, redactor: .standard).rule(id: added.id)
        for rule in [updated, read] {
            #expect(rule.status == 503 && rule.headers == [.init(name: "Retry-After", value: "5")] && rule.body == Data("new".utf8))
            #expect(rule.urlPattern == added.urlPattern && rule.method == "GET" && !rule.isEnabled && rule.origin == "from request #4")
        }
        #expect(read.hits == 2)
    }

    @Test("A rule made from a logged answer kept gzipped answers with its content, uncoded; a coding Kiosk cannot undo stays labelled")
    func recordedAnswerDecoded() throws {
        // Given a logged proxied answer whose body was kept as sent, gzipped, and one coded as zstd
        let content = Data(#"{"name": "Rick"}"#.utf8)
        let gzipped = try #require(Data(base64Encoded: "H4sIAAAAAAACA6tWykvMTVWyUlAKykzOVqoFAB+KiCoQAAAA"))
        func record(_ coding: String, _ body: Data) -> RequestRecord {
            RequestRecord(id: 9, startedAt: Date(), source: nil, endpoint: "api.example.test", method: "GET", url: "https://api.example.test/gz",
                          status: 200, responseHeaders: [.init(name: "Content-Type", value: "application/json"), .init(name: "Content-Encoding", value: coding),
                                                         .init(name: "Content-Length", value: String(body.count))],
                          responseBody: CapturedBody(data: body, originalSize: body.count), timings: RequestTimings(total: 0.1), decision: .network)
        }
        // When a rule is made of each
        let decoded = MockRule(recorded: record("gzip", gzipped), status: 200, body: gzipped)
        let kept = MockRule(recorded: record("zstd", Data([0x28, 0xB5, 0x2F, 0xFD])), status: 200, body: Data([0x28, 0xB5, 0x2F, 0xFD]))
        // Then the gzip one answers with the content itself, no Content-Encoding or stale length; the zstd one keeps its label
        #expect(decoded.body == content && decoded.origin == "from request #9")
        #expect(!decoded.headers.contains { ["content-encoding", "content-length"].contains($0.name.lowercased()) })
        #expect(kept.headers.contains { $0.name == "Content-Encoding" && $0.value == "zstd" })
    }

    @Test("Among hundreds of rules the first enabled one in the file's order answers, whether exact, a wildcard after its host or one anywhere, for its method; another process's change is matched at once")
    func firstRuleInOrder() throws {
        // Given a rules file of hundreds of rules for other hosts, then rules of every kind for one URL, in an order mixing them
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-mocks-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("mocks.json")
        let rules = MockRules(fileURL: file, redactor: .standard)
        let others = (0..<300).map { MockRule(urlPattern: "https://other-\($0).test/items/7", body: Data("other".utf8)) }
        let added = try rules.add(others + [
            MockRule(method: "POST", urlPattern: "https://api.test/items/*", body: Data("post".utf8)),
            MockRule(urlPattern: "*/items/7*", body: Data("anywhere".utf8)),
            MockRule(urlPattern: "https://*.test/items/*", body: Data("host wildcard".utf8)),
            MockRule(urlPattern: "https://api.test/items/*", body: Data("after the host".utf8)),
            MockRule(urlPattern: "https://api.test/items/7?b=2&a=1", body: Data("exact".utf8)),
        ]).suffix(5).map(\.id)
        func answer(_ url: String, method: String = "GET") -> String? {
            rules.match(HTTPRequest(method: method, url: URL(string: url)!, endpoint: "api.test")).map { String(decoding: $0.body, as: UTF8.self) }
        }
        let url = "https://api.test/items/7?a=1&b=2&apikey=real"

        // When one request is matched as rules ahead of the others are switched off, one from another process
        var answers = [answer(url)]
        try rules.setEnabled(false, id: added[1])
        answers.append(answer(url))
        try rules.setEnabled(false, id: added[2])
        answers.append(answer(url))
        try MockRules(fileURL: file, redactor: .standard).setEnabled(false, id: added[3])
        answers.append(answer(url))

        // Then each time the first enabled rule in order answers, the exact URL matched whatever its query's order and keys
        #expect(answers == ["anywhere", "host wildcard", "after the host", "exact"])
        // And a rule for another method answers that method alone, and a URL no rule names gets none
        #expect(answer(url, method: "POST") == "post" && answer("https://api.test/items/8") == nil && answer("https://none.test/") == nil)
        #expect(answer("https://other-299.test/items/7") == "other")
        // And every answer counted its rule's hit, as the file says
        rules.saveHits(force: true)
        let hits = try MockRules(fileURL: file, redactor: .standard).all().suffix(5).map(\.hits)
        #expect(hits == [1, 1, 1, 1, 1])
    }

    @Test("A status outside 100-599, a header that is no field, or an unknown id changes nothing and says why",
          arguments: [(99, "X-Fine", 1), (600, "X-Fine", 1), (200, "Bad Name", 1), (200, "X-Fine", 99)])
    func updateRefused(status: Int, header: String, idOffset: Int) throws {
        // Given a rule kept in memory
        let rules = MockRules(fileURL: nil, redactor: .standard)
        let added = try rules.add([MockRule(urlPattern: "http://app.test/items", body: Data("old".utf8))])[0]
        // When an answer that cannot be kept is given
        #expect(throws: KioskError.self) {
            try rules.update(id: added.id + idOffset - 1, status: status, headers: [.init(name: header, value: "1")], body: Data("new".utf8))
        }
        // Then the rule is as it was
        #expect(try rules.rule(id: added.id).body == Data("old".utf8))
    }

    @Test("A framing field typed into a rule is refused with the reason, not dropped from its answers unsaid; a HEAD's length is kept",
          arguments: [("GET", "Content-Length", "5", "body's length (3 bytes)"), ("GET", "transfer-encoding", "chunked", "belongs to the connection"),
                      ("POST", "Connection", "close", "belongs to the connection"), ("HEAD", "Content-Length", "5", nil)])
    func framingFieldRefused(method: String, name: String, value: String, refusal: String?) throws {
        // Given the rules kept in memory
        let rules = MockRules(fileURL: nil, redactor: .standard)
        let rule = MockRule(method: method, urlPattern: "http://app.test/items", headers: [.init(name: name, value: value)], body: Data("abc".utf8))
        // When a rule with that field is added
        do {
            let added = try rules.add([rule])
            // Then only a HEAD's length is kept, as given
            #expect(refusal == nil && added[0].headers == [.init(name: name, value: value)])
        } catch let KioskError.invalidRequest(message) {
            // Then the others are refused, saying why, and nothing is kept
            #expect(refusal.map { message.contains($0) } == true, "\(message)")
            #expect(try rules.all().isEmpty)
        }
    }
}
