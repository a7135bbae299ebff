import Foundation
import Hummingbird
import HummingbirdTesting
import KioskCore
import KioskStore
import KioskApp
import KioskTestSupport
import Testing
@testable import KioskWeb

@Suite("Web app: languages, live updates and the script's hooks")
struct WebEnhancementTests {
    @Test("Accept-Language picks Spanish, and the page says so in its lang and Content-Language")
    func acceptLanguage() async throws {
        try await withWeb { _, client in
            // Given a browser that prefers Spanish
            // When it asks for a list
            let page = try await client.get("/rickandmorty", headers: [.acceptLanguage: "es-ES,es;q=0.9,en;q=0.8"])
            // Then the interface is Spanish, and caches are told the page varies by language
            #expect(page.status == .ok)
            #expect(page.body.contains("<html lang=\"es\">"))
            #expect(page.header("Content-Language") == "es")
            #expect(page.header("Vary")?.contains("Accept-Language") == true)
            #expect(page.body.contains(">Buscar<"))
            #expect(page.body.contains(/Actualizado <time class="ago" datetime="[^"]+">ahora mismo<\/time>/))
            #expect(page.body.contains("<option value=\"alive\">Vivo</option>"))
            // And a browser preferring English, or something unsupported, gets English
            let english = try await client.get("/rickandmorty", headers: [.acceptLanguage: "fr-FR, en;q=0.5, es;q=0.1"])
            #expect(english.body.contains("<html lang=\"en\">"))
            let french = try await client.get("/", headers: [.acceptLanguage: "fr"])
            #expect(french.body.contains("<html lang=\"en\">"))
        }
    }

    @Test("An error page's title and chrome are in the page's language")
    func localizedErrorPages() async throws {
        try await withWeb { _, client in
            // When a Spanish and an English browser ask for a catalog that does not exist
            let spanish = try await client.get("/no-such-catalog", headers: [.acceptLanguage: "es"])
            let english = try await client.get("/no-such-catalog", headers: [.acceptLanguage: "en"])
            // Then each reads its own words
            #expect(spanish.status == .notFound && english.status == .notFound)
            #expect(spanish.body.contains("<h1>No encontrado</h1>") && spanish.body.contains("<title>No encontrado · Kiosk</title>"))
            #expect(spanish.body.contains("Volver a los catálogos"))
            #expect(english.body.contains("<h1>Not found</h1>") && english.body.contains("Back to the catalogs"))
        }
    }

    @Test("Accept-Language negotiation honours weights, q=0 and header order")
    func negotiation() {
        #expect(Language.preferred("es") == .es)
        #expect(Language.preferred("en-GB,es;q=0.9") == .en)
        #expect(Language.preferred("de, es;q=0.4, en;q=0.3") == .es)
        #expect(Language.preferred("es;q=0, en;q=0.1") == .en)
        #expect(Language.preferred("fr, de") == nil)
        #expect(Language.preferred(nil) == nil)
        #expect(Language.negotiate(cookie: "es", acceptLanguage: "en") == .es)
        #expect(Language.negotiate(cookie: "xx", acceptLanguage: "es") == .es)
        #expect(Language.negotiate(cookie: nil, acceptLanguage: nil) == .en)
    }

    @Test("The language switch is a CSRF-checked POST that sets a lasting cookie and returns to the page")
    func languageSwitch() async throws {
        try await withWeb { _, client in
            // Given a page with its token cookie
            let page = try await client.get("/dogs")
            let token = try issuedToken(page)
            #expect(page.body.contains("<form class=\"lang\" method=\"post\" action=\"/language\">"))
            // When Español is chosen from it
            let chosen = try await client.post("/language", form: [("csrf", token), ("lang", "es"), ("return", "/dogs")],
                                               cookie: token)
            // Then the choice is remembered for a year and the browser goes back to the page
            #expect(chosen.status == .seeOther)
            #expect(chosen.header("Location") == "/dogs")
            let cookie = try #require(chosen.header("Set-Cookie"))
            #expect(cookie.hasPrefix("kiosk_lang=es;") && cookie.contains("Max-Age=31536000"))
            // And with that cookie the page is Spanish even for an English browser
            let spanish = try await client.get("/dogs", headers: [.cookie: "kiosk_lang=es", .acceptLanguage: "en"])
            #expect(spanish.body.contains("<html lang=\"es\">"))
            #expect(spanish.body.contains(">Perros<"))
            // And without the token, or with an unknown language, nothing is set
            let forged = try await client.post("/language", form: [("lang", "es")], cookie: token)
            #expect(forged.status == .forbidden)
            #expect(forged.header("Set-Cookie")?.contains("kiosk_lang") != true)
            let unknown = try await client.post("/language", form: [("csrf", token), ("lang", "xx")], cookie: token)
            #expect(unknown.status == .badRequest)
        }
    }

