import Foundation
import KioskApp
import KioskCore
import KioskSources
import KioskStore
import KioskTestSupport
import Testing

/// CatalogService in-process: the real sources and a real (in-memory) store, a scripted upstream, a manual clock.
@Suite("Catalog service over a scripted upstream")
struct CatalogServiceTests {
    let request = PageRequest(source: .rickandmorty, page: 1)

    /// An in-memory store holding one stale page of one Rick and Morty character, counting `totalItems` in `totalPages`; the
    /// time an hour past its freshness, the item, and the page as stored.
    func storedStalePage(totalItems: Int, totalPages: Int) throws -> (AppDatabase, Date, CatalogItem, Snapshot) {
        let database = try AppDatabase.inMemory()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let item = CatalogItem(source: .rickandmorty, itemID: "1", title: "Rick Sanchez", subtitle: "Alive · Human",
                               summary: "", imageURL: nil, detail: .dog(Dog(name: "x", description: "", age: 1, image: nil)))
        let stored = Snapshot(page: Page(request: request, items: [item], totalItems: totalItems, totalPages: totalPages),
                              metadata: SnapshotMetadata(fetchedAt: now.addingTimeInterval(-90_000), freshUntil: now.addingTimeInterval(-3600)))
        try database.saveSnapshot(stored)
        return (database, now, item, stored)
    }

