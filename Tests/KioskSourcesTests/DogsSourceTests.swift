import Foundation
import KioskCore
import KioskSources
import KioskTestSupport
import Testing

/// The dogs document as the original app's jsonblob served it, plus the awkward cases:
/// a duplicate name, a name with accents and punctuation, a dog with a null name, and unknown fields.
let dogsDocument = Fixture.text("dogs-document.json")

@Suite("Dogs source")
struct DogsSourceTests {
    let source = DogsSource(configuration: testConfiguration())

    @Test("the request is a GET of the configured document, its own query kept")
    func request() throws {
        // Given a dogs URL with a query string of its own
        let source = DogsSource(configuration: testConfiguration(dogsURL: URL(string: "https://jsonblob.example/api/jsonBlob/1234?format=json")))

        // When the request is built
        let http = try source.listRequest(for: PageRequest(source: .dogs, query: "rex"))

        // Then it is exactly that URL; the search stays local
        #expect(http.url.absoluteString == "https://jsonblob.example/api/jsonBlob/1234?format=json")
        #expect(http.endpoint == "dogs.list")
        #expect(http.source == .dogs)
    }

    @Test("with no dogs URL the request fails saying to set KIOSK_DOGS_URL")
    func missingURL() {
        let source = DogsSource(configuration: testConfiguration(dogsURL: nil))

        let error = kioskError { _ = try source.listRequest(for: PageRequest(source: .dogs)) }

        guard case .invalidRequest(let message)? = error else {
            Issue.record("expected invalidRequest, got \(String(describing: error))")
            return
        }
        #expect(message.hasPrefix("Set KIOSK_DOGS_URL"))
        #expect(source.imageHosts.isEmpty)
        #expect(source.origins.isEmpty)
    }

