import Foundation
import Hummingbird
import HummingbirdTesting
import KioskApp
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskConsole
@testable import KioskWeb

@Suite("One route table for the server and the scripts")
struct WebRouteTableTests {
    /// The client table as the scripts get it: `client.js`'s JSON.
    static func clientTable(_ client: any TestClientProtocol, page path: String = "/") async throws -> [String: Any] {
        let page = try await client.get(path)
        let path = try #require(page.body.firstMatch(of: /<script src="(\/static\/client\.[0-9a-f]{16}\.js)"/)?.output.1)
        let script = try await client.get(String(path))
        #expect(script.status == .ok)
        #expect(script.header("Cache-Control") == "public, max-age=31536000, immutable")
        let prefix = "self.KioskClient = Object.freeze(", suffix = ");\n"
        #expect(script.body.hasPrefix(prefix) && script.body.hasSuffix(suffix))
        let json = script.body.dropFirst(prefix.count).dropLast(suffix.count)
        return try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    /// How the client table treats a POST to `path`: queued with an effect, sent directly, or never from the device.
    static func treatment(of path: String, routes: [String: Any]) throws -> String? {
        let networkOnly = try #require(routes["networkOnly"] as? [String])
        if networkOnly.contains(where: { $0.hasSuffix("/") ? path.hasPrefix($0) : path == $0 || path.hasPrefix($0 + "/") }) {
            return "network only"
        }
        if (routes["direct"] as? [String])?.contains(path) == true { return "direct" }
        for write in try #require(routes["writes"] as? [[String: Any]]) {
            let regex = try NSRegularExpression(pattern: try #require(write["pattern"] as? String))
            if regex.firstMatch(in: path, range: NSRange(path.startIndex..., in: path)) != nil { return write["effect"] as? String }
        }
        return nil
    }

    @Test("Every POST route the server registers is described to the scripts: queued with what it shows, sent as it is, or never answered from the device")
    func everyWriteIsDescribed() async throws {
        try await withHarness { harness in
            // Given every POST route of the app, the debugger's and pairing's included, each with an address it takes
            let gate = PairingGate(devices: harness.kiosk.devices, attempts: ClientAttempts(now: harness.now.dateSource),
                                   peer: testPeer, onEvent: { _ in })
            let router = buildRouter(kiosk: harness.kiosk, pairing: gate)
            let posts = router.router.routes.filter { $0.method == .post }.map(\.path.description)
            #expect(posts.count >= 15)
            var addresses: [String] = []
            for pattern in posts {
                let sample = pattern.replacingOccurrences(of: "{source}", with: "dogs")
                    .replacingOccurrences(of: "{endpoint}", with: "dogs.list")
                if pattern == Route.Kind.reset.pattern.description {
                    addresses.append(sample.replacingOccurrences(of: "{id}", with: Route.resetSegment))
                } else if pattern.contains("{action}") && !pattern.hasPrefix(ConsoleRoute.prefix) {
                    for action in ["delete", "move", "restore"] {
                        addresses.append(sample.replacingOccurrences(of: "{id}", with: "Fido").replacingOccurrences(of: "{action}", with: action))
                    }
                } else {
                    addresses.append(sample.replacingOccurrences(of: "{id}", with: "7").replacingOccurrences(of: "{action}", with: "delete"))
                }
            }
            let samples = addresses
            try await Application(router: router).test(.router) { client in
                // (the pairing page: this router's gate sends every other page of a peer it cannot read to it)
                let routes = try #require(try await Self.clientTable(client, page: Route.pair.path)["routes"] as? [String: Any])
                // Then the scripts' table says how each is treated
                for address in samples {
                    #expect(try Self.treatment(of: address, routes: routes) != nil, "POST \(address) is not in the client table")
                }
                // And the reader's writes are queued with the effect each shows while it waits
                #expect(try Self.treatment(of: Route.favorite(.rickandmorty, "1").path, routes: routes) == "star")
                #expect(try Self.treatment(of: Route.delete(.dogs, "a b/c").path, routes: routes) == "remove")
                #expect(try Self.treatment(of: Route.move(.dogs, "Fido").path, routes: routes) == "move")
                #expect(try Self.treatment(of: Route.reset(.dogs).path, routes: routes) == "reset")
                #expect(try Self.treatment(of: Route.language.path, routes: routes) == "direct")
                // And nothing the server refuses is queued: only the list its user orders has edits
                #expect(try Self.treatment(of: Route.delete(.rickandmorty, "1").path, routes: routes) == nil)
                #expect(try Self.treatment(of: Route.reset(.nyt).path, routes: routes) == nil)
            }
        }
    }

    @Test("The client table says how ages read, step by step as the pages write them")
    func agesForTheScripts() async throws {
        try await withWeb { _, client in
            let ages = try #require(try await Self.clientTable(client)["ages"] as? [[String: Any]])
            #expect(ages.map { $0["symbol"] as? String } == ["", "s", "min", "h", "d"])
            #expect(ages.map { $0["below"] as? Double } == [5, 60, 3600, 86400, nil])
            // And each language gives the scripts its words around an age, as its pages say them
            let english = try await client.get("/").body, spanish = try await client.get("/", headers: [.acceptLanguage: "es"]).body
            #expect(english.contains("&quot;ago&quot;:&quot;{age} ago&quot;"))
            #expect(spanish.contains("&quot;ago&quot;:&quot;hace {age}&quot;"))
        }
    }

    @Test("No script spells an address of the app, a catalog or a button's symbol: they come from the client table and the page")
    func scriptsSpellNoRoute() throws {
        // Given every script of the app, and the first segment of every address the server registers
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
        let scripts = try ["KioskWeb", "KioskConsole"].flatMap { module in
            let folder = sources.appendingPathComponent("\(module)/Resources")
            return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".js") }
                .map { folder.appendingPathComponent($0) }
        }
        #expect(scripts.count >= 5)
        let names = Set(Route.Kind.allCases.compactMap { $0.pattern.description.split(separator: "/").first.map(String.init) }
            .filter { !$0.hasPrefix("{") } + ["debug"] + SourceID.allCases.map(\.rawValue))
        #expect(names.isSuperset(of: ["favorites", "api", "static", "image", "sw.js", "pair", "language", "dogs"]))
        for file in scripts {
            let script = file.lastPathComponent
            let text = try String(contentsOf: file, encoding: .utf8)
            // Then none of them writes one as a path in a string, a template or a regular expression
            for name in names {
                for opening in ["\"/", "'/", "`/", "\\/"] {
                    #expect(!text.contains(opening + name), "\(script) spells \(opening)\(name)")
                }
            }
            #expect(!text.contains("\"★\"") && !text.contains("\"↑\""), "\(script) spells a button's symbol")
        }
    }

    @Test("Moves, deletions and a reset are answered for a catalog its user orders, and are a 404 for any other")
    func userOrderWritesOnlyForUserOrderedCatalogs() async throws {
        try await withWeb { harness, client in
            // Given the dogs list read once, and a page's CSRF token
            let dogs = try await harness.kiosk.catalog.page(PageRequest(source: .dogs)).page.items.map(\.itemID)
            let csrf = try issuedToken(try await client.get("/"))
            _ = try await client.get("/rickandmorty")
            // When a dog is moved and deleted, and the same is asked of a Rick and Morty character and the NYT list
            let moved = try await client.post(Route.move(.dogs, dogs[0]).path, form: [("csrf", csrf), ("to", "2")], cookie: csrf)
            let deleted = try await client.post(Route.delete(.dogs, dogs[1]).path, form: [("csrf", csrf)], cookie: csrf)
            let otherMove = try await client.post(Route.move(.rickandmorty, "1").path, form: [("csrf", csrf), ("to", "2")], cookie: csrf)
            let otherDelete = try await client.post(Route.delete(.rickandmorty, "1").path, form: [("csrf", csrf)], cookie: csrf)
            let otherReset = try await client.post(Route.reset(.nyt).path, form: [("csrf", csrf)], cookie: csrf)
            let unknownAction = try await client.post("/dogs/\(dogs[2])/shuffle", form: [("csrf", csrf)], cookie: csrf)
            // Then the dogs' are applied and go back to the dogs' editor, the others are 404s
            #expect(moved.status == .seeOther && moved.header("Location") == "/dogs?edit=1")
            #expect(deleted.status == .seeOther && deleted.header("Location") == "/dogs?edit=1")
            for refused in [otherMove, otherDelete, otherReset, unknownAction] { #expect(refused.status == .notFound) }
            let now = try harness.kiosk.database.userOrdered(.dogs).map(\.itemID)
            #expect(!now.contains(dogs[1]) && now.firstIndex(of: dogs[0]) == 1)
            // And the editor's rows and forms carry what the scripts need: the catalog's ordering, each row's move
            // address, each move's direction, and where every form returns to
            let editor = try await client.get("/dogs?edit=1").body
            #expect(editor.contains("data-ordering=\"user\""))
            #expect(editor.contains("data-move=\"/dogs/\(QueryString.encode(now[0]))/move\""))
            #expect(editor.contains("data-direction=\"down\"") && editor.contains("data-direction=\"up\""))
            #expect(editor.contains("name=\"return\" value=\"/dogs?edit=1\""))
            #expect(!(try await client.get("/rickandmorty").body.contains("data-ordering")))
        }
    }
}
