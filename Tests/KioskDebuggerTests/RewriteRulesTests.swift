import Foundation
import KioskCore
@testable import KioskDebugger
import KioskTestSupport
import Testing

/// The rewrite rules and their transport, over a scripted upstream: what matches, what each action does,
/// in which order, what is recorded, and what is kept on disk.
@Suite("Rewrite rules")
struct RewriteRulesTests {
    static let characters = "https://rickandmortyapi.com/api/character?page=2"
    static let body = #"{"info":{"count":826,"pages":42},"results":[{"name":"Rick","id":1}]}"#
    static let date = Date(timeIntervalSince1970: 1_800_000_000)

    private func request(_ url: String = characters, endpoint: String = "rickandmorty.characters", method: String = "GET",
                         headers: HTTPHeaderFields = [:]) -> HTTPRequest {
        HTTPRequest(method: method, url: URL(string: url)!, headers: headers, endpoint: endpoint)
    }

    private func rules(_ url: URL? = nil) -> RewriteRules {
        RewriteRules(fileURL: url, redactor: .standard, endpoints: ["rickandmorty.characters", "marvel.characters", "image"],
                     now: { Self.date })
    }

    private func rule(endpoint: String? = "rickandmorty.characters", url: String? = nil, method: String = "*",
                      _ actions: RewriteRule.Actions, name: String = "") -> RewriteRule {
        RewriteRule(name: name, match: RewriteRule.Match(endpoint: endpoint, urlPattern: url, method: method), actions: actions)
    }

    /// Sends `request` through `transport`, returning the answer (or error) and the touches noted on the way.
    private func send(_ request: HTTPRequest, through transport: RewritingTransport)
        async -> (result: Result<HTTPResponse, any Error>, touches: [ExchangeTouch]) {
        let touches = ExchangeTouches()
        var recorded = request
        recorded.recorder = touches
        let result: Result<HTTPResponse, any Error>
        do {
            result = .success(try await transport.send(recorded))
        } catch {
            result = .failure(error)
        }
        return (result, touches.all)
    }

    /// The message of the `invalidRequest` `body` throws; nil when it throws nothing, the error for anything else.
    private func refusal(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch KioskError.invalidRequest(let message) {
            return message
        } catch {
            return "not invalidRequest: \(error)"
        }
    }

    @Test("A request no rule matches goes down and comes back untouched, with nothing noted")
    func noMatch() async throws {
        // Given a rule for another endpoint and a disabled rule for this one
        let rules = rules()
        try rules.add(rule(endpoint: "marvel.characters", RewriteRule.Actions(status: 500)))
        var off = rule(RewriteRule.Actions(status: 500))
        off.isEnabled = false
        try rules.add(off)
        let upstream = ScriptedTransport(always: .json(Self.body))
        let transport = RewritingTransport(base: upstream, rules: rules)
        // When a characters page is fetched
        let (result, touches) = await send(request(), through: transport)
        // Then the upstream's answer arrives as it was, and no rule left a mark or counted a hit
        let response = try result.get()
        #expect(response.status == 200 && String(decoding: response.body, as: UTF8.self) == Self.body && !response.isEdited)
        #expect(touches.isEmpty)
        #expect(try rules.all().allSatisfy { $0.hits == 0 })
    }

