import Foundation
import Hummingbird
import HummingbirdTesting
import KioskApp
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskWeb

/// A fixed token the tests send as both cookie and field (the double submit a page would produce).
private let token = String(repeating: "ab", count: 32)

@Suite("Web app forms: CSRF, favorites and dogs editing")
struct WebFormTests {
    private func firstID(_ client: any TestClientProtocol, _ harness: Harness, _ source: SourceID) async throws -> String {
        _ = try await client.get("/\(source.rawValue)")
        let update = try await harness.kiosk.catalog.page(PageRequest(source: source), policy: .offline)
        return try #require(update.page.items.first).itemID
    }

    private func dogIDs(_ harness: Harness) throws -> [String] { try harness.kiosk.database.userOrdered(.dogs).map(\.itemID) }

    @Test("A page without a token cookie sets one, HttpOnly and SameSite=Strict, and puts it in every form")
    func pageIssuesToken() async throws {
        try await withWeb { _, client in
            // Given a browser with no cookie
            // When it opens the dogs list
            let page = try await client.get("/dogs")
            // Then it gets a 64-hex-digit cookie, and the star forms carry the same value
            let issued = try issuedToken(page)
            #expect(CSRFProtection.isWellFormed(issued))
            let header = try #require(page.header("Set-Cookie"))
            #expect(header.contains("HttpOnly") && header.contains("SameSite=Strict") && header.contains("Path=/"))
            #expect(page.body.contains("name=\"csrf\" value=\"\(issued)\""))
            #expect(page.body.contains("method=\"post\" action=\"/favorites/dogs/"))
            // And a request that already has a token keeps it
            let again = try await client.get("/dogs", headers: [.cookie: "\(CSRFProtection.cookieName)=\(issued)"])
            #expect(again.header("Set-Cookie") == nil)
            #expect(again.body.contains("name=\"csrf\" value=\"\(issued)\""))
        }
    }

    @Test("A favorite POST without the token, or with a wrong one, is refused with 403 and changes nothing")
    func postWithoutTokenIsRefused() async throws {
        try await withWeb { harness, client in
            // Given a listed dog
            let id = try await firstID(client, harness, .dogs)
            // When it is starred with no cookie, no field, or a field that differs from the cookie
            let attempts = [
                try await client.post("/favorites/dogs/\(id)", form: [("action", "add"), ("return", "/dogs")]),
                try await client.post("/favorites/dogs/\(id)", form: [("action", "add")], cookie: token),
                try await client.post("/favorites/dogs/\(id)", form: [("action", "add"), ("csrf", token)]),
                try await client.post("/favorites/dogs/\(id)", form: [("action", "add"), ("csrf", String(repeating: "cd", count: 32))],
                                      cookie: token),
            ]
            // Then every one is a 403 page and there are no favorites
            for response in attempts {
                #expect(response.status == .forbidden)
                #expect(response.header("Content-Type") == "text/html; charset=utf-8")
            }
            #expect(try harness.kiosk.catalog.favorites().isEmpty)
        }
    }

    @Test("A favorite POST with the page's token redirects back, and the favorite shows and survives a refresh")
    func favoriteWithToken() async throws {
        try await withWeb { harness, client in
            // Given the dogs list, which hands out a token
            let list = try await client.get("/dogs")
            let issued = try issuedToken(list)
            let id = try await firstID(client, harness, .dogs)
            // When the first dog is starred with the cookie and the field
            let response = try await client.post("/favorites/dogs/\(id)", form: [("csrf", issued), ("action", "add"), ("return", "/dogs")],
                                                 cookie: issued)
            // Then it is a 303 back to the list, the list shows a pressed star, and Favorites lists the dog
            #expect(response.status == .seeOther)
            #expect(response.header("Location") == "/dogs")
            let title = try #require(try harness.kiosk.database.userOrdered(.dogs).first).title
            let after = try await client.get("/dogs")
            #expect(after.body.contains("aria-label=\"Favorite: \(HTML.escape(title))\" aria-pressed=\"true\""))
            #expect(try await client.get("/favorites").body.contains(HTML.escape(title)))
            // And after the list is revalidated, the favorite is still there
            #expect(try await client.get("/dogs?refresh=1").status == .ok)
            let favorites = try await client.get("/favorites")
            #expect(favorites.body.contains(HTML.escape(title)))
            #expect(favorites.body.contains("value=\"remove\""))
            // And removing it takes it off Favorites
            let removed = try await client.post("/favorites/dogs/\(id)", form: [("csrf", issued), ("action", "remove"), ("return", "/favorites")],
                                                cookie: issued)
            #expect(removed.status == .seeOther)
            #expect(try await client.get("/favorites").body.contains("No favorites yet."))
        }
    }

