import Foundation

/// The catalogs Kiosk reads; the raw value is the name used everywhere (CLI, URLs, JSON, database).
public enum SourceID: String, CaseIterable, Codable, Sendable, Hashable, Comparable {
    case nyt
    case marvel
    case rickandmorty
    case dogs

    /// A human-readable name for tables and pages.
    public var displayName: String {
        switch self {
        case .nyt: "New York Times"
        case .marvel: "Marvel"
        case .rickandmorty: "Rick and Morty"
        case .dogs: "Dogs"
        }
    }

    /// Parses a user-typed source name, accepting a few common aliases; nil when unknown.
    public init?(userInput: String) {
        let normalized = userInput.lowercased().filter { $0.isLetter }
        switch normalized {
        case "nyt", "nytimes", "newyorktimes", "times": self = .nyt
        case "marvel": self = .marvel
        case "rickandmorty", "rm", "rickmorty": self = .rickandmorty
        case "dogs", "dog": self = .dogs
        default: return nil
        }
    }

    public static func < (lhs: SourceID, rhs: SourceID) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
