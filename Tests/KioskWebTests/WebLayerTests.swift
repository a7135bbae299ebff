import Foundation
import Hummingbird
import HummingbirdTesting
import KioskApp
import KioskDebugger
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskConsole
@testable import KioskWeb

@Suite("Static files at fingerprinted addresses")
struct StaticAssetTests {
    static let assets = [StaticAssets.stylesheet, StaticAssets.script, Console.script]

    @Test("The stylesheet and both scripts are served at addresses carrying their fingerprint, immutable, with a strong ETag")
    func servedImmutable() async throws {
        try await withWeb { _, client in
            for asset in Self.assets {
                // Given a file of Resources/, at the address pages link
                #expect(asset.path.hasPrefix("/static/") && asset.path != "/static/" + asset.fileName)
                // When it is fetched
                let answer = try await client.get(asset.path)
                // Then it is the file, cached for a year as immutable, with its fingerprint as a strong validator
                #expect(answer.status == .ok, "\(asset.path)")
                #expect(answer.bytes == Array(asset.body.readableBytesView), "\(asset.path)")
                #expect(answer.header("Cache-Control") == "public, max-age=31536000, immutable", "\(asset.path)")
                let etag = try #require(answer.header("ETag"))
                #expect(!etag.hasPrefix("W/") && etag.count == 18, "\(etag)")
                #expect(asset.path.contains("." + etag.dropFirst().dropLast() + "."), "\(asset.path) lacks \(etag)")
            }
            #expect(try await client.get(StaticAssets.stylesheet.path).header("Content-Type") == "text/css; charset=utf-8")
            #expect(try await client.get(StaticAssets.script.path).header("Content-Type") == "text/javascript; charset=utf-8")
            #expect(try await client.get(StaticAssets.stylesheet.path).body.contains("prefers-color-scheme: dark"))
            #expect(try await client.get(Console.script.path).body.contains("treeEditor"))
        }
    }

    @Test("A request with the file's ETag in If-None-Match gets a 304 without a body")
    func notModified() async throws {
        try await withWeb { _, client in
            for asset in Self.assets {
                // Given a browser that has the file
                let etag = try #require(try await client.get(asset.path).header("ETag"))
                // When it revalidates, alone, weakly or among other tags
                for header in [etag, "W/" + etag, "\"0000000000000000\", " + etag] {
                    let again = try await client.get(asset.path, headers: [.ifNoneMatch: header])
                    // Then nothing is sent again
                    #expect(again.status == .notModified, "\(asset.path) with \(header)")
                    #expect(again.bytes.isEmpty)
                    #expect(again.header("ETag") == etag)
                }
                // And another tag gets the file
                #expect(try await client.get(asset.path, headers: [.ifNoneMatch: "\"0000000000000000\""]).status == .ok)
            }
        }
    }

    @Test("An unknown file, an old fingerprint and an address without one are 404s")
    func unknownFingerprint() async throws {
        try await withWeb { _, client in
            // Given the current stylesheet's address
            let current = StaticAssets.stylesheet.path
            // When an address with another fingerprint, none, or an unknown file is asked for
            for path in ["/static/app.0123456789abcdef.css", "/static/app.css", "/static/app.js", "/static/debug.js",
                         "/static/nothing.0123456789abcdef.js", current + "x"] {
                let answer = try await client.get(path)
                // Then it is a 404 page, never some other content under an immutable address
                #expect(answer.status == .notFound, "\(path)")
                #expect(answer.header("Cache-Control") != "public, max-age=31536000, immutable", "\(path)")
                #expect(answer.body.contains("<h1>"), "\(path)")
            }
        }
    }

    @Test("The debugger's script is linked by /debug pages only, after the script every page has")
    func debugScriptOnlyOnDebugPages() async throws {
        try await withWeb { _, client in
            let appScript = "<script src=\"\(StaticAssets.script.path)\" defer></script>"
            let debugScript = "<script src=\"\(Console.script.path)\" defer></script>"
            // Given the reader's pages, an error page and the debugger's pages
            for path in ["/", "/rickandmorty", "/rickandmorty?q=rick", "/rickandmorty/1", "/favorites", "/nowhere"] {
                // Then a reader's page has the app's script and not the debugger's
                let page = try await client.get(path)
                #expect(page.body.contains(appScript), "\(path)")
                #expect(!page.body.contains(Console.script.path), "\(path)")
            }
            for path in ["/debug", "/debug/endpoints", "/debug/mocks", "/debug/paused"] {
                // And a debugger's page has both, the debugger's after the app's, which it builds on
                let page = try await client.get(path)
                #expect(page.status == .ok, "\(path)")
                let app = try #require(page.body.range(of: appScript), "\(path)")
                let debug = try #require(page.body.range(of: debugScript), "\(path)")
                #expect(app.upperBound <= debug.lowerBound, "\(path)")
            }
        }
    }
}

