import KioskCore

/// The Rick and Morty characters: exactly 826 like the real API, the first twenty as in the show,
/// the rest generated in the same style.
struct RickAndMortyCatalog: Sendable {
    /// Characters by id - 1.
    let characters: [RickAndMortyRecord]
    /// Episodes by id - 1, each listing exactly the characters that name it.
    let episodes: [RickAndMortyEpisodeRecord]
    /// Locations by id - 1, each with exactly the characters last seen there.
    let places: [RickAndMortyLocationRecord]

    static let count = 826
    static let pageSize = 20
    static let episodeCount = 51
    static var pageCount: Int { (count + pageSize - 1) / pageSize }

    /// Location names by id (the real API's first locations); id 0 is never used.
    static let locations: [Int: String] = [
        1: "Earth (C-137)", 2: "Abadango", 3: "Citadel of Ricks", 4: "Worldender's lair", 5: "Anatomy Park",
        6: "Interdimensional Cable", 7: "Immortality Field Resort", 8: "Post-Apocalyptic Earth", 9: "Purge Planet",
        10: "Venzenulon 7", 11: "Bepis 9", 12: "Cronenberg Earth", 13: "Nuptia 4", 14: "Giant's Town",
        15: "Bird World", 16: "St. Gloopy Noops Hospital", 17: "Earth (5-126)", 18: "Mr. Goldenfold's dream",
        19: "Gromflom Prime", 20: "Earth (Replacement Dimension)", 21: "Testicle Monster Dimension",
        22: "Signus 5 Expanse", 23: "Earth (C-500A)", 24: "Rick's Battery Microverse", 25: "The Menagerie",
        26: "Earth (K-83)", 27: "Hideout Planet", 28: "Unity's Planet", 29: "Dorian 5", 30: "Earth (Unknown dimension)",
        31: "Earth (K-22)", 32: "Zigerion's Base", 33: "Pawn Shop Planet", 34: "Space Tahoe", 35: "Planet Squanch",
    ]

    static func build() -> RickAndMortyCatalog {
        var characters: [RickAndMortyRecord] = known.enumerated().map { offset, known in
            RickAndMortyRecord(id: offset + 1, name: known.name, status: known.status, species: known.species,
                               type: known.type, gender: known.gender, originID: known.origin,
                               locationID: known.location, episodes: known.episodes, created: known.created)
        }

        var random = SplitMix64(seed: 0x5249_434B_4D4F_5254)
        var createdSeconds = CivilTime.unixSeconds(year: 2017, month: 11, day: 5, hour: 9, minute: 12, second: 3)
        var usedNames = Set(characters.map(\.name))
        while characters.count < count {
            let id = characters.count + 1
            let name = makeName(&random)
            guard usedNames.insert(name).inserted else { continue }
            // Ricks and Mortys of other dimensions are mostly human and male, as in the show.
            let isVariant = name.contains("Rick") || name.contains("Morty")
            let species = isVariant && random.chance(0.75) ? "Human" : random.pick(speciesWeights)
            let type: String = random.chance(0.7) ? "" : random.pick(types)
            let gender: String = switch species {
            case _ where isVariant: random.chance(0.9) ? "Male" : "unknown"
            case "Robot", "Disease", "Cronenberg": random.pick(["Genderless", "unknown", "Male", "Female"])
            default: random.pick(["Male", "Male", "Female", "Female", "Male", "unknown", "Genderless"])
            }
            let status = random.pick(["Alive", "Alive", "Dead", "Dead", "unknown"])
            // Like the real data, a good share of characters have unknown places (`url` "").
            let origin: Int? = random.chance(0.35) ? nil : random.int(in: 1...35)
            let location: Int? = random.chance(0.2) ? nil : random.int(in: 1...35)
            let firstEpisode = random.int(in: 1...episodeCount)
            let episodeCount = random.chance(0.8) ? 1 : random.int(in: 2...5)
            let episodes = (0..<episodeCount).map { min(Self.episodeCount, firstEpisode + $0 * random.int(in: 1...3)) }
            createdSeconds += random.int(in: 60...40_000)
            let time = CivilTime(unixSeconds: createdSeconds)
            let created = "\(time.date)T\(time.time).\(CivilTime.pad(random.int(in: 0...999), 3))Z"
            characters.append(RickAndMortyRecord(
                id: id, name: name, status: status, species: species, type: type, gender: gender,
                originID: origin, locationID: location, episodes: Array(Set(episodes)).sorted(), created: created
            ))
        }
        return RickAndMortyCatalog(characters: characters, episodes: RickAndMortyWorld.episodes(for: characters),
                                   places: RickAndMortyWorld.locations(for: characters))
    }

