import Foundation
import Hummingbird
import HummingbirdTesting
import KioskApp
import KioskCore
import KioskDemoUpstream
import KioskTestSupport
import Testing
@testable import KioskWeb

@Suite("Web app input checking, escaping and errors")
struct WebSafetyTests {
    @Test("A storage failure is Kiosk's own error, not the upstream's: 507 for a full disk, 500 for anything else, saying which")
    func storageErrorsAreKiosks() {
        let full = WebError(.storage("the disk is full: could not save the page. Free some disk space or clear the cache."), retryPath: nil)
        #expect(full.status.code == 507 && full.title == "The disk is full")
        let corrupt = WebError(.storage("the database is corrupt"), retryPath: nil)
        #expect(corrupt.status == .internalServerError && corrupt.title == "Storage error")
        #expect(WebError(.httpStatus(500, url: "http://up.test/"), retryPath: nil).status == .badGateway)
    }

    @Test("A write that fails on a full disk says the change was not saved, in the page's language, with no Retry to an address that takes POST alone; a page's failure keeps its Retry")
    func failedWriteIsNotAPageToReload() {
        let full = KioskError.storage("the disk is full: could not add the favorite rickandmorty/5. Free some disk space.")
        // Given the failure of a star's POST, and of a page's GET
        let write = WebErrorMiddleware.webError(for: full, path: "/favorites/rickandmorty/5", query: nil, isWrite: true)
        let read = WebErrorMiddleware.webError(for: full, path: "/rickandmorty", query: "page=2")
        // Then the write's page says what was not saved, and offers no Retry
        #expect(write.status.code == 507 && write.retryPath == nil)
        for (language, words) in [(Language.en, "Could not save this change: "), (.es, "No se pudo guardar este cambio: ")] {
            let said = write.said?(ViewContext(language: language, csrfToken: "t", path: "/favorites/rickandmorty/5", catalogs: Catalogs(sources: [])))
            #expect(said?.hasPrefix(words) == true, "\(said ?? "")")
        }
        // And the page's failure is one to load again
        #expect(read.retryPath == "/rickandmorty?page=2")
        let said = read.said?(ViewContext(language: .en, csrfToken: "t", path: "/rickandmorty", catalogs: Catalogs(sources: [])))
        #expect(said?.hasPrefix("Could not load this page: ") == true)
        // And any other failure of a write has no Retry either
        #expect(WebErrorMiddleware.webError(for: CancellationError(), path: "/dogs/rex/delete", query: nil, isWrite: true).retryPath == nil)
    }

    @Test("A hostile item title and a javascript: link render as inert text")
    func escaping() async throws {
        try await withWeb { harness, client in
            // Given stored items whose strings are markup and whose links are not http(s)
            let hostile = "<script>alert('x')</script> & \"quoted\""
            let dog = CatalogItem(source: .dogs, itemID: "evil", title: hostile, subtitle: hostile, summary: hostile,
                                  imageURL: URL(string: "javascript:alert(1)"),
                                  detail: .dog(Dog(name: hostile, description: hostile, age: 3,
                                                   image: URL(string: "javascript:alert(1)"))))
            let article = CatalogItem(
                source: .nyt, itemID: "666", title: hostile, subtitle: hostile, summary: hostile, imageURL: nil,
                detail: .article(Article(rank: 1, url: URL(string: "javascript:alert(1)"), section: hostile, subsection: "",
                                         byline: hostile, publishedDate: "2026-01-01", updated: "", type: "Article",
                                         keywords: [hostile], facets: [], images: [], caption: nil, copyright: nil)))
            try harness.kiosk.database.saveItems([dog, article])
            try harness.kiosk.catalog.setFavorite(true, source: .dogs, itemID: "evil")
            // When their pages are rendered
            let pages = [try await client.get("/dogs/evil"), try await client.get("/nyt/666"),
                         try await client.get("/favorites")]
            // Then the markup is escaped and the links are dropped
            for page in pages {
                #expect(page.status == .ok)
                #expect(!page.body.contains("<script>"))
                #expect(page.body.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quoted&quot;"))
                #expect(!page.body.contains("javascript:"))
            }
            #expect(!pages[1].body.contains("Read the full article"))
        }
    }

