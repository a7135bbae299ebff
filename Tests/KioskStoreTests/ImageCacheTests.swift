import Foundation
import KioskCore
import Testing
@testable import KioskStore

@Suite("Image cache")
struct ImageCacheTests {
    @Test("a stored image reads back with its bytes and HTTP metadata")
    func roundTrip() throws {
        let database = try AppDatabase.inMemory()
        let image = Fixtures.image("https://img.test/a.jpg", bytes: 1_234)
        try database.saveImage(image, sizeLimit: 10_000)
        #expect(try database.image(forURL: image.url) == image)
        #expect(try database.image(forURL: "https://img.test/missing.jpg") == nil)
        #expect(try database.imageCacheUsage() == (count: 1, bytes: 1_234))
    }

    @Test("over the size limit the least recently used images are evicted first, and a read counts as a use")
    func lruEviction() throws {
        // Given three 100-byte images saved in order A, B, C under a 300-byte limit
        let database = try AppDatabase.inMemory()
        for name in ["a", "b", "c"] {
            try database.saveImage(Fixtures.image("https://img.test/\(name)", bytes: 100), sizeLimit: 300)
        }
        #expect(try database.imageCacheUsage() == (count: 3, bytes: 300))

        // When A is read, then D is saved
        _ = try database.image(forURL: "https://img.test/a")
        try database.saveImage(Fixtures.image("https://img.test/d", bytes: 100), sizeLimit: 300)

        // Then B, the least recently used, is the one evicted
        #expect(try database.image(forURL: "https://img.test/b") == nil)
        for name in ["a", "c", "d"] {
            #expect(try database.image(forURL: "https://img.test/\(name)") != nil, "\(name)")
        }

        // When a 250-byte image arrives
        try database.saveImage(Fixtures.image("https://img.test/big", bytes: 250), sizeLimit: 300)

        // Then older images go until the total fits
        #expect(try database.imageCacheUsage() == (count: 1, bytes: 250))
    }

    @Test("reads are counted in the order they happen, even in a burst")
    func burstOfReads() throws {
        // Given four images saved in order A, B, C, D
        let database = try AppDatabase.inMemory()
        for name in ["a", "b", "c", "d"] {
            try database.saveImage(Fixtures.image("https://img.test/\(name)", bytes: 100), sizeLimit: 1_000)
        }
        // When they are read in the order D, A, C, B, several times, B last
        for _ in 0..<3 {
            for name in ["d", "a", "c", "b"] { _ = try database.image(forURL: "https://img.test/\(name)") }
        }
        // And a new image needs the room of two
        try database.saveImage(Fixtures.image("https://img.test/e", bytes: 200), sizeLimit: 400)

        // Then D and A, the least recently read, are the ones evicted
        #expect(try database.image(forURL: "https://img.test/d") == nil)
        #expect(try database.image(forURL: "https://img.test/a") == nil)
        #expect(try database.imageCacheUsage() == (count: 3, bytes: 400))
    }

    @Test("an image larger than the limit does not stay, and replacing an image updates the usage")
    func limits() throws {
        let database = try AppDatabase.inMemory()
        try database.saveImage(Fixtures.image("https://img.test/a", bytes: 100), sizeLimit: 1_000)
        try database.saveImage(Fixtures.image("https://img.test/a", bytes: 40), sizeLimit: 1_000)
        #expect(try database.imageCacheUsage() == (count: 1, bytes: 40))
        try database.saveImage(Fixtures.image("https://img.test/huge", bytes: 2_000), sizeLimit: 1_000)
        #expect(try database.imageCacheUsage().bytes <= 1_000)
        #expect(try database.image(forURL: "https://img.test/huge") == nil)
        let error = #expect(throws: KioskError.self) {
            try database.saveImage(Fixtures.image("https://img.test/b", bytes: 1), sizeLimit: -1)
        }
        #expect(error?.isInvalidRequest == true)
    }
}
