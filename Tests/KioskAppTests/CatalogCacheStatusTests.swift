import Foundation
import KioskApp
import KioskCore
import KioskSources
import KioskStore
import KioskTestSupport
import Synchronization
import Testing

/// The decisions the catalog makes, in RFC 9211 terms, on every path a page takes: what the web app sends
/// as Cache-Status and what the request log records for answers from the store.
@Suite("Catalog decisions as Cache-Status")
struct CatalogCacheStatusTests {
    let request = PageRequest(source: .rickandmorty, page: 1)
    static let headers: HTTPHeaderFields = ["Content-Type": "application/json", "ETag": "\"p1\"", "Cache-Control": "max-age=600"]

    /// The Cache-Status values of the store answers a service reported for the request log.
    final class Recorder: Sendable {
        let values = Mutex<[String]>([])
        var all: [String] { values.withLock { $0 } }
    }

    /// A service over `upstream` on `clock`, reporting its store answers to `recorder`.
    static func service(_ upstream: ScriptedTransport, _ clock: ManualClock, recorder: Recorder? = nil) throws -> CatalogService {
        var record: (@Sendable (HTTPRequest, CacheStatus, KioskError?) -> Void)?
        if let recorder {
            record = { _, status, _ in recorder.values.withLock { $0.append(status.headerValue) } }
        }
        return CatalogService(sources: Sources.make(.live), database: try AppDatabase.inMemory(), transport: upstream,
                              now: clock.dateSource, recordAnswer: record)
    }

    /// The Cache-Status of each update a page request yields.
    static func statuses(_ service: CatalogService, _ request: PageRequest, policy: RefreshPolicy = .automatic) async throws -> [String] {
        var all: [String] = []
        for try await update in service.updates(for: request, policy: policy) { all.append(update.cacheStatus.headerValue) }
        return all
    }

