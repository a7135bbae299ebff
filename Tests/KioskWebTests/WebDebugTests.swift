import Foundation
import Hummingbird
import HummingbirdTesting
import KioskCore
@testable import KioskDebugger
import KioskTestSupport
import Testing
@testable import KioskConsole
@testable import KioskWeb

@Suite("Network debugger console")
struct WebDebugTests {
    @Test("The console lists captured requests with their decisions, and a detail shows headers, timings and a JSON tree")
    func listAndDetail() async throws {
        try await withWeb { harness, client in
            // Given Rick and Morty and Marvel opened once
            _ = try await client.get("/rickandmorty")
            _ = try await client.get("/marvel")
            // When the console is opened
            let list = try await client.get("/debug")
            // Then it lists both exchanges, newest first, with status and decision, secrets redacted
            #expect(list.status == .ok)
            #expect(list.body.contains("data-view=\"debug\""))
            let marvelRow = try #require(list.body.range(of: "/v1/public/characters"))
            let rickRow = try #require(list.body.range(of: "/api/character"))
            #expect(marvelRow.lowerBound < rickRow.lowerBound)
            #expect(list.body.contains("apikey=&lt;redacted&gt;"))
            #expect(list.body.contains("class=\"decision network\""))
            let keys = await harness.demo.keys
            for key in [keys.nyt, keys.marvelPublic, keys.marvelPrivate] { #expect(!list.body.contains(key)) }
            // And the JSON list carries the same records, without bodies
            let api = try await client.get("/debug/api/requests?source=rickandmorty")
            let records = try #require(try JSONSerialization.jsonObject(with: Data(api.bytes)) as? [[String: Any]])
            #expect(records.count == 1)
            #expect(records[0]["decision"] as? String == "network")
            #expect(records[0]["responseBody"] == nil)
            let id = try #require(records[0]["id"] as? Int)
            // And the detail shows the headers, the timings and the body as a tree in the upstream's key order
            let detail = try await client.get("/debug/requests/\(id)")
            #expect(detail.status == .ok)
            #expect(detail.body.contains("Time to first byte"))
            #expect(detail.body.contains("<dt>Content-Type</dt>"))
            #expect(detail.body.contains("class=\"json-tree\""))
            let info = try #require(detail.body.range(of: "<span class=\"key\">info</span>"))
            let results = try #require(detail.body.range(of: "<span class=\"key\">results</span>"))
            #expect(info.lowerBound < results.lowerBound)
            #expect(detail.body.contains("<span class=\"key\">[0]</span>"))
            #expect(detail.body.contains("<span class=\"string\">&quot;Rick Sanchez&quot;</span>"))
            #expect(detail.body.contains("curl &#39;http://"))
            // And the log downloads as a HAR file, filters applied, without a key
            let har = try await client.get("/debug/har?source=marvel")
            #expect(har.status == .ok)
            #expect(har.header("Content-Disposition")?.hasPrefix("attachment; filename=\"kiosk-") == true)
            let document = try #require(try JSONSerialization.jsonObject(with: Data(har.bytes)) as? [String: Any])
            let entries = try #require((document["log"] as? [String: Any])?["entries"] as? [[String: Any]])
            #expect(entries.count == 1 && entries[0]["_kioskSource"] as? String == "marvel")
            for key in [keys.nyt, keys.marvelPublic, keys.marvelPrivate] { #expect(!har.body.contains(key)) }
            // And one request's page exports that request alone (Rick and Morty's, the older of the two)
            let link = try #require(detail.body.firstMatch(of: /href="(\/debug\/har\?[^"]+)" download=/)?.1)
            let one = try await client.get(String(link).replacingOccurrences(of: "&amp;", with: "&"))
            let oneDocument = try #require(try JSONSerialization.jsonObject(with: Data(one.bytes)) as? [String: Any])
            let oneEntries = try #require((oneDocument["log"] as? [String: Any])?["entries"] as? [[String: Any]])
            #expect(oneEntries.count == 1 && oneEntries[0]["_kioskSource"] as? String == "rickandmorty", "\(link)")
        }
    }

    @Test("A console without a request log says why: capture switched off, or a log that cannot be opened and the reason")
    func withoutRequestLog() async throws {
        // Given capture switched off in the configuration
        try await withWeb(configure: { $0.capture.isEnabled = false }) { _, client in
            // Then the console says capture is off
            let page = try await client.get("/debug")
            #expect(page.status == .notFound && page.body.contains("disabled in the configuration"), "\(page.body)")
        }
        // Given capture on, and a folder where the request log's file should be
        try await withWeb(configure: { configuration in
            try? FileManager.default.createDirectory(at: configuration.requestLogURL, withIntermediateDirectories: true)
        }) { _, client in
            // Then the console says the log cannot be opened, and why, not that capture is off
            let page = try await client.get("/debug")
            #expect(page.status == .serviceUnavailable)
            #expect(page.body.contains("The request log cannot be opened, so requests are not captured"), "\(page.body)")
            #expect(!page.body.contains("disabled in the configuration"))
        }
    }

    @Test("Filters narrow the list, and bad filter values are a clear 400")
    func filters() async throws {
        try await withWeb { _, client in
            // Given a network request and a store answer for dogs
            _ = try await client.get("/dogs")
            _ = try await client.get("/dogs")
            _ = try await client.get("/rickandmorty")
            // When the list is filtered by decision, source, status and text
            let fresh = try await client.get("/debug/api/requests?decision=fresh")
            let dogs = try await client.get("/debug/api/requests?source=dogs&status=2xx")
            let search = try await client.get("/debug/api/requests?q=Sanchez")
            // Then each has only what matches
            func decisions(_ fetched: Fetched) throws -> [String] {
                try #require(try JSONSerialization.jsonObject(with: Data(fetched.bytes)) as? [[String: Any]]).compactMap { $0["decision"] as? String }
            }
            #expect(try decisions(fresh) == ["fresh"])
            #expect(try decisions(dogs) == ["network"])
            #expect(try decisions(search) == ["network"])
            // And nonsense is refused with a reason
            for bad in ["status=7xx", "decision=magic", "source=nowhere", "min_ms=-1", "before=x", "limit=0", "colour=red"] {
                let page = try await client.get("/debug?\(bad)")
                #expect(page.status == .badRequest, "\(bad)")
                let json = try await client.get("/debug/api/requests?\(bad)")
                #expect(json.status == .badRequest && json.body.contains("\"error\""), "\(bad)")
            }
            // And an unknown or malformed id is a 404 or 400, never a 500
            #expect(try await client.get("/debug/requests/999999").status == .notFound)
            #expect(try await client.get("/debug/requests/abc").status == .badRequest)
            #expect(try await client.get("/debug/api/requests/-1").status == .badRequest)
        }
    }

    @Test("Without a token the debugger is refused on a non-loopback listener; with one it needs the token")
    func access() async throws {
        let harness = try await Harness.start()
        do {
            // Given a listener on all interfaces without a token
            let open = Application(router: buildRouter(kiosk: harness.kiosk, debugAccess: DebugAccess(token: nil, isLoopback: false)))
            try await open.test(.router) { (client: any TestClientProtocol) async throws in
                // Then the console is refused, and the catalogs are not
                #expect(try await client.get("/debug").status == .forbidden)
                #expect(try await client.get("/debug/api/requests").status == .forbidden)
                #expect(try await client.get("/dogs").status == .ok)
            }
            // Given a token
            let token = "s3cret-debug-token-of-32-letters"
            let access = DebugAccess(token: token, isLoopback: false, now: harness.now.dateSource)
            let locked = Application(router: buildRouter(kiosk: harness.kiosk, debugAccess: access))
            try await locked.test(.router) { (client: any TestClientProtocol) async throws in
                // When the console is opened without it, the page asks for it
                let page = try await client.get("/debug")
                #expect(page.status == .forbidden)
                #expect(page.body.contains("action=\"/debug/login\""))
                // (and the form's own address, opened or bookmarked, leads to it rather than to a 404)
                let bookmarked = try await client.get("/debug/login")
                #expect(bookmarked.status == .seeOther && bookmarked.header("Location") == "/debug")
                let csrf = try issuedToken(page)
                // And a wrong token is refused, the right one sets a session cookie and opens the console
                let wrong = try await client.post("/debug/login", form: [("csrf", csrf), ("token", "nope")], cookie: csrf)
                #expect(wrong.status == .forbidden)
                let right = try await client.post("/debug/login", form: [("csrf", csrf), ("token", token)], cookie: csrf)
                #expect(right.status == .seeOther)
                let setCookie = try #require(right.header("Set-Cookie"))
                for attribute in ["HttpOnly", "SameSite=Strict", "Path=/debug", "Max-Age=43200"] {
                    #expect(setCookie.contains(attribute), "\(attribute) in \(setCookie)")
                }
                // And the cookie is a session derived from the token, never the token itself
                let session = String(setCookie.dropFirst("kiosk_debug=".count).prefix { $0 != ";" })
                #expect(setCookie.hasPrefix("kiosk_debug=") && !setCookie.contains(token))
                let opened = try await client.get("/debug", headers: [.cookie: "kiosk_debug=\(session)"])
                #expect(opened.status == .ok)
                #expect(!opened.body.contains(token))
                // And the raw token as a cookie opens nothing
                #expect(try await client.get("/debug", headers: [.cookie: "kiosk_debug=\(token)"]).status == .forbidden)
                // And a token given on another console page opens that page, never an address elsewhere
                let rules = try await client.get("/debug/rules?x=1")
                #expect(rules.body.contains(#"<input type="hidden" name="return" value="/debug/rules?x=1">"#), "\(rules.body)")
                // (after a wrong token too: the form asked again keeps the page)
                let wrongAgain = try await client.post("/debug/login", form: [("csrf", csrf), ("token", "nope"), ("return", "/debug/rules?x=1")],
                                                       cookie: csrf)
                #expect(wrongAgain.status == .forbidden && wrongAgain.body.contains(#"<input type="hidden" name="return" value="/debug/rules?x=1">"#))
                #expect(wrongAgain.body.contains("KIOSK_DEBUG_TOKEN"))
                let back = try await client.post("/debug/login", form: [("csrf", csrf), ("token", token), ("return", "/debug/rules?x=1")], cookie: csrf)
                #expect(back.header("Location") == "/debug/rules?x=1")
                let elsewhere = try await client.post("/debug/login", form: [("csrf", csrf), ("token", token), ("return", "//evil.example/debug")],
                                                      cookie: csrf)
                #expect(elsewhere.header("Location") == "/debug")
            }
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    /// The mock rule "Mock this response" makes of the dogs list, fetched once by the reader.
    static func mockedDogsList(_ client: some TestClientProtocol, _ harness: Harness, token: String) async throws -> MockRule {
        let id = try await loggedDogsList(client)
        _ = try await client.post("/debug/requests/\(id)/mock", form: [("csrf", token)], cookie: token)
        return try #require(try harness.kiosk.debugger.mocks.all().first)
    }

    /// The log's id of the dogs list, fetched once by the reader.
    static func loggedDogsList(_ client: some TestClientProtocol) async throws -> Int {
        _ = try await client.get("/dogs")
        let list = try await client.get("/debug/api/requests?source=dogs&status=2xx")
        let records = try #require(try JSONSerialization.jsonObject(with: Data(list.bytes)) as? [[String: Any]])
        return try #require(records.first?["id"] as? Int)
    }

    @Test("A logged response becomes a mock rule in one click, answers offline, and can be switched off and deleted")
    func mockFromRequest() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "e", count: 64)
            // Given the dogs list fetched once and logged
            let id = try await Self.loggedDogsList(client)
            let detail = try await client.get("/debug/requests/\(id)")
            #expect(detail.body.contains("action=\"/debug/requests/\(id)/mock\""))
            // When "Mock this response" is pressed (without the token it is refused)
            #expect(try await client.post("/debug/requests/\(id)/mock", form: [], cookie: token).status == .forbidden)
            let created = try await client.post("/debug/requests/\(id)/mock", form: [("csrf", token)], cookie: token)
            #expect(created.status == .seeOther && created.header("Location") == "/debug/mocks")
            // Then the rules page lists it, and with the upstream offline a forced refresh is answered by it
            let mocks = try await client.get("/debug/mocks")
            #expect(mocks.body.contains("from request #\(id)") && mocks.body.contains("dogs.json"))
            try await harness.setOffline(true)
            let refreshed = try await client.get("/dogs?refresh=1")
            #expect(refreshed.status == .ok && !refreshed.body.contains("offline-banner"))
            let mocked = try await client.get("/debug/api/requests?decision=mocked")
            #expect(mocked.body.contains("\"decision\" : \"mocked\""))
            // And it can be switched off (the refresh then fails offline) and deleted
            let rule = try #require(try harness.kiosk.debugger.mocks.all().first)
            _ = try await client.post("/debug/mocks/\(rule.id)/disable", form: [("csrf", token)], cookie: token)
            #expect(try harness.kiosk.debugger.mocks.all().first?.isEnabled == false)
            let offline = try await client.get("/dogs?refresh=1")
            #expect(offline.body.contains("offline-banner"))
            _ = try await client.post("/debug/mocks/\(rule.id)/delete", form: [("csrf", token)], cookie: token)
            #expect(try harness.kiosk.debugger.mocks.all().isEmpty)
            #expect(try await client.post("/debug/mocks/\(rule.id)/delete", form: [("csrf", token)], cookie: token).status == .notFound)
            #expect(try await client.post("/debug/mocks/1/explode", form: [("csrf", token)], cookie: token).status == .notFound)
        }
    }

    @Test("A page a mock answered is stored without the upstream's validators: once the mock is gone, a refresh brings the upstream's page, not a 304 confirming the mock's")
    func mockedPageKeepsNoValidators() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "e", count: 64)
            // Given the dogs list mocked from its logged answer (whose ETag the upstream gave), one dog renamed
            let rule = try await Self.mockedDogsList(client, harness, token: token)
            let renamed = String(decoding: rule.body, as: UTF8.self).replacingOccurrences(of: "\"Rex\"", with: "\"Mocked Rex\"")
            try harness.kiosk.debugger.mocks.update(id: rule.id, status: 200, headers: rule.headers + [.init(name: "ETag", value: "\"v-upstream\"")],
                                                   body: Data(renamed.utf8))
            // When the reader refreshes the list (the mock answers, and its page is stored), then the mock is removed
            #expect(try await client.get("/dogs?refresh=1").body.contains("Mocked Rex"))
            let stored = try harness.kiosk.database.snapshot(forKey: PageRequest(source: .dogs).cacheKey)
            try harness.kiosk.debugger.mocks.remove(id: rule.id)
            // Then the stored page names no validator, and the next refresh shows the upstream's list again
            #expect(stored?.metadata.validators.etag == nil && stored?.metadata.validators.lastModified == nil)
            let after = try await client.get("/dogs?refresh=1")
            #expect(!after.body.contains("Mocked Rex") && after.body.contains("Rex"))
        }
    }

    @Test("A mock's edit saved after its answer changed elsewhere (kiosk mock edit) is refused, that change kept; saved again, it replaces it")
    func editOfAChangedMock() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "e", count: 64)
            // Given a mock rule, its page opened in the console
            let rule = try await Self.mockedDogsList(client, harness, token: token)
            let page = try await client.get("/debug/mocks/\(rule.id)").body
            let version = try #require(page.range(of: #"name="version" value=""#).map { page[$0.upperBound...].prefix { $0 != "\"" } })
            // When the CLI changes its status, and the console's form is then saved with its own
            try harness.kiosk.debugger.mocks.update(id: rule.id, status: 503, headers: rule.headers, body: rule.body)
            var fields = [("csrf", token), ("status", "201"), ("headers", "Content-Type: application/json"), ("version", String(version))]
            let saved = try await client.post("/debug/mocks/\(rule.id)", form: fields, cookie: token)
            // Then it is refused, saying why, the CLI's 503 kept
            #expect(saved.status == .conflict)
            #expect(saved.body.contains("answer was changed elsewhere"), "\(saved.body.prefix(300))")
            #expect(try harness.kiosk.debugger.mocks.rule(id: rule.id).status == 503)
            // And the form it came back with, saved again, replaces it knowingly
            let again = try #require(saved.body.range(of: #"name="version" value=""#).map { saved.body[$0.upperBound...].prefix { $0 != "\"" } })
            fields[3] = ("version", String(again))
            #expect(try await client.post("/debug/mocks/\(rule.id)", form: fields, cookie: token).status == .seeOther)
            #expect(try harness.kiosk.debugger.mocks.rule(id: rule.id).status == 201)
        }
    }

    @Test("A mock rule's answer is read and edited on its page: the JSON laid out, saved on one line as it came, and the next request gets it; a bad status is said with what was typed kept")
    func editMock() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "e", count: 64)
            // Given a mock rule made from the dogs list as fetched (a JSON array on one line)
            let rule = try await Self.mockedDogsList(client, harness, token: token)
            #expect(!String(decoding: rule.body, as: UTF8.self).contains("\n"))

            // When its page is opened from the list
            let mocks = try await client.get("/debug/mocks")
            #expect(mocks.body.contains("href=\"/debug/mocks/\(rule.id)\""))
            // (its numbers labelled for a phone, whose rows show no column heads)
            #expect(mocks.body.contains("data-label=\"Status\"") && mocks.body.contains("data-label=\"Hits\""))
            let page = try await client.get("/debug/mocks/\(rule.id)")
            // Then it shows the answer in a form: the status, the headers and the body laid out
            #expect(page.status == .ok)
            #expect(page.body.contains("action=\"/debug/mocks/\(rule.id)\"") && page.body.contains("name=\"status\" value=\"200\""))
            #expect(page.body.contains("{\n    &quot;dogName&quot;: &quot;Rex&quot;,\n"),
                    "\(page.body.components(separatedBy: "name=\"body\"").last?.prefix(300) ?? "")")

            // When a status out of range is sent, with an edited body
            let edited = "[\r\n  {\"dogName\": \"Rexford\", \"description\": \"Renamed in the console.\", \"age\": 6}\r\n]"
            let refused = try await client.post("/debug/mocks/\(rule.id)", form: [("csrf", token), ("status", "99"), ("headers", "Content-Type: application/json"),
                                                                              ("body", edited)], cookie: token)
            // Then it is not saved, said above the form that holds what was typed
            #expect(refused.status == .unprocessableContent && refused.body.contains("role=\"alert\"") && refused.body.contains("Rexford"))
            #expect(try harness.kiosk.debugger.mocks.rule(id: rule.id).body == rule.body)

            // When it is sent with a good status
            let saved = try await client.post("/debug/mocks/\(rule.id)", form: [("csrf", token), ("status", "200"),
                                                                            ("headers", "Content-Type: application/json\r\nX-Edited: yes"),
                                                                            ("body", edited)], cookie: token)
            #expect(saved.status == .seeOther && saved.header("Location") == "/debug/mocks#mock-\(rule.id)")
            // Then the rule keeps it, on one line as the answer came, its match, hits and origin unchanged
            let kept = try harness.kiosk.debugger.mocks.rule(id: rule.id)
            #expect(String(decoding: kept.body, as: UTF8.self) == #"[{"dogName":"Rexford","description":"Renamed in the console.","age":6}]"#)
            #expect(kept.headers.map(\.name) == ["Content-Type", "X-Edited"] && kept.urlPattern == rule.urlPattern && kept.origin == rule.origin)
            // And with the upstream offline, the reader's refresh gets the edited answer
            try await harness.setOffline(true)
            let refreshed = try await client.get("/dogs?refresh=1")
            #expect(refreshed.body.contains("Rexford"), "\(refreshed.body.prefix(2000))")
            // And an unknown rule's page is the console's 404
            #expect(try await client.get("/debug/mocks/999").status == .notFound)
            #expect(try await client.post("/debug/mocks/999", form: [("csrf", token), ("status", "200")], cookie: token).status == .notFound)
        }
    }

    @Test("The endpoint registry lists every endpoint of every source and images, secrets redacted")
    func registry() async throws {
        try await withWeb { harness, client in
            // Given the configured sources
            // When the registry is asked for
            let json = try await client.get("/debug/api/endpoints")
            let page = try await client.get("/debug/endpoints")
            // Then it names every endpoint with its host, template, model and cache policy
            let endpoints = try #require(try JSONSerialization.jsonObject(with: Data(json.bytes)) as? [[String: Any]])
            #expect(endpoints.compactMap { $0["name"] as? String } == [
                "nyt.mostpopular", "marvel.characters", "marvel.character", "rickandmorty.characters", "rickandmorty.character",
                "rickandmorty.characters.byID", "rickandmorty.episodes", "rickandmorty.episode", "rickandmorty.episodes.byID",
                "rickandmorty.locations", "rickandmorty.location", "rickandmorty.locations.byID", "dogs.list", "image",
            ])
            for endpoint in endpoints {
                for key in ["host", "template", "method", "contentType", "responseModel", "cachePolicy", "headers"] {
                    #expect(endpoint[key] != nil, "\(endpoint["name"] ?? "?") lacks \(key)")
                }
            }
            #expect(json.body.contains("apikey=<redacted>") && json.body.contains("api-key=<redacted>"))
            // And each model is one string in English, its shape then what it yields
            let models = Dictionary(uniqueKeysWithValues: endpoints.map { ($0["name"] as? String ?? "", $0["responseModel"] as? String) })
            #expect(models["rickandmorty.characters.byID"] == "[Character] (one id: Character)")
            #expect(models["marvel.character"] == "{code, data: {results: [Character]}} → one character")
            #expect(models["image"] == "raster image bytes")
            #expect(models["rickandmorty.character"] == "Character")
            let keys = await harness.demo.keys
            for key in [keys.nyt, keys.marvelPublic, keys.marvelPrivate] { #expect(!json.body.contains(key) && !page.body.contains(key)) }
            #expect(page.status == .ok && page.body.contains("<h2>rickandmorty.characters</h2>"))
        }
    }

    @Test("A tunnel's page offers no curl command and no resend: its bytes were passed on unread, there is no request to send again")
    func tunnelHasNoCurl() async throws {
        try await withWeb { harness, client in
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(String(repeating: "d", count: 64))"]
            // Given a tunnel in the log, and a request of Kiosk's own
            harness.kiosk.recordTunnel(TunnelSummary(host: "api.example.test", port: 443, sent: 1, received: 2, duration: 0.1, error: nil))
            try harness.kiosk.debugger.flush()
            let tunnel = try #require(try harness.kiosk.debugger.records(matching: RequestFilter()).first)
            #expect(tunnel.isTunnel)
            // When its page is opened
            let page = try await client.get("/debug/requests/\(tunnel.id)", headers: cookie)
            // Then it has no curl section and no resend, but still its archive
            #expect(page.status == .ok)
            #expect(!page.body.contains("id=\"curl-\(tunnel.id)\"") && !page.body.contains("curl -X"), "\(page.body)")
            #expect(!page.body.contains("/compose"))
            #expect(page.body.contains("kiosk-request-\(tunnel.id).har"))
        }
    }

    @Test("The endpoints page lists the hosts apps reached through kiosk proxy, each with its breakpoint switches, which can be set")
    func registryOfProxiedHosts() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "d", count: 64)
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(token)"]
            // Given the log holds an app's exchanges with two hosts through the proxy (tunnels, as kiosk proxy logs them)
            harness.kiosk.recordTunnel(TunnelSummary(host: "localhost", port: 3000, sent: 10, received: 20, duration: 0.1, error: nil))
            harness.kiosk.recordTunnel(TunnelSummary(host: "localhost", port: 3000, sent: 10, received: 20, duration: 0.1, error: nil))
            harness.kiosk.recordTunnel(TunnelSummary(host: "api.example.test", port: 443, sent: 1, received: 2, duration: 0.1, error: nil))
            try harness.kiosk.debugger.flush()
            // When the endpoints page is opened
            let page = try await client.get("/debug/endpoints", headers: cookie)
            // Then before the catalogs' endpoints it lists both hosts, counted, each with its breakpoint form and a link to its requests
            #expect(page.status == .ok)
            #expect(page.body.contains("Apps&#39; hosts through kiosk proxy"))
            let hosts = try #require(page.body.range(of: "Apps&#39; hosts through kiosk proxy"))
            let catalogs = try #require(page.body.range(of: "Kiosk&#39;s own catalogs"))
            #expect(hosts.lowerBound < catalogs.lowerBound)
            #expect(catalogs.lowerBound < (page.body.range(of: "id=\"rickandmorty.characters\"")?.lowerBound ?? page.body.startIndex))
            #expect(page.body.contains("<h3>localhost:3000</h3>") && page.body.contains("2 exchanges logged"))
            #expect(page.body.contains("<h3>api.example.test</h3>") && page.body.contains("1 exchange logged"))
            #expect(page.body.contains("action=\"/debug/breakpoints/localhost%3A3000\""))
            #expect(page.body.contains("filter=host%3Alocalhost%3A3000") || page.body.contains("filter=host:localhost:3000"))
            #expect(!page.body.contains("<h3>image</h3>"))
            // And a breakpoint set there is kept for the host
            let set = try await client.post("/debug/breakpoints/localhost%3A3000",
                                             form: [("csrf", token), ("request", "pause"), ("response", "ignore"), ("error", "ignore")], cookie: token)
            #expect(set.status == .seeOther)
            #expect(harness.kiosk.debugger.breakpoints.setting(for: "localhost:3000").request == .pause)
            // And a URL pattern on a port no URL has is refused saying so, not that no endpoint has that name
            let badPort = try await client.post("/debug/breakpoints/" + "http://x.test:99999/a".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
                                                form: [("csrf", token), ("request", "pause"), ("response", "ignore"), ("error", "ignore")], cookie: token)
            #expect(badPort.status == .badRequest && badPort.body.contains("port 99999 is no port"), "\(badPort.status) \(badPort.body)")
            // And in Spanish the section is Spanish
            let spanish = try await client.get("/debug/endpoints", headers: [.cookie: "\(CSRFProtection.cookieName)=\(token)", .acceptLanguage: "es"])
            #expect(spanish.body.contains("Servidores de las apps a través de kiosk proxy") && spanish.body.contains("2 intercambios registrados"))
        }
    }

    @Test("A proxy's console offers the reader's source menu and picture chips only once its log holds a catalog's request")
    func readerFiltersOnProxy() async throws {
        try await withWeb { harness, client in
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(String(repeating: "d", count: 64))"]
            let log = try #require(harness.kiosk.debugger.log)
            func append(_ source: SourceID?, _ endpoint: String, _ url: String) throws {
                _ = try log.append(RequestRecord(startedAt: harness.kiosk.now(), source: source, endpoint: endpoint, method: "GET", url: url,
                                                 status: 200, timings: RequestTimings(total: 0.01), decision: .network))
            }
            // Given kiosk serve's console with an empty log, then the reader's filters are offered
            let serve = try await client.get("/debug", headers: cookie)
            #expect(serve.body.contains(#"name="source""#) && serve.body.contains(">Pictures</a>"))
            // Given a proxy in the process whose log holds an app's exchange only
            harness.kiosk.attachProxy { ConsoleProxyPageTests.overview }
            try append(nil, "localhost:3000", "http://localhost:3000/api/a")
            // Then its list offers hosts, the cache and errors, but no source menu and no pictures (they would select nothing)
            let proxy = try await client.get("/debug", headers: cookie)
            #expect(!proxy.body.contains(#"name="source""#) && !proxy.body.contains(">Pictures</a>") && !proxy.body.contains(">API</a>"))
            #expect(proxy.body.contains(#"name="host""#) && proxy.body.contains(">Store</a>") && proxy.body.contains(">Errors</a>"))
            // And a source asked for in the address is still shown chosen
            let asked = try await client.get("/debug?source=nyt", headers: cookie)
            #expect(asked.body.contains(#"<option value="nyt" selected>"#))
            // When the reader on the same console fetches a catalog, then the reader's filters come back
            try append(.nyt, "nyt.mostPopular", "https://api.nytimes.com/svc/mostpopular/v2/viewed/1.json")
            let both = try await client.get("/debug", headers: cookie)
            #expect(both.body.contains(#"name="source""#) && both.body.contains(">Pictures</a>"))
            // And the insights tell the app's traffic by its host
            let insights = try await client.get("/debug/insights", headers: cookie)
            #expect(insights.body.contains("<th scope=\"row\">localhost:3000</th>") && insights.body.contains("Source / Host"))
        }
    }

    @Test("The request list offers the apps' hosts in a menu of their own, which filters by host, and refuses a host that is no name")
    func hostMenu() async throws {
        try await withWeb { harness, client in
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(String(repeating: "d", count: 64))"]
            // Given no app has gone through the proxy
            let before = try await client.get("/debug", headers: cookie)
            // Then the list has no host menu
            #expect(!before.body.contains("name=\"host\""))
            // Given the log holds an app's exchanges with two hosts
            let log = try #require(harness.kiosk.debugger.log)
            for (host, path) in [("localhost:3000", "/api/a"), ("api.example.test", "/v1/b")] {
                _ = try log.append(RequestRecord(startedAt: harness.kiosk.now(), source: nil, endpoint: host, method: "GET",
                                                 url: "http://\(host)\(path)", status: 200, timings: RequestTimings(total: 0.01),
                                                 decision: .network))
            }
            // When the list is opened
            let page = try await client.get("/debug", headers: cookie)
            // Then a host menu offers both
            #expect(page.body.contains("name=\"host\""))
            #expect(page.body.contains("<option value=\"localhost:3000\">localhost:3000</option>"))
            #expect(page.body.contains("<option value=\"api.example.test\">api.example.test</option>"))
            // And choosing one lists only its exchanges, with the choice kept in the menu
            let chosen = try await client.get("/debug?host=localhost:3000", headers: cookie)
            #expect(chosen.status == .ok)
            #expect(chosen.body.contains("<option value=\"localhost:3000\" selected>"))
            let tbody = try #require(chosen.body.range(of: "<tbody>"))
            let table = String(chosen.body[tbody.lowerBound...])
            #expect(table.contains("/api/a") && !table.contains("/v1/b"))
            // And the JSON list takes the same parameter
            let json = try await client.get("/debug/api/requests?host=api.example.test", headers: cookie)
            #expect(json.body.contains("/v1/b") && !json.body.contains("/api/a"))
            // And a host chosen in the console's menu and typed in the filter too is the menu's, the filter's other terms kept;
            // to a script of the JSON list, a 400 naming the key given twice
            let both = try await client.get("/debug?host=localhost:3000&filter=" + QueryString.encode("host:api.example.test method:GET"),
                                            headers: cookie)
            let listed = String(both.body[(both.body.range(of: "<tbody>")?.lowerBound ?? both.body.startIndex)...])
            #expect(both.status == .ok && listed.contains("/api/a") && !listed.contains("/v1/b"))
            let scripted = try await client.get("/debug/api/requests?host=localhost:3000&filter=" + QueryString.encode("host:api.example.test"),
                                                headers: cookie)
            #expect(scripted.status == .badRequest && scripted.body.contains("host is given both"))
            let typed = try await client.get("/debug?host=localhost:3000&filter=" + QueryString.encode("-host:api.example.test method:GET"), headers: cookie)
            #expect(typed.status == .ok && typed.body.contains("value=\"method:GET\"") && !typed.body.contains("value=\"-host:api.example.test"))
            // And one that is no name is refused
            let bad = try await client.get("/debug/api/requests?host=no%20such%20host", headers: cookie)
            #expect(bad.status == .badRequest && bad.body.contains("is not a host name or address"))
        }
    }

    @Test("The endpoints page lists each app host's paths, counted across queries, each with switches that set a path's breakpoint")
    func registryOfProxiedPaths() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "e", count: 64)
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(token)"]
            // Given an app's requests through the proxy to two paths of a local host, one with two queries
            let base = await harness.demo.baseURL.absoluteString
            for path in ["/app/a?x=1", "/app/a?x=2", "/app/b"] {
                _ = try? await harness.kiosk.forward(KioskCore.HTTPRequest(url: URL(string: base + path)!, endpoint: URL(string: base)!.host()! + ":"
                                                                 + String(URL(string: base)!.port!), purpose: .proxied))
            }
            try harness.kiosk.debugger.flush()
            // When the endpoints page is opened
            let page = try await client.get("/debug/endpoints", headers: cookie)
            // Then the host lists both paths, the first counted across its queries, each with a form keyed by its URL
            #expect(page.body.contains("<code>/app/a</code> · 2 exchanges logged"))
            #expect(page.body.contains("<code>/app/b</code> · 1 exchange logged"))
            let key = base + "/app/a"
            #expect(page.body.contains("action=\"/debug/breakpoints/\(QueryString.encode(key))\""))
            // And a breakpoint set there is kept for that path alone, and shown open
            let set = try await client.post("/debug/breakpoints/\(QueryString.encode(key))",
                                             form: [("csrf", token), ("request", "ignore"), ("response", "pause"), ("error", "ignore")], cookie: token)
            #expect(set.status == .seeOther)
            #expect(harness.kiosk.debugger.breakpoints.setting(for: key).response == .pause)
            #expect(harness.kiosk.debugger.breakpoints.setting(for: base + "/app/b").isOff)
            let after = try await client.get("/debug/endpoints", headers: cookie)
            #expect(after.body.contains("<details open><summary><code>/app/a</code>"))
            // And a pattern set from the command line that no path shows is listed on its own, to be turned off
            try harness.kiosk.debugger.breakpoints.set(BreakpointSetting(error: .pause), for: "https://*.example.test/v1/*")
            let patterns = try await client.get("/debug/endpoints", headers: cookie)
            #expect(patterns.body.contains("<h2>URL patterns</h2>") && patterns.body.contains("<code>https://*.example.test/v1/*</code>"))
            // And what is not a URL of http(s) is no breakpoint key
            #expect(try await client.post("/debug/breakpoints/\(QueryString.encode("ftp://x/"))", form: [("csrf", token), ("request", "pause"),
                                                                                                      ("response", "ignore"), ("error", "ignore")],
                                          cookie: token).status == .notFound)
        }
    }

    @Test("A revalidation paused at a response breakpoint is a 304 with no body: its page says so, and how to edit an answer")
    func pausedNotModified() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "f", count: 64)
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(token)"]
            // Given the list stored once, then a response breakpoint on its endpoint
            _ = try await client.get("/rickandmorty")
            _ = try await client.post("/debug/breakpoints/rickandmorty.characters",
                                      form: [("csrf", token), ("request", "ignore"), ("response", "pause"), ("error", "ignore")], cookie: token)
            // When the reader refreshes it, and the upstream's 304 waits at the breakpoint
            let page = Task { try await client.get("/rickandmorty?refresh=1", headers: cookie) }
            for _ in 0..<2000 where harness.kiosk.debugger.breakpoints.paused.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
            let paused = try #require(harness.kiosk.debugger.breakpoints.paused.first)
            #expect(paused.status == 304)
            // Then its page says there is no body, the copy held is what the page gets, and how to edit an answer
            let editor = try await client.get("/debug/paused/\(paused.id)", headers: cookie)
            #expect(editor.body.contains("This is a 304 Not Modified") && editor.body.contains("status 200 and a body"), "\(editor.body.prefix(200))")
            // And sent on unchanged, the page shows the stored list
            _ = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "continue")], cookie: token)
            #expect(try await page.value.body.contains("Rick Sanchez"))
        }
    }

    @Test("A response breakpoint set in the console pauses a page; a bad edit stays paused with its reason, a good one reaches the page")
    func pauseAndEdit() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "f", count: 64)
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(token)"]
            // Given a response breakpoint switched on from the endpoints page
            let registry = try await client.get("/debug/endpoints", headers: cookie)
            #expect(registry.body.contains("action=\"/debug/breakpoints/rickandmorty.characters\""))
            let set = try await client.post("/debug/breakpoints/rickandmorty.characters",
                                             form: [("csrf", token), ("request", "ignore"), ("response", "pause"), ("error", "ignore")], cookie: token)
            #expect(set.status == .seeOther)
            #expect(try await client.post("/debug/breakpoints/rickandmorty.nowhere", form: [("csrf", token), ("request", "pause"), ("response", "pause"),
                                                                                ("error", "pause")], cookie: token).status == .notFound)
            // When the list is opened, it waits at the breakpoint
            let page = Task { try await client.get("/rickandmorty", headers: cookie) }
            for _ in 0..<2000 where harness.kiosk.debugger.breakpoints.paused.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
            let paused = try #require(harness.kiosk.debugger.breakpoints.paused.first)
            let list = try await client.get("/debug/paused")
            #expect(list.body.contains("/debug/paused/\(paused.id)"))
            #expect(try await client.get("/debug").body.contains("1 request is paused at a breakpoint"))
            let editor = try await client.get("/debug/paused/\(paused.id)", headers: cookie)
            #expect(editor.body.contains("<textarea name=\"body\"") && editor.body.contains("Rick Sanchez"))
            // And a body that is not JSON is refused with the place of the problem, the request still paused
            let original = try #require(paused.responseText)
            let bad = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "edit"), ("status", "200"),
                                                                              ("body", "{\"info\": [1,\n")], cookie: token)
            #expect(bad.status == .unprocessableContent && bad.body.contains("Not sent: Invalid JSON at $.info[1] (byte 13): unexpected end of the document"))
            // (in Spanish, in Spanish)
            let malo = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "edit"), ("status", "200"),
                                                                               ("body", "{\"info\": [1,\n")], cookie: token, headers: [.acceptLanguage: "es"])
            #expect(malo.status == .unprocessableContent
                    && malo.body.contains("JSON no válido en $.info[1] (byte 13): el documento termina antes de tiempo"), "\(malo.body)")
            #expect(harness.kiosk.debugger.breakpoints.paused.count == 1)
            // And a good edit is sent to the page, which shows it
            let renamed = original.replacingOccurrences(of: "\"name\":\"Rick Sanchez\"", with: "\"name\":\"Console Rick\"")
            let good = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "edit"), ("status", "200"),
                                                                               ("body", renamed)], cookie: token)
            #expect(good.status == .seeOther)
            let shown = try await page.value
            #expect(shown.body.contains("Console Rick"))
            // And the edit is logged as edited and was not stored
            #expect(try await client.get("/debug/api/requests?decision=edited").body.contains("\"decision\" : \"edited\""))
            #expect(try harness.kiosk.database.snapshot(forKey: PageRequest(source: .rickandmorty).cacheKey) == nil)
            // And a decision for a request no longer paused is a 409 that says so; an edit sent too late is shown back, not lost
            let late = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "continue")], cookie: token)
            #expect(late.status == .conflict && late.body.contains("is not paused any more"))
            let lateEdit = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "edit"), ("status", "200"),
                                                                                   ("body", #"{"typed":"too late"}"#)], cookie: token)
            #expect(lateEdit.status == .conflict && lateEdit.body.contains("What you typed was not sent"))
            #expect(lateEdit.body.contains("{&quot;typed&quot;:&quot;too late&quot;}") || lateEdit.body.contains(#"{"typed":"too late"}"#))
        }
    }

    @Test("A paused answer the editor cannot carry (compressed, not text, too large) is shown without an editor, and its own form releases it",
          arguments: [
              (["Content-Encoding": "gzip"], Data([0x1F, 0x8B, 0x08, 0x00, 0x01, 0x02, 0x03]), "is compressed (gzip)"),
              ([:], Data("{\"a\":\"\u{1}\u{7}\"}".utf8), "is not text"),
              ([:], Data(("[" + Array(repeating: "1234567890", count: 300_000).joined(separator: ",") + "]").utf8), "is too large to edit here"),
          ] as [(HTTPHeaderFields, Data, String)])
    func uneditableAnswers(headers: HTTPHeaderFields, body: Data, note: String) async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "f", count: 64)
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(token)"]
            // Given an app's answer held at a breakpoint
            var fields = headers
            fields["Content-Type"] = "application/json"
            let breakpoints = harness.kiosk.debugger.breakpoints
            let (held, paused) = try await holdAppExchange(harness, at: .response, url: "http://127.0.0.1:9/answer",
                                                           answer: (fields, body))
            // When its page is opened
            let page = try await client.get("/debug/paused/\(paused.id)", headers: cookie)
            // Then it says why there is no editor, and its buttons post a form that holds no body
            #expect(page.status == .ok && page.body.contains(note))
            #expect(!page.body.contains("<textarea name=\"body\""))
            #expect(page.body.contains("form=\"decision-\(paused.id)\"") && page.body.contains("id=\"decision-\(paused.id)\""))
            // And an edit posted anyway, larger than a form may be, is a 413 that leaves it paused
            let huge = String(repeating: "x", count: DebugController.maximumEditBytes + 1)
            let tooLarge = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "edit"), ("status", "200"),
                                                                                   ("body", huge)], cookie: token)
            #expect(tooLarge.status == .contentTooLarge && tooLarge.body.contains("larger than this address accepts"))
            #expect(breakpoints.paused.count == 1)
            // When "Send unchanged" posts its form (the action and the token only)
            let sent = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "continue")], cookie: token)
            // Then the answer goes on unchanged
            #expect(sent.status == .seeOther)
            #expect(await held.value == .continueUnchanged)
        }
    }

    @Test("An exchange paused at a breakpoint heads the live list, paused, its row leading to the pause; a filter that cannot select it leaves it out")
    func pausedRowInTheList() async throws {
        try await withWeb { harness, client in
            // Given an app's answer held at a breakpoint
            let (held, paused) = try await holdAppExchange(harness, at: .response, url: "http://127.0.0.1:9/held?token=app-secret-5",
                                                           answer: (["Content-Type": "application/json"], Data("{}".utf8)))
            // When the list is read
            let page = try await client.get("/debug")
            // Then its first row is the pause's, saying so, its token hidden, leading to it
            #expect(page.body.contains("<tr data-inflight=\"p\(paused.id)\" class=\"pending paused\">"), "\(page.body)")
            #expect(page.body.contains("href=\"/debug/paused/\(paused.id)\"") && !page.body.contains("app-secret-5"))
            // And a filter of another host leaves it out
            #expect(!(try await client.get("/debug?filter=host:elsewhere.test")).body.contains("data-inflight=\"p\(paused.id)\""))
            harness.kiosk.debugger.breakpoints.decide(paused.id, .continueUnchanged)
            _ = await held.value
        }
    }

    @Test("A paused gzip answer is shown decoded in the editor, saying it came compressed and goes uncompressed if edited")
    func compressedAnswerShownDecoded() async throws {
        try await withWeb { harness, client in
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(String(repeating: "c", count: 64))"]
            // Given an app's gzip answer held at a breakpoint
            let json = Data(#"{"name":"Zipped Rick"}"#.utf8)
            let gzip = try #require(ContentCoding.encoded(json, coding: "gzip"))
            let (held, paused) = try await holdAppExchange(harness, at: .response, url: "http://127.0.0.1:9/zipped",
                                                           answer: (["Content-Type": "application/json", "Content-Encoding": "gzip"], gzip))
            // When its page is opened
            let page = try await client.get("/debug/paused/\(paused.id)", headers: cookie)
            // Then its JSON is in the editor, with what an edit sends, and no Content-Encoding among the fields to edit
            #expect(page.status == .ok && page.body.contains("<textarea name=\"body\""))
            #expect(page.body.contains("Zipped Rick"))
            #expect(page.body.contains("The answer came compressed (gzip, \(gzip.count) B) and is shown decoded"))
            #expect(!page.body.contains("Content-Encoding: gzip"))
            harness.kiosk.debugger.breakpoints.decide(paused.id, .continueUnchanged)
            _ = await held.value
        }
    }

    @Test("A paused answer's header fields are edited in the console; a changed value still holding <redacted> or a bad line is refused")
    func answerFieldsEdited() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "e", count: 64)
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(token)"]
            // Given an app's answer held at a breakpoint, setting a cookie the console shows hidden
            let breakpoints = harness.kiosk.debugger.breakpoints
            let (held, paused) = try await holdAppExchange(harness, at: .response, url: "http://127.0.0.1:9/login",
                                                           answer: (["Content-Type": "application/json", "Set-Cookie": "sid=s3cr3t-session; Path=/"],
                                                                    Data(#"{"ok":true}"#.utf8)))
            // Then its page shows the answer's fields for editing, the cookie hidden
            let page = try await client.get("/debug/paused/\(paused.id)", headers: cookie)
            #expect(page.body.contains("Response headers (Name: value per line; &lt;redacted&gt; keeps the secret)"))
            #expect(page.body.contains("Set-Cookie: &lt;redacted&gt;") && !page.body.contains("s3cr3t-session"))
            // When a changed value still holds <redacted>, or a line is no header, or a name is no token
            for (headers, problem) in [("Set-Cookie: sid=<redacted>; Path=/", "Set-Cookie still holds &lt;redacted&gt;"),
                                       ("Content-Type application/json", "Each header is a line “Name: value”"),
                                       ("Bad Name: 1", "“Bad Name” is not a header name")] {
                let refused = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "edit"), ("status", "201"),
                                                                                      ("headers", headers), ("body", #"{"ok":false}"#)], cookie: token)
                // Then it is shown again with why, as typed, and stays paused
                #expect(refused.status == .unprocessableContent && refused.body.contains(problem), "\(refused.body)")
                #expect(refused.body.contains(#"{&quot;ok&quot;:false}"#) && refused.body.contains("value=\"201\""))
                #expect(breakpoints.paused.count == 1)
            }
            // When the hidden cookie is left as shown, a field changed and one added
            let sent = try await client.post("/debug/paused/\(paused.id)", form: [
                ("csrf", token), ("action", "edit"), ("status", "200"), ("body", #"{"ok":true}"#),
                ("headers", "Content-Type: application/json; charset=utf-8\r\nSet-Cookie: <redacted>\r\nX-Edited: yes"),
            ], cookie: token)
            // Then the decision carries the fields as edited (the transport puts the real cookie back)
            #expect(sent.status == .seeOther, "\(sent.body)")
            #expect(await held.value == .continueWithResponse(status: 200, body: Data(#"{"ok":true}"#.utf8), headers: [
                ("Content-Type", "application/json; charset=utf-8"), ("Set-Cookie", "<redacted>"), ("X-Edited", "yes"),
            ]))
        }
    }

    @Test("A body typed into a paused answer given a status that carries none (304, 204) is refused with why, not taken and dropped")
    func bodyForAStatusWithoutOne() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "e", count: 64)
            // Given an app's 304 held at a breakpoint
            let (held, paused) = try await holdAppExchange(harness, at: .response, url: "http://127.0.0.1:9/items",
                                                           answer: (["ETag": "\"v1\""], Data()), status: 304)
            for status in ["304", "204"] {
                // When a body is typed and the status left at one that carries none
                let refused = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "edit"), ("status", status),
                                                                                      ("body", #"[{"dogName": 5}]"#)], cookie: token)
                // Then it is refused with why, and stays paused
                #expect(refused.status == .unprocessableContent && refused.body.contains("answer carries no body"), "\(refused.body.suffix(600))")
                #expect(harness.kiosk.debugger.breakpoints.paused.count == 1)
            }
            // And with 200 the body goes
            let sent = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "edit"), ("status", "200"),
                                                                               ("body", #"[{"dogName": 5}]"#)], cookie: token)
            #expect(sent.status == .seeOther)
            #expect(await held.value == .continueWithResponse(status: 200, body: Data(#"[{"dogName": 5}]"#.utf8), headers: nil))
        }
    }

    @Test("A paused answer echoing its request's token shows it hidden; an edit leaving it as shown sends the upstream's own, one typing <redacted> into a changed value is refused")
    func answerEchoHidden() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "f", count: 64)
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(token)"]
            // Given an app's answer held at a breakpoint, echoing the app's token in its body and a field
            let (held, paused) = try await holdAppExchange(harness, at: .response, url: "http://127.0.0.1:9/me",
                                                           headers: ["Authorization": "Bearer app-token-424242"],
                                                           answer: (["Content-Type": "application/json", "X-Echo": "Bearer app-token-424242"],
                                                                    Data(#"{"echo": "Bearer app-token-424242", "n": 1}"#.utf8)))
            // Then its page shows neither echo
            let page = try await client.get("/debug/paused/\(paused.id)", headers: cookie)
            #expect(page.status == .ok && !page.body.contains("app-token-424242"), "\(page.body.prefix(300))")
            // When an edit changes the echo yet keeps <redacted> in it, it is refused, and the answer stays paused
            let refused = try await client.post("/debug/paused/\(paused.id)", form: [
                ("csrf", token), ("action", "edit"), ("status", "200"), ("body", #"{"echo": "Token <redacted>", "n": 2}"#)], cookie: token)
            #expect(refused.status == .unprocessableContent && refused.body.contains("still holds &lt;redacted&gt;"), "\(refused.status)")
            #expect(harness.kiosk.debugger.breakpoints.paused.count == 1)
            // When an edit leaves the echo as shown and changes another value
            let sent = try await client.post("/debug/paused/\(paused.id)", form: [
                ("csrf", token), ("action", "edit"), ("status", "200"), ("body", #"{"echo": "<redacted>", "n": 2}"#)], cookie: token)
            // Then the app gets the upstream's own echo with the edit
            #expect(sent.status == .seeOther, "\(sent.body.prefix(300))")
            #expect(await held.value == .continueWithResponse(status: 200, body: Data(#"{"echo":"Bearer app-token-424242","n":2}"#.utf8)))
        }
    }

    @Test("A paused request's method and path are edited in the console; a method or path that cannot be sent is refused")
    func requestLineEdited() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "e", count: 64)
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(token)"]
            // Given an app's request held before it is sent
            let breakpoints = harness.kiosk.debugger.breakpoints
            let (held, paused) = try await holdAppExchange(harness, at: .request, url: "http://127.0.0.1:9/v1/items?page=2")
            // Then its page has its method and path to edit
            let page = try await client.get("/debug/paused/\(paused.id)", headers: cookie)
            #expect(page.body.contains(#"name="method" value="GET""#) && page.body.contains(#"name="path" value="/v1/items""#))
            // When a method that is no token, or a path with a space, is sent
            for (method, path, problem) in [("GE T", "/v1/items", "The method is not an HTTP method"),
                                            ("GET", "/v1/my items", "The path starts with /"),
                                            ("GET", "v1/items", "The path starts with /")] {
                let refused = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "edit"), ("method", method),
                                                                                      ("path", path), ("query", "page=2"), ("headers", "")],
                                                    cookie: token)
                // Then it is refused, shown again as typed, still paused
                #expect(refused.status == .unprocessableContent && refused.body.contains(problem), "\(refused.body)")
                #expect(refused.body.contains("value=\"\(path)\"") && breakpoints.paused.count == 1)
            }
            // When another method and path are sent
            let sent = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "edit"), ("method", "DELETE"),
                                                                               ("path", "/v2/items/%C3%A9"), ("query", "page=3"), ("headers", "")],
                                             cookie: token)
            // Then the decision carries them
            #expect(sent.status == .seeOther, "\(sent.body)")
            #expect(await held.value == .continueWithRequest(query: [("page", "3")], headers: [], method: "DELETE", path: "/v2/items/%C3%A9"))
        }
    }

    @Test("A paused request's body edited in the console keeps the secrets Kiosk hid where they were left as shown; <redacted> in a changed value is refused",
          arguments: [("application/json", #"{"x":1,"password":"hunter2"}"#, #"{"x":2,"password":"<redacted>"}"#, #"{"x":2,"password":"hunter2"}"#,
                       #"{"x":2,"password":"<redacted>!"}"#),
                      ("application/x-www-form-urlencoded", "x=1&password=hunter2", "x=2&password=<redacted>", "x=2&password=hunter2",
                       "x=2&password=<redacted>!")])
    func requestBodySecretsKept(contentType: String, original: String, edited: String, sent: String, changed: String) async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "e", count: 64)
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(token)"]
            // Given an app's POST held before it is sent, its password shown as <redacted>
            let (held, paused) = try await holdAppExchange(harness, at: .request, url: "http://127.0.0.1:9/login",
                                                           body: (contentType, Data(original.utf8)))
            let page = try await client.get("/debug/paused/\(paused.id)", headers: cookie)
            #expect(page.body.contains("&lt;redacted&gt;") && !page.body.contains("hunter2"))
            // When a secret is typed over with <redacted> in it, the edit is refused and the request stays paused
            let refused = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "edit"), ("query", ""),
                                                                                  ("headers", "Content-Type: \(contentType)"), ("body", changed)],
                                                cookie: token)
            #expect(refused.status == .unprocessableContent && refused.body.contains("still holds &lt;redacted&gt;"), "\(refused.body)")
            // When another field is changed and the password left as shown
            let sentEdit = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "edit"), ("query", ""),
                                                                                   ("headers", "Content-Type: \(contentType)"), ("body", edited)],
                                                 cookie: token)
            // Then the request goes with the edit and its real password
            #expect(sentEdit.status == .seeOther, "\(sentEdit.body)")
            guard case .continueWithRequest(_, _, let body, _, _) = await held.value else {
                Issue.record("expected an edited request")
                return
            }
            #expect(body.map { String(decoding: $0, as: UTF8.self) } == sent)
        }
    }

    @Test("A request held before it is sent says an edit goes to its upstream, not that an answer is edited")
    func requestPhaseNote() async throws {
        try await withWeb { harness, client in
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(String(repeating: "e", count: 64))"]
            // Given an app's request held at its request breakpoint
            let breakpoints = harness.kiosk.debugger.breakpoints
            let (held, paused) = try await holdAppExchange(harness, at: .request, url: "http://127.0.0.1:9/held")
            // When its page is opened, then its note speaks of the request
            let page = try await client.get("/debug/paused/\(paused.id)", headers: cookie)
            #expect(page.body.contains("The request goes to its upstream as edited here"))
            #expect(!page.body.contains("An edited response is shown to the app"))
            #expect(breakpoints.decide(paused.id, .continueUnchanged))
            _ = await held.value
        }
    }

    @Test("An app's text answer held at a breakpoint is edited as text; its JSON answer must stay JSON", arguments: [
        ("text/plain", "hello plain text", "plain edited text, not json", true),
        ("application/json", #"{"a": 1}"#, "plain edited text, not json", false),
        ("application/json", #"{"a": 1}"#, #"{"a": 2}"#, true),
        // A JSON answer on one line edited in the editor's indented layout goes on in one line
        ("application/json", #"{"a":1,"b":[true,null]}"#, "{\r\n  \"a\": 2,\r\n  \"b\": [\r\n    true,\r\n    null\r\n  ]\r\n}", true),
        // A textarea's lines come back as CR LF (the HTML form rules): the app gets the line feeds it was shown
        ("text/plain", "line one\nline two", "line one\r\nline two, edited", true),
    ])
    func textAnswersEditAsText(contentType: String, original: String, edit: String, accepted: Bool) async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "e", count: 64)
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(token)"]
            // Given an app's answer held at a breakpoint
            let breakpoints = harness.kiosk.debugger.breakpoints
            let (held, paused) = try await holdAppExchange(harness, at: .response, url: "http://127.0.0.1:9/text",
                                                           answer: (["Content-Type": contentType], Data(original.utf8)))
            // Then its editor says what it edits
            let page = try await client.get("/debug/paused/\(paused.id)", headers: cookie)
            #expect(page.body.contains(contentType == "text/plain" ? "Response body (text, editable)" : "Response body (JSON, editable)"))
            // When an edit is sent
            let sent = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", token), ("action", "edit"), ("status", "200"),
                                                                               ("body", edit)], cookie: token)
            if accepted {
                // Then a text answer's text edit (or a JSON answer's JSON edit) goes to the app
                #expect(sent.status == .seeOther, "\(sent.body)")
                let expected = edit.hasPrefix("{\r\n") ? #"{"a":2,"b":[true,null]}"# : edit.replacingOccurrences(of: "\r\n", with: "\n")
                #expect(await held.value == .continueWithResponse(status: 200, body: Data(expected.utf8)))
            } else {
                // Or a JSON answer edited into text is shown again with the error, still paused
                #expect(sent.status == .unprocessableContent && sent.body.contains("Invalid JSON at $ (byte 0): expected a value, found “p”"))
                #expect(breakpoints.decide(paused.id, .continueUnchanged))
                _ = await held.value
            }
        }
    }

    @Test("Replay sends a logged Marvel request again, signed anew, logged as a new request and not stored")
    func replay() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "9", count: 64)
            // Given a logged Marvel request (its ts, apikey and hash redacted in the log)
            _ = try await client.get("/marvel")
            let before = try JSONSerialization.jsonObject(with: Data(try await client.get("/debug/api/requests?source=marvel").bytes)) as? [[String: Any]]
            let id = try #require(before?.first?["id"] as? Int)
            let storedBefore = try harness.kiosk.database.snapshot(forKey: PageRequest(source: .marvel).cacheKey)?.metadata
            #expect(try await client.get("/debug/requests/\(id)").body.contains("action=\"/debug/requests/\(id)/replay\""))
            // When it is replayed
            let replayed = try await client.post("/debug/requests/\(id)/replay", form: [("csrf", token)], cookie: token)
            #expect(replayed.status == .seeOther)
            // Then a new exchange with a 200 is logged (Marvel accepted the fresh signature), and the store is as it was
            let after = try #require(try JSONSerialization.jsonObject(with: Data(try await client.get("/debug/api/requests?source=marvel").bytes))
                as? [[String: Any]])
            #expect(after.count == 2)
            #expect((after.first?["id"] as? Int ?? 0) > id && after.first?["status"] as? Int == 200)
            // And the browser is taken to the new exchange's page
            #expect(replayed.header("Location") == "/debug/requests/\(after.first?["id"] as? Int ?? 0)")
            #expect(try harness.kiosk.database.snapshot(forKey: PageRequest(source: .marvel).cacheKey)?.metadata == storedBefore)
            let keys = await harness.demo.keys
            #expect(!(try await client.get("/debug").body.contains(keys.marvelPrivate)))
        }
    }

    @Test("Replay of a request a breakpoint pauses takes the browser to the pause at once; the resend goes on once it is decided")
    func replayPaused() async throws {
        try await withWeb(configure: { $0.breakpointTimeout = .seconds(20) }) { harness, client in
            let token = String(repeating: "9", count: 64)
            // Given a logged Rick and Morty request, and a request breakpoint on its endpoint
            _ = try await client.get("/rickandmorty")
            let before = try JSONSerialization.jsonObject(with: Data(try await client.get("/debug/api/requests?source=rickandmorty").bytes)) as? [[String: Any]]
            let id = try #require(before?.first?["id"] as? Int)
            let endpoint = try #require(before?.first?["endpoint"] as? String)
            try harness.kiosk.debugger.breakpoints.set(BreakpointSetting(request: .pause), for: endpoint)
            // When it is replayed
            let replayed = try await client.post("/debug/requests/\(id)/replay", form: [("csrf", token)], cookie: token)
            // Then the browser goes to the paused exchange, which is the replay's
            let paused = try #require(harness.kiosk.debugger.breakpoints.paused.first)
            #expect(replayed.status == .seeOther && replayed.header("Location") == "/debug/paused/\(paused.id)")
            #expect(paused.resending == Int64(id))
            // And once it is let go, the resend is logged
            #expect(harness.kiosk.debugger.breakpoints.decide(paused.id, .continueUnchanged))
            var after: [[String: Any]] = []
            for _ in 0..<200 {
                try harness.kiosk.requestLog?.flush()
                after = try #require(try JSONSerialization.jsonObject(with: Data(try await client.get("/debug/api/requests?source=rickandmorty").bytes))
                    as? [[String: Any]])
                if after.count == 2 { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(after.count == 2)
        }
    }

    @Test("A debugger session lasts 12 hours, and a cookie with a changed expiry opens nothing")
    func sessionExpiry() async throws {
        try await withHarness { harness in
            // Given a session made by a right token
            let token = String(repeating: "t", count: 32)
            let access = DebugAccess(token: token, isLoopback: false, now: harness.now.dateSource)
            let expiry = Int(harness.now.date.timeIntervalSince1970) + 12 * 3600
            let session = access.session(expiringAt: expiry, token: token)
            try await Application(router: buildRouter(kiosk: harness.kiosk, debugAccess: access)).test(.router) { (client: any TestClientProtocol) async throws in
                #expect(try await client.get("/debug", headers: [.cookie: "kiosk_debug=\(session)"]).status == .ok)
                // When its expiry is moved on by hand, or it is made with another token
                let extended = "\(expiry + 86_400)." + session.split(separator: ".")[1]
                let otherToken = access.session(expiringAt: expiry, token: String(repeating: "u", count: 32))
                // Then neither opens the console
                #expect(try await client.get("/debug", headers: [.cookie: "kiosk_debug=\(extended)"]).status == .forbidden)
                #expect(try await client.get("/debug", headers: [.cookie: "kiosk_debug=\(otherToken)"]).status == .forbidden)
                // And 12 hours later the session itself is refused
                await harness.now.advance(by: .seconds(12 * 3600))
                #expect(try await client.get("/debug", headers: [.cookie: "kiosk_debug=\(session)"]).status == .forbidden)
            }
        }
    }

    @Test("Past 5 wrong debug tokens in a minute the login answers 429 with Retry-After, even to the right token; other machines are not held back")
    func loginIsThrottled() async throws {
        try await withHarness { harness in
            // Given a token and a client at 192.168.1.50
            let token = String(repeating: "t", count: 32)
            let access = DebugAccess(token: token, isLoopback: false, now: harness.now.dateSource,
                                     attempts: ClientAttempts(now: harness.now.dateSource), peer: testPeer)
            try await Application(router: buildRouter(kiosk: harness.kiosk, debugAccess: access)).test(.router) { (client: any TestClientProtocol) async throws in
                let csrf = String(repeating: "a", count: 64)
                func login(_ guess: String, from address: String) async throws -> Fetched {
                    try await client.post("/debug/login", form: [("csrf", csrf), ("token", guess)], cookie: csrf,
                                          headers: [testPeerHeader: address])
                }
                // When it sends five wrong tokens
                for guess in 1...5 {
                    #expect(try await login("wrong-\(guess)", from: "192.168.1.50").status == .forbidden)
                    await harness.now.advance(by: .seconds(1))
                }
                // Then the sixth, even the right one, is not checked
                let limited = try await login(token, from: "192.168.1.50")
                #expect(limited.status == .tooManyRequests)
                #expect(limited.header("Retry-After") == "55")
                #expect(limited.body.contains("Try again in 55 s"))
                #expect(limited.header("Set-Cookie")?.contains("kiosk_debug=") != true)
                // And another machine with the right token gets in
                #expect(try await login(token, from: "192.168.1.51").status == .seeOther)
                // And a minute after its first try, the first machine may try again
                await harness.now.advance(by: .seconds(55))
                #expect(try await login(token, from: "192.168.1.50").status == .seeOther)
            }
        }
    }

    @Test("On this machine wrong debug tokens are counted per local user: another user's program guessing does not lock the owner out")
    func loopbackLoginCountedPerUser() async throws {
        try await withHarness { harness in
            // Given a token, and loopback clients whose sockets belong to users 1001 (guessing) and 1000 (the owner)
            let token = String(repeating: "t", count: 32)
            let ownerHeader = HTTPFields.Element.Name("X-Test-Owner")!
            let access = DebugAccess(token: token, isLoopback: true, now: harness.now.dateSource,
                                     attempts: ClientAttempts(now: harness.now.dateSource), peer: testPeer,
                                     owner: { request, _ in request.headers[ownerHeader].flatMap { UInt32($0) } })
            try await Application(router: buildRouter(kiosk: harness.kiosk, debugAccess: access)).test(.router) { (client: any TestClientProtocol) async throws in
                let csrf = String(repeating: "a", count: 64)
                func login(_ guess: String, from address: String, user: String?) async throws -> Fetched {
                    var headers: HTTPFields = [testPeerHeader: address]
                    if let user { headers[ownerHeader] = user }
                    return try await client.post("/debug/login", form: [("csrf", csrf), ("token", guess)], cookie: csrf, headers: headers)
                }
                // When user 1001 sends five wrong tokens, from two loopback addresses
                for guess in 1...5 {
                    #expect(try await login("wrong-\(guess)", from: guess.isMultiple(of: 2) ? "127.0.0.2" : "::1", user: "1001").status == .forbidden)
                }
                // Then its next try is held back, from any loopback address
                #expect(try await login(token, from: "127.0.0.9", user: "1001").status == .tooManyRequests)
                // And the owner's right token is let in
                #expect(try await login(token, from: "127.0.0.1", user: "1000").status == .seeOther)
                // And where the socket's user cannot be told, loopback stays one client, apart from both
                for guess in 1...5 { #expect(try await login("wrong-\(guess)", from: "127.0.0.1", user: nil).status == .forbidden) }
                #expect(try await login(token, from: "127.0.0.1", user: nil).status == .tooManyRequests)
                #expect(try await login(token, from: "127.0.0.1", user: "1000").status == .seeOther)
            }
        }
    }

    @Test("A debug token shorter than 24 characters, of fewer than 8 different ones, or not visible ASCII, is refused before the web app starts",
          arguments: [
        ("short-token", "at least 24"), (String(repeating: "a", count: 23), "at least 24"),
        (String(repeating: "a", count: 24) + " b", "visible ASCII"), (String(repeating: "ä", count: 24), "visible ASCII"),
        (String(repeating: "a", count: 24), "only 1 differ"), (String(repeating: "abcdefg", count: 4), "only 7 differ"),
    ])
    func shortTokensRefused(token: String, reason: String) async throws {
        // Given a configuration with that token
        let configuration = WebConfiguration(host: "127.0.0.1", port: 0, debugToken: token)
        // When it is validated, then it is refused saying why
        #expect { try configuration.validate() } throws: { error in
            (error as? KioskError)?.description.contains(reason) == true
        }
        // And a token of 24 visible characters, 8 of them different, is accepted
        #expect(throws: Never.self) { try WebConfiguration(debugToken: String(repeating: "abcdefgh", count: 3)).validate() }
    }

    @Test("Configurations say which hosts are loopback")
    func loopback() {
        #expect(WebConfiguration(host: "127.0.0.1").isLoopback)
        #expect(WebConfiguration(host: "localhost").isLoopback)
        #expect(WebConfiguration(host: "::1").isLoopback)
        #expect(!WebConfiguration(host: "0.0.0.0").isLoopback)
        #expect(!WebConfiguration(host: "192.168.1.4").isLoopback)
        #expect(WebConfiguration(debugToken: "").debugToken == nil)
    }
}

