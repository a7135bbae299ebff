import Foundation
import KioskCore
import KioskSources
import Testing

/// The real API's answer to `/character/1,2` as an app's test suite captured it (../shared/corpus), when present.
private let corpusMultipleIDs: URL? = {
    var folder = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { folder.deleteLastPathComponent() }
    let file = folder.appendingPathComponent("shared/corpus/api/rickandmorty/rickandmorty-character-multiple-ids-array.json")
    return FileManager.default.fileExists(atPath: file.path) ? file : nil
}()

@Suite("Rick and Morty episodes, locations and links")
struct RickAndMortyLinksTests {
    let source = RickAndMortySource(configuration: testConfiguration())

    static let episode1 = #"{"id":1,"name":"Pilot","air_date":"December 2, 2013","episode":"S01E01","characters":["https://rickandmortyapi.com/api/character/1","https://rickandmortyapi.com/api/character/2"],"url":"https://rickandmortyapi.com/api/episode/1","created":"2017-11-10T12:56:33.798Z"}"#
    static let episode2 = #"{"id":2,"name":"Lawnmower Dog","air_date":"December 9, 2013","episode":"S01E02","characters":[],"url":"https://rickandmortyapi.com/api/episode/2","created":"2017-11-10T12:56:33.916Z"}"#

    func character(episodes: [String], origin: String = "https://rickandmortyapi.com/api/location/1",
                   location: String = "https://rickandmortyapi.com/api/location/3") -> CatalogItem {
        CatalogItem(source: .rickandmorty, itemID: "1", title: "Rick Sanchez", subtitle: "", summary: "", imageURL: nil,
                    detail: .rickAndMorty(RickAndMortyCharacter(
                        status: "Alive", species: "Human", type: "", gender: "Male",
                        origin: .init(name: "Earth (C-137)", url: URL(string: origin)),
                        location: .init(name: "Citadel of Ricks", url: URL(string: location)),
                        episodes: episodes.compactMap { URL(string: $0) }, created: "")))
    }

    func byIDs(_ resource: String) throws -> HTTPRequest {
        let ids = resource == "episode" ? ["episode-1", "episode-2"] : resource == "location" ? ["location-1", "location-3"] : ["1", "2"]
        return try #require(try source.linkedItemsRequests(itemIDs: ids).first)
    }

    // MARK: Links

