public import Foundation

/// A Rick and Morty episode; its name is the item's title.
public struct RickAndMortyEpisode: Codable, Sendable, Hashable {
    /// The API's code, `S01E01`; may be empty when the API sent none.
    public var code: String
    /// The air date as the API writes it, "December 2, 2013"; `airDay` reads it.
    public var airDate: String
    /// The characters who appear in it (their API URLs).
    public var characters: [URL]
    /// When the API created the record (ISO 8601 text as sent).
    public var created: String

    public init(code: String, airDate: String, characters: [URL], created: String) {
        self.code = code
        self.airDate = airDate
        self.characters = characters
        self.created = created
    }

    /// The air date as a calendar day, read from the API's English "December 2, 2013"; nil when unreadable.
    public var airDay: DateComponents? {
        let parts = airDate.replacingOccurrences(of: ",", with: " ").split(separator: " ")
        guard parts.count == 3, let month = Self.months.firstIndex(of: parts[0].lowercased()),
              let day = Int(parts[1]), (1...31).contains(day), let year = Int(parts[2]) else { return nil }
        return DateComponents(year: year, month: month + 1, day: day)
    }

    /// The air date written for `language` ("December 2, 2013"; Spanish "2 de diciembre de 2013"); the
    /// API's own text when it cannot be read as a date.
    public func airDate(language: String) -> String {
        guard let day = airDay, let date = Self.calendar.date(from: day) else { return airDate }
        var style = Date.FormatStyle(date: .long, time: .omitted, locale: Locale(identifier: language),
                                     calendar: Self.calendar, timeZone: Self.calendar.timeZone)
        style.capitalizationContext = .standalone
        return date.formatted(style)
    }

    /// "S01E01 · Pilot · December 2, 2013", leaving out what the API did not send.
    public func line(title: String, language: String) -> String {
        [code, title, airDate(language: language)].filter { !$0.isEmpty }.joined(separator: " · ")
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar
    }()

    private static let months = ["january", "february", "march", "april", "may", "june", "july", "august",
                                 "september", "october", "november", "december"]
}

/// A Rick and Morty location; its name is the item's title.
public struct RickAndMortyLocation: Codable, Sendable, Hashable {
    /// "Planet", "Space station"…; empty or "unknown" when the API does not know.
    public var type: String
    /// "Dimension C-137"…; empty or "unknown" when the API does not know.
    public var dimension: String
    /// The characters who live there (their API URLs).
    public var residents: [URL]
    /// When the API created the record (ISO 8601 text as sent).
    public var created: String

    public init(type: String, dimension: String, residents: [URL], created: String) {
        self.type = type
        self.dimension = dimension
        self.residents = residents
        self.created = created
    }

    /// "Planet · Dimension C-137", leaving out what the API does not know.
    public var typeAndDimension: String {
        [type, dimension].filter { !$0.isEmpty && $0.lowercased() != "unknown" }.joined(separator: " · ")
    }
}

/// What an item links to: a Rick and Morty character's episodes, origin and last location, a location's
/// residents, an episode's characters. The source names the linked item; the detail shows it next to this one.
public struct ItemLink: Sendable, Hashable, Codable {
    /// Why the item is linked.
    public enum Role: String, Sendable, Hashable, Codable {
        /// An episode the character appears in.
        case episode
        /// The place the character comes from.
        case origin
        /// The character's last known location.
        case location
        /// A character living at the location.
        case resident
        /// A character appearing in the episode.
        case character

        /// Whether a detail shows these a page at a time (a location may have hundreds of residents);
        /// the others are shown all at once.
        public var isPaged: Bool { self == .resident || self == .character }
    }

    /// Why it is linked.
    public var role: Role
    /// The linked item's id in the same catalog.
    public var itemID: String

    public init(role: Role, itemID: String) {
        self.role = role
        self.itemID = itemID
    }
}
