import Foundation

// The Rick and Morty API response as it arrives. Unknown fields (url, info.next/prev) are ignored.

/// `{ info: { count, pages, next, prev }, results: [Item] }` (characters, episodes or locations).
struct RickAndMortyResponseDTO<Item: Decodable>: Decodable {
    var info: RickAndMortyInfoDTO
    var results: [Tolerant<Item>]
}

/// The answer to `/{resource}/{ids}`: an array of the items that exist for several ids, a bare object for one.
struct RickAndMortyByIDsDTO<Item: Decodable>: Decodable {
    var items: [Tolerant<Item>]

    init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var items: [Tolerant<Item>] = []
            while !array.isAtEnd { items.append(try array.decode(Tolerant<Item>.self)) }
            self.items = items
        } else {
            items = [Tolerant<Item>(from: decoder)]
        }
    }
}

/// `{ count, pages, next, prev }`.
struct RickAndMortyInfoDTO: Decodable {
    var count, pages: Int

    enum CodingKeys: String, CodingKey {
        case count, pages
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        count = try c.wholeNumber(.count)
        pages = try c.wholeNumber(.pages)
    }
}

/// One character.
struct RickAndMortyCharacterDTO: Decodable {
    var id: Int
    var name, status, species, type, gender: String
    var origin, location: RickAndMortyPlaceDTO
    var image: URL?
    var episode: [String]
    var created: String

    enum CodingKeys: String, CodingKey {
        case id, name, status, species, type, gender, origin, location, image, episode, created
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.wholeNumber(.id)
        name = try c.decode(String.self, forKey: .name)
        // "unknown" is the API's own word for a value it does not know, so it is the natural default.
        status = try c.lenientString(.status, default: "unknown")
        species = try c.lenientString(.species)
        type = try c.lenientString(.type)
        gender = try c.lenientString(.gender, default: "unknown")
        origin = try c.decodeIfPresent(RickAndMortyPlaceDTO.self, forKey: .origin) ?? .unknown
        location = try c.decodeIfPresent(RickAndMortyPlaceDTO.self, forKey: .location) ?? .unknown
        image = try c.optionalURL(.image)
        episode = try c.stringList(.episode)
        created = try c.lenientString(.created)
    }
}

/// `{ name, url }`, where `url` is "" for places the API has no page for.
struct RickAndMortyPlaceDTO: Decodable {
    var name, url: String

    static let unknown = RickAndMortyPlaceDTO(name: "unknown", url: "")

    enum CodingKeys: String, CodingKey {
        case name, url
    }

    init(name: String, url: String) {
        self.name = name
        self.url = url
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.lenientString(.name, default: "unknown")
        url = try c.lenientString(.url)
    }
}

/// One episode: `id, name, air_date, episode ("S01E01"), characters [URL], url, created`.
struct RickAndMortyEpisodeDTO: Decodable {
    var id: Int
    var name, airDate, code, created: String
    var characters: [String]

    enum CodingKeys: String, CodingKey {
        case id, name, created, characters
        case airDate = "air_date"
        case code = "episode"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.wholeNumber(.id)
        name = try c.decode(String.self, forKey: .name)
        airDate = try c.lenientString(.airDate)
        code = try c.lenientString(.code)
        created = try c.lenientString(.created)
        characters = try c.stringList(.characters)
    }
}

/// One location: `id, name, type, dimension, residents [URL], url, created`.
struct RickAndMortyLocationDTO: Decodable {
    var id: Int
    var name, type, dimension, created: String
    var residents: [String]

    enum CodingKeys: String, CodingKey {
        case id, name, type, dimension, created, residents
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.wholeNumber(.id)
        name = try c.decode(String.self, forKey: .name)
        type = try c.lenientString(.type)
        dimension = try c.lenientString(.dimension)
        created = try c.lenientString(.created)
        residents = try c.stringList(.residents)
    }
}

/// `{"error": "There is nothing here"}` — the body of the API's 404s.
struct RickAndMortyErrorDTO: Decodable {
    var error: String
}
