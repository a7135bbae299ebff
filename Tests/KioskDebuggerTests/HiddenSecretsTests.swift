import Foundation
import KioskCore
import Testing
@testable import KioskDebugger

@Suite("A paused body's hidden secrets put back where the edit left them")
struct HiddenSecretsTests {
    @Test("A paused request's query sent back as shown goes as the app wrote it; one item changed, the query is written from the items")
    func untouchedQueryKeptAsWritten() throws {
        // Given an app's request whose query has a bare flag, escapes and a plus, and its items as the editor shows them
        let written = "http://app.test/echo?flag&a=1&b=%2F%26x&c=a+b&d=%3D"
        let request = HTTPRequest(url: URL(string: written)!, endpoint: "app.test")
        let shown = (URLComponents(string: written)?.queryItems ?? []).map { (name: $0.name, value: $0.value ?? "") }
        // When it is sent back with its query as shown (another part edited: a header)
        let unchanged = try BreakpointTransport.edited(request, query: shown, headers: [(name: "X-Edited", value: "1")], shownAs: [:])
        // Then the query is the app's, byte for byte
        #expect(unchanged.url.absoluteString == written)
        // And with one item changed, the query is the items written again
        let changed = try BreakpointTransport.edited(request, query: shown.map { $0.name == "a" ? (name: "a", value: "2") : $0 }, headers: [],
                                            shownAs: [:])
        #expect(changed.url.query?.contains("a=2") == true && changed.url.absoluteString != written)
    }

    @Test("An answer's item deleted in the editor moves the rest: a hidden secret is never put back from another item's place")
    func deletedItemKeepsSecretsApart() throws {
        // Given an answer of two items, each with its token, shown hidden
        let original = Data(#"[{"id":1,"token":"AAAA-secret-1"},{"id":2,"token":"BBBB-secret-2"}]"#.utf8)
        let shown = #"[{"id":1,"token":"<redacted>"},{"id":2,"token":"<redacted>"}]"#
        // When the first item is deleted
        let edited = #"[{"id":2,"token":"<redacted>"}]"#
        // Then the second keeps its own token, never the first's
        let restored = Breakpoints.restoringHiddenSecrets(in: edited, shown: shown, original: original)
        #expect(restored.map { String(decoding: $0, as: UTF8.self) } == #"[{"id":2,"token":"BBBB-secret-2"}]"#)
        // And items shown alike, one deleted, cannot be told apart: refused rather than guessed
        let alike = Data(#"[{"token":"AAAA-secret-1"},{"token":"BBBB-secret-2"}]"#.utf8)
        #expect(Breakpoints.restoringHiddenSecrets(in: #"[{"token":"<redacted>"}]"#, shown: #"[{"token":"<redacted>"},{"token":"<redacted>"}]"#,
                                                   original: alike) == nil)
    }
}
