import Foundation
import KioskCore
import Testing
@testable import KioskStore

@Suite("Favorites")
struct FavoritesTests {
    @Test("favorites of any source are listed newest first, and their IDs per source")
    func listing() throws {
        // Given stored items of two sources
        let database = try AppDatabase.inMemory()
        try database.saveItems([Fixtures.article("1", title: "One"), Fixtures.article("2", title: "Two"),
                                Fixtures.character("7", name: "Rick")])

        // When three are favorited in turn, and the first one again
        try database.setFavorite(true, source: .nyt, itemID: "2")
        try database.setFavorite(true, source: .rickandmorty, itemID: "7")
        try database.setFavorite(true, source: .nyt, itemID: "1")
        try database.setFavorite(true, source: .nyt, itemID: "2")

        // Then the newest is first and favoriting again does not move an item
        #expect(try database.favorites().map(\.id) == ["nyt/1", "rickandmorty/7", "nyt/2"])
        #expect(try database.favoriteIDs(source: .nyt) == ["1", "2"])
        #expect(try database.favoriteIDs(source: .marvel).isEmpty)
    }

    @Test("unfavoriting removes the item from the favorites and is idempotent")
    func unfavorite() throws {
        let database = try AppDatabase.inMemory()
        try database.saveItems([Fixtures.article("1", title: "One")])
        try database.setFavorite(true, source: .nyt, itemID: "1")
        try database.setFavorite(false, source: .nyt, itemID: "1")
        try database.setFavorite(false, source: .nyt, itemID: "1")
        #expect(try database.favorites().isEmpty)
    }

    @Test("an item that is not stored cannot be favorited or unfavorited")
    func unknownItem() throws {
        let database = try AppDatabase.inMemory()
        let favorite = #expect(throws: KioskError.self) { try database.setFavorite(true, source: .marvel, itemID: "404") }
        #expect(favorite?.isNotFound == true)
        let unfavorite = #expect(throws: KioskError.self) { try database.setFavorite(false, source: .marvel, itemID: "404") }
        #expect(unfavorite?.isNotFound == true)
    }

    @Test("favorites survive a page refresh that no longer lists them")
    func surviveRefresh() throws {
        // Given a favorite from a stored page
        let database = try AppDatabase.inMemory()
        let request = PageRequest(source: .nyt)
        try database.saveSnapshot(Fixtures.snapshot(request, [Fixtures.article("1", title: "Fav"), Fixtures.article("2", title: "Other")]))
        try database.setFavorite(true, source: .nyt, itemID: "1")

        // When the page is refreshed without it
        try database.saveSnapshot(Fixtures.snapshot(request, [Fixtures.article("3", title: "New")]))

        // Then it is still a favorite with its content
        #expect(try database.favorites().map(\.title) == ["Fav"])
    }

    @Test("clearing the cache keeps favorites, their items and the dogs edits, and drops the rest")
    func surviveClearCache() throws {
        // Given pages, a favorite, images and an edited dogs list
        let database = try AppDatabase.inMemory()
        let request = PageRequest(source: .nyt)
        try database.saveSnapshot(Fixtures.snapshot(request, [Fixtures.article("1", title: "Fav"), Fixtures.article("2", title: "Other")]))
        try database.setFavorite(true, source: .nyt, itemID: "1")
        try database.saveImage(Fixtures.image("https://img.test/1.jpg", bytes: 10), sizeLimit: 1_000)
        _ = try database.mergeUserOrder(Fixtures.dogs("A", "B", "C"), source: .dogs)
        try database.moveInUserOrder(.dogs, itemID: "C", to: 0)
        try database.deleteFromUserOrder(.dogs, itemID: "B", at: Date())

        // When the cache is cleared
        try database.clearCache()

        // Then the favorite and its item remain, and everything else cached is gone
        #expect(try database.favorites().map(\.title) == ["Fav"])
        #expect(try database.item(source: .nyt, itemID: "1")?.title == "Fav")
        #expect(try database.search("fav").map(\.itemID) == ["1"])
        #expect(try database.item(source: .nyt, itemID: "2") == nil)
        #expect(try database.snapshot(forKey: request.cacheKey) == nil)
        #expect(try database.imageCacheUsage() == (count: 0, bytes: 0))
        #expect(try database.itemCount() == 1)
        // The dogs' items were cache, so the list is empty until the next fetch, which brings
        // back the user's order and deletions.
        #expect(try database.userOrdered(.dogs).isEmpty)
        #expect(try database.mergeUserOrder(Fixtures.dogs("A", "B", "C"), source: .dogs).map(\.itemID) == ["C", "A"])
    }
}