    @Test("A detail page has a star form that returns to the detail")
    func detailStar() async throws {
        try await withWeb { harness, client in
            // Given a listed dog
            let id = try await firstID(client, harness, .dogs)
            // When its detail is shown
            let page = try await client.get("/dogs/\(id)", headers: [.cookie: "\(CSRFProtection.cookieName)=\(token)"])
            // Then it has an add-to-favorites form returning to itself
            #expect(page.body.contains("action=\"/favorites/dogs/\(id)\""))
            #expect(page.body.contains("name=\"return\" value=\"/dogs/\(id)\""))
            #expect(page.body.contains("name=\"csrf\" value=\"\(token)\""))
        }
    }

    @Test("A POST from a foreign Origin is refused even with a valid token; the own host is accepted")
    func foreignOrigin() async throws {
        try await withWeb { harness, client in
            // Given a listed dog and a valid double-submitted token
            let id = try await firstID(client, harness, .dogs)
            let form = [("csrf", token), ("action", "add")]
            // When it is starred from another site
            let foreign = try await client.post("/favorites/dogs/\(id)", form: form, cookie: token, origin: "https://evil.example")
            let null = try await client.post("/favorites/dogs/\(id)", form: form, cookie: token, origin: "null")
            // Then both are 403 and nothing changes
            #expect(foreign.status == .forbidden)
            #expect(null.status == .forbidden)
            #expect(try harness.kiosk.catalog.favorites().isEmpty)
            // And the same form from Kiosk's own origin goes through (the router test client's host is "localhost")
            let own = try await client.post("/favorites/dogs/\(id)", form: form, cookie: token, origin: "http://localhost")
            #expect(own.status == .seeOther)
            #expect(try harness.kiosk.catalog.favorites().count == 1)
        }
    }

    @Test("Open-redirect attempts in return fall back to /favorites", arguments: [
        "//evil.example", "https://evil.example", "/\\evil.example", "javascript:alert(1)", "", "evil",
    ])
    func openRedirect(target: String) async throws {
        try await withWeb { harness, client in
            // Given a listed dog
            let id = try await firstID(client, harness, .dogs)
            // When it is starred with a return that is not a local path
            let response = try await client.post("/favorites/dogs/\(id)", form: [("csrf", token), ("action", "add"), ("return", target)],
                                                 cookie: token)
            // Then the redirect goes to /favorites (and the star still happened)
            #expect(response.status == .seeOther)
            #expect(response.header("Location") == "/favorites")
            #expect(try harness.kiosk.catalog.favorites().count == 1)
        }
    }

    @Test("Starring an unknown item is a 404, a bad action a 400")
    func favoriteBadInput() async throws {
        try await withWeb { harness, client in
            let id = try await firstID(client, harness, .dogs)
            // Given valid tokens
            // When an unknown item, an unknown catalog, or a bad action is posted
            let unknown = try await client.post("/favorites/dogs/no-such-dog", form: [("csrf", token), ("action", "add")], cookie: token)
            let catalog = try await client.post("/favorites/nowhere/1", form: [("csrf", token), ("action", "add")], cookie: token)
            let action = try await client.post("/favorites/dogs/\(id)", form: [("csrf", token), ("action", "toggle")], cookie: token)
            // Then each is the right 4xx
            #expect(unknown.status == .notFound)
            #expect(catalog.status == .notFound)
            #expect(action.status == .badRequest)
            #expect(try harness.kiosk.catalog.favorites().isEmpty)
        }
    }

    /// The move form whose button has `label`, and whether it is hidden (a row's button that does not apply to its place,
    /// which the device's script shows when edits waiting to be sent move the row); nil when there is none.
    static func moveForm(_ label: String, in body: String) -> (form: Substring, isHidden: Bool)? {
        guard let button = body.range(of: "aria-label=\"\(label)\""),
              let start = body[..<button.lowerBound].range(of: "<form ", options: .backwards) else { return nil }
        let form = body[start.lowerBound..<button.lowerBound]
        return (form, form.prefix { $0 != ">" }.hasSuffix(" hidden"))
    }

