import KioskCore

/// One episode of the show, as `/api/episode` serves it.
struct RickAndMortyEpisodeRecord: Sendable {
    let id: Int
    let name: String
    /// "December 2, 2013", the API's own format.
    let airDate: String
    /// "S01E01".
    let code: String
    /// The characters in it, by id, ascending: exactly those whose `episode` list names it.
    let characters: [Int]
    let created: String
}

/// One place, as `/api/location` serves it.
struct RickAndMortyLocationRecord: Sendable {
    let id: Int
    let name, type, dimension: String
    /// The characters whose last known location it is, by id, ascending.
    let residents: [Int]
    let created: String
}

/// The episodes and locations of the demo's Rick and Morty, consistent with its characters: an episode
/// lists exactly the characters that name it, a location's residents are exactly the characters whose
/// `location` it is. Deterministic, so every run serves the same data.
enum RickAndMortyWorld {
    /// The 51 episodes of seasons 1 to 5, in airing order.
    static let episodeNames: [[String]] = [
        ["Pilot", "Lawnmower Dog", "Anatomy Park", "M. Night Shaym-Aliens!", "Meeseeks and Destroy", "Rick Potion #9",
         "Raising Gazorpazorp", "Rixty Minutes", "Something Ricked This Way Comes", "Close Rick-counters of the Rick Kind",
         "Ricksy Business"],
        ["A Rickle in Time", "Mortynight Run", "Auto Erotic Assimilation", "Total Rickall", "Get Schwifty",
         "The Ricks Must Be Crazy", "Big Trouble in Little Sanchez", "Interdimensional Cable 2: Tempting Fate",
         "Look Who's Purging Now", "The Wedding Squanchers"],
        ["The Rickshank Rickdemption", "Rickmancing the Stone", "Pickle Rick", "Vindicators 3: The Return of Worldender",
         "The Whirly Dirly Conspiracy", "Rest and Ricklaxation", "The Ricklantis Mixup", "Morty's Mind Blowers",
         "The ABC's of Beth", "The Rickchurian Mortydate"],
        ["Edge of Tomorty: Rick, Die, Rickpeat", "The Old Man and the Seat", "One Crew over the Crewcoo's Morty",
         "Claw and Hoarder: Special Ricktim's Morty", "Rattlestar Ricklactica", "Never Ricking Morty", "Promortyus",
         "The Vat of Acid Episode", "Childrick of Mort", "Star Mort: Rickturn of the Jerri"],
        ["Mort Dinner Rick Andre", "Mortyplicity", "A Rickconvenient Mort", "Rickdependence Spray",
         "Amortycan Grickfitti", "Rick & Morty's Thanksploitation Spectacular", "Gotron Jerrysis Rickvangelion",
         "Rickternal Friendshine of the Spotless Mort", "Forgetting Sarick Mortshall", "Rickmurai Jack"],
    ]

    /// Each season's first air date (year, month, day); its episodes follow a week apart.
    private static let seasonStarts = [(2013, 12, 2), (2015, 7, 26), (2017, 7, 30), (2019, 11, 10), (2021, 6, 20)]

    /// As many locations as the real API has.
    static let locationCount = 126

