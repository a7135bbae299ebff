import Foundation
import KioskCore
import Testing
@testable import KioskStore

@Suite("Dogs list")
struct DogsTests {
    @Test("the first merge shows the upstream list in upstream order")
    func firstMerge() throws {
        let database = try AppDatabase.inMemory()
        let shown = try database.mergeDogs(Fixtures.dogs("Rex", "Fido", "Luna"))
        #expect(shown.map(\.itemID) == ["Rex", "Fido", "Luna"])
        #expect(try database.dogs() == shown)
    }

    @Test("a merge keeps the user's order and deletions, appends new dogs and drops dogs upstream no longer has")
    func mergeKeepsUserEdits() throws {
        // Given a list the user reordered and edited
        let database = try AppDatabase.inMemory()
        _ = try database.mergeDogs(Fixtures.dogs("Rex", "Fido", "Luna", "Max"))
        try database.moveDog(itemID: "Max", to: 0)      // Max, Rex, Fido, Luna
        try database.deleteDog(itemID: "Fido")         // Max, Rex, Luna

        // When upstream sends a list without Rex, with Fido again, and two new dogs
        let shown = try database.mergeDogs(Fixtures.dogs("Bella", "Luna", "Fido", "Max", "Coco"))

        // Then the user's order is kept, Fido stays deleted, Rex is gone, newcomers follow in upstream order
        #expect(shown.map(\.itemID) == ["Max", "Luna", "Bella", "Coco"])
        #expect(try database.dogs().map(\.itemID) == ["Max", "Luna", "Bella", "Coco"])
    }

    @Test("a deleted dog stays deleted even after upstream drops it and lists it again")
    func deletionOutlivesUpstream() throws {
        let database = try AppDatabase.inMemory()
        _ = try database.mergeDogs(Fixtures.dogs("Rex", "Fido"))
        try database.deleteDog(itemID: "Fido")
        _ = try database.mergeDogs(Fixtures.dogs("Rex"))
        #expect(try database.mergeDogs(Fixtures.dogs("Rex", "Fido")).map(\.itemID) == ["Rex"])
    }

    @Test("merged dogs get their latest content")
    func mergeUpdatesContent() throws {
        let database = try AppDatabase.inMemory()
        _ = try database.mergeDogs([Fixtures.dog("Rex", age: 3)])
        _ = try database.mergeDogs([Fixtures.dog("Rex", age: 4)])
        #expect(try database.dogs().first?.subtitle == "4 years")
    }

    @Test("deleting a dog returns how many remain; deleting an unknown or already deleted dog is notFound")
    func delete() throws {
        let database = try AppDatabase.inMemory()
        _ = try database.mergeDogs(Fixtures.dogs("Rex", "Fido", "Luna"))
        #expect(try database.deleteDog(itemID: "Fido") == 2)
        #expect(try database.dogs().map(\.itemID) == ["Rex", "Luna"])

        let unknown = #expect(throws: KioskError.self) { try database.deleteDog(itemID: "Nobody") }
        #expect(unknown?.isNotFound == true)
        let again = #expect(throws: KioskError.self) { try database.deleteDog(itemID: "Fido") }
        #expect(again?.isNotFound == true)

        #expect(try database.deleteDog(itemID: "Rex") == 1)
        #expect(try database.deleteDog(itemID: "Luna") == 0)
        #expect(try database.dogs().isEmpty)
    }

    @Test("moving a dog puts it at the 0-based index of the display list")
    func move() throws {
        let database = try AppDatabase.inMemory()
        _ = try database.mergeDogs(Fixtures.dogs("A", "B", "C", "D"))
        try database.deleteDog(itemID: "B")                // A C D
        try database.moveDog(itemID: "A", to: 2)           // C D A
        #expect(try database.dogs().map(\.itemID) == ["C", "D", "A"])
        try database.moveDog(itemID: "A", to: 0)           // A C D
        try database.moveDog(itemID: "D", to: 1)           // A D C
        #expect(try database.dogs().map(\.itemID) == ["A", "D", "C"])
    }

    @Test("moving outside the list is invalidRequest and moving an unknown dog is notFound")
    func moveErrors() throws {
        let database = try AppDatabase.inMemory()
        _ = try database.mergeDogs(Fixtures.dogs("A", "B", "C"))
        for index in [-1, 3, 100] {
            let error = #expect(throws: KioskError.self) { try database.moveDog(itemID: "A", to: index) }
            #expect(error?.isInvalidRequest == true)
        }
        let unknown = #expect(throws: KioskError.self) { try database.moveDog(itemID: "Z", to: 0) }
        #expect(unknown?.isNotFound == true)
        #expect(try database.dogs().map(\.itemID) == ["A", "B", "C"])
    }

    @Test("reset forgets deletions and order and shows the latest upstream list")
    func reset() throws {
        // Given a list whose last dog was deleted after reordering
        let database = try AppDatabase.inMemory()
        _ = try database.mergeDogs(Fixtures.dogs("A", "B", "C"))
        try database.moveDog(itemID: "C", to: 0)
        try database.deleteDog(itemID: "A")
        try database.deleteDog(itemID: "B")
        #expect(try database.deleteDog(itemID: "C") == 0)

        // When the list is reset
        try database.resetDogs()

        // Then every dog is back in upstream order, even before any refetch
        #expect(try database.dogs().map(\.itemID) == ["A", "B", "C"])
        #expect(try database.mergeDogs(Fixtures.dogs("A", "B", "C", "D")).map(\.itemID) == ["A", "B", "C", "D"])
        #expect(try database.stats().dogsDeleted == 0)
    }

    @Test("merging something that is not a dog is invalidRequest and changes nothing")
    func mergeRejectsOtherSources() throws {
        let database = try AppDatabase.inMemory()
        _ = try database.mergeDogs(Fixtures.dogs("A"))
        let error = #expect(throws: KioskError.self) {
            try database.mergeDogs([Fixtures.dog("B"), Fixtures.article("1", title: "Not a dog")])
        }
        #expect(error?.isInvalidRequest == true)
        #expect(try database.dogs().map(\.itemID) == ["A"])
    }
}
