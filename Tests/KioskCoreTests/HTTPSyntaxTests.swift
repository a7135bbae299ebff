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

    @Test("End to end: the hop-by-hop fields, those Connection names and every Proxy-* one go, in any case; the rest stay, in order")
    func endToEnd() {
        // Given an answer's fields: hop-by-hop ones in odd cases, Connection naming two more, and look-alikes of them
        let fields: [(name: String, value: String)] = [
            ("Content-Type", "application/json"), ("CONNECTION", "close, X-Hop ,  x-other"), ("Keep-Alive", "timeout=5"),
            ("te", "trailers"), ("Trailer", "X-Sum"), ("Transfer-Encoding", "chunked"), ("Upgrade", "websocket"),
            ("Proxy-Authorization", "Basic a2lvc2s="), ("proxy-connection", "keep-alive"), ("PROXY-Thing", "1"), ("Proxy-", "2"),
            ("x-hop", "named"), ("X-Other", "named"), ("Tea", "kept"), ("Proxying", "kept"), ("X-Proxy-Id", "kept"),
            ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("Connections", "kept"), ("Upgrades", "kept"),
        ]
        // When they are taken end to end
        let kept = HTTPSyntax.endToEnd(fields)
        // Then exactly the end-to-end ones stay, in their order, repeats and all
        #expect(kept.map { "\($0.name): \($0.value)" } == [
            "Content-Type: application/json", "Tea: kept", "Proxying: kept", "X-Proxy-Id: kept", "Set-Cookie: a=1", "Set-Cookie: b=2",
            "Connections: kept", "Upgrades: kept",
        ])
        // And with no Connection field, nothing beyond the fixed list goes
        let plain: [(name: String, value: String)] = [("X-Hop", "1"), ("Keep-alive", "x")]
        #expect(HTTPSyntax.endToEnd(plain).map(\.name) == ["X-Hop"])
    }
}
