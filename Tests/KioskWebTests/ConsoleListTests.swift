import Foundation
import Hummingbird
import HummingbirdTesting
import KioskCore
@testable import KioskDebugger
import KioskTestSupport
import Testing
@testable import KioskConsole
@testable import KioskWeb
import KioskProcess

@Suite("The console's list and request pages as a developer reads them")
struct ConsoleListTests {
    @Test("Insights say a share too small or too large to round to 0 % or 100 % as such (1 of 244 is < 1 %, not 0 %), and break endpoint names at their dots")
    func insightsSharesNeverRoundToNothing() {
        // Given 244 requests: 1 served stale, 243 from the network
        let insights = LogInsights(requests: 244, endpoints: [.init(endpoint: "rickandmorty.episodes.byID", count: 1, p50: 0.01, p95: 0.01, maximum: 0.01)],
                                   sources: [],
                                   decisions: LogInsights.Decisions(counts: [.staleOnError: 1, .network: 243]))
        // When the insights page is drawn
        let page = DebugPages.insights(insights, context: ViewContext(language: .en, csrfToken: "t", path: "/debug/insights",
                                                                        catalogs: Catalogs(sources: []))).rendered
        // Then the one is "< 1 %" and the 243 "> 99 %", and no share of something reads as nothing or everything
        #expect(page.contains("1 (&lt; 1 %)") && page.contains("243 (&gt; 99 %)"), "\(page)")
        #expect(!page.contains("1 (0 %)") && !page.contains("243 (100 %)"))
        // And an endpoint's name may break after its dots only, where a phone's narrow column breaks it
        #expect(page.contains(">rickandmorty.<wbr>episodes.<wbr>byID</th>"), "\(page)")
    }

    @Test("A body kept gzipped, as sent, is shown as its content — a JSON tree — saying it was decoded and how many bytes came; one that does not decode is shown as it came")
    func gzipBodyShownDecoded() throws {
        // Given an answer logged as it came: {"name": "Rick"} gzipped, and a body that only claims to be
        let gzipped = try #require(Data(base64Encoded: "H4sIAAAAAAACA6tWykvMTVWyUlAKykzOVqoFAB+KiCoQAAAA"))
        let record = { (body: Data) in
            RequestRecord(id: 7, startedAt: Date(timeIntervalSince1970: 0), source: nil, endpoint: "app.test", method: "GET",
                          url: "https://app.test/who", status: 200,
                          responseHeaders: [.init(name: "Content-Type", value: "application/json"), .init(name: "Content-Encoding", value: "gzip")],
                          responseBody: CapturedBody(capturing: body, limit: 1 << 20), timings: RequestTimings(total: 0.01), decision: .network)
        }
        let context = ViewContext(language: .en, csrfToken: "t", path: "/debug/requests/7", catalogs: Catalogs(sources: []))
        // When its page is drawn
        let page = DebugPages.request(record(gzipped), context: context).rendered
        // Then the body is the JSON tree of its content, and the note says it was decoded from gzip and its size as sent
        #expect(page.contains(#"<span class="key">name</span>"#) && page.contains("&quot;Rick&quot;"), "\(page.suffix(1500))")
        #expect(page.contains(HTML.text("16 bytes" + ConsoleWords.english.decodedFrom("gzip", gzipped.count)).rendered), "\(page.suffix(1500))")
        // And a body that is not gzip is shown as it came, with no such note
        let plain = DebugPages.request(record(Data("not gzip".utf8)), context: context).rendered
        #expect(plain.contains("not gzip") && !plain.contains("decoded from"))
        // And a small body that decodes to megabytes (a gzip bomb) shows its first MB, saying so: a page, not 200 MB of one
        let bomb = try #require(ContentCoding.encoded(Data(repeating: 0, count: 8 << 20), coding: "gzip"))
        let cut = DebugPages.request(record(bomb), context: context).rendered
        #expect(cut.contains(ConsoleWords.english.decodedShownFirst(1 << 20)) && cut.utf8.count < 8 << 20, "\(cut.utf8.count)")
    }

