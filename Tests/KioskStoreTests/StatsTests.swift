import Foundation
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskStore

@Suite("Statistics")
struct StatsTests {
    @Test("stats count items and pages per source, favorites, deleted dogs, images and database size")
    func counts() throws {
        // Given a store with a bit of everything, in a file
        let folder = try TemporaryDirectory.make("KioskStoreTests")
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try AppDatabase.open(at: folder.appendingPathComponent("kiosk.sqlite").path)
        try database.saveSnapshot(Fixtures.snapshot(PageRequest(source: .nyt), [Fixtures.article("1", title: "A"), Fixtures.article("2", title: "B")]))
        try database.saveSnapshot(Fixtures.snapshot(PageRequest(source: .nyt, page: 2), [Fixtures.article("2", title: "B")]))
        try database.saveItems([Fixtures.character("1", name: "Rick")])
        try database.setFavorite(true, source: .rickandmorty, itemID: "1")
        _ = try database.mergeUserOrder(Fixtures.dogs("A", "B"), source: .dogs)
        try database.deleteFromUserOrder(.dogs, itemID: "A", at: Date())
        try database.saveImage(Fixtures.image("https://img.test/a", bytes: 500), sizeLimit: 10_000)

        // When the stats are computed
        let stats = try database.stats()

        // Then every count is right and the file size is measured
        #expect(stats.counts(for: .nyt) == .init(source: .nyt, items: 2, snapshots: 2, favorites: 0))
        #expect(stats.counts(for: .rickandmorty) == .init(source: .rickandmorty, items: 1, snapshots: 0, favorites: 1))
        #expect(stats.counts(for: .dogs).items == 2)
        #expect(stats.counts(for: .marvel).items == 0)
        #expect(stats.sources.map(\.source) == SourceID.allCases)
        #expect(stats.totalItems == 5)
        #expect(stats.totalSnapshots == 2)
        #expect(stats.favorites == 1)
        #expect(stats.counts(for: .dogs).deleted == 1)
        #expect(stats.imageCount == 1 && stats.imageBytes == 500)
        #expect(stats.databaseBytes > 4_096)
    }

    @Test("stats of an empty in-memory store are zeros with a positive size")
    func empty() throws {
        let stats = try AppDatabase.inMemory().stats()
        #expect(stats.totalItems == 0 && stats.favorites == 0 && stats.imageCount == 0)
        #expect(stats.databaseBytes > 0)
    }

    @Test("clearing the cache of a file database gives disk space back")
    func clearCacheShrinksFile() throws {
        // Given a file holding many items
        let folder = try TemporaryDirectory.make("KioskStoreTests")
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try AppDatabase.open(at: folder.appendingPathComponent("kiosk.sqlite").path)
        try database.saveItems((0..<2_000).map {
            Fixtures.article("\($0)", title: "Article \($0)", summary: String(repeating: "words ", count: 100))
        })
        let before = try database.stats().databaseBytes

        // When the cache is cleared
        try database.clearCache()

        // Then the database is much smaller
        #expect(try database.stats().databaseBytes < before / 4)
    }
}