    @Test("An upstream's control characters show as U+FFFD, and a direction override it leaves open is closed at its text's end")
    func controlsAndOverrides() async throws {
        // Given texts with NUL, ESC, DEL, NEL, an unclosed right-to-left override and an unclosed isolate
        let cases: [(String, String)] = [
            ("a\u{0}b\u{1B}[31mc\u{7F}d\u{85}e", "a\u{FFFD}b\u{FFFD}[31mc\u{FFFD}d\u{FFFD}e"),
            ("tab\tline\nreturn\r", "tab\tline\nreturn\r"),
            ("\u{202E}gnp.exe", "\u{202E}gnp.exe\u{202C}"),
            ("\u{2067}שלום & \u{202B}x\u{202C}", "\u{2067}שלום &amp; \u{202B}x\u{202C}\u{2069}"),
            ("closed \u{202E}x\u{202C} and \u{2068}y\u{2069}", "closed \u{202E}x\u{202C} and \u{2068}y\u{2069}"),
            ("café ☕ 😀", "café ☕ 😀"),
        ]
        // Then each is escaped so, the rest of the text as it was
        for (text, expected) in cases {
            #expect(HTML.escape(text) == expected, "\(text.debugDescription)")
        }
        // And a stored title with them renders so on its list
        try await withWeb { harness, client in
            let title = "\u{202E}Evil\u{1B} dog"
            try harness.kiosk.database.saveItems([CatalogItem(source: .dogs, itemID: "rlo", title: title, subtitle: "", summary: "",
                                                              imageURL: nil, detail: .dog(Dog(name: title, description: "", age: 1, image: nil)))])
            let page = try await client.get("/dogs/rlo")
            #expect(page.body.contains("\u{202E}Evil\u{FFFD} dog\u{202C}") && !page.body.contains("\u{1B}"))
            // And its tab's title closes the override before Kiosk's name, which it would show reversed
            #expect(page.body.contains("<title>\u{202E}Evil\u{FFFD} dog\u{202C} · Kiosk</title>"), "\(page.body.prefix(600))")
        }
    }

    @Test("A huge title is shortened wherever a list or a label says it, and shown whole once on its own page")
    func hugeTitles() async throws {
        try await withWeb { harness, client in
            // Given a starred item whose title is 200,000 characters
            let title = String(repeating: "Long title ", count: 18_182)
            try harness.kiosk.database.saveItems([CatalogItem(source: .dogs, itemID: "long", title: title, subtitle: "", summary: "",
                                                              imageURL: nil, detail: .dog(Dog(name: title, description: "", age: 1, image: nil)))])
            try harness.kiosk.catalog.setFavorite(true, source: .dogs, itemID: "long")
            // When the favorites list is opened, then it says the title's first 300 characters, the page staying small
            let list = try await client.get("/favorites")
            #expect(list.status == .ok && list.body.utf8.count < 50_000, "\(list.body.utf8.count) bytes")
            #expect(list.body.contains(String(title.prefix(300)) + "…"))
            // And the item's own page has it whole in its heading
            let detail = try await client.get("/dogs/long")
            #expect(detail.body.contains("<h1>\(title)</h1>") && detail.body.utf8.count < title.utf8.count + 50_000)
        }
    }

    @Test("The JSON API refuses a parameter an address does not take with a 400 naming it: an item's, the favorites', connectivity")
    func jsonAPIRefusesUnknownParameters() async throws {
        try await withWeb { _, client in
            for (uri, said) in [("/api/rickandmorty/1?bogus=1", "Unknown parameter \"bogus\"; valid: page, refresh."),
                                ("/api/favorites?page=0", "Unknown parameter \"page\"; this address takes none."),
                                ("/api/connectivity?x=1", "Unknown parameter \"x\"; this address takes none.")] {
                let answer = try await client.get(uri)
                let error = try answer.json()["error"] as? String
                #expect(answer.status == .badRequest && error == said, "\(uri): \(answer.body)")
            }
            // (and a parameter it takes, or none, is answered)
            #expect(try await client.get("/api/rickandmorty/1?page=1").status == .ok)
            #expect(try await client.get("/api/connectivity").status == .ok)
        }
    }

