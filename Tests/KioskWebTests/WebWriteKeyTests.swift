import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KioskCore
import Testing

private let token = String(repeating: "cd", count: 32)
private let key = HTTPFields.Element.Name("Idempotency-Key")!

@Suite("Writes with an idempotency key are applied once")
struct WebWriteKeyTests {
    @Test("A favorite sent again with its key is answered as the first time and not applied again")
    func favoriteReplay() async throws {
        try await withWeb { harness, client in
            // Given a stored character
            _ = try await client.get("/rickandmorty")
            let form = [("csrf", token), ("action", "add"), ("return", "/favorites")]
            // When it is starred with a key, unstarred without one, then the first write arrives again
            let first = try await client.post("/favorites/rickandmorty/1", form: form, cookie: token, headers: [key: "edit-1"])
            #expect(first.status == .seeOther)
            #expect(first.header("X-Kiosk-Replayed") == nil)
            _ = try await client.post("/favorites/rickandmorty/1", form: [("csrf", token), ("action", "remove")], cookie: token)
            let replay = try await client.post("/favorites/rickandmorty/1", form: form, cookie: token, headers: [key: "edit-1"])
            // Then the replay gets the first answer and changes nothing: the later unstar stands
            #expect(replay.status == .seeOther)
            #expect(replay.header("Location") == "/favorites")
            #expect(replay.header("X-Kiosk-Replayed") == "1")
            #expect(try harness.kiosk.catalog.favoriteIDs(source: .rickandmorty).isEmpty)
        }
    }

    @Test("Deleting the last dog sent twice with its key deletes it once (the reset it caused is not undone)")
    func deleteReplay() async throws {
        try await withWeb { harness, client in
            // Given the dogs list with one dog left
            _ = try await client.get("/dogs")
            var dogs = try harness.kiosk.database.userOrdered(.dogs).map(\.itemID)
            for dog in dogs.dropLast() {
                _ = try await client.post("/dogs/\(dog)/delete", form: [("csrf", token)], cookie: token)
            }
            let last = try #require(dogs.last)
            // When the last one is deleted with a key (the list is fetched again and reset), and that write is sent again
            let first = try await client.post("/dogs/\(last)/delete", form: [("csrf", token)], cookie: token, headers: [key: "k-9"])
            #expect(first.status == .seeOther)
            dogs = try harness.kiosk.database.userOrdered(.dogs).map(\.itemID)
            let replay = try await client.post("/dogs/\(last)/delete", form: [("csrf", token)], cookie: token, headers: [key: "k-9"])
            // Then the second is a replay, and the reset list still holds every dog
            #expect(replay.header("X-Kiosk-Replayed") == "1")
            #expect(try harness.kiosk.database.userOrdered(.dogs).map(\.itemID) == dogs)
            #expect(dogs.contains(last))
        }
    }

    @Test("A key reused for another write, or malformed, is refused with a 400 and nothing changes")
    func keyMisuse() async throws {
        try await withWeb { harness, client in
            _ = try await client.get("/rickandmorty")
            _ = try await client.post("/favorites/rickandmorty/1", form: [("csrf", token), ("action", "add")], cookie: token,
                                      headers: [key: "same"])
            let other = try await client.post("/favorites/rickandmorty/2", form: [("csrf", token), ("action", "add")],
                                              cookie: token, headers: [key: "same"])
            #expect(other.status == .badRequest)
            #expect(try harness.kiosk.catalog.favoriteIDs(source: .rickandmorty) == ["1"])
            let blank = try await client.post("/favorites/rickandmorty/2", form: [("csrf", token), ("action", "add")],
                                              cookie: token, headers: [key: String(repeating: "x", count: 300)])
            #expect(blank.status == .badRequest)
            #expect(try harness.kiosk.catalog.favoriteIDs(source: .rickandmorty) == ["1"])
        }
    }

    @Test("A write refused (no CSRF token) is not recorded: sent again correctly with its key, it applies")
    func refusedIsNotRecorded() async throws {
        try await withWeb { harness, client in
            _ = try await client.get("/rickandmorty")
            let refused = try await client.post("/favorites/rickandmorty/1", form: [("action", "add")], cookie: token,
                                                headers: [key: "retry-me"])
            #expect(refused.status == .forbidden)
            let accepted = try await client.post("/favorites/rickandmorty/1", form: [("csrf", token), ("action", "add")],
                                                 cookie: token, headers: [key: "retry-me"])
            #expect(accepted.status == .seeOther)
            #expect(try harness.kiosk.catalog.favoriteIDs(source: .rickandmorty) == ["1"])
        }
    }
}
