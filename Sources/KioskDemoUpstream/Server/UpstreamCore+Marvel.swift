import Foundation
import HTTPTypes

extension UpstreamCore {
    /// `GET /v1/public/characters` and `/v1/public/characters/{id}`, behind Marvel's ts/apikey/hash check.
    func marvel(path: String, query: QueryItems, base: String) -> Reply {
        if let failure = marvelAuthenticationFailure(query) { return failure }

        let parts = path.split(separator: "/")  // ["v1", "public", "characters", id?]
        guard parts.count >= 3, parts[0] == "v1", parts[1] == "public", parts[2] == "characters", parts.count <= 4 else {
            return .error(.notFound, Documents.marvelMessage("ResourceNotFound", "\(path) does not exist"))
        }
        if parts.count == 4 {
            return marvelCharacter(id: parts[3], base: base)
        }
        return marvelCharacters(query: query, base: base)
    }

    /// The 409 or 401 Marvel answers a request without valid credentials, or nil when they are valid.
    private func marvelAuthenticationFailure(_ query: QueryItems) -> Reply? {
        guard let apiKey = query["apikey"], !apiKey.isEmpty else {
            return .error(.conflict, Documents.marvelMessage("MissingParameter", "You must provide a user key."))
        }
        guard let timestamp = query["ts"], !timestamp.isEmpty else {
            return .error(.conflict, Documents.marvelMessage("MissingParameter", "You must provide a timestamp."))
        }
        guard let hash = query["hash"], !hash.isEmpty else {
            return .error(.conflict, Documents.marvelMessage("MissingParameter", "You must provide a hash."))
        }
        let expected = Hashing.marvelHash(timestamp: timestamp, privateKey: keys.marvelPrivate, publicKey: keys.marvelPublic)
        guard apiKey == keys.marvelPublic, hash == expected else {
            return .error(.unauthorized, Documents.marvelMessage("InvalidCredentials", "That hash, timestamp and key combination is invalid."))
        }
        return nil
    }

    private func marvelCharacter(id text: Substring, base: String) -> Reply {
        let catalog = DemoCatalog.shared.marvel
        guard let id = Int(text), let index = catalog.indexByID[id] else {
            return .error(.notFound, Documents.marvelStatus(404, "We couldn't find that character"))
        }
        return cache.reply(for: "marvel|id|\(id)") {
            let (body, etag) = Documents.marvelEnvelope(offset: 0, limit: 20, total: 1,
                                                        results: [catalog.characters[index]], base: base)
            return .json(.ok, body, cacheControl: Reply.Lifetime.marvel, etag: etag)
        }
    }

    private func marvelCharacters(query: QueryItems, base: String) -> Reply {
        var limit = 20
        if let text = query["limit"] {
            guard let value = Int(text), value > 0 else {
                return .error(.conflict, Documents.marvelStatus(409, "You must pass an integer limit greater than 0."))
            }
            guard value <= 100 else {
                return .error(.conflict, Documents.marvelStatus(409, "You may not request more than 100 items."))
            }
            limit = value
        }
        var offset = 0
        if let text = query["offset"] {
            guard let value = Int(text), value >= 0 else {
                return .error(.conflict, Documents.marvelStatus(409, "You must pass a positive integer offset."))
            }
            offset = value
        }
        let nameStartsWith = query["nameStartsWith"]
        if nameStartsWith?.isEmpty == true {
            return .error(.conflict, Documents.marvelStatus(409, "nameStartsWith cannot be blank if it is set."))
        }
        let name = query["name"]
        if name?.isEmpty == true {
            return .error(.conflict, Documents.marvelStatus(409, "name cannot be blank if it is set."))
        }
        let orderBy = (query["orderBy"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let validOrders: Set<String> = ["name", "-name", "modified", "-modified"]
        guard orderBy.allSatisfy(validOrders.contains) else {
            return .error(.conflict, Documents.marvelStatus(409, "You must pass a valid orderBy parameter."))
        }

        let key = "marvel|list|\(offset)|\(limit)|\(nameStartsWith?.lowercased() ?? "")|\(name?.lowercased() ?? "")|\(orderBy.joined(separator: ","))"
        return cache.reply(for: key) {
            var matches = DemoCatalog.shared.marvel.characters
            if let prefix = nameStartsWith?.lowercased() {
                matches = matches.filter { $0.name.lowercased().hasPrefix(prefix) }
            }
            if let name = name?.lowercased() {
                matches = matches.filter { $0.name.lowercased() == name }
            }
            if !orderBy.isEmpty {
                matches.sort { lhs, rhs in
                    for order in orderBy {
                        let descending = order.hasPrefix("-")
                        let (left, right) = order.hasSuffix("modified")
                            ? (lhs.modified, rhs.modified) : (lhs.name.lowercased(), rhs.name.lowercased())
                        if left != right { return descending ? left > right : left < right }
                    }
                    return MarvelCharacterRecord.nameOrder(lhs, rhs)
                }
            }
            let page = Array(matches.dropFirst(offset).prefix(limit))
            let (body, etag) = Documents.marvelEnvelope(offset: offset, limit: limit, total: matches.count,
                                                        results: page, base: base)
            return .json(.ok, body, cacheControl: Reply.Lifetime.marvel, etag: etag)
        }
    }
}
