import Foundation
import KioskApp
import KioskCore
import KioskDemoUpstream
import KioskNetwork
import KioskSources
import KioskStore
import KioskTestSupport
import Testing

/// A catalog page whose second item the demo upstream's bad-item fault breaks, and how Kiosk reports it.
struct BadItemCase: Sendable, CustomTestStringConvertible {
    var request: PageRequest
    /// Items on the clean page.
    var pageSize: Int
    /// The skipped item's JSON path as KioskSources reports it (relative to the document root).
    var issuePath: String

    var testDescription: String { request.source.rawValue }

    /// What the store and the page must say about the broken item: a string was expected where the upstream sent null.
    var issue: DecodingIssue { DecodingIssue(path: issuePath, message: "expected a string, found null") }

    static let all = [
        BadItemCase(request: PageRequest(source: .rickandmorty), pageSize: 20, issuePath: "results[1].name"),
        BadItemCase(request: PageRequest(source: .marvel), pageSize: 20, issuePath: "data.results[1].name"),
        BadItemCase(request: PageRequest(source: .nyt), pageSize: 20, issuePath: "results[1].title"),
        BadItemCase(request: PageRequest(source: .dogs), pageSize: 5, issuePath: "[1].dogName"),
    ]
}

/// `items` without the one at upstream position 1, the position the bad-item fault breaks.
private func withoutSecond(_ items: [CatalogItem]) -> [CatalogItem] {
    var remaining = items
    remaining.remove(at: 1)
    return remaining
}

@Suite("Tolerant, item-by-item decoding over the demo upstream", .serialized)
struct TolerantDecodingTests {
    @Test("A page with one malformed item shows the other items, reports the bad one by path and stores the good ones",
          arguments: BadItemCase.all)
    func oneBadItemIsSkipped(_ scenario: BadItemCase) async throws {
        try await withHarness(faults: FaultSettings(badItemRate: 1)) { h in
            // Given an upstream whose list responses have a null name in their second item, and nothing stored

            // When the page is listed
            let update = try await h.catalog.page(scenario.request)

            // Then the good items are shown from the network, with no error, and the bad one is reported
            #expect(update.origin == .network)
            #expect(update.error == nil)
            #expect(update.page.items.count == scenario.pageSize - 1)
            #expect(update.page.skipped == [scenario.issue])

            // And the stored snapshot holds exactly those items and the report
            let key = try h.catalog.normalize(scenario.request).cacheKey
            let stored = try #require(try h.database.snapshot(forKey: key))
            #expect(stored.page.items == update.page.items)
            #expect(stored.page.skipped == [scenario.issue])

            // When the fault clears and the page is fetched again (the bad page's ETag does not match the clean one)
            try await h.setFaults { $0.badItemRate = 0 }
            let clean = try await h.catalog.page(scenario.request, policy: .force)

            // Then the whole page comes back, and the items shown before were all of it but the second, in order
            #expect(clean.origin == .network)
            #expect(clean.page.skipped.isEmpty)
            let cleanStored = try #require(try h.database.snapshot(forKey: key))
            #expect(cleanStored.page.items.count == scenario.pageSize)
            #expect(withoutSecond(cleanStored.page.items) == stored.page.items)
        }
    }

    @Test("A stale page revalidated by a response with one bad item shows its good items but stays stale",
          arguments: BadItemCase.all)
    func partiallyBadRevalidationReplacesSnapshot(_ scenario: BadItemCase) async throws {
        try await withHarness { h in
            // Given a clean page stored, then gone stale, and an upstream that now sends one bad item
            let first = try await h.catalog.page(scenario.request)
            #expect(first.page.items.count == scenario.pageSize)
            let key = try h.catalog.normalize(scenario.request).cacheKey
            let before = try #require(try h.database.snapshot(forKey: key))
            await h.now.advance(by: .seconds(2 * 86400))
            try await h.setFaults { $0.badItemRate = 1 }

            // When the page is requested
            var updates: [CatalogUpdate] = []
            for try await update in h.catalog.updates(for: scenario.request) { updates.append(update) }

            // Then the stale stored page comes first, then the new response: a partially bad page is still a
            // good response (200, valid envelope), so it is shown and stored, not treated as an error
            #expect(updates.count == 2)
            #expect(updates.first?.origin == .store)
            #expect(updates.first?.isRevalidating == true)
            let last = try #require(updates.last)
            #expect(last.origin == .network)
            #expect(last.error == nil)
            #expect(!last.isStale)
            if scenario.request.source == .dogs {
                // The dogs list is user data: a partial list must not cost a dog its place, so the user's
                // list stays as it was
                #expect(last.page.items == before.page.items)
            } else {
                #expect(last.page.items == withoutSecond(before.page.items))
            }
            #expect(last.page.skipped == [scenario.issue])

            // And the snapshot holds the new response's good items and report, but is stale at once and
            // keeps no validator, so the next request fetches the page in full again
            let after = try #require(try h.database.snapshot(forKey: key))
            #expect(after.page.items == withoutSecond(before.page.items))
            #expect(after.page.skipped == [scenario.issue])
            #expect(!after.metadata.isFresh(at: h.now.date))
            #expect(after.metadata.validators.isEmpty)
        }
    }
}
