import Foundation
import KioskDemoUpstream
import Testing

/// `/api/episode` and `/api/location` as the real Rick and Morty API serves them, awkward cases included,
/// and consistent with the characters.
@Suite("Rick and Morty episodes and locations")
struct EpisodesAndLocationsTests {
    /// Every result of a paged list, following `next`, and the number of pages read.
    static func walk(_ first: URL) async throws -> (items: [[String: Any]], pages: Int, count: Int?) {
        var next: URL? = first
        var items: [[String: Any]] = []
        var pages = 0
        var count: Int?
        while let url = next {
            let response = try await Client.get(url)
            #expect(response.status == 200)
            let body = try response.object()
            let info = try #require(body["info"] as? [String: Any])
            count = info["count"] as? Int
            items += try #require(body["results"] as? [[String: Any]])
            next = (info["next"] as? String).flatMap(URL.init(string:))
            pages += 1
        }
        return (items, pages, count)
    }

    @Test("51 episodes in 3 pages and 126 locations in 7, with every documented field")
    func pagedLists() async throws {
        try await withUpstream { upstream in
            // When both lists are walked through their next links
            let episodes = try await Self.walk(upstream.url("/api/episode"))
            let locations = try await Self.walk(upstream.url("/api/location"))

            // Then the counts and pages are the real API's, in id order
            #expect(episodes.count == 51 && episodes.pages == 3 && episodes.items.count == 51)
            #expect(locations.count == 126 && locations.pages == 7 && locations.items.count == 126)
            #expect(episodes.items.compactMap { $0["id"] as? Int } == Array(1...51))
            // And an episode reads like the real one
            let pilot = try #require(episodes.items.first)
            #expect(pilot["name"] as? String == "Pilot")
            #expect(pilot["air_date"] as? String == "December 2, 2013")
            #expect(pilot["episode"] as? String == "S01E01")
            #expect(episodes.items.last?["episode"] as? String == "S05E10")
            #expect(pilot["url"] as? String == "\(upstream.baseURL.absoluteString)/api/episode/1")
            let location = try #require(locations.items.first)
            #expect(location["name"] as? String == "Earth (C-137)")
            #expect(location["type"] as? String == "Planet")
            #expect(location["dimension"] as? String == "Dimension C-137")
            #expect(location["residents"] is [String])
        }
    }

    @Test("Several ids answer an array without the unknown ones; one id answers a bare object")
    func arrayVersusObject() async throws {
        try await withUpstream { upstream in
            // When three episodes, one of them unknown, are asked for at once, and then one alone
            let several = try await Client.get(upstream.url("/api/episode/1,2,999"))
            let one = try await Client.get(upstream.url("/api/episode/2"))
            let locations = try await Client.get(upstream.url("/api/location/3,1,200"))

            // Then the lists are arrays of the ids that exist, the single id a bare object
            let array = try #require(try several.json() as? [[String: Any]])
            #expect(array.compactMap { $0["id"] as? Int } == [1, 2])
            #expect(try one.object()["name"] as? String == "Lawnmower Dog")
            #expect(Set(try #require(try locations.json() as? [[String: Any]]).compactMap { $0["id"] as? Int }) == [1, 3])
        }
    }

    @Test("An unknown id is a 404 saying so; an id that is not a number is the real API's 500")
    func errors() async throws {
        try await withUpstream { upstream in
            // When an unknown episode, an unknown location and a non-numeric id are asked for
            let episode = try await Client.get(upstream.url("/api/episode/52"))
            let location = try await Client.get(upstream.url("/api/location/127"))
            let word = try await Client.get(upstream.url("/api/episode/pilot"))

            // Then the bodies are the real API's
            #expect(episode.status == 404)
            #expect(try episode.object()["error"] as? String == "Episode not found")
            #expect(location.status == 404)
            #expect(try location.object()["error"] as? String == "Location not found")
            #expect(word.status == 500)
            #expect(try word.object()["error"] as? String == "Hey! you must provide an id")
        }
    }

    @Test("name and episode filter the episodes; name, type and dimension the locations")
    func filters() async throws {
        try await withUpstream { upstream in
            // When the lists are filtered
            let pickle = try await Client.get(upstream.url("/api/episode", [("name", "pickle")]))
            let season2 = try await Self.walk(upstream.url("/api/episode", [("episode", "S02")]))
            let citadel = try await Client.get(upstream.url("/api/location", [("name", "citadel")]))
            let none = try await Client.get(upstream.url("/api/episode", [("name", "no such episode")]))

            // Then each holds what matches, and nothing matching is the API's 404
            let pickleResults = try #require(try pickle.object()["results"] as? [[String: Any]])
            #expect(pickleResults.compactMap { $0["name"] as? String } == ["Pickle Rick"])
            #expect(season2.items.count == 10)
            #expect(season2.items.allSatisfy { ($0["episode"] as? String)?.hasPrefix("S02") == true })
            let citadelResults = try #require(try citadel.object()["results"] as? [[String: Any]])
            #expect(citadelResults.first?["name"] as? String == "Citadel of Ricks")
            #expect(none.status == 404)
        }
    }

    @Test("Episodes, locations and characters agree: every link resolves and each side lists the other")
    func consistentWithCharacters() async throws {
        try await withUpstream { upstream in
            // Given every character, episode and location
            let characters = try await Self.walk(upstream.url("/api/character")).items
            let episodes = try await Self.walk(upstream.url("/api/episode")).items
            let locations = try await Self.walk(upstream.url("/api/location")).items
            let base = upstream.baseURL.absoluteString
            let episodeCast = Dictionary(uniqueKeysWithValues: episodes.map {
                ($0["url"] as? String ?? "", Set($0["characters"] as? [String] ?? []))
            })
            let residents = Dictionary(uniqueKeysWithValues: locations.map {
                ($0["url"] as? String ?? "", Set($0["residents"] as? [String] ?? []))
            })

            // Then every episode a character names exists and lists the character back
            for character in characters {
                let url = try #require(character["url"] as? String)
                for episode in character["episode"] as? [String] ?? [] {
                    #expect(episodeCast[episode]?.contains(url) == true, "\(url) in \(episode)")
                }
                // And a known last location lists the character among its residents; "" means unknown
                let location = (character["location"] as? [String: Any])?["url"] as? String ?? ""
                if !location.isEmpty { #expect(residents[location]?.contains(url) == true, "\(url) at \(location)") }
            }
            // And every character an episode or a location names names it back
            let byURL = Dictionary(uniqueKeysWithValues: characters.map { ($0["url"] as? String ?? "", $0) })
            for (episode, cast) in episodeCast {
                for url in cast { #expect((byURL[url]?["episode"] as? [String])?.contains(episode) == true) }
            }
            for (location, people) in residents {
                for url in people {
                    #expect(((byURL[url]?["location"] as? [String: Any])?["url"] as? String) == location)
                }
            }
            #expect(episodeCast.keys.allSatisfy { $0.hasPrefix("\(base)/api/episode/") })
        }
    }
}
