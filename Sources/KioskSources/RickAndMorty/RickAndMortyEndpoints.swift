import Foundation

/// The Rick and Morty API endpoints Kiosk calls.
enum RickAndMortyEndpoints {
    /// `GET {base}/character?page=N[&name=q][&status=..][&gender=..]` — 20 characters a page.
    static func characters(page: Int, name: String?, status: String?, gender: String?) -> Endpoint {
        var items = [URLQueryItem(name: "page", value: String(page))]
        if let name { items.append(URLQueryItem(name: "name", value: name)) }
        if let status { items.append(URLQueryItem(name: "status", value: status)) }
        if let gender { items.append(URLQueryItem(name: "gender", value: gender)) }
        return Endpoint(name: "rickandmorty.characters", path: ["character"], query: items)
    }

    /// `GET {base}/character/{id}` — one character.
    static func character(id: String) -> Endpoint {
        Endpoint(name: "rickandmorty.character", path: ["character", id])
    }
}
