import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KioskCore
import KioskDemoUpstream
import KioskSources
import Testing

@Suite("Rick and Morty character sheet, episodes and locations in the web app", .serialized)
struct WebRickAndMortyTests {
    @Test("A character page shows the sheet first, then places with residents, then every episode, without script")
    func characterSheet() async throws {
        try await withWeb { _, client in
            // When Rick's page is opened
            let page = try await client.get("/rickandmorty/1")
            #expect(page.status == .ok)
            let html = page.body
            // Then the sheet comes before the places, and the places before the episodes
            let sheet = try #require(html.range(of: "class=\"sheet\""))
            let places = try #require(html.range(of: "id=\"places\""))
            let episodes = try #require(html.range(of: "id=\"episodes\""))
            #expect(sheet.lowerBound < places.lowerBound && places.lowerBound < episodes.lowerBound)
            // And each place links to its page with type, dimension and residents
            #expect(html.contains("href=\"/rickandmorty/location-1\">Earth (C-137)</a>"))
            #expect(html.contains("Planet · Dimension C-137 · "))
            #expect(html.contains(" residents</p>"))
            // And the 51 episodes are listed in airing order as code · name · date, each a link
            #expect(html.contains("<span class=\"code\">S01E01</span> · <span class=\"name\">Pilot</span> · "
                                  + "<time datetime=\"2013-12-02\">December 2, 2013</time>"))
            #expect(html.components(separatedBy: "href=\"/rickandmorty/episode-").count - 1 == 51)
            let pilot = try #require(html.range(of: "S01E01"))
            let last = try #require(html.range(of: "S05E10"))
            #expect(pilot.lowerBound < last.lowerBound)
            // And the jump links work without script (plain anchors)
            #expect(html.contains("<a href=\"#episodes\">Episodes (51)</a>"))
            #expect(!html.contains("class=\"banner error\""))
        }
    }

    @Test("In Spanish the air dates are Spanish dates")
    func spanishDates() async throws {
        try await withWeb { _, client in
            let page = try await client.get("/rickandmorty/1", headers: [.acceptLanguage: "es"])
            #expect(page.body.contains("<time datetime=\"2013-12-02\">2 de diciembre de 2013</time>"))
            #expect(page.body.contains("Episodios (51)"))
            #expect(page.body.contains("Última ubicación conocida"))
        }
    }

    @Test("A location page lists its residents a page at a time, each linking back to the character")
    func locationResidents() async throws {
        try await withWeb { _, client in
            let first = try await client.get("/rickandmorty/location-3")
            #expect(first.status == .ok)
            #expect(first.body.contains("<h1>Citadel of Ricks</h1>"))
            #expect(first.body.contains("Space station"))
            #expect(first.body.contains("nav class=\"pages\""))
            #expect(first.body.contains("href=\"/rickandmorty/location-3?page=2\""))
            let second = try await client.get("/rickandmorty/location-3?page=2")
            #expect(second.body.contains("aria-current=\"page\""))
            let residentLinks = second.body.components(separatedBy: "<li data-id=\"").dropFirst()
            #expect(!residentLinks.isEmpty)
            #expect(residentLinks.allSatisfy { Int($0.prefix { $0 != "\"" }) != nil })
            #expect(try await client.get("/rickandmorty/location-3?page=0").status == .badRequest)
            #expect(try await client.get("/rickandmorty/location-3?page=two").status == .badRequest)
            // And a page past the last is not found, as a catalog's is, not the last shown again; an item without
            // pages of links has no page 2 either
            let past = try await client.get("/rickandmorty/location-3?page=9")
            #expect(past.status == .notFound && past.body.contains("<h1>Not found</h1>"), "\(past.body)")
            // (said as the page of links it is, the item being there, with the way to its first page; in Spanish too)
            #expect(past.body.contains("This item has no page 9 of linked items.") && !past.body.contains("may have been removed"))
            #expect(past.body.contains("href=\"/rickandmorty/location-3\""))
            let pastInSpanish = try await client.get("/rickandmorty/location-3?page=9", headers: [.acceptLanguage: "es"])
            #expect(pastInSpanish.body.contains("Este elemento no tiene página 9 de elementos enlazados."))
            // (an item that is not there at all is still said to be missing)
            #expect(try await client.get("/rickandmorty/99999?page=2").body.contains("may have been removed"))
            #expect(try await client.get("/api/rickandmorty/location-3?page=9").status == .notFound)
            #expect(try await client.get("/rickandmorty/1?page=5").status == .notFound)
        }
    }

    @Test("An episode page lists its characters; the JSON API answers the same links")
    func episodePageAndAPI() async throws {
        try await withWeb { _, client in
            let page = try await client.get("/rickandmorty/episode-1")
            #expect(page.body.contains("<h1>Pilot</h1>"))
            #expect(page.body.contains("December 2, 2013"))
            #expect(page.body.contains("href=\"/rickandmorty/1\""))
            let api = try await client.get("/api/rickandmorty/1").json()
            let linked = try #require(api["linked"] as? [String: Any])
            #expect((linked["counts"] as? [String: Int])?["episode"] == 51)
            let entries = try #require(linked["entries"] as? [[String: Any]])
            #expect(entries.first?["itemID"] as? String == "episode-1")
            #expect(entries.first?["role"] as? String == "episode")
            #expect(((entries.first?["item"] as? [String: Any])?["title"] as? String) == "Pilot")
        }
    }

    @Test("An episode among the favorites shows its air date in the page's language, as its own page does")
    func episodeFavoriteInSpanish() async throws {
        try await withWeb { harness, client in
            // Given the first episode stored and made a favorite
            _ = try await client.get("/rickandmorty/episode-1")
            try harness.kiosk.catalog.setFavorite(true, source: .rickandmorty, itemID: "episode-1")
            // When the favorites are read in Spanish and in English
            let spanish = try await client.get("/favorites", headers: [.acceptLanguage: "es"])
            let english = try await client.get("/favorites")
            // Then its row says the date in each language
            #expect(spanish.body.contains("S01E01 · 2 de diciembre de 2013"), "\(spanish.body)")
            #expect(english.body.contains("S01E01 · December 2, 2013"))
        }
    }

    @Test("When episodes cannot be fetched, the character still shows and the page says what is missing")
    func missingEpisodes() async throws {
        try await withWeb { harness, client in
            // Given the first page of characters seen, then an upstream that fails every request
            _ = try await client.get("/rickandmorty")
            var faults = FaultSettings.none
            faults.failureRate = 1
            try await harness.demo.setFaults(faults)
            // When Rick is opened
            let page = try await client.get("/rickandmorty/1")
            // Then his sheet is there, and a banner says the linked items are missing
            #expect(page.status == .ok)
            #expect(page.body.contains("<h1>Rick Sanchez</h1>"))
            #expect(page.body.contains("53 linked items are not in Kiosk&#39;s store and could not be fetched from the catalog."))
            #expect(page.body.contains("class=\"missing\""))
        }
    }

    @Test("A search's page 2 with the upstream offline is the store's stand-in, not 'no such page'; past an upstream search's last it is")
    func searchPagesPastTheEnd() async throws {
        try await withWeb { harness, client in
            // Given the first page of characters seen
            _ = try await client.get("/rickandmorty")
            // When the upstream's search is asked for a page past its last
            let past = try await client.get("/rickandmorty?q=rick%20sanchez&page=40")
            // Then it is a 404 saying there is no such page, not that an item is missing
            #expect(past.status == .notFound, "\(past.status)")
            #expect(!past.body.contains("the item may have been removed"), "\(past.body.prefix(600))")
            // And with the upstream offline, page 2 of a search is the store's stand-in, with its banner, not a 404
            var faults = FaultSettings.none
            faults.offline = true
            try await harness.demo.setFaults(faults)
            let offline = try await client.get("/rickandmorty?q=rick&page=2")
            #expect(offline.status != .notFound, "\(offline.status)")
        }
        // And the ids of names keep their zeros, where numbers lose them
        #expect(Sources.make(.live)[.dogs]?.canonicalItemID("007") == "007")
        #expect(Sources.make(.live)[.rickandmorty]?.canonicalItemID("007") == "7")
        #expect(Sources.make(.live)[.rickandmorty]?.canonicalItemID("episode-07") == "episode-07")
    }
}
