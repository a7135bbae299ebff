import Foundation
import Hummingbird
import HummingbirdTesting
import KioskCore
import KioskDebugger
import Testing
@testable import KioskWeb

@Suite("The console's filter language and cache badges")
struct WebDebugFilterTests {
    /// The records of a `/debug/api/requests` answer.
    static func records(_ fetched: Fetched) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(fetched.bytes)) as? [[String: Any]])
    }

    /// The records of a `/debug/api/requests` answer that are answers: an attempt that failed on a loaded machine (the
    /// harness's 3 s timeout) and was retried is a record with its error.
    static func answers(_ fetched: Fetched) throws -> [[String: Any]] {
        try records(fetched).filter { $0["error"] == nil || $0["error"] is NSNull }
    }

    @Test("filter= narrows the JSON list with the language; each record carries its Cache-Status")
    func filterJSON() async throws {
        try await withWeb { _, client in
            // Given a network request and a store answer for dogs, and one Rick and Morty page
            _ = try await client.get("/api/dogs")
            _ = try await client.get("/dogs")
            _ = try await client.get("/api/rickandmorty")
            // When the list is filtered in the language
            let hits = try Self.answers(try await client.get("/debug/api/requests?filter=" + QueryString.encode("cache:hit source:dogs")))
            let misses = try Self.answers(try await client.get("/debug/api/requests?filter=" + QueryString.encode("cache:miss -source:dogs")))
            let words = try Self.answers(try await client.get("/debug/api/requests?filter=" + QueryString.encode("status:2xx Sanchez")))
            // Then each has what matches, with the Cache-Status the log keeps
            #expect(hits.map { $0["cacheStatus"] as? String } == ["Kiosk;hit;ttl=3600;detail=fresh"])
            #expect(misses.map { $0["cacheStatus"] as? String } == ["Kiosk;fwd=miss;fwd-status=200;detail=network"])
            #expect(misses.first?["source"] as? String == "rickandmorty")
            #expect(words.count == 1 && words.first?["source"] as? String == "rickandmorty")
            // And the older parameters still combine with it
            let combined = try Self.answers(try await client.get("/debug/api/requests?source=dogs&filter=cache:fwd"))
            #expect(combined.map { $0["decision"] as? String } == ["network"])
        }
    }

    @Test("A menu shows the one value the box gives its key; sent back as shown the box's term stands, changed the menu's does")
    func menusShowTheBox() async throws {
        try await withWeb { _, client in
            _ = try await client.get("/api/dogs")
            let selected = { (page: String, value: String) in page.contains(#"<option value="\#(value)" selected>"#) }
            // Given the list filtered by the box alone
            let page = try await client.get("/debug?filter=" + QueryString.encode("status:2xx source:dogs")).body
            // Then the Status and Source menus show the box's values, saying they only show them
            #expect(selected(page, "2xx") && selected(page, "dogs"), "\(page)")
            #expect(page.contains(#"<input type="hidden" name="shown_status" value="2xx">"#))
            // When the box is edited to 5xx and the form sent with the menu as it was shown (no script)
            let edited = try await client.get("/debug?filter=status:5xx&status=2xx&shown_status=2xx").body
            // Then the box's 5xx stands, and the menu shows it
            #expect(edited.contains(#"value="status:5xx""#) && selected(edited, "5xx") && !selected(edited, "2xx"), "\(edited)")
            // When the menu is changed to 4xx from the 2xx it showed
            let chosen = try await client.get("/debug?filter=status:2xx&status=4xx&shown_status=2xx").body
            // Then the menu's choice stands, the box's term taken out, and no field says the menu only shows it
            #expect(selected(chosen, "4xx") && !chosen.contains(#"value="status:2xx""#) && !chosen.contains(#"name="shown_status""#), "\(chosen)")
        }
    }

    @Test("A bad filter is a 400 saying what is accepted and where the mistake is, counted as JavaScript counts; so is a key given twice, to a script")
    func badFilterJSON() async throws {
        try await withWeb { _, client in
            // When the filter has a mistake after a character JavaScript counts as two
            let answer = try await client.get("/debug/api/requests?filter=" + QueryString.encode("😀 status:6xx"))
            // Then the answer is a 400 with the message, the filter and the mistake's place
            #expect(answer.status == .badRequest)
            let body = try answer.json()
            #expect(body["error"] as? String
                    == "The filter is not understood: status must be 1xx, 2xx, 3xx, 4xx, 5xx, error (no response), store (answered from Kiosk's store) or a code from 100 to 599.")
            #expect(body["filter"] as? String == "😀 status:6xx")
            let position = try #require(body["position"] as? [String: Any])
            #expect(position["start"] as? Int == 10 && position["end"] as? Int == 13)
            // And a key given both in the filter and as its own parameter is a 400 naming it, to a script of this route and of
            // the in-flight one (the console's page lets its menu's choice stand; here one of the two would be dropped unsaid)
            for route in ["/debug/api/requests", "/debug/api/in-flight"] {
                let doubled = try await client.get(route + "?status=5xx&filter=" + QueryString.encode("status:2xx cache:network"))
                #expect(doubled.status == .badRequest, "\(route)")
                let said = try doubled.json()
                #expect(said["error"] as? String == "status is given both in filter and as its own parameter; give it once.")
                #expect(said["filter"] as? String == "status:2xx cache:network" && said["position"] == nil)
            }
            #expect(try await client.get("/debug/api/requests?source=dogs&filter=status:2xx").status == .ok)
            #expect(try await client.get("/debug?source=dogs&filter=source:nyt").status == .ok)
            // And an overlong filter is a 400 too
            #expect(try await client.get("/debug/api/requests?filter=" + String(repeating: "a", count: 501)).status == .badRequest)
            // And the HAR export of a bad filter leads to the list, which marks the mistake where it is
            let har = try await client.get("/debug/har?filter=has:nothing")
            #expect(har.status == .seeOther && har.header("Location") == "/debug?filter=has:nothing")
        }
    }

    @Test("The console shows a bad filter's mistake marked where it is, the filter it applies, the keys, and cache badges")
    func console() async throws {
        try await withWeb { _, client in
            // Given a logged request
            _ = try await client.get("/api/dogs")
            // When the console is opened with a bad filter
            let bad = try await client.get("/debug?filter=" + QueryString.encode("source:dogs status:6xx"))
            // Then it is a 400 page that marks the mistake, keeps what was typed, and lists the keys
            #expect(bad.status == .badRequest)
            #expect(bad.body.contains("The filter is not understood: status must be 1xx"))
            #expect(bad.body.contains("source:dogs status:<mark>6xx</mark>"))
            #expect(bad.body.contains("name=\"filter\""))
            #expect(bad.body.contains("value=\"source:dogs status:6xx\""))
            #expect(bad.body.contains("aria-invalid=\"true\""))
            #expect(bad.body.contains("<details class=\"filter-help\">"))
            for key in FilterKey.allCases { #expect(bad.body.contains(HTML.escape(key.example))) }
            // When it is opened with a good filter
            let good = try await client.get("/debug?filter=" + QueryString.encode("  source:DOGS   cache:network "))
            // Then it applies it, says so in its canonical words, and shows the badge with the full value as its title
            #expect(good.status == .ok)
            #expect(good.body.contains("Filter applied: <code>source:dogs cache:network</code>"))
            #expect(good.body.contains("title=\"Cache-Status: Kiosk;fwd=miss;fwd-status=200;detail=network\""))
            #expect(good.body.contains(">fwd=miss network</span>"))
            // And a record's page shows its Cache-Status
            let id = try #require(try Self.records(try await client.get("/debug/api/requests?source=dogs")).first?["id"] as? Int)
            let detail = try await client.get("/debug/requests/\(id)")
            #expect(detail.body.contains("<dt>Cache-Status</dt><dd>Kiosk;fwd=miss;fwd-status=200;detail=network</dd>"))
        }
    }

    @Test("HAR entries carry the Cache-Status as _kioskCacheStatus; an answer from the store, no exchange, is left out")
    func har() async throws {
        try await withWeb { _, client in
            _ = try await client.get("/api/dogs")
            _ = try await client.get("/dogs")
            let document = try await client.get("/debug/har?filter=source:dogs").json()
            // An attempt that failed on a loaded machine (the harness's 3 s timeout) and was retried is an entry with
            // `_kioskError`: what this test reads is the answers'.
            let entries = try #require((document["log"] as? [String: Any])?["entries"] as? [[String: Any]])
                .filter { $0["_kioskError"] == nil || $0["_kioskError"] is NSNull }
            #expect(entries.map { $0["_kioskCacheStatus"] as? String } == ["Kiosk;fwd=miss;fwd-status=200;detail=network"])
        }
    }
}
