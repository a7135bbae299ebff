import Foundation

// The Rick and Morty API response as it arrives. Unknown fields (url, info.next/prev) are ignored.

/// `{ info: { count, pages, next, prev }, results: [Character] }`.
struct RickAndMortyResponseDTO: Decodable {
    var info: RickAndMortyInfoDTO
    var results: [Tolerant<RickAndMortyCharacterDTO>]
}

/// `{ count, pages, next, prev }`.
struct RickAndMortyInfoDTO: Decodable {
    var count, pages: Int
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
        id = try c.decode(Int.self, forKey: .id)
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

/// `{"error": "There is nothing here"}` — the body of the API's 404s.
struct RickAndMortyErrorDTO: Decodable {
    var error: String
}