    @Test("Edit mode shows labelled Move, Delete and Reset forms for each dog")
    func editMode() async throws {
        try await withWeb { harness, client in
            // Given the dogs list
            try #require(try await client.get("/dogs").status == .ok)
            let dogs = try harness.kiosk.database.userOrdered(.dogs)
            try #require(dogs.count >= 3)
            // When edit mode is opened
            let page = try await client.get("/dogs?edit=1", headers: [.cookie: "\(CSRFProtection.cookieName)=\(token)"])
            // Then the first dog can move down only, the last up only, and every dog can be deleted
            #expect(page.status == .ok)
            let first = HTML.escape(dogs[0].title), last = HTML.escape(dogs[dogs.count - 1].title)
            #expect(Self.moveForm("Move \(first) down", in: page.body)?.isHidden == false)
            #expect(Self.moveForm("Move \(first) up", in: page.body)?.isHidden == true)
            #expect(Self.moveForm("Move \(last) up", in: page.body)?.isHidden == false)
            #expect(Self.moveForm("Move \(last) down", in: page.body)?.isHidden == true)
            #expect(page.body.contains("aria-label=\"Delete \(first)\""))
            #expect(page.body.contains("action=\"/dogs/reset\""))
            #expect(page.body.contains("name=\"csrf\" value=\"\(token)\""))
            // And edit is not a parameter of other catalogs
            #expect(try await client.get("/rickandmorty?edit=1").status == .badRequest)
        }
    }

    @Test("Deleting and moving dogs persist, show in order after the redirect and survive a refresh")
    func dogsEdits() async throws {
        try await withWeb { harness, client in
            // Given the dogs list
            _ = try await client.get("/dogs")
            let before = try dogIDs(harness)
            let titles = Dictionary(uniqueKeysWithValues: try harness.kiosk.database.userOrdered(.dogs).map { ($0.itemID, $0.title) })
            // When the first dog is deleted and the (new) last is moved to the top
            let deleted = try await client.post("/dogs/\(before[0])/delete", form: [("csrf", token)], cookie: token)
            #expect(deleted.status == .seeOther)
            #expect(deleted.header("Location") == "/dogs?edit=1")
            let mover = before[before.count - 1]
            let moved = try await client.post("/dogs/\(mover)/move", form: [("csrf", token), ("to", "0")], cookie: token)
            #expect(moved.status == .seeOther)
            // Then the list after the redirect has the mover first and no deleted dog
            let expected = [mover] + before.dropFirst().dropLast()
            #expect(try dogIDs(harness) == expected)
            let page = try await client.get("/dogs?edit=1")
            let firstTitle = try #require(titles[mover]), deletedTitle = try #require(titles[before[0]])
            #expect(Self.moveForm("Move \(HTML.escape(firstTitle)) down", in: page.body)?.isHidden == false)
            #expect(Self.moveForm("Move \(HTML.escape(firstTitle)) up", in: page.body)?.isHidden == true)
            #expect(!page.body.contains("Delete \(HTML.escape(deletedTitle))\""))
            // And a forced refresh keeps both edits
            #expect(try await client.get("/dogs?refresh=1").status == .ok)
            #expect(try dogIDs(harness) == expected)
            // And Reset brings the upstream list back
            let reset = try await client.post("/dogs/reset", form: [("csrf", token)], cookie: token)
            #expect(reset.status == .seeOther)
            #expect(try dogIDs(harness) == before)
        }
    }