    @Test("A request's page says the protocol its upstream answered in, among its facts, and nothing of one when none answered on the wire")
    func protocolFact() {
        // Given an exchange an HTTP/2 upstream answered, and one a mock answered
        var wire = RequestRecord(id: 8, startedAt: Date(timeIntervalSince1970: 0), source: nil, endpoint: "app.test", method: "GET",
                                 url: "https://app.test/h2", status: 200, timings: RequestTimings(total: 0.01), decision: .network)
        wire.httpVersion = "HTTP/2.0"
        var mocked = wire
        mocked.httpVersion = nil
        let context = ViewContext(language: .es, csrfToken: "t", path: "/debug/requests/8", catalogs: Catalogs(sources: []))
        // When their pages are drawn, in Spanish
        let pages = [wire, mocked].map { DebugPages.request($0, context: context).rendered }
        // Then the first says it in the page's words, the other says no protocol
        #expect(pages[0].contains("<dt>Protocolo</dt><dd>HTTP/2.0</dd>"), "\(pages[0])")
        #expect(!pages[1].contains("Protocolo"))
    }

    @Test("A row is the method and path with the host apart, then status, type, size, time (UTC until the script says it locally) and duration")
    func rowColumns() async throws {
        try await withWeb { harness, client in
            // Given Rick and Morty's first page read from the upstream
            _ = try await client.get("/rickandmorty")
            let list = try await client.get("/debug")
            // Then its row names the path, and says the host, the type and the size in cells of their own
            let row = try #require(list.body.firstMatch(of: /<tr data-id="\d+">.*?<\/tr>/)?.output)
            #expect(row.contains(#"<span class="method">GET</span> <span class="path">/api/character?page=1</span>"#))
            #expect(row.contains(/<td class="host">127\.0\.0\.1:\d+<\/td>/))
            #expect(row.contains(#"<td class="type">json</td>"#))
            #expect(row.contains(/<td class="num size">[\d.]+ KB<\/td>/))
            #expect(row.contains(/<time datetime="[^"]+Z" data-local="time">\d\d:\d\d:\d\d UTC<\/time>/))
            // And the header says what each column is, with no column for the whole URL
            #expect(list.body.contains(#"<th scope="col" class="host">Host</th>"#))
            #expect(!list.body.contains("Time (UTC)"))
        }
    }

    @Test("A row's path and query are the URL's as logged: a redacted secret beside an escaped value does not escape it again",
          arguments: [
            ("http://api.test/search?q=caf%C3%A9&api_key=<redacted>", "/search?q=caf%C3%A9&api_key=<redacted>"),
            ("https://api.test:8443?token=<redacted>#top", "/?token=<redacted>"),
            ("http://api.test", "/"),
            ("http://api.test/a%20b/c", "/a%20b/c"),
          ])
    func rowPath(url: String, shown: String) {
        #expect(DebugPages.pathAndQuery(url) == shown)
    }

    @Test("A CONNECT tunnel's row names the host and port it joined, logged or in flight, not a path it does not have; any other method its path",
          arguments: [("CONNECT", "https://api.test:8443", "api.test:8443"), ("CONNECT", "https://[::1]:443", "[::1]:443"),
                      ("GET", "https://api.test:8443", "/")])
    func connectRow(method: String, url: String, shown: String) throws {
        let record = RequestRecord(id: 7, startedAt: Date(), source: nil, endpoint: "api.test", method: method, url: url, status: 200,
                                   timings: RequestTimings(total: 1), decision: .network)
        let inFlight = ExchangesInFlight.Exchange(id: 1, startedAt: Date(), elapsed: .seconds(2), method: method, url: url, source: nil,
                                                  endpoint: "api.test", status: 200, received: 10, appClosed: false, contentType: nil)
        for row in [DebugPages.row(record, .english).rendered, DebugPages.inFlightRow(inFlight, .english).rendered] {
            #expect(row.contains(#"<span class="method">\#(method)</span> <span class="path">\#(HTML.text(shown).rendered)</span>"#), "\(row)")
        }
    }

    @Test("Quick filters are links over the filter language, the one applied marked; empty fields stay out of the address")
    func chipsAndCleanAddresses() async throws {
        try await withWeb { _, client in
            // Given the list filtered to pictures by its chip
            let pictures = try await client.get("/debug?filter=endpoint%3Aimage")
            // Then the Pictures chip is the one marked, and All leads back to the whole list
            #expect(pictures.body.contains(#"<a href="/debug?filter=endpoint%3Aimage" aria-current="true">Pictures</a>"#))
            #expect(pictures.body.contains(#"<a href="/debug">All</a>"#))
            #expect(pictures.body.contains(#"<a href="/debug?filter=-endpoint%3Aimage">API</a>"#))
            // And a form sent with its empty fields is sent to the address of what it filters
            let sent = try await client.get("/debug?filter=&source=&status=5xx&decision=&min_ms=")
            #expect(sent.status == .seeOther)
            #expect(sent.header("Location") == "/debug?status=5xx")
        }
    }

