import Foundation
import Testing
@testable import KioskCore

@Suite("Order-preserving JSON")
struct OrderedJSONTests {
    @Test("Keys keep their order and numbers their exact text through a parse and render")
    func roundTrip() throws {
        // Given a document with keys out of alphabetical order and numbers Foundation would normalise
        let text = #"{"zeta":1.10,"alpha":[true,false,null,-0,2e10],"mid":{"b":"x\"y\\z\u00e9\ud83d\ude00","a":{}}}"#
        // When it is parsed and rendered compactly
        let json = try OrderedJSON.parse(text)
        // Then nothing about it changed
        #expect(json.rendered(indent: nil) == #"{"zeta":1.10,"alpha":[true,false,null,-0,2e10],"mid":{"b":"x\"y\\zé😀","a":{}}}"#)
        guard case .object(let members) = json else { Issue.record("not an object"); return }
        #expect(members.map(\.key) == ["zeta", "alpha", "mid"])
        #expect(members[0].value == .number("1.10"))
        // And the indented rendering parses back to the same document
        #expect(try OrderedJSON.parse(json.rendered()) == json)
    }

    @Test("A string's bidi controls and line separators are written escaped, so a value never shows reversed, and read back the same")
    func invisibleCharactersEscaped() throws {
        // Given a value with a right-to-left override, an isolate, a mark, a line separator, BEL and ESC among its text
        let value = "\u{202E}\u{7}\u{1B}[31mred\u{2066}a\u{200F}b\u{2028}c é"
        // When it is written as JSON
        let quoted = OrderedJSON.quoted(value)
        // Then each invisible character is a \u escape, and the rest as it was
        #expect(quoted == #""\u202e\u0007\u001b[31mred\u2066a\u200fb\u2028c é""#)
        // And the JSON reads back as the same value
        #expect(try JSONDecoder().decode(String.self, from: Data(quoted.utf8)) == value)
    }

    @Test("Invalid documents fail with the JSON path and offset where parsing stopped")
    func errors() {
        let cases: [(String, String)] = [
            (#"{"results":[{"name":"Rick"},{"name":}]}"#, "$.results[1].name"),
            (#"{"a":1,}"#, "$"),
            (#"[1,2"#, "$"),
            (#"{"a":01}"#, "$"),
            (#"{"a":"\x"}"#, "$.a"),
            ("", "$"),
            ("{} extra", "$"),
        ]
        for (text, path) in cases {
            do {
                _ = try OrderedJSON.parse(text)
                Issue.record("parsed invalid JSON: \(text)")
            } catch let error as OrderedJSON.ParseError {
                #expect(error.path == path, "\(text): \(error)")
                #expect(error.description.contains("Invalid JSON at \(path)"))
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
    }

    @Test("A check finds the same fault at the same place as a parse, and captures the value asked for")
    func checkMatchesParse() throws {
        // Given invalid documents, including one with escapes and non-ASCII text before its fault
        let invalid = [#"{"results":[{"name":"Rick"},{"name":}]}"#, #"{"a":"\u00e9\n","b":[1,2"#, #"{"a":"\x"}"#, "{} extra"]
        for text in invalid {
            // When each is checked and parsed
            let checked = #expect(throws: OrderedJSON.ParseError.self) { try OrderedJSON.check(Data(text.utf8)) }
            let parsed = #expect(throws: OrderedJSON.ParseError.self) { try OrderedJSON.parse(text) }
            // Then both name the same place and reason
            #expect(checked == parsed, "\(text)")
        }
        // And a valid document's captured value is built whole, the rest only read
        let creator = try OrderedJSON.check(Data(#"{"log":{"entries":[{"x":"é"}],"creator":{"name":"Polly.JS"}}}"#.utf8),
                                            capturing: ["log", "creator"])
        #expect(creator == .object([(key: "name", value: .string("Polly.JS"))]))
    }

    @Test("A streamed array's elements come one by one in order and are not kept; an error they throw ends the parse")
    func streaming() throws {
        // Given a document with an array under log.entries and one elsewhere
        let text = #"{"log":{"version":"1.2","entries":[{"n":1},{"n":2},{"n":3}],"pages":[{"id":"p"}]}}"#
        // When it is parsed streaming log.entries
        var seen: [(Int, OrderedJSON)] = []
        let root = try OrderedJSON.parse(Data(text.utf8), streaming: ["log", "entries"]) { seen.append(($0, $1)) }
        // Then each entry came with its index, the streamed array is empty and the other is whole
        #expect(seen.map(\.0) == [0, 1, 2])
        #expect(seen.map(\.1) == [1, 2, 3].map { .object([(key: "n", value: .number(String($0)))]) })
        #expect(root["log"]?["entries"] == .array([]))
        #expect(root["log"]?["pages"] == .array([.object([(key: "id", value: .string("p"))])]))
        // And an error thrown for an element ends the parse with that error
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try OrderedJSON.parse(Data(text.utf8), streaming: ["log", "entries"]) { index, _ in if index == 1 { throw Stop() } }
        }
    }

    @Test("Very deep nesting is refused instead of exhausting the stack")
    func depth() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: OrderedJSON.ParseError.self) { try OrderedJSON.parse(deep) }
    }

    @Test("Number syntax is checked exactly")
    func numbers() {
        for good in ["0", "-0", "12", "1.5", "1e3", "-1.25E-7"] { #expect(OrderedJSON.isNumber(good), "\(good)") }
        for bad in ["", "-", "01", "1.", ".5", "1e", "0x10", "NaN", "1 "] { #expect(!OrderedJSON.isNumber(bad), "\(bad)") }
    }

    @Test("Header fields written as name–value pairs read back in order with repeats and escapes; anything else is refused")
    func namePairs() throws {
        // Given fields with a repeat, quotes, a backslash, a control character and non-ASCII text
        let fields: [(name: String, value: String)] = [("Set-Cookie", "a=1"), ("Set-Cookie", "b=\"2\""), ("X-Path", "C:\\dir\tend"),
                                                       ("X-Name", "café ☕")]
        // When they are written and read back
        let text = OrderedJSON.pairsText(fields)
        let read = try #require(OrderedJSON.pairs(fromJSON: text))
        // Then they are the same fields, in order
        #expect(read.map(\.name) == fields.map(\.name) && read.map(\.value) == fields.map(\.value))
        #expect(OrderedJSON.pairsText([]) == "[]" && OrderedJSON.pairs(fromJSON: "[]")?.isEmpty == true)
        // And text that is not an array of two-string arrays is refused
        for bad in ["", "{}", "[[\"a\"]]", "[[\"a\",1]]", "[[\"a\",\"b\",\"c\"]]", "[\"a\"]"] {
            #expect(OrderedJSON.pairs(fromJSON: bad) == nil, "\(bad)")
        }
    }
}
