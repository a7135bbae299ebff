import Foundation
import KioskApp
import KioskCore
import KioskDemoUpstream
import Synchronization
import KioskTestSupport
import Testing

@Suite("Rick and Morty episodes and locations over the demo upstream", .serialized)
struct RickAndMortyLinksIntegrationTests {
    @Test("A character detail fetches its 51 episodes with one request, and its two places with one more")
    func oneRequestPerDetail() async throws {
        try await withHarness { h in
            // Given nothing stored
            await h.demo.resetRequestCounts()
            // When Rick's detail is opened
            let result = try await h.catalog.item(source: .rickandmorty, itemID: "1")
            // Then one request asked for every episode, and one for origin and location together
            #expect(await h.demo.requestCount(pathPrefix: "/api/episode") == 1)
            #expect(await h.demo.requestCount(pathPrefix: "/api/location") == 1)
            #expect(await h.demo.requestCount(pathPrefix: "/api/character") == 1)
            // And every episode is there, in airing order, as "S01E01 · Pilot · December 2, 2013"
            let episodes = result.linked.entries(.episode)
            #expect(episodes.count == 51)
            #expect(result.linked.missing.isEmpty)
            #expect(result.linked.error == nil)
            let lines = episodes.compactMap { entry -> String? in
                guard let item = entry.item, case .rickAndMortyEpisode(let episode) = item.detail else { return nil }
                return episode.line(title: item.title, language: "en")
            }
            #expect(lines.first == "S01E01 · Pilot · December 2, 2013")
            #expect(lines.count == 51)
            let codes = episodes.compactMap { entry -> String? in
                if case .rickAndMortyEpisode(let episode)? = entry.item?.detail { episode.code } else { nil }
            }
            #expect(codes == codes.sorted())
            // And origin and location carry their type, dimension and residents
            let origin = try #require(result.linked.entries(.origin).first?.item)
            guard case .rickAndMortyLocation(let place) = origin.detail else { Issue.record("origin is not a location"); return }
            #expect(origin.title == "Earth (C-137)")
            #expect(place.type == "Planet")
            #expect(!place.residents.isEmpty)
            // When it is opened again, nothing more is asked
            await h.demo.resetRequestCounts()
            _ = try await h.catalog.item(source: .rickandmorty, itemID: "1")
            #expect(await h.demo.requestCount(pathPrefix: "/api/") == 0)
        }
    }

    @Test("After one visit, a character's episodes and places read offline, and an episode name finds the episode")
    func offlineAfterOneVisit() async throws {
        try await withHarness { h in
            // Given Rick's detail seen once
            _ = try await h.catalog.item(source: .rickandmorty, itemID: "1")
            // When the upstream goes away
            try await h.setFaults { $0.offline = true }
            let result = try await h.catalog.item(source: .rickandmorty, itemID: "1")
            // Then the character, all 51 episodes and both places are read from the store
            #expect(result.item.title == "Rick Sanchez")
            #expect(result.linked.entries(.episode).count == 51)
            #expect(result.linked.missing.isEmpty)
            // And the episode and location pages open too
            let episode = try await h.catalog.item(source: .rickandmorty, itemID: "episode-24")
            #expect(episode.item.title == "Pickle Rick")
            // And offline search by episode name finds the episode
            let search = try await h.catalog.search(source: .rickandmorty, text: "Pickle Rick", policy: .offline)
            #expect(search.origin == .store)
            #expect(search.items.first?.itemID == "episode-24")
            let search2 = try await h.catalog.search(source: .rickandmorty, text: "Lawnmower", policy: .automatic)
            #expect(search2.items.map(\.itemID).contains("episode-2"))
        }
    }

    @Test("A failure to fetch episodes never hides the character: it shows what it has and says what is missing")
    func failureKeepsCharacter() async throws {
        try await withHarness { h in
            // Given the first page of characters stored (no episodes yet)
            _ = try await h.catalog.page(PageRequest(source: .rickandmorty))
            // When every upstream request fails with a 500 and Rick is opened
            try await h.setFaults { $0.failureRate = 1 }
            let result = try await h.catalog.item(source: .rickandmorty, itemID: "1")
            // Then the character is shown from the store
            #expect(result.item.title == "Rick Sanchez")
            // And every link is listed as missing, with why
            #expect(result.linked.entries(.episode).count == 51)
            #expect(result.linked.missing.count == 53)
            #expect(result.linked.error != nil)
            // When the upstream is back, the next visit fills them in
            try await h.setFaults { $0.failureRate = 0 }
            let again = try await h.catalog.item(source: .rickandmorty, itemID: "1")
            #expect(again.linked.missing.isEmpty)
        }
    }