    private static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August",
                                     "September", "October", "November", "December"]

    static func episodes(for characters: [RickAndMortyRecord]) -> [RickAndMortyEpisodeRecord] {
        var cast: [Int: [Int]] = [:]
        for character in characters {
            for episode in character.episodes { cast[episode, default: []].append(character.id) }
        }
        var episodes: [RickAndMortyEpisodeRecord] = []
        var createdSeconds = CivilTime.unixSeconds(year: 2017, month: 11, day: 10, hour: 12, minute: 56, second: 33)
        for (seasonIndex, names) in episodeNames.enumerated() {
            let start = seasonStarts[seasonIndex]
            let first = CivilTime.unixSeconds(year: start.0, month: start.1, day: start.2, hour: 0, minute: 0, second: 0)
            for (episodeIndex, name) in names.enumerated() {
                let id = episodes.count + 1
                let aired = CivilTime(unixSeconds: first + episodeIndex * 7 * 86_400)
                createdSeconds += 1_043
                let created = CivilTime(unixSeconds: createdSeconds)
                episodes.append(RickAndMortyEpisodeRecord(
                    id: id, name: name, airDate: airDate(aired.date),
                    code: "S\(CivilTime.pad(seasonIndex + 1, 2))E\(CivilTime.pad(episodeIndex + 1, 2))",
                    characters: (cast[id] ?? []).sorted(), created: "\(created.date)T\(created.time).948Z"))
            }
        }
        return episodes
    }

    static func locations(for characters: [RickAndMortyRecord]) -> [RickAndMortyLocationRecord] {
        var residents: [Int: [Int]] = [:]
        for character in characters {
            if let location = character.locationID { residents[location, default: []].append(character.id) }
        }
        var random = SplitMix64(seed: 0x4C4F_4341_5449_4F4E)
        var createdSeconds = CivilTime.unixSeconds(year: 2017, month: 11, day: 10, hour: 12, minute: 42, second: 4)
        return (1...locationCount).map { id in
            let name = RickAndMortyCatalog.locations[id] ?? generatedName(id, &random)
            let type = knownTypes[id] ?? random.pick(types)
            let dimension = knownDimensions[id] ?? random.pick(dimensions)
            createdSeconds += random.int(in: 30...900)
            let created = CivilTime(unixSeconds: createdSeconds)
            return RickAndMortyLocationRecord(id: id, name: name, type: type, dimension: dimension,
                                              residents: (residents[id] ?? []).sorted(),
                                              created: "\(created.date)T\(created.time).\(CivilTime.pad(random.int(in: 0...999), 3))Z")
        }
    }

    /// "2013-12-02" as "December 2, 2013".
    private static func airDate(_ isoDate: String) -> String {
        let parts = isoDate.split(separator: "-").compactMap { Int($0) }
        return "\(monthNames[parts[1] - 1]) \(parts[2]), \(parts[0])"
    }

    private static func generatedName(_ id: Int, _ random: inout SplitMix64) -> String {
        switch random.int(in: 0...3) {
        case 0: "Earth (\(random.pick(["C", "J", "K", "D"]))-\(random.int(in: 19...999)))"
        case 1: "\(random.pick(prefixes)) \(random.int(in: 2...9))"
        case 2: "\(random.pick(prefixes))'s \(random.pick(["Base", "Lair", "Moon", "Outpost", "Prison"]))"
        default: "\(random.pick(prefixes)) \(random.pick(["Prime", "Major", "Minor", "Nebula", "Cluster"]))"
        }
    }

    private static let knownTypes: [Int: String] = [
        1: "Planet", 2: "Cluster", 3: "Space station", 4: "Planet", 5: "Microverse", 6: "TV", 7: "Resort",
        8: "Planet", 9: "Planet", 10: "Planet", 11: "Planet", 12: "Planet", 13: "Planet", 14: "Fantasy town",
        15: "Planet", 16: "Space station", 17: "Planet", 18: "Dream", 19: "Planet", 20: "Planet", 21: "Dimension",
        22: "Cluster", 23: "Planet", 24: "Microverse", 25: "Menagerie", 26: "Planet", 27: "Planet", 28: "Planet",
        29: "Planet", 30: "Planet", 31: "Planet", 32: "Space station", 33: "Planet", 34: "Game", 35: "Planet",
    ]

    private static let knownDimensions: [Int: String] = [
        1: "Dimension C-137", 2: "unknown", 3: "unknown", 4: "unknown", 5: "Dimension C-137", 6: "unknown",
        7: "unknown", 8: "Post-Apocalyptic Dimension", 9: "Replacement Dimension", 10: "unknown", 11: "unknown",
        12: "Cronenberg Dimension", 13: "unknown", 14: "Fantasy Dimension", 15: "unknown", 16: "unknown",
        17: "Dimension 5-126", 18: "unknown", 19: "Replacement Dimension", 20: "Replacement Dimension",
        21: "Testicle Monster Dimension", 22: "unknown", 23: "Dimension C-500A", 24: "Dimension C-137",
        25: "unknown", 26: "Dimension K-83", 27: "unknown", 28: "Replacement Dimension", 29: "unknown",
        30: "unknown", 31: "Dimension K-22", 32: "unknown", 33: "Replacement Dimension", 34: "unknown",
        35: "Replacement Dimension",
    ]

    private static let types = ["Planet", "Planet", "Planet", "Space station", "Microverse", "Cluster", "Dimension",
                                "Resort", "Dream", "Asteroid", "TV", "Spacecraft", "Customs", "Base", "unknown"]
    private static let dimensions = ["Replacement Dimension", "unknown", "unknown", "Dimension C-137",
                                     "Cromulon Dimension", "Fascist Dimension", "Chair Dimension", "Dimension J19ζ7",
                                     "Evil Rick's Target Dimension", "Fantasy Dimension"]
    private static let prefixes = ["Gazorpazorp", "Bepis", "Alphabetrium", "Blips", "Gear", "Froopyland", "Glorzo",
                                   "Hamster", "Krootabulon", "Mercury", "Narnia", "Plopstar", "Roy", "Snorlax", "Tuskfish",
                                   "Zeep", "Zigerion", "Squanch", "Vindicator", "Larva", "Kyle", "Gromflom"]
}
