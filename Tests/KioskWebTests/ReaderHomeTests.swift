import Foundation
import Hummingbird
import HummingbirdTesting
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskWeb

@Suite("Home, a reader's front page, and Settings")
struct ReaderHomeTests {
    /// The headers a browser sends when the reader navigates to a page of Kiosk's own.
    static let navigation: HTTPFields = [HTTPFields.Element.Name("Sec-Fetch-Site")!: "same-origin", HTTPFields.Element.Name("Sec-Fetch-Mode")!: "navigate",
                                         HTTPFields.Element.Name("Sec-Fetch-Dest")!: "document"]

    /// The visit cookie a response set, as a Cookie request header's value.
    static func visitCookie(_ page: Fetched) throws -> String {
        let header = try #require(page.headers[values: .setCookie].first { $0.hasPrefix(ReaderVisit.cookieName + "=") })
        return String(header.prefix { $0 != ";" })
    }

    /// Home's "recently read" part: the item paths it links to, in order.
    static func recentlyRead(_ html: String) -> [String] {
        guard let start = html.range(of: #"<section class="home-part" id="recent""#) else { return [] }
        let part = html[start.upperBound...]
        let section = part[..<(part.range(of: "</section>")?.lowerBound ?? part.endIndex)]
        return section.components(separatedBy: #"<li data-id=""#).dropFirst().compactMap { row in
            row.range(of: #"<a href=""#).map { String(row[$0.upperBound...].prefix { $0 != "\"" }) }
        }
    }

    @Test("Home lists the items the reader opened, newest first: navigations and the pane count, background fetches and other sites do not")
    func recentlyRead() async throws {
        try await withWeb { harness, client in
            // Given a first Home with nothing read: no "recently read"
            #expect(Self.recentlyRead(try await client.get("/").body).isEmpty)
            // When the reader navigates to one character, then opens another in the desktop's pane
            _ = try await client.get("/rickandmorty/1", headers: Self.navigation)
            await harness.now.advance(by: .seconds(60))
            _ = try await client.get("/rickandmorty/2", headers: [HTTPFields.Element.Name("Sec-Fetch-Site")!: "same-origin",
                                                                  HTTPFields.Element.Name("Sec-Fetch-Dest")!: "empty", HTTPFields.Element.Name("X-Kiosk-View")!: "1"])
            // And a third is saved for offline in the background, a fourth is linked from another site, a fifth opened by
            // a client that says nothing of where it comes from
            await harness.now.advance(by: .seconds(60))
            _ = try await client.get("/rickandmorty/3", headers: [HTTPFields.Element.Name("Sec-Fetch-Site")!: "same-origin",
                                                                  HTTPFields.Element.Name("Sec-Fetch-Dest")!: "empty"])
            _ = try await client.get("/rickandmorty/4", headers: [HTTPFields.Element.Name("Sec-Fetch-Site")!: "cross-site",
                                                                  HTTPFields.Element.Name("Sec-Fetch-Dest")!: "document"])
            _ = try await client.get("/rickandmorty/5")
            // Then Home lists the two the reader opened, the latest first, with their catalog
            let home = try await client.get("/").body
            #expect(Self.recentlyRead(home) == ["/rickandmorty/2", "/rickandmorty/1"])
            #expect(home.contains(#"<h2 id="recent-title">Recently read</h2>"#))
            #expect(home.contains("Rick and Morty · "))
            // And opening the first again moves it up
            await harness.now.advance(by: .seconds(60))
            _ = try await client.get("/rickandmorty/1", headers: Self.navigation)
            #expect(Self.recentlyRead(try await client.get("/").body) == ["/rickandmorty/1", "/rickandmorty/2"])
        }
    }

    @Test("Home says what changed since the browser's last visit, keeps saying it during the visit, and says when nothing did")
    func sinceLastVisit() async throws {
        try await withWeb { harness, client in
            // Given a first visit: nothing to compare with, and a cookie that remembers it
            let first = try await client.get("/")
            #expect(!first.body.contains("id=\"changes\"") && !first.body.contains("nothing-new"))
            var cookie = try Self.visitCookie(first)
            #expect(cookie == "kiosk_visit=1800000000")
            // When the reader then opens Rick and Morty (its first page stored), and comes back an hour later
            await harness.now.advance(by: .seconds(10))
            _ = try await client.get("/rickandmorty")
            await harness.now.advance(by: .seconds(3600))
            let later = try await client.get("/", headers: [.cookie: cookie])
            // Then Home says what is new since, per catalog, with the latest items
            #expect(later.body.contains(#"<h2 id="changes-title">Since your last visit, 1 h ago</h2>"#))
            #expect(later.body.contains(#"<span class="title">Rick and Morty</span><span class="subtitle">20 new</span>"#))
            #expect(later.body.contains(#"<ul class="changed-items"><li><a href="/rickandmorty/1">Rick Sanchez</a></li>"#))
            cookie = try Self.visitCookie(later)
            #expect(cookie == "kiosk_visit=1800003610.1800000000")
            // When Home is opened again within the visit
            await harness.now.advance(by: .seconds(60))
            let again = try await client.get("/", headers: [.cookie: cookie])
            // Then it still counts from the visit's start
            #expect(again.body.contains(#"<span class="subtitle">20 new</span>"#))
            cookie = try Self.visitCookie(again)
            // When the next visit comes two hours later with nothing changed
            await harness.now.advance(by: .seconds(7200))
            let quiet = try await client.get("/", headers: [.cookie: cookie])
            // Then Home says nothing is new
            #expect(quiet.body.contains(#"<p class="status nothing-new">Nothing new since your last visit, 2 h ago.</p>"#))
            #expect(!quiet.body.contains("id=\"changes\""))
            cookie = try Self.visitCookie(quiet)
            // When an item seen before changes, and the reader comes back the next day
            var rick = try #require(try harness.database.item(source: .rickandmorty, itemID: "1"))
            rick.title = "Rick Sanchez (C-137)"
            await harness.now.advance(by: .seconds(3600))
            try harness.database.saveItems([rick])
            await harness.now.advance(by: .seconds(86_400))
            let updated = try await client.get("/", headers: [.cookie: cookie]).body
            // Then it is listed as updated, under its new title
            #expect(updated.contains(#"<span class="subtitle">1 updated</span></a><ul class="changed-items"><li><a href="/rickandmorty/1">Rick Sanchez (C-137)</a></li></ul>"#))
        }
    }

    @Test("Home is headed Home, not Kiosk again, and shows the latest favorites with a link to all of them")
    func homeFavorites() async throws {
        try await withWeb { _, client in
            // Given two starred characters
            let page = try await client.get("/rickandmorty")
            let csrf = try issuedToken(page)
            for id in ["1", "2"] {
                #expect(try await client.post("/favorites/rickandmorty/\(id)", form: [("csrf", csrf), ("action", "add"), ("return", "/")],
                                              cookie: csrf).status == .seeOther)
            }
            // When Home opens
            let home = try await client.get("/").body
            // Then its heading is Home and "Kiosk" shows once, in the brand bar
            #expect(home.contains("<h1>Home</h1>"))
            let main = try #require(home.range(of: "<main")).lowerBound
            #expect(!home[main...].contains(">Kiosk<"))
            // And the favorites are listed newest first, starred, with a link to all of them
            let favorites = try #require(home.range(of: #"<section class="home-part" id="home-favorites""#))
            let part = home[favorites.upperBound...]
            #expect(try #require(part.range(of: "/rickandmorty/2")).lowerBound < (try #require(part.range(of: "/rickandmorty/1")).lowerBound))
            #expect(part.contains(#"<p class="more"><a href="/favorites">All favorites (2)</a></p>"#))
            #expect(part.contains(#"aria-pressed="true""#))
        }
    }