    @Test("A stored character opens without waiting for a slow upstream's episodes and places: they are asked at once, and stored behind for its next view")
    func slowLinksDoNotHoldTheItem() async throws {
        let h = try await Harness.start { $0.linkedItemsPatience = .milliseconds(200) }
        do {
            // Given Rick stored by his list, and an upstream that now takes 1.5 s an answer
            _ = try await h.catalog.page(PageRequest(source: .rickandmorty))
            try await h.setFaults { $0.latencyMilliseconds = 1500 }
            await h.demo.resetRequestCounts()
            // When his detail is opened
            let first = try await h.catalog.item(source: .rickandmorty, itemID: "1")
            // Then he is shown from the store, his links not yet there, saying the wait ran out
            #expect(first.origin == .store && first.linked.entries(.episode).count == 51)
            #expect(first.linked.entries.allSatisfy { $0.item == nil })
            #expect(first.linked.error.map { if case .timeout = $0 { true } else { false } } == true, "\(String(describing: first.linked.error))")
            // And the episodes and the places were both asked for, at once (not one after the other's answer)
            #expect(await h.demo.requestCount(pathPrefix: "/api/episode") == 1)
            #expect(await h.demo.requestCount(pathPrefix: "/api/location") == 1)
            // When their answers come, behind the view, then his next view has them from the store, asking nothing
            let episodeIDs = first.linked.entries.map(\.link.itemID)
            for _ in 0..<200 where (try h.database.items(source: .rickandmorty, itemIDs: episodeIDs)).count < episodeIDs.count {
                try await Task.sleep(for: .milliseconds(50))
            }
            await h.demo.resetRequestCounts()
            let next = try await h.catalog.item(source: .rickandmorty, itemID: "1")
            #expect(next.linked.missing.isEmpty && next.linked.error == nil)
            #expect(await h.demo.requestCount(pathPrefix: "/api/") == 0)
        } catch {
            await h.stop()
            throw error
        }
        await h.stop()
    }

    @Test("Linked ids the upstream does not know are missing, not an error; a single id's bare object is read")
    func missingAndSingle() async throws {
        try await withHarness { h in
            let api = "https://rickandmortyapi.com/api"
            let item = CatalogItem(
                source: .rickandmorty, itemID: "9000", title: "Test", subtitle: "", summary: "", imageURL: nil,
                detail: .rickAndMorty(RickAndMortyCharacter(
                    status: "Alive", species: "", type: "", gender: "", origin: .init(name: "unknown", url: nil),
                    location: .init(name: "Nowhere", url: URL(string: "\(api)/location/99999")),
                    episodes: [URL(string: "\(api)/episode/3")!, URL(string: "\(api)/episode/777")!], created: "")))
            // When its links are fetched: episodes 3 and 777 (an array with 3 only), location 99999 (a 404)
            let linked = await h.catalog.linkedItems(of: item)
            // Then episode 3 is there, 777 and the location are missing, and no error is reported
            #expect(linked.entries.map(\.link.itemID) == ["episode-3", "episode-777", "location-99999"])
            #expect(linked.entries.map { $0.item?.title } == ["Anatomy Park", nil, nil])
            #expect(linked.error == nil)
            // And a single episode answered as a bare object is read as well
            var single = item
            if case .rickAndMorty(var character) = single.detail {
                character.episodes = [URL(string: "\(api)/episode/5")!]
                character.location = .init(name: "unknown", url: nil)
                single.detail = .rickAndMorty(character)
            }
            let one = await h.catalog.linkedItems(of: single)
            #expect(one.entries.map { $0.item?.title } == ["Meeseeks and Destroy"])
        }
    }

    @Test("A location lists its residents 20 a page, each linking back to a character")
    func residentsPaged() async throws {
        try await withHarness { h in
            let first = try await h.catalog.item(source: .rickandmorty, itemID: "location-3")
            guard case .rickAndMortyLocation(let citadel) = first.item.detail else { Issue.record("not a location"); return }
            #expect(first.linked.counts[.resident] == citadel.residents.count)
            #expect(first.linked.pageCount == (citadel.residents.count + 19) / 20)
            #expect(first.linked.entries.count == min(20, citadel.residents.count))
            let last = try await h.catalog.item(source: .rickandmorty, itemID: "location-3", linkedPage: first.linked.pageCount)
            #expect(last.linked.page == first.linked.pageCount)
            #expect(last.linked.entries.allSatisfy { $0.item != nil && Int($0.link.itemID) != nil })
            #expect(Set(last.linked.entries.map(\.link.itemID)).isDisjoint(with: first.linked.entries.map(\.link.itemID)))
        }
    }

    @Test("sync --related stores every episode (3 pages) and location (7 pages) besides the 42 pages of characters")
    func syncRelated() async throws {
        try await withHarness { h in
            let progress = ProgressLog()
            let report = try await h.catalog.sync(.rickandmorty, includingRelated: true) { progress.append($0) }
            #expect(report.pages == 52)
            #expect(report.failures.isEmpty)
            #expect(report.items == 826 + 51 + 126)
            #expect(progress.values.last?.completedPages == 52)
            #expect(progress.values.last?.totalPages == 52)
            #expect(try h.database.item(source: .rickandmorty, itemID: "episode-51") != nil)
            #expect(try h.database.item(source: .rickandmorty, itemID: "location-126") != nil)
            // Without the option, only characters are synced
            let plain = try await h.catalog.sync(.rickandmorty)
            #expect(plain.pages == 42)
        }
    }
}

/// Progress reports in arrival order.
final class ProgressLog: Sendable {
    private let storage = Mutex<[SyncProgress]>([])
    func append(_ value: SyncProgress) { storage.withLock { $0.append(value) } }
    var values: [SyncProgress] { storage.withLock { $0 } }
}
