import Foundation
@testable import KioskProxy
import NIOHTTP1
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

    @Test("An upstream at an IPv6 address: its whole URLs are said under the listener, and the app's Origin and Referer name it in brackets")
    func ipv6Upstream() throws {
        let base = try #require(URL(string: "http://[::1]:47105/app"))
        let listener = "http://127.0.0.1:9000"
        // Given its redirect and its Link, as the upstream writes them
        #expect(ProxyMessages.relocated("http://[::1]:47105/app/a", upstream: base, listener: listener) == "http://127.0.0.1:9000/a")
        #expect(ProxyMessages.relocatedLink("<http://[::1]:47105/app/b>; rel=next", upstream: base, listener: listener)
                == "<http://127.0.0.1:9000/b>; rel=next")
        // And the app's Origin and Referer, as its page at the listener sends them
        var fields: [(name: String, value: String)] = [("Origin", listener), ("Referer", listener + "/page")]
        ProxyMessages.unrelocate(&fields, upstream: base, listener: listener)
        // Then the upstream reads its own origin, a URL (http://::1:47105 is none)
        #expect(fields.map(\.value) == ["http://[::1]:47105", "http://[::1]:47105/app/page"])
    }

    @Test("With the upstream at its root, every path is its own and a whole URL of it is said under the listener")
    func atRoot() throws {
        let base = try #require(URL(string: "http://up.test"))
        #expect(ProxyMessages.relocated("/x/y", upstream: base, listener: "http://127.0.0.1:9000") == "/x/y")
        #expect(ProxyMessages.relocated("http://up.test:80/x?q", upstream: base, listener: "http://127.0.0.1:9000") == "http://127.0.0.1:9000/x?q")
    }
}

@Suite("A reverse listener's cookies and refreshes")
struct ReverseCookieTests {
    @Test("A cookie's Path under the upstream base is said under the listener, a Domain of the upstream's host goes; the rest as it came",
          arguments: [
            ("sid=abc; Path=/app; HttpOnly", "sid=abc; Path=/; HttpOnly"),
            ("sid=abc; path=/app/api/v1; Secure", "sid=abc; path=/api/v1; Secure"),
            ("sid=abc;Path=/app/", "sid=abc; Path=/"),
            ("dom=1; Domain=Up.Test; Path=/app/x", "dom=1; Path=/x"),
            ("dom=1; Domain=.up.test", "dom=1"),
            ("other=1; Domain=elsewhere.test; Path=/application", "other=1; Domain=elsewhere.test; Path=/application"),
            ("root=1; Path=/", "root=1; Path=/"),
            ("plain=1", "plain=1"),
            ("odd=a=b; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Path=/app", "odd=a=b; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Path=/"),
          ])
    func cookie(value: String, expected: String) throws {
        let base = try #require(URL(string: "http://up.test:8080/app/"))
        #expect(ProxyMessages.relocatedCookie(value, upstream: base) == expected)
    }

    @Test("A Refresh's URL under the upstream base is said under the listener, quoted or not; another is kept")
    func refresh() throws {
        let base = try #require(URL(string: "http://up.test:8080/app"))
        let listener = "http://127.0.0.1:9000"
        #expect(ProxyMessages.relocatedRefresh("0; url=http://up.test:8080/app/me", upstream: base, listener: listener) == "0; url=http://127.0.0.1:9000/me")
        #expect(ProxyMessages.relocatedRefresh("5;URL='/app/next?a=1'", upstream: base, listener: listener) == "5;URL='/next?a=1'")
        #expect(ProxyMessages.relocatedRefresh("3; url=https://else.test/", upstream: base, listener: listener) == "3; url=https://else.test/")
        #expect(ProxyMessages.relocatedRefresh("30", upstream: base, listener: listener) == "30")
    }
}

@Suite("A reverse listener's paths")
struct ReversePathTests {
    @Test("Under a base path, dot segments are resolved (`%2E` too) before joining, and one that climbs above the root is refused",
          arguments: [
            ("/a/../b?x=../y", "http://up.test/base/b?x=../y"),
            ("/a/./b/.", "http://up.test/base/a/b/"),
            ("/a/%2E%2e/b", "http://up.test/base/b"),
            ("/a/..", "http://up.test/base/"),
            // An encoded slash or backslash is a separator to upstreams that decode it (nginx): climbing through one is refused
            ("/..%2fsecret", nil),
            ("/a%2f..%2f..%2fsecret", nil),
            ("/a%2F%2E%2E%2F%2E%2E%2Fsecret", nil),
            ("/..%5csecret", nil),
            ("/..\\secret", nil),
            ("/a%2fb/../..%2fsecret", nil),
            ("/a%5cb/../..%5csecret", nil),
            ("/a%2f..%2fb", "http://up.test/base/a%2f..%2fb"),
            ("/a%2fb?x=..%2f..%2fy", "http://up.test/base/a%2fb?x=..%2f..%2fy"),
            ("/plain/path?q=1", "http://up.test/base/plain/path?q=1"),
            ("/../secret", nil),
            ("/%2e%2e/secret", nil),
            ("/a/../../secret", nil),
            // A dot segment with parameters, which Tomcat reads as `..`, is refused; a name that only starts with dots is not
            ("/..;/admin", nil),
            ("/a/..;jsessionid=1/b", nil),
            ("/%2e%2E%3bx/admin", nil),
            ("/.;/a", nil),
            ("/...;x/a", "http://up.test/base/...;x/a"),
            ("/a;v=1/b", "http://up.test/base/a;v=1/b"),
          ] as [(String, String?)])
    func dotSegments(target: String, expected: String?) throws {
        // Given a reverse listener whose upstream has a base path
        let base = try #require(URL(string: "http://up.test/base/"))
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target)
        // When a request's path is read under it
        let url = try? ProxyMessages.target(of: head, under: base)
        // Then it stays under the base, or is refused
        #expect(url?.absoluteString == expected)
    }

    @Test("Inside an intercepted CONNECT (no base path) the path goes as the app wrote it, dots and all")
    func noBasePath() throws {
        let base = try #require(URL(string: "https://up.test:8443"))
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/a/../b/./c")
        #expect(try ProxyMessages.target(of: head, under: base).absoluteString == "https://up.test:8443/a/../b/./c")
    }
}
