import Foundation
import KioskCore
import KioskSources
import KioskTestSupport
import Testing

/// Page 1 shaped like the real API: Rick, a character with an unknown origin whose url is "",
/// one with a null name, an alien with a type, and a character the API knows little about.
let rickAndMortyPage = Fixture.text("rickandmorty-characters.json")

@Suite("Rick and Morty source")
struct RickAndMortySourceTests {
    let source = RickAndMortySource(configuration: testConfiguration())

    // MARK: Requests

    @Test("a plain request asks for the page number only")
    func plainRequest() throws {
        let http = try source.listRequest(for: PageRequest(source: .rickandmorty))

        #expect(http.url.absoluteString == "https://rickandmortyapi.com/api/character?page=1")
        #expect(http.endpoint == "rickandmorty.characters")
        #expect(http.source == .rickandmorty)
    }

    @Test("search and filters are sent as name, status and gender, lowercased")
    func filteredRequest() throws {
        // Given page 2 of a filtered search typed in mixed case
        let request = PageRequest(source: .rickandmorty, page: 2, query: "rick", filters: ["status": "Alive", "GENDER": "Female"])

        // When the upstream request is built
        let http = try source.listRequest(for: request)

        // Then parameters come in the documented order with canonical values
        #expect(http.url.absoluteString == "https://rickandmortyapi.com/api/character?page=2&name=rick&status=alive&gender=female")
    }

    @Test("a search for \"Mr. Poopy&butt\" reaches the API as one name parameter")
    func ampersandSearch() throws {
        let http = try source.listRequest(for: PageRequest(source: .rickandmorty, query: "Mr. Poopy&butt"))

        #expect(http.url.query == "page=1&name=Mr.%20Poopy%26butt")
        #expect(queryParameters(http.url).map(\.name) == ["page", "name"])
        #expect(queryValue(http.url, "name") == "Mr. Poopy&butt")
    }

    @Test("unicode, quotes, # and + in a search are percent-encoded", arguments: [
        ("Señor Rick", "page=1&name=Se%C3%B1or%20Rick"),
        ("\"Squanchy\"", "page=1&name=%22Squanchy%22"),
        ("Rick #2", "page=1&name=Rick%20%232"),
        ("Rick+Morty", "page=1&name=Rick%2BMorty"),
        ("🥒 Pickle", "page=1&name=%F0%9F%A5%92%20Pickle"),
    ])
    func encoding(query: String, expectedQuery: String) throws {
        let http = try source.listRequest(for: PageRequest(source: .rickandmorty, query: query))

        #expect(http.url.query == expectedQuery)
        #expect(queryValue(http.url, "name") == query)
    }

    @Test("a detail request names the character in the path")
    func detailRequest() throws {
        let http = try #require(try source.detailRequest(itemID: "1"))

        #expect(http.url.absoluteString == "https://rickandmortyapi.com/api/character/1")
        #expect(http.endpoint == "rickandmorty.character")
    }

    @Test("an item ID must be one number, episode-N or location-N (the API would read 1,2 as a list)",
          arguments: ["1,2", "rick", "", "../location/1", "episode-", "episode-1,2", "location-x"])
    func nonNumericID(itemID: String) {
        let error = kioskError { _ = try source.detailRequest(itemID: itemID) }
        #expect(error == .invalidRequest("Rick and Morty ids are numbers (characters), episode-N or location-N; got \"\(itemID)\""))
    }

    @Test("the base URL is configurable")
    func configurableBase() throws {
        var configuration = testConfiguration()
        configuration.rickAndMortyBaseURL = URL(string: "http://127.0.0.1:9000/rickandmorty/api")!
        let source = RickAndMortySource(configuration: configuration)

        let http = try source.listRequest(for: PageRequest(source: .rickandmorty, page: 3))

        #expect(http.url.absoluteString == "http://127.0.0.1:9000/rickandmorty/api/character?page=3")
        #expect(source.imageHosts == ["rickandmortyapi.com"])
        #expect(source.origins.map(\.description) == ["http://127.0.0.1:9000"])
    }

