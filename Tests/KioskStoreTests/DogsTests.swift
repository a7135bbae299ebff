import Foundation
import GRDB
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskStore

@Suite("Dogs list")
struct DogsTests {
    @Test("the first merge shows the upstream list in upstream order")
    func firstMerge() throws {
        let database = try AppDatabase.inMemory()
        let shown = try database.mergeUserOrder(Fixtures.dogs("Rex", "Fido", "Luna"), source: .dogs)
        #expect(shown.map(\.itemID) == ["Rex", "Fido", "Luna"])
        #expect(try database.userOrdered(.dogs) == shown)
    }

    @Test("a merge keeps the user's order and deletions, appends new dogs and drops dogs upstream no longer has")
    func mergeKeepsUserEdits() throws {
        // Given a list the user reordered and edited
        let database = try AppDatabase.inMemory()
        _ = try database.mergeUserOrder(Fixtures.dogs("Rex", "Fido", "Luna", "Max"), source: .dogs)
        try database.moveInUserOrder(.dogs, itemID: "Max", to: 0)      // Max, Rex, Fido, Luna
        try database.deleteFromUserOrder(.dogs, itemID: "Fido", at: Date())         // Max, Rex, Luna

        // When upstream sends a list without Rex, with Fido again, and two new dogs
        let shown = try database.mergeUserOrder(Fixtures.dogs("Bella", "Luna", "Fido", "Max", "Coco"), source: .dogs)

        // Then the user's order is kept, Fido stays deleted, Rex is gone, newcomers follow in upstream order
        #expect(shown.map(\.itemID) == ["Max", "Luna", "Bella", "Coco"])
        #expect(try database.userOrdered(.dogs).map(\.itemID) == ["Max", "Luna", "Bella", "Coco"])
    }

    @Test("a deleted dog stays deleted even after upstream drops it and lists it again")
    func deletionOutlivesUpstream() throws {
        let database = try AppDatabase.inMemory()
        _ = try database.mergeUserOrder(Fixtures.dogs("Rex", "Fido"), source: .dogs)
        try database.deleteFromUserOrder(.dogs, itemID: "Fido", at: Date())
        _ = try database.mergeUserOrder(Fixtures.dogs("Rex"), source: .dogs)
        #expect(try database.mergeUserOrder(Fixtures.dogs("Rex", "Fido"), source: .dogs).map(\.itemID) == ["Rex"])
    }

    @Test("merged dogs get their latest content")
    func mergeUpdatesContent() throws {
        let database = try AppDatabase.inMemory()
        _ = try database.mergeUserOrder([Fixtures.dog("Rex", age: 3)], source: .dogs)
        _ = try database.mergeUserOrder([Fixtures.dog("Rex", age: 4)], source: .dogs)
        #expect(try database.userOrdered(.dogs).first?.subtitle == "4 years")
    }

    @Test("deleting a dog returns how many remain; deleting an unknown or already deleted dog is notFound")
    func delete() throws {
        let database = try AppDatabase.inMemory()
        _ = try database.mergeUserOrder(Fixtures.dogs("Rex", "Fido", "Luna"), source: .dogs)
        #expect(try database.deleteFromUserOrder(.dogs, itemID: "Fido", at: Date()) == 2)
        #expect(try database.userOrdered(.dogs).map(\.itemID) == ["Rex", "Luna"])

        let unknown = #expect(throws: KioskError.self) { try database.deleteFromUserOrder(.dogs, itemID: "Nobody", at: Date()) }
        #expect(unknown?.isNotFound == true)
        let again = #expect(throws: KioskError.self) { try database.deleteFromUserOrder(.dogs, itemID: "Fido", at: Date()) }
        #expect(again?.isNotFound == true)

        #expect(try database.deleteFromUserOrder(.dogs, itemID: "Rex", at: Date()) == 1)
        #expect(try database.deleteFromUserOrder(.dogs, itemID: "Luna", at: Date()) == 0)
        #expect(try database.userOrdered(.dogs).isEmpty)
    }

    @Test("moving a dog puts it at the 0-based index of the display list")
    func move() throws {
        let database = try AppDatabase.inMemory()
        _ = try database.mergeUserOrder(Fixtures.dogs("A", "B", "C", "D"), source: .dogs)
        try database.deleteFromUserOrder(.dogs, itemID: "B", at: Date())                // A C D
        try database.moveInUserOrder(.dogs, itemID: "A", to: 2)           // C D A
        #expect(try database.userOrdered(.dogs).map(\.itemID) == ["C", "D", "A"])
        try database.moveInUserOrder(.dogs, itemID: "A", to: 0)           // A C D
        try database.moveInUserOrder(.dogs, itemID: "D", to: 1)           // A D C
        #expect(try database.userOrdered(.dogs).map(\.itemID) == ["A", "D", "C"])
    }