    @Test("An answer a cache below gave or stored, and a rule changed, is said as the cache's, edited, not as a miss the upstream answered",
          arguments: [(CacheStatus(.fresh, ttl: 59), "Kiosk;hit;ttl=59;detail=edited"),
                      (CacheStatus(.fallback, forward: .stale, ttl: -30), "Kiosk;fwd=stale;ttl=-30;detail=edited"),
                      (CacheStatus(.network, forward: .uriMiss, forwardStatus: 200, stored: true),
                       "Kiosk;fwd=uri-miss;fwd-status=200;stored;detail=edited"),
                      (CacheStatus(.network, forward: .request, forwardStatus: 200, ttl: 300, stored: true),
                       "Kiosk;fwd=request;fwd-status=200;ttl=300;stored;detail=edited")])
    func editedFromTheCache(came: CacheStatus, said: String) async throws {
        // Given a rule that sets a header and patches the body, over an answer the cache gave
        let rules = rules()
        try rules.add(rule(RewriteRule.Actions(setHeaders: [.init(name: "X-Rule", value: "yes")],
                                               patch: #"[{"op": "replace", "path": "/results/0/name", "value": "Rule Rick"}]"#)))
        let upstream = ScriptedTransport(always: .reply { request in
            var answer = HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(Self.body.utf8), url: request.url)
            answer.cacheStatus = came
            return answer
        })
        // When it is fetched through the rule
        let response = try await send(request(), through: RewritingTransport(base: upstream, rules: rules)).result.get()
        // Then the answer is edited, and its Cache-Status says where it came from
        #expect(response.isEdited && response.cacheStatus?.headerValue == said, "\(response.cacheStatus?.headerValue ?? "-")")
        #expect(response.headers["Cache-Status"] == said)
    }

    @Test("Status, removed and set headers and a JSON Patch apply in that order; the answer is marked edited and the touch says what was done")
    func actionsApply() async throws {
        // Given a rule with every answer-changing action
        let rules = rules()
        let added = try rules.add(rule(RewriteRule.Actions(
            status: 503, setHeaders: [.init(name: "X-Kiosk-Test", value: "a"), .init(name: "Cache-Control", value: "no-store")],
            removeHeaders: ["ETag"], patch: #"[{"op": "replace", "path": "/results/0/name", "value": "Rule Rick"}]"#), name: "Everything"))
        let upstream = ScriptedTransport(always: .respond(200, headers: ["Content-Type": "application/json", "ETag": "\"v1\"",
                                                                           "Cache-Control": "max-age=60", "Content-Length": "70"],
                                                          body: Self.body))
        // When a page is fetched through it
        let (result, touches) = await send(request(), through: RewritingTransport(base: upstream, rules: rules))
        // Then the answer has the rule's status, headers and patched body, keys in the upstream's order
        let response = try result.get()
        #expect(response.status == 503)
        #expect(response.headers["ETag"] == nil && response.headers["X-Kiosk-Test"] == "a" && response.headers["Cache-Control"] == "no-store")
        #expect(String(decoding: response.body, as: UTF8.self)
                == #"{"info":{"count":826,"pages":42},"results":[{"name":"Rule Rick","id":1}]}"#)
        #expect(response.headers["Content-Length"] == String(response.body.count))
        // And it is marked edited (shown, never stored), its fwd-status still the upstream's (RFC 9211: the next hop's),
        // the touch says what was done, and the hit is counted
        #expect(response.isEdited)
        #expect(response.cacheStatus?.headerValue == "Kiosk;fwd=miss;fwd-status=200;detail=edited", "\(response.cacheStatus?.headerValue ?? "-")")
        #expect(touches == [ExchangeTouch(kind: .rule, id: added.id, name: "Everything", applied: true,
                                          phrase: .ruleRewrote([.status(from: 200, to: 503), .removed("ETag"), .set(["X-Kiosk-Test", "Cache-Control"]),
                                                                .patched(operations: 1, decodedFrom: nil)], validatorsDropped: false))])
        #expect(touches.map(\.detail) == ["status 200 → 503; removed ETag; set X-Kiosk-Test, Cache-Control; patched the body (1 operation)"])
        #expect(try rules.rule(id: added.id).hits == 1)
    }

    @Test("A JSON Patch applies to a compressed answer (gzip, deflate) as its content, which goes on uncompressed", arguments: ["gzip", "deflate"])
    func patchCodedAnswer(coding: String) async throws {
        // Given a rule patching a name, and an upstream answering its JSON compressed, as a browser gets it
        let rules = rules()
        _ = try rules.add(rule(RewriteRule.Actions(patch: #"[{"op": "replace", "path": "/results/0/name", "value": "Rule Rick"}]"#)))
        let coded = try #require(ContentCoding.encoded(Data(Self.body.utf8), coding: coding))
        let upstream = ScriptedTransport(always: .reply { request in
            HTTPResponse(status: 200, headers: ["Content-Type": "application/json", "Content-Encoding": coding,
                                                "Content-Length": String(coded.count)], body: coded, url: request.url)
        })
        // When a page is fetched through it
        let (result, touches) = await send(request(headers: ["Accept-Encoding": "gzip, deflate, br"]),
                                           through: RewritingTransport(base: upstream, rules: rules))
        // Then the app gets the patched JSON, uncompressed, its length its own
        let response = try result.get()
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"info":{"count":826,"pages":42},"results":[{"name":"Rule Rick","id":1}]}"#)
        #expect(response.headers["Content-Encoding"] == nil && response.headers["Content-Length"] == String(response.body.count))
        #expect(touches.first?.applied == true && touches.first?.detail.hasSuffix("decoded from \(coding)") == true, "\(touches)")
    }

    @Test("A body labelled gzip that does not decode is not patched as if it were its content: the rule says why")
    func patchUndecodableCoding() async throws {
        let rules = rules()
        _ = try rules.add(rule(RewriteRule.Actions(patch: #"[{"op": "add", "path": "/patched", "value": true}]"#)))
        let upstream = ScriptedTransport(always: .respond(200, headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"],
                                                          body: #"{"not":"gzip"}"#))
        let (result, touches) = await send(request(), through: RewritingTransport(base: upstream, rules: rules))
        let response = try result.get()
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"not":"gzip"}"# && !response.isEdited)
        #expect(touches.first?.applied == false && touches.first?.detail.contains("could not decode") == true, "\(touches)")
    }

    @Test("A compressed answer whose content is larger than the transport holds whole is not patched: a small gzip body never becomes a huge one")
    func patchPastTheDecodeLimit() async throws {
        // Given a patch rule, and an upstream whose 59-byte gzip answer decodes to 2,010 bytes of JSON
        let rules = rules()
        _ = try rules.add(rule(RewriteRule.Actions(patch: #"[{"op": "add", "path": "/patched", "value": true}]"#)))
        let gzipped = try #require(Data(base64Encoded: "H4sIAAAAAAACA6tWSlSyUlCqGAWjYBSMglEwCkbBkAdKtQAKirI+2QcAAA=="))
        let upstream = ScriptedTransport(always: .reply { request in
            HTTPResponse(status: 200, headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"], body: gzipped, url: request.url)
        })
        // When it passes a transport that holds at most 1,000 bytes whole, and one that holds more
        let (small, touches) = await send(request(), through: RewritingTransport(base: upstream, rules: rules, decodingAtMost: 1_000))
        let (large, _) = await send(request(), through: RewritingTransport(base: upstream, rules: rules, decodingAtMost: 4_000))
        // Then the first goes on as it came, the rule saying why; the second is patched as its content
        let kept = try small.get()
        #expect(kept.body == gzipped && !kept.isEdited)
        #expect(touches.first?.applied == false && touches.first?.detail.contains("larger decoded") == true, "\(touches)")
        #expect(String(decoding: try large.get().body, as: UTF8.self).hasSuffix(#","patched":true}"#))
    }

    @Test("Several matching rules apply in list order, each to the answer the one before left")
    func order() async throws {
        // Given two rules patching the same member, and a third matching by URL wildcard and method
        let rules = rules()
        let first = try rules.add(rule(RewriteRule.Actions(patch: #"[{"op": "replace", "path": "/results/0/name", "value": "First"}]"#)))
        let second = try rules.add(rule(RewriteRule.Actions(
            patch: #"[{"op": "test", "path": "/results/0/name", "value": "First"}, {"op": "add", "path": "/results/0/tag", "value": 2}]"#)))
        let third = try rules.add(rule(endpoint: nil, url: "https://rickandmortyapi.com/api/character*", method: "GET",
                                       RewriteRule.Actions(setHeaders: [.init(name: "X-Order", value: "3")])))
        let upstream = ScriptedTransport(always: .json(Self.body))
        // When a page is fetched
        let (result, touches) = await send(request(), through: RewritingTransport(base: upstream, rules: rules))
        // Then the second rule saw the first one's result, and all three applied in order
        let response = try result.get()
        #expect(String(decoding: response.body, as: UTF8.self).contains(#"{"name":"First","id":1,"tag":2}"#))
        #expect(response.headers["X-Order"] == "3")
        #expect(touches.map(\.id) == [first.id, second.id, third.id] && touches.allSatisfy(\.applied))
    }

    @Test("A patch that cannot apply leaves the answer as it was, counts no hit, and the touch says why")
    func patchFails() async throws {
        // Given a rule whose patch tests a value the answer does not have, with a status change too
        let rules = rules()
        let added = try rules.add(rule(RewriteRule.Actions(
            status: 500, patch: #"[{"op": "test", "path": "/info/count", "value": 1}, {"op": "remove", "path": "/info"}]"#)))
        let upstream = ScriptedTransport(always: .json(Self.body))
        // When a page is fetched
        let (result, touches) = await send(request(), through: RewritingTransport(base: upstream, rules: rules))
        // Then nothing of the rule applied: not the status either
        let response = try result.get()
        #expect(response.status == 200 && String(decoding: response.body, as: UTF8.self) == Self.body && !response.isEdited)
        // And the record will say it did not apply, and why
        #expect(touches.count == 1 && touches[0].id == added.id && !touches[0].applied)
        #expect(touches[0].detail == "its JSON Patch did not apply: operation 1 (test /info/count): the value at /info/count is 826, not 1")
        #expect(try rules.rule(id: added.id).hits == 0)
        // And a body that is not JSON is a skip too, saying so
        let text = ScriptedTransport(always: .respond(200, body: "<html>"))
        let (_, htmlTouches) = await send(request(), through: RewritingTransport(base: text, rules: rules))
        #expect(htmlTouches.first?.detail.hasPrefix("the body is not JSON") == true)
    }

    @Test("Latency is waited on the injected clock: the answer arrives only when the clock has moved by it")
    func latency() async throws {
        // Given a rule adding 800 ms and a clock that moves only when told
        let rules = rules()
        try rules.add(rule(RewriteRule.Actions(latencyMilliseconds: 800)))
        let clock = ManualClock()
        let transport = RewritingTransport(base: ScriptedTransport(always: .json(Self.body)), rules: rules, clock: clock)
        // When a page is fetched
        let task = Task { await self.send(self.request(), through: transport) }
        await clock.waitForSleepers()
        // Then it waits: 799 ms are not enough
        await clock.advance(by: .milliseconds(799))
        #expect(clock.sleeperCount == 1)
        // And at 800 ms the answer arrives, unchanged and not marked edited
        await clock.advance(by: .milliseconds(1))
        let (result, touches) = await task.value
        let response = try result.get()
        #expect(response.status == 200 && !response.isEdited)
        #expect(touches.first?.detail == "+800 ms")
    }

    @Test("A failing rule fails the request with the chosen error after its latency, a timeout after the request timeout, without sending anything")
    func failure() async throws {
        // Given rules failing images with a reset after 2 s, and characters by a timeout
        let rules = rules()
        let reset = try rules.add(rule(endpoint: "image", RewriteRule.Actions(latencyMilliseconds: 2000, failure: .reset)))
        let timeout = try rules.add(rule(RewriteRule.Actions(failure: .timeout)))
        let upstream = ScriptedTransport([])
        let clock = ManualClock()
        let transport = RewritingTransport(base: upstream, rules: rules, clock: clock, timeout: .seconds(15))
        // When a character page is fetched, then it times out as the transport would say, once the clock moved by the
        // request timeout, as a real timeout takes
        let waiting = Task { await self.send(self.request(), through: transport) }
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(14))
        #expect(clock.sleeperCount == 1, "failed before the request timeout")
        await clock.advance(by: .seconds(1))
        let (timedOut, timeoutTouches) = await waiting.value
        #expect(throws: KioskError.timeout(url: Self.characters, seconds: 15)) { try timedOut.get() }
        #expect(timeoutTouches.map(\.detail) == ["failed the request (time out) without sending it after 15000 ms"])
        #expect(timeoutTouches.map(\.id) == [timeout.id])
        // When an image is fetched, then it fails only once the clock moved by 2 s, as a reset connection
        let task = Task { await self.send(self.request("https://example.test/a.png", endpoint: "image"), through: transport) }
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(2))
        let (result, touches) = await task.value
        #expect(throws: KioskError.transport(url: "https://example.test/a.png",
                                             message: "the connection closed before the response was complete")) { try result.get() }
        #expect(touches == [ExchangeTouch(kind: .rule, id: reset.id, name: "image → +2000 ms · fail: connection reset",
                                          phrase: .ruleFailed(.reset, afterMilliseconds: 2000))])
        #expect(touches.map(\.detail) == ["failed the request (connection reset) without sending it after 2000 ms"])
        // And nothing reached the upstream
        #expect(upstream.callCount == 0)
    }

    @Test("A rule that patches the body drops the request's validators, so a 304 cannot leave nothing to patch")
    func validatorsDropped() async throws {
        // Given a patch rule and a request carrying validators
        let rules = rules()
        try rules.add(rule(RewriteRule.Actions(patch: #"[{"op": "remove", "path": "/info"}]"#)))
        let upstream = ScriptedTransport(always: .json(Self.body))
        let conditional = request(headers: ["If-None-Match": "\"v1\"", "If-Modified-Since": "Tue, 01 Jun 2027 00:00:00 GMT",
                                            "Accept": "application/json"])
        // When it is sent
        let (result, _) = await send(conditional, through: RewritingTransport(base: upstream, rules: rules))
        // Then the upstream got no validators (so it answered in full) and the body was patched
        #expect(upstream.requests.first?.headers["If-None-Match"] == nil && upstream.requests.first?.headers["If-Modified-Since"] == nil)
        #expect(upstream.requests.first?.headers["Accept"] == "application/json")
        #expect(String(decoding: try result.get().body, as: UTF8.self) == #"{"results":[{"name":"Rick","id":1}]}"#)
    }

    @Test("A rule that changes only headers does not mark the answer edited, so the store keeps it as usual")
    func headersOnlyIsNotEdited() async throws {
        let rules = rules()
        try rules.add(rule(RewriteRule.Actions(setHeaders: [.init(name: "Cache-Control", value: "max-age=3600")])))
        let (result, touches) = await send(request(), through: RewritingTransport(base: ScriptedTransport(always: .json(Self.body)),
                                                                                   rules: rules))
        #expect(try result.get().headers["Cache-Control"] == "max-age=3600" && !(try result.get().isEdited))
        #expect(touches.first?.applied == true)
    }

    @Test("Rules match by endpoint, method and URL: exact whatever the secrets and query order, or by wildcard")
    func matching() throws {
        // Given rules by endpoint and method, by exact URL with redacted secrets, and by wildcard
        let rules = rules()
        let byEndpoint = try rules.add(rule(method: "HEAD", RewriteRule.Actions(status: 204)))
        let exact = try rules.add(rule(endpoint: nil,
                                       url: "https://gateway.marvel.com/v1/public/characters?limit=20&offset=0&apikey=<redacted>&ts=<redacted>&hash=<redacted>",
                                       RewriteRule.Actions(status: 500)))
        let wildcard = try rules.add(rule(endpoint: "marvel.characters", url: "https://gateway.marvel.com/*offset=20*",
                                          RewriteRule.Actions(status: 502)))
        func ids(_ request: HTTPRequest) -> [Int] { rules.matching(request).map(\.rule.id) }
        // Then each matches what it says and nothing else
        #expect(ids(request(method: "HEAD")) == [byEndpoint.id])
        #expect(ids(request(method: "GET")).isEmpty)
        #expect(ids(request("https://gateway.marvel.com/v1/public/characters?ts=17&offset=0&apikey=real&limit=20&hash=abc",
                            endpoint: "marvel.characters")) == [exact.id])
        #expect(ids(request("https://gateway.marvel.com/v1/public/characters?limit=20&offset=20&apikey=k",
                            endpoint: "marvel.characters")) == [wildcard.id])
        #expect(ids(request("https://gateway.marvel.com/v1/public/characters?limit=20&offset=20&apikey=k", endpoint: "other")).isEmpty)
    }

    @Test("A rule that cannot be kept is refused with the reason, and nothing is added")
    func validation() throws {
        let rules = rules()
        let cases: [(RewriteRule, String)] = [
            (rule(endpoint: nil, RewriteRule.Actions(status: 500)), "Say which requests the rule is for"),
            (rule(endpoint: "nyt.nothing", RewriteRule.Actions(status: 500)), "There is no endpoint named “nyt.nothing”"),
            (rule(endpoint: nil, url: "ftp://x", RewriteRule.Actions(status: 500)), "must be an http(s) URL"),
            (rule(method: "GE T", RewriteRule.Actions(status: 500)), "not an HTTP method"),
            (rule(RewriteRule.Actions()), "The rule does nothing"),
            (rule(RewriteRule.Actions(status: 99)), "from 200 to 599"),
            (rule(RewriteRule.Actions(status: 103)), "from 200 to 599 (a 1xx is no answer)"),
            (rule(RewriteRule.Actions(setHeaders: [.init(name: "Content-Length", value: "99")])), "Content-Length is the transport's"),
            (rule(RewriteRule.Actions(removeHeaders: ["Transfer-Encoding"])), "Transfer-Encoding is the transport's"),
            (rule(RewriteRule.Actions(setHeaders: [.init(name: "X-A", value: "a\r\nb")])), "not a valid HTTP field value"),
            (rule(RewriteRule.Actions(removeHeaders: ["Bad Name"])), "not a valid HTTP header name"),
            (rule(RewriteRule.Actions(latencyMilliseconds: 400_000)), "The latency must be from 0 to 300000 ms"),
            (rule(RewriteRule.Actions(status: 503, failure: .offline)), "A rule that fails the request has no answer to rewrite"),
            (rule(RewriteRule.Actions(patch: #"[{"op": "replace", "path": "/a", "value": 1}, {"op": "add", "path": "/b"}]"#)),
             "The JSON Patch is not valid: operation 2 (add /b): “value” is missing"),
            // Slips that would match or change nothing, and sizes no hand-made rule reaches
            (rule(endpoint: nil, url: "http://demo.invalid/\r\n*", RewriteRule.Actions(status: 500)), "The URL pattern must be one line"),
            (rule(endpoint: nil, url: "http://[::1", RewriteRule.Actions(status: 500)), "not a URL with a host"),
            (rule(endpoint: nil, url: "https:///path", RewriteRule.Actions(status: 500)), "not a URL with a host"),
            (rule(endpoint: nil, url: "http://user:PW1@127.0.0.1:18701/u", RewriteRule.Actions(status: 500)), "a user's name or password before its host"),
            (rule(endpoint: nil, url: "https://a.test/" + String(repeating: "a", count: 200_000), RewriteRule.Actions(status: 201)),
             "The URL pattern is longer than 64 KB"),
            (rule(RewriteRule.Actions(patch: "[]")), "The JSON Patch has no operation"),
            (rule(RewriteRule.Actions(setHeaders: (0..<101).map { .init(name: "X-\($0)", value: "v") })), "more than 100 headers"),
            (rule(RewriteRule.Actions(setHeaders: [.init(name: "X-Big", value: String(repeating: "v", count: 20_000))])),
             "longer than 16 KB"),
            (rule(RewriteRule.Actions(patch: "[" + Array(repeating: #"{"op": "remove", "path": "/a"}"#, count: 10_000).joined(separator: ",") + "]")),
             "The JSON Patch is longer than 256 KB"),
        ]
        for (rule, reason) in cases {
            let message = refusal { try rules.add(rule) }
            #expect(message?.contains(reason) == true, "\(reason): \(message ?? "added")")
        }
        #expect(try rules.all().isEmpty)
        // And patterns a person writes are kept: stars for any host or path, an IPv6 loopback, a query
        for pattern in ["https://*.example.com/*", "*/api/*", "http://[::1]:8080/x?q=*", "https://a.test/search?q=100%"] {
            #expect(refusal { try rules.add(rule(endpoint: nil, url: pattern, RewriteRule.Actions(status: 204))) } == nil, "\(pattern)")
        }
    }

    @Test("A refused URL pattern is quoted back without its query or a password, so a key typed into it is not echoed")
    func refusedPatternHidesItsQuery() {
        // Given a pattern with no host, an API key in its query
        let rules = rules()
        // When it is refused
        let message = refusal {
            try rules.add(rule(endpoint: nil, url: "https:///svc/mostpopular?api-key=SECRETKEY123&period=7", RewriteRule.Actions(status: 500)))
        }
        // Then the error quotes the part that shows the slip, and neither the key nor the rest of the query
        #expect(message?.contains("“https:///svc/mostpopular…”") == true, "\(message ?? "added")")
        #expect(message?.contains("SECRETKEY123") == false)
        // (nor a password before the missing host)
        let withPassword = refusal { try rules.add(rule(endpoint: nil, url: "https://user:PASSWORD99@/x", RewriteRule.Actions(status: 500))) }
        #expect(withPassword?.contains("“https:///x”") == true && withPassword?.contains("PASSWORD99") == false, "\(withPassword ?? "added")")
    }

    @Test("Rules, their switches and hit counts survive a reopen; a deleted rule's id is never given again")
    func persistence() async throws {
        // Given a rules file with two rules, one of which answered a request
        let folder = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("rules.json")
        let rules = rules(url)
        let first = try rules.add(rule(RewriteRule.Actions(status: 503)))
        let second = try rules.add(rule(endpoint: "image", RewriteRule.Actions(latencyMilliseconds: 5)))
        _ = await send(request(), through: RewritingTransport(base: ScriptedTransport(always: .json(Self.body)), rules: rules))
        try rules.setEnabled(false, id: first.id)
        rules.saveHits(force: true)
        // When it is opened again (a restart) and the second rule deleted, then a third added
        let reopened = self.rules(url)
        let all = try reopened.all()
        #expect(all.map(\.id) == [first.id, second.id] && all[0].hits == 1 && !all[0].isEnabled && all[0].createdAt == Self.date)
        try reopened.remove(id: second.id)
        let third = try reopened.add(rule(RewriteRule.Actions(status: 418)))
        // Then the new rule has a new id, and unknown ids are a clear notFound
        #expect(third.id == second.id + 1)
        #expect(throws: KioskError.notFound("rewrite rule 99")) { try reopened.setEnabled(true, id: 99) }
        // And an edit keeps the id, hits, creation and origin, and takes the new definition
        var changed = rule(RewriteRule.Actions(status: 429), name: "Slow down")
        changed.origin = "ignored"
        let updated = try reopened.update(id: first.id, to: changed)
        #expect(updated.id == first.id && updated.hits == 1 && updated.name == "Slow down" && updated.actions.status == 429)
        #expect(updated.origin == "added by hand" && updated.isEnabled)
        try reopened.resetHits(id: nil)
        #expect(try self.rules(url).all().allSatisfy { $0.hits == 0 })
    }

    @Test("A rule added by another process (the CLI) applies in the running one at its next request")
    func anotherProcessIsSeen() async throws {
        let url = try TemporaryDirectory.make().appendingPathComponent("rules.json")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let server = rules(url), command = rules(url)
        let transport = RewritingTransport(base: ScriptedTransport(always: .json(Self.body)), rules: server)
        #expect(try await send(request(), through: transport).result.get().status == 200)
        try command.add(rule(RewriteRule.Actions(status: 503)))
        #expect(try await send(request(), through: transport).result.get().status == 503)
        try command.remove(id: 1)
        #expect(try await send(request(), through: transport).result.get().status == 200)
    }

    @Test("A rules file edited by hand with a broken patch loads; that rule is skipped with the reason, the others apply")
    func brokenFile() async throws {
        // Given a file written by hand: lenient about what it leaves out, with one broken patch
        let url = try TemporaryDirectory.make().appendingPathComponent("rules.json")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try Data(#"""
            {"rules": [
              {"id": 4, "match": {"endpoint": "rickandmorty.characters", "method": "*"}, "actions": {"patch": "[{\"op\": \"nope\"}]"}},
              {"id": 7, "match": {"endpoint": "rickandmorty.characters", "method": "*"}, "actions": {"status": 201}}
            ]}
            """#.utf8).write(to: url)
        let rules = rules(url)
        // When a page is fetched
        let (result, touches) = await send(request(), through: RewritingTransport(base: ScriptedTransport(always: .json(Self.body)),
                                                                                   rules: rules))
        // Then the broken rule says why it did not apply and the other one applied
        #expect(try result.get().status == 201)
        #expect(touches.map(\.applied) == [false, true])
        #expect(touches.first?.detail.hasPrefix("its JSON Patch is not valid: operation 1") == true)
        // And a new rule gets an id above every one in the file
        #expect(try rules.add(rule(RewriteRule.Actions(status: 202))).id == 8)
    }

    @Test("A rule reads from JSON with its patch as the document itself, keeping its key order; bad JSON names the path")
    func jsonInput() throws {
        let rule = try RewriteRule(json: Data(#"""
            {"name": "API", "match": {"endpoint": "rickandmorty.characters", "method": "get"},
             "actions": {"status": 503, "setHeaders": [{"name": "X-A", "value": "b"}], "removeHeaders": ["ETag"],
                         "patch": [{"value": {"z": 1, "a": 2}, "path": "/x", "op": "add"}], "latencyMilliseconds": 5}}
            """#.utf8), origin: "test")
        #expect(rule.match.method == "GET" && rule.actions.status == 503 && rule.actions.removeHeaders == ["ETag"])
        #expect(rule.actions.patch?.contains("\"value\": {\n      \"z\": 1,\n      \"a\": 2\n    }") == true)
        #expect(rule.ruleProblem() == nil)
        let cases: [(String, String)] = [
            (#"{"actions": {}}"#, "$.match is missing"),
            (#"{"match": {"endpoint": 3}}"#, "$.match.endpoint must be a string"),
            (#"{"match": {}, "actions": {"status": "503"}}"#, "$.actions.status must be a whole number"),
            (#"{"match": {}, "actions": {"failure": "boom"}}"#, "$.actions.failure must be one of timeout, offline, reset"),
            (#"{"match": {}, "color": "red"}"#, "$ has an unknown member “color”"),
            ("[", "The rule is not JSON"),
        ]
        for (text, words) in cases {
            let message = refusal { _ = try RewriteRule(json: Data(text.utf8), origin: "test") }
            #expect(message?.contains(words) == true, "\(text): \(message ?? "read")")
        }
    }
}
