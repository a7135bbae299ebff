import Foundation
import KioskCore
import KioskSources
import KioskTestSupport
import Testing

/// A most-viewed response shaped like the real API, including its awkward cases: an id beyond Int32,
/// `column: null`, an older article with "" facets and empty media, a null title, renditions out of order,
/// `approved_for_syndication` as 1 and as true, and fields Kiosk does not read.
let nytMostViewed = Fixture.text("nyt-mostviewed.json")

@Suite("New York Times source")
struct NYTimesSourceTests {
    let source = NYTimesSource(configuration: testConfiguration())

    // MARK: Requests

    @Test("a plain request asks for the most viewed articles of the last 7 days with the key")
    func defaultRequest() throws {
        // Given a request with no filters
        let request = PageRequest(source: .nyt)

        // When the upstream request is built
        let http = try source.listRequest(for: request)

        // Then it is the default ranking, with the key as a query parameter
        #expect(http.url.absoluteString == "https://api.nytimes.com/svc/mostpopular/v2/viewed/7.json?api-key=nyt-test-key")
        #expect(http.method == "GET")
        #expect(http.endpoint == "nyt.mostpopular")
        #expect(http.source == .nyt)
    }

    @Test("kind and period choose the path, and the search text is never sent upstream")
    func filteredRequest() throws {
        // Given the most emailed of the last 30 days, with a search
        let request = PageRequest(source: .nyt, query: "Mr. Poopy&butt", filters: ["kind": "emailed", "period": "30"])

        // When the upstream request is built
        let http = try source.listRequest(for: request)

        // Then the path names the ranking and the only parameter is the key
        #expect(http.url.path == "/svc/mostpopular/v2/emailed/30.json")
        #expect(queryParameters(http.url).map(\.name) == ["api-key"])
    }

    @Test("the base URL is configurable, with or without a trailing slash")
    func configurableBase() throws {
        // Given a demo upstream base ending in a slash
        var configuration = testConfiguration()
        configuration.nytBaseURL = URL(string: "http://127.0.0.1:8123/nyt/svc/mostpopular/v2/")!
        let source = NYTimesSource(configuration: configuration)

        // When a request is built
        let http = try source.listRequest(for: PageRequest(source: .nyt, filters: ["kind": "shared", "period": "1"]))

        // Then it lands below that base
        #expect(http.url.absoluteString == "http://127.0.0.1:8123/nyt/svc/mostpopular/v2/shared/1.json?api-key=nyt-test-key")
    }

    @Test("a key with URL-special characters is percent-encoded")
    func keyEncoding() throws {
        // Given a key containing characters that would split or alter the query
        let source = NYTimesSource(configuration: testConfiguration(nytAPIKey: "a+b&c=d#e"))

        // When a request is built
        let http = try source.listRequest(for: PageRequest(source: .nyt))

        // Then the upstream reads the key back intact
        #expect(queryValue(http.url, "api-key") == "a+b&c=d#e")
        #expect(http.url.query == "api-key=a%2Bb%26c%3Dd%23e")
    }

    @Test("without an API key no request is built and the error says which variable to set", arguments: [nil, "", "  "])
    func missingKey(key: String?) {
        // Given no usable NYT key
        let source = NYTimesSource(configuration: testConfiguration(nytAPIKey: key))

        // When a request is built
        let error = kioskError { _ = try source.listRequest(for: PageRequest(source: .nyt)) }

        // Then it is refused as unauthorized, naming NYT_API_KEY
        guard case .unauthorized(let id, let message)? = error else {
            Issue.record("expected unauthorized, got \(String(describing: error))")
            return
        }
        #expect(id == .nyt)
        #expect(message.contains("NYT_API_KEY"))
    }

    @Test("there is no item endpoint")
    func noDetailRequest() throws {
        #expect(try source.detailRequest(itemID: "100000009155563") == nil)
    }

    // MARK: Normalisation

    @Test("normalize fills the default kind and period and lowercases given values")
    func normalizeDefaults() throws {
        // Given requests with no filters and with upper-case values
        let plain = try source.normalize(PageRequest(source: .nyt))
        let shouting = try source.normalize(PageRequest(source: .nyt, filters: ["kind": "EMAILED"]))

        // Then defaults are filled and values are canonical
        #expect(plain.filters == ["kind": "viewed", "period": "7"])
        #expect(shouting.filters == ["kind": "emailed", "period": "7"])
        #expect(try source.normalize(plain) == plain)
    }