    @Test("Dates, numbers and ages are localized")
    func localizedFormats() {
        #expect(Localized.date("2025-10-21", language: .es) == "21 oct 2025")
        #expect(Localized.date("2025-10-21", language: .en) == "Oct 21, 2025")
        #expect(Localized.date("2025-10-21T09:00:05-04:00", language: .es) == "21 oct 2025")
        #expect(Localized.date("not a date", language: .es) == "not a date")
        #expect(Localized.number(12345, language: .en) == "12,345")
        #expect(Localized.number(12345, language: .es) == "12.345")
        #expect(Localized.age(3 * 3600 + 5, language: .es) == "hace 3 h")
        #expect(Localized.age(3 * 3600 + 5, language: .en) == "3 h ago")
        #expect(Localized.age(2, language: .es) == "ahora mismo")
    }

    @Test("A stale page is shown at once and marked for the script; the wait header gets the revalidated one")
    func staleWhileRevalidate() async throws {
        try await withWeb { harness, client in
            // Given a stored page that has gone stale
            _ = try await client.get("/rickandmorty")
            await harness.now.advance(by: .seconds(2 * 86400))
            // When the list is requested
            let first = try await client.get("/rickandmorty")
            // Then the stored page comes back at once, saying a refresh is under way
            #expect(first.status == .ok)
            #expect(first.body.contains("data-revalidating=\"true\""))
            #expect(first.body.contains(/Updated <time class="ago" datetime="[^"]+">2 d ago<\/time>/))
            // And the script's follow-up request, with the wait header, gets the revalidated page
            let fresh = try await client.get("/rickandmorty", headers: [WebController.waitHeader: "1"])
            #expect(fresh.body.contains("data-revalidating=\"false\""))
            #expect(fresh.body.contains(/Updated <time class="ago" datetime="[^"]+">just now<\/time>/))
            #expect(!fresh.body.contains("class=\"stale\""))
        }
    }

    @Test("The connectivity endpoint reports offline after a failed request and online again after recovery")
    func connectivityEndpoint() async throws {
        try await withWeb { harness, client in
            // Given a running app
            let online = try await client.get("/api/connectivity")
            #expect(online.status == .ok)
            #expect(online.body.contains("\"online\" : true"))
            // When the upstream goes offline and a request notices
            _ = try await client.get("/dogs")
            try await harness.setOffline(true)
            _ = try await client.get("/dogs?refresh=1")
            // Then the endpoint says offline, with the time it started
            let offline = try await client.get("/api/connectivity")
            #expect(offline.body.contains("\"online\" : false"))
            #expect(offline.body.contains("\"offlineSince\""))
            // And when the upstream is back and a request succeeds, it says online again
            try await harness.setOffline(false)
            _ = try await client.get("/dogs?refresh=1")
            let back = try await client.get("/api/connectivity")
            #expect(back.body.contains("\"online\" : true"))
        }
    }

    @Test("Lists carry the script's hooks: results region, next page, row ids, search delay and a detail pane")
    func scriptHooks() async throws {
        try await withWeb { _, client in
            // Given the first Rick and Morty page and Marvel's
            let page = try await client.get("/rickandmorty")
            let marvel = try await client.get("/marvel")
            // Then the rows, next page and debounce are where the script looks for them
            #expect(page.body.contains("<main id=\"main\" data-view=\"list\" data-source=\"rickandmorty\">"))
            // (the list's changes said in a few words by a status of their own, never the rows read out)
            #expect(page.body.contains("<p id=\"results-said\" class=\"visually-hidden\" role=\"status\"></p><div id=\"results\""))
            #expect(!page.body.contains("aria-live"))
            #expect(page.body.contains("<ul class=\"items\" data-next=\"/rickandmorty?page=2\">"))
            #expect(page.body.contains("<li data-id=\"1\">"))
            #expect(page.body.contains("data-delay=\"500\""))
            #expect(page.body.contains("<aside id=\"detail-pane\""))
            #expect(marvel.body.contains("data-delay=\"1000\""))
            #expect(marvel.body.contains("<ul class=\"items grid\""))
            // And the last page has no next page
            let last = try await client.get("/rickandmorty?page=42")
            #expect(last.body.contains("<ul class=\"items\">"))
            #expect(!last.body.contains("data-next="))
        }
    }