    @Test("A page's life: a miss, a fresh hit, stale shown while a 304 renews it, a 503, offline, offline by choice, a forced refresh")
    func pageLife() async throws {
        // Given an upstream that sends a page fresh for 10 minutes, then confirms it, then fails twice
        let clock = ManualClock()
        let upstream = ScriptedTransport([
            .respond(200, headers: Self.headers, body: try CatalogServiceTests.cleanPage()),
            .respond(304, headers: Self.headers),
            .respond(503, body: #"{"error": "down"}"#),
            .fail(.offline(host: "rickandmortyapi.com")),
        ])
        let recorder = Recorder()
        let service = try Self.service(upstream, clock, recorder: recorder)

        // When nothing is stored: a miss, stored with its 600 s
        #expect(try await Self.statuses(service, request) == ["Kiosk;fwd=miss;fwd-status=200;ttl=600;stored;detail=network"])
        // When asked 100 s later: a hit with 500 s left
        await clock.advance(by: .seconds(100))
        #expect(try await Self.statuses(service, request) == ["Kiosk;hit;ttl=500;detail=fresh"])
        // When asked 100 s past its freshness: shown stale at once, then renewed by the 304
        await clock.advance(by: .seconds(600))
        #expect(try await Self.statuses(service, request) == [
            "Kiosk;hit;ttl=-100;detail=stale-while-revalidate",
            "Kiosk;fwd=stale;fwd-status=304;ttl=600;stored;detail=revalidated",
        ])
        // When stale again and the upstream answers 503: the stored copy, saying what came back
        await clock.advance(by: .seconds(700))
        #expect(try await Self.statuses(service, request) == [
            "Kiosk;hit;ttl=-100;detail=stale-while-revalidate",
            "Kiosk;fwd=stale;fwd-status=503;ttl=-100;detail=stale-on-error",
        ])
        // When the upstream cannot be reached: the stored copy, with no status (nothing answered)
        #expect(try await Self.statuses(service, request) == [
            "Kiosk;hit;ttl=-100;detail=stale-while-revalidate",
            "Kiosk;fwd=stale;ttl=-100;detail=offline",
        ])
        // When the caller says offline: a hit that never went forward
        #expect(try await Self.statuses(service, request, policy: .offline) == ["Kiosk;hit;ttl=-100;detail=offline"])
        #expect(upstream.callCount == 4)

        // Then every store answer was recorded with the same value the caller saw
        #expect(recorder.all == [
            "Kiosk;hit;ttl=500;detail=fresh",
            "Kiosk;hit;ttl=-100;detail=stale-while-revalidate",
            "Kiosk;hit;ttl=-100;detail=stale-while-revalidate",
            "Kiosk;fwd=stale;fwd-status=503;ttl=-100;detail=stale-on-error",
            "Kiosk;hit;ttl=-100;detail=stale-while-revalidate",
            "Kiosk;fwd=stale;ttl=-100;detail=offline",
            "Kiosk;hit;ttl=-100;detail=offline",
        ])
    }

    @Test("A forced refresh of a fresh page goes forward because the request asked (fwd=request)")
    func forcedRefresh() async throws {
        // Given a stored, fresh page
        let clock = ManualClock()
        let upstream = ScriptedTransport([.respond(200, headers: Self.headers, body: try CatalogServiceTests.cleanPage()),
                                          .respond(304, headers: Self.headers)])
        let service = try Self.service(upstream, clock)
        _ = try await service.page(request)
        await clock.advance(by: .seconds(60))
        // When it is refreshed by force
        // Then it shows at once (still fresh, so ttl is positive), then the 304 that the request asked for
        #expect(try await Self.statuses(service, request, policy: .force) == [
            "Kiosk;hit;ttl=540;detail=stale-while-revalidate",
            "Kiosk;fwd=request;fwd-status=304;ttl=600;stored;detail=revalidated",
        ])
    }

    @Test("What was not stored says so: no-store, a breakpoint's edit; a mock and a collapsed request say what they were",
          arguments: [
            ("no-store", "Kiosk;fwd=miss;fwd-status=200;detail=network"),
            ("edited", "Kiosk;fwd=miss;fwd-status=200;detail=edited"),
            ("mocked", "Kiosk;fwd=miss;fwd-status=200;ttl=600;stored;detail=mocked"),
            ("collapsed", "Kiosk;fwd=miss;fwd-status=200;ttl=600;stored;collapsed;detail=network"),
          ])
    func unusualAnswers(kind: String, header: String) async throws {
        // Given an upstream whose answer is of that kind
        let body = try CatalogServiceTests.cleanPage()
        let upstream = ScriptedTransport([.reply { request in
            var headers = Self.headers
            if kind == "no-store" { headers["Cache-Control"] = "no-store" }
            if kind == "mocked" { headers[HTTPResponse.mockMarkerHeader] = "1" }
            var response = HTTPResponse(status: 200, headers: headers, body: Data(body.utf8), url: request.url)
            response.isEdited = kind == "edited"
            response.isCollapsed = kind == "collapsed"
            return response
        }])
        let service = try Self.service(upstream, ManualClock())
        // When the page is asked for
        // Then its decision says what happened
        #expect(try await Self.statuses(service, request) == [header])
    }

    @Test("A stored item is a hit without ttl; a missing one a miss, stored; a refresh that fails keeps the item and says why")
    func items() async throws {
        // Given a page stored (so its items are), and an upstream that then fails
        let clock = ManualClock()
        let upstream = ScriptedTransport([.respond(200, headers: Self.headers, body: try CatalogServiceTests.cleanPage())],
                                         otherwise: .fail(.offline(host: "rickandmortyapi.com")))
        let service = try Self.service(upstream, clock)
        let page = try await service.page(request)
        let id = try #require(page.page.items.first?.itemID)
        // When the item is read, then refreshed while the upstream is unreachable
        let stored = try await service.item(source: .rickandmorty, itemID: id)
        let refreshed = try await service.item(source: .rickandmorty, itemID: id, policy: .force)
        // Then the first is a hit, and the second went forward by request and failed
        #expect(stored.cacheStatus.headerValue == "Kiosk;hit;detail=fresh")
        #expect(refreshed.cacheStatus.headerValue == "Kiosk;fwd=request;detail=offline")
        #expect(refreshed.item == stored.item)
    }

    @Test("An item detail edited at a breakpoint is shown as edited and never stored; the upstream's own answer then is")
    func editedItemIsNotStored() async throws {
        // Given an upstream whose first detail answer was edited on its way (a breakpoint), the second not
        let page = try #require(try JSONSerialization.jsonObject(with: Data(try CatalogServiceTests.cleanPage().utf8)) as? [String: Any])
        var character = try #require((page["results"] as? [[String: Any]])?.first)
        let id = String(describing: try #require(character["id"]))
        let original = try #require(character["name"] as? String)
        character["name"] = "Edited at a breakpoint"
        let edited = try JSONSerialization.data(withJSONObject: character)
        character["name"] = original
        let real = try JSONSerialization.data(withJSONObject: character)
        let detailsAsked = Mutex(0)
        let upstream = ScriptedTransport(always: .reply { request in
            // (the episodes the character links to are not this test's business: unreachable)
            guard request.url.path.hasSuffix("/character/\(id)") else { throw KioskError.offline(host: "rickandmortyapi.com") }
            let first = detailsAsked.withLock { count in count += 1; return count == 1 }
            var response = HTTPResponse(status: 200, headers: Self.headers, body: first ? edited : real, url: request.url)
            response.isEdited = first
            return response
        })
        let database = try AppDatabase.inMemory()
        let service = CatalogService(sources: Sources.make(.live), database: database, transport: upstream, now: ManualClock().dateSource)
        // When the item, never stored, is read
        let shown = try await service.item(source: .rickandmorty, itemID: id)
        // Then the edit is shown, says it was not stored, and the store still has nothing for it
        #expect(shown.item.title == "Edited at a breakpoint")
        #expect(shown.cacheStatus.headerValue == "Kiosk;fwd=miss;fwd-status=200;detail=edited")
        #expect(try database.item(source: .rickandmorty, itemID: id) == nil)
        // And read again, the upstream's own answer is fetched and stored
        let again = try await service.item(source: .rickandmorty, itemID: id)
        #expect(again.item.title == original)
        #expect(try database.item(source: .rickandmorty, itemID: id)?.title == original)
    }

    @Test("The store's own search is a hit; after an unreachable upstream it says it went forward and failed")
    func search() async throws {
        // Given a stored page and an upstream that cannot be reached
        let upstream = ScriptedTransport([.respond(200, headers: Self.headers, body: try CatalogServiceTests.cleanPage())],
                                         otherwise: .fail(.offline(host: "rickandmortyapi.com")))
        let service = try Self.service(upstream, ManualClock())
        _ = try await service.page(request)
        // When the store is searched (a short query), and the upstream is searched (a long one)
        let local = try await service.search(source: .rickandmorty, text: "ri")
        let remote = try await service.search(source: .rickandmorty, text: "rick")
        // Then the first is a hit, the second a miss that could not be answered, shown from the store
        #expect(local.cacheStatus.headerValue == "Kiosk;hit;detail=fresh")
        #expect(remote.origin == .store)
        #expect(remote.cacheStatus.headerValue == "Kiosk;fwd=miss;detail=offline")
    }
}