    @Test("normalize rejects unknown kinds, periods and filter names with the valid values")
    func normalizeRejects() {
        let kind = kioskError { _ = try source.normalize(PageRequest(source: .nyt, filters: ["kind": "liked"])) }
        #expect(kind == .invalidRequest("Invalid kind \"liked\" for New York Times; valid values: emailed, viewed, shared"))

        let period = kioskError { _ = try source.normalize(PageRequest(source: .nyt, filters: ["period": "14"])) }
        #expect(period == .invalidRequest("Invalid period \"14\" for New York Times; valid values: 1, 7, 30"))

        let name = kioskError { _ = try source.normalize(PageRequest(source: .nyt, filters: ["section": "U.S."])) }
        #expect(name == .invalidRequest("Unknown filter \"section\" for New York Times; valid filters: kind, period"))
    }

    @Test("only page 1 exists: a page below it is invalid, one past it not found", arguments: [0, 2, 5])
    func singlePage(page: Int) {
        // Given a page other than 1
        let error = kioskError { _ = try source.listRequest(for: PageRequest(source: .nyt, page: page)) }

        // Then a page 0 is invalid, and a later page is past the last (a 404, as any catalog's)
        switch error {
        case .invalidRequest(let message)?: #expect(page == 0 && message.contains("start at 1"), "\(message)")
        case .notFound(let message)?: #expect(page > 1 && message.contains("single page of 20"), "\(message)")
        default: Issue.record("expected invalidRequest or notFound, got \(String(describing: error))")
        }
    }

    @Test("the catalog description matches the API")
    func capabilities() {
        #expect(source.id == .nyt)
        #expect(source.pageSize == 20)
        #expect(source.defaultFreshness == 3600)
        #expect(source.search.mode == .localOnly)
        #expect(source.imageHosts == ["static01.nyt.com"])
        #expect(source.origins.map(\.description) == ["https://api.nytimes.com:443"])
        #expect(source.filterValues == ["kind": ["emailed", "viewed", "shared"], "period": ["1", "7", "30"]])
    }

    // MARK: Decoding