    @Test("An item without a picture gets a placeholder of the same size")
    func placeholder() {
        let context = ViewContext(language: .es, csrfToken: "", path: "/", catalogs: Catalogs(sources: []))
        let html = Pages.image(nil, width: 64, height: 64, alt: "", context: context)
        #expect(html.rendered.contains("class=\"img-placeholder ph-64x64\""))
        #expect(html.rendered.contains("role=\"img\" aria-label=\"Imagen no disponible\""))
        #expect(Pages.image(URL(string: "javascript:alert(1)"), width: 64, height: 64, alt: "", context: context).rendered
            .contains("img-placeholder"))
        #expect(Pages.image(nil, width: 13, height: 17, alt: "", context: context).rendered.isEmpty)
    }
}

@Suite("Web app: search pages and filters")
struct WebSearchTests {
    @Test("An upstream search keeps the catalog's filters and pages like a list")
    func searchWithFiltersAndPages() async throws {
        try await withWeb { _, client in
            // Given Rick and Morty, searched for "rick" among the dead only
            let dead = try await client.get("/api/rickandmorty?q=rick&status=dead").json()
            let all = try await client.get("/api/rickandmorty?q=rick").json()
            // Then every result is dead, and there are fewer than without the filter
            let deadItems = try #require(dead["items"] as? [[String: Any]])
            let allPages = try #require(all["totalPages"] as? Int)
            #expect(!deadItems.isEmpty)
            for item in deadItems { #expect((item["subtitle"] as? String)?.hasPrefix("Dead") == true) }
            #expect(allPages >= 2)
            // And the HTML search page has a next page and page links that keep the query and filter
            let page = try await client.get("/rickandmorty?q=rick")
            #expect(page.body.contains("data-next=\"/rickandmorty?q=rick&amp;page=2\""))
            let second = try await client.get("/api/rickandmorty?q=rick&page=2").json()
            #expect(second["page"] as? Int == 2)
            #expect((second["items"] as? [[String: Any]])?.first?["itemID"] as? String
                    != (all["items"] as? [[String: Any]])?.first?["itemID"] as? String)
            // And a filter value that does not exist is a 400, even with a query
            let bad = try await client.get("/rickandmorty?q=rick&status=sleepy")
            #expect(bad.status == .badRequest)
        }
    }
}

@Suite("Web app: the page cache")
struct PageCacheTests {
    @Test("A cached page carries each browser's own token and is otherwise the page a fresh render gives")
    func tokensPerBrowser() async throws {
        try await withWeb { _, client in
            // Given a list page rendered once
            _ = try await client.get("/rickandmorty")
            let tokenA = String(repeating: "a", count: 64), tokenB = String(repeating: "b", count: 64)
            // When two browsers with different tokens ask for it
            let pageA = try await client.get("/rickandmorty", headers: [.cookie: "\(CSRFProtection.cookieName)=\(tokenA)"])
            let pageB = try await client.get("/rickandmorty", headers: [.cookie: "\(CSRFProtection.cookieName)=\(tokenB)"])
            // Then each page has only its own token, in every form, and the pages are the same otherwise
            #expect(pageA.body.components(separatedBy: tokenA).count == 22)
            #expect(!pageA.body.contains(tokenB) && !pageB.body.contains(tokenA))
            #expect(pageA.body.replacingOccurrences(of: tokenA, with: tokenB) == pageB.body)
            #expect(!pageA.body.contains("\u{E000}"))
        }
    }

