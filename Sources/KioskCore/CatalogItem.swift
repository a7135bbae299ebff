public import Foundation

/// One item of any catalog: the common fields every list shows, plus the source-specific detail.
public struct CatalogItem: Codable, Sendable, Hashable, Identifiable {
    /// The catalog this item belongs to.
    public var source: SourceID
    /// The upstream identifier as text (numbers are kept as their decimal form).
    public var itemID: String
    /// Headline, character name or dog name.
    public var title: String
    /// A short second line: byline, status and species, or the dog's age.
    public var subtitle: String
    /// Abstract or description; may be empty.
    public var summary: String
    /// The picture a list row shows, when there is one.
    public var imageURL: URL?
    /// Everything else the detail screen shows.
    public var detail: ItemDetail

    /// A stable identity across sources: `source/itemID`.
    public var id: String { "\(source.rawValue)/\(itemID)" }

    /// The longest `itemID`, in bytes of UTF-8, that Kiosk lists and opens. Every listed item must be
    /// reachable at `/{source}/{id}`, so a page leaves longer ids out (`Page.init`) and the web routes
    /// accept exactly this much. Ids are numbers or slugs of names; 1,024 bytes (3 KB percent-encoded)
    /// keeps every link well within what browsers and servers take in a URL.
    public static let maximumIDLength = 1024

    /// Whether `itemID` can be listed and linked: not empty, within `maximumIDLength`, no control characters.
    public static func isLinkableID(_ itemID: String) -> Bool {
        !itemID.isEmpty && itemID.utf8.count <= maximumIDLength
            && !itemID.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    public init(source: SourceID, itemID: String, title: String, subtitle: String, summary: String,
                imageURL: URL?, detail: ItemDetail) {
        self.source = source
        self.itemID = itemID
        self.title = title
        self.subtitle = subtitle
        self.summary = summary
        self.imageURL = imageURL
        self.detail = detail
    }

    /// Extra words that offline search should find (keywords, facets, species...).
    public var searchKeywords: [String] {
        switch detail {
        case .article(let a): a.keywords + a.facets + [a.section, a.subsection].filter { !$0.isEmpty }
        case .marvelCharacter: []
        case .rickAndMorty(let c): [c.species, c.type, c.origin.name, c.location.name].filter { !$0.isEmpty }
        case .rickAndMortyEpisode(let e): [e.code]
        case .rickAndMortyLocation(let l): [l.type, l.dimension].filter { !$0.isEmpty }
        case .dog: []
        }
    }
}

/// The source-specific part of an item.
public enum ItemDetail: Codable, Sendable, Hashable {
    case article(Article)
    case marvelCharacter(MarvelCharacter)
    case rickAndMorty(RickAndMortyCharacter)
    /// An episode a Rick and Morty character links to (stored with the characters, id `episode-N`).
    case rickAndMortyEpisode(RickAndMortyEpisode)
    /// A place a Rick and Morty character comes from or lives in (id `location-N`).
    case rickAndMortyLocation(RickAndMortyLocation)
    case dog(Dog)
}

/// A picture at a known size.
public struct ImageReference: Codable, Sendable, Hashable {
    public var url: URL
    public var width: Int?
    public var height: Int?
    public var format: String?

    public init(url: URL, width: Int? = nil, height: Int? = nil, format: String? = nil) {
        self.url = url
        self.width = width
        self.height = height
        self.format = format
    }
}

/// A New York Times most-popular article.
public struct Article: Codable, Sendable, Hashable {
    /// 1-based position in the ranking it was fetched from.
    public var rank: Int
    public var url: URL?
    public var section: String
    public var subsection: String
    public var byline: String
    /// "YYYY-MM-DD" as published; kept as text because it is a calendar date, not an instant.
    public var publishedDate: String
    public var updated: String
    public var type: String
    public var keywords: [String]
    /// des/org/per/geo facets flattened.
    public var facets: [String]
    /// Images, smallest first.
    public var images: [ImageReference]
    public var caption: String?
    public var copyright: String?

    public init(rank: Int, url: URL?, section: String, subsection: String, byline: String,
                publishedDate: String, updated: String, type: String, keywords: [String],
                facets: [String], images: [ImageReference], caption: String?, copyright: String?) {
        self.rank = rank
        self.url = url
        self.section = section
        self.subsection = subsection
        self.byline = byline
        self.publishedDate = publishedDate
        self.updated = updated
        self.type = type
        self.keywords = keywords
        self.facets = facets
        self.images = images
        self.caption = caption
        self.copyright = copyright
    }

    /// The largest image, for the detail screen.
    public var largestImage: ImageReference? {
        images.max { ($0.width ?? 0) * ($0.height ?? 0) < ($1.width ?? 0) * ($1.height ?? 0) }
    }
}

/// A Marvel character.
public struct MarvelCharacter: Codable, Sendable, Hashable {
    /// Picture base path and extension; nil when Marvel has no picture ("image_not_available").
    public var thumbnail: MarvelImage?
    public var modified: String
    public var comics: MarvelCollection
    public var series: MarvelCollection
    public var stories: MarvelCollection
    public var events: MarvelCollection
    public var links: [Link]
    /// Marvel's attribution text, to be shown wherever this data is shown.
    public var attribution: String

