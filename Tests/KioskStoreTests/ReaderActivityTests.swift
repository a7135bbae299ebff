import Foundation
import GRDB
import KioskCore
import KioskTestSupport
import Synchronization
import Testing
@testable import KioskStore

/// A clock the store reads, moved by hand.
private final class StoreClock: Sendable {
    private let time = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    var now: @Sendable () -> Date { { self.time.withLock { $0 } } }
    func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
}

@Suite("The reader's activity: reading history and what changed")
struct ReaderActivityTests {
    @Test("Opened items are listed newest first, opening one again moves it up, and only the newest 100 are kept")
    func readingHistory() throws {
        // Given a store with three characters, read in turn, the first one again
        let clock = StoreClock()
        let database = try AppDatabase.inMemory(now: clock.now)
        try database.saveItems([Fixtures.character("1", name: "Rick"), Fixtures.character("2", name: "Morty"),
                                Fixtures.character("3", name: "Summer")])
        for id in ["1", "2", "3", "1"] {
            clock.advance(60)
            try database.noteRead(source: .rickandmorty, itemID: id)
        }
        // Then the newest comes first, each once, dated when it was read
        let read = try database.recentlyRead(limit: 10, sources: [.rickandmorty])
        #expect(read.map(\.item.itemID) == ["1", "3", "2"])
        #expect(read.first?.readAt == Date(timeIntervalSince1970: 1_800_000_240))
        // And a catalog left out is left out, and the limit holds
        #expect(try database.recentlyRead(limit: 10, sources: [.nyt]).isEmpty)
        #expect(try database.recentlyRead(limit: 2, sources: [.rickandmorty]).count == 2)

        // When 120 more items are read
        for id in 0..<120 {
            clock.advance(1)
            try database.noteRead(source: .marvel, itemID: "m\(id)")
        }
        // Then the history holds the newest 100 only: the three characters are gone
        let rows = try database.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM reading") }
        #expect(rows == AppDatabase.readingHistoryLimit)
        #expect(try database.recentlyRead(limit: 10, sources: [.rickandmorty]).isEmpty)
    }

    @Test("An item read but not stored shows once it is stored; clearing the history forgets everything")
    func unstoredAndCleared() throws {
        let database = try AppDatabase.inMemory()
        // Given an item read before it was stored
        try database.noteRead(source: .nyt, itemID: "a")
        #expect(try database.recentlyRead(limit: 5, sources: [.nyt]).isEmpty)
        // When it is stored, then it shows
        try database.saveItems([Fixtures.article("a", title: "Alpha")])
        #expect(try database.recentlyRead(limit: 5, sources: [.nyt]).map(\.item.title) == ["Alpha"])
        // When the history is cleared, then nothing shows
        try database.clearReadingHistory()
        #expect(try database.recentlyRead(limit: 5, sources: [.nyt]).isEmpty)
    }

    @Test("What changed since a moment: new and updated items per catalog, an unchanged refresh not counted")
    func changesSince() throws {
        // Given two articles stored at a first visit
        let clock = StoreClock()
        let database = try AppDatabase.inMemory(now: clock.now)
        try database.saveItems([Fixtures.article("a", title: "Alpha"), Fixtures.article("b", title: "Beta")])
        let visit = clock.now()
        clock.advance(3600)
        // When, later, one article changes, one is new, one is stored again unchanged, and a character is new
        try database.saveItems([Fixtures.article("a", title: "Alpha, revised"), Fixtures.article("c", title: "Gamma"),
                                Fixtures.article("b", title: "Beta")])
        clock.advance(60)
        try database.saveItems([Fixtures.character("1", name: "Rick")])
        // Then each catalog says how many are new and updated, latest first, in the order of the sources asked
        let changes = try database.changes(since: visit, latest: 5, sources: [.rickandmorty, .nyt, .marvel])
        #expect(changes.map(\.source) == [.rickandmorty, .nyt])
        #expect(changes.last.map { ($0.added, $0.updated) } ?? (0, 0) == (1, 1))
        #expect(changes.last?.latest.map(\.title) == ["Alpha, revised", "Gamma"])
        #expect(changes.first.map { ($0.added, $0.updated) } ?? (0, 0) == (1, 0))
        // And the latest are cut at the number asked; nothing changed after now
        #expect(try database.changes(since: visit, latest: 1, sources: [.nyt]).first?.latest.count == 1)
        #expect(try database.changes(since: clock.now(), latest: 5, sources: [.nyt, .rickandmorty]).isEmpty)
    }

    @Test("A dog the reader deleted from their list is not counted nor shown as new since the last visit")
    func deletedItemsAreNoNews() throws {
        // Given a visit, then the dogs list stored, and one dog deleted from it
        let clock = StoreClock()
        let database = try AppDatabase.inMemory(now: clock.now)
        let visit = clock.now()
        clock.advance(60)
        _ = try database.mergeUserOrder(Fixtures.dogs("A", "B", "C"), source: .dogs)
        try database.deleteFromUserOrder(.dogs, itemID: "B", at: clock.now())
        // When Home asks what changed since the visit
        let changes = try database.changes(since: visit, latest: 5, sources: [.dogs])
        // Then the dogs the list shows are new, the deleted one is not
        #expect(changes.first?.added == 2)
        #expect(changes.first?.latest.map(\.itemID).sorted() == ["A", "C"])
    }

    @Test("A store written before items had a first sight counts its items as updated, not new, when they change")
    func upgradedStore() throws {
        // Given a store file at the previous release's schema (v7) holding an article
        let folder = TemporaryDirectory.url("KioskStoreTests")
        let path = folder.appendingPathComponent("kiosk.sqlite").path
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        do {
            let queue = try DatabaseQueue(path: path)
            try AppDatabase.migrator.migrate(queue, upTo: "v7")
            try queue.write { db in try ItemRecord(Fixtures.article("a", title: "Alpha"), updatedAt: Date(timeIntervalSince1970: 1_700_000_000)).insert(db) }
        }
        // When the current Kiosk opens it and the article changes
        let clock = StoreClock()
        let database = try AppDatabase.open(at: path, now: clock.now)
        let visit = clock.now()
        clock.advance(10)
        try database.saveItems([Fixtures.article("a", title: "Alpha, revised")])
        // Then it is an update, and search still finds it by its new words
        let change = try #require(try database.changes(since: visit, latest: 5, sources: [.nyt]).first)
        #expect((change.added, change.updated) == (0, 1))
        #expect(try database.search("revised", source: .nyt).map(\.itemID) == ["a"])
    }
}
