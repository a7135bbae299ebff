import Foundation

/// The dogs list endpoint.
enum DogsEndpoints {
    /// `GET {dogsURL}` — the whole list as one JSON document.
    static let list = Endpoint(name: "dogs.list")
}