    // MARK: Normalisation

    @Test("normalize lowercases valid filters and drops blank ones")
    func normalize() throws {
        let request = PageRequest(source: .rickandmorty, filters: ["Status": "DEAD", "gender": " "])

        #expect(try source.normalize(request).filters == ["status": "dead"])
    }

    @Test("normalize rejects values and filters the API does not have")
    func normalizeRejects() {
        let status = kioskError { _ = try source.normalize(PageRequest(source: .rickandmorty, filters: ["status": "zombie"])) }
        #expect(status == .invalidRequest("Invalid status \"zombie\" for Rick and Morty; valid values: alive, dead, unknown"))

        let gender = kioskError { _ = try source.normalize(PageRequest(source: .rickandmorty, filters: ["gender": "robot"])) }
        #expect(gender == .invalidRequest("Invalid gender \"robot\" for Rick and Morty; valid values: female, male, genderless, unknown"))

        let name = kioskError { _ = try source.normalize(PageRequest(source: .rickandmorty, filters: ["species": "Human"])) }
        #expect(name == .invalidRequest("Unknown filter \"species\" for Rick and Morty; valid filters: gender, status"))
    }

    @Test("the catalog description matches the API")
    func capabilities() {
        #expect(source.id == .rickandmorty)
        #expect(source.pageSize == 20)
        #expect(source.defaultFreshness == 86_400)
        #expect(source.search.mode == .remote)
        #expect(source.imageHosts == ["rickandmortyapi.com"])
        #expect(source.filterValues["status"] == ["alive", "dead", "unknown"])
        #expect(source.filterValues["gender"] == ["female", "male", "genderless", "unknown"])
    }

    // MARK: Decoding

    @Test("every field of a character is mapped")
    func mapsCharacter() throws {
        let page = try source.decodeList(response(200, rickAndMortyPage), for: PageRequest(source: .rickandmorty))
        let item = try #require(page.items.first)
        let character = try #require(item.rickAndMorty)

        #expect(item.source == .rickandmorty)
        #expect(item.itemID == "1")
        #expect(item.title == "Rick Sanchez")
        #expect(item.subtitle == "Alive · Human")
        #expect(item.summary == "Human from Earth (C-137), last seen at Citadel of Ricks")
        #expect(item.imageURL?.absoluteString == "https://rickandmortyapi.com/api/character/avatar/1.jpeg")
        #expect(character.status == "Alive")
        #expect(character.species == "Human")
        #expect(character.type == "")
        #expect(character.gender == "Male")
        #expect(character.origin == .init(name: "Earth (C-137)", url: URL(string: "https://rickandmortyapi.com/api/location/1")))
        #expect(character.location == .init(name: "Citadel of Ricks", url: URL(string: "https://rickandmortyapi.com/api/location/3")))
        #expect(character.episodes.map(\.absoluteString) == ["https://rickandmortyapi.com/api/episode/1", "https://rickandmortyapi.com/api/episode/2"])
        #expect(character.created == "2017-11-04T18:48:46.250Z")
    }

    @Test("an unknown origin with url \"\" has no link and is left out of the summary")
    func unknownOrigin() throws {
        let page = try source.decodeList(response(200, rickAndMortyPage), for: PageRequest(source: .rickandmorty))
        let item = try #require(page.items.first { $0.itemID == "8" })

        #expect(item.rickAndMorty?.origin == .init(name: "unknown", url: nil))
        #expect(item.subtitle == "Dead · Human")
        #expect(item.summary == "Human, last seen at Citadel of Ricks")
    }

    @Test("a type joins the species, and an unknown status is said in words")
    func typeAndUnknownStatus() throws {
        let page = try source.decodeList(response(200, rickAndMortyPage), for: PageRequest(source: .rickandmorty))
        let item = try #require(page.items.first { $0.itemID == "14" })

        #expect(item.subtitle == "Status unknown · Alien")
        #expect(item.summary == "Alien (Parasite), last seen at Citadel of Ricks")
    }

