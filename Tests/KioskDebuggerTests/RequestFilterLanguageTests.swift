import Foundation
import KioskCore
@testable import KioskDebugger
import Testing

@Suite("The request filter language")
struct RequestFilterLanguageTests {
    /// A filter built field by field, to compare a parse with.
    static func filter(_ build: (inout RequestFilter) -> Void) -> RequestFilter {
        var filter = RequestFilter()
        build(&filter)
        return filter
    }

    static let parseCases: [(String, RequestFilter)] = [
        ("", RequestFilter()),
        ("   ", RequestFilter()),
        ("status:5xx", RequestFilter(statusClass: .serverError)),
        ("STATUS:5XX", RequestFilter(statusClass: .serverError)),
        ("status:error", RequestFilter(statusClass: .error)),
        ("status:404,5xx", filter { $0.statuses = FilterCriterion([.code(404), .statusClass(.serverError)]) }),
        ("-status:2xx", filter { $0.statuses = FilterCriterion([.statusClass(.success)], negated: true) }),
        ("source:nyt", RequestFilter(source: .nyt)),
        ("source:NYT,dogs", filter { $0.sources = FilterCriterion([.nyt, .dogs]) }),
        ("-source:marvel", filter { $0.sources = FilterCriterion([.marvel], negated: true) }),
        ("cache:stale", filter { $0.cache = FilterCriterion([.stale]) }),
        ("cache:offline", RequestFilter(decision: .offline)),
        ("cache:hit,fwd=request,miss,fwd", filter { $0.cache = FilterCriterion([.hit, .forwarded(.request), .forwarded(.miss), .forwarded(nil)]) }),
        ("method:get,head", filter { $0.methods = FilterCriterion(["GET", "HEAD"]) }),
        ("endpoint:rickandmorty.characters", filter { $0.endpoints = FilterCriterion(["rickandmorty.characters"]) }),
        // An app's exchanges are logged under their host and port, as the log shows them
        ("endpoint:127.0.0.1:18700,[::1]:3000", filter { $0.endpoints = FilterCriterion(["127.0.0.1:18700", "[::1]:3000"]) }),
        ("host:::1", filter { $0.hosts = FilterCriterion(["::1"]) }),
        ("slow:>500ms", filter { $0.duration = DurationBound(seconds: 0.5, isInclusive: false) }),
        ("slow:>=2s", filter { $0.duration = DurationBound(seconds: 2, isInclusive: true) }),
        ("slow:1.5S", filter { $0.duration = DurationBound(seconds: 1.5, isInclusive: true) }),
        ("-slow:>500ms", filter { $0.duration = DurationBound(seconds: 0.5, isInclusive: true, isUpper: true) }),
        ("-slow:>=500ms", filter { $0.duration = DurationBound(seconds: 0.5, isInclusive: false, isUpper: true) }),
        ("has:error", filter { $0.hasError = true }),
        ("-has:error has:body", filter { $0.hasError = false; $0.hasResponseBody = true }),
        ("spider man", RequestFilter(text: "spider man")),
        (#""status:500" "-1" "not found""#, RequestFilter(text: "status:500 -1 not found")),
        ("- x", RequestFilter(text: "- x")),
        ("status:5xx source:nyt cache:stale method:GET slow:>500ms has:error spider",
         filter {
             $0.statuses = FilterCriterion([.statusClass(.serverError)])
             $0.sources = FilterCriterion([.nyt])
             $0.cache = FilterCriterion([.stale])
             $0.methods = FilterCriterion(["GET"])
             $0.duration = DurationBound(seconds: 0.5, isInclusive: false)
             $0.hasError = true
             $0.text = "spider"
         }),
    ]

    @Test("Every key, negation, lists and free words parse to the filter they say", arguments: parseCases)
    func parses(text: String, expected: RequestFilter) throws {
        // Given a filter in the language
        // When it is parsed
        let parsed = try RequestFilter(parsing: text)
        // Then it is exactly the filter it says
        #expect(parsed == expected)
    }

    @Test("The canonical text parses back to the same filter", arguments: parseCases)
    func roundTrip(text: String, expected: RequestFilter) throws {
        // Given a parsed filter
        let parsed = try RequestFilter(parsing: text)
        // When it is written in the language and read again
        let again = try RequestFilter(parsing: parsed.inLanguage)
        // Then it is the same filter
        #expect(again == parsed, "\(parsed.inLanguage)")
    }

    @Test("The canonical text puts the keys in a fixed order and quotes what would read as a term")
    func canonicalText() throws {
        let parsed = try RequestFilter(parsing: #"has:error spider -slow:>=2s cache:fwd=miss,stale source:nyt "a:b" status:5xx,404"#)
        #expect(parsed.inLanguage == #"status:5xx,404 source:nyt cache:fwd=miss,stale -slow:>=2000ms has:error spider "a:b""#)
        #expect(RequestFilter().inLanguage.isEmpty)
        #expect(RequestFilter(minimumDuration: 0.25).inLanguage == "slow:>=250ms")
    }

    /// A bad filter, the start of its message, and the characters the error points at.
    static let mistakeCases: [(String, String, Range<Int>)] = [
        ("status:6xx", "status must be 1xx, 2xx, 3xx, 4xx, 5xx, error (no response), store (answered from Kiosk's store) or a code from 100 to 599", 7..<10),
        ("status:0xx", "status must be", 7..<10),
        ("status:700", "status must be", 7..<10),
        ("source:nyt status:4xx,oops", "status must be", 22..<26),
        ("status:4xx,,5xx", "status has an empty value between commas", 11..<12),
        ("status:4xx,", "status has an empty value between commas", 10..<11),
        ("source:bbc", "source must be one of nyt, marvel, rickandmorty, dogs", 7..<10),
        ("cache:warm", "cache must be hit, fwd, fwd=REASON (bypass, method, uri-miss, vary-miss, miss, request, stale, partial; ", 6..<10),
        ("cache:fwd=sideways", "cache must be", 6..<18),
        ("method:G3T", "method must be an HTTP method in letters", 7..<10),
        ("endpoint:a/b", "endpoint must be an endpoint name", 9..<12),
        ("slow:500", "slow must be a duration with its unit", 5..<8),
        ("slow:>-5ms", "slow must be a duration with its unit", 5..<10),
        ("slow:2days", "slow must be a duration with its unit", 5..<10),
        ("slow:1e3ms", "slow must be a duration with its unit", 5..<10),
        ("slow:>1ms,2ms", "slow takes one value", 9..<10),
        ("has:cookies", "has must be error", 4..<11),
        ("has:error,body", "has takes one value", 9..<10),
        ("has:error has:error", "has:error is given twice", 10..<19),
        ("status:", "status needs a value, such as status:5xx", 0..<7),
        ("a colour:red", "there is no key “colour”; the keys are status, source, cache, method, endpoint, host, slow, has", 2..<8),
        ("https://example.org", "there is no key “https”", 0..<5),
        (":x", "a key is missing before the colon", 0..<1),
        ("-spider", "only key:value terms can be negated; to search for the word, quote it: \"-spider\"", 0..<7),
        ("status:5xx source:nyt status:4xx", "status is given twice", 22..<32),
        (#"spider "man"#, "this quote is not closed", 7..<11),
        (#""man"kind"#, "a closing quote must be followed by a space", 5..<9),
        (#"spi"der"#, "a quote may only begin a word", 3..<4),
        ("é status:6xx", "status must be", 9..<12),
    ]

    @Test("A mistake is refused with a message saying what is accepted, pointing at the mistake", arguments: mistakeCases)
    func mistakes(text: String, message: String, at offsets: Range<Int>) throws {
        // Given a filter with a mistake
        // When it is parsed
        let error = try #require(throws: FilterSyntaxError.self) { try RequestFilter(parsing: text) }
        // Then the message says what is accepted, and the range is the mistake's
        #expect(error.message.hasPrefix(message), "\(error.message)")
        #expect(error.characterOffsets == offsets, "\(text)")
        #expect(error.input == text)
    }

    @Test("The pointer marks the mistake under it, in characters and in UTF-16 for JavaScript")
    func pointer() throws {
        // Given a filter with a mistake after a character that is two UTF-16 units
        let error = try #require(throws: FilterSyntaxError.self) { try RequestFilter(parsing: "😀 status:6xx\tsource:nyt") }
        // Then the carets sit under the mistake in a terminal, which gives the emoji two columns, the tab is shown as its
        // picture, and JavaScript's offsets count the emoji as two units
        #expect(error.pointer == "😀 status:6xx␉source:nyt\n          ^^^")
        #expect(error.characterOffsets == 9..<12)
        #expect(error.utf16Offsets == 10..<13)
        #expect(error.description.hasSuffix("(at character 10)"))
        // And a missing value is pointed at with at least one caret
        let missing = try #require(throws: FilterSyntaxError.self) { try RequestFilter(parsing: "status:4xx,") }
        #expect(missing.pointer.hasSuffix("\n          ^"))
        // And Chinese letters take two columns each, a letter with its accent one
        let wide = try #require(throws: FilterSyntaxError.self) { try RequestFilter(parsing: "日本 café status:7xx") }
        #expect(wide.pointer == "日本 café status:7xx\n" + String(repeating: " ", count: 4 + 1 + 4 + 1 + 7) + "^^^", "\(wide.pointer)")
        // And an escape character inside the mistake is shown, one column, as its picture: not acted on, not a blank
        let escape = try #require(throws: FilterSyntaxError.self) { try RequestFilter(parsing: "host:\u{1B}[31m (") }
        #expect(escape.pointer == "host:␛[31m (\n     ^^^^^", "\(escape.pointer)")
        // And one followed by a combining mark (which its picture could take) is pointed at all the same, without a trap
        let combined = try #require(throws: FilterSyntaxError.self) { try RequestFilter(parsing: "host:\u{1B}\u{301}x (") }
        #expect(combined.pointer.unicodeScalars.starts(with: "host:␛".unicodeScalars) && combined.pointer.contains("^"), "\(combined.pointer)")
    }

    @Test("A key given one by one is checked like a term; an empty value is refused")
    func applyOneKey() throws {
        var filter = RequestFilter()
        try filter.apply(.status, "404")
        #expect(filter.statuses == FilterCriterion([.code(404)]))
        let bad = try #require(throws: FilterSyntaxError.self) { try filter.apply(.cache, "warm") }
        #expect(bad.message.hasPrefix("cache must be") && bad.characterOffsets == 0..<4)
        let twice = try #require(throws: FilterSyntaxError.self) { try filter.apply(.status, "5xx") }
        #expect(twice.message.hasPrefix("status is given twice"))
        #expect(throws: FilterSyntaxError.self) { try filter.apply(.method, "") }
    }

    @Test("Single-value flags and a parsed filter combine, and a key set by both is found")
    func combining() throws {
        // Given the older single-value options and a filter in the language
        let options = RequestFilter(text: "rick", source: .rickandmorty, limit: 7)
        let parsed = try RequestFilter(parsing: "status:5xx morty")
        // When they are combined
        #expect(options.sharedKey(with: parsed) == nil)
        let combined = options.adding(parsed)
        // Then both criteria and both texts apply, with the options' limit
        #expect(combined.sources == FilterCriterion([.rickandmorty]))
        #expect(combined.statuses == FilterCriterion([.statusClass(.serverError)]))
        #expect(combined.text == "rick morty")
        #expect(combined.limit == 7)
        // And a key both set is named
        #expect(options.sharedKey(with: try RequestFilter(parsing: "-source:nyt")) == .source)
        #expect(RequestFilter(minimumDuration: 1).sharedKey(with: try RequestFilter(parsing: "slow:>2s")) == .slow)
    }

    @Test("The help lists every key with an example that parses")
    func help() throws {
        for key in FilterKey.allCases {
            #expect(RequestFilter.languageHelp.contains { $0.example == key.example })
            _ = try RequestFilter(parsing: key.example)
        }
        for entry in RequestFilter.languageHelp { _ = try RequestFilter(parsing: entry.example) }
    }
}
