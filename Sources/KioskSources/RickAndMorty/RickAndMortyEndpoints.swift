import Foundation

/// The Rick and Morty API endpoints Kiosk calls.
enum RickAndMortyEndpoints {
    /// The API's three resources, each paged, filtered by name and fetched by one or several ids.
    enum Resource: String, CaseIterable {
        case character, episode, location

        /// The `PageRequest.collection` naming this resource's list; nil for the characters (the catalog itself).
        var collection: String? { self == .character ? nil : rawValue }

        /// The endpoint name of its pages: `rickandmorty.characters`.
        var listName: String { "rickandmorty.\(rawValue)s" }
        /// The endpoint name of one item: `rickandmorty.character`.
        var itemName: String { "rickandmorty.\(rawValue)" }
        /// The endpoint name of several items named by id: `rickandmorty.characters.byID`.
        var itemsName: String { "rickandmorty.\(rawValue)s.byID" }

        /// The resource a `PageRequest.collection` names.
        init?(collection: String?) {
            guard let collection else { self = .character; return }
            guard collection != Resource.character.rawValue, let resource = Resource(rawValue: collection) else { return nil }
            self = resource
        }
    }

    /// `GET {base}/{resource}?page=N[&name=q][&status=..][&gender=..]` — 20 a page.
    static func list(_ resource: Resource, page: Int, name: String?, filters: [String: String]) -> Endpoint {
        var items = [URLQueryItem(name: "page", value: String(page))]
        if let name { items.append(URLQueryItem(name: "name", value: name)) }
        for key in ["status", "gender"] {
            if let value = filters[key] { items.append(URLQueryItem(name: key, value: value)) }
        }
        return Endpoint(name: resource.listName, path: [resource.rawValue], query: items)
    }

    /// `GET {base}/{resource}/{id}` — one item, a bare object.
    static func item(_ resource: Resource, id: String) -> Endpoint {
        Endpoint(name: resource.itemName, path: [resource.rawValue, id])
    }

    /// `GET {base}/{resource}/{id},{id},...` — an array of those that exist (a bare object for one id).
    static func items(_ resource: Resource, ids: [Int]) -> Endpoint {
        Endpoint(name: resource.itemsName, path: [resource.rawValue, ids.map(String.init).joined(separator: ",")],
                 keepsCommasInPath: true)
    }
}