    @Test("only page 1 exists and there are no filters")
    func normalize() {
        #expect(kioskError { _ = try source.normalize(PageRequest(source: .dogs, page: 2)) }
            == .notFound("The dogs list is a single page; there is no page 2"))
        #expect(kioskError { _ = try source.normalize(PageRequest(source: .dogs, filters: ["breed": "pug"])) }
            == .invalidRequest("Unknown filter \"breed\" for Dogs; it takes no filters"))
    }

    @Test("the catalog description matches the document")
    func capabilities() throws {
        #expect(source.id == .dogs)
        #expect(source.defaultFreshness == 3600)
        #expect(source.search.mode == .localOnly)
        #expect(source.imageHosts.isEmpty)
        #expect(source.origins.map(\.description) == ["https://jsonblob.example:443"])
        #expect(source.filterValues.isEmpty)
        #expect(try source.detailRequest(itemID: "rex") == nil)
    }

    @Test("every field of a dog is mapped")
    func mapsDog() throws {
        let page = try source.decodeList(response(200, dogsDocument), for: PageRequest(source: .dogs))
        let item = try #require(page.items.first)

        #expect(item.source == .dogs)
        #expect(item.itemID == "rex")
        #expect(item.title == "Rex")
        #expect(item.subtitle == "Almost 5 years")
        #expect(item.summary == "He is much more passionate than any other dog.")
        #expect(item.imageURL?.absoluteString == "https://dogs.example/images/rex.jpg")
        #expect(item.dog == Dog(name: "Rex", description: "He is much more passionate than any other dog.", age: 5,
                                image: URL(string: "https://dogs.example/images/rex.jpg")))
        #expect(page.items[1].subtitle == "Almost 1 year")
    }

    @Test("IDs are stable slugs; duplicates are numbered in list order")
    func slugs() throws {
        let page = try source.decodeList(response(200, dogsDocument), for: PageRequest(source: .dogs))

        #expect(page.items.map(\.itemID) == ["rex", "spots", "rex-2", "chloe-o-brien", "rex-3"])
        // And decoding again gives the same IDs (favorites and the user's order are keyed by them)
        let again = try source.decodeList(response(200, dogsDocument), for: PageRequest(source: .dogs))
        #expect(again.items.map(\.itemID) == page.items.map(\.itemID))
    }

    @Test("a slug that collides with an earlier numbered duplicate is numbered again, and symbol-only names get a fallback")
    func slugEdgeCases() throws {
        let body = #"[{"dogName":"Rex","age":1},{"dogName":"Rex","age":1},{"dogName":"Rex 2","age":1},{"dogName":"🐶","age":1},{"dogName":"","age":1}]"#

        let page = try source.decodeList(response(200, body), for: PageRequest(source: .dogs))

        #expect(page.items.map(\.itemID) == ["rex", "rex-2", "rex-2-2", "dog", "dog-2"])
    }

    @Test("missing description, empty image and a missing image give defaults")
    func defaults() throws {
        let page = try source.decodeList(response(200, dogsDocument), for: PageRequest(source: .dogs))

        #expect(page.items[2].imageURL == nil)
        #expect(page.items[3].summary == "")
        #expect(page.items[3].title == "  Chloé O'Brien!! ")
        #expect(page.items[4].imageURL == nil)
    }

    @Test("a dog with a null name is skipped and reported; order is the document's")
    func skipsBadDog() throws {
        let page = try source.decodeList(response(200, dogsDocument), for: PageRequest(source: .dogs))

        #expect(page.items.map { String($0.summary.prefix(5)) } == ["He is", "Loves", "Anoth", "", "A thi"])
        #expect(page.skipped == [DecodingIssue(path: "[2].dogName", message: "expected a string, found null")])
        #expect(page.totalItems == 6)
        #expect(page.totalPages == 1)
    }

    @Test("a dog without an age is skipped rather than shown with a made-up one")
    func missingAge() throws {
        let page = try source.decodeList(response(200, #"[{"dogName":"Ageless","description":"?"},{"dogName":"Old","age":"ten"}]"#), for: PageRequest(source: .dogs))

        #expect(page.items.isEmpty)
        #expect(page.skipped == [
            DecodingIssue(path: "[0].age", message: "required field is missing"),
            DecodingIssue(path: "[1].age", message: "expected a number, found a string (\"ten\")"),
        ])
    }

    @Test("a dog whose age is a fraction or out of range is skipped, said in words rather than in Swift's names")
    func unreadableNumbers() throws {
        let page = try source.decodeList(response(200, #"[{"dogName":"Half","age":2.7},{"dogName":"Huge","age":1e400},{"dogName":"Fine","age":3}]"#),
                                         for: PageRequest(source: .dogs))
        #expect(page.items.map(\.title) == ["Fine"])
        #expect(page.skipped.count == 2, "\(page.skipped)")
        // And a negative age is no age either
        let negative = try source.decodeList(response(200, #"[{"dogName":"Minus","age":-4}]"#), for: PageRequest(source: .dogs))
        #expect(negative.items.isEmpty && negative.skipped == [DecodingIssue(path: "[0].age", message: "expected an age of 0 or more, found -4")])
        #expect(page.skipped.map(\.message).contains { $0.hasSuffix(": 2.7") } && page.skipped.map(\.message).contains { $0.hasSuffix(": 1e400") },
                "\(page.skipped)")
        for issue in page.skipped {
            #expect(issue.message.hasPrefix("a number its field cannot hold"), "\(issue.message)")
            #expect(!issue.message.contains("Swift") && !issue.message.contains("parsed:"), "\(issue.message)")
        }
    }

    @Test("a document that is not an array is a malformedResponse at $", arguments: [
        (#"{"dogs":[]}"#, "expected an array, found an object"),
        (#"[{"dogName":"Rex","age":5},{"dogName":"Sp"#, "the JSON ends early (truncated body)"),
        ("<html><head><title>jsonblob</title></head></html>", "expected JSON, found HTML or XML"),
        ("null", "expected an array, found null"),
    ])
    func wrongShape(body: String, message: String) {
        let error = kioskError { _ = try source.decodeList(response(200, body), for: PageRequest(source: .dogs)) }
        #expect(error == .malformedResponse(path: "$", message: message))
    }

    @Test("an error status is not read as a list")
    func errorStatus() {
        let error = kioskError {
            _ = try source.decodeList(response(404, "Not found", url: "https://jsonblob.example/api/jsonBlob/1234"), for: PageRequest(source: .dogs))
        }
        #expect(error == .notFound("https://jsonblob.example/api/jsonBlob/1234"))
    }
}

@Suite("Dogs ids with a malformed entry")
struct DogsSlugWithBadEntryTests {
    @Test("A skipped dog keeps its id slot, so the next dog of the same name keeps its own id")
    func skippedDogKeepsItsSlug() throws {
        // Given two dogs named Rex, the first one malformed (no age)
        let body = #"[{"dogName": "Rex", "description": "first", "image": "http://127.0.0.1/a.jpg"}, {"dogName": "Rex", "description": "second", "age": 3, "image": "http://127.0.0.1/b.jpg"}]"#
        var configuration = SourceConfiguration.live
        configuration.dogsURL = URL(string: "http://127.0.0.1:1/dogs.json")!
        let source = DogsSource(configuration: configuration)
        // When the list is decoded
        let page = try source.decodeList(HTTPResponse(status: 200, body: Data(body.utf8), url: configuration.dogsURL!),
                                         for: PageRequest(source: .dogs))
        // Then the good Rex keeps the id it has when both are readable
        #expect(page.items.map(\.itemID) == ["rex-2"])
        #expect(page.skipped.count == 1)
    }
}