    @Test("A change to what a page shows — a favorite, the language, the age — is never served from the cache")
    func invalidation() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "c", count: 64)
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(token)"]
            // Given a cached list page
            let before = try await client.get("/rickandmorty", headers: cookie)
            #expect(before.body.contains("aria-label=\"Favorite: Rick Sanchez\" aria-pressed=\"false\""))
            // When Rick is starred
            _ = try await client.post("/favorites/rickandmorty/1", form: [("csrf", token), ("action", "add")], cookie: token)
            // Then the next page shows the star
            let after = try await client.get("/rickandmorty", headers: cookie)
            #expect(after.body.contains("aria-label=\"Favorite: Rick Sanchez\" aria-pressed=\"true\""))
            // And another language is its own page
            let spanish = try await client.get("/rickandmorty", headers: [.cookie: "\(CSRFProtection.cookieName)=\(token); kiosk_lang=es"])
            #expect(spanish.body.contains("aria-label=\"Favorito: Rick Sanchez\" aria-pressed=\"true\""))
            // And an hour later the age shown is an hour older
            await harness.now.advance(by: .seconds(3600))
            let later = try await client.get("/rickandmorty", headers: cookie)
            #expect(later.body.contains(/Updated <time class="ago" datetime="[^"]+">1 h ago<\/time>/))
        }
    }

    @Test("A change made by another process, through its own connection, is never hidden by the cache")
    func otherProcessWrites() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "d", count: 64)
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(token)"]
            // Given a cached list page
            _ = try await client.get("/rickandmorty", headers: cookie)
            let cached = try await client.get("/rickandmorty", headers: cookie)
            #expect(cached.body.contains("aria-label=\"Favorite: Morty Smith\" aria-pressed=\"false\""))
            // When another process (a `kiosk favorite add` in a terminal) stars Morty through its own connection
            let path = try #require(harness.kiosk.database.path)
            let other = try AppDatabase.open(at: path)
            try other.setFavorite(true, source: .rickandmorty, itemID: "2")
            // Then the next page shows the star
            let after = try await client.get("/rickandmorty", headers: cookie)
            #expect(after.body.contains("aria-label=\"Favorite: Morty Smith\" aria-pressed=\"true\""))
        }
    }

    @Test("The cache keeps at most its capacity, dropping the least recently used page")
    func capacity() {
        let cache = PageCache(capacity: 2)
        let metadata = SnapshotMetadata(fetchedAt: Date(timeIntervalSince1970: 0), freshUntil: Date(timeIntervalSince1970: 3600))
        let update = CatalogUpdate(page: Page(request: PageRequest(source: .dogs), items: []), metadata: metadata, origin: .store,
                                   isStale: false, isRevalidating: false, error: nil, asOf: Date(timeIntervalSince1970: 10),
                                   cacheStatus: CacheStatus(.fresh, ttl: 3590))
        let context = ViewContext(language: .en, csrfToken: "t", path: "/dogs", catalogs: Catalogs(sources: []))
        func key(_ path: String) -> PageCache.Key { PageCache.Key(path: path, language: .en, changeToken: 1) }
        var renders = 0
        func page(_ path: String) -> String {
            if let hit = cache.page(key(path), token: "t", now: Date(timeIntervalSince1970: 10)) { return String(buffer: hit.body) }
            let body = cache.render(key: key(path), update: update, request: PageRequest(source: .dogs), context: context) { _ in
                renders += 1
                return HTML.text(path)
            }
            return String(buffer: body)
        }
        // Given a cache of two pages
        // When three pages are asked for, the first twice
        _ = page("a"); _ = page("b"); _ = page("a"); _ = page("c")
        // Then only two are kept, and the second ask for "a" was a hit
        #expect(cache.count == 2)
        #expect(renders == 3)
        // And the least recently used, "b", is the one that went
        #expect(page("a") == "a")
        #expect(renders == 3)
        _ = page("b")
        #expect(renders == 4)
        // And an entry whose age would read differently now is not served
        #expect(cache.page(key("b"), token: "t", now: Date(timeIntervalSince1970: 7200)) == nil)
    }
}

@Suite("Web app: filter selects")
struct FilterSelectTests {
    @Test("NYT's kind and period show the values the list is really for, with no meaningless \"any\"")
    func nytDefaults() async throws {
        try await withWeb { _, client in
            // Given the NYT list without parameters (it shows the most viewed of 7 days)
            let page = try await client.get("/nyt")
            // Then the selects say so, and offer no "any"
            #expect(page.body.contains("<option value=\"viewed\" selected>Most viewed</option>"))
            #expect(page.body.contains("<option value=\"7\" selected>Last 7 days</option>"))
            #expect(!page.body.contains("<select name=\"kind\"><option value=\"\">"))
            // And Rick and Morty's filters, which have no default, still offer "any"
            let rick = try await client.get("/rickandmorty")
            #expect(rick.body.contains("<select name=\"status\"><option value=\"\">Any</option>"))
        }
    }
}