    @Test("The store's search gives its best 50 matches and says when more match, with no count it does not know",
          arguments: [(60, true), (50, false)])
    func storeSearchSaysMoreMatch(stored: Int, more: Bool) async throws {
        // Given a stored page of `stored` characters all called Rick
        let results = (1...stored).map { #"{"id":\#($0),"name":"Rick \#($0)"}"# }.joined(separator: ",")
        let body = #"{"info":{"count":\#(stored),"pages":1},"results":[\#(results)]}"#
        let service = CatalogService(sources: Sources.make(.live), database: try AppDatabase.inMemory(),
                                     transport: ScriptedTransport([.respond(200, headers: ["Content-Type": "application/json"], body: body)]))
        _ = try await service.page(request)
        // When the store is searched for them (a short query is the store's)
        let found = try await service.search(source: .rickandmorty, text: "ri")
        // Then 50 are given; the count is known only when they are all
        #expect(found.origin == .store && found.items.count == 50)
        #expect(found.moreMatch == more)
        #expect(found.totalItems == (more ? nil : 50))
    }

    @Test("The store's search keeps a list's status and gender filters, as the upstream's does: only characters that match them")
    func storeSearchKeepsFilters() async throws {
        // Given stored characters called Rick, alive and dead, male and female
        let body = #"{"info":{"count":3,"pages":1},"results":["#
            + #"{"id":1,"name":"Rick A","status":"Alive","gender":"Male"},{"id":2,"name":"Rick B","status":"Dead","gender":"Male"},"#
            + #"{"id":3,"name":"Rick C","status":"Dead","gender":"Female"}]}"#
        let service = CatalogService(sources: Sources.make(.live), database: try AppDatabase.inMemory(),
                                     transport: ScriptedTransport([.respond(200, headers: ["Content-Type": "application/json"], body: body)]))
        _ = try await service.page(request)
        // When the store is searched for them within the dead (a short query is the store's), and the dead men offline
        let dead = try await service.search(source: .rickandmorty, text: "ri", filters: ["status": "dead"])
        let deadMen = try await service.search(source: .rickandmorty, text: "rick", filters: ["status": "Dead", "gender": "male"], policy: .offline)
        // Then only those match, and the count says so
        #expect(dead.items.map(\.itemID).sorted() == ["2", "3"] && dead.totalItems == 2)
        #expect(deadMen.items.map(\.itemID) == ["2"])
        #expect(try await service.search(source: .rickandmorty, text: "ri").items.count == 3)
    }

    @Test("An item's number written with leading zeros is that item: read from the store, starred as it is")
    func leadingZerosNameTheItem() async throws {
        // Given a stored, starred character 1, and an upstream that could answer nothing more
        let body = #"{"info":{"count":1,"pages":1},"results":[{"id":1,"name":"Rick Sanchez","status":"Alive","gender":"Male"}]}"#
        let upstream = ScriptedTransport([.respond(200, headers: ["Content-Type": "application/json"], body: body)])
        let service = CatalogService(sources: Sources.make(.live), database: try AppDatabase.inMemory(), transport: upstream)
        _ = try await service.page(request)
        try service.setFavorite(true, source: .rickandmorty, itemID: "1")
        // When it is opened as 01 (and 001)
        for written in ["01", "001"] {
            let item = try await service.item(source: .rickandmorty, itemID: written)
            // Then it is the stored character 1, starred, and the upstream is not asked
            #expect(item.item.itemID == "1" && item.origin == .store && item.isFavorite, "\(written)")
        }
        #expect(upstream.callCount == 1)
    }

    @Test("A page in which no item can be read is an error, and the stored page is kept")
    func everyItemBadKeepsStoredPage() async throws {
        // Given a stored, stale Rick and Morty page
        let (database, now, item, stored) = try storedStalePage(totalItems: 1, totalPages: 1)

        // When the upstream answers 200 with a valid envelope whose every item is malformed
        let body = #"{"info": {"count": 2, "pages": 1, "next": null, "prev": null}, "results": [{"id": 1, "name": null}, {"name": 7}]}"#
        let upstream = ScriptedTransport(always: .json(body))
        let service = CatalogService(sources: Sources.make(.live), database: database, transport: upstream, now: { now })
        let update = try await service.page(request)

        // Then that answer was fetched once and rejected: the stored page is shown with a malformed-response
        // error, and the store is unchanged
        #expect(upstream.callCount == 1)
        #expect(update.origin == .store)
        #expect(update.page.items == [item])
        if case .malformedResponse = update.error {} else { Issue.record("expected malformed, got \(String(describing: update.error))") }
        #expect(try database.snapshot(forKey: request.cacheKey) == stored)
    }

    @Test("An empty page within the upstream's own count is an error, and the stored page is kept; one that counts nothing is an empty page", arguments: [
        (#"{"info": {"count": 60, "pages": 3, "next": null, "prev": null}, "results": []}"#, true),
        (#"{"info": {"count": 0, "pages": 0, "next": null, "prev": null}, "results": []}"#, false),
    ])
    func emptyPageContradictingItsCount(body: String, refused: Bool) async throws {
        // Given a stored, stale Rick and Morty page
        let (database, now, item, stored) = try storedStalePage(totalItems: 60, totalPages: 3)
        // When the upstream answers a page with no item
        let service = CatalogService(sources: Sources.make(.live), database: database, transport: ScriptedTransport(always: .json(body)),
                                     now: { now })
        let update = try await service.page(request)
        if refused {
            // Then, counting 60 items in 3 pages, it is refused: the stored page stays, shown with why
            #expect(update.origin == .store && update.page.items == [item])
            #expect(update.error?.description.contains("the page brings no item, though the upstream counts 60 in all") == true)
            #expect(try database.snapshot(forKey: request.cacheKey) == stored)
        } else {
            // Or, counting none, the catalog is empty now: so it is shown
            #expect(update.origin == .network && update.page.items.isEmpty && update.error == nil)
        }
    }

    @Test("A page of thousands of items (a broken or hostile upstream's) is refused, and the stored page is kept")
    func hugePageRefused() async throws {
        // Given a stored, stale Rick and Morty page
        let (database, now, item, stored) = try storedStalePage(totalItems: 1, totalPages: 1)
        // When the upstream answers with 10,000 characters on it
        let results = (1...10_000).map { #"{"id":\#($0),"name":"Rick \#($0)"}"# }.joined(separator: ",")
        let body = #"{"info":{"count":10000,"pages":1,"next":null,"prev":null},"results":[\#(results)]}"#
        let service = CatalogService(sources: Sources.make(.live), database: database, transport: ScriptedTransport(always: .json(body)),
                                     now: { now })
        let update = try await service.page(request)
        // Then the stored page is shown, saying why the answer was not taken, and the store is unchanged
        #expect(update.origin == .store && update.page.items == [item])
        #expect(update.error?.description.contains("the page brings 10000 items, more than the 1000 a page of Kiosk holds") == true,
                "\(String(describing: update.error))")
        #expect(try database.snapshot(forKey: request.cacheKey) == stored)
    }

    @Test("A sync stops a list whose page brings nothing new, saying so, though the upstream counts a million pages")
    func syncStopsOnRepeatedPages() async throws {
        // Given an upstream that says it has a million pages and answers the same one for each
        var document = try #require(try JSONSerialization.jsonObject(with: Data(try Self.cleanPage().utf8)) as? [String: Any])
        document["info"] = ["count": 20_000_000, "pages": 1_000_000, "next": NSNull(), "prev": NSNull()]
        let body = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
        let upstream = ScriptedTransport(always: .json(body))
        let database = try AppDatabase.inMemory()
        let service = CatalogService(sources: Sources.make(.live), database: database, transport: upstream,
                                     now: { Date(timeIntervalSince1970: 1_800_000_000) })
        // When the catalog is synced
        let report = try await service.sync(.rickandmorty, concurrency: 4) { _ in }
        // Then it stopped after a few pages (the first, and those already on the wire when the second came back), saying why
        #expect(upstream.callCount <= 6, "\(upstream.callCount) requests")
        #expect(report.failures.contains { $0.message.contains("brings no item the pages before it did not") && $0.message.contains("1000000 pages") },
                "\(report.failures)")
        // And the repeats were not kept as pages 2 and on: page 1 is the one stored, and the report counts its items alone
        #expect(try database.snapshot(forKey: request.cacheKey) != nil)
        for number in 2...upstream.callCount {
            #expect(try database.snapshot(forKey: PageRequest(source: .rickandmorty, page: number).cacheKey) == nil, "page \(number)")
        }
        let kept = try database.snapshot(forKey: request.cacheKey)?.page.items.count
        #expect(report.updatedPages == 1 && report.items == kept)
        // And the report names page 2, the first page that repeats, however the pages on the wire came back, and its
        // counts add up: each page counted was updated, unchanged or failed
        #expect(report.failures.map(\.page) == ["rickandmorty page 2"], "\(report.failures)")
        #expect(report.pages == report.updatedPages + report.unchangedPages + report.failures.count, "\(report)")
    }

    @Test("A sync stops a list whose pages come empty though the upstream counts a million, as at a repeat")
    func syncStopsOnEmptyPages() async throws {
        // Given an upstream whose first page is whole, and every other one empty, though it counts a million pages
        var document = try #require(try JSONSerialization.jsonObject(with: Data(try Self.cleanPage().utf8)) as? [String: Any])
        document["info"] = ["count": 20_000_000, "pages": 1_000_000, "next": NSNull(), "prev": NSNull()]
        let first = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
        document["results"] = [Any]()
        let empty = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
        let upstream = ScriptedTransport([.json(first)], otherwise: .json(empty))
        let service = CatalogService(sources: Sources.make(.live), database: try AppDatabase.inMemory(), transport: upstream,
                                     now: { Date(timeIntervalSince1970: 1_800_000_000) })
        // When the catalog is synced
        let report = try await service.sync(.rickandmorty, concurrency: 4) { _ in }
        // Then it stopped after the pages on the wire, saying why once
        #expect(upstream.callCount <= 6, "\(upstream.callCount) requests")
        #expect(report.failures.count == 1 && report.failures.first?.message.contains("brings no item the pages before it did not") == true,
                "\(report.failures)")
        // And it names page 2, the first empty one, and its counts add up
        #expect(report.failures.map(\.page) == ["rickandmorty page 2"], "\(report.failures)")
        #expect(report.pages == report.updatedPages + report.unchangedPages + report.failures.count, "\(report)")
    }

    /// A Rick and Morty page of 20 characters named `Character first…first+19`, with ids `id(n)`, of 2 pages in all.
    static func numberedPage(from first: Int, id: (Int) -> Int) -> String {
        let results = (first..<first + 20).map { #"{"id":\#(id($0)),"name":"Character \#($0)","status":"Alive","species":"Human"}"# }
        return #"{"info":{"count":40,"pages":2,"next":null,"prev":null},"results":[\#(results.joined(separator: ","))]}"#
    }

    /// A transport answering each Rick and Morty page with `pages[n]`.
    static func paged(_ pages: [Int: String]) -> ScriptedTransport {
        ScriptedTransport([], otherwise: .reply { request in
            let number = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "page" }?.value
            let body = pages[Int(number ?? "1") ?? 1] ?? pages[1]!
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8), url: request.url)
        })
    }

    @Test("A sync refuses a page whose every item the pages before it show, before storing it: page 1's items keep their own content though page 2 reuses their ids")
    func syncRefusesReusedIDs() async throws {
        // Given an upstream whose two pages give each of their 20 characters the id 7 (Characters 1–20, then 21–40)
        let upstream = Self.paged([1: Self.numberedPage(from: 1) { _ in 7 }, 2: Self.numberedPage(from: 21) { _ in 7 }])
        let database = try AppDatabase.inMemory()
        let service = CatalogService(sources: Sources.make(.live), database: database, transport: upstream,
                                     now: { Date(timeIntervalSince1970: 1_800_000_000) })
        // When the catalog is synced
        let report = try await service.sync(.rickandmorty, concurrency: 2) { _ in }
        // Then page 2 is the failure, and nothing of it was stored: page 1 reads Characters 1–20 as they came
        #expect(report.failures.map(\.page) == ["rickandmorty page 2"], "\(report.failures)")
        let first = try #require(try database.snapshot(forKey: request.cacheKey))
        #expect(first.page.items.map(\.title) == (1...20).map { "Character \($0)" })
        #expect(try database.snapshot(forKey: PageRequest(source: .rickandmorty, page: 2).cacheKey) == nil)
    }

    @Test("A later page answered with the pages before it is refused when read too: its good stored copy stays, shown with why")
    func repeatedPageKeepsStoredCopy() async throws {
        // Given pages 1 and 2 stored as the upstream gave them (Characters 1–20, 21–40)
        let database = try AppDatabase.inMemory()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let good = CatalogService(sources: Sources.make(.live), database: database,
                                  transport: Self.paged([1: Self.numberedPage(from: 1) { $0 }, 2: Self.numberedPage(from: 21) { $0 }]),
                                  now: { start })
        let second = PageRequest(source: .rickandmorty, page: 2)
        _ = try await good.page(request)
        let stored = try await good.page(second)
        // When, a day later, the upstream answers page 2 with page 1 and the reader asks for page 2
        let service = CatalogService(sources: Sources.make(.live), database: database,
                                     transport: Self.paged([1: Self.numberedPage(from: 1) { $0 }, 2: Self.numberedPage(from: 1) { $0 }]),
                                     now: { start.addingTimeInterval(86_400) })
        let update = try await service.page(second)
        // Then the stored page 2 is shown, saying the answer repeated the pages before it, and the store still holds it
        #expect(update.origin == .store && update.page.items.map(\.title) == stored.page.items.map(\.title))
        #expect(update.error?.description.contains("the page brings only items the pages before it show") == true, "\(String(describing: update.error))")
        #expect(try database.snapshot(forKey: second.cacheKey)?.page.items.map(\.title) == (21...40).map { "Character \($0)" })
    }

    /// The Rick and Morty fixture without its unreadable character: a page every item of which reads.
    static func cleanPage() throws -> String {
        var document = try #require(try JSONSerialization.jsonObject(with: Fixture.data("rickandmorty-characters.json")) as? [String: Any])
        let results = try #require(document["results"] as? [[String: Any]])
        document["results"] = results.filter { $0["name"] is String }
        return String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
    }

    @Test("A 304 to a request that named no validator confirms nothing: the stored page is kept as it was, and the answer said wrong")
    func unaskedNotModified() async throws {
        // Given a page stored from an answer without validators
        let clock = ManualClock()
        let upstream = ScriptedTransport([.respond(200, headers: ["Content-Type": "application/json"], body: try Self.cleanPage()),
                                          .respond(304)])
        let database = try AppDatabase.inMemory()
        let service = CatalogService(sources: Sources.make(.live), database: database, transport: upstream, now: clock.dateSource)
        _ = try await service.page(request)
        let stored = try #require(try database.snapshot(forKey: request.cacheKey))
        // When it is refreshed and the upstream answers 304 though nothing was asked conditionally
        await clock.advance(by: .seconds(60))
        let update = try await service.page(request, policy: .force)
        // Then the stored page is shown with an error, never said confirmed, and its freshness is not renewed
        #expect(update.origin != .notModified && update.error != nil, "\(update.origin) \(String(describing: update.error))")
        #expect(try database.snapshot(forKey: request.cacheKey)?.metadata == stored.metadata)
    }

    @Test("A 304 that says nothing of freshness renews the stored answer's own lifetime (max-age=0 stays to revalidate), not the default")
    func notModifiedKeepsStoredLifetime() async throws {
        // Given a page stored with max-age=0 and an ETag
        let clock = ManualClock()
        let upstream = ScriptedTransport([
            .respond(200, headers: ["Content-Type": "application/json", "ETag": "\"v1\"", "Cache-Control": "max-age=0"], body: try Self.cleanPage()),
            .respond(304, headers: ["ETag": "\"v1\""]),
        ])
        let database = try AppDatabase.inMemory()
        let service = CatalogService(sources: Sources.make(.live), database: database, transport: upstream, now: clock.dateSource)
        _ = try await service.page(request)
        // When it is revalidated and the 304 carries only the ETag
        await clock.advance(by: .seconds(60))
        let update = try await service.page(request, policy: .force)
        // Then it is confirmed, and fresh for no longer than it was: its next read asks again
        #expect(update.origin == .notModified)
        let metadata = try #require(try database.snapshot(forKey: request.cacheKey)?.metadata)
        #expect(metadata.freshUntil == metadata.fetchedAt, "\(metadata)")
    }

    @Test("A page is fetched once, answered from the store while fresh, and revalidated with its ETag when stale")
    func fetchStoreRevalidate() async throws {
        // Given an upstream that sends a clean Rick and Morty page with an ETag, then confirms it with a 304
        let clock = ManualClock()
        let upstream = ScriptedTransport([
            .respond(200, headers: ["Content-Type": "application/json", "ETag": "\"page-1\""], body: try Self.cleanPage()),
            .respond(304),
        ])
        let database = try AppDatabase.inMemory()
        let service = CatalogService(sources: Sources.make(.live), database: database, transport: upstream,
                                     now: clock.dateSource)

        // When the page is asked for with nothing stored
        let first = try await service.page(request)
        // Then it comes from the network, whole, and is stored
        #expect(first.origin == .network)
        #expect(first.page.items.first?.title == "Rick Sanchez")
        #expect(first.page.skipped.isEmpty)
        #expect(try database.snapshot(forKey: request.cacheKey)?.page.items == first.page.items)

        // When it is asked for again within Rick and Morty's 24 hours
        await clock.advance(by: .seconds(3600))
        let again = try await service.page(request)
        // Then the store answers and the upstream is not asked
        #expect(again.origin == .store && !again.isStale)
        #expect(upstream.callCount == 1)

        // When a day has passed
        await clock.advance(by: .seconds(86_400))
        let revalidated = try await service.page(request)
        // Then the upstream is asked with the stored ETag, its 304 renews the page, and the items are the same
        #expect(upstream.callCount == 2)
        #expect(upstream.requests.last?.headers["If-None-Match"] == "\"page-1\"")
        #expect(revalidated.origin == .notModified && !revalidated.isStale)
        #expect(revalidated.page.items == first.page.items)
        #expect(try database.snapshot(forKey: request.cacheKey)?.metadata.isFresh(at: clock.date) == true)
    }

    @Test("A page with an unreadable item is shown and stored, but stale and without validators, so it is fetched again in full")
    func partlyBadPageIsFetchedAgain() async throws {
        // Given an upstream that sends the Rick and Morty fixture, whose one character has a null name, with an ETag
        let clock = ManualClock()
        let answer = ScriptedTransport.Step.respond(200, headers: ["Content-Type": "application/json", "ETag": "\"page-1\""],
                                                    body: Fixture.text("rickandmorty-characters.json"))
        let upstream = ScriptedTransport([answer, answer])
        let service = CatalogService(sources: Sources.make(.live), database: try AppDatabase.inMemory(), transport: upstream,
                                     now: clock.dateSource)

        // When the page is asked for
        let first = try await service.page(request)
        // Then the readable characters are shown and the unreadable one is reported by its path
        #expect(first.origin == .network && first.page.items.first?.title == "Rick Sanchez")
        #expect(first.page.skipped.map(\.path).allSatisfy { $0.hasPrefix("results[") } && first.page.skipped.count == 1)

        // When it is asked for again a second later
        await clock.advance(by: .seconds(1))
        let again = try await service.page(request)
        // Then the upstream is asked again, unconditionally, rather than trusting the partial page
        #expect(upstream.callCount == 2)
        #expect(upstream.requests.last?.headers["If-None-Match"] == nil)
        #expect(again.page.items == first.page.items)
    }

    /// Every update a page request yields, in order.
    static func updates(_ service: CatalogService, _ request: PageRequest) async throws -> [CatalogUpdate] {
        var all: [CatalogUpdate] = []
        for try await update in service.updates(for: request) { all.append(update) }
        return all
    }

    @Test("A stale page the upstream marked must-revalidate waits for its revalidation instead of showing stale first")
    func mustRevalidateWaits() async throws {
        // Given a page stored with `max-age=60, must-revalidate` and an upstream that confirms it with a 304
        let clock = ManualClock()
        let headers: HTTPHeaderFields = ["Content-Type": "application/json", "ETag": "\"p1\"",
                                         "Cache-Control": "max-age=60, must-revalidate"]
        let upstream = ScriptedTransport([.respond(200, headers: headers, body: try Self.cleanPage()),
                                          .respond(304, headers: headers)])
        let service = CatalogService(sources: Sources.make(.live), database: try AppDatabase.inMemory(), transport: upstream,
                                     now: clock.dateSource)
        _ = try await service.page(request)

        // When it is asked for two minutes later, while the upstream answers
        await clock.advance(by: .seconds(120))
        let updates = try await Self.updates(service, request)

        // Then the one update is the revalidated page: the stale copy was never shown first
        #expect(updates.map(\.origin) == [.notModified])
        #expect(updates.first?.isStale == false)
        #expect(upstream.callCount == 2)
    }

    @Test("Within its stale-while-revalidate window a stale page shows at once; past it, the page waits")
    func staleWhileRevalidateWindow() async throws {
        // Given a page stored with `max-age=60, stale-while-revalidate=30`, each revalidation confirmed by a 304
        let clock = ManualClock()
        let headers: HTTPHeaderFields = ["Content-Type": "application/json", "ETag": "\"p1\"",
                                         "Cache-Control": "max-age=60, stale-while-revalidate=30"]
        let upstream = ScriptedTransport([.respond(200, headers: headers, body: try Self.cleanPage())],
                                         otherwise: .respond(304, headers: headers))
        let service = CatalogService(sources: Sources.make(.live), database: try AppDatabase.inMemory(), transport: upstream,
                                     now: clock.dateSource)
        _ = try await service.page(request)

        // When it is asked for 70 s later (10 s into the window)
        await clock.advance(by: .seconds(70))
        let within = try await Self.updates(service, request)
        // Then the stale copy shows first, then the revalidated one
        #expect(within.map(\.origin) == [.store, .notModified])
        #expect(within.first?.isStale == true)

        // When it is asked for 100 s after that renewal (40 s past freshness, past the window)
        await clock.advance(by: .seconds(100))
        let past = try await Self.updates(service, request)
        // Then only the revalidated page is shown
        #expect(past.map(\.origin) == [.notModified])
    }

    @Test("A must-revalidate page whose revalidation fails is still shown, with the reason, never lost")
    func mustRevalidateFailureFallsBack() async throws {
        // Given a page stored with `no-cache` and an upstream that then fails with a 503
        let clock = ManualClock()
        let upstream = ScriptedTransport([
            .respond(200, headers: ["Content-Type": "application/json", "Cache-Control": "no-cache"], body: try Self.cleanPage()),
            .respond(503, body: #"{"error": "down"}"#),
        ])
        let service = CatalogService(sources: Sources.make(.live), database: try AppDatabase.inMemory(), transport: upstream,
                                     now: clock.dateSource)
        let first = try await service.page(request)

        // When it is asked for again
        await clock.advance(by: .seconds(5))
        let updates = try await Self.updates(service, request)

        // Then the stored page is the one answer, marked stale with the upstream's failure
        #expect(updates.count == 1)
        #expect(updates.first?.origin == .store)
        #expect(updates.first?.page.items == first.page.items)
        #expect(updates.first?.error != nil)
    }
}