    @Test("Exchanges answered but not logged are counted on the list in the reader's language, and no banner shows while none was lost")
    func unloggedBanner() throws {
        // Given the list rendered for a log that dropped 3 records, in English and Spanish, and for one that dropped none
        let render = { (language: Language, unlogged: Int) throws -> String in
            DebugPages.requests([], query: DebugFilterQuery(), count: 0, eventID: try #require(DebugEvents.EventID("e1-0")),
                                unlogged: unlogged, live: true, context: ViewContext(language: language, csrfToken: "t", path: "/debug", catalogs: Catalogs(sources: []))).rendered
        }
        // Then each says how many went unlogged and why, and the clean log says nothing
        #expect(try render(.en, 3).contains("3 requests were answered but not logged: more came than the log could write"))
        #expect(try render(.en, 1).contains("1 request was answered but not logged"))
        #expect(try render(.es, 3).contains("3 solicitudes se respondieron sin registrarse"))
        #expect(try !render(.en, 0).contains("unlogged-banner"))
    }

    @Test("Clear empties the log; Pause recording stops logging until Resume, and the list says so")
    func clearAndPause() async throws {
        try await withWeb { harness, client in
            // Given a logged request and the console's token
            _ = try await client.get("/dogs")
            let page = try await client.get("/debug")
            let csrf = try issuedToken(page)
            #expect(try harness.kiosk.debugger.count() > 0)
            // And Clear asks first (the console's script asks it), with no count that rows arriving live would make wrong
            #expect(page.body.contains(#"data-confirm="Clear every logged request? This cannot be undone.""#), "\(page.body)")
            // When recording is paused, a catalog read, and the log cleared
            #expect(try await client.post("/debug/recording", form: [("csrf", csrf), ("record", "off")], cookie: csrf).status == .seeOther)
            #expect(try await client.get("/debug").body.contains("Recording is paused"))
            #expect(try await client.post("/debug/clear", form: [("csrf", csrf)], cookie: csrf).status == .seeOther)
            _ = try await client.get("/rickandmorty")
            try harness.kiosk.debugger.flush()
            // Then nothing was logged meanwhile
            #expect(try harness.kiosk.debugger.count() == 0)
            // And after Resume, requests are logged again
            #expect(try await client.post("/debug/recording", form: [("csrf", csrf), ("record", "on")], cookie: csrf).status == .seeOther)
            _ = try await client.get("/marvel")
            try harness.kiosk.debugger.flush()
            #expect(try harness.kiosk.debugger.count() > 0)
            #expect(try await client.post("/debug/recording", form: [("csrf", csrf), ("record", "maybe")], cookie: csrf).status == .badRequest)
        }
    }

