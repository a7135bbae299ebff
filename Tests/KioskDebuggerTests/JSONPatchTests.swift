import Foundation
import Testing
import KioskCore
@testable import KioskDebugger

@Suite("JSON Patch (RFC 6902) and JSON Pointer (RFC 6901)")
struct JSONPatchTests {
    /// `patch` applied to `document`.
    private func apply(_ patch: String, to document: String) throws -> OrderedJSON {
        try JSONPatch(parsing: patch).apply(to: try OrderedJSON.parse(document))
    }

    /// RFC 6902 appendix A, the examples that succeed: (section, document, patch, expected result).
    static let appendixSuccesses: [(String, String, String, String)] = [
        ("A.1 adding an object member", #"{"foo": "bar"}"#, #"[{"op": "add", "path": "/baz", "value": "qux"}]"#,
         #"{"baz": "qux", "foo": "bar"}"#),
        ("A.2 adding an array element", #"{"foo": ["bar", "baz"]}"#, #"[{"op": "add", "path": "/foo/1", "value": "qux"}]"#,
         #"{"foo": ["bar", "qux", "baz"]}"#),
        ("A.3 removing an object member", #"{"baz": "qux", "foo": "bar"}"#, #"[{"op": "remove", "path": "/baz"}]"#,
         #"{"foo": "bar"}"#),
        ("A.4 removing an array element", #"{"foo": ["bar", "qux", "baz"]}"#, #"[{"op": "remove", "path": "/foo/1"}]"#,
         #"{"foo": ["bar", "baz"]}"#),
        ("A.5 replacing a value", #"{"baz": "qux", "foo": "bar"}"#, #"[{"op": "replace", "path": "/baz", "value": "boo"}]"#,
         #"{"baz": "boo", "foo": "bar"}"#),
        ("A.6 moving a value", #"{"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}}"#,
         #"[{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}]"#,
         #"{"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}}"#),
        ("A.7 moving an array element", #"{"foo": ["all", "grass", "cows", "eat"]}"#,
         #"[{"op": "move", "from": "/foo/1", "path": "/foo/3"}]"#, #"{"foo": ["all", "cows", "eat", "grass"]}"#),
        ("A.8 testing a value: success", #"{"baz": "qux", "foo": ["a", 2, "c"]}"#,
         #"[{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}]"#,
         #"{"baz": "qux", "foo": ["a", 2, "c"]}"#),
        ("A.10 adding a nested member object", #"{"foo": "bar"}"#, #"[{"op": "add", "path": "/child", "value": {"grandchild": {}}}]"#,
         #"{"foo": "bar", "child": {"grandchild": {}}}"#),
        ("A.11 ignoring unrecognized elements", #"{"foo": "bar"}"#, #"[{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}]"#,
         #"{"foo": "bar", "baz": "qux"}"#),
        ("A.14 ~ escape ordering", #"{"/": 9, "~1": 10}"#, #"[{"op": "test", "path": "/~01", "value": 10}]"#,
         #"{"/": 9, "~1": 10}"#),
        ("A.16 adding an array value", #"{"foo": ["bar"]}"#, #"[{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}]"#,
         #"{"foo": ["bar", ["abc", "def"]]}"#),
    ]

    @Test("Every successful example of RFC 6902's appendix A gives the result the RFC gives", arguments: appendixSuccesses)
    func appendixSucceeds(_ example: (String, String, String, String)) throws {
        // Given the example's document and patch
        let (section, document, patch, expected) = example
        // When the patch is applied
        let result = try apply(patch, to: document)
        // Then the result equals the RFC's (objects compared whatever their members' order)
        #expect(OrderedJSON.areEqual(result, try OrderedJSON.parse(expected)), "\(section): \(result.rendered(indent: nil))")
    }

    /// RFC 6902 appendix A, the examples that are errors: (section, document, patch, words the error holds).
    static let appendixErrors: [(String, String, String, String)] = [
        ("A.9 testing a value: error", #"{"baz": "qux"}"#, #"[{"op": "test", "path": "/baz", "value": "bar"}]"#,
         #"operation 1 (test /baz): the value at /baz is "qux", not "bar""#),
        ("A.12 adding to a nonexistent target", #"{"foo": "bar"}"#, #"[{"op": "add", "path": "/baz/bat", "value": "qux"}]"#,
         "operation 1 (add /baz/bat): the path /baz does not exist"),
        ("A.13 invalid JSON Patch document", #"{"foo": "bar"}"#, #"[{"op": "add", "path": "/baz", "value": "qux", "op": "remove"}]"#,
         "operation 1 (remove /baz): “op” is given twice"),
        ("A.15 comparing strings and numbers", #"{"/": 9, "~1": 10}"#, #"[{"op": "test", "path": "/~01", "value": "10"}]"#,
         #"the value at /~01 is 10, not "10""#),
    ]

    @Test("Every error example of RFC 6902's appendix A is an error naming the operation and why", arguments: appendixErrors)
    func appendixFails(_ example: (String, String, String, String)) throws {
        // Given the example's document and patch
        let (section, document, patch, words) = example
        // When the patch is applied, then it fails, saying which operation and why
        do {
            let result = try apply(patch, to: document)
            Issue.record("\(section) applied: \(result.rendered(indent: nil))")
        } catch let error as JSONPatch.Error {
            #expect(error.index == 0, "\(section)")
            #expect(error.description.contains(words), "\(section): \(error.description)")
        }
    }

    @Test("A patched document keeps its members in their order, new members last, and untouched numbers as written")
    func keepsOrder() throws {
        // Given an upstream-like body with keys out of alphabetical order and numbers Foundation would rewrite
        let document = #"{"info":{"count":826,"pages":42,"ratio":1.10},"results":[{"name":"Rick","id":1}],"zeta":true}"#
        // When members are replaced, added, removed and moved
        let result = try apply(#"""
            [{"op": "replace", "path": "/results/0/name", "value": "Rule Rick"},
             {"op": "add", "path": "/info/note", "value": "added"},
             {"op": "remove", "path": "/info/pages"},
             {"op": "copy", "from": "/info/count", "path": "/total"}]
            """#, to: document)
        // Then every member stays where it was, the new ones go last, and 1.10 is still 1.10
        #expect(result.rendered(indent: nil)
                == #"{"info":{"count":826,"ratio":1.10,"note":"added"},"results":[{"name":"Rule Rick","id":1}],"zeta":true,"total":826}"#)
    }

    @Test("An empty path replaces, adds or tests the whole document; removing it is refused when the patch is read")
    func wholeDocument() throws {
        #expect(try apply(#"[{"op": "replace", "path": "", "value": {"b": 1, "a": 2}}]"#, to: "[1]").rendered(indent: nil)
                == #"{"b":1,"a":2}"#)
        #expect(try apply(#"[{"op": "add", "path": "", "value": [3]}]"#, to: "{}") == .array([.number("3")]))
        #expect(try apply(#"[{"op": "test", "path": "", "value": {"a": 1.0, "b": [1]}}]"#, to: #"{"b": [1], "a": 1}"#)
                == (try OrderedJSON.parse(#"{"b": [1], "a": 1}"#)))
        #expect(throws: JSONPatch.Error.self) { try JSONPatch(parsing: #"[{"op": "remove", "path": ""}]"#) }
    }

    @Test("RFC 6901's pointer examples each reach the value the RFC says")
    func pointerExamples() throws {
        // Given RFC 6901 section 5's document
        let document = #"{"foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\j": 5, "k\"l": 6, " ": 7, "m~n": 8}"#
        let cases: [(String, String)] = [("/foo", #"["bar", "baz"]"#), ("/foo/0", #""bar""#), ("/", "0"), ("/a~1b", "1"),
                                         ("/c%d", "2"), ("/e^f", "3"), ("/g|h", "4"), (#"/i\j"#, "5"), (#"/k"l"#, "6"),
                                         ("/ ", "7"), ("/m~0n", "8")]
        for (pointer, value) in cases {
            // When each pointer is tested against its value, then the test passes
            let patch = JSONPatch(operations: [.test(path: try JSONPointer(pointer), value: try OrderedJSON.parse(value))])
            #expect(throws: Never.self, "\(pointer)") { try patch.apply(to: try OrderedJSON.parse(document)) }
        }
        // And a pointer escapes back to its text
        #expect(try JSONPointer("/a~1b/m~0n/-").description == "/a~1b/m~0n/-")
        #expect(try JSONPointer("").tokens.isEmpty)
    }

    @Test("A malformed patch is refused when it is read, with the operation's number and what is wrong")
    func invalidPatches() {
        let cases: [(String, String)] = [
            ("{", "The patch is not JSON"),
            (#"{"op": "add"}"#, "A JSON Patch is an array of operations"),
            (#"[{"op": "replace", "path": "/a", "value": 1}, 3]"#, "operation 2: an operation is an object"),
            (#"[{"path": "/a"}]"#, "operation 1: “op” is missing"),
            (#"[{"op": "frobnicate", "path": "/a"}]"#, "“frobnicate” is not an operation"),
            (#"[{"op": "add", "value": 1}]"#, "operation 1 (add): “path” is missing"),
            (#"[{"op": "add", "path": "a", "value": 1}]"#, "it must be empty or start with “/”"),
            (#"[{"op": "add", "path": "/a~2", "value": 1}]"#, "“~” must be followed by 0 or 1"),
            (#"[{"op": "replace", "path": "/a"}]"#, "operation 1 (replace /a): “value” is missing"),
            (#"[{"op": "move", "path": "/a"}]"#, "“from” is missing"),
            (#"[{"op": "move", "from": "/a", "path": "/a/b"}]"#, "cannot be moved into itself"),
            (#"[{"op": 7, "path": "/a"}]"#, "“op” must be a string"),
            (#"[{"op": "test", "path": 7, "value": 1}]"#, "“path” must be a string"),
        ]
        for (patch, words) in cases {
            do {
                _ = try JSONPatch(parsing: patch)
                Issue.record("read an invalid patch: \(patch)")
            } catch {
                #expect(error.description.contains(words), "\(patch): \(error.description)")
            }
        }
    }

    @Test("Operations that cannot apply fail the whole patch with the reason, leaving the document as it was")
    func applyErrors() throws {
        let document = try OrderedJSON.parse(#"{"list": [1, 2], "text": "x"}"#)
        let cases: [(String, String)] = [
            (#"[{"op": "remove", "path": "/missing"}]"#, "the path /missing does not exist"),
            (#"[{"op": "replace", "path": "/list/2", "value": 0}]"#, "the path /list/2 does not exist"),
            (#"[{"op": "add", "path": "/list/3", "value": 0}]"#, "index 3 is past the end of the array at /list (2 elements)"),
            (#"[{"op": "add", "path": "/list/01", "value": 0}]"#, "“01” is not an array index"),
            (#"[{"op": "add", "path": "/text/a", "value": 0}]"#, "/text is a string, so nothing can be added inside it"),
            (#"[{"op": "remove", "path": "/list/-"}]"#, "names the end of an array"),
            (#"[{"op": "copy", "from": "/nope", "path": "/a"}]"#, "the path /nope does not exist"),
            (#"[{"op": "add", "path": "/new", "value": 1}, {"op": "test", "path": "/new", "value": 2}]"#,
             "operation 2 (test /new): the value at /new is 1, not 2"),
        ]
        for (patch, words) in cases {
            let error = #expect(throws: JSONPatch.Error.self, "\(patch)") { try JSONPatch(parsing: patch).apply(to: document) }
            #expect(error?.description.contains(words) == true, "\(patch): \(String(describing: error))")
        }
    }

    @Test("test compares numbers by value and objects whatever their order, but never a string with a number")
    func equality() throws {
        #expect(OrderedJSON.areEqual(.number("1.0"), .number("1")))
        #expect(OrderedJSON.areEqual(.number("1e2"), .number("100")))
        #expect(!OrderedJSON.areEqual(.number("1.5"), .number("1")))
        #expect(!OrderedJSON.areEqual(.number("10"), .string("10")))
        let object = try OrderedJSON.parse(#"{"a":1,"b":[true,null]}"#), reordered = try OrderedJSON.parse(#"{"b":[true,null],"a":1}"#)
        #expect(OrderedJSON.areEqual(object, reordered))
        let array = try OrderedJSON.parse("[1,2]"), reversed = try OrderedJSON.parse("[2,1]")
        #expect(!OrderedJSON.areEqual(array, reversed))
        let small = try OrderedJSON.parse(#"{"a":1}"#), larger = try OrderedJSON.parse(#"{"a":1,"b":2}"#)
        #expect(!OrderedJSON.areEqual(small, larger))
    }
}
