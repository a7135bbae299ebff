import Foundation
import KioskApp
import KioskCore
import KioskDemoUpstream
import KioskTestSupport
import Testing

@Suite("Offline-first behaviour over the demo upstream", .serialized)
struct OfflineFirstTests {
    @Test("A fresh stored page is answered from the store without touching the upstream")
    func freshFromStore() async throws {
        try await withHarness { h in
            _ = try await h.catalog.page(PageRequest(source: .rickandmorty))
            await h.demo.resetRequestCounts()
            let update = try await h.catalog.page(PageRequest(source: .rickandmorty))
            #expect(update.origin == .store)
            #expect(!update.isStale)
            #expect(await h.demo.requestCount(pathPrefix: "/api/character") == 0)
        }
    }

    @Test("A stale page is shown at once, then revalidated with If-None-Match and confirmed by a 304")
    func staleWhileRevalidate() async throws {
        try await withHarness { h in
            // Given a stored page that has gone stale
            _ = try await h.catalog.page(PageRequest(source: .rickandmorty))
            await h.now.advance(by: .seconds(2 * 86400))

            // When it is requested
            var updates: [CatalogUpdate] = []
            for try await update in h.catalog.updates(for: PageRequest(source: .rickandmorty)) { updates.append(update) }

            // Then the stored one comes first, labelled stale and revalidating, then the 304-confirmed one
            #expect(updates.count == 2)
            #expect(updates.first?.origin == .store)
            #expect(updates.first?.isStale == true)
            #expect(updates.first?.isRevalidating == true)
            #expect(updates.first.map { Int($0.age) } == 2 * 86400)
            #expect(updates.last?.origin == .notModified)
            #expect(updates.last?.isStale == false)
            #expect(updates.last?.page.items == updates.first?.page.items)
            // And the snapshot's freshness was renewed in the store
            let stored = try #require(try h.database.snapshot(forKey: PageRequest(source: .rickandmorty).cacheKey))
            #expect(stored.metadata.isFresh(at: h.now.date))
        }
    }

    @Test("--refresh revalidates even a fresh page")
    func forcedRefresh() async throws {
        try await withHarness { h in
            _ = try await h.catalog.page(PageRequest(source: .dogs))
            let forced = try await h.catalog.page(PageRequest(source: .dogs), policy: .force)
            #expect(forced.origin == .notModified)
        }
    }