    @Test("Settings clears the reading history with its token; without it nothing is cleared")
    func clearHistory() async throws {
        try await withWeb { _, client in
            // Given an item read, and the settings page with its form
            _ = try await client.get("/rickandmorty/1", headers: Self.navigation)
            let settings = try await client.get("/settings")
            #expect(settings.body.contains("<h1>Settings</h1>"))
            #expect(settings.body.contains(#"<form class="clear-history" method="post" action="/settings/clear-history">"#))
            // (behind a second step that says what it forgets: it cannot be undone)
            #expect(settings.body.contains(#"<details class="confirm-reset"><summary>Clear reading history…</summary><p>Forget every item opened"#),
                    "\(settings.body)")
            #expect(settings.body.contains(#"<a class="tool" href="/settings" aria-current="page">Settings</a>"#))
            let csrf = try issuedToken(settings)
            // When a post without the token comes
            #expect(try await client.post("/settings/clear-history", form: []).status == .forbidden)
            // Then the history is kept
            #expect(Self.recentlyRead(try await client.get("/").body) == ["/rickandmorty/1"])
            // When the form is posted
            let cleared = try await client.post("/settings/clear-history", form: [("csrf", csrf)], cookie: csrf)
            // Then it goes back to Settings, and Home lists nothing read
            #expect(cleared.status == .seeOther && cleared.header("Location") == "/settings")
            #expect(Self.recentlyRead(try await client.get("/").body).isEmpty)
        }
    }

    @Test("A token cookie another server of this machine set under a longer path refuses none of Kiosk's forms and is not the token: the last well-formed one is")
    func tossedTokenCookie() async throws {
        try await withWeb { _, client in
            // Given Kiosk's token, and cookies of its name another server set for /settings, sent first as browsers do
            let settings = try await client.get("/settings")
            let csrf = try issuedToken(settings)
            let planted = String(repeating: "c", count: 64)
            for first in ["junk", planted] {
                let cookies = "\(CSRFProtection.cookieName)=\(first); kiosk_visit=1; \(CSRFProtection.cookieName)=\(csrf)"
                // When Kiosk's form is posted with Kiosk's token
                let cleared = try await client.post("/settings/clear-history", form: [("csrf", csrf)], headers: [.cookie: cookies])
                // Then it is taken
                #expect(cleared.status == .seeOther, "\(first)")
                // And the page hands out Kiosk's token, not the planted one, and sets no new cookie
                let page = try await client.get("/settings", headers: [.cookie: cookies])
                #expect(page.body.contains(csrf) && !page.body.contains(planted))
                #expect(page.headers[values: .setCookie].allSatisfy { !$0.hasPrefix(CSRFProtection.cookieName) })
            }
            // And the planted token is no token: a form carrying it is refused
            let cookies = "\(CSRFProtection.cookieName)=\(planted); \(CSRFProtection.cookieName)=\(csrf)"
            #expect(try await client.post("/settings/clear-history", form: [("csrf", planted)], headers: [.cookie: cookies]).status == .forbidden)
        }
    }

    @Test("Home and Settings speak Spanish")
    func spanish() async throws {
        try await withWeb { harness, client in
            let spanish: HTTPFields = [.acceptLanguage: "es"]
            _ = try await client.get("/rickandmorty/1", headers: Self.navigation)
            let first = try await client.get("/", headers: spanish)
            await harness.now.advance(by: .seconds(7200))
            var headers = spanish
            headers[.cookie] = try Self.visitCookie(first)
            let home = try await client.get("/", headers: headers).body
            #expect(home.contains("<h1>Inicio</h1>"))
            #expect(home.contains(">Leído recientemente</h2>"))
            #expect(home.contains("Nada nuevo desde tu última visita, hace 2 h."))
            #expect(home.contains(#"<a class="tool" href="/settings">Ajustes</a>"#))
            let settings = try await client.get("/settings", headers: spanish).body
            #expect(settings.contains("<h1>Ajustes</h1>") && settings.contains("Borrar el historial de lectura"))
        }
    }

    @Test("A visit cookie Kiosk did not write reads as a first visit", arguments: [
        "", "abc", "nan", "inf", "1e300", "-5", "99999999999999999999", "1900000000", "1799999000.nope", "1.2.3", ".1799999000",
    ])
    func hostileVisitCookie(_ value: String) {
        // Given a browser at 1,800,000,000 s sending a value no Kiosk wrote (a time after now among them)
        let visit = ReaderVisit(cookie: value, now: Date(timeIntervalSince1970: 1_800_000_000))
        // Then it is a first visit, and the cookie sent back is a clean one
        #expect(visit.since == nil)
        #expect(visit.cookie(secure: false).value == "1800000000")
    }

    @Test("A visit ends after 30 minutes without Home: the next one counts from the end of the last")
    func visitGap() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        // Within 30 minutes the visit's start is kept, the first visit's none
        #expect(ReaderVisit(cookie: "1800000000", now: start + 1800).since == nil)
        #expect(ReaderVisit(cookie: "1800000000.1799990000", now: start + 1800).since == Date(timeIntervalSince1970: 1_799_990_000))
        // After it, the last sight of Home is where the next visit's changes start
        #expect(ReaderVisit(cookie: "1800000000.1799990000", now: start + 1801).since == start)
        #expect(ReaderVisit(cookie: "1800000000", now: start + 1801).since == start)
    }
}
