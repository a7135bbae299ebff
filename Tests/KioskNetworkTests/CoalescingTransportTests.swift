import Foundation
import KioskCore
@testable import KioskNetwork
import KioskTestSupport
import Testing

@Suite("Coalescing transport")
struct CoalescingTransportTests {
    @Test("Fifty identical concurrent GETs reach the upstream once and all get the answer")
    func identicalRequestsShareOneFetch() async throws {
        // Given an upstream that holds its answer until released
        let upstream = ScriptedTransport([.gate("shared")])
        let transport = CoalescingTransport(base: upstream)

        // When fifty callers ask for the same URL at once
        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 {
                group.addTask { String(decoding: try await transport.send(get()).body, as: UTF8.self) }
            }
            while transport.inFlightCount == 0 { await Task.yield() }
            try await Task.sleep(for: .milliseconds(50))
            upstream.release()
            return try await group.reduce(into: []) { $0.append($1) }
        }

        // Then one upstream call served them all
        #expect(upstream.callCount == 1)
        #expect(bodies.count == 50)
        #expect(bodies.allSatisfy { $0 == "shared" })
    }

    @Test("Every caller but the one whose request went upstream is told it was collapsed (RFC 9211's collapsed)")
    func joinedCallersAreCollapsed() async throws {
        // Given an upstream that holds its answer until released, and a first caller on the wire
        let upstream = ScriptedTransport([.gate("shared")], otherwise: .respond(200, body: "alone"))
        let transport = CoalescingTransport(base: upstream)
        let first = Task { try await transport.send(get()) }
        while upstream.callCount == 0 { await Task.yield() }

        // When two more callers ask for the same URL while it is in flight
        let joined = (0..<2).map { _ in Task { try await transport.send(get()) } }
        try await Task.sleep(for: .milliseconds(50))
        upstream.release()

        // Then the first caller's answer is its own, and the two that joined it are marked collapsed
        #expect(try await first.value.isCollapsed == false)
        for task in joined { #expect(try await task.value.isCollapsed == true) }
        #expect(upstream.callCount == 1)
        // And a later request that finds nothing in flight is not collapsed
        #expect(try await transport.send(get()).isCollapsed == false)
    }

    @Test("Different URLs in flight at once are not coalesced: two upstream sends, each caller its own answer")
    func differentURLsAreSeparate() async throws {
        // Given an upstream that holds every answer until released, then answers with the request's path
        let upstream = ScriptedTransport(always: .held(.echoPath))
        let transport = CoalescingTransport(base: upstream)

        // When two callers ask for two different URLs at the same time
        let a = Task { try await transport.send(get(URL(string: "http://127.0.0.1:9/a")!)) }
        let b = Task { try await transport.send(get(URL(string: "http://127.0.0.1:9/b")!)) }
        for _ in 0..<2_000 where upstream.callCount < 2 { try await Task.sleep(for: .milliseconds(1)) }

        // Then both requests are on the wire at once, as two upstream sends
        #expect(upstream.callCount == 2)
        #expect(transport.inFlightCount == 2)
        #expect(transport.sentCount == 2)
        #expect(Set(upstream.requests.map(\.url.path)) == ["/a", "/b"])
        // And once the upstream answers, each caller gets the answer to its own URL
        upstream.release()
        #expect(String(decoding: try await a.value.body, as: UTF8.self) == "/a")
        #expect(String(decoding: try await b.value.body, as: UTF8.self) == "/b")
    }

    @Test("A failure of the upstream itself (unreachable, out of time) is every caller's; a broken exchange (cut short, reset) is the leader's, and those that joined send their own",
          arguments: [(KioskError.truncatedBody(url: "http://127.0.0.1:9/page", expected: 1000, received: 500), false),
                      (KioskError.transport(url: "http://127.0.0.1:9/page", message: "connection reset by peer"), false),
                      (KioskError.offline(host: "127.0.0.1"), true),
                      (KioskError.timeout(url: "http://127.0.0.1:9/page", seconds: 60), true)])
    func failuresShared(_ failure: KioskError, shared: Bool) async throws {
        // Given an upstream whose first exchange fails this way once it is released, and answers every later one
        let upstream = ScriptedTransport([.held(.fail(failure))], otherwise: .respond(200, body: "fine"))
        let transport = CoalescingTransport(base: upstream)
        let first = Task { try await transport.send(get()) }
        while upstream.callCount == 0 { await Task.yield() }

        // When four more callers ask for the same URL while it is in flight, and then it fails
        let joined = (0..<4).map { _ in Task { try await transport.send(get()) } }
        while transport.joinedCount < 4 { await Task.yield() }
        upstream.release()

        // Then the first caller gets the failure
        await #expect(throws: KioskError.self) { try await first.value }
        // And the others get it too only when it is the upstream's; else each sent its own request and got its answer
        for task in joined {
            if shared {
                await #expect(throws: KioskError.self) { try await task.value }
            } else {
                #expect(String(decoding: try await task.value.body, as: UTF8.self) == "fine")
            }
        }
        #expect(upstream.callCount == (shared ? 1 : 5))
    }

    @Test("A cancelled caller that joined stops waiting at once while the others still get the one answer")
    func cancellationOfOneWaiter() async throws {
        // Given a request on the wire, and a second caller joined to it
        let upstream = ScriptedTransport([.gate("late")])
        let transport = CoalescingTransport(base: upstream)
        let survivor = Task { try await transport.send(get()) }
        while transport.inFlightCount == 0 { await Task.yield() }
        let quitter = Task { try await transport.send(get()) }
        while transport.joinedCount == 0 { await Task.yield() }

        // When the one that joined is cancelled, it stops waiting at once
        quitter.cancel()
        await #expect(throws: KioskError.cancelled) { try await quitter.value }

        // Then the first still gets the answer, from one upstream request
        upstream.release()
        #expect(String(decoding: try await survivor.value.body, as: UTF8.self) == "late")
        #expect(upstream.callCount == 1)
    }

    @Test("When the caller whose request went upstream is cancelled, those that joined it send their own and get answers")
    func cancellationOfTheLeader() async throws {
        // Given a request on the wire that never answers, and two callers joined to it
        let upstream = ScriptedTransport([.untilCancelled], otherwise: .respond(200, body: "own"))
        let transport = CoalescingTransport(base: upstream)
        let leader = Task { try await transport.send(get()) }
        while transport.inFlightCount == 0 { await Task.yield() }
        let joined = (0..<2).map { _ in Task { try await transport.send(get()) } }
        while transport.joinedCount < 2 { await Task.yield() }

        // When the leader is cancelled
        leader.cancel()

        // Then it fails, and each that joined sent its own request and got its answer, not collapsed
        await #expect(throws: (any Error).self) { try await leader.value }
        for task in joined {
            let response = try await task.value
            #expect(String(decoding: response.body, as: UTF8.self) == "own" && !response.isCollapsed)
        }
        #expect(upstream.callCount == 3)
    }

    @Test("After an answer that could not be shared with the callers waiting on it, requests like it go upstream at once, each its own, until one gets an answer that can be")
    func unsharedAnswersStopTheWaiting() async throws {
        // Given an upstream whose first answer may not be shared, held while two more callers join it
        let upstream = ScriptedTransport([.gate("mine"), .respond(200, body: "mine"), .respond(200, body: "mine"),
                                          .untilCancelled, .untilCancelled, .respond(200, body: "shareable"), .untilCancelled],
                                         otherwise: .respond(200, body: "shareable"))
        let transport = CoalescingTransport(base: upstream) { String(decoding: $0.body, as: UTF8.self) == "shareable" }
        let leader = Task { try await transport.send(get()) }
        for _ in 0..<2_000 where upstream.callCount == 0 { try await Task.sleep(for: .milliseconds(1)) }
        let joined = (0..<2).map { _ in Task { try await transport.send(get()) } }
        for _ in 0..<2_000 where transport.joinedCount < 2 { try await Task.sleep(for: .milliseconds(1)) }
        upstream.release()
        // Then each that joined sent its own request once the answer came, and none is collapsed
        for task in [leader] + joined {
            let response = try await task.value
            #expect(String(decoding: response.body, as: UTF8.self) == "mine" && !response.isCollapsed)
        }
        #expect(upstream.callCount == 3)

        // When two more ask at once, while the upstream has not answered either
        let both = (0..<2).map { _ in Task { try await transport.send(get()) } }
        for _ in 0..<2_000 where upstream.callCount < 5 { try await Task.sleep(for: .milliseconds(1)) }
        // Then both are on the wire, neither waiting on the other
        for task in both where upstream.callCount != 5 { task.cancel() }
        try #require(upstream.callCount == 5, "the script's later steps would be taken out of turn")
        #expect(transport.inFlightCount == 0)
        for task in both { task.cancel() }
        for task in both { await #expect(throws: (any Error).self) { try await task.value } }

        // When one of them gets an answer that may be shared
        #expect(String(decoding: try await transport.send(get()).body, as: UTF8.self) == "shareable")
        // Then the next two identical requests in flight collapse again: one on the wire, the other waiting on it
        let next = Task { try await transport.send(get()) }
        for _ in 0..<2_000 where upstream.callCount < 7 { try await Task.sleep(for: .milliseconds(1)) }
        let waiting = Task { try await transport.send(get()) }
        for _ in 0..<2_000 where transport.joinedCount < 1 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(upstream.callCount == 7)
        #expect(transport.joinedCount == 1)
        next.cancel()
        _ = try? await next.value
        #expect(String(decoding: try await waiting.value.body, as: UTF8.self) == "shareable")
    }
}
