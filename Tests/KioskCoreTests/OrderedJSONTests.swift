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
}
