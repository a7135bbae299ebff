import Foundation
import Hummingbird
import HummingbirdTesting
import KioskCore
import KioskDemoUpstream
import KioskTestSupport
import Testing
@testable import KioskWeb

@Suite("Cache-Status on every catalog answer")
struct WebCacheStatusTests {
    /// Kiosk's Cache-Status of an answer, checked to be in RFC 8941's canonical form (it reads back and
    /// is written again identically).
    static func status(_ fetched: Fetched, sourceLocation: SourceLocation = #_sourceLocation) throws -> CacheStatus {
        let value = try #require(fetched.header("Cache-Status"), sourceLocation: sourceLocation)
        let status = try #require(CacheStatus(headerValue: value), sourceLocation: sourceLocation)
        #expect(status.headerValue == value, sourceLocation: sourceLocation)
        return status
    }

    @Test("A list's first answer is a miss stored for its max-age; then pages, the page cache and HEAD are hits with the ttl left")
    func lists() async throws {
        try await withWeb { harness, client in
            // Given nothing stored
            // When the JSON API asks for a page
            let api = try await client.get("/api/rickandmorty")
            // Then it went forward as a miss, the demo's 200 was stored for its max-age of a day
            #expect(api.header("Cache-Status") == "Kiosk;fwd=miss;fwd-status=200;ttl=86400;stored;detail=network")
            // When the page is shown a minute later, twice (the second from the rendered-page cache), and asked with HEAD
            await harness.now.advance(by: .seconds(60))
            let page = try await client.get("/rickandmorty")
            let cached = try await client.get("/rickandmorty")
            let head = try await client.head("/rickandmorty")
            // Then each is a fresh hit with the day less a minute left
            for answer in [page, cached, head] {
                #expect(answer.header("Cache-Status") == "Kiosk;hit;ttl=86340;detail=fresh")
            }
            // And an hour on, the page cache's answer counts the hour too
            await harness.now.advance(by: .seconds(3600))
            #expect(try await client.get("/rickandmorty").header("Cache-Status") == "Kiosk;hit;ttl=82740;detail=fresh")
        }
    }

    @Test("A stale page is shown stale while it revalidates; the API waits and says how it went forward")
    func stale() async throws {
        try await withWeb { harness, client in
            // Given a page stored a day and an hour ago
            _ = try await client.get("/api/rickandmorty")
            await harness.now.advance(by: .seconds(86_400 + 3600))
            // When it is shown
            let page = try await client.get("/rickandmorty")
            // Then it is a stale hit, an hour past its freshness, revalidating
            #expect(page.header("Cache-Status") == "Kiosk;hit;ttl=-3600;detail=stale-while-revalidate")
            // When that revalidation has ended and the API asks after two more days
            var waited = 0
            while try await harness.kiosk.catalog.page(PageRequest(source: .rickandmorty), policy: .offline).isStale, waited < 500 {
                try await Task.sleep(for: .milliseconds(10))
                waited += 1
            }
            await harness.now.advance(by: .seconds(2 * 86_400))
            let api = try Self.status(try await client.get("/api/rickandmorty"))
            // Then it went forward because its copy was stale, and stored what came back
            #expect(api.forward == .stale)
            #expect([CacheDecision.revalidated, .network].contains(api.decision))
            #expect(api.isStored && api.ttl == 86_400)
        }
    }

    @Test("Offline, the stored page is answered saying the request went forward and nothing came back")
    func offline() async throws {
        try await withWeb { harness, client in
            // Given a stored page gone stale, and an upstream that cannot be reached
            _ = try await client.get("/api/rickandmorty")
            await harness.now.advance(by: .seconds(86_400 + 10))
            try await harness.setOffline(true)
            // When the API asks for it
            let api = try await client.get("/api/rickandmorty")
            // Then it is the stored copy, ten seconds stale, with no fwd-status
            #expect(api.status == .ok)
            #expect(api.header("Cache-Status") == "Kiosk;fwd=stale;ttl=-10;detail=offline")
            // And once Kiosk knows it is offline, a page is answered from the store without asking (a hit)
            let page = try await client.get("/rickandmorty")
            #expect(page.header("Cache-Status") == "Kiosk;hit;ttl=-10;detail=offline")
        }
    }

