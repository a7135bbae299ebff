import Foundation
import KioskCore
import Testing
@testable import KioskStore

@Suite("Item payload")
struct PayloadTests {
    /// Items of every kind, with optional fields both present and absent, and extreme numbers.
    static let samples: [CatalogItem] = [
        Fixtures.article("1", title: "Gustave Doré", summary: "Émigré 🎨 engravings", rank: 1,
                         keywords: ["Art", "Paris"]),
        {
            var item = Fixtures.article("2", title: "No image", rank: Int.max)
            item.imageURL = nil
            if case .article(var article) = item.detail {
                article.url = nil
                article.caption = "A caption"
                article.copyright = "© NYT"
                article.images = [ImageReference(url: URL(string: "https://img.test/a.jpg")!, width: 75, height: -1,
                                                 format: "Standard Thumbnail"),
                                  ImageReference(url: URL(string: "https://img.test/b.jpg?x=1&y=%20")!)]
                item.detail = .article(article)
            }
            return item
        }(),
        Fixtures.marvel("1009610", name: "Spider-Man (Peter Parker)"),
        Fixtures.marvel("1011334", name: "3-D Man", thumbnail: false),
        Fixtures.character("1", name: "Rick Sanchez"),
        CatalogItem(source: .rickandmorty, itemID: "2", title: "", subtitle: "", summary: "", imageURL: nil,
                    detail: .rickAndMorty(RickAndMortyCharacter(
                        status: "unknown", species: "", type: "", gender: "", origin: .init(name: "unknown", url: nil),
                        location: .init(name: "Earth", url: URL(string: "https://rm.test/location/20")),
                        episodes: (1...51).map { URL(string: "https://rm.test/episode/\($0)")! }, created: ""))),
        Fixtures.dog("Rex", age: Int.min),
        CatalogItem(source: .dogs, itemID: "0", title: "Zero", subtitle: "", summary: "", imageURL: nil,
                    detail: .dog(Dog(name: "Zero", description: String(repeating: "long ", count: 10_000), age: 0, image: nil))),
        CatalogItem(source: .rickandmorty, itemID: "episode-1", title: "Pilot", subtitle: "S01E01 · December 2, 2013",
                    summary: "", imageURL: nil, detail: .rickAndMortyEpisode(RickAndMortyEpisode(
                        code: "S01E01", airDate: "December 2, 2013",
                        characters: [URL(string: "https://rm.test/character/1")!], created: "2017-11-10T12:56:33.798Z"))),
        CatalogItem(source: .rickandmorty, itemID: "location-3", title: "Citadel of Ricks", subtitle: "", summary: "",
                    imageURL: nil, detail: .rickAndMortyLocation(RickAndMortyLocation(
                        type: "Space station", dimension: "unknown", residents: [], created: ""))),
    ]

    @Test("every kind of item encodes and decodes to an equal value")
    func roundTrip() throws {
        for item in Self.samples {
            #expect(try ItemPayload.decode(ItemPayload.encode(item)) == item, "\(item.id)")
        }
    }

    @Test("every kind of item survives the store unchanged")
    func storeRoundTrip() throws {
        // Given items of every kind saved as a page
        let database = try AppDatabase.inMemory()
        let request = PageRequest(source: .nyt)
        try database.saveSnapshot(Fixtures.snapshot(request, Self.samples))
        // Then the page and each item read back equal
        #expect(try database.snapshot(forKey: request.cacheKey)?.page.items == Self.samples)
        for item in Self.samples {
            #expect(try database.item(source: item.source, itemID: item.itemID) == item)
        }
    }

    @Test("the payload codec knows every stored property of the KioskCore item types")
    func codecCoversEveryProperty() throws {
        // When a KioskCore type grows a property, ItemPayload must write it too (and this count
        // must be updated), or the store would silently drop it.
        func propertyCount(_ value: Any) -> Int { Mirror(reflecting: value).children.count }
        let article = try #require({ if case .article(let a) = Self.samples[0].detail { a } else { nil } }())
        let marvel = try #require({ if case .marvelCharacter(let c) = Self.samples[2].detail { c } else { nil } }())
        let character = try #require({ if case .rickAndMorty(let c) = Self.samples[4].detail { c } else { nil } }())
        let dog = try #require({ if case .dog(let d) = Self.samples[6].detail { d } else { nil } }())
        #expect(propertyCount(Self.samples[0]) == 7)
        #expect(propertyCount(article) == 13)
        #expect(propertyCount(ImageReference(url: URL(string: "https://x.test")!)) == 4)
        #expect(propertyCount(marvel) == 8)
        #expect(propertyCount(MarvelImage(path: "p", fileExtension: "e")) == 2)
        #expect(propertyCount(MarvelCollection.empty) == 2)
        #expect(propertyCount(marvel.links[0]) == 2)
        #expect(propertyCount(character) == 8)
        #expect(propertyCount(character.origin) == 2)
        #expect(propertyCount(dog) == 4)
        let episode = try #require({ if case .rickAndMortyEpisode(let e) = Self.samples[8].detail { e } else { nil } }())
        let location = try #require({ if case .rickAndMortyLocation(let l) = Self.samples[9].detail { l } else { nil } }())
        #expect(propertyCount(episode) == 4)
        #expect(propertyCount(location) == 4)
    }

    @Test("damaged payloads fail to decode instead of producing wrong items")
    func damagedPayloads() throws {
        let payload = try ItemPayload.encode(Self.samples[0])
        #expect(throws: (any Error).self) { try ItemPayload.decode(Data()) }
        #expect(throws: (any Error).self) { try ItemPayload.decode(payload.dropLast()) }
        #expect(throws: (any Error).self) { try ItemPayload.decode(payload + [0]) }
        var unknownFormat = payload
        unknownFormat[unknownFormat.startIndex] = 99
        #expect(throws: (any Error).self) { try ItemPayload.decode(unknownFormat) }
        #expect(throws: (any Error).self) { try ItemPayload.decode(Data("{\"title\":\"json\"}".utf8)) }
    }

    @Test("a page with an unreadable item reads as missing, and lists skip the item")
    func unreadableStoredItem() throws {
        // Given a stored page and favorites whose second item's payload got damaged
        let database = try AppDatabase.inMemory()
        let request = PageRequest(source: .nyt)
        try database.saveSnapshot(Fixtures.snapshot(request, [Fixtures.article("1", title: "Fine"), Fixtures.article("2", title: "Damaged")]))
        try database.setFavorite(true, source: .nyt, itemID: "1")
        try database.setFavorite(true, source: .nyt, itemID: "2")
        try database.writer.write { db in
            try db.execute(sql: "UPDATE item SET payload = x'63' WHERE itemID = '2'")
        }

        // Then the page is a miss (so it gets refetched), and lists show the readable items only
        #expect(try database.snapshot(forKey: request.cacheKey) == nil)
        #expect(try database.item(source: .nyt, itemID: "2") == nil)
        #expect(try database.favorites().map(\.itemID) == ["1"])
        #expect(try database.search("damaged").isEmpty)

        // When the page is fetched again, Then it is whole again
        try database.saveSnapshot(Fixtures.snapshot(request, [Fixtures.article("1", title: "Fine"), Fixtures.article("2", title: "Damaged")]))
        #expect(try database.snapshot(forKey: request.cacheKey)?.page.items.count == 2)
    }
}
