import Foundation
import KioskCore
import Testing
@testable import KioskStore

@Suite("Snapshots")
struct SnapshotTests {
    @Test("a stored page reads back equal: item order, metadata, validators, skipped items, exact dates")
    func roundTrip() throws {
        // Given a page whose order is not the items' natural order (NYT rank 3, 1, 2)
        let database = try AppDatabase.inMemory()
        let request = PageRequest(source: .nyt, page: 2, query: "Climate", filters: ["period": "7", "kind": "viewed"])
        let items = [
            Fixtures.article("c", title: "Third", rank: 3),
            Fixtures.article("a", title: "First", rank: 1),
            Fixtures.article("b", title: "Second", rank: 2),
        ]
        let snapshot = Fixtures.snapshot(request, items)

        // When it is saved and read back
        try database.saveSnapshot(snapshot)
        let stored = try #require(try database.snapshot(forKey: request.cacheKey))

        // Then everything is equal, down to the order and the sub-millisecond dates
        #expect(stored == snapshot)
        #expect(stored.page.items.map(\.itemID) == ["c", "a", "b"])
        #expect(stored.metadata.fetchedAt == Fixtures.fetchedAt)
        #expect(stored.metadata.validators.etag == "\"v1\"")
    }

    @Test("an unknown key has no snapshot")
    func missingSnapshot() throws {
        let database = try AppDatabase.inMemory()
        #expect(try database.snapshot(forKey: "nyt|page=1") == nil)
    }

    @Test("saving a page again replaces its order and keeps the items of other pages")
    func replaceKeepsOtherPages() throws {
        // Given two stored pages
        let database = try AppDatabase.inMemory()
        let page1 = PageRequest(source: .rickandmorty, page: 1)
        let page2 = PageRequest(source: .rickandmorty, page: 2)
        let rick = Fixtures.character("1", name: "Rick"), morty = Fixtures.character("2", name: "Morty")
        let summer = Fixtures.character("3", name: "Summer"), beth = Fixtures.character("4", name: "Beth")
        try database.saveSnapshot(Fixtures.snapshot(page1, [rick, morty, summer]))
        try database.saveSnapshot(Fixtures.snapshot(page2, [beth]))

        // When page 1 is saved again with another order, one item gone and one new
        let jerry = Fixtures.character("5", name: "Jerry")
        try database.saveSnapshot(Fixtures.snapshot(page1, [summer, jerry, rick], etag: "\"v2\""))

        // Then page 1 has exactly the new order and metadata, page 2 is untouched, and the item
        // that left page 1 is still stored
        let stored = try #require(try database.snapshot(forKey: page1.cacheKey))
        #expect(stored.page.items.map(\.title) == ["Summer", "Jerry", "Rick"])
        #expect(stored.metadata.validators.etag == "\"v2\"")
        #expect(try database.snapshot(forKey: page2.cacheKey)?.page.items.map(\.title) == ["Beth"])
        #expect(try database.item(source: .rickandmorty, itemID: "2")?.title == "Morty")
        #expect(try database.itemCount(source: .rickandmorty) == 5)
    }

    @Test("an item shown by two pages is stored once, and its update shows on both")
    func sharedItems() throws {
        // Given the same article on the list and on a search page
        let database = try AppDatabase.inMemory()
        let list = PageRequest(source: .nyt), search = PageRequest(source: .nyt, query: "mars")
        try database.saveSnapshot(Fixtures.snapshot(list, [Fixtures.article("1", title: "Mars"), Fixtures.article("2", title: "Venus")]))
        try database.saveSnapshot(Fixtures.snapshot(search, [Fixtures.article("1", title: "Mars")]))

        // When the search page brings a newer version of it
        try database.saveSnapshot(Fixtures.snapshot(search, [Fixtures.article("1", title: "Mars, updated")]))

        // Then it is one row, and both pages show the new version
        #expect(try database.itemCount(source: .nyt) == 2)
        #expect(try database.snapshot(forKey: list.cacheKey)?.page.items.first?.title == "Mars, updated")
        #expect(try database.snapshot(forKey: search.cacheKey)?.page.items.first?.title == "Mars, updated")
    }