    @Test("A store hit's page says it made no upstream request; a failure says failed; a request can pause its endpoint's next one; cURL can be copied")
    func requestPageWording() async throws {
        try await withWeb { harness, client in
            // Given the dogs read twice: the second answered from the store
            _ = try await client.get("/dogs")
            _ = try await client.get("/dogs")
            let records = try harness.kiosk.debugger.records(matching: RequestFilter(source: .dogs))
            let hit = try #require(records.first { $0.status == nil })
            let exchange = try #require(records.first { $0.status != nil })
            // When their pages are opened
            let hitPage = try await client.get("/debug/requests/\(hit.id)")
            let exchangePage = try await client.get("/debug/requests/\(exchange.id)")
            // Then the hit says where its answer came from, not "no response"
            #expect(hitPage.body.contains("Answered from the store — no upstream request"))
            #expect(!hitPage.body.contains("no response"))
            // And a request that went upstream offers to pause its endpoint's requests, and to copy its cURL
            #expect(exchangePage.body.contains(#"action="/debug/breakpoints/dogs.list""#))
            #expect(exchangePage.body.contains(#"name="request" value="pause""#))
            #expect(exchangePage.body.contains("Pause this endpoint&#39;s requests (a breakpoint, on until turned off)")
                    || exchangePage.body.contains("Pause this endpoint's requests (a breakpoint, on until turned off)"))
            #expect(exchangePage.body.contains(#"data-copy="curl-\#(exchange.id)""#))
            #expect(exchangePage.body.contains(#"id="curl-\#(exchange.id)""#))
            // And once set, the page says every request pauses until it is turned off instead
            try harness.kiosk.debugger.breakpoints.set(BreakpointSetting(request: .pause), for: "dogs.list")
            #expect(try await client.get("/debug/requests/\(exchange.id)").body.contains("Every request of this endpoint pauses at a breakpoint until it is turned off"))
        }
    }

    @Test("An exchange's copied cURL, run in a shell as it is, is answered as Kiosk's request was")
    func copiedCurlRuns() async throws {
        try await withWeb { harness, client in
            // Given the dogs list read from the demo upstream (its name, where Kiosk reaches it elsewhere, is HAR.curl's test's)
            _ = try await client.get("/dogs")
            let exchange = try #require(try harness.kiosk.debugger.records(matching: RequestFilter(source: .dogs)).first { $0.status != nil })
            // When the cURL its page offers is run in a shell as copied
            let page = try await client.get("/debug/requests/\(exchange.id)").body
            let start = try #require(page.range(of: #"id="curl-\#(exchange.id)" tabindex="0">"#))
            let end = try #require(page[start.upperBound...].range(of: "</pre>"))
            let command = String(page[start.upperBound..<end.lowerBound]).replacingOccurrences(of: "&#39;", with: "'")
                .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&lt;", with: "<")
                .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
            let status = try await Self.shell(command + " -sS -o /dev/null -w '%{http_code}'")
            // Then it is answered as Kiosk's request was
            #expect(status == "200", "\(command)")
        }
    }

    /// What `/bin/sh -c command` prints, run on a thread of its own (not one of the tests' cooperative pool).
    private static func shell(_ command: String) async throws -> String {
        try await ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", command]).stdout
    }

    @Test("The console has no catalog tabs, and every reader page links to it from the top bar, in its language, short on a phone")
    func navigation() async throws {
        try await withWeb { _, client in
            let console = try await client.get("/debug")
            #expect(!console.body.contains(#"<nav class="tabs""#))
            #expect(console.body.contains(#"<a class="tool" href="/debug" aria-current="page"><span class="long">Network debugger</span><span class="short">Debugger</span></a>"#))
            let reader = try await client.get("/rickandmorty")
            #expect(reader.body.contains(#"<nav class="tabs""#))
            #expect(reader.body.contains(#"<a class="tool" href="/debug"><span class="long">Network debugger</span><span class="short">Debugger</span></a>"#))
            let spanish = try await client.get("/rickandmorty", headers: [.acceptLanguage: "es"])
            #expect(spanish.body.contains(#"<a class="tool" href="/debug"><span class="long">Depurador de red</span><span class="short">Depurador</span></a>"#))
        }
    }
}

@Suite("Kiosk's cookies, told apart from an app's")
struct KioskCookieNameTests {
    @Test("Every cookie the web app and the console set is one the proxy knows as Kiosk's, and keeps from the apps it forwards to")
    func everyCookieIsKnown() {
        // Given the names of the cookies Kiosk's faces set
        let names = [CSRFProtection.cookieName, Language.cookieName, ReaderVisit.cookieName, PairingGate.cookieName, DebugAccess.cookieName]
        // Then each is Kiosk's by the proxy's rule, and a Cookie field of them alone is forwarded as nothing
        for name in names { #expect(KioskCookies.isKiosks(name), "\(name)") }
        #expect(KioskCookies.withoutKiosks(names.map { "\($0)=x" }.joined(separator: "; ")) == nil)
    }

    @Test("A paused exchange whose app has gone says one thing of what its deadline does: it is aborted, not sent")
    func pausedWithAppGone() {
        // Given an exchange paused at its response whose app closed its connection meanwhile
        var exchange = PausedExchange(id: 1, phase: .response, endpoint: "app.test", source: nil, method: "GET", url: "https://app.test/items",
                                      requestHeaders: [], status: 200, responseHeaders: [], responseText: "{}", responseIsText: true,
                                      responseSize: 2, error: nil, pausedAt: Date(timeIntervalSince1970: 0), deadline: Date(timeIntervalSince1970: 300))
        exchange.appClosed = true
        let context = ViewContext(language: .en, csrfToken: "t", path: "/debug/paused/1", catalogs: Catalogs(sources: []))
        // When its page is drawn
        let html = DebugPages.pausedExchange(exchange, error: nil, draft: nil, context: context).rendered
        // Then the banner and the note under the editor both say it is aborted at its deadline; neither that it continues
        #expect(html.contains("Left alone, it is aborted at its timeout, not sent."))
        #expect(html.contains("Its app has gone, so without a decision the exchange is aborted, not sent, at "))
        #expect(!html.contains("continues unchanged"), "\(html)")
    }
}