    @Test("An item: a miss when never stored, a hit afterwards, a refresh by request; favorites are hits")
    func itemsAndFavorites() async throws {
        try await withWeb { _, client in
            // Given an item never listed
            // When it is asked for, then asked again, then refreshed
            let first = try await client.get("/api/rickandmorty/500")
            let again = try await client.get("/rickandmorty/500")
            let refreshed = try await client.get("/rickandmorty/500?refresh=1")
            // Then: a miss, stored; a hit (items keep no lifetime, so no ttl); forwarded because the request asked
            #expect(first.header("Cache-Status") == "Kiosk;fwd=miss;fwd-status=200;stored;detail=network")
            #expect(again.header("Cache-Status") == "Kiosk;hit;detail=fresh")
            #expect(refreshed.header("Cache-Status") == "Kiosk;fwd=request;fwd-status=200;stored;detail=network")
            // And the favorites, read from the store, are hits in HTML and JSON
            #expect(try await client.get("/favorites").header("Cache-Status") == "Kiosk;hit;detail=fresh")
            #expect(try await client.get("/api/favorites").header("Cache-Status") == "Kiosk;hit;detail=fresh")
        }
    }

    @Test("A search upstream is the decision on its results page; the store's own search is a hit")
    func searches() async throws {
        try await withWeb { _, client in
            // When Rick and Morty is searched upstream, and NYT (searched in the store) is searched
            let upstream = try await client.get("/api/rickandmorty?q=rick")
            _ = try await client.get("/api/nyt")
            let local = try await client.get("/nyt?q=the")
            // Then the first went forward as a miss; the second is a hit without a lifetime
            #expect(upstream.header("Cache-Status") == "Kiosk;fwd=miss;fwd-status=200;ttl=86400;stored;detail=network")
            #expect(local.status == .ok)
            #expect(local.header("Cache-Status") == "Kiosk;hit;detail=fresh")
        }
    }

    @Test("A picture's 304 to the browser carries the Cache-Status of the stored picture it stands for")
    func pictureNotModified() async throws {
        try await withWeb { harness, client in
            // Given a picture a listed item shows, fetched once
            let uri = try await harness.listedPictureURI()
            let first = try await client.get(uri)
            #expect(first.header("Cache-Status") == "Kiosk;fwd=miss;fwd-status=200;ttl=604800;stored;detail=network")
            // When the browser asks again with its ETag
            let etag = try #require(first.header("ETag"))
            let revalidated = try await client.get(uri, headers: [.ifNoneMatch: etag])
            // Then it is a 304 that says Kiosk answered from its memory cache
            #expect(revalidated.status == .notModified)
            #expect(revalidated.header("Cache-Status") == "Kiosk;hit;detail=fresh")
        }
    }

    @Test("Two identical requests at once: one goes upstream, the other is collapsed onto it")
    func collapsed() async throws {
        // Given an upstream slow enough for two requests to meet
        try await withWeb(faults: FaultSettings(latencyMilliseconds: 400, sources: [.rickandmorty])) { _, client in
            // When two API requests for the same page arrive together
            async let one = client.get("/api/rickandmorty?page=3")
            async let two = client.get("/api/rickandmorty?page=3")
            let statuses = try await [Self.status(one), Self.status(two)]
            // Then both went forward as misses, one of them collapsed onto the other
            #expect(statuses.allSatisfy { $0.forward == .miss && $0.forwardStatus == 200 && $0.isStored })
            #expect(statuses.filter(\.isCollapsed).count == 1)
        }
    }

    @Test("Answers Kiosk makes itself carry no Cache-Status", arguments: [
        "/", "/api/connectivity", "/api/openapi.json", "/debug", "/nowhere", "/api/nowhere", "/api/rickandmorty?page=0",
    ])
    func notOnOwnAnswers(uri: String) async throws {
        try await withWeb { _, client in
            let answer = try await client.get(uri)
            #expect(answer.header("Cache-Status") == nil, "\(uri)")
        }
    }
}