    private static func makeName(_ random: inout SplitMix64) -> String {
        // Variants of Rick and Morty from other dimensions are a large part of the real catalog.
        switch random.int(in: 0...6) {
        case 0: "\(random.pick(descriptors)) Rick"
        case 1: "\(random.pick(descriptors)) Morty"
        case 2: "\(random.pick(["Rick", "Morty"])) \(random.pick(["D", "C-", "K-", "J"]))\(random.int(in: 19...999))"
        case 3: "\(random.pick(descriptors)) \(random.pick(creatures))"
        default: "\(random.pick(firstNames)) \(random.pick(lastNames))"
        }
    }

    private struct Known {
        let name, status, species, type, gender: String
        let origin, location: Int?
        let episodes: [Int]
        let created: String
    }

    private static let allEpisodes = Array(1...episodeCount)

    private static let known: [Known] = [
        Known(name: "Rick Sanchez", status: "Alive", species: "Human", type: "", gender: "Male", origin: 1, location: 3, episodes: allEpisodes, created: "2017-11-04T18:48:46.250Z"),
        Known(name: "Morty Smith", status: "Alive", species: "Human", type: "", gender: "Male", origin: nil, location: 3, episodes: allEpisodes, created: "2017-11-04T18:50:21.651Z"),
        Known(name: "Summer Smith", status: "Alive", species: "Human", type: "", gender: "Female", origin: 20, location: 20, episodes: [6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 29, 30, 31, 32, 33, 34, 35, 36, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 51], created: "2017-11-04T19:09:56.428Z"),
        Known(name: "Beth Smith", status: "Alive", species: "Human", type: "", gender: "Female", origin: 20, location: 20, episodes: [6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 51], created: "2017-11-04T19:22:43.665Z"),
        Known(name: "Jerry Smith", status: "Alive", species: "Human", type: "", gender: "Male", origin: 20, location: 20, episodes: [6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 21, 22, 23, 26, 29, 30, 31, 32, 33, 35, 36, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51], created: "2017-11-04T19:26:56.301Z"),
        Known(name: "Abadango Cluster Princess", status: "Alive", species: "Alien", type: "", gender: "Female", origin: 2, location: 2, episodes: [27], created: "2017-11-04T19:50:28.250Z"),
        Known(name: "Abradolf Lincler", status: "unknown", species: "Human", type: "Genetic experiment", gender: "Male", origin: 20, location: 21, episodes: [10, 11], created: "2017-11-04T19:59:20.523Z"),
        Known(name: "Adjudicator Rick", status: "Dead", species: "Human", type: "", gender: "Male", origin: nil, location: 3, episodes: [28], created: "2017-11-04T20:03:34.737Z"),
        Known(name: "Agency Director", status: "Dead", species: "Human", type: "", gender: "Male", origin: 20, location: 20, episodes: [24], created: "2017-11-04T20:06:54.976Z"),
        Known(name: "Alan Rails", status: "Dead", species: "Human", type: "Superhuman (Ghost trains summoner)", gender: "Male", origin: nil, location: 4, episodes: [25], created: "2017-11-04T20:19:09.017Z"),
        Known(name: "Albert Einstein", status: "Dead", species: "Human", type: "", gender: "Male", origin: 1, location: 20, episodes: [12], created: "2017-11-04T20:20:20.965Z"),
        Known(name: "Alexander", status: "Dead", species: "Human", type: "", gender: "Male", origin: 1, location: 5, episodes: [3], created: "2017-11-04T20:32:33.144Z"),
        Known(name: "Alien Googah", status: "unknown", species: "Alien", type: "", gender: "unknown", origin: nil, location: 20, episodes: [31], created: "2017-11-04T20:33:30.779Z"),
        Known(name: "Alien Morty", status: "unknown", species: "Alien", type: "", gender: "Male", origin: nil, location: 3, episodes: [10], created: "2017-11-04T20:51:31.373Z"),
        Known(name: "Alien Rick", status: "unknown", species: "Alien", type: "", gender: "Male", origin: nil, location: 3, episodes: [10], created: "2017-11-04T20:56:13.215Z"),
        Known(name: "Amish Cyborg", status: "Dead", species: "Alien", type: "Parasite", gender: "Male", origin: nil, location: 20, episodes: [15], created: "2017-11-04T21:12:45.235Z"),
        Known(name: "Annie", status: "Alive", species: "Human", type: "", gender: "Female", origin: 1, location: 5, episodes: [3], created: "2017-11-04T22:21:24.481Z"),
        Known(name: "Antenna Morty", status: "Alive", species: "Human", type: "Human with antennae", gender: "Male", origin: nil, location: 3, episodes: [10, 28], created: "2017-11-04T22:25:29.008Z"),
        Known(name: "Antenna Rick", status: "unknown", species: "Human", type: "Human with antennae", gender: "Male", origin: nil, location: nil, episodes: [10], created: "2017-11-04T22:28:13.756Z"),
        Known(name: "Ants in my Eyes Johnson", status: "unknown", species: "Human", type: "Human with ants in his eyes", gender: "Male", origin: nil, location: 6, episodes: [8], created: "2017-11-04T22:34:53.659Z"),
    ]

