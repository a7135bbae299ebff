import Foundation
import KioskCore
import Testing
@testable import KioskDebugger

@Suite("A paused body's hidden secrets put back where the edit left them")
struct HiddenSecretsTests {
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
