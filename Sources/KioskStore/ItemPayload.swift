import Foundation
import KioskCore
import Synchronization

/// The stored form of a `CatalogItem` in `item.payload`: a compact binary encoding.
///
/// Why not JSON: measured in release on Linux, `JSONDecoder` needs about 45 µs per NYT article
/// (0.9–1.4 ms for a 20-item page), which alone breaks the "well under 1 ms" budget for reading a
/// page and adds 2 ms to every 50-result search. Reading this format is explicit field-by-field
/// code with no parsing and no key lookups.
///
/// Layout: one format byte, then the fields in declaration order. Integers are zigzag LEB128
/// varints, strings and arrays are a varint count followed by the UTF-8 bytes or the elements,
/// optionals are a 0/1 byte followed by the value, URLs are their absolute string, and
/// `ItemDetail` is a case tag byte followed by its value. A new shape of `CatalogItem` gets a new
/// format byte; rows in an unknown format fail to decode and are treated as missing (refetched).
///
/// Every stored property of every KioskCore type below must be written here: `PayloadTests`
/// counts the properties by reflection and fails when KioskCore grows one this file ignores.
enum ItemPayload {
    static let formatV1: UInt8 = 1

    static func encode(_ item: CatalogItem) throws -> Data {
        var writer = PayloadWriter()
        writer.bytes.reserveCapacity(512)
        writer.byte(formatV1)
        writer.item(item)
        return Data(writer.bytes)
    }

    /// Decoded items by their exact payload bytes. Reading a page decodes its rows again on every
    /// request, and parsing URLs (a Rick and Morty character lists up to 51 episodes) made that most
    /// of the cost of serving a cached page. Keyed by content, so a changed row can never be answered
    /// from here, whichever process wrote it.
    static let memo = DecodedItemMemo(capacity: 2048)

    static func decode(_ payload: Data) throws -> CatalogItem {
        if let item = memo.item(for: payload) { return item }
        let item = try decodeUncached(payload)
        memo.store(item, for: payload)
        return item
    }

    static func decodeUncached(_ payload: Data) throws -> CatalogItem {
        try payload.withUnsafeBytes { buffer in
            var reader = PayloadReader(buffer: buffer)
            guard try reader.byte() == formatV1 else { throw PayloadError.unknownFormat }
            let item = try reader.item()
            guard reader.isAtEnd else { throw PayloadError.malformed }
            return item
        }
    }

    /// Decodes every payload, or returns nil when any of them cannot be decoded (a page with a
    /// hole would be wrong data; nil makes the caller refetch it).
    static func decodeAll(_ payloads: [Data]) -> [CatalogItem]? {
        var items: [CatalogItem] = []
        items.reserveCapacity(payloads.count)
        for payload in payloads {
            guard let item = try? decode(payload) else { return nil }
            items.append(item)
        }
        return items
    }

    /// Decodes the payloads, skipping any that cannot be decoded: lists gathered from many pages
    /// (search, favorites, dogs) still show what they can.
    static func decodeEach(_ payloads: [Data]) -> [CatalogItem] {
        payloads.compactMap { try? decode($0) }
    }
}

/// A bounded map from payload bytes to the item they decode to; when full it starts over, which keeps
/// it simple and its memory bounded (a page's rows are all re-added on its next read).
final class DecodedItemMemo: Sendable {
    private let capacity: Int
    private let items = Mutex<[Data: CatalogItem]>([:])

    init(capacity: Int) { self.capacity = capacity }

    func item(for payload: Data) -> CatalogItem? { items.withLock { $0[payload] } }

    func store(_ item: CatalogItem, for payload: Data) {
        items.withLock { items in
            if items.count >= capacity { items.removeAll(keepingCapacity: true) }
            items[payload] = item
        }
    }
}

enum PayloadError: Error {
    case unknownFormat
    case malformed
}

// MARK: - Writing