    private static let speciesWeights = [
        "Human", "Human", "Human", "Human", "Alien", "Alien", "Alien", "Humanoid", "Robot", "Animal",
        "Mythological Creature", "Cronenberg", "Poopybutthole", "Disease", "unknown",
    ]
    private static let types = [
        "Genetic experiment", "Parasite", "Clone", "Cyborg", "Fish-Person", "Gazorpian", "Gromflomite",
        "Bird-Person", "Lizard-Person", "Human with antennae", "Superhuman", "Dog", "Robot-Crocodile hybrid",
    ]
    private static let descriptors = [
        "Cop", "Glasses", "Cowboy", "Lawyer", "Hammerhead", "Fisherman", "Mega", "Tiny", "Evil", "Doofus",
        "Cyborg", "Teacher", "Pilot", "Baby", "Old", "Squanchy", "Toxic", "Wasp", "Pickle", "Simple",
        "Mechanical", "Buff", "Plumbus", "Space", "Robot", "Blue", "Cult Leader", "Afro", "Aqua", "Beard",
    ]
    private static let creatures = [
        "Gazorpian", "Gromflomite", "Cromulon", "Meeseeks", "Plutonian", "Zigerion", "Squanch", "Blim Blam",
        "Krootabulan", "Shrimp", "Cronenberg", "Fart", "Glootie", "Slug", "Gear-Person",
    ]
    private static let firstNames = [
        "Tammy", "Gene", "Jessica", "Brad", "Frank", "Nancy", "Stacy", "Davin", "Mr.", "Ethan", "Tricia",
        "Gwendolyn", "Hemorrhage", "Revolio", "Principal", "Dr.", "King", "Lady", "Karen", "Doug", "Ruben",
        "Bruce", "Mrs.", "Glenn", "Reggie", "Arthricia", "Krombopulos", "Scary", "Gearhead", "Squeeb",
    ]
    private static let lastNames = [
        "Gueterman", "Greebybobe", "Palicky", "Lanford", "Smith", "Goldenfold", "Poopybutthole", "Clockenflarp",
        "Sanchez", "Gazorpazorp", "Nimbus", "Jellybean", "Flippy", "Glorzo", "Blimpnik", "Needful", "Plopstein",
        "Lucius", "Sleepy Gary", "Beta-Seven", "Dinglebop", "Schleem", "Fleeb", "Grumbo", "Hamurai", "Vance",
        "Berry", "Chunders", "Bumbles", "Zeep",
    ]
}

/// One Rick and Morty character; places are ids into `RickAndMortyCatalog.locations`, nil for "unknown".
struct RickAndMortyRecord: Sendable {
    let id: Int
    let name, status, species, type, gender: String
    let originID, locationID: Int?
    let episodes: [Int]
    let created: String
}
