import Foundation
import Hummingbird
import HummingbirdTesting
import KioskApp
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskWeb

@Suite("Web app routes over a real demo upstream")
struct WebRouteTests {
    @Test("The home page lists the four catalogs and Favorites, with the security headers")
    func home() async throws {
        try await withWeb { _, client in
            // Given a running web app
            // When the home page is requested
            let page = try await client.get("/")
            // Then it links every catalog and Favorites, loads the stylesheet and carries the headers
            #expect(page.status == .ok)
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            for path in ["/nyt", "/marvel", "/rickandmorty", "/dogs", "/favorites", StaticAssets.stylesheet.path] {
                #expect(page.body.contains("href=\"\(path)\""), "missing \(path)")
            }
            #expect(page.header("Content-Security-Policy") == SecurityHeaders.contentSecurityPolicy)
            #expect(page.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
            #expect(page.header("X-Content-Type-Options") == "nosniff")
            #expect(page.header("Referrer-Policy") == "same-origin")
            // And its only scripts are Kiosk's external files: no inline script, no inline style, no handler attributes
            #expect(page.body.components(separatedBy: "<script").count == 5)
            for script in [StaticAssets.deviceScript, StaticAssets.script, StaticAssets.offlineScript] {
                #expect(page.body.contains("<script src=\"\(script.path)\" defer></script>"))
            }
            #expect(!page.body.contains("style="))
            #expect(!page.body.contains(" onclick=") && !page.body.contains(" onerror="))
        }
    }

    @Test("Every catalog's list renders its first page with pictures through the image route")
    func lists() async throws {
        try await withWeb { harness, client in
            for source in SourceID.allCases {
                // Given a catalog
                // When its list is requested
                let page = try await client.get("/\(source.rawValue)")
                // Then it is the page the catalog serves, with freshness and lazy fixed-size images
                #expect(page.status == .ok, "\(source)")
                let update = try await harness.kiosk.catalog.page(PageRequest(source: source), policy: .offline)
                let first = try #require(update.page.items.first)
                #expect(page.body.contains(HTML.escape(first.title)), "\(source)")
                #expect(page.body.contains("href=\"/\(source.rawValue)/\(QueryString.encode(first.itemID))\""))
                #expect(page.body.contains(/Updated <time class="ago" datetime="[^"]+">just now<\/time>/))
                #expect(page.body.contains("src=\"/image?url=http"))
                #expect(page.body.contains("loading=\"lazy\""))
                #expect(page.body.contains("width=\""))
                #expect(page.body.contains("Data provided by Marvel") == (source == .marvel), "\(source)")
            }
        }
    }

    @Test("Rick and Morty pages have previous/next and windowed page-number links up to the last page")
    func paging() async throws {
        try await withWeb { _, client in
            // Given the Rick and Morty catalog
            // When page 5 is requested
            let page = try await client.get("/rickandmorty?page=5")
            // Then it links pages 1, 3..7 and the last, and the neighbours
            #expect(page.status == .ok)
            for number in [1, 3, 4, 6, 7] {
                let link = number == 1 ? "href=\"/rickandmorty\"" : "href=\"/rickandmorty?page=\(number)\""
                #expect(page.body.contains(link), "page \(number)")
            }
            #expect(page.body.contains("href=\"/rickandmorty?page=42\""))
            #expect(page.body.contains("href=\"/rickandmorty?page=4\" rel=\"prev\""))
            #expect(page.body.contains("href=\"/rickandmorty?page=6\" rel=\"next\""))
            #expect(page.body.contains("aria-current=\"page\">5<"))
            #expect(!page.body.contains("?page=20\""))
        }
    }

    @Test("Filters and search work from the URL, with a form that needs no JavaScript")
    func filtersAndSearch() async throws {
        try await withWeb { _, client in
            // Given the Rick and Morty and NYT catalogs
            // When filtered and searched through the query string
            let alive = try await client.get("/rickandmorty?status=alive&gender=female")
            let nyt = try await client.get("/nyt?kind=emailed&period=30")
            let search = try await client.get("/rickandmorty?q=rick+san")
            // Then the filtered pages render with the filter selected, and the search lists matches
            #expect(alive.status == .ok)
            #expect(alive.body.contains("<option value=\"alive\" selected>"))
            // (The & is escaped in the attribute, as it must be.)
            #expect(alive.body.contains("href=\"/rickandmorty?gender=female&amp;status=alive&amp;page=2\""))
            #expect(nyt.status == .ok)
            #expect(nyt.body.contains("<option value=\"emailed\" selected>"))
            #expect(search.status == .ok)
            #expect(search.body.contains("for “rick san”"))
            #expect(search.body.contains("Rick Sanchez"))
            #expect(search.body.contains("<form class=\"search\" method=\"get\""))
        }
    }

