import Foundation
import KioskCore
import KioskSources
import KioskTestSupport
import Testing

/// md5("1700000000" + "marvel-private-key" + "marvel-public-key"), computed outside Swift with
/// `printf '1700000000marvel-private-keymarvel-public-key' | md5sum` so the test does not share the code it checks.
let expectedMarvelHash = "b34cb0758fbd0fac07352c27f0cd4356"

/// A characters page shaped like the real API: the envelope's attribution, a character with more comics
/// available than returned, one with an empty description and the "image_not_available" thumbnail,
/// one with a null name, one with no collections at all, and unknown fields everywhere.
let marvelCharacters = Fixture.text("marvel-characters.json")

@Suite("Marvel source")
struct MarvelSourceTests {
    let source = MarvelSource(configuration: testConfiguration())

    // MARK: Requests

    @Test("a page request is signed with ts, apikey and md5(ts + private + public), and orders by name")
    func signedListRequest() throws {
        // Given page 3 of a search, at a fixed time
        let request = PageRequest(source: .marvel, page: 3, query: "Spider Man")

        // When the upstream request is built
        let http = try source.listRequest(for: request)

        // Then the URL is exactly the documented one, with the independently computed hash
        #expect(http.url.absoluteString == "https://gateway.marvel.com/v1/public/characters?limit=20&offset=40&orderBy=name&nameStartsWith=Spider%20Man&ts=1700000000&apikey=marvel-public-key&hash=\(expectedMarvelHash)")
        #expect(http.endpoint == "marvel.characters")
        #expect(http.source == .marvel)
        #expect(http.method == "GET")
        // And the private key itself never leaves the process
        #expect(!http.url.absoluteString.contains("marvel-private-key"))
    }

    @Test("without a query there is no nameStartsWith, and page 1 starts at offset 0")
    func plainListRequest() throws {
        let http = try source.listRequest(for: PageRequest(source: .marvel))

        #expect(queryParameters(http.url).map(\.name) == ["limit", "offset", "orderBy", "ts", "apikey", "hash"])
        #expect(queryValue(http.url, "offset") == "0")
    }

    @Test("search text reaches Marvel as one parameter whatever it contains", arguments: [
        "Mr. Poopy&butt", "Spider-Man #1", "A+B", "Señor 🐶", "\"Quoted\" 'text'", "50% = half; /slash?",
    ])
    func searchEncoding(query: String) throws {
        let http = try source.listRequest(for: PageRequest(source: .marvel, query: query))

        // The server decodes exactly the typed text, and nothing leaks into other parameters
        #expect(queryValue(http.url, "nameStartsWith") == query)
        #expect(queryParameters(http.url).count == 7)
        #expect(!(http.url.query ?? "").contains("+"))
    }

    @Test("a detail request is signed and names the character in the path")
    func detailRequest() throws {
        let http = try #require(try source.detailRequest(itemID: "1011334"))

        #expect(http.url.absoluteString == "https://gateway.marvel.com/v1/public/characters/1011334?ts=1700000000&apikey=marvel-public-key&hash=\(expectedMarvelHash)")
        #expect(http.endpoint == "marvel.character")
    }

    @Test("a non-numeric character ID is refused before any request", arguments: ["abc", "", "1/2", "-5", "1,2", "1e3", "٣"])
    func nonNumericID(itemID: String) {
        let error = kioskError { _ = try source.detailRequest(itemID: itemID) }
        #expect(error == .invalidRequest("Marvel character IDs are numbers; got \"\(itemID)\""))
    }

    @Test("without both keys no request is built", arguments: [
        (String?.none, String?.some("private")), (String?.some("public"), String?.none), (String?.some(""), String?.some("private")),
    ])
    func missingKeys(publicKey: String?, privateKey: String?) {
        let source = MarvelSource(configuration: testConfiguration(marvelPublicKey: publicKey, marvelPrivateKey: privateKey))
        let expected = KioskError.unauthorized(.marvel, message: "Set MARVEL_PUBLIC_KEY and MARVEL_PRIVATE_KEY to read Marvel characters")

        #expect(kioskError { _ = try source.listRequest(for: PageRequest(source: .marvel)) } == expected)
        #expect(kioskError { _ = try source.detailRequest(itemID: "1011334") } == expected)
    }