    @Test("Bad input is a clear 4xx page, never a 500", arguments: [
        ("/nowhere", 404), ("/rickandmorty?page=0", 400), ("/rickandmorty?page=-3", 400),
        ("/rickandmorty?page=abc", 400), ("/rickandmorty?page=999", 404), ("/rickandmorty?page=99999999999", 404),
        ("/rickandmorty?q=" + String(repeating: "a", count: 201), 400), ("/rickandmorty?q=%00%3Cscript%3E", 400),
        ("/rickandmorty?q=%zz", 400), ("/rickandmorty?page=1&page=2", 400), ("/rickandmorty?evil=1", 400),
        ("/rickandmorty?status=zombie", 400), ("/nyt?page=2", 404), ("/nyt?kind=<b>", 400),
        ("/rickandmorty/999999", 404), ("/nyt/123456789", 404), ("/a/b/c", 404),
        ("/rickandmorty/" + String(repeating: "9", count: CatalogItem.maximumIDLength + 1), 400), ("/rickandmorty/abc", 400),
        ("/marvel?page=9999", 404), ("/dogs/no-such-dog", 404), ("/dogs?page=2", 404), ("/marvel?status=alive", 400),
        ("/rickandmorty/%ZZ", 400), ("/image?url=" + String(repeating: "a", count: 5000), 400),
        // A page past the last of a search answered from the store (one page), and of a one-page catalog's search
        ("/rickandmorty?q=ri&page=2", 404), ("/nyt?q=the&page=2", 404),
        // A parameter an item's page does not take (docs/API.md: a 400), and a switch that is neither 1 nor 0
        ("/rickandmorty/1?bogus=1", 400), ("/rickandmorty?refresh=yes", 400), ("/rickandmorty/1?refresh=true", 400),
        ("/dogs?edit=banana", 400),
    ])
    func badInput(uri: String, expected: Int) async throws {
        // (the JSON API's twins: `jsonAPIRefusesUnknownParameters`)
        try await withWeb { _, client in
            // Given a malformed or impossible request
            // When it is sent
            let page = try await client.get(uri)
            // Then the answer is the right 4xx, as an HTML page with the security headers and no echoed markup
            #expect(page.status.code == expected, "\(uri)")
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            #expect(page.header("Content-Security-Policy") != nil)
            #expect(page.body.contains("<h1>"))
            #expect(!page.body.contains("<script>"))
            #expect(!page.body.contains("<b>"))
            // And a page past the last says so, not that an item is missing
            if uri.contains("page=2") || uri.contains("page=999") { #expect(!page.body.contains("the item may have been removed"), "\(uri)") }
        }
    }

    @Test("Bad input under /api is a JSON error with the right status")
    func apiErrors() async throws {
        try await withWeb { _, client in
            // Given bad API requests
            for (uri, expected) in [("/api/nowhere", 404), ("/api/rickandmorty?page=0", 400), ("/api/rickandmorty/999999", 404)] {
                // When each is sent
                let answer = try await client.get(uri)
                // Then it is {"error": ...} with a 4xx
                #expect(answer.status.code == expected, "\(uri)")
                #expect(answer.header("Content-Type") == "application/json; charset=utf-8")
                #expect(try answer.json()["error"] is String)
            }
        }
    }

    @Test("The image route serves demo images and refuses anything else")
    func images() async throws {
        try await withWeb { harness, client in
            // Given a demo image URL from a listed page
            let update = try await harness.kiosk.catalog.page(PageRequest(source: .rickandmorty))
            let imageURL = try #require(update.page.items.first?.imageURL)
            // When it and foreign or malformed URLs are requested
            let image = try await client.get("/image?url=" + QueryString.encode(imageURL.absoluteString))
            let foreign = try await client.get("/image?url=" + QueryString.encode("http://evil.example/x.png"))
            let script = try await client.get("/image?url=" + QueryString.encode("javascript:alert(1)"))
            let file = try await client.get("/image?url=" + QueryString.encode("file:///etc/passwd"))
            let missing = try await client.get("/image")
            // Then the demo image is a cacheable PNG and everything else a 4xx
            #expect(image.status == .ok)
            #expect(image.header("Content-Type") == "image/png")
            #expect(image.header("Cache-Control") == "public, max-age=86400")
            #expect(image.bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]))
            let etag = try #require(image.header("ETag"))
            let again = try await client.get("/image?url=" + QueryString.encode(imageURL.absoluteString),
                                             headers: [.ifNoneMatch: etag])
            #expect(again.status == .notModified)
            #expect(foreign.status == .forbidden)
            #expect(script.status == .badRequest)
            #expect(file.status == .badRequest)
            #expect(missing.status == .badRequest)
        }
    }

    @Test("Another site's page gains nothing from the image route: a cross-site request is refused before any fetch, and pictures say same-origin")
    func imagesFromOtherSites() async throws {
        try await withWeb { harness, client in
            // Given a stored picture
            let update = try await harness.kiosk.catalog.page(PageRequest(source: .rickandmorty, page: 2))
            let imageURL = try #require(update.page.items.first?.imageURL)
            let path = "/image?url=" + QueryString.encode(imageURL.absoluteString)
            let before = await harness.demo.requestCount(pathPrefix: "/api/character/avatar/")
            // When a page of another site embeds it
            let crossSite = try await client.get(path, headers: [.init("Sec-Fetch-Site")!: "cross-site"])
            // Then it is refused and the upstream is not asked
            #expect(crossSite.status == .forbidden)
            #expect(await harness.demo.requestCount(pathPrefix: "/api/character/avatar/") == before)
            // And Kiosk's own pages get it, marked for their origin only
            let own = try await client.get(path, headers: [.init("Sec-Fetch-Site")!: "same-origin"])
            #expect(own.status == .ok)
            #expect(own.header("Cross-Origin-Resource-Policy") == "same-origin")
        }
    }

    @Test("Another site's page cannot spend the reader's API quota: its images, frames and fetches of pages and the API are refused, a link it offers is a plain visit, Kiosk's own refresh asks the upstream")
    func refreshFromOtherSites() async throws {
        try await withWeb { harness, client in
            // Given a list and an item read once, fresh in the store
            let list = try await client.get("/rickandmorty"), item = try await client.get("/rickandmorty/2")
            #expect(list.status == .ok && item.status == .ok)
            let before = await harness.demo.requestCount(pathPrefix: "/api/character")
            let fetchSite = HTTPFields.Element.Name("Sec-Fetch-Site")!, fetchDest = HTTPFields.Element.Name("Sec-Fetch-Dest")!
            // When another site's page (or another port of this machine's) embeds searches, pages and the API, each new
            for (site, destination) in [("cross-site", "image"), ("same-site", "iframe"), ("cross-site", "empty"), ("cross-site", nil)] {
                var headers: HTTPFields = [fetchSite: site]
                if let destination { headers[fetchDest] = destination }
                for path in ["/rickandmorty?q=Sanchez\(site)", "/rickandmorty?page=7", "/rickandmorty/999?refresh=1", "/api/rickandmorty?page=8"] {
                    let answer = try await client.get(path, headers: headers)
                    // Then each is refused before any route
                    #expect(answer.status == .forbidden, "\(site) \(destination ?? "-") \(path)")
                }
            }
            // And so is each sent by a browser without Fetch Metadata, which names the other site in Origin alone (a CORS
            // fetch, an EventSource; `null` from a sandboxed frame)
            for origin in ["http://evil.test", "null", "http://127.0.0.1:1"] {
                for path in ["/rickandmorty?q=Origin\(origin.count)", "/api/rickandmorty?page=9", "/debug/events"] {
                    let answer = try await client.get(path, headers: [.origin: origin])
                    #expect(answer.status == .forbidden, "\(origin) \(path)")
                }
            }
            // (while one that names this very origin, as a page of Kiosk's own may, is answered)
            // (the test client asks as localhost)
            let sameOrigin = try await client.get("/api/rickandmorty?page=1", headers: [.origin: "http://localhost"])
            #expect(sameOrigin.status == .ok, "\(sameOrigin.body)")
            // And a link it offers, followed by the reader, opens the page, its refresh read as a plain visit
            for path in ["/rickandmorty?refresh=1", "/rickandmorty/2?refresh=1"] {
                let followed = try await client.get(path, headers: [fetchSite: "cross-site", fetchDest: "document"])
                #expect(followed.status == .ok, "\(path)")
            }
            // And the upstream was not asked for any of it
            #expect(await harness.demo.requestCount(pathPrefix: "/api/character") == before)
            // And Kiosk's own page's refresh asks it
            let own = try await client.get("/rickandmorty?refresh=1", headers: [fetchSite: "same-origin", fetchDest: "document"])
            #expect(own.status == .ok)
            #expect(await harness.demo.requestCount(pathPrefix: "/api/character") > before, "\(own.headers)")
        }
    }

    @Test("With nothing stored and the upstream offline, a list is a 503 page with a Retry link")
    func offlineNothingStored() async throws {
        var faults = FaultSettings.none
        faults.offline = true
        try await withWeb(faults: faults) { _, client in
            // Given an unreachable upstream and an empty store
            // When a list is requested
            let page = try await client.get("/rickandmorty?page=2")
            // Then it says so and offers to retry the same address
            #expect(page.status == .serviceUnavailable)
            #expect(page.body.contains("href=\"/rickandmorty?page=2\">Retry<"))
        }
    }

    @Test("An upstream search made before and still fresh, shown while the upstream is known unreachable, says so with its age")
    func offlineSearchBanner() async throws {
        try await withWeb { harness, client in
            // Given Marvel's search for "spi" made online, a few minutes ago, and the upstream gone offline since (Kiosk knows)
            let fetched = harness.now.date
            let online = try await client.get("/marvel?q=spi")
            #expect(online.status == .ok && !online.body.contains("offline-banner"))
            await harness.now.advance(by: .seconds(4 * 60))
            try await harness.setOffline(true)
            _ = try await client.get("/rickandmorty?refresh=1")
            // When the same search is asked again
            let page = try await client.get("/marvel?q=spi")
            // Then its saved results come with the offline banner and their age, the page's script watching for the upstream
            let age = "<time class=\"ago\" datetime=\"\(fetched.ISO8601Format())\">4 min ago</time>"
            #expect(page.status == .ok)
            #expect(page.body.contains("<p class=\"banner offline\" id=\"offline-banner\" role=\"status\">Offline — showing saved data from \(age)"),
                    "\(page.body)")
        }
    }

