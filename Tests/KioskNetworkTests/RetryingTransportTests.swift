import Foundation
import KioskCore
@testable import KioskNetwork
import KioskTestSupport
import Testing

@Suite("Retrying transport")
struct RetryingTransportTests {
    @Test("A 500 followed by a 200 is retried once after a backoff and returns the 200")
    func retriesServerErrors() async throws {
        // Given an upstream that fails once, and a manual clock
        let upstream = ScriptedTransport([.respond(500), .respond(200, body: "ok")])
        let clock = ManualClock()
        let transport = RetryingTransport(base: upstream, clock: clock, random: { 0.5 })

        // When a GET is sent and the backoff (200 ms * 0.5) elapses
        let task = Task { try await transport.send(get()) }
        await clock.waitForSleepers()
        await clock.advance(by: .milliseconds(100))
        let response = try await task.value

        // Then the second answer is returned after exactly two calls
        #expect(response.status == 200)
        #expect(upstream.callCount == 2)
    }

    @Test("A 429 with Retry-After waits that long before trying again")
    func honoursRetryAfter() async throws {
        let upstream = ScriptedTransport([.respond(429, headers: ["Retry-After": "3"]), .respond(200)])
        let clock = ManualClock()
        let transport = RetryingTransport(base: upstream, clock: clock, random: { 0 })

        let task = Task { try await transport.send(get()) }
        await clock.waitForSleepers()
        // Then nothing is retried before 3 s have passed
        await clock.advance(by: .milliseconds(2900))
        #expect(upstream.callCount == 1)
        await clock.advance(by: .milliseconds(100))
        #expect(try await task.value.status == 200)
        #expect(upstream.callCount == 2)
    }

    @Test("A Retry-After longer than the cap returns the 429 to the caller at once")
    func longRetryAfterIsNotWaited() async throws {
        let upstream = ScriptedTransport([.respond(429, headers: ["Retry-After": "3600"])])
        let transport = RetryingTransport(base: upstream, clock: ManualClock())
        let response = try await transport.send(get())
        #expect(response.status == 429)
        #expect(upstream.callCount == 1)
    }

    @Test("Offline fails fast: a refused connection is never retried")
    func offlineIsNotRetried() async throws {
        let upstream = ScriptedTransport([.fail(.offline(host: "127.0.0.1"))])
        let transport = RetryingTransport(base: upstream, clock: ManualClock())
        await #expect(throws: KioskError.offline(host: "127.0.0.1")) { try await transport.send(get()) }
        #expect(upstream.callCount == 1)
    }

    @Test("A timeout is not retried: the request had the caller's whole time, and the error says how long that was")
    func timeoutIsNotRetried() async throws {
        let timeout = KioskError.timeout(url: "http://127.0.0.1/slow", seconds: 15)
        let upstream = ScriptedTransport([.fail(timeout), .respond(200)])
        let transport = RetryingTransport(base: upstream, clock: ManualClock())
        await #expect(throws: timeout) { try await transport.send(get()) }
        #expect(upstream.callCount == 1)
    }

    @Test("After the last attempt the final 503 is returned, not an endless loop")
    func givesUpAfterMaxAttempts() async throws {
        let upstream = ScriptedTransport([.respond(503), .respond(503), .respond(503)])
        let clock = ManualClock()
        let transport = RetryingTransport(base: upstream, policy: RetryPolicy(maxAttempts: 3), clock: clock, random: { 1 })
        let task = Task { try await transport.send(get()) }
        await clock.waitForSleepers()
        await clock.advance(by: .milliseconds(200))
        await clock.waitForSleepers()
        await clock.advance(by: .milliseconds(400))
        #expect(try await task.value.status == 503)
        #expect(upstream.callCount == 3)
    }

    @Test("POST requests are never retried")
    func postIsNotRetried() async throws {
        let upstream = ScriptedTransport([.respond(500)])
        let transport = RetryingTransport(base: upstream, clock: ManualClock())
        var request = get()
        request.method = "POST"
        #expect(try await transport.send(request).status == 500)
        #expect(upstream.callCount == 1)
    }

    @Test("Backoff grows exponentially, is capped, and full jitter scales it")
    func backoffShape() {
        let policy = RetryPolicy(baseDelay: .milliseconds(100), maxDelay: .seconds(1))
        #expect(policy.backoff(afterAttempt: 1, unitRandom: 1) == .milliseconds(100))
        #expect(policy.backoff(afterAttempt: 3, unitRandom: 1) == .milliseconds(400))
        #expect(policy.backoff(afterAttempt: 10, unitRandom: 1) == .seconds(1))
        #expect(policy.backoff(afterAttempt: 3, unitRandom: 0.5) == .milliseconds(200))
    }

    @Test("Retry-After accepts seconds and HTTP dates; a negative delay is no delay at all")
    func retryAfterParsing() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryAfter.parse("7", now: now) == .seconds(7))
        #expect(RetryAfter.parse("-5", now: now) == nil)
        #expect(RetryAfter.parse(HTTPDate.format(now.addingTimeInterval(10)), now: now) == .seconds(10))
        #expect(RetryAfter.parse("soon", now: now) == nil)
        #expect(RetryAfter.parse(nil, now: now) == nil)
    }
}
