import Foundation

// The Marvel Comics API response as it arrives. Unknown fields (code, etag, resourceURI...) are ignored.

/// `{ code, status, copyright, attributionText, attributionHTML, etag, data: {...} }`.
struct MarvelResponseDTO: Decodable {
    var attributionText: String?
    var data: MarvelDataDTO
}

/// `{ offset, limit, total, count, results: [Character] }`.
struct MarvelDataDTO: Decodable {
    var offset: Int?
    var total: Int
    var results: [Tolerant<MarvelCharacterDTO>]

    enum CodingKeys: String, CodingKey {
        case offset, total, results
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        offset = try c.wholeNumberIfPresent(.offset)
        total = try c.wholeNumber(.total)
        results = try c.decode([Tolerant<MarvelCharacterDTO>].self, forKey: .results)
    }
}

/// One character.
struct MarvelCharacterDTO: Decodable {
    var id: Int
    var name, description, modified: String
    var thumbnail: MarvelThumbnailDTO?
    var urls: [MarvelURLDTO]
    var comics, series, stories, events: MarvelCollectionDTO

    enum CodingKeys: String, CodingKey {
        case id, name, description, modified, thumbnail, urls, comics, series, stories, events
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.wholeNumber(.id)
        name = try c.decode(String.self, forKey: .name)
        description = try c.lenientString(.description)
        modified = try c.lenientString(.modified)
        thumbnail = try c.decodeIfPresent(MarvelThumbnailDTO.self, forKey: .thumbnail)
        urls = try c.lenientArray(.urls)
        comics = try c.decodeIfPresent(MarvelCollectionDTO.self, forKey: .comics) ?? .empty
        series = try c.decodeIfPresent(MarvelCollectionDTO.self, forKey: .series) ?? .empty
        stories = try c.decodeIfPresent(MarvelCollectionDTO.self, forKey: .stories) ?? .empty
        events = try c.decodeIfPresent(MarvelCollectionDTO.self, forKey: .events) ?? .empty
    }
}

/// `{ path, extension }`; the image URL is `path/variant.extension`.
struct MarvelThumbnailDTO: Decodable {
    var path, fileExtension: String

    enum CodingKeys: String, CodingKey {
        case path
        case fileExtension = "extension"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        path = try c.lenientString(.path)
        fileExtension = try c.lenientString(.fileExtension, default: "jpg")
    }
}

/// `{ type, url }`, e.g. `detail`, `wiki`, `comiclink`.
struct MarvelURLDTO: Decodable {
    var type: String
    var url: URL?

    enum CodingKeys: String, CodingKey {
        case type, url
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.lenientString(.type)
        url = try c.optionalURL(.url)
    }
}

/// `{ available, collectionURI, items: [{ resourceURI, name }], returned }`.
struct MarvelCollectionDTO: Decodable {
    var available: Int
    var names: [String]

    static let empty = MarvelCollectionDTO(available: 0, names: [])

    enum CodingKeys: String, CodingKey {
        case available, items
    }

    struct ItemDTO: Decodable {
        var name: String?
    }

    init(available: Int, names: [String]) {
        self.available = available
        self.names = names
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        names = try c.lenientArray(.items, of: ItemDTO.self)
            .compactMap { $0.name?.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty }
        // `available` is the upstream total and may exceed the (at most 20) items returned.
        available = try c.lenientInt(.available, default: names.count)
    }
}
