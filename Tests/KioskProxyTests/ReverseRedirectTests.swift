import Foundation
@testable import KioskProxy
import Testing

@Suite("A reverse listener's redirects")
struct ReverseRedirectTests {
    @Test("A Location under the upstream base, whole, scheme-relative or a path, is said under the listener; others are kept",
          arguments: [
            ("http://up.test:8080/base/next?a=1#f", "http://127.0.0.1:9000/next?a=1#f"),
            ("HTTP://UP.test:8080/base", "http://127.0.0.1:9000/"),
            ("//up.test:8080/base/x", "http://127.0.0.1:9000/x"),
            ("/base/rel", "/rel"),
            ("/base", "/"),
            ("/basement", "/basement"),
            ("http://up.test:8080/basement", "http://up.test:8080/basement"),
            ("http://up.test:8080/other", "http://up.test:8080/other"),
            ("http://up.test:8081/base/x", "http://up.test:8081/base/x"),
            ("https://up.test:8080/base/x", "https://up.test:8080/base/x"),
            ("http://elsewhere.test/base/x", "http://elsewhere.test/base/x"),
            ("relative/path", "relative/path"),
            ("/other", "/other"),
          ])
    func underBase(location: String, expected: String) throws {
        let base = try #require(URL(string: "http://up.test:8080/base/"))
        #expect(ProxyMessages.relocated(location, upstream: base, listener: "http://127.0.0.1:9000") == expected)
    }

    @Test("With the upstream at its root, every path is its own and a whole URL of it is said under the listener")
    func atRoot() throws {
        let base = try #require(URL(string: "http://up.test"))
        #expect(ProxyMessages.relocated("/x/y", upstream: base, listener: "http://127.0.0.1:9000") == "/x/y")
        #expect(ProxyMessages.relocated("http://up.test:80/x?q", upstream: base, listener: "http://127.0.0.1:9000") == "http://127.0.0.1:9000/x?q")
    }
}
