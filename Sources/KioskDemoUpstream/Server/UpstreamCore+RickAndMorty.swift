import Foundation
import HTTPTypes
import KioskCore

extension UpstreamCore {
    /// One of the API's three resources: its path, its filters and how an item matches one, its documents.
    private struct Resource: Sendable {
        let path: String
        /// The filters it accepts, in the order they are echoed into `next`/`prev`.
        let filters: [String]
        let count: Int
        /// The 404 message for an unknown id ("Character not found").
        let notFound: String
        /// Whether a non-numeric id is the real API's 500 ("Hey! you must provide an id") rather than a 404.
        let nonNumericIsServerError: Bool
        /// Whether item `id` matches every (lowercased) filter.
        let matches: @Sendable (Int, [(name: String, value: String)]) -> Bool
        let document: @Sendable (Int, String) -> OrderedJSON
    }

    private static let characters = Resource(
        path: "character", filters: ["name", "status", "species", "type", "gender"], count: RickAndMortyCatalog.count,
        notFound: "Character not found", nonNumericIsServerError: false,
        matches: { id, filters in
            let character = DemoCatalog.shared.rickAndMorty.characters[id - 1]
            return filters.allSatisfy { name, value in
                switch name {
                case "name": character.name.lowercased().contains(value)
                case "status": character.status.lowercased() == value
                case "species": character.species.lowercased() == value
                case "type": character.type.lowercased() == value
                default: character.gender.lowercased() == value
                }
            }
        },
        document: { id, base in Documents.rickAndMortyCharacter(DemoCatalog.shared.rickAndMorty.characters[id - 1], base: base) })

    private static let episodes = Resource(
        path: "episode", filters: ["name", "episode"], count: RickAndMortyCatalog.episodeCount,
        notFound: "Episode not found", nonNumericIsServerError: true,
        matches: { id, filters in
            let episode = DemoCatalog.shared.rickAndMorty.episodes[id - 1]
            return filters.allSatisfy { name, value in
                (name == "name" ? episode.name : episode.code).lowercased().contains(value)
            }
        },
        document: { id, base in Documents.rickAndMortyEpisode(DemoCatalog.shared.rickAndMorty.episodes[id - 1], base: base) })

    private static let locations = Resource(
        path: "location", filters: ["name", "type", "dimension"], count: RickAndMortyWorld.locationCount,
        notFound: "Location not found", nonNumericIsServerError: true,
        matches: { id, filters in
            let location = DemoCatalog.shared.rickAndMorty.places[id - 1]
            return filters.allSatisfy { name, value in
                switch name {
                case "name": location.name.lowercased().contains(value)
                case "type": location.type.lowercased().contains(value)
                default: location.dimension.lowercased().contains(value)
                }
            }
        },
        document: { id, base in Documents.rickAndMortyLocation(DemoCatalog.shared.rickAndMorty.places[id - 1], base: base) })

    /// `GET /api`, and for each of `character`, `episode` and `location`: the paged list, `/{id}` and `/{id},{id},...`.
    func rickAndMorty(path: String, query: QueryItems, base: String) -> Reply {
        let parts = path.split(separator: "/")  // ["api", resource?, ids?]
        if parts.count == 1 {
            return cache.reply(for: "rm|index") {
                .json(.ok, OrderedJSON.object([
                    ("characters", .string("\(base)/api/character")),
                    ("locations", .string("\(base)/api/location")),
                    ("episodes", .string("\(base)/api/episode")),
                ]).compactBytes, cacheControl: Reply.Lifetime.rickAndMorty)
            }
        }
        let resource: Resource? = switch parts[1] {
        case "character": Self.characters
        case "episode": Self.episodes
        case "location": Self.locations
        default: nil
        }
        switch (resource, parts.count) {
        case (let resource?, 2): return page(of: resource, query: query, base: base)
        case (let resource?, 3): return items(of: resource, ids: parts[2], base: base)
        default: return .error(.notFound, Documents.rickAndMortyError("There is nothing here"))
        }
    }

    private func page(of resource: Resource, query: QueryItems, base: String) -> Reply {
        // Like the real API, a page that is not a positive number is page 1.
        let page = query["page"].flatMap { Int($0) }.map { max(1, $0) } ?? 1
        let filters: [(name: String, value: String)] = resource.filters.compactMap { name in
            guard let value = query[name], !value.isEmpty else { return nil }
            return (name, value)
        }
        let key = "rm|\(resource.path)|page|\(page)|" + filters.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        return cache.reply(for: key) {
            let lowered = filters.map { (name: $0.name, value: $0.value.lowercased()) }
            let matches = (1...resource.count).filter { resource.matches($0, lowered) }
            let size = RickAndMortyCatalog.pageSize
            let pages = (matches.count + size - 1) / size
            // An empty result is a 404 upstream, and so it is here; clients must treat it as "no items".
            guard page <= pages else {
                return .json(.notFound, Documents.rickAndMortyError("There is nothing here"),
                             cacheControl: Reply.Lifetime.rickAndMorty)
            }
            func link(_ target: Int) -> String? {
                guard (1...pages).contains(target) else { return nil }
                let extra = filters.map { "&\($0.name)=\(Self.encodeQueryValue($0.value))" }.joined()
                return "\(base)/api/\(resource.path)?page=\(target)\(extra)"
            }
            let slice = matches[((page - 1) * size)..<min(page * size, matches.count)]
            return .json(.ok, Documents.rickAndMortyPage(count: matches.count, pages: pages, next: link(page + 1),
                                                         previous: link(page - 1),
                                                         results: slice.map { resource.document($0, base) }),
                         cacheControl: Reply.Lifetime.rickAndMorty)
        }
    }

    private func items(of resource: Resource, ids text: Substring, base: String) -> Reply {
        // `1,2,3` (or `[1,2,3]`) asks for an array; unknown ids are left out, as upstream does.
        if text.contains(",") || text.hasPrefix("[") {
            let ids = text.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).split(separator: ",")
                .compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
                .filter { (1...resource.count).contains($0) }
            return cache.reply(for: "rm|\(resource.path)|ids|\(ids.map(String.init).joined(separator: ","))") {
                .json(.ok, OrderedJSON.array(ids.map { resource.document($0, base) }).compactBytes,
                      cacheControl: Reply.Lifetime.rickAndMorty)
            }
        }
        guard let id = Int(text) else {
            return resource.nonNumericIsServerError
                ? .error(.internalServerError, Documents.rickAndMortyError("Hey! you must provide an id"))
                : .error(.notFound, Documents.rickAndMortyError(resource.notFound))
        }
        guard (1...resource.count).contains(id) else {
            return .error(.notFound, Documents.rickAndMortyError(resource.notFound))
        }
        return cache.reply(for: "rm|\(resource.path)|id|\(id)") {
            .json(.ok, resource.document(id, base).compactBytes, cacheControl: Reply.Lifetime.rickAndMorty)
        }
    }

    private static let queryValueAllowed: CharacterSet = {
        var set = CharacterSet.urlQueryAllowed
        set.remove(charactersIn: "&=+#?")
        return set
    }()

    static func encodeQueryValue(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: queryValueAllowed) ?? value
    }
}