    @Test("moving outside the list is invalidRequest and moving an unknown dog is notFound")
    func moveErrors() throws {
        let database = try AppDatabase.inMemory()
        _ = try database.mergeUserOrder(Fixtures.dogs("A", "B", "C"), source: .dogs)
        for index in [-1, 3, 100] {
            let error = #expect(throws: KioskError.self) { try database.moveInUserOrder(.dogs, itemID: "A", to: index) }
            #expect(error?.isInvalidRequest == true)
        }
        let unknown = #expect(throws: KioskError.self) { try database.moveInUserOrder(.dogs, itemID: "Z", to: 0) }
        #expect(unknown?.isNotFound == true)
        #expect(try database.userOrdered(.dogs).map(\.itemID) == ["A", "B", "C"])
    }

    @Test("reset forgets deletions and order and shows the latest upstream list")
    func reset() throws {
        // Given a list whose last dog was deleted after reordering
        let database = try AppDatabase.inMemory()
        _ = try database.mergeUserOrder(Fixtures.dogs("A", "B", "C"), source: .dogs)
        try database.moveInUserOrder(.dogs, itemID: "C", to: 0)
        try database.deleteFromUserOrder(.dogs, itemID: "A", at: Date())
        try database.deleteFromUserOrder(.dogs, itemID: "B", at: Date())
        #expect(try database.deleteFromUserOrder(.dogs, itemID: "C", at: Date()) == 0)

        // When the list is reset
        try database.resetUserOrder(.dogs)

        // Then every dog is back in upstream order, even before any refetch
        #expect(try database.userOrdered(.dogs).map(\.itemID) == ["A", "B", "C"])
        #expect(try database.mergeUserOrder(Fixtures.dogs("A", "B", "C", "D"), source: .dogs).map(\.itemID) == ["A", "B", "C", "D"])
        #expect(try database.stats().counts(for: .dogs).deleted == 0)
    }

    @Test("merging something that is not a dog is invalidRequest and changes nothing")
    func mergeRejectsOtherSources() throws {
        let database = try AppDatabase.inMemory()
        _ = try database.mergeUserOrder(Fixtures.dogs("A"), source: .dogs)
        let error = #expect(throws: KioskError.self) {
            try database.mergeUserOrder([Fixtures.dog("B"), Fixtures.article("1", title: "Not a dog")], source: .dogs)
        }
        #expect(error?.isInvalidRequest == true)
        #expect(try database.userOrdered(.dogs).map(\.itemID) == ["A"])
    }

    @Test("a store written by the release before lists had per-catalog orders keeps its dogs edits when upgraded")
    func upgradeKeepsDogsEdits() throws {
        // Given a store file at that release's schema (v6) holding four dogs, reordered by hand and one deleted
        let folder = try TemporaryDirectory.make("KioskStoreTests")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("kiosk.sqlite").path
        do {
            let queue = try DatabaseQueue(path: path)
            try AppDatabase.migrator.migrate(queue, upTo: "v6")
            try queue.write { db in
                for dog in Fixtures.dogs("Rex", "Fido", "Luna", "Max") { try ItemRecord(dog, updatedAt: Date()).insert(db) }
                for (id, position, upstream) in [("Max", 0, 3), ("Rex", 1, 0), ("Fido", 2, 1), ("Luna", 3, 2)] {
                    try db.execute(sql: "INSERT INTO dogOrder (itemID, position, upstreamPosition) VALUES (?, ?, ?)",
                                   arguments: [id, position, upstream])
                }
                try db.execute(sql: "INSERT INTO dogDeletion (itemID, deletedAt) VALUES ('Fido', 0)")
            }
        }
        // When the current Kiosk opens it
        let database = try AppDatabase.open(at: path)
        // Then the dogs show in the user's order without the deleted one, a reset still restores the upstream order,
        // and the old tables are gone
        #expect(try database.userOrdered(.dogs).map(\.itemID) == ["Max", "Rex", "Luna"])
        #expect(try database.stats().counts(for: .dogs).deleted == 1)
        try database.resetUserOrder(.dogs)
        #expect(try database.userOrdered(.dogs).map(\.itemID) == ["Rex", "Fido", "Luna", "Max"])
        let tables = try database.writer.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") }
        #expect(!tables.contains("dogOrder") && !tables.contains("dogDeletion"))
    }

    @Test("two user-ordered catalogs keep their orders apart")
    func ordersPerCatalog() throws {
        // Given the dogs and, as if it were user-ordered too, another catalog's list sharing item ids
        let database = try AppDatabase.inMemory()
        _ = try database.mergeUserOrder(Fixtures.dogs("A", "B", "C"), source: .dogs)
        let others = ["A", "B", "C"].map { Fixtures.article($0, title: "Article \($0)") }
        _ = try database.mergeUserOrder(others, source: .nyt)
        // When one list is edited
        try database.moveInUserOrder(.nyt, itemID: "C", to: 0)
        try database.deleteFromUserOrder(.nyt, itemID: "A", at: Date())
        // Then the other is untouched
        #expect(try database.userOrdered(.nyt).map(\.itemID) == ["C", "B"])
        #expect(try database.userOrdered(.dogs).map(\.itemID) == ["A", "B", "C"])
        try database.resetUserOrder(.dogs)
        #expect(try database.userOrdered(.nyt).map(\.itemID) == ["C", "B"])
    }
}