/// An app's exchange held at a breakpoint, as `kiosk proxy` holds one: its pause's decision to come, and the pause.
private func holdAppExchange(_ harness: Harness, at phase: PausePhase, url: String, headers: HTTPHeaderFields = [:],
                             body: (contentType: String, data: Data)? = nil,
                             answer: (headers: HTTPHeaderFields, body: Data)? = nil,
                             status: Int = 200) async throws -> (Task<PauseDecision, Never>, PausedExchange) {
    let breakpoints = harness.kiosk.debugger.breakpoints
    let url = URL(string: url)!
    var request = KioskCore.HTTPRequest(url: url, headers: headers, endpoint: "127.0.0.1:9", purpose: .proxied)
    if let body {
        request.method = "POST"
        request.headers["Content-Type"] = body.contentType
        request.body = body.data
    }
    let held = Task { [request] in
        await breakpoints.pause(phase: phase, request: request,
                                response: answer.map { KioskCore.HTTPResponse(status: status, headers: $0.headers, body: $0.body, url: url) },
                                error: nil).decision
    }
    for _ in 0..<2000 where breakpoints.paused.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
    return (held, try #require(breakpoints.paused.first))
}

@Suite("A paused exchange's edited fields")
struct PausedFieldsTests {
    @Test("A field whose name was shown with a secret hidden in it is taken back as shown; one typed so anew is refused as no header name")
    func redactedNameKept() throws {
        // Given an answer shown with a field named after the app's token, hidden
        let shown = [RequestRecord.HeaderField(name: "X-Echo-\(Redactor.placeholder)", value: "1"),
                     RequestRecord.HeaderField(name: "Content-Type", value: "application/json")]
        // When its fields come back as shown, one value changed
        let kept = DebugController.editedFields("X-Echo-\(Redactor.placeholder): 1\nContent-Type: text/plain", shown: shown, .english)
        // Then they are taken, the hidden name as it was shown (the edit puts the real one back)
        guard case .success(let fields) = kept else { Issue.record("refused: \(kept)"); return }
        #expect(fields.map(\.name) == ["X-Echo-\(Redactor.placeholder)", "Content-Type"])
        // And a name with the placeholder the page never showed is refused as no header name
        guard case .failure = DebugController.editedFields("X-Other-\(Redactor.placeholder): 1", shown: shown, .english) else {
            Issue.record("a made-up name was taken")
            return
        }
    }
}
