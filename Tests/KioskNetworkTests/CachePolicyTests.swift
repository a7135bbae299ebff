import Foundation
import Synchronization
import KioskCore
@testable import KioskNetwork
import KioskTestSupport
import Testing

@Suite("Cache policy")
struct CachePolicyTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let policy = CachePolicy(defaultLifetime: 3600)

    @Test("max-age sets freshness and Age is subtracted")
    func maxAgeMinusAge() {
        let decision = policy.decide(headers: ["Cache-Control": "public, max-age=600", "Age": "100", "ETag": "\"v1\""],
                                     receivedAt: now)
        #expect(decision == .store(freshUntil: now.addingTimeInterval(500), validators: Validators(etag: "\"v1\"")))
    }

    @Test("no-store forbids storing")
    func noStore() {
        #expect(policy.decide(headers: ["Cache-Control": "no-store"], receivedAt: now) == .doNotStore)
    }

    @Test("no-cache stores but is stale at once, and never shown stale while connected")
    func noCache() {
        #expect(policy.decide(headers: ["Cache-Control": "no-cache"], receivedAt: now)
            == .store(freshUntil: now, validators: Validators(), staleShownUntil: now))
    }

    @Test("must-revalidate ends showing stale at the end of freshness; stale-while-revalidate=N extends it by N seconds")
    func staleWindows() {
        // Given answers with must-revalidate, with a stale-while-revalidate window, and with neither
        let mustRevalidate = policy.decide(headers: ["Cache-Control": "max-age=60, must-revalidate"], receivedAt: now)
        let window = policy.decide(headers: ["Cache-Control": "max-age=60, stale-while-revalidate=30"], receivedAt: now)
        let plain = policy.decide(headers: ["Cache-Control": "max-age=60"], receivedAt: now)
        let fresh = now.addingTimeInterval(60)
        // Then must-revalidate allows no stale showing, the window 30 s of it, and a plain answer any
        #expect(mustRevalidate == .store(freshUntil: fresh, validators: Validators(), staleShownUntil: fresh))
        #expect(window == .store(freshUntil: fresh, validators: Validators(), staleShownUntil: fresh.addingTimeInterval(30)))
        #expect(plain == .store(freshUntil: fresh, validators: Validators(), staleShownUntil: nil))
        // And the metadata says so at each moment
        let metadata = SnapshotMetadata(fetchedAt: now, freshUntil: fresh, staleShownUntil: fresh.addingTimeInterval(30))
        #expect(metadata.mayShowWhileRevalidating(at: now.addingTimeInterval(59)))
        #expect(metadata.mayShowWhileRevalidating(at: now.addingTimeInterval(89)))
        #expect(!metadata.mayShowWhileRevalidating(at: now.addingTimeInterval(91)))
        #expect(SnapshotMetadata(fetchedAt: now, freshUntil: fresh).mayShowWhileRevalidating(at: now.addingTimeInterval(1e6)))
    }

    @Test("Expires is used relative to Date when there is no max-age; an invalid Expires means expired")
    func expires() {
        let served = now.addingTimeInterval(-60)
        let decision = policy.decide(headers: ["Date": HTTPDate.format(served),
                                               "Expires": HTTPDate.format(served.addingTimeInterval(120)),
                                               "Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"], receivedAt: now)
        #expect(decision == .store(freshUntil: now.addingTimeInterval(120),
                                   validators: Validators(lastModified: "Mon, 01 Jan 2024 00:00:00 GMT")))
        #expect(policy.decide(headers: ["Expires": "0"], receivedAt: now) == .store(freshUntil: now, validators: Validators()))
    }

    @Test("Without headers the source's default lifetime applies")
    func defaultLifetime() {
        #expect(policy.decide(headers: [:], receivedAt: now) == .store(freshUntil: now.addingTimeInterval(3600),
                                                                       validators: Validators()))
    }

    @Test("Cache-Control parsing tolerates spacing, quotes, case and junk")
    func parsing() {
        let control = CacheControl(#"Max-Age="30" , stale-while-revalidate=60,,must-revalidate, bogus=x, stale-if-error=-5"#)
        #expect(control.maxAge == 30)
        #expect(control.staleWhileRevalidate == 60)
        #expect(control.mustRevalidate)
        #expect(CacheControl("max-age=abc").maxAge == 0)
    }
}