    @Test("Stored data shown while offline carries the offline banner with its age")
    func offlineBanner() async throws {
        try await withWeb { harness, client in
            // Given a stored page, three days old (past any freshness lifetime), and an upstream gone offline
            let fetched = harness.now.date
            _ = try await client.get("/rickandmorty")
            await harness.now.advance(by: .seconds(3 * 86400 + 60))
            try await harness.setOffline(true)
            // When the list is requested
            let first = try await client.get("/rickandmorty")
            // Then the saved page is shown at once, stale, while a revalidation runs in the background, its age in an
            // element saying when it was fetched, which the page's script keeps current (a page kept on the device)
            let age = "<time class=\"ago\" datetime=\"\(fetched.ISO8601Format())\">3 d ago</time>"
            #expect(first.status == .ok)
            #expect(first.body.contains("data-revalidating=\"true\""))
            #expect(first.body.contains("Updated \(age) · <span class=\"stale\">stale</span> · <span class=\"refreshing\">"))
            // And when the script asks for the final state, it is the saved page with the offline banner and its age
            let final = try await client.get("/rickandmorty", headers: [WebController.waitHeader: "1"])
            #expect(final.body.contains("Offline — showing saved data from \(age)"))
            #expect(final.body.contains("data-revalidating=\"false\""))
            // And once Kiosk knows it is offline, a plain request shows the banner at once, with no revalidation
            let page = try await client.get("/rickandmorty")
            #expect(page.status == .ok)
            #expect(page.body.contains("id=\"offline-banner\""))
            #expect(page.body.contains("Offline — showing saved data from \(age)"))
            #expect(page.body.contains("data-revalidating=\"false\""))
            #expect(page.body.contains("Updated \(age) · <span class=\"stale\">stale</span>"))
            #expect(page.body.contains("Rick Sanchez"))
        }
    }

    @Test("The page window never traps and marks gaps")
    func pageWindow() {
        #expect(Pages.pageWindow(current: 1, total: 42) == [1, 2, 3, nil, 42])
        #expect(Pages.pageWindow(current: 20, total: 42) == [1, nil, 18, 19, 20, 21, 22, nil, 42])
        #expect(Pages.pageWindow(current: 99, total: 3) == [1, 2, 3])
        #expect(Pages.pageWindow(current: 1, total: 1) == [1])
    }
}