    public init(thumbnail: MarvelImage?, modified: String, comics: MarvelCollection, series: MarvelCollection,
                stories: MarvelCollection, events: MarvelCollection, links: [Link], attribution: String) {
        self.thumbnail = thumbnail
        self.modified = modified
        self.comics = comics
        self.series = series
        self.stories = stories
        self.events = events
        self.links = links
        self.attribution = attribution
    }

    /// A typed link such as "detail" or "wiki".
    public struct Link: Codable, Sendable, Hashable {
        public var type: String
        public var url: URL
        public init(type: String, url: URL) { self.type = type; self.url = url }
    }
}

/// Marvel's image reference: URL = path/variant.extension.
public struct MarvelImage: Codable, Sendable, Hashable {
    public var path: String
    public var fileExtension: String
    public init(path: String, fileExtension: String) { self.path = path; self.fileExtension = fileExtension }

    /// The URL of one of Marvel's variants, e.g. `portrait_xlarge` or `standard_medium`.
    public func url(variant: String) -> URL? { URL(string: "\(path)/\(variant).\(fileExtension)") }
}

/// One of a Marvel character's collections (comics, series, stories, events).
public struct MarvelCollection: Codable, Sendable, Hashable {
    /// The total number available upstream; may exceed `items.count` (Marvel returns at most 20).
    public var available: Int
    public var items: [String]
    public init(available: Int, items: [String]) { self.available = available; self.items = items }
    /// Whether more exist than are listed.
    public var hasMore: Bool { available > items.count }
    public static let empty = MarvelCollection(available: 0, items: [])
}

/// A Rick and Morty character.
public struct RickAndMortyCharacter: Codable, Sendable, Hashable {
    public var status: String
    public var species: String
    public var type: String
    public var gender: String
    public var origin: Place
    public var location: Place
    public var episodes: [URL]
    public var created: String

    public init(status: String, species: String, type: String, gender: String, origin: Place,
                location: Place, episodes: [URL], created: String) {
        self.status = status
        self.species = species
        self.type = type
        self.gender = gender
        self.origin = origin
        self.location = location
        self.episodes = episodes
        self.created = created
    }

    /// A named place with an optional API link.
    public struct Place: Codable, Sendable, Hashable {
        public var name: String
        public var url: URL?
        public init(name: String, url: URL?) { self.name = name; self.url = url }
    }

    /// The status emoji the original app showed: Alive 🕺, Dead 💀, anything else "?".
    public var statusEmoji: String {
        switch status.lowercased() {
        case "alive": "🕺"
        case "dead": "💀"
        default: "?"
        }
    }
}

/// A dog of the dogs list.
public struct Dog: Codable, Sendable, Hashable {
    public var name: String
    public var description: String
    public var age: Int
    public var image: URL?
    public init(name: String, description: String, age: Int, image: URL?) {
        self.name = name
        self.description = description
        self.age = age
        self.image = image
    }
}

extension ItemDetail {
    private enum CodingKeys: String, CodingKey {
        case type, article, marvelCharacter, rickAndMorty, rickAndMortyEpisode, rickAndMortyLocation, dog
    }

    /// The detail's kind as it appears in JSON: `article`, `marvelCharacter`, `rickAndMorty`,
    /// `rickAndMortyEpisode`, `rickAndMortyLocation` or `dog`.
    public var kind: String {
        switch self {
        case .article: "article"
        case .marvelCharacter: "marvelCharacter"
        case .rickAndMorty: "rickAndMorty"
        case .rickAndMortyEpisode: "rickAndMortyEpisode"
        case .rickAndMortyLocation: "rickAndMortyLocation"
        case .dog: "dog"
        }
    }

    // A flat, stable JSON shape — {"type": "article", "article": {...}} — rather than the synthesized
    // enum coding, because `--json` output and the JSON API are a public contract.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "article": self = .article(try container.decode(Article.self, forKey: .article))
        case "marvelCharacter": self = .marvelCharacter(try container.decode(MarvelCharacter.self, forKey: .marvelCharacter))
        case "rickAndMorty": self = .rickAndMorty(try container.decode(RickAndMortyCharacter.self, forKey: .rickAndMorty))
        case "rickAndMortyEpisode":
            self = .rickAndMortyEpisode(try container.decode(RickAndMortyEpisode.self, forKey: .rickAndMortyEpisode))
        case "rickAndMortyLocation":
            self = .rickAndMortyLocation(try container.decode(RickAndMortyLocation.self, forKey: .rickAndMortyLocation))
        case "dog": self = .dog(try container.decode(Dog.self, forKey: .dog))
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container,
                                                   debugDescription: "unknown item detail type \(type)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .type)
        switch self {
        case .article(let value): try container.encode(value, forKey: .article)
        case .marvelCharacter(let value): try container.encode(value, forKey: .marvelCharacter)
        case .rickAndMorty(let value): try container.encode(value, forKey: .rickAndMorty)
        case .rickAndMortyEpisode(let value): try container.encode(value, forKey: .rickAndMortyEpisode)
        case .rickAndMortyLocation(let value): try container.encode(value, forKey: .rickAndMortyLocation)
        case .dog(let value): try container.encode(value, forKey: .dog)
        }
    }
}
