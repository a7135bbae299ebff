import Foundation
import KioskCore
import Testing
@testable import KioskDebugger

@Suite("Exchange diff")
struct ExchangeDiffTests {
    static func record(_ id: Int64, body: String?, headers: [(String, String)] = [], status: Int = 200) -> RequestRecord {
        RequestRecord(id: id, startedAt: Date(timeIntervalSinceReferenceDate: 760_000_000), source: .rickandmorty,
                      endpoint: "rickandmorty.characters", method: "GET", url: "https://example.test/api/character", status: status,
                      responseHeaders: headers.map { RequestRecord.HeaderField(name: $0.0, value: $0.1) },
                      responseBody: body.map { CapturedBody(data: Data($0.utf8), originalSize: $0.utf8.count) },
                      timings: RequestTimings(total: 0.1), decision: .network)
    }

    static func changes(_ old: String, _ new: String) -> [ExchangeDiff.Change] {
        guard case .json(let changes, _) = ExchangeDiff(before: record(1, body: old), after: record(2, body: new)).body else {
            Issue.record("expected a JSON comparison")
            return []
        }
        return changes
    }

    @Test("a JSON body compares path by path: objects by key, arrays by index, with old → new values")
    func jsonPaths() throws {
        // Given two answers where a name changed, a key was added and another removed, and an array grew
        let old = #"{"info": {"count": 2, "next": "p2"}, "results": [{"id": 1, "name": "Rick"}], "gone": true}"#
        let new = #"{"info": {"count": 3, "next": "p2", "prev": null}, "results": [{"id": 1, "name": "Rick Sanchez"}, {"id": 2}]}"#

        // When they are compared
        let changes = Self.changes(old, new)

        // Then each change is named by its path, in the newer answer's order, removals last
        #expect(changes == [
            .changed(path: "$.info.count", old: .number("2"), new: .number("3")),
            .added(path: "$.info.prev", value: .null),
            .changed(path: "$.results[0].name", old: .string("Rick"), new: .string("Rick Sanchez")),
            .added(path: "$.results[1]", value: .object([(key: "id", value: .number("2"))])),
            .removed(path: "$.gone", value: .bool(true)),
        ])
    }

    @Test("equal JSON written differently has no changes; numbers compare by value; a changed kind is a change")
    func equivalence() {
        #expect(Self.changes(#"{"a": 1.0, "b": [1, 2]}"#, #"{ "a" : 1, "b":[1,2] }"#).isEmpty)
        #expect(Self.changes(#"{"a": [1]}"#, #"{"a": {"0": 1}}"#)
            == [.changed(path: "$.a", old: .array([.number("1")]), new: .object([(key: "0", value: .number("1"))]))])
    }

    @Test("keys that are not identifiers are quoted in the path")
    func quotedKeys() {
        #expect(Self.changes(#"{"a b": 1, "1x": 1}"#, #"{"a b": 2, "1x": 2}"#).map(\.path) == [#"$["a b"]"#, #"$["1x"]"#])
    }

    @Test("identical bytes are identical; bodies not both JSON compare by line around their common head and tail")
    func text() {
        #expect(ExchangeDiff(before: Self.record(1, body: "same"), after: Self.record(2, body: "same")).body == .identical)
        let diff = ExchangeDiff(before: Self.record(1, body: "<html>\n<p>old</p>\n</html>"), after: Self.record(2, body: "<html>\n<p>new</p>\n<p>more</p>\n</html>"))
        #expect(diff.body == .text([.removed("<p>old</p>"), .added("<p>new</p>"), .added("<p>more</p>")], commonPrefix: 1, commonSuffix: 1, truncated: false))
    }

    @Test("headers compare by name, ignoring case, repeated fields joined; the newer order first, then removed ones")
    func headers() {
        let diff = ExchangeDiff(before: Self.record(1, body: nil, headers: [("ETag", "\"1\""), ("Age", "3"), ("Vary", "Accept")]),
                                after: Self.record(2, body: nil, headers: [("etag", "\"2\""), ("Vary", "Accept"), ("X-New", "a"), ("x-new", "b")]))
        #expect(diff.responseHeaders == [
            .init(name: "etag", old: "\"1\"", new: "\"2\""),
            .init(name: "X-New", old: nil, new: "a, b"),
            .init(name: "Age", old: "3", new: nil),
        ])
    }

    @Test("the list of changes stops at its limit and says so")
    func limit() {
        let old = "[" + (0..<50).map { String($0) }.joined(separator: ",") + "]"
        let new = "[" + (0..<50).map { String($0 + 1) }.joined(separator: ",") + "]"
        guard case .json(let changes, let truncated) = ExchangeDiff(before: Self.record(1, body: old), after: Self.record(2, body: new), limit: 10).body else {
            Issue.record("expected JSON")
            return
        }
        #expect(changes.count == 10)
        #expect(truncated)
    }
}