    @Test("after a 304 only freshness and validators change")
    func updateMetadata() throws {
        // Given a stored page
        let database = try AppDatabase.inMemory()
        let request = PageRequest(source: .nyt)
        let original = Fixtures.snapshot(request, [Fixtures.article("1", title: "One")])
        try database.saveSnapshot(original)

        // When its metadata is updated
        let revalidated = SnapshotMetadata(
            fetchedAt: Fixtures.fetchedAt.addingTimeInterval(600.000_25),
            freshUntil: Fixtures.freshUntil.addingTimeInterval(900.5),
            validators: Validators(etag: "\"v2\"", lastModified: nil))
        try database.renew(Snapshot(page: original.page, metadata: revalidated))

        // Then the metadata is the new one and the page is otherwise the same
        let stored = try #require(try database.snapshot(forKey: request.cacheKey))
        #expect(stored.metadata == revalidated)
        #expect(stored.page == original.page)
    }

    @Test("a 304 for a page cleared meanwhile stores the page again, whole")
    func renewClearedPage() throws {
        // Given a page that was stored and then cleared (by `kiosk cache clear` in another process)
        let database = try AppDatabase.inMemory()
        let request = PageRequest(source: .nyt, page: 1)
        let original = Fixtures.snapshot(request, [Fixtures.article("1", title: "One"), Fixtures.article("2", title: "Two")])
        try database.saveSnapshot(original)
        try database.clearCache()
        #expect(try database.snapshot(forKey: request.cacheKey) == nil)

        // When the revalidation that was in flight gets its 304
        let renewed = SnapshotMetadata(fetchedAt: Fixtures.fetchedAt.addingTimeInterval(60),
                                       freshUntil: Fixtures.freshUntil.addingTimeInterval(60),
                                       validators: Validators(etag: "\"v1\"", lastModified: nil))
        try database.renew(Snapshot(page: original.page, metadata: renewed))

        // Then the page is stored again with its items and the new freshness
        let stored = try #require(try database.snapshot(forKey: request.cacheKey))
        #expect(stored.page.items.map(\.title) == ["One", "Two"])
        #expect(stored.metadata == renewed)
    }

    @Test("large batches are saved whole, and the last copy of a repeated item wins")
    func largeBatches() throws {
        // Given more items than one upsert statement holds, with one item repeated
        let database = try AppDatabase.inMemory()
        let count = AppDatabase.upsertChunkSize * 2 + 345
        var items = (0..<count).map { Fixtures.character("\($0)", name: "Character \($0)") }
        items.append(Fixtures.character("7", name: "Renamed"))

        // When they are saved
        try database.saveItems(items)

        // Then every item is stored once, with the latest content, and searchable
        #expect(try database.itemCount(source: .rickandmorty) == count)
        #expect(try database.item(source: .rickandmorty, itemID: "7")?.title == "Renamed")
        #expect(try database.search("renamed").map(\.itemID) == ["7"])
        #expect(try database.search("character", limit: 10_000).count == count - 1)
    }

    @Test("saving items upserts them without touching any page")
    func saveItems() throws {
        // Given a stored page
        let database = try AppDatabase.inMemory()
        let request = PageRequest(source: .nyt)
        try database.saveSnapshot(Fixtures.snapshot(request, [Fixtures.article("1", title: "Old")]))

        // When a detail fetch saves a new version of its item and a new item
        try database.saveItems([Fixtures.article("1", title: "New"), Fixtures.article("9", title: "Detail only")])

        // Then both are stored, and the page shows the new version in the same order
        #expect(try database.item(source: .nyt, itemID: "9")?.title == "Detail only")
        #expect(try database.snapshot(forKey: request.cacheKey)?.page.items.map(\.title) == ["New"])
        #expect(try database.item(source: .marvel, itemID: "1") == nil)
        #expect(try database.itemCount() == 2)
    }
}
