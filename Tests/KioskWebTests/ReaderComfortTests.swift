import Foundation
import Hummingbird
import HummingbirdTesting
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskWeb

@Suite("Reading comfort")
struct ReaderComfortTests {
    @Test("An item's page has one labelled favorite control, with one star whether set or not")
    func labelledStar() async throws {
        try await withWeb { _, client in
            // Given a character's page, and the page of the same character starred
            let before = try await client.get("/rickandmorty/1")
            let csrf = try issuedToken(before)
            #expect(try await client.post("/favorites/rickandmorty/1", form: [("csrf", csrf), ("action", "add"), ("return", "/rickandmorty/1")],
                                          cookie: csrf).status == .seeOther)
            let after = try await client.get("/rickandmorty/1")
            // Then the control is one toggle whose name holds its visible word and stays the same, its star and
            // pressed state saying whether it is on, with one star
            #expect(before.body.contains(#"aria-label="Favorite: Rick Sanchez" aria-pressed="false">☆ Favorite</button>"#))
            #expect(after.body.contains(#"aria-label="Favorite: Rick Sanchez" aria-pressed="true">★ Favorite</button>"#))
            #expect(!after.body.contains("★ ★"))
            #expect(after.body.components(separatedBy: "class=\"star").count == 2)
        }
    }

    @Test("Edit and Done head the dogs list; Reset is a second step that says what it forgets, away from Done")
    func resetIsDeliberate() async throws {
        try await withWeb { _, client in
            // Given the dogs list, and its editor
            let list = try await client.get("/dogs").body
            let editor = try await client.get("/dogs?edit=1").body
            // Then Edit and Done come before the rows
            let edit = try #require(list.range(of: #"<p class="mode"><a href="/dogs?edit=1">Edit</a></p>"#))
            #expect(edit.lowerBound < (list.range(of: #"<ul class="items"#)?.lowerBound ?? list.startIndex))
            let done = try #require(editor.range(of: #"<p class="mode"><a href="/dogs">Done</a></p>"#))
            let rows = try #require(editor.range(of: #"<ul class="items edit">"#))
            #expect(done.lowerBound < rows.lowerBound)
            // And Reset sits in a closed disclosure after the rows, with what it forgets
            let reset = try #require(editor.range(of: #"<details class="confirm-reset"><summary>Reset…</summary><p>Forget every deletion"#))
            #expect(reset.lowerBound > rows.lowerBound)
        }
    }

    @Test("A deletion from the dogs list can be taken back: the dog shows again in its place; taking back what is not deleted is a 404")
    func undoDelete() async throws {
        try await withWeb { harness, client in
            // Given the dogs list and its editor's token
            let editor = try await client.get("/dogs?edit=1")
            let csrf = try issuedToken(editor)
            let before = try await harness.kiosk.catalog.page(PageRequest(source: .dogs)).page.items.map(\.itemID)
            #expect(before.count >= 3)
            // And each delete form says where its Undo posts
            #expect(editor.body.contains(#"data-undo="/dogs/\#(before[1])/restore""#))
            // When the second dog is deleted, then its deletion taken back
            let form = [("csrf", csrf), ("return", "/dogs?edit=1")]
            #expect(try await client.post(Route.delete(.dogs, before[1]).path, form: form, cookie: csrf).status == .seeOther)
            #expect(try await harness.kiosk.catalog.page(PageRequest(source: .dogs), policy: .offline).page.items.map(\.itemID) == before.filter { $0 != before[1] })
            #expect(try await client.post(Route.restore(.dogs, before[1]).path, form: form, cookie: csrf).status == .seeOther)
            // Then the list is as it was, the dog in its place
            #expect(try await harness.kiosk.catalog.page(PageRequest(source: .dogs), policy: .offline).page.items.map(\.itemID) == before)
            // And taking back again, or on a catalog the user does not order, is a 404
            #expect(try await client.post(Route.restore(.dogs, before[1]).path, form: form, cookie: csrf).status == .notFound)
            #expect(try await client.post(Route.restore(.rickandmorty, "1").path, form: form, cookie: csrf).status == .notFound)
        }
    }

    @Test("Favorites are grouped by catalog in the tabs' order, each group in rows")
    func groupedFavorites() async throws {
        try await withWeb { harness, client in
            // Given a dog and two characters starred, the dog first
            _ = try await client.get("/rickandmorty")
            let dog = try #require(try await harness.kiosk.catalog.page(PageRequest(source: .dogs)).page.items.first)
            try harness.kiosk.catalog.setFavorite(true, source: .dogs, itemID: dog.itemID)
            try harness.kiosk.catalog.setFavorite(true, source: .rickandmorty, itemID: "2")
            try harness.kiosk.catalog.setFavorite(true, source: .rickandmorty, itemID: "1")
            // When the favorites are opened
            let page = try await client.get("/favorites").body
            // Then Rick and Morty comes before Dogs, as in the tabs, each a heading with its count, in rows
            let rick = try #require(page.range(of: "<h2>Rick and Morty (2)</h2>"))
            let dogs = try #require(page.range(of: "<h2>Dogs (1)</h2>"))
            #expect(rick.lowerBound < dogs.lowerBound)
            #expect(!page.contains(#"class="items grid""#))
        }
    }
}
