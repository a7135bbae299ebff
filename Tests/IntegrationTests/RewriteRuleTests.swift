import Foundation
@testable import KioskApp
import KioskCore
import KioskDebugger
import KioskStore
import KioskTestSupport
import Testing

/// Rewrite rules end to end: a real Kiosk over real HTTP to the demo upstream, its whole transport stack,
/// its request log in a real SQLite file.
@Suite("Rewrite rules through Kiosk")
struct RewriteRuleTests {
    static let renamed = #"[{"op": "replace", "path": "/results/0/name", "value": "Rule Rick"}]"#

    private func characters(_ actions: RewriteRule.Actions, name: String = "") -> RewriteRule {
        RewriteRule(name: name, match: RewriteRule.Match(endpoint: "rickandmorty.characters"), actions: actions)
    }

    /// The log's records, newest first, after writing what is queued.
    private func records(_ kiosk: Kiosk, _ filter: RequestFilter = RequestFilter()) throws -> [RequestRecord] {
        try kiosk.debugger.flush()
        return try kiosk.debugger.records(matching: filter)
    }

    @Test("A patch rule changes the page the app shows without pausing; the log shows the answer as the app got it, and the store never keeps it")
    func patchEndToEnd() async throws {
        try await withHarness { h in
            // Given a rule renaming the first character
            let rule = try h.kiosk.debugger.rules.add(characters(RewriteRule.Actions(patch: Self.renamed), name: "Rename"))
            // When the app opens the Rick and Morty list
            let update = try await h.catalog.page(PageRequest(source: .rickandmorty))
            // Then it shows the rewritten name, in the upstream's order, and nothing paused
            #expect(update.page.items.first?.title == "Rule Rick" && update.error == nil)
            #expect(update.page.items.dropFirst().first?.title == "Morty Smith")
            #expect(h.kiosk.debugger.breakpoints.paused.isEmpty)
            // And the log holds the exchange as the app received it, saying which rule touched it and how
            let record = try #require(try records(h.kiosk).first)
            let full = try #require(try h.kiosk.debugger.record(id: record.id))
            // (its decision is `edited`, as a breakpoint's edit is: what the app got is not what the upstream said)
            #expect(record.decision == .edited)
            #expect(record.touchedBy == [ExchangeTouch(kind: .rule, id: rule.id, name: "Rename", applied: true,
                                                       phrase: .ruleRewrote([.patched(operations: 1, decodedFrom: nil)], validatorsDropped: false))])
            #expect(record.touchedBy.map(\.detail) == ["patched the body (1 operation)"])
            #expect(String(decoding: try #require(full.responseBody).data, as: UTF8.self).contains(#""name":"Rule Rick""#))
            #expect(try h.kiosk.debugger.rules.rule(id: rule.id).hits == 1)
            // And the store kept nothing of it: with the rule off and the upstream gone, the page is not there
            try h.kiosk.debugger.rules.setEnabled(false, id: rule.id)
            try await h.setFaults { $0.offline = true }
            await #expect(throws: KioskError.self) { try await h.catalog.page(PageRequest(source: .rickandmorty)) }
        }
    }

    @Test("A status rule turns the next answer into an error: the app shows its stored copy with the error, until the rule is off")
    func statusEndToEnd() async throws {
        try await withHarness { h in
            // Given a page read and stored, then a rule answering 503 with a header set and one removed
            _ = try await h.catalog.page(PageRequest(source: .rickandmorty))
            let rule = try h.kiosk.debugger.rules.add(characters(RewriteRule.Actions(
                status: 503, setHeaders: [.init(name: "Retry-After", value: "0")], removeHeaders: ["ETag"])))
            // When the app refreshes it
            let update = try await h.catalog.page(PageRequest(source: .rickandmorty), policy: .force)
            // Then it shows the stored page with the upstream error the rule made
            #expect(update.page.items.first?.title == "Rick Sanchez")
            #expect(update.error?.description.contains("503") == true)
            // And the log's newest network record is the 503, with the header changes, touched by the rule (status:5xx also
            // finds the store's answer that stood in for it, which is not the network's)
            let record = try #require(try records(h.kiosk, RequestFilter(statusClass: .serverError)).first { $0.status != nil })
            #expect(record.status == 503 && record.touchedBy.first?.id == rule.id)
            #expect(record.responseHeaders.contains { $0.name == "Retry-After" && $0.value == "0" })
            #expect(!record.responseHeaders.contains { $0.name.lowercased() == "etag" })
            // And with the rule off, the same refresh is a plain 200 again, untouched
            try h.kiosk.debugger.rules.setEnabled(false, id: rule.id)
            let clean = try await h.catalog.page(PageRequest(source: .rickandmorty), policy: .force)
            #expect(clean.error == nil)
            #expect(try records(h.kiosk).first?.touchedBy.isEmpty == true)
        }
    }

    @Test("Latency is waited on Kiosk's injected clock: the page arrives only once the clock has moved by it, its first byte that much later in the log")
    func latencyEndToEnd() async throws {
        try await withHarness { h in
            // Given a Kiosk whose clock moves only when told, with a rule adding 800 ms
            let clock = ManualClock()
            var configuration = h.kiosk.configuration
            configuration.dataDirectory = h.directory.appendingPathComponent("manual-clock")
            let kiosk = try Kiosk(configuration: configuration, dependencies: .init(now: h.now.dateSource, clock: clock))
            try kiosk.debugger.rules.add(characters(RewriteRule.Actions(latencyMilliseconds: 800)))
            // When the app opens the list
            let pending = Task { try await kiosk.catalog.page(PageRequest(source: .rickandmorty)) }
            await clock.waitForSleepers()
            // (moving the clock before the rule sleeps would leave it asleep for ever: fail instead)
            try #require(clock.sleeperCount == 1)
            // Then it waits until the clock has moved by 800 ms, and not less
            await clock.advance(by: .milliseconds(799))
            #expect(clock.sleeperCount == 1)
            await clock.advance(by: .milliseconds(1))
            let update = try await pending.value
            #expect(update.page.items.first?.title == "Rick Sanchez")
            #expect(try records(kiosk).first?.touchedBy.first?.detail == "+800 ms")
            // And the log says the answer's first byte came 800 ms later (the clock is moved by hand: the real time the
            // test took is the exchange's, queued or not)
            let timings = try #require(try records(kiosk).first?.timings)
            #expect((timings.firstByte ?? 0) >= 0.8, "\(timings)")
            await kiosk.shutdown()
        }
    }

    @Test("A failing rule fails the request as Kiosk's transport would, offline-first, without reaching the upstream")
    func failureEndToEnd() async throws {
        try await withHarness { h in
            // Given a stored page and a rule that makes its endpoint unreachable
            _ = try await h.catalog.page(PageRequest(source: .rickandmorty))
            let rule = try h.kiosk.debugger.rules.add(characters(RewriteRule.Actions(failure: .offline)))
            // When the app refreshes it
            let update = try await h.catalog.page(PageRequest(source: .rickandmorty), policy: .force)
            // Then it shows the stored page, offline
            #expect(update.page.items.first?.title == "Rick Sanchez" && update.isOffline)
            // And the log has the failed exchange with its offline error, and the rule that made it — among the edits, not
            // the network's failures
            let failed = try #require(try records(h.kiosk, RequestFilter(statusClass: .error)).first { $0.decision == .edited })
            #expect(failed.error?.hasPrefix("Offline: cannot connect to") == true)
            #expect(failed.touchedBy.first?.id == rule.id && failed.touchedBy.first?.applied == true)
            #expect(failed.touchedBy.first?.detail == "failed the request (cannot connect (offline)) without sending it")
        }
    }

    @Test("A mock answers first, then rules rewrite the mock's answer; the record names both, in that order")
    func mockThenRule() async throws {
        try await withHarness { h in
            // Given the list read once (to learn its URL), a mock answering it with one character, and a rule on top
            _ = try await h.catalog.page(PageRequest(source: .rickandmorty))
            let url = try #require(try records(h.kiosk).first?.url)
            let mock = try h.kiosk.debugger.mocks.add([MockRule(urlPattern: url, headers: [.init(name: "Content-Type", value: "application/json")],
                body: Data(#"{"info":{"count":1,"pages":1,"next":null,"prev":null},"results":[{"id":1,"name":"Mock Rick","status":"Alive","species":"Human","type":"","gender":"Male","origin":{"name":"Earth","url":""},"location":{"name":"Earth","url":""},"image":"","episode":[],"url":"","created":"2017-11-04T18:48:46.250Z"}]}"#.utf8))])[0]
            let rule = try h.kiosk.debugger.rules.add(characters(RewriteRule.Actions(
                patch: #"[{"op": "test", "path": "/results/0/name", "value": "Mock Rick"}, {"op": "replace", "path": "/results/0/name", "value": "Rule Rick"}]"#)))
            // When it is refreshed
            let update = try await h.catalog.page(PageRequest(source: .rickandmorty), policy: .force)
            // Then the rule saw the mock's answer and rewrote it
            #expect(update.page.items.map(\.title) == ["Rule Rick"])
            let record = try #require(try records(h.kiosk).first)
            // (the decision is the last word, `edited`; touched-by keeps the mock that answered first)
            #expect(record.decision == .edited)
            #expect(record.touchedBy.map(\.kind) == [.mock, .rule] && record.touchedBy.map(\.id) == [mock.id, rule.id])
        }
    }

    @Test("A response edited at a breakpoint and kept as a rule keeps coming back without pausing")
    func keepReturning() async throws {
        try await withHarness { h in
            // Given a response breakpoint on the characters list, and the app opening it
            try h.kiosk.debugger.breakpoints.set(BreakpointSetting(response: .pause), for: "rickandmorty.characters")
            let first = Task { try await h.catalog.page(PageRequest(source: .rickandmorty)) }
            for _ in 0..<2000 where h.kiosk.debugger.breakpoints.paused.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
            let paused = try #require(h.kiosk.debugger.breakpoints.paused.first)
            // When the user edits the answer and keeps returning it
            let edited = try #require(paused.responseText).replacingOccurrences(of: "Rick Sanchez", with: "Kept Rick")
            guard case .rewrite(let rule) = try h.kiosk.debugger.keepReturning(paused, status: 200, body: Data(edited.utf8)) else {
                Issue.record("a response's edit kept as no rewrite rule")
                return
            }
            h.kiosk.debugger.breakpoints.decide(paused.id, .continueWithResponse(status: 200, body: Data(edited.utf8)))
            #expect(try await first.value.page.items.first?.title == "Kept Rick")
            // Then the rule matches that request and replaces its whole body, and its origin says where it came from
            #expect(rule.match.endpoint == "rickandmorty.characters" && rule.match.method == "GET" && rule.actions.status == 200)
            #expect(rule.origin == "from a breakpoint edit of paused #\(paused.id)")
            // And with the breakpoint off, the next answer is the edit again, with no pause
            try h.kiosk.debugger.breakpoints.set(BreakpointSetting(), for: "rickandmorty.characters")
            let again = try await h.catalog.page(PageRequest(source: .rickandmorty), policy: .force)
            #expect(again.page.items.first?.title == "Kept Rick")
            // And the log says which touched what: the edit at the breakpoint, then the rule
            let logged = try records(h.kiosk)
            #expect(logged.first?.touchedBy.first?.id == rule.id)
            #expect(logged.contains { $0.decision == .edited && $0.touchedBy.first?.kind == .breakpoint },
                    "\(logged.map { ($0.decision, $0.touchedBy) })")
        }
    }
}