    @Test("Dog edits need the token, an existing dog and a position in the list")
    func dogsBadInput() async throws {
        try await withWeb { harness, client in
            _ = try await client.get("/dogs")
            let before = try dogIDs(harness)
            // Given the dogs list
            // When edits come without a token, for an unknown dog, or to a bad position
            let noToken = try await client.post("/dogs/\(before[0])/delete", form: [])
            let noTokenMove = try await client.post("/dogs/\(before[0])/move", form: [("to", "1")])
            let noTokenReset = try await client.post("/dogs/reset", form: [])
            let unknown = try await client.post("/dogs/no-such-dog/delete", form: [("csrf", token)], cookie: token)
            let past = try await client.post("/dogs/\(before[0])/move", form: [("csrf", token), ("to", "999")], cookie: token)
            let negative = try await client.post("/dogs/\(before[0])/move", form: [("csrf", token), ("to", "-1")], cookie: token)
            let words = try await client.post("/dogs/\(before[0])/move", form: [("csrf", token), ("to", "top")], cookie: token)
            // Then 403, 404 and 400, and the list is unchanged
            #expect(noToken.status == .forbidden)
            #expect(noTokenMove.status == .forbidden)
            #expect(noTokenReset.status == .forbidden)
            #expect(unknown.status == .notFound)
            #expect(past.status == .badRequest)
            #expect(negative.status == .badRequest)
            #expect(words.status == .badRequest)
            #expect(try dogIDs(harness) == before)
            // And a move past the list's end (the list changed under the page) and a dog no longer in it are said by the
            // dog's name, in the page's language (the words a queued edit's refusal shows too)
            let name = try await harness.kiosk.catalog.item(source: .dogs, itemID: before[0], policy: .offline).item.shownTitle
            #expect(past.body.contains("\(name) could not move to position 1000: the list has changed since this page was shown."),
                    "\(past.body)")
            let inSpanish = try await client.post("/dogs/\(before[0])/move", form: [("csrf", token), ("to", "999")], cookie: token,
                                                  headers: [.acceptLanguage: "es"])
            #expect(inSpanish.body.contains("\(name) no se pudo mover a la posición 1000: la lista cambió"), "\(inSpanish.body)")
            #expect(unknown.body.contains("no-such-dog is no longer in the list"), "\(unknown.body)")
            // (a dog deleted elsewhere is named by its name, its row still stored)
            let other = try await harness.kiosk.catalog.item(source: .dogs, itemID: before[1], policy: .offline).item.shownTitle
            #expect(try await client.post("/dogs/\(before[1])/delete", form: [("csrf", token)], cookie: token).status == .seeOther)
            let again = try await client.post("/dogs/\(before[1])/move", form: [("csrf", token), ("to", "0")], cookie: token)
            #expect(again.status == .notFound && again.body.contains("\(other) is no longer in the list"), "\(again.body)")
        }
    }

    @Test("A GET on a POST route is a 404 or 405 and never changes anything")
    func getNeverChanges() async throws {
        try await withWeb { harness, client in
            // Given the dogs list
            let id = try await firstID(client, harness, .dogs)
            let before = try dogIDs(harness)
            // When the POST routes are fetched with GET (with a valid cookie, as a link would be)
            let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(token)"]
            let uris = ["/favorites/dogs/\(id)?action=add&csrf=\(token)", "/dogs/\(id)/delete?csrf=\(token)",
                        "/dogs/\(id)/move?to=2&csrf=\(token)", "/dogs/reset?csrf=\(token)"]
            for uri in uris {
                let page = try await client.get(uri, headers: cookie)
                // Then it is a 404 or 405 page
                #expect(page.status == .notFound || page.status == .methodNotAllowed, "\(uri): \(page.status)")
            }
            // And nothing changed
            #expect(try dogIDs(harness) == before)
            #expect(try harness.kiosk.catalog.favorites().isEmpty)
        }
    }

    @Test("Over a real socket the cookie is issued, a same-origin form is accepted and a foreign one refused")
    func liveServer() async throws {
        let harness = try await Harness.start()
        do {
            // Given the application on a loopback port (HummingbirdTesting's client sends Host: localhost)
            let app = try buildApplication(kiosk: harness.kiosk, configuration: WebConfiguration(host: "127.0.0.1", port: 0))
            try await app.test(.live) { client in
                let issued = try issuedToken(try await client.get("/dogs"))
                let id = try #require(try harness.kiosk.database.userOrdered(.dogs).first).itemID
                let form = [("csrf", issued), ("action", "add"), ("return", "/dogs")]
                // When the star is posted from another site, then from Kiosk's own origin
                let foreign = try await client.post("/favorites/dogs/\(id)", form: form, cookie: issued, origin: "http://evil.example")
                let before = try harness.kiosk.catalog.favorites().count
                let own = try await client.post("/favorites/dogs/\(id)", form: form, cookie: issued, origin: "http://localhost")
                // Then the first is refused and changes nothing, the second redirects back and stars the dog
                #expect(foreign.status == .forbidden)
                #expect(before == 0)
                #expect(own.status == .seeOther)
                #expect(own.header("Location") == "/dogs")
                #expect(try harness.kiosk.catalog.favorites().map(\.itemID) == [id])
            }
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }
}