    @Test("Each kind of detail shows its own fields")
    func details() async throws {
        try await withWeb { harness, client in
            // Given every catalog listed once (NYT and dogs details come from the store)
            for source in SourceID.allCases { _ = try await client.get("/\(source.rawValue)") }
            let catalog = harness.kiosk.catalog
            func firstID(_ source: SourceID) async throws -> String {
                try #require(try await catalog.page(PageRequest(source: source), policy: .offline).page.items.first).itemID
            }
            // When each detail is requested
            let nyt = try await client.get("/nyt/\(try await firstID(.nyt))")
            let marvel = try await client.get("/marvel/\(try await firstID(.marvel))")
            let rick = try await client.get("/rickandmorty/1")
            let dog = try await client.get("/dogs/\(try await firstID(.dogs))")
            // Then each shows what the original app showed
            #expect(nyt.status == .ok)
            #expect(nyt.body.contains("Read the full article"))
            #expect(nyt.body.contains("target=\"_blank\" rel=\"noopener noreferrer\""))
            #expect(nyt.body.contains("class=\"keywords\""))
            #expect(marvel.status == .ok)
            #expect(marvel.body.contains("Comics ("))
            #expect(marvel.body.contains("Data provided by Marvel"))
            // And Marvel's credit goes wherever its characters are shown: on Favorites and Home once one is starred
            let home = try await client.get("/")
            #expect(!home.body.contains("Data provided by Marvel"))
            try catalog.setFavorite(true, source: .marvel, itemID: try await firstID(.marvel))
            #expect(try await client.get("/favorites").body.contains("Data provided by Marvel"))
            #expect(try await client.get("/").body.contains("Data provided by Marvel"))
            #expect(rick.status == .ok)
            #expect(rick.body.contains("Rick Sanchez"))
            #expect(rick.body.contains("<dd><span aria-hidden=\"true\">🕺 </span>Alive</dd>"))
            #expect(rick.body.contains("<dt>Episodes</dt>"))
            #expect(dog.status == .ok)
            #expect(dog.body.contains("Almost "))
        }
    }

    @Test("Favorites lists starred items across catalogs")
    func favorites() async throws {
        try await withWeb { harness, client in
            // Given a starred Rick and Morty character
            _ = try await client.get("/rickandmorty")
            try harness.kiosk.catalog.setFavorite(true, source: .rickandmorty, itemID: "1")
            // When the favorites page and JSON are requested
            let page = try await client.get("/favorites")
            let json = try await client.get("/api/favorites")
            // Then the character is there, linked to its detail
            #expect(page.status == .ok)
            #expect(page.body.contains("href=\"/rickandmorty/1\""))
            #expect(json.status == .ok)
            let items = try #require(try json.json()["items"] as? [[String: Any]])
            #expect(items.first?["itemID"] as? String == "1")
        }
    }

