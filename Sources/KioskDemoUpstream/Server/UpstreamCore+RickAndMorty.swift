import KioskCore
import HTTPTypes
import Foundation

extension UpstreamCore {
    /// The filters `/api/character` accepts, in the order they are echoed into `next`/`prev`.
    private static let rickAndMortyFilters = ["name", "status", "species", "type", "gender"]

    /// `GET /api`, `/api/character`, `/api/character/{id}` and `/api/character/{id},{id},...`.
    func rickAndMorty(path: String, query: QueryItems, base: String) -> Reply {
        let parts = path.split(separator: "/")  // ["api", "character", ids?]
        switch parts.count {
        case 1:
            return cache.reply(for: "rm|index") {
                .json(.ok, OrderedJSON.object([
                    ("characters", .string("\(base)/api/character")),
                    ("locations", .string("\(base)/api/location")),
                    ("episodes", .string("\(base)/api/episode")),
                ]).compactBytes, cacheControl: Reply.Lifetime.rickAndMorty)
            }
        case 2 where parts[1] == "character":
            return rickAndMortyPage(query: query, base: base)
        case 3 where parts[1] == "character":
            return rickAndMortyCharacters(ids: parts[2], base: base)
        default:
            return .error(.notFound, Documents.rickAndMortyError("There is nothing here"))
        }
    }

    private func rickAndMortyPage(query: QueryItems, base: String) -> Reply {
        // Like the real API, a page that is not a positive number is page 1.
        let page = query["page"].flatMap { Int($0) }.map { max(1, $0) } ?? 1
        let filters: [(name: String, value: String)] = Self.rickAndMortyFilters.compactMap { name in
            guard let value = query[name], !value.isEmpty else { return nil }
            return (name, value)
        }
        let key = "rm|page|\(page)|" + filters.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        return cache.reply(for: key) {
            let lowered = filters.map { ($0.name, $0.value.lowercased()) }
            let matches = DemoCatalog.shared.rickAndMorty.characters.filter { character in
                lowered.allSatisfy { name, value in
                    switch name {
                    case "name": character.name.lowercased().contains(value)
                    case "status": character.status.lowercased() == value
                    case "species": character.species.lowercased() == value
                    case "type": character.type.lowercased() == value
                    default: character.gender.lowercased() == value
                    }
                }
            }
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
                return "\(base)/api/character?page=\(target)\(extra)"
            }
            let slice = matches[((page - 1) * size)..<min(page * size, matches.count)]
            return .json(.ok, Documents.rickAndMortyPage(count: matches.count, pages: pages, next: link(page + 1),
                                                         previous: link(page - 1), results: slice, base: base),
                         cacheControl: Reply.Lifetime.rickAndMorty)
        }
    }

    private func rickAndMortyCharacters(ids text: Substring, base: String) -> Reply {
        let characters = DemoCatalog.shared.rickAndMorty.characters
        func character(_ id: Int) -> RickAndMortyRecord? {
            (1...characters.count).contains(id) ? characters[id - 1] : nil
        }
        // `1,2,3` (or `[1,2,3]`) asks for an array; unknown ids are left out, as upstream does.
        if text.contains(",") || text.hasPrefix("[") {
            let ids = text.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).split(separator: ",")
                .compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            return cache.reply(for: "rm|ids|\(ids.map(String.init).joined(separator: ","))") {
                .json(.ok, OrderedJSON.array(ids.compactMap(character).map { Documents.rickAndMortyCharacter($0, base: base) }).compactBytes,
                      cacheControl: Reply.Lifetime.rickAndMorty)
            }
        }
        guard let id = Int(text), let found = character(id) else {
            return .error(.notFound, Documents.rickAndMortyError("Character not found"))
        }
        return cache.reply(for: "rm|id|\(id)") {
            .json(.ok, Documents.rickAndMortyCharacter(found, base: base).compactBytes, cacheControl: Reply.Lifetime.rickAndMorty)
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