struct PayloadWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func int(_ value: Int) {
        // Zigzag, so that small negative numbers stay short too.
        var rest = UInt64(bitPattern: Int64((value << 1) ^ (value >> (Int.bitWidth - 1))))
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            int(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func url(_ value: URL) { string(value.absoluteString) }

    mutating func optional<T>(_ value: T?, _ write: (inout PayloadWriter, T) -> Void) {
        if let value {
            byte(1)
            write(&self, value)
        } else {
            byte(0)
        }
    }

    mutating func array<T>(_ values: [T], _ write: (inout PayloadWriter, T) -> Void) {
        int(values.count)
        for value in values { write(&self, value) }
    }

    mutating func item(_ item: CatalogItem) {
        string(item.source.rawValue)
        string(item.itemID)
        string(item.title)
        string(item.subtitle)
        string(item.summary)
        optional(item.imageURL) { $0.url($1) }
        switch item.detail {
        case .article(let article):
            byte(1)
            self.article(article)
        case .marvelCharacter(let character):
            byte(2)
            marvelCharacter(character)
        case .rickAndMorty(let character):
            byte(3)
            rickAndMorty(character)
        case .dog(let dog):
            byte(4)
            self.dog(dog)
        case .rickAndMortyEpisode(let episode):
            byte(5)
            string(episode.code)
            string(episode.airDate)
            array(episode.characters) { $0.url($1) }
            string(episode.created)
        case .rickAndMortyLocation(let location):
            byte(6)
            string(location.type)
            string(location.dimension)
            array(location.residents) { $0.url($1) }
            string(location.created)
        }
    }

    mutating func article(_ a: Article) {
        int(a.rank)
        optional(a.url) { $0.url($1) }
        string(a.section)
        string(a.subsection)
        string(a.byline)
        string(a.publishedDate)
        string(a.updated)
        string(a.type)
        array(a.keywords) { $0.string($1) }
        array(a.facets) { $0.string($1) }
        array(a.images) { $0.imageReference($1) }
        optional(a.caption) { $0.string($1) }
        optional(a.copyright) { $0.string($1) }
    }

    mutating func imageReference(_ image: ImageReference) {
        url(image.url)
        optional(image.width) { $0.int($1) }
        optional(image.height) { $0.int($1) }
        optional(image.format) { $0.string($1) }
    }

    mutating func marvelCharacter(_ c: MarvelCharacter) {
        optional(c.thumbnail) { writer, image in
            writer.string(image.path)
            writer.string(image.fileExtension)
        }
        string(c.modified)
        marvelCollection(c.comics)
        marvelCollection(c.series)
        marvelCollection(c.stories)
        marvelCollection(c.events)
        array(c.links) { writer, link in
            writer.string(link.type)
            writer.url(link.url)
        }
        string(c.attribution)
    }

    mutating func marvelCollection(_ collection: MarvelCollection) {
        int(collection.available)
        array(collection.items) { $0.string($1) }
    }

    mutating func rickAndMorty(_ c: RickAndMortyCharacter) {
        string(c.status)
        string(c.species)
        string(c.type)
        string(c.gender)
        place(c.origin)
        place(c.location)
        array(c.episodes) { $0.url($1) }
        string(c.created)
    }

    mutating func place(_ place: RickAndMortyCharacter.Place) {
        string(place.name)
        optional(place.url) { $0.url($1) }
    }

    mutating func dog(_ dog: Dog) {
        string(dog.name)
        string(dog.description)
        int(dog.age)
        optional(dog.image) { $0.url($1) }
    }
}

// MARK: - Reading

struct PayloadReader {
    let buffer: UnsafeRawBufferPointer
    var offset = 0

