import Foundation
import KioskApp
import KioskCore
import KioskDemoUpstream
@testable import KioskStore
import GRDB
import KioskTestSupport
import Testing

@Suite("Catalogs end to end over the demo upstream", .serialized)
struct CatalogTests {
    @Test("Rick and Morty lists 20 characters a page over 42 pages, and the last page has the remaining 6")
    func rickAndMortyPaging() async throws {
        try await withHarness { h in
            // When the first and last pages are listed
            let first = try await h.catalog.page(PageRequest(source: .rickandmorty, page: 1))
            let last = try await h.catalog.page(PageRequest(source: .rickandmorty, page: 42))

            // Then the counts match the real API's shape and order is kept
            #expect(first.origin == .network)
            #expect(first.page.items.count == 20)
            #expect(first.page.totalPages == 42)
            #expect(first.page.totalItems == 826)
            #expect(first.page.items.first?.title == "Rick Sanchez")
            #expect(first.page.items.map(\.itemID) == (1...20).map(String.init))
            #expect(last.page.items.count == 6)
            #expect(!last.page.hasNext)
        }
    }

    @Test("A page past the end is a clear not-found error and stores nothing")
    func pastTheEnd() async throws {
        try await withHarness { h in
            let error = await #expect(throws: KioskError.self) {
                try await h.catalog.page(PageRequest(source: .rickandmorty, page: 43))
            }
            if case .notFound? = error {} else { Issue.record("expected not found, got \(String(describing: error))") }
            let stored = try h.database.snapshot(forKey: PageRequest(source: .rickandmorty, page: 43).cacheKey)
            #expect(stored == nil)
        }
    }

    @Test("Page 0 is refused before any request is made")
    func pageZero() async throws {
        try await withHarness { h in
            await h.demo.resetRequestCounts()
            #expect(throws: KioskError.self) { try h.catalog.normalize(PageRequest(source: .marvel, page: 0)) }
            await #expect(throws: KioskError.self) { try await h.catalog.page(PageRequest(source: .marvel, page: 0)) }
            #expect(await h.demo.requestCount(pathPrefix: "/") == 0)
        }
    }

    @Test("Marvel pages by offset with a verified hash and carries the attribution")
    func marvelPaging() async throws {
        try await withHarness { h in
            let first = try await h.catalog.page(PageRequest(source: .marvel, page: 1))
            let second = try await h.catalog.page(PageRequest(source: .marvel, page: 2))
            #expect(first.page.items.count == 20)
            #expect((first.page.totalItems ?? 0) >= 150)
            #expect(first.page.attribution?.contains("Marvel") == true)
            #expect(Set(first.page.items.map(\.itemID)).isDisjoint(with: second.page.items.map(\.itemID)))
        }
    }

    @Test("NYT lists 20 ranked articles for a kind and period, in rank order")
    func nytRanked() async throws {
        try await withHarness { h in
            let update = try await h.catalog.page(PageRequest(source: .nyt, filters: ["kind": "emailed", "period": "30"]))
            #expect(update.page.items.count == 20)
            let ranks = update.page.items.compactMap { item -> Int? in
                if case .article(let article) = item.detail { return article.rank }
                return nil
            }
            #expect(ranks == Array(1...20))
            // Order survives the store round trip
            let stored = try await h.catalog.page(PageRequest(source: .nyt, filters: ["kind": "emailed", "period": "30"]))
            #expect(stored.origin == .store)
            #expect(stored.page.items.map(\.itemID) == update.page.items.map(\.itemID))
        }
    }

    @Test("Dogs lists the five dogs")
    func dogsList() async throws {
        try await withHarness { h in
            let update = try await h.catalog.page(PageRequest(source: .dogs))
            #expect(update.page.items.count == 5)
            #expect(update.page.items.allSatisfy { $0.subtitle.hasPrefix("Almost") })
        }
    }

    @Test("Details: Rick and Morty and Marvel fetch by id; NYT answers from the store; unknown ids are not found")
    func details() async throws {
        try await withHarness { h in
            let rick = try await h.catalog.item(source: .rickandmorty, itemID: "1")
            #expect(rick.item.title == "Rick Sanchez")
            #expect(rick.origin == .network)
            let again = try await h.catalog.item(source: .rickandmorty, itemID: "1")
            #expect(again.origin == .store)

            let marvelPage = try await h.catalog.page(PageRequest(source: .marvel))
            let hero = try #require(marvelPage.page.items.first)
            let detail = try await h.catalog.item(source: .marvel, itemID: hero.itemID, policy: .force)
            #expect(detail.item.title == hero.title)

            let articles = try await h.catalog.page(PageRequest(source: .nyt))
            let article = try #require(articles.page.items.first)
            #expect(try await h.catalog.item(source: .nyt, itemID: article.itemID).item == article)

            for (source, id) in [(SourceID.rickandmorty, "99999"), (.nyt, "nope")] {
                let error = await #expect(throws: KioskError.self) { try await h.catalog.item(source: source, itemID: id) }
                if case .notFound? = error {} else { Issue.record("\(source) \(id): expected not found, got \(String(describing: error))") }
            }
            // (A Marvel id that is not a number is refused before any request.)
            let malformed = await #expect(throws: KioskError.self) { try await h.catalog.item(source: .marvel, itemID: "abc") }
            if case .invalidRequest? = malformed {} else { Issue.record("expected invalid request, got \(String(describing: malformed))") }
        }
    }

    @Test("Search goes upstream for Rick and Morty and Marvel, and searches the store for NYT")
    func search() async throws {
        try await withHarness { h in
            let rick = try await h.catalog.search(source: .rickandmorty, text: "rick")
            #expect(rick.origin == .upstream)
            #expect(!rick.items.isEmpty)
            #expect(rick.items.allSatisfy { $0.title.localizedCaseInsensitiveContains("rick") })

            let spider = try await h.catalog.search(source: .marvel, text: "spi")
            #expect(spider.origin == .upstream)
            #expect(spider.items.allSatisfy { $0.title.lowercased().hasPrefix("spi") })

            let nothing = try await h.catalog.search(source: .rickandmorty, text: "zzzzqqq")
            #expect(nothing.items.isEmpty)
            #expect(nothing.error == nil)

            let articles = try await h.catalog.page(PageRequest(source: .nyt))
            let word = try #require(articles.page.items.first?.title.split(separator: " ").first(where: { $0.count > 4 }))
            let found = try await h.catalog.search(source: .nyt, text: String(word))
            #expect(found.origin == .store)
            #expect(found.items.contains { $0.itemID == articles.page.items.first?.itemID })
        }
    }

    @Test("Hostile search text never errors, and the store survives it whole")
    func hostileSearch() async throws {
        try await withHarness { h in
            // Given a stored page of Rick and Morty characters
            let request = PageRequest(source: .rickandmorty)
            let stored = try await h.catalog.page(request)
            let itemCount = try h.database.itemCount()
            try #require(itemCount >= 20)

            // When hostile text is searched for, in the store and upstream
            for text in ["\"", "*", "AND", "(", "rick) OR (", "NEAR(", "Mr. Poopy&butt", "'; DROP TABLE item; --", "🕺"] {
                let offline = try await h.catalog.search(source: .rickandmorty, text: text, policy: .offline)
                let online = try await h.catalog.search(source: .rickandmorty, text: text)
                // Then each search answers without an error
                #expect(offline.error == nil && online.error == nil, "\(text): \(String(describing: offline.error ?? online.error))")
            }

            // And the store still answers the page offline with the same items, and holds every item it had
            let after = try await h.catalog.page(request, policy: .offline)
            #expect(after.origin == .store)
            #expect(after.page.items == stored.page.items)
            #expect(try h.database.itemCount() == itemCount)
            // And full-text search over it still finds what it holds
            let rick = try await h.catalog.search(source: .rickandmorty, text: "sanchez", policy: .offline)
            #expect(rick.origin == .store && rick.items.contains { $0.title == "Rick Sanchez" })
            // And SQLite and its full-text index pass their integrity checks
            let table = ItemRecord.searchTableName
            #expect(try await h.database.writer.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") } == ["ok"])
            try await h.database.writer.write { try $0.execute(sql: "INSERT INTO \(table)(\(table)) VALUES('integrity-check')") }
        }
    }

    @Test("Favorites survive a refresh that replaces the page")
    func favoritesSurviveRefresh() async throws {
        try await withHarness { h in
            // Given a favorite on a stored page whose validators are gone, so a refresh cannot be a bodiless 304
            let request = PageRequest(source: .rickandmorty)
            let update = try await h.catalog.page(request)
            #expect(update.page.items.contains { $0.itemID == "2" })
            try h.catalog.setFavorite(true, source: .rickandmorty, itemID: "2")
            var snapshot = try #require(try h.database.snapshot(forKey: request.cacheKey))
            snapshot.metadata.validators = Validators()
            try h.database.renew(snapshot)

            // When the page is refreshed and the upstream's answer replaces the stored one
            let refreshed = try await h.catalog.page(request, policy: .force)
            #expect(refreshed.origin == .network)

            // Then the favorite is still there, with its item
            #expect(try h.catalog.favorites().map(\.itemID) == ["2"])
            #expect(try h.catalog.favorites().first?.title == update.page.items.first { $0.itemID == "2" }?.title)
            // And an item that is not stored cannot be made a favorite
            #expect(throws: KioskError.self) { try h.catalog.setFavorite(true, source: .rickandmorty, itemID: "77777") }
        }
    }
}
