import Foundation
import KioskCore
import KioskTestSupport
import Synchronization
import Testing
@testable import KioskNetwork

@Suite("An origin that asked Kiosk to wait is not asked meanwhile")
struct RateLimitGateTests {
    /// A clock a test moves by hand.
    final class Time: Sendable {
        let date = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        func advance(_ seconds: TimeInterval) { date.withLock { $0 = $0.addingTimeInterval(seconds) } }
        var now: @Sendable () -> Date { { self.date.withLock { $0 } } }
    }

    let api = URL(string: "https://api.test/characters?page=2")!

    @Test("After a 429 asking 60 s, the origin's requests are answered 429 here with the time left, until it has passed; another origin's go on")
    func closedForTheTimeAsked() async throws {
        // Given an upstream that answers 429, Retry-After 60, then 200
        let time = Time()
        let upstream = ScriptedTransport([.respond(429, headers: ["Retry-After": "60"])], otherwise: .respond(200, body: "{}"))
        let gate = RateLimitGate(base: upstream, longerThan: .seconds(5), now: time.now)
        #expect(try await gate.send(HTTPRequest(url: api, endpoint: "x")).status == 429)
        // When the same origin is asked 20 s later, for another page
        time.advance(20)
        let held = try await gate.send(HTTPRequest(url: URL(string: "https://API.test/characters?page=3")!, endpoint: "x"))
        // Then it is answered here: 429, the 40 s left, nothing sent
        #expect(held.status == 429 && held.headers["Retry-After"] == "40")
        #expect(upstream.callCount == 1)
        // And another origin is asked as ever
        #expect(try await gate.send(HTTPRequest(url: URL(string: "https://other.test/")!, endpoint: "y")).status == 200)
        // And once the time asked has passed, the origin is asked again
        time.advance(41)
        #expect(try await gate.send(HTTPRequest(url: api, endpoint: "x")).status == 200)
        #expect(upstream.callCount == 3)
    }

    @Test("A wait the retry layer makes itself (5 s or less) closes nothing; a user's resend goes through a closed gate; a year asked is an hour")
    func whatClosesAndWhatPasses() async throws {
        let time = Time()
        let short = ScriptedTransport([.respond(429, headers: ["Retry-After": "3"])], otherwise: .respond(200))
        let gate = RateLimitGate(base: short, longerThan: .seconds(5), now: time.now)
        _ = try await gate.send(HTTPRequest(url: api, endpoint: "x"))
        #expect(try await gate.send(HTTPRequest(url: api, endpoint: "x")).status == 200 && short.callCount == 2)

        let long = ScriptedTransport([.respond(503, headers: ["Retry-After": "31536000"])], otherwise: .respond(200))
        let closed = RateLimitGate(base: long, longerThan: .seconds(5), now: time.now)
        _ = try await closed.send(HTTPRequest(url: api, endpoint: "x"))
        // A resend from the debugger is the user's own act: sent
        var resend = HTTPRequest(url: api, endpoint: "x")
        resend.touches = [ExchangeTouch(kind: .resend, id: 1, name: "x", detail: "")]
        #expect(try await closed.send(resend).status == 200 && long.callCount == 2)
        // And the year asked is held to an hour, with the status the upstream gave
        let held = try await closed.send(HTTPRequest(url: api, endpoint: "x"))
        #expect(held.status == 503 && held.headers["Retry-After"] == "3600")
        time.advance(3601)
        #expect(try await closed.send(HTTPRequest(url: api, endpoint: "x")).status == 200 && long.callCount == 3)
    }
}
