import Foundation
import KioskCore
import KioskDebugger
import Testing

@Suite("Breakpoints on an app's paths and URL patterns")
struct BreakpointPatternTests {
    static func request(_ url: String, endpoint: String) -> HTTPRequest {
        HTTPRequest(url: URL(string: url)!, endpoint: endpoint, purpose: .proxied)
    }

    static let pause = BreakpointSetting(request: .pause)
    static let pauseAnswers = BreakpointSetting(response: .pause)

    @Test("A path's breakpoint holds for every query of that path, not for another path of the host")
    func pathKey() throws {
        // Given a breakpoint on one path of an app's host
        let breakpoints = Breakpoints(fileURL: nil, redactor: .standard)
        try breakpoints.set(Self.pause, for: "http://localhost:3000/api/users")
        // Then it holds for that path with any query (or none), the host written in any case
        for url in ["http://localhost:3000/api/users", "http://localhost:3000/api/users?page=2", "HTTP://LocalHost:3000/api/users?x#y"] {
            #expect(breakpoints.setting(for: Self.request(url, endpoint: "localhost:3000")) == Self.pause, "\(url)")
        }
        // And not for another path, a longer one, another port or another scheme
        for url in ["http://localhost:3000/api/users/7", "http://localhost:3000/api/", "http://localhost:3001/api/users",
                    "https://localhost:3000/api/users", "http://localhost:3000/API/users"] {
            #expect(breakpoints.setting(for: Self.request(url, endpoint: "localhost:3000")).isOff, "\(url)")
        }
    }

    @Test("Through a reverse listener, a breakpoint written with one loopback name of it holds for an app asking by another")
    func reverseListenerSpellings() throws {
        // Given a breakpoint on a reverse listener's path, written with 127.0.0.1
        let breakpoints = Breakpoints(fileURL: nil, redactor: .standard)
        try breakpoints.set(Self.pause, for: "http://127.0.0.1:47201/items")
        // When the app asks the listener by localhost (its request goes on to the upstream's URL)
        var request = Self.request("http://127.0.0.1:47101/app/items?page=2", endpoint: "127.0.0.1:47101")
        request.appURL = URL(string: "http://localhost:47201/items?page=2")
        // Then the breakpoint holds, and one on another host does not
        #expect(breakpoints.setting(for: request) == Self.pause)
        request.appURL = URL(string: "http://app.test:47201/items")
        #expect(breakpoints.setting(for: request).isOff)
    }

    @Test("A WebSocket's address as the log lists it (ws://, wss://) sets the switches of its handshake's http(s) URL")
    func webSocketAddress() throws {
        // Given a path breakpoint set on a WebSocket's wss: address, as the endpoints page and the CLI name it
        let breakpoints = Breakpoints(fileURL: nil, redactor: .standard)
        try breakpoints.set(Self.pause, for: "wss://localhost:18312/ws")
        // Then its handshake (an https request) is held, and the address reads its switches back either way
        #expect(breakpoints.setting(for: Self.request("https://localhost:18312/ws?room=1", endpoint: "localhost:18312")) == Self.pause)
        #expect(breakpoints.setting(for: "wss://localhost:18312/ws") == Self.pause)
        #expect(try breakpoints.settings().keys.sorted() == ["https://localhost:18312/ws"])
        #expect(Breakpoints.isURLPattern("ws://127.0.0.1:18302/ws") && Breakpoints.key("ws://a.test/x") == "http://a.test/x")
        // And turned off by the same address, nothing is left
        try breakpoints.set(BreakpointSetting(), for: "wss://localhost:18312/ws")
        #expect(try breakpoints.settings().isEmpty)
    }

    @Test("A pattern's * matches any run; a ? in the pattern compares the query; the longest matching key wins, then the host's")
    func patterns() throws {
        // Given a host's breakpoint, a pattern under it and a longer one
        let breakpoints = Breakpoints(fileURL: nil, redactor: .standard)
        try breakpoints.set(Self.pauseAnswers, for: "api.example.test")
        try breakpoints.set(Self.pause, for: "https://api.example.test/v1/*")
        let errors = BreakpointSetting(error: .pause)
        try breakpoints.set(errors, for: "https://api.example.test/v1/users/*/posts")
        let onlySearches = BreakpointSetting(request: .pause, response: .pause)
        try breakpoints.set(onlySearches, for: "https://*.example.test/search?q=*")
        func setting(_ url: String) -> BreakpointSetting {
            breakpoints.setting(for: Self.request(url, endpoint: URL(string: url)!.host()!))
        }
        // Then the most specific key that matches decides
        #expect(setting("https://api.example.test/v1/users/7/posts") == errors)
        #expect(setting("https://api.example.test/v1/users/7/posts?page=2") == errors)
        #expect(setting("https://api.example.test/v1/users/7") == Self.pause)
        #expect(setting("https://api.example.test/v2/users") == Self.pauseAnswers)
        // And a pattern with a query matches on the query too, on any host its * allows
        #expect(setting("https://www.example.test/search?q=kiosk") == onlySearches)
        #expect(setting("https://www.example.test/search").isOff)
        // And a catalog's endpoint is matched by its name as before
        try breakpoints.set(Self.pause, for: "rickandmorty.characters")
        #expect(breakpoints.setting(for: Self.request("http://demo.invalid/api/character?page=1", endpoint: "rickandmorty.characters"))
            == Self.pause)
    }

    @Test("A pattern with a query selects what a mock or rule with it selects: its items in any order, secret ones aside")
    func queryAsMocksReadIt() throws {
        // Given a breakpoint on a URL with two query items
        let breakpoints = Breakpoints(fileURL: nil, redactor: .standard)
        try breakpoints.set(Self.pause, for: "http://127.0.0.1:8000/mut?a=1&b=2")
        func setting(_ url: String) -> BreakpointSetting {
            breakpoints.setting(for: Self.request(url, endpoint: "127.0.0.1:8000"))
        }
        // When an app builds the same query in another order, or adds a key the redactor hides, or a third item
        // Then the first two are paused (a mock with that URL answers them too), the third is not
        #expect(setting("http://127.0.0.1:8000/mut?b=2&a=1") == Self.pause)
        #expect(setting("http://127.0.0.1:8000/mut?a=1&api_key=s3cret&b=2") == Self.pause)
        #expect(setting("http://127.0.0.1:8000/mut?a=1&b=2&c=3").isOff)
        #expect(setting("http://127.0.0.1:8000/mut?a=1").isOff)
        // And a wildcard in the query reads the items in order of name
        try breakpoints.set(Self.pauseAnswers, for: "http://127.0.0.1:8000/find?*q=kiosk*")
        #expect(setting("http://127.0.0.1:8000/find?q=kiosk&page=2") == Self.pauseAnswers)
        // And a wildcard pattern whose items are written out of name order, a secret one among them, is read in that order
        try breakpoints.set(Self.pause, for: "http://127.0.0.1:8000/w?z=*&api_key=*&a=1")
        #expect(setting("http://127.0.0.1:8000/w?z=9&a=1") == Self.pause)
        #expect(setting("http://127.0.0.1:8000/w?a=1&z=9&api_key=s3cret") == Self.pause)
        #expect(setting("http://127.0.0.1:8000/w?a=2&z=9").isOff)
    }
}