    @Test("a character the API knows nothing about gets an empty summary, not 'unknown from unknown'")
    func everythingUnknown() throws {
        let page = try source.decodeList(response(200, rickAndMortyPage), for: PageRequest(source: .rickandmorty))
        let item = try #require(page.items.last)

        #expect(item.subtitle == "Status unknown")
        #expect(item.summary == "")
        #expect(item.rickAndMorty?.location.url == nil)
        #expect(item.rickAndMorty?.episodes == [])
    }

    @Test("a character with a null name is skipped and reported; totals come from info")
    func skipsBadCharacter() throws {
        let page = try source.decodeList(response(200, rickAndMortyPage), for: PageRequest(source: .rickandmorty))

        #expect(page.items.map(\.itemID) == ["1", "8", "14", "826"])
        #expect(page.skipped == [DecodingIssue(path: "results[2].name", message: "expected a string, found null")])
        #expect(page.totalItems == 826)
        #expect(page.totalPages == 42)
        #expect(page.hasNext)
    }

    @Test("the no-match 404 on page 1 is an empty page")
    func noMatchIsEmpty() throws {
        // Given the API's answer to a search with no match
        let http = response(404, #"{"error":"There is nothing here"}"#)

        // When page 1 is decoded
        let page = try source.decodeList(http, for: PageRequest(source: .rickandmorty, query: "zzzz"))

        // Then it is an empty result, not a failure
        #expect(page.items.isEmpty)
        #expect(page.totalItems == 0)
        #expect(page.totalPages == 0)
        #expect(page.request.query == "zzzz")
    }

    @Test("the same 404 to the whole list's first page is a failure, never an empty list stored over the kept one",
          arguments: [#"{"error":"There is nothing here"}"#, #"{"error":"There is nothing here."}"#])
    func wholeListNotFound(body: String) throws {
        // Given the API's 404 to an unfiltered first page (a route it does not have: a wrong base URL)
        // When it is decoded
        let error = kioskError { _ = try source.decodeList(response(404, body), for: PageRequest(source: .rickandmorty)) }
        // Then it fails, as any other 404 does
        #expect(error != nil)
        // And with a filter it is still an empty result
        #expect(try source.decodeList(response(404, body), for: PageRequest(source: .rickandmorty, filters: ["status": "dead"])).items.isEmpty)
    }

    @Test("the same 404 past page 1 is notFound for that page")
    func pastTheEnd() {
        let error = kioskError {
            _ = try source.decodeList(response(404, #"{"error":"There is nothing here"}"#), for: PageRequest(source: .rickandmorty, page: 43))
        }
        #expect(error == .notFound("page 43 of rickandmorty (there is nothing here)"))
    }

    @Test("a 404 that is not the API's JSON is an error, not an empty page")
    func foreign404() {
        let error = kioskError {
            _ = try source.decodeList(
                response(404, "<html><body>Not Found</body></html>", url: "https://rickandmortyapi.com/wrong/character?page=1"),
                for: PageRequest(source: .rickandmorty)
            )
        }
        #expect(error == .notFound("https://rickandmortyapi.com/wrong/character?page=1"))
    }

    @Test("whole-response failures name the envelope path", arguments: [
        (#"{"info":{"count":826,"pages":42},"results":[{"id":1,"name":"Rick"#, "$", "the JSON ends early (truncated body)"),
        (#"{"results":[]}"#, "$.info", "required field is missing"),
        (#"{"info":{"count":826,"pages":null},"results":[]}"#, "$.info.pages", "expected a number, found null"),
        (#"[{"id":1,"name":"Rick"}]"#, "$", "expected an object, found an array"),
        ("Service temporarily unavailable", "$", "expected JSON, found text that is not valid JSON"),
        // What the parser says, in words: trailing text, a number past any type, nesting too deep, a lone surrogate
        (#"{"info":{"count":1,"pages":1},"results":[]} extra"#, "$", "the JSON is not valid at byte 44"),
        (#"{"info":{"count":1e999,"pages":1},"results":[]}"#, "$", "a number too large to read: 1e999"),
        (#"{"info":"#, "$", "the JSON ends early (truncated body)"),
        // A mistake well before the end is said where it is, though the brackets it leaves open look like a cut body
        (#"{"info":{"count":1,,"pages":1},"results":[}"#, "$", "the JSON is not valid at byte 19"),
        (String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000), "$", "the JSON is nested too deeply to read at byte 513"),
    ])
    func wholeResponseFailures(body: String, path: String, message: String) {
        let error = kioskError { _ = try source.decodeList(response(200, body), for: PageRequest(source: .rickandmorty)) }
        #expect(error == .malformedResponse(path: path, message: message))
    }

    @Test("numbers written as strings of digits (ids and counts) are read as the numbers they are")
    func numbersAsStrings() throws {
        // Given a page whose counts and whose items' ids are quoted, one with spaces around it
        let body = #"{"info":{"count":"826","pages":" 42 "},"results":[{"id":"7","name":"Abradolf Lincler"},{"id":8,"name":"Adjudicator Rick"}]}"#
        // When it is decoded
        let page = try source.decodeList(response(200, body), for: PageRequest(source: .rickandmorty))
        // Then both items are read, with their ids, and the count is the one sent
        #expect(page.items.map(\.itemID) == ["7", "8"])
        #expect(page.skipped.isEmpty)
        #expect(page.totalItems == 826 && page.totalPages == 42)
    }

    @Test("a detail response is a bare character")
    func decodeDetail() throws {
        let body = #"{"id":2,"name":"Morty Smith","status":"Alive","species":"Human","type":"","gender":"Male","origin":{"name":"unknown","url":""},"location":{"name":"Citadel of Ricks","url":"https://rickandmortyapi.com/api/location/3"},"image":"https://rickandmortyapi.com/api/character/avatar/2.jpeg","episode":[],"url":"https://rickandmortyapi.com/api/character/2","created":"2017-11-04T18:50:21.651Z"}"#

        let item = try source.decodeDetail(response(200, body), itemID: "2")

        #expect(item.itemID == "2")
        #expect(item.title == "Morty Smith")
        #expect(item.summary == "Human, last seen at Citadel of Ricks")
    }

    @Test("a detail 404 is notFound for that character, and a malformed one names its field")
    func detailFailures() {
        let missing = kioskError { _ = try source.decodeDetail(response(404, #"{"error":"Character not found"}"#), itemID: "9999") }
        #expect(missing == .notFound("rickandmorty character 9999"))

        let malformed = kioskError { _ = try source.decodeDetail(response(200, #"{"id":"two","name":"Morty"}"#), itemID: "2") }
        #expect(malformed == .malformedResponse(path: "$.id", message: "expected a number, found a string (\"two\")"))
    }

    @Test("server errors and rate limits map to their errors")
    func statuses() {
        let url = "https://rickandmortyapi.com/api/character?page=1"
        let failed = kioskError { _ = try source.decodeList(response(500, "", url: url), for: PageRequest(source: .rickandmorty)) }
        let limited = kioskError {
            _ = try source.decodeList(response(429, "", url: url, headers: [:]), for: PageRequest(source: .rickandmorty))
        }
        let unauthorized = kioskError { _ = try source.decodeList(response(401, "", url: url), for: PageRequest(source: .rickandmorty)) }

        #expect(failed == .httpStatus(500, url: url))
        #expect(limited == .rateLimited(url: url, retryAfterSeconds: nil))
        #expect(unauthorized == .unauthorized(.rickandmorty, message: "Rick and Morty rejected the credentials (HTTP 401)"))
    }
}