    @Test("The JSON API answers in the CLI's --json shapes")
    func jsonShapes() async throws {
        try await withWeb { _, client in
            // Given the running app
            // When a page, an item and a search are requested as JSON
            let page = try await client.get("/api/rickandmorty?page=2")
            let item = try await client.get("/api/rickandmorty/1")
            let search = try await client.get("/api/rickandmorty?q=morty")
            // Then they have the PageJSON, ItemJSON and SearchJSON keys
            #expect(page.status == .ok)
            #expect(page.header("Content-Type") == "application/json; charset=utf-8")
            let pageJSON = try page.json()
            // (every key there, null where Rick and Morty has none)
            #expect(Set(pageJSON.keys) == ["source", "page", "totalPages", "totalItems", "reportedTotal", "query", "filters", "items",
                                             "favorites", "skipped", "attribution", "status"])
            #expect(pageJSON["query"] is NSNull && pageJSON["attribution"] is NSNull)
            #expect(pageJSON["page"] as? Int == 2)
            #expect(pageJSON["totalPages"] as? Int == 42)
            let status = try #require(pageJSON["status"] as? [String: Any])
            #expect(Set(status.keys) == ["origin", "stale", "offline", "fetchedAt", "freshUntil", "ageSeconds", "error", "notStored"])
            let itemJSON = try item.json()
            // (what is not known is null, as docs/API.md shows it, never an absent key)
            #expect(Set(itemJSON.keys) == ["item", "favorite", "origin", "error", "linked"] && itemJSON["error"] is NSNull)
            #expect((itemJSON["item"] as? [String: Any])?["title"] as? String == "Rick Sanchez")
            let searchJSON = try search.json()
            #expect(Set(searchJSON.keys) == ["query", "origin", "items", "error", "page", "totalPages", "totalItems", "moreMatch"])
            #expect(searchJSON["error"] is NSNull)
            #expect(searchJSON["query"] as? String == "morty")
            // The count of every match, not of the page's
            let matches = try #require(searchJSON["totalItems"] as? Int)
            #expect(matches > (searchJSON["items"] as? [Any])?.count ?? 0 && (searchJSON["totalPages"] as? Int ?? 0) > 1)
        }
    }

    @Test("A Marvel detail hides an empty description and ends a long collection with a … tile")
    func marvelCollections() async throws {
        try await withWeb { harness, client in
            // Given a stored character with 45 comics (20 listed) and no description
            let comics = MarvelCollection(available: 45, items: (1...20).map { "Comic \($0)" })
            let character = MarvelCharacter(
                thumbnail: nil, modified: "", comics: comics, series: .empty, stories: .empty,
                events: MarvelCollection(available: 2, items: ["Event A", "Event B"]), links: [],
                attribution: "Data provided by Marvel. © 2026 MARVEL")
            try harness.kiosk.database.saveItems([CatalogItem(
                source: .marvel, itemID: "424242", title: "Test Hero", subtitle: "", summary: "", imageURL: nil,
                detail: .marvelCharacter(character))])
            // When its detail is requested
            let page = try await client.get("/marvel/424242")
            // Then each collection is titled with its total, long ones end with "…", and no empty description shows
            #expect(page.status == .ok)
            #expect(page.body.contains("<h2>Comics (45)</h2>"))
            #expect(page.body.contains("<li>Comic 20</li><li class=\"more\" aria-label=\"and more\">…</li>"))
            #expect(page.body.contains("<h2>Events (2)</h2>"))
            #expect(!page.body.contains("Event B</li><li class=\"more\""))
            #expect(!page.body.contains("class=\"abstract\""))
            #expect(page.body.contains("Data provided by Marvel. © 2026 MARVEL"))
        }
    }

    @Test("An empty page shows an empty state with a Retry link")
    func emptyState() async throws {
        try await withWeb { harness, client in
            // Given a fresh stored page with no items
            let request = PageRequest(source: .rickandmorty, filters: ["status": "dead", "gender": "genderless"])
            let fresh = SnapshotMetadata(fetchedAt: harness.now.date, freshUntil: harness.now.date.addingTimeInterval(3600))
            try harness.kiosk.database.saveSnapshot(Snapshot(page: Page(request: request, items: [], totalItems: 0,
                                                                       totalPages: 1), metadata: fresh))
            // When it is requested
            let page = try await client.get("/rickandmorty?status=dead&gender=genderless")
            // Then it says so and offers to retry (forcing a revalidation)
            #expect(page.status == .ok)
            #expect(page.body.contains("Nothing here."))
            #expect(page.body.contains("refresh=1\">Retry</a>"))
        }
    }
}

@Suite("Web application")
struct WebApplicationTests {
    @Test("buildApplication serves the app over a real socket on the configured address")
    func liveServer() async throws {
        let harness = try await Harness.start()
        do {
            // Given the application bound to a free loopback port
            let app = try buildApplication(kiosk: harness.kiosk, configuration: WebConfiguration(host: "127.0.0.1", port: 0))
            try await app.test(.live) { client in
                // When the home page and a list are requested over HTTP
                let home = try await client.get("/")
                let dogs = try await client.get("/dogs")
                // Then both are served, with the security headers
                #expect(home.status == .ok)
                #expect(home.header("Content-Security-Policy") == SecurityHeaders.contentSecurityPolicy)
                #expect(dogs.status == .ok)
                #expect(dogs.body.contains("Almost "))
            }
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    @Test("The default configuration binds loopback port 8080")
    func defaults() {
        let configuration = WebConfiguration()
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
    }
}