@Suite("HTTP dates")
struct HTTPDateTests {
    @Test("An IMF-fixdate read directly is the instant a date formatter reads, for thousands of instants from 1970 to 2100")
    func fixdateMatchesTheFormatter() {
        // Given instants spread over two centuries (a fixed seed: the same ones every run), written as servers write them
        var random = SplitMix64(seed: 9111)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        for _ in 0..<3_000 {
            let instant = Date(timeIntervalSince1970: TimeInterval(random.next() % 4_102_444_800))
            let text = HTTPDate.format(instant)
            // When it is read directly and by the formatter, Then both give the instant written
            #expect(HTTPDate.imfFixdate(text) == instant, "\(text)")
            #expect(formatter.date(from: text) == HTTPDate.imfFixdate(text), "\(text)")
        }
    }

    @Test("What is not an IMF-fixdate is not read as one; the obsolete forms are still read by the formatters")
    func notFixdates() {
        for text in ["Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 GMT ", "Sun 06 Nov 1994 08:49:37 GMT.",
                     "Sun, 31 Apr 1994 08:49:37 GMT", "Sun, 29 Feb 1900 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
                     "Sun, 06 Nov 1994 24:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT ", "Xyz, 06 Nov 1994 08:49:37 GMT",
                     "Sun, 06 Nov 19a4 08:49:37 GMT", "0", ""] {
            #expect(HTTPDate.imfFixdate(text) == nil, "\(text)")
        }
        #expect(HTTPDate.imfFixdate("Tue, 29 Feb 2000 23:59:59 GMT") == Date(timeIntervalSince1970: 951_868_799))
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
    }
}

@Suite("Connectivity monitor")
struct ConnectivityMonitorTests {
    @Test("A refused connection goes offline, probes back off, and the first good probe comes back online")
    func offlineProbeOnline() async throws {
        // Given a monitor whose probe fails twice then succeeds
        let clock = ManualClock()
        let monitor = ConnectivityMonitor(clock: clock, initialProbeDelay: .seconds(1), maxProbeDelay: .seconds(30))
        let attempts = Counter()
        await monitor.setProbe { _ in attempts.increment() >= 3 }
        #expect(await monitor.status == .online)

        // When a request fails to connect
        await monitor.recordUnreachable(URL(string: "http://127.0.0.1:1/api/character")!)
        let offline = await monitor.status
        #expect(offline.isOffline)
        if case .offline(_, let origin) = offline { #expect(origin.absoluteString == "http://127.0.0.1:1/") }

        // Then probes run at 1 s, then 2 s later, then 4 s later
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        await clock.waitForSleepers()
        #expect(attempts.value == 1)
        await clock.advance(by: .seconds(2))
        await clock.waitForSleepers()
        #expect(attempts.value == 2)
        #expect(await monitor.status.isOffline)
        await clock.advance(by: .seconds(4))
        // (the third probe runs on the monitor's task: give it its turn)
        for _ in 0..<1000 where await monitor.status.isOffline { await Task.yield() }
        #expect(await monitor.status == .online)
        #expect(attempts.value == 3)
    }

    @Test("Any answer from a real request brings the monitor back online without waiting for a probe")
    func realSuccessEndsOffline() async throws {
        let clock = ManualClock()
        let monitor = ConnectivityMonitor(clock: clock)
        await monitor.setProbe { _ in false }
        await monitor.recordUnreachable(URL(string: "http://127.0.0.1:1/")!)
        #expect(await monitor.status.isOffline)
        await monitor.recordReachable()
        #expect(await monitor.status == .online)
    }
}

final class Counter: Sendable {
    private let count = Mutex(0)
    @discardableResult func increment() -> Int { count.withLock { $0 += 1; return $0 } }
    var value: Int { count.withLock { $0 } }
}