@Suite("The /debug route group")
struct DebugGroupTests {
    @Test("Every route of the /debug group refuses a request from another machine without the token, before its handler runs")
    func groupRefusesRemoteRequests() async throws {
        let harness = try await Harness.start()
        do {
            // Given a listener on all interfaces, no debug token, and a mock rule a handler could delete
            try harness.kiosk.debugger.mocks.add([MockRule(method: "GET", urlPattern: "http://demo.invalid/dogs.json", status: 200, headers: [],
                                                  body: Data("[]".utf8), origin: "test")])
            let router = buildRouter(kiosk: harness.kiosk, debugAccess: DebugAccess(token: nil, isLoopback: false))
            let routes = router.router.routes.map { (path: $0.path.description, method: $0.method) }
                .filter { $0.path.hasPrefix("/debug") && $0.path != "/debug/login" }
            #expect(routes.count >= 16)
            let rule = try #require(try harness.kiosk.debugger.mocks.all().first)
            let csrf = String(repeating: "a", count: 64)
            try await Application(router: router).test(.router) { (client: any TestClientProtocol) async throws in
                for route in routes {
                    // When each route is asked for, with a valid form token so only the debugger's gate can refuse it
                    let uri = route.path
                        .replacingOccurrences(of: "{id}", with: String(rule.id))
                        .replacingOccurrences(of: "{action}", with: "delete")
                        .replacingOccurrences(of: "{endpoint}", with: "dogs.list")
                    let answer = route.method == .post
                        ? try await client.post(uri, form: [("csrf", csrf), ("action", "continue"), ("request", "pause"),
                                                            ("response", "pause"), ("error", "pause")], cookie: csrf)
                        : try await client.get(uri)
                    // Then it is refused with the reason
                    #expect(answer.status == .forbidden, "\(route.method) \(uri)")
                    #expect(answer.body.contains("only when Kiosk listens on loopback"), "\(route.method) \(uri)")
                }
                // And no handler ran: the rule is still there and no breakpoint was set
                #expect(try harness.kiosk.debugger.mocks.all().map(\.id) == [rule.id])
                #expect(try harness.kiosk.debugger.breakpoints.settings()["dogs.list"] == nil)
                // And the token form's target, outside the group, still answers
                #expect(try await client.post("/debug/login", form: [("csrf", csrf)], cookie: csrf).status == .seeOther)
            }
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }
}

@Suite("Typed query strings and forms")
struct TypedFormTests {
    @Test("A form field that does not decode into its type is a 400 that names what is wrong, and changes nothing")
    func formDecodeError() async throws {
        try await withWeb { harness, client in
            let token = String(repeating: "ab", count: 32)
            // Given the dogs list
            _ = try await client.get("/dogs")
            let before = try harness.kiosk.database.userOrdered(.dogs).map(\.itemID)
            // When a dog is moved to a position that is not a whole number
            let answer = try await client.post("/dogs/\(before[0])/move", form: [("csrf", token), ("to", "top")], cookie: token)
            // Then the answer is a 400 page saying what a position is, and the order is unchanged
            #expect(answer.status == .badRequest)
            #expect(answer.body.contains("The position must be a whole number from 0."))
            #expect(try harness.kiosk.database.userOrdered(.dogs).map(\.itemID) == before)
        }
    }

    @Test("Query strings that do not decode are 400s with the reason", arguments: [
        ("/api/rickandmorty?page=abc", "The page must be a whole number."),
        ("/api/rickandmorty?page=1&page=2", "The parameter \"page\" is given twice."),
        ("/api/rickandmorty?q=%zz", "The query string is not validly percent-encoded."),
        ("/api/rickandmorty?q=%07", "The query string contains control characters."),
        ("/api/rickandmorty?q[x]=rick", "The query string is malformed: each parameter takes one plain value."),
        ("/api/rickandmorty?colour=red", "Unknown parameter \"colour\"; valid: gender, page, q, refresh, status."),
        ("/api/rickandmorty?colour", "Unknown parameter \"colour\"; valid: gender, page, q, refresh, status."),
        ("/api/rickandmorty?page=2&page", "The parameter \"page\" is given twice."),
        ("/debug/api/requests?limit=5000", "limit must be from 1 to 1000."),
        ("/debug/api/requests?decision=magic",
         "The decision must be one of fresh, revalidated, stale-while-revalidate, stale-on-error, stale-if-error, max-stale, offline, fallback, only-if-cached, network, mocked, edited."),
    ])
    func queryDecodeErrors(uri: String, message: String) async throws {
        try await withWeb { _, client in
            // Given a malformed query
            // When it is sent
            let answer = try await client.get(uri)
            // Then it is a 400 with exactly that reason
            #expect(answer.status == .badRequest)
            #expect(try answer.json()["error"] as? String == message)
        }
    }
}