    @Test("a character links its episodes in airing order, then its origin and location, by ids taken from the URLs")
    func characterLinks() {
        // Given a character whose episode URLs name the public host, out of order and once twice
        let item = character(episodes: ["https://rickandmortyapi.com/api/episode/10", "https://rickandmortyapi.com/api/episode/2",
                                        "https://rickandmortyapi.com/api/episode/10", "https://mirror.example/api/episode/1",
                                        "https://rickandmortyapi.com/api/location/4", "not a url at all"])
        // When its links are read
        let links = source.links(of: item)
        // Then episodes come by number, each once, wherever their host; a URL of another resource is not an episode
        #expect(links == [ItemLink(role: .episode, itemID: "episode-1"), ItemLink(role: .episode, itemID: "episode-2"),
                          ItemLink(role: .episode, itemID: "episode-10"), ItemLink(role: .origin, itemID: "location-1"),
                          ItemLink(role: .location, itemID: "location-3")])
    }

    @Test("an empty location URL means unknown: no link")
    func unknownPlace() {
        let links = source.links(of: character(episodes: [], origin: "", location: ""))
        #expect(links.isEmpty)
    }

    @Test("linked items are asked of the configured base URL, one request per kind, commas kept")
    func multiIDRequests() throws {
        // Given a source on a mirror
        var configuration = testConfiguration()
        configuration.rickAndMortyBaseURL = URL(string: "http://127.0.0.1:9000/mirror/api")!
        let mirror = RickAndMortySource(configuration: configuration)
        // When 53 linked items of three kinds are asked for
        let ids = (1...51).map { "episode-\($0)" } + ["location-3", "location-1", "7"]
        let requests = try mirror.linkedItemsRequests(itemIDs: ids)
        // Then one request per kind names every id, sorted, on the mirror
        #expect(requests.map(\.url.absoluteString) == [
            "http://127.0.0.1:9000/mirror/api/character/7",
            "http://127.0.0.1:9000/mirror/api/episode/" + (1...51).map(String.init).joined(separator: ","),
            "http://127.0.0.1:9000/mirror/api/location/1,3",
        ])
        #expect(requests.map(\.endpoint) == ["rickandmorty.characters.byID", "rickandmorty.episodes.byID",
                                             "rickandmorty.locations.byID"])
    }

    @Test("an id of no resource is refused before any request")
    func badLinkedID() {
        let error = kioskError { _ = try source.linkedItemsRequests(itemIDs: ["episode-1", "../admin"]) }
        #expect(error == .invalidRequest("\"../admin\" names no Rick and Morty character, episode or location"))
    }

    // MARK: Decoding id-list answers

    @Test("several ids answer an array; one id answers a bare object; both read as items")
    func arrayOrObject() throws {
        let request = try byIDs("episode")
        let array = try source.decodeLinkedItems(response(200, "[\(Self.episode1),\(Self.episode2)]"), for: request)
        #expect(array.items.map(\.itemID) == ["episode-1", "episode-2"])
        #expect(array.skipped.isEmpty)
        let object = try source.decodeLinkedItems(response(200, Self.episode1), for: request)
        #expect(object.items.map(\.itemID) == ["episode-1"])
        let pilot = try #require(object.items.first)
        #expect(pilot.title == "Pilot")
        #expect(pilot.subtitle == "S01E01 · December 2, 2013")
        guard case .rickAndMortyEpisode(let episode) = pilot.detail else { Issue.record("not an episode"); return }
        #expect(episode.line(title: pilot.title, language: "en") == "S01E01 · Pilot · December 2, 2013")
        #expect(episode.airDate(language: "es_ES") == "2 de diciembre de 2013")
        #expect(episode.characters.count == 2)
    }

    @Test("ids that do not exist are simply missing; an unknown single id's 404 is an empty answer")
    func missingIDs() throws {
        let request = try byIDs("episode")
        #expect(try source.decodeLinkedItems(response(200, "[\(Self.episode2)]"), for: request).items.map(\.itemID) == ["episode-2"])
        #expect(try source.decodeLinkedItems(response(200, "[]"), for: request).items.isEmpty)
        #expect(try source.decodeLinkedItems(response(404, #"{"error":"Episode not found"}"#), for: request).items.isEmpty)
    }

    @Test("the API's 500 for a non-numeric id, and a 404 that is not the API's, are errors")
    func errorAnswers() throws {
        let request = try byIDs("location")
        let serverError = kioskError {
            _ = try source.decodeLinkedItems(response(500, #"{"error":"Hey! you must provide an id"}"#), for: request)
        }
        #expect(serverError == .httpStatus(500, url: "https://upstream.example/"))
        let wrongBase = kioskError { _ = try source.decodeLinkedItems(response(404, "<html>Not Found</html>"), for: request) }
        #expect(wrongBase == .notFound("https://upstream.example/"))
    }

    @Test("one bad episode in an array is skipped with its JSON path; the others are kept")
    func tolerantArray() throws {
        let request = try byIDs("episode")
        let body = "[\(Self.episode1),{\"id\":\"two\",\"name\":\"Bad\"},\(Self.episode2)]"
        let answer = try source.decodeLinkedItems(response(200, body), for: request)
        #expect(answer.items.map(\.itemID) == ["episode-1", "episode-2"])
        #expect(answer.skipped.map(\.path) == ["[1].id"])
    }

    @Test("locations read with type, dimension and residents; unknown values stay out of the subtitle")
    func locations() throws {
        let request = try byIDs("location")
        let body = #"[{"id":1,"name":"Earth (C-137)","type":"Planet","dimension":"Dimension C-137","residents":["https://rickandmortyapi.com/api/character/38","https://rickandmortyapi.com/api/character/45"],"url":"","created":""},{"id":3,"name":"Citadel of Ricks","type":"Space station","dimension":"unknown","residents":[],"url":"","created":""}]"#
        let answer = try source.decodeLinkedItems(response(200, body), for: request)
        #expect(answer.items.map(\.itemID) == ["location-1", "location-3"])
        #expect(answer.items.map(\.subtitle) == ["Planet · Dimension C-137", "Space station"])
        #expect(source.links(of: answer.items[0]) == [ItemLink(role: .resident, itemID: "38"), ItemLink(role: .resident, itemID: "45")])
    }

    @Test("the real API's array answer for /character/1,2 reads as two characters",
          .enabled(if: corpusMultipleIDs != nil, "the shared corpus is not next to this checkout"))
    func corpusArray() throws {
        let body = try String(contentsOf: try #require(corpusMultipleIDs), encoding: .utf8)
        let answer = try source.decodeLinkedItems(response(200, body), for: try byIDs("character"))
        #expect(answer.items.count >= 2)
        #expect(answer.skipped.isEmpty)
    }

    // MARK: Lists and items of the other resources

    @Test("the episode and location lists are pages of their own resource, searched by name, without filters")
    func relatedLists() throws {
        let episodes = try source.listRequest(for: PageRequest(source: .rickandmorty, page: 3, query: "rick", collection: "episode"))
        #expect(episodes.url.absoluteString == "https://rickandmortyapi.com/api/episode?page=3&name=rick")
        #expect(episodes.endpoint == "rickandmorty.episodes")
        let locations = try source.listRequest(for: PageRequest(source: .rickandmorty, collection: "location"))
        #expect(locations.url.absoluteString == "https://rickandmortyapi.com/api/location?page=1")
        #expect(kioskError { _ = try source.listRequest(for: PageRequest(source: .rickandmorty, filters: ["status": "alive"],
                                                                        collection: "episode")) } != nil)
        #expect(kioskError { _ = try source.listRequest(for: PageRequest(source: .rickandmorty, collection: "comics")) } != nil)
        let page = try source.decodeList(response(200, #"{"info":{"count":51,"pages":3,"next":null,"prev":null},"results":[\#(Self.episode1)]}"#),
                                         for: PageRequest(source: .rickandmorty, collection: "episode"))
        #expect(page.items.map(\.itemID) == ["episode-1"])
        #expect(page.totalPages == 3)
        #expect(source.relatedCollections == ["episode", "location"])
    }

    @Test("episode-N and location-N open their own item; a 404 names the resource")
    func relatedItems() throws {
        #expect(try source.detailRequest(itemID: "episode-28")?.url.absoluteString == "https://rickandmortyapi.com/api/episode/28")
        #expect(try source.detailRequest(itemID: "location-3")?.endpoint == "rickandmorty.location")
        let item = try source.decodeDetail(response(200, Self.episode2), itemID: "episode-2")
        #expect(item.title == "Lawnmower Dog")
        #expect(kioskError { _ = try source.decodeDetail(response(404, #"{"error":"Episode not found"}"#), itemID: "episode-99") }
                == .notFound("rickandmorty episode episode-99"))
    }
}
