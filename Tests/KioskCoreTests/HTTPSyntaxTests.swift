@testable import KioskCore
import Testing

@Suite("RFC 9110 syntax")
struct HTTPSyntaxTests {
    @Test("Tokens are letters, digits and tchar punctuation only: no spaces, separators, controls or non-ASCII")
    func tokens() {
        // Given methods and field names, good and bad
        // When they are checked
        // Then exactly the RFC 9110 tokens pass
        for good in ["GET", "PATCH", "*", "X-Kiosk-Mock", "Content-Type", "!#$%&'*+-.^_`|~09azAZ"] {
            #expect(HTTPSyntax.isToken(good), "\(good)")
        }
        for bad in ["", "GET\r\nX-Evil: 1", "GET /x", "X-Bad Name", "Name:", "X(1)", "a\"b", "a,b", "X-Émoji", "\u{0}", "A\u{7F}", "tab\there"] {
            #expect(!HTTPSyntax.isToken(bad), "\(bad.debugDescription)")
        }
    }

    @Test("A URL path starts with / and holds path characters and complete %XX escapes only")
    func absolutePaths() {
        // Given paths, good and bad, when they are checked, then only what a URL can hold as it is passes
        for good in ["/", "/v1/items", "/a/%C3%A9/b;c=d", "/~user/@me:1/!$&'()*+,=", "//double", "/%2f%2F"] {
            #expect(HTTPSyntax.isAbsolutePath(good), "\(good)")
        }
        for bad in ["", "v1/items", "/a b", "/a?b", "/a#b", "/%", "/%2", "/%zz", "/café", "/a\r\nX: 1", "/[x]", "/a\\b", "/\"q\""] {
            #expect(!HTTPSyntax.isAbsolutePath(bad), "\(bad.debugDescription)")
        }
    }

    @Test("Field values take visible ASCII, spaces, tabs and UTF-8, but no CR, LF, NUL, DEL or other control")
    func fieldValues() {
        // Given header values, good and bad
        // When they are checked
        // Then controls are refused, except the tab
        for good in ["", "application/json; charset=utf-8", "a\tb", "café ☕", " padded ", "W/\"etag\""] {
            #expect(HTTPSyntax.isFieldValue(good), "\(good.debugDescription)")
        }
        for bad in ["a\r\nSet-Cookie: x", "a\rb", "a\nb", "nul\u{0}", "bell\u{7}", "esc\u{1B}[31m", "del\u{7F}"] {
            #expect(!HTTPSyntax.isFieldValue(bad), "\(bad.debugDescription)")
        }
    }
}