    @Test("normalize accepts a plain page and refuses filters and page 0")
    func normalize() throws {
        let request = PageRequest(source: .marvel, page: 4, query: "hulk")
        #expect(try source.normalize(request) == request)
        #expect(kioskError { _ = try source.normalize(PageRequest(source: .marvel, filters: ["status": "alive"])) }
            == .invalidRequest("Unknown filter \"status\" for Marvel; it takes no filters"))
        #expect(kioskError { _ = try source.normalize(PageRequest(source: .marvel, page: 0)) }
            == .invalidRequest("Page numbers start at 1; got page 0"))
        #expect(kioskError { _ = try source.normalize(PageRequest(source: .nyt)) }
            == .invalidRequest("A nyt request was sent to the marvel source"))
    }

    @Test("the catalog description matches the API")
    func capabilities() {
        #expect(source.id == .marvel)
        #expect(source.pageSize == 20)
        #expect(source.defaultFreshness == 86_400)
        #expect(source.search.mode == .remote)
        #expect(source.imageHosts == ["i.annihil.us"])
        #expect(source.origins.map(\.description) == ["https://gateway.marvel.com:443"])
        #expect(source.filterValues.isEmpty)
    }

    // MARK: Decoding

    @Test("every field of a character is mapped, with more comics available than returned")
    func mapsCharacter() throws {
        // Given page 2 of the real-shaped response
        let page = try source.decodeList(response(200, marvelCharacters), for: PageRequest(source: .marvel, page: 2))
        let item = try #require(page.items.first)
        let character = try #require(item.marvel)

        // Then the row and the detail come from the JSON
        #expect(item.source == .marvel)
        #expect(item.itemID == "1011334")
        #expect(item.title == "3-D Man")
        #expect(item.subtitle == "12 comics · 3 series")
        #expect(item.summary == "A hero of the 1950s.")
        #expect(item.imageURL?.absoluteString == "http://i.annihil.us/u/prod/marvel/i/mg/c/e0/535fecbbb9784/portrait_xlarge.jpg")
        #expect(character.thumbnail == MarvelImage(path: "http://i.annihil.us/u/prod/marvel/i/mg/c/e0/535fecbbb9784", fileExtension: "jpg"))
        #expect(character.modified == "2014-04-29T14:18:17-0400")
        #expect(character.comics == MarvelCollection(available: 12, items: [
            "Avengers: The Initiative (2007) #14", "Avengers: The Initiative (2007) #14 (SPOTLIGHT VARIANT)",
        ]))
        #expect(character.comics.hasMore)
        #expect(character.series.available == 3)
        #expect(character.series.items.count == 3)
        #expect(character.stories == MarvelCollection(available: 21, items: ["Cover #19947"]))
        #expect(character.events == MarvelCollection(available: 1, items: ["Secret Invasion"]))
        #expect(character.links == [
            MarvelCharacter.Link(type: "detail", url: URL(string: "http://marvel.com/characters/74/3-d_man?utm_campaign=apiRef&utm_source=abc")!),
            MarvelCharacter.Link(type: "wiki", url: URL(string: "http://marvel.com/universe/3-D_Man_(Chandler)?utm_campaign=apiRef&utm_source=abc")!),
        ])
        #expect(character.attribution == "Data provided by Marvel. © 2024 MARVEL")
    }

    @Test("image_not_available means no picture, and an empty description stays empty")
    func noImage() throws {
        let page = try source.decodeList(response(200, marvelCharacters), for: PageRequest(source: .marvel, page: 2))
        let item = try #require(page.items.dropFirst().first)

        #expect(item.title == "A-Bomb (HAS)")
        #expect(item.imageURL == nil)
        #expect(item.marvel?.thumbnail == nil)
        #expect(item.summary == "")
        #expect(item.subtitle == "1 comic")
    }

    @Test("a character with no collections, null description and null thumbnail gets defaults")
    func sparseCharacter() throws {
        let page = try source.decodeList(response(200, marvelCharacters), for: PageRequest(source: .marvel, page: 2))
        let item = try #require(page.items.last)

        #expect(item.title == "Aaron Stack")
        #expect(item.subtitle == "No comics")
        #expect(item.summary == "")
        #expect(item.imageURL == nil)
        #expect(item.marvel?.comics == .empty)
        #expect(item.marvel?.links == [])
    }

    @Test("a character with a null name is skipped and reported under data.results")
    func skipsBadCharacter() throws {
        let page = try source.decodeList(response(200, marvelCharacters), for: PageRequest(source: .marvel, page: 2))

        #expect(page.items.map(\.itemID) == ["1011334", "1017100", "1010699"])
        #expect(page.skipped == [DecodingIssue(path: "data.results[2].name", message: "expected a string, found null")])
    }

    @Test("totals come from data.total and the attribution is on the page")
    func totals() throws {
        let page = try source.decodeList(response(200, marvelCharacters), for: PageRequest(source: .marvel, page: 2))

        #expect(page.totalItems == 1564)
        #expect(page.totalPages == 79)
        #expect(page.hasNext)
        #expect(page.attribution == "Data provided by Marvel. © 2024 MARVEL")
    }

    @Test("a search with no match is an empty page with no pages")
    func emptySearch() throws {
        let body = #"{"code":200,"status":"Ok","attributionText":"Data provided by Marvel. © 2024 MARVEL","data":{"offset":0,"limit":20,"total":0,"count":0,"results":[]}}"#

        let page = try source.decodeList(response(200, body), for: PageRequest(source: .marvel, query: "zzzz"))

        #expect(page.items.isEmpty)
        #expect(page.totalItems == 0)
        #expect(page.totalPages == 0)
        #expect(page.skipped.isEmpty)
    }

    @Test("exactly 20 results is one page, 21 is two")
    func pageCountRounding() throws {
        for (total, pages) in [(20, 1), (21, 2), (1, 1)] {
            let body = #"{"attributionText":"x","data":{"offset":0,"total":\#(total),"results":[]}}"#
            let page = try source.decodeList(response(200, body), for: PageRequest(source: .marvel))
            #expect(page.totalPages == pages)
        }
    }

    @Test("a page past the end is notFound saying how many pages there are")
    func pastTheEnd() {
        // Given Marvel's 200 answer with no results at offset 1580 of 1564
        let body = #"{"code":200,"attributionText":"x","data":{"offset":1580,"limit":20,"total":1564,"count":0,"results":[]}}"#

        let error = kioskError { _ = try source.decodeList(response(200, body), for: PageRequest(source: .marvel, page: 80)) }

        #expect(error == .notFound("page 80 of marvel (there are 79)"))
    }

    @Test("whole-response failures name the envelope path", arguments: [
        (#"{"code":200,"data":{"offset":0,"total":3,"results":[{"id":1,"na"#, "$", "the JSON ends early (truncated body)"),
        (#"{"code":200,"status":"Ok"}"#, "$.data", "required field is missing"),
        (#"{"code":200,"data":{"total":3,"results":"none"}}"#, "$.data.results", "expected an array, found a string (\"none\")"),
        (#"{"code":200,"data":[]}"#, "$.data", "expected an object, found an empty array"),
        ("<html><body>504 Gateway Time-out</body></html>", "$", "expected JSON, found HTML or XML"),
    ])
    func wholeResponseFailures(body: String, path: String, message: String) {
        let error = kioskError { _ = try source.decodeList(response(200, body), for: PageRequest(source: .marvel)) }
        #expect(error == .malformedResponse(path: path, message: message))
    }

    @Test("a detail response is the same envelope with one character")
    func decodeDetail() throws {
        let body = #"{"code":200,"attributionText":"Data provided by Marvel. © 2024 MARVEL","data":{"offset":0,"limit":20,"total":1,"count":1,"results":[{"id":1011334,"name":"3-D Man","description":"","thumbnail":{"path":"http://i.annihil.us/u/prod/marvel/i/mg/c/e0/535fecbbb9784","extension":"jpg"},"comics":{"available":0,"items":[]},"series":{"available":2,"items":[]}}]}}"#

        let item = try source.decodeDetail(response(200, body), itemID: "1011334")

        #expect(item.itemID == "1011334")
        #expect(item.subtitle == "2 series")
        #expect(item.marvel?.attribution == "Data provided by Marvel. © 2024 MARVEL")
    }

    @Test("a malformed detail character is a malformedResponse at its path")
    func malformedDetail() {
        let body = #"{"code":200,"data":{"total":1,"results":[{"id":1011334,"name":7}]}}"#

        let error = kioskError { _ = try source.decodeDetail(response(200, body), itemID: "1011334") }

        #expect(error == .malformedResponse(path: "$.data.results[0].name", message: "expected a string, found a number (7)"))
    }

    // MARK: Statuses

    @Test("401 is unauthorized with Marvel's message, 409 is invalidRequest with Marvel's message")
    func authStatuses() {
        let unauthorized = kioskError {
            _ = try source.decodeList(
                response(401, #"{"code":"InvalidCredentials","message":"That hash, timestamp and key combination is invalid."}"#),
                for: PageRequest(source: .marvel)
            )
        }
        #expect(unauthorized == .unauthorized(.marvel, message: "That hash, timestamp and key combination is invalid."))

        let conflict = kioskError {
            _ = try source.decodeList(
                response(409, #"{"code":"MissingParameter","message":"You must provide a user key."}"#),
                for: PageRequest(source: .marvel)
            )
        }
        #expect(conflict == .invalidRequest("You must provide a user key."))
    }

    @Test("a 404 on a character is notFound for that character")
    func detailNotFound() {
        let error = kioskError {
            _ = try source.decodeDetail(response(404, #"{"code":404,"status":"We couldn't find that character"}"#), itemID: "42")
        }
        #expect(error == .notFound("marvel character 42"))
    }

    @Test("429 and 5xx carry a URL without ts, apikey or hash")
    func redactedStatuses() throws {
        // Given the real signed URL answering with errors
        let url = try source.listRequest(for: PageRequest(source: .marvel)).url.absoluteString
        let redacted = "https://gateway.marvel.com/v1/public/characters?limit=20&offset=0&orderBy=name&ts=<redacted>&apikey=<redacted>&hash=<redacted>"

        let limited = kioskError {
            _ = try source.decodeList(response(429, #"{"code":"RequestThrottled","message":"You have exceeded your rate limit."}"#, url: url, headers: ["Retry-After": "120"]), for: PageRequest(source: .marvel))
        }
        let failed = kioskError {
            _ = try source.decodeList(response(502, "Bad Gateway", url: url), for: PageRequest(source: .marvel))
        }

        #expect(limited == .rateLimited(url: redacted, retryAfterSeconds: 120))
        #expect(failed == .httpStatus(502, url: redacted))
    }
}