    @Test("every field of a full article is mapped")
    func mapsFullArticle() throws {
        // Given the real-shaped most-viewed response
        let page = try source.decodeList(response(200, nytMostViewed), for: PageRequest(source: .nyt))

        // When the first article is read
        let item = try #require(page.items.first)
        let article = try #require(item.article)

        // Then every field comes from the JSON
        #expect(item.source == .nyt)
        #expect(item.itemID == "100000009155563")
        #expect(item.title == "What the Latest Polls Say")
        #expect(item.subtitle == "By Jane Doe and John Roe")
        #expect(item.summary == "A look at the numbers six months out.")
        #expect(item.imageURL?.absoluteString == "https://static01.nyt.com/images/2024/05/01/polls-mediumThreeByTwo210.jpg")
        #expect(article.rank == 1)
        #expect(article.url?.absoluteString == "https://www.nytimes.com/2024/05/01/us/politics/election-poll.html")
        #expect(article.section == "U.S.")
        #expect(article.subsection == "Politics")
        #expect(article.byline == "By Jane Doe and John Roe")
        #expect(article.publishedDate == "2024-05-01")
        #expect(article.updated == "2024-05-02 10:15:04")
        #expect(article.type == "Article")
        #expect(article.keywords == ["Presidential Election of 2024", "Polls and Public Opinion", "Biden, Joseph R Jr"])
        #expect(article.facets == ["Presidential Election of 2024", "Polls and Public Opinion", "Democratic Party", "Biden, Joseph R Jr"])
        #expect(article.images == [
            ImageReference(url: URL(string: "https://static01.nyt.com/images/2024/05/01/polls-thumbStandard.jpg")!, width: 75, height: 75, format: "Standard Thumbnail"),
            ImageReference(url: URL(string: "https://static01.nyt.com/images/2024/05/01/polls-mediumThreeByTwo210.jpg")!, width: 210, height: 140, format: "mediumThreeByTwo210"),
            ImageReference(url: URL(string: "https://static01.nyt.com/images/2024/05/01/polls-mediumThreeByTwo440.jpg")!, width: 440, height: 293, format: "mediumThreeByTwo440"),
        ])
        #expect(article.caption == "Voters lined up in Atlanta.")
        #expect(article.copyright == "Nicole Craine for The New York Times")
    }

    @Test("an older article with empty-string facets and no media still shows, with no picture")
    func olderArticle() throws {
        // Given the second article, which has "" facets and `media: []`
        let page = try source.decodeList(response(200, nytMostViewed), for: PageRequest(source: .nyt))
        let item = try #require(page.items.dropFirst().first)
        let article = try #require(item.article)

        // Then it is shown with empty lists rather than dropped
        #expect(item.itemID == "12345")
        #expect(item.subtitle == "")
        #expect(item.imageURL == nil)
        #expect(article.type == "Interactive")
        #expect(article.subsection == "")
        #expect(article.keywords == [])
        #expect(article.facets == [])
        #expect(article.images == [])
        #expect(article.caption == nil)
        #expect(article.copyright == nil)
    }

    @Test("without the 210 crop the smallest rendition is the list picture, and all media are merged by size")
    func imageFallback() throws {
        // Given the fourth article: renditions listed largest first, across two media, none 210 wide
        let page = try source.decodeList(response(200, nytMostViewed), for: PageRequest(source: .nyt))
        let item = try #require(page.items.last)
        let article = try #require(item.article)

        // Then the smallest is chosen and images are sorted by area, caption and copyright from the first media
        #expect(item.imageURL?.absoluteString == "https://static01.nyt.com/images/storm-thumbStandard.jpg")
        #expect(article.images.map(\.format) == ["Standard Thumbnail", "mediumThreeByTwo440", "square640"])
        #expect(article.largestImage?.format == "square640")
        #expect(article.caption == nil)
        #expect(article.copyright == "Reuters")
        #expect(article.facets == ["Storms", "Europe"])
    }

    @Test("an article with a null title is skipped and reported; the others keep their upstream rank")
    func skipsBadArticle() throws {
        // Given a page whose third article has `"title": null`
        let page = try source.decodeList(response(200, nytMostViewed), for: PageRequest(source: .nyt))

        // Then three articles show, in order, ranked by their upstream position
        #expect(page.items.map(\.itemID) == ["100000009155563", "12345", "100000009150001"])
        #expect(page.items.compactMap(\.article?.rank) == [1, 2, 4])
        // And the bad one is reported with its path
        #expect(page.skipped == [DecodingIssue(path: "results[2].title", message: "expected a string, found null")])
        // And the page counts the three it holds
        #expect(page.totalItems == 3)
        #expect(page.totalPages == 1)
        #expect(page.hasNext == false)
        #expect(page.request.filters == ["kind": "viewed", "period": "7"])
    }

    @Test("a list counts the articles it holds; num_results, when larger, is kept only as information")
    func numResultsIsInformation() throws {
        // Given an answer of two articles whose num_results counts 1,491 (as the real API's do)
        let body = #"{"status":"OK","num_results":1491,"results":[{"id":1,"title":"One"},{"id":2,"title":"Two"}]}"#
        // When it is decoded
        let page = try source.decodeList(response(200, body), for: PageRequest(source: .nyt))
        // Then the page is one page of the two it holds, and 1,491 is the reported total
        #expect(page.totalItems == 2)
        #expect(page.totalPages == 1)
        #expect(page.reportedTotal == 1491)
        // And a num_results that matches what was sent reports nothing more
        let exact = try source.decodeList(response(200, #"{"num_results":1,"results":[{"id":1,"title":"One"}]}"#),
                                          for: PageRequest(source: .nyt))
        #expect(exact.reportedTotal == nil)
    }

    @Test("a bad value in a nested media rendition points at that rendition")
    func nestedIssuePath() throws {
        // Given an article whose image width is text
        let body = #"{"num_results":1,"results":[{"id":1,"title":"T","media":[{"media-metadata":[{"url":"https://static01.nyt.com/a.jpg","width":"wide"}]}]}]}"#

        // When it is decoded
        let page = try source.decodeList(response(200, body), for: PageRequest(source: .nyt))

        // Then the issue names the exact field and what was found
        #expect(page.items.isEmpty)
        #expect(page.skipped == [DecodingIssue(
            path: "results[0].media[0].media-metadata[0].width",
            message: "expected a number, found a string (\"wide\")"
        )])
    }

    @Test("an article without an id, or an element that is not an object, is skipped with its path")
    func missingIDAndNonObject() throws {
        let body = #"{"num_results":3,"results":[{"title":"No id"},null,{"id":2,"title":"Fine"}]}"#

        let page = try source.decodeList(response(200, body), for: PageRequest(source: .nyt))

        #expect(page.items.map(\.title) == ["Fine"])
        #expect(page.skipped == [
            DecodingIssue(path: "results[0].id", message: "required field is missing"),
            DecodingIssue(path: "results[1]", message: "expected an object, found null"),
        ])
    }

    @Test("whole-response failures are malformedResponse errors with a JSON path", arguments: [
        (#"{"status":"OK","num_results":20,"results":[{"id":1,"title":"Cut"#, "$", "the JSON ends early (truncated body)"),
        ("<!DOCTYPE html><html><body>Gateway</body></html>", "$", "expected JSON, found HTML or XML"),
        ("", "$", "expected JSON, found an empty body"),
        (#"[{"id":1,"title":"A"}]"#, "$", "expected an object, found an array"),
        (#"{"status":"OK","results":{"id":1}}"#, "$.results", "expected an array, found an object"),
        (#"{"status":"OK","num_results":"many","results":[]}"#, "$.num_results", "expected a number, found a string (\"many\")"),
        (#"{"status":"OK","num_results":0}"#, "$.results", "required field is missing"),
    ])
    func wholeResponseFailures(body: String, path: String, message: String) {
        // Given a body that is not a most-popular envelope
        // When it is decoded
        let error = kioskError { _ = try source.decodeList(response(200, body), for: PageRequest(source: .nyt)) }

        // Then the error says where and what, never a raw DecodingError
        #expect(error == .malformedResponse(path: path, message: message))
    }

    // MARK: Statuses

    @Test("a 401 is unauthorized with NYT's fault string")
    func unauthorizedStatus() {
        let body = #"{"fault":{"faultstring":"Invalid ApiKey","detail":{"errorcode":"oauth.v2.InvalidApiKey"}}}"#
        let error = kioskError {
            _ = try source.decodeList(response(401, body), for: PageRequest(source: .nyt))
        }
        #expect(error == .unauthorized(.nyt, message: "Invalid ApiKey"))
    }

    @Test("a 429 is rateLimited with Retry-After and a redacted URL")
    func rateLimitedStatus() {
        // Given a rate-limit answer for a keyed URL
        let url = "https://api.nytimes.com/svc/mostpopular/v2/viewed/7.json?api-key=nyt-test-key"
        let http = response(429, #"{"fault":{"faultstring":"Rate limit quota violation"}}"#, url: url, headers: ["Retry-After": "30"])

        // When it is decoded
        let error = kioskError { _ = try source.decodeList(http, for: PageRequest(source: .nyt)) }

        // Then the key is not in the error
        #expect(error == .rateLimited(
            url: "https://api.nytimes.com/svc/mostpopular/v2/viewed/7.json?api-key=<redacted>",
            retryAfterSeconds: 30
        ))
    }

    @Test("Retry-After as an HTTP date is turned into seconds from the injected clock")
    func retryAfterDate() {
        // Given a Retry-After 90 s after the fixed clock (2023-11-14 22:13:20 GMT)
        let http = response(429, "", headers: ["Retry-After": "Tue, 14 Nov 2023 22:14:50 GMT"])

        let error = kioskError { _ = try source.decodeList(http, for: PageRequest(source: .nyt)) }

        #expect(error == .rateLimited(url: "https://upstream.example/", retryAfterSeconds: 90))
    }

    @Test("5xx, 404 and other statuses carry the redacted URL", arguments: [(500, "http"), (503, "http"), (404, "notFound"), (403, "http")])
    func otherStatuses(status: Int, kind: String) {
        let url = "https://api.nytimes.com/svc/mostpopular/v2/viewed/7.json?api-key=nyt-test-key"
        let redacted = "https://api.nytimes.com/svc/mostpopular/v2/viewed/7.json?api-key=<redacted>"

        let error = kioskError {
            _ = try source.decodeList(response(status, "<html>Service Unavailable</html>", url: url), for: PageRequest(source: .nyt))
        }

        #expect(error == (kind == "notFound" ? .notFound(redacted) : .httpStatus(status, url: redacted)))
        #expect(error.map { "\($0)" }?.contains("nyt-test-key") == false)
    }
}
