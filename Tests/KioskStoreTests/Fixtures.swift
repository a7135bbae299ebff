import Foundation
import KioskCore
@testable import KioskStore

/// Items, pages and files the store tests share. Everything is real: real SQLite, real files.
enum Fixtures {
    static func article(_ id: String, title: String, summary: String = "", rank: Int = 1,
                        keywords: [String] = [], section: String = "World") -> CatalogItem {
        CatalogItem(
            source: .nyt, itemID: id, title: title, subtitle: "By A. Reporter", summary: summary,
            imageURL: URL(string: "https://static.nyt.test/\(id).jpg"),
            detail: .article(Article(
                rank: rank, url: URL(string: "https://www.nytimes.test/\(id).html"), section: section,
                subsection: "", byline: "By A. Reporter", publishedDate: "2024-05-01", updated: "2024-05-01 10:00:00",
                type: "Article", keywords: keywords, facets: [], images: [], caption: nil, copyright: nil)))
    }

    static func character(_ id: String, name: String, species: String = "Human") -> CatalogItem {
        CatalogItem(
            source: .rickandmorty, itemID: id, title: name, subtitle: "Alive - \(species)", summary: "",
            imageURL: URL(string: "https://rickandmorty.test/avatar/\(id).jpeg"),
            detail: .rickAndMorty(RickAndMortyCharacter(
                status: "Alive", species: species, type: "", gender: "Male",
                origin: .init(name: "Earth (C-137)", url: nil), location: .init(name: "Citadel of Ricks", url: nil),
                episodes: [], created: "2017-11-04T18:48:46.250Z")))
    }

    static func marvel(_ id: String, name: String, thumbnail: Bool = true) -> CatalogItem {
        CatalogItem(
            source: .marvel, itemID: id, title: name, subtitle: "12 comics", summary: "A hero from Queens",
            imageURL: thumbnail ? URL(string: "https://i.annihil.test/u/prod/marvel/i/mg/\(id)/portrait_xlarge.jpg") : nil,
            detail: .marvelCharacter(MarvelCharacter(
                thumbnail: thumbnail ? MarvelImage(path: "https://i.annihil.test/u/prod/marvel/i/mg/\(id)", fileExtension: "jpg") : nil,
                modified: "2020-07-21T10:30:10-0400",
                comics: MarvelCollection(available: 42, items: ["Amazing Fantasy (1962) #15", "Spider-Man (2016) #1"]),
                series: MarvelCollection(available: 1, items: ["Spider-Man (2016 - Present)"]),
                stories: .empty, events: MarvelCollection(available: 3, items: []),
                links: [MarvelCharacter.Link(type: "detail", url: URL(string: "https://marvel.test/characters/\(id)")!)],
                attribution: "Data provided by Marvel. © 2024 MARVEL")))
    }

    static func dog(_ name: String, age: Int = 3) -> CatalogItem {
        CatalogItem(
            source: .dogs, itemID: name, title: name, subtitle: "\(age) years", summary: "A good dog called \(name)",
            imageURL: URL(string: "https://dogs.test/\(name).jpg"),
            detail: .dog(Dog(name: name, description: "A good dog called \(name)", age: age,
                             image: URL(string: "https://dogs.test/\(name).jpg"))))
    }

    static func dogs(_ names: String...) -> [CatalogItem] { names.map { dog($0) } }

    /// Dates with sub-millisecond fractions, to prove they round-trip exactly.
    static let fetchedAt = Date(timeIntervalSinceReferenceDate: 737_000_000.123_456_7)
    static let freshUntil = Date(timeIntervalSinceReferenceDate: 737_000_300.987_654_3)

    static func snapshot(_ request: PageRequest, _ items: [CatalogItem], etag: String? = "\"v1\"",
                         fetchedAt: Date = fetchedAt, freshUntil: Date = freshUntil) -> Snapshot {
        Snapshot(
            page: Page(request: request, items: items, totalItems: 100, totalPages: 5,
                       skipped: [DecodingIssue(path: "results[7].title", message: "expected a string")],
                       attribution: "Data provided by Marvel. © 2024 MARVEL"),
            metadata: SnapshotMetadata(fetchedAt: fetchedAt, freshUntil: freshUntil,
                                       validators: Validators(etag: etag, lastModified: "Wed, 01 May 2024 10:00:00 GMT")))
    }

    static func image(_ url: String, bytes: Int) -> StoredImage {
        StoredImage(url: url, data: Data(repeating: 0xAB, count: bytes), contentType: "image/jpeg",
                    etag: "\"img\"", lastModified: nil, fetchedAt: fetchedAt, freshUntil: freshUntil)
    }
}

extension KioskError {
    /// The message of a `.storage` error, or nil for any other case.
    var storageMessage: String? {
        if case .storage(let message) = self { return message }
        return nil
    }

    var isNotFound: Bool {
        if case .notFound = self { return true }
        return false
    }

    var isInvalidRequest: Bool {
        if case .invalidRequest = self { return true }
        return false
    }
}