    @Test("A catalog that asks Kiosk to wait a minute (429, Retry-After 60) is not asked again within it: its stored page is shown, saying how long is left")
    func retryAfterHonoured() async throws {
        try await withHarness { h in
            // Given a stored, stale page, and an upstream that now answers 429 asking for a minute
            let request = PageRequest(source: .rickandmorty, page: 2)
            let good = try await h.catalog.page(request)
            await h.now.advance(by: .seconds(2 * 86400))
            try await h.setFaults { $0.rateLimitRate = 1; $0.retryAfterSeconds = 60 }
            let first = try await h.catalog.page(request)
            #expect(first.origin == .store, "\(first.origin)")
            if case .rateLimited(_, let seconds) = first.error { #expect(seconds == 60) } else { Issue.record("\(String(describing: first.error))") }
            let asked = await h.demo.requestCount(pathPrefix: "/api/character")
            // When the page, and another of the catalog, are read 20 s later
            await h.now.advance(by: .seconds(20))
            let again = try await h.catalog.page(request)
            _ = try? await h.catalog.page(PageRequest(source: .rickandmorty, page: 3))
            // Then the upstream was not asked, and the stored page says 40 s are left
            let askedSince = await h.demo.requestCount(pathPrefix: "/api/character")
            #expect(askedSince == asked)
            #expect(again.origin == .store && again.page.items == good.page.items)
            if case .rateLimited(_, let seconds) = again.error { #expect(seconds == 40) } else { Issue.record("\(String(describing: again.error))") }
        }
    }

    @Test("A catalog's wait (429, Retry-After 120) holds for the next process on the same data too: a script running the CLI in a loop does not ask again")
    func retryAfterOutlivesTheProcess() async throws {
        // Given an upstream asking Kiosk to wait two minutes, answered to a first Kiosk
        let now = ManualClock()
        let folder = TemporaryDirectory.url("kiosk-retry-after")
        let demo = DemoUpstream(configuration: DemoUpstreamConfiguration(port: 0))
        try await demo.start()
        do {
            let first = try await Harness.start(directory: folder, now: now, upstream: demo)
            try await first.setFaults { $0.rateLimitRate = 1; $0.retryAfterSeconds = 120 }
            // (Nothing stored for the page: the refusal is thrown.)
            await #expect(throws: KioskError.self) { try await first.catalog.page(PageRequest(source: .rickandmorty, page: 2)) }
            await first.stop()
            let asked = await demo.requestCount(pathPrefix: "/api/character")
            // When a second Kiosk on the same folder reads the catalog 30 s later, the upstream willing again
            try await first.setFaults { $0.rateLimitRate = 0 }
            await now.advance(by: .seconds(30))
            let second = try await Harness.start(directory: folder, now: now, upstream: demo)
            var held: (any Error)?
            do { _ = try await second.catalog.page(PageRequest(source: .rickandmorty, page: 3)) } catch { held = error }
            // Then it was not asked: the 90 s left are said
            #expect(await demo.requestCount(pathPrefix: "/api/character") == asked)
            if case .rateLimited(_, let seconds)? = held as? KioskError { #expect(seconds == 90) } else { Issue.record("\(String(describing: held))") }
            await second.stop()
            // And once the wait is over, a third asks it again
            await now.advance(by: .seconds(91))
            let third = try await Harness.start(directory: folder, now: now, upstream: demo)
            let fetched = try await third.catalog.page(PageRequest(source: .rickandmorty, page: 3))
            #expect(fetched.error == nil && fetched.origin == .network, "\(String(describing: fetched.error))")
            await third.stop()
        } catch {
            await demo.stop()
            throw error
        }
        await demo.stop()
    }

    @Test("Every injected fault leaves the stored page intact and reports the right error",
          arguments: ["500", "429", "truncated", "malformed", "offline"])
    func faultsKeepStoredData(fault: String) async throws {
        try await withHarness { h in
            // Given a stored, stale page without validators (as if the upstream had changed it, so
            // the revalidation is a full GET rather than a bodiless 304)
            let request = PageRequest(source: .rickandmorty, page: 3)
            let good = try await h.catalog.page(request)
            var snapshot = try #require(try h.database.snapshot(forKey: request.cacheKey))
            snapshot.metadata.validators = Validators()
            try h.database.renew(snapshot)
            let before = try h.database.snapshot(forKey: request.cacheKey)
            await h.now.advance(by: .seconds(2 * 86400))

            // When the upstream misbehaves
            try await h.setFaults { faults in
                switch fault {
                case "500": faults.failureRate = 1
                case "429": faults.rateLimitRate = 1; faults.retryAfterSeconds = 1
                case "truncated": faults.truncateRate = 1
                case "malformed": faults.malformedRate = 1
                default: faults.offline = true
                }
            }
            let update = try await h.catalog.page(request)

            // Then the stored page is shown, with the reason, and the store is unchanged
            #expect(update.origin == .store)
            #expect(update.isStale)
            #expect(update.page.items == good.page.items)
            let error = try #require(update.error)
            switch fault {
            case "500": #expect(error == .httpStatus(500, url: error.urlText ?? ""))
            case "429": if case .rateLimited = error {} else { Issue.record("expected rate limited, got \(error)") }
            case "truncated":
                if case .truncatedBody = error {} else if case .transport = error {} else {
                    Issue.record("expected a truncated body, got \(error)")
                }
            case "malformed": if case .malformedResponse = error {} else { Issue.record("expected malformed, got \(error)") }
            default: #expect(update.isOffline)
            }
            #expect(try h.database.snapshot(forKey: request.cacheKey) == before)
        }
    }

    @Test("With nothing stored, an offline upstream is a clear offline error, fast")
    func offlineWithNothingStored() async throws {
        try await withHarness(faults: { var f = FaultSettings.none; f.offline = true; return f }()) { h in
            let started = ContinuousClock.now
            do {
                _ = try await h.catalog.page(PageRequest(source: .rickandmorty))
                Issue.record("expected an error")
            } catch let error as KioskError {
                #expect(error.isConnectivityFailure)
            }
            #expect(ContinuousClock.now - started < .seconds(2))
            #expect(await h.kiosk.connectivity.status.isOffline)
        }
    }

    @Test("Offline search answers from the store when the upstream is unreachable")
    func offlineSearchFallsBack() async throws {
        try await withHarness { h in
            _ = try await h.catalog.page(PageRequest(source: .rickandmorty))
            try await h.setFaults { $0.offline = true }
            let result = try await h.catalog.search(source: .rickandmorty, text: "morty")
            #expect(result.origin == .store)
            #expect(result.error?.isConnectivityFailure == true)
            #expect(result.items.contains { $0.title == "Morty Smith" })
        }
    }

    @Test("A search the upstream answers unreadably (malformed JSON, a body cut short) answers from the store, saying why", arguments: [
        FaultSettings(malformedRate: 1), FaultSettings(truncateRate: 1),
    ])
    func unreadableSearchFallsBack(faults: FaultSettings) async throws {
        try await withHarness { h in
            // Given Morty stored, and an upstream whose every answer then comes unreadable
            _ = try await h.catalog.page(PageRequest(source: .rickandmorty))
            try await h.setFaults { $0 = faults }
            // When Morty is searched for
            let result = try await h.catalog.search(source: .rickandmorty, text: "morty")
            // Then the store's matches are given, with what went wrong
            #expect(result.origin == .store && result.items.contains { $0.title == "Morty Smith" })
            let unreadable = switch result.error { case .malformedResponse?, .truncatedBody?: true; default: false }
            #expect(unreadable, "\(String(describing: result.error))")
        }
    }

    @Test("When the upstream comes back, connectivity reports online by itself, so the web app's poll can refresh")
    func reconnectIsNoticedWithoutARequest() async throws {
        try await withHarness { h in
            // Given a stale page read while the upstream is unreachable
            let request = PageRequest(source: .rickandmorty, page: 2)
            _ = try await h.catalog.page(request)
            await h.now.advance(by: .seconds(2 * 86400))
            try await h.setFaults { $0.offline = true }
            let offline = try await h.catalog.page(request)
            #expect(offline.isOffline)
            #expect(await h.kiosk.connectivityStatus().isOffline)

            // When the upstream comes back and nobody asks for anything
            try await h.setFaults { $0.offline = false }

            // Then the monitor's own probe notices within its first backoff, and the next read is fresh
            let started = ContinuousClock.now
            while await h.kiosk.connectivityStatus().isOffline, ContinuousClock.now - started < .seconds(10) {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(await h.kiosk.connectivityStatus() == .online)
            let update = try await h.catalog.page(request)
            #expect(update.isStale == false)
            #expect(update.error == nil)
        }
    }
}

extension KioskError {
    /// The URL text of an HTTP status error, for comparisons.
    var urlText: String? {
        if case .httpStatus(_, let url) = self { return url }
        return nil
    }
}