    init(buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    var isAtEnd: Bool { offset == buffer.count }

    mutating func byte() throws -> UInt8 {
        guard offset < buffer.count else { throw PayloadError.malformed }
        defer { offset += 1 }
        return buffer[offset]
    }

    mutating func int() throws -> Int {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try byte()
            guard shift < 64 else { throw PayloadError.malformed }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        let zigzag = Int(truncatingIfNeeded: result)
        return Int(bitPattern: UInt(bitPattern: zigzag) >> 1) ^ -(zigzag & 1)
    }

    mutating func count() throws -> Int {
        let count = try int()
        // Every element takes at least one byte: a larger count is a corrupt payload, and
        // checking it here keeps a bad count from reserving gigabytes.
        guard count >= 0, count <= buffer.count - offset else { throw PayloadError.malformed }
        return count
    }

    mutating func string() throws -> String {
        let length = try count()
        defer { offset += length }
        return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length]), as: UTF8.self)
    }

    mutating func url() throws -> URL {
        guard let url = URL(string: try string()) else { throw PayloadError.malformed }
        return url
    }

    mutating func optional<T>(_ read: (inout PayloadReader) throws -> T) throws -> T? {
        switch try byte() {
        case 0: return nil
        case 1: return try read(&self)
        default: throw PayloadError.malformed
        }
    }

    mutating func array<T>(_ read: (inout PayloadReader) throws -> T) throws -> [T] {
        let count = try count()
        var values: [T] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try read(&self)) }
        return values
    }

    mutating func item() throws -> CatalogItem {
        guard let source = SourceID(rawValue: try string()) else { throw PayloadError.malformed }
        let itemID = try string()
        let title = try string()
        let subtitle = try string()
        let summary = try string()
        let imageURL = try optional { try $0.url() }
        let detail: ItemDetail
        switch try byte() {
        case 1: detail = .article(try article())
        case 2: detail = .marvelCharacter(try marvelCharacter())
        case 3: detail = .rickAndMorty(try rickAndMorty())
        case 4: detail = .dog(try dog())
        case 5:
            detail = .rickAndMortyEpisode(RickAndMortyEpisode(
                code: try string(), airDate: try string(), characters: try array { try $0.url() }, created: try string()))
        case 6:
            detail = .rickAndMortyLocation(RickAndMortyLocation(
                type: try string(), dimension: try string(), residents: try array { try $0.url() }, created: try string()))
        default: throw PayloadError.malformed
        }
        return CatalogItem(source: source, itemID: itemID, title: title, subtitle: subtitle, summary: summary,
                           imageURL: imageURL, detail: detail)
    }

    mutating func article() throws -> Article {
        Article(
            rank: try int(),
            url: try optional { try $0.url() },
            section: try string(),
            subsection: try string(),
            byline: try string(),
            publishedDate: try string(),
            updated: try string(),
            type: try string(),
            keywords: try array { try $0.string() },
            facets: try array { try $0.string() },
            images: try array { try $0.imageReference() },
            caption: try optional { try $0.string() },
            copyright: try optional { try $0.string() })
    }

    mutating func imageReference() throws -> ImageReference {
        ImageReference(url: try url(), width: try optional { try $0.int() }, height: try optional { try $0.int() },
                       format: try optional { try $0.string() })
    }

    mutating func marvelCharacter() throws -> MarvelCharacter {
        MarvelCharacter(
            thumbnail: try optional { MarvelImage(path: try $0.string(), fileExtension: try $0.string()) },
            modified: try string(),
            comics: try marvelCollection(),
            series: try marvelCollection(),
            stories: try marvelCollection(),
            events: try marvelCollection(),
            links: try array { MarvelCharacter.Link(type: try $0.string(), url: try $0.url()) },
            attribution: try string())
    }

    mutating func marvelCollection() throws -> MarvelCollection {
        MarvelCollection(available: try int(), items: try array { try $0.string() })
    }

    mutating func rickAndMorty() throws -> RickAndMortyCharacter {
        RickAndMortyCharacter(
            status: try string(),
            species: try string(),
            type: try string(),
            gender: try string(),
            origin: try place(),
            location: try place(),
            episodes: try array { try $0.url() },
            created: try string())
    }

    mutating func place() throws -> RickAndMortyCharacter.Place {
        RickAndMortyCharacter.Place(name: try string(), url: try optional { try $0.url() })
    }

    mutating func dog() throws -> Dog {
        Dog(name: try string(), description: try string(), age: try int(), image: try optional { try $0.url() })
    }
}
