import Foundation
import GRDB
@testable import KioskApp
import KioskCore
import KioskSources
@testable import KioskStore
import KioskTestSupport
import Synchronization
import Testing

/// Reading does not stop because keeping does: a store that cannot be written shows what was fetched, unstored.
@Suite("Catalog service on a full disk")
struct CatalogFullDiskTests {
    @Test("On a full disk a fetched page is shown, not stored and not an error; why is said once; storing resumes when there is room")
    func fullDiskShowsFetchedPages() async throws {
        // Given a store that cannot grow (as on a full disk), and an upstream with a Rick and Morty page too large for
        // the room left in the store's pages
        let database = try AppDatabase.inMemory()
        let limit = try await database.writer.write { db in try Int.fetchOne(db, sql: "PRAGMA page_count")! }
        try await database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = \(limit)") }
        let warnings = Mutex<[String]>([])
        var document = try #require(try JSONSerialization.jsonObject(with: Data(try CatalogServiceTests.cleanPage().utf8)) as? [String: Any])
        document["results"] = try #require(document["results"] as? [[String: Any]]).map { character in
            character.merging(["name": String(repeating: "Rick Sanchez ", count: 5_000)]) { _, long in long }
        }
        let body = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
        let upstream = ScriptedTransport(always: .respond(200, headers: ["Content-Type": "application/json"], body: body))
        let clock = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        let service = CatalogService(sources: Sources.make(.live), database: database, transport: upstream,
                                     now: { clock.withLock { $0 } }, warn: { warning in warnings.withLock { $0.append(warning) } })
        let request = PageRequest(source: .rickandmorty, page: 1)

        // When the page is asked for twice
        let first = try await service.page(request)
        let second = try await service.page(request, policy: .force)

        // Then both show the fetched characters, say they were not stored, and carry no error
        for update in [first, second] {
            #expect(update.origin == .network && !update.page.items.isEmpty && update.error == nil)
            #expect(update.cacheStatus.isStored == false)
        }
        #expect(try database.snapshot(forKey: request.cacheKey) == nil)
        // And why was said once, in words
        #expect(warnings.withLock { $0.count } == 1)
        #expect(warnings.withLock { $0.first?.contains("not kept for offline reading: Storage error: the disk is full") } == true, "\(warnings.withLock { $0 })")

        // When the disk has room again, then the next page is stored
        try await database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1000000") }
        let third = try await service.page(request, policy: .force)
        #expect(third.cacheStatus.isStored)
        #expect(try database.snapshot(forKey: request.cacheKey) != nil)

        // When the disk fills again a minute later (a disk nearly full takes one write and fails the next), then that is
        // not said again; ten minutes after it was said, it is
        func fill() async throws {
            try await database.writer.writeWithoutTransaction { db in
                try db.execute(sql: "DELETE FROM snapshot; DELETE FROM item; VACUUM")
                try db.execute(sql: "PRAGMA max_page_count = \(try Int.fetchOne(db, sql: "PRAGMA page_count")!)")
            }
        }
        clock.withLock { $0 += 60 }
        try await fill()
        #expect(try await service.page(request, policy: .force).cacheStatus.isStored == false)
        #expect(warnings.withLock { $0.count } == 1)
        try await database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1000000") }
        #expect(try await service.page(request, policy: .force).cacheStatus.isStored)
        clock.withLock { $0 += 600 }
        try await fill()
        #expect(try await service.page(request, policy: .force).cacheStatus.isStored == false)
        #expect(warnings.withLock { $0.count } == 2)
    }

    @Test("Starring an item the store does not hold stores it with the star; on a full disk that is a disk-full error, not 'not found'")
    func favoriteOfAnUnstoredItem() async throws {
        // Given a store holding no item, and an item as its source sent it (larger than the room left in its pages)
        let database = try AppDatabase.inMemory()
        let service = CatalogService(sources: Sources.make(.live), database: database, transport: ScriptedTransport(always: .fail(.offline(host: "upstream.test"))),
                                     now: { Date() })
        let item = CatalogItem(source: .dogs, itemID: "rex", title: "Rex", subtitle: "", summary: "", imageURL: nil,
                               detail: .dog(Dog(name: "Rex", description: String(repeating: "A good dog. ", count: 10_000), age: 3, image: nil)))
        // When the store cannot grow (a full disk) and the item is starred
        let limit = try await database.writer.write { db in try Int.fetchOne(db, sql: "PRAGMA page_count")! }
        try await database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = \(limit)") }
        // Then the error says the disk is full (a failure of the world), and nothing is starred
        #expect { try service.addFavorite(item) } throws: { error in (error as? KioskError)?.isDiskFull == true }
        #expect(try service.favorites().isEmpty)
        // And with room again, the star stores the item too, which then reads from the store
        try await database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1000000") }
        try service.addFavorite(item)
        #expect(try service.favorites().map(\.itemID) == ["rex"])
    }

    @Test("On a full disk a fetched picture is shown, not stored and not an error; storing resumes when there is room")
    func fullDiskShowsFetchedPictures() async throws {
        // Given a store that cannot grow, and an upstream answering a picture larger than the room left
        let database = try AppDatabase.inMemory()
        let limit = try await database.writer.write { db in try Int.fetchOne(db, sql: "PRAGMA page_count")! }
        try await database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = \(limit)") }
        let bytes = String(repeating: "p", count: 200_000)
        let upstream = ScriptedTransport(always: .respond(200, headers: ["Content-Type": "image/png", "Cache-Control": "max-age=60"], body: bytes))
        let pipeline = ImagePipeline(transport: upstream, database: database)
        let url = URL(string: "https://i.annihil.test/u/prod/marvel/i/mg/1/portrait_xlarge.jpg")!

        // When it is asked for
        let picture = try await pipeline.image(for: url)

        // Then it is shown as fetched, and said not stored (it was a 507 before)
        #expect(picture.data == Data(bytes.utf8) && picture.origin == .network)
        #expect(picture.cacheStatus.isStored == false)
        #expect(try database.image(forURL: url.absoluteString) == nil)

        // When the disk has room again, Then the next fetch is stored
        try await database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1000000") }
        pipeline.memory.removeAll()
        let again = try await pipeline.image(for: url)
        #expect(again.cacheStatus.isStored)
        #expect(try database.image(forURL: url.absoluteString) != nil)
    }
}
