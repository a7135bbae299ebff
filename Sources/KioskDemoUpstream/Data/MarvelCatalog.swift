import Foundation
import KioskCore

/// The Marvel characters the demo serves: well-known names first, then generated ones.
///
/// The awkward cases real responses contain are all present on purpose: empty descriptions,
/// `image_not_available` thumbnails, collections whose `available` exceeds the 20 items listed,
/// empty collections and the invalid `-0001-11-30T00:00:00-0500` modification date.
struct MarvelCatalog: Sendable {
    /// Characters in Marvel's default order (by name).
    let characters: [MarvelCharacterRecord]
    /// Index into `characters` by id.
    let indexByID: [Int: Int]
    /// Thumbnail paths (`/images/marvel/...`, without variant) the image route serves.
    let thumbnailPaths: Set<String>

    static let copyright = "© 2026 MARVEL"
    static let attributionText = "Data provided by Marvel. © 2026 MARVEL"
    static let attributionHTML = "<a href=\"http://marvel.com\">Data provided by Marvel. © 2026 MARVEL</a>"
    static let notAvailablePath = "/images/marvel/i/mg/b/40/image_not_available"
    /// The invalid date some real characters carry.
    static let invalidModified = "-0001-11-30T00:00:00-0500"

    /// Marvel's image variants and their sizes; `detail` and the bare path are the full-size picture.
    static let imageVariants: [String: (width: Int, height: Int)] = [
        "portrait_small": (50, 75), "portrait_medium": (100, 150), "portrait_xlarge": (150, 225),
        "portrait_fantastic": (168, 252), "portrait_uncanny": (300, 450), "portrait_incredible": (216, 324),
        "standard_small": (65, 45), "standard_medium": (100, 100), "standard_large": (140, 140),
        "standard_xlarge": (200, 200), "standard_fantastic": (250, 250), "standard_amazing": (180, 180),
        "landscape_small": (120, 90), "landscape_medium": (175, 130), "landscape_large": (190, 140),
        "landscape_xlarge": (270, 200), "landscape_amazing": (250, 156), "landscape_incredible": (464, 261),
        "detail": (550, 550),
    ]

    static func build() -> MarvelCatalog {
        var random = SplitMix64(seed: 0x4D41_5256_454C_3031)
        var records: [MarvelCharacterRecord] = []
        var usedIDs = Set<Int>()
        var usedNames = Set<String>()

        func add(id: Int, name: String, description: String, fame: Int, hasImage: Bool, modified: String? = nil,
                 random: inout SplitMix64) {
            precondition(usedIDs.insert(id).inserted, "duplicate Marvel id \(id)")
            usedNames.insert(name)
            let path, fileExtension: String
            if hasImage {
                let digits = Array("0123456789abcdef")
                let hash = String((0..<13).map { _ in digits[random.int(in: 0...15)] })
                path = "/images/marvel/i/mg/\(digits[random.int(in: 0...15)])/\(digits[random.int(in: 0...15)])0/\(hash)"
                fileExtension = random.chance(0.05) ? "gif" : "jpg"
            } else {
                path = notAvailablePath
                fileExtension = "jpg"
            }
            let modifiedText = modified ?? {
                let seconds = CivilTime.unixSeconds(year: 2011, month: 1, day: 1) + random.int(in: 0...(9 * 365 * 86_400))
                let time = CivilTime(unixSeconds: seconds)
                return "\(time.date)T\(time.time)-0400"
            }()
            records.append(MarvelCharacterRecord(
                id: id,
                name: name,
                description: description,
                modified: modifiedText,
                thumbnailPath: path,
                thumbnailExtension: fileExtension,
                comics: collection(kind: .comics, fame: fame, random: &random),
                series: collection(kind: .series, fame: fame, random: &random),
                stories: collection(kind: .stories, fame: fame, random: &random),
                events: collection(kind: .events, fame: fame, random: &random),
                hasWiki: fame > 0 || random.chance(0.5)
            ))
        }

        for known in knownCharacters {
            add(id: known.id, name: known.name, description: known.description, fame: known.fame,
                hasImage: known.hasImage, modified: known.modified, random: &random)
        }

        // Generated characters fill the catalog past 150, with the same mix of awkward cases.
        var nextID = 1_017_500
        while records.count < 164 {
            let suffix = random.chance(0.25) ? random.pick(nameSuffixes) : ""
            let name = "\(random.pick(nameAdjectives)) \(random.pick(nameNouns))\(suffix)"
            guard !usedNames.contains(name) else { continue }
            nextID += random.int(in: 3...97)
            let description = random.chance(0.45) ? "" : random.pick(descriptionTemplates)
                .replacingOccurrences(of: "{n}", with: name)
            add(id: nextID, name: name, description: description, fame: random.chance(0.2) ? 0 : 1,
                hasImage: !random.chance(0.12), random: &random)
        }

        let sorted = records.sorted(by: MarvelCharacterRecord.nameOrder)
        let index = Dictionary(uniqueKeysWithValues: sorted.enumerated().map { ($0.element.id, $0.offset) })
        return MarvelCatalog(characters: sorted, indexByID: index,
                             thumbnailPaths: Set(sorted.map(\.thumbnailPath)))
    }

    enum CollectionKind: String {
        case comics, series, stories, events
    }

    /// A collection with Marvel's cap: `available` counts everything, `items` lists at most 20.
    private static func collection(kind: CollectionKind, fame: Int, random: inout SplitMix64) -> MarvelCollectionRecord {
        let available: Int = switch (kind, fame) {
        case (.comics, 2): random.int(in: 400...4_200)
        case (.series, 2): random.int(in: 90...1_100)
        case (.stories, 2): random.int(in: 700...6_300)
        case (.events, 2): random.int(in: 21...40)
        case (.events, 1): random.chance(0.5) ? 0 : random.int(in: 1...6)
        case (_, 1): random.chance(0.1) ? 0 : random.int(in: 1...60)
        case (.events, _): 0
        default: random.chance(0.5) ? 0 : random.int(in: 1...4)
        }
        var items: [MarvelItem] = []
        var usedIDs = Set<Int>()
        let count = min(available, 20)
        while items.count < count {
            switch kind {
            case .events:
                let event = events[(items.count * 7 + random.int(in: 0...events.count - 1)) % events.count]
                guard usedIDs.insert(event.id).inserted else { continue }
                items.append(MarvelItem(id: event.id, name: event.name, type: nil))
            case .comics:
                let id = random.int(in: 1_000...99_000)
                guard usedIDs.insert(id).inserted else { continue }
                let year = random.int(in: 1963...2024)
                items.append(MarvelItem(id: id, name: "\(random.pick(seriesTitles)) (\(year)) #\(random.int(in: 1...300))", type: nil))
            case .series:
                let id = random.int(in: 1_000...40_000)
                guard usedIDs.insert(id).inserted else { continue }
                let start = random.int(in: 1963...2020)
                items.append(MarvelItem(id: id, name: "\(random.pick(seriesTitles)) (\(start) - \(start + random.int(in: 0...12)))", type: nil))
            case .stories:
                let id = random.int(in: 1_000...200_000)
                guard usedIDs.insert(id).inserted else { continue }
                let type = random.pick(["cover", "interiorStory", "interiorStory", ""])
                let name = type == "cover" ? "Cover #\(id)" : "\(random.pick(seriesTitles)) (\(random.int(in: 1963...2024))) #\(random.int(in: 1...300))"
                items.append(MarvelItem(id: id, name: name, type: type))
            }
        }
        return MarvelCollectionRecord(kind: kind, available: available, items: items)
    }

    private struct Known {
        let id: Int
        let name, description: String
        /// 0 obscure, 1 regular, 2 headliner (hundreds of comics).
        let fame: Int
        let hasImage: Bool
        let modified: String?
        init(_ id: Int, _ name: String, _ description: String = "", fame: Int = 1, image: Bool = true,
             modified: String? = nil) {
            self.id = id
            self.name = name
            self.description = description
            self.fame = fame
            self.hasImage = image
            self.modified = modified
        }
    }

    // Names and ids of real characters; descriptions are short summaries written for the demo.
    private static let knownCharacters: [Known] = [
        Known(1_011_334, "3-D Man"),
        Known(1_017_100, "A-Bomb (HAS)", "Rick Jones, long the Hulk's closest friend, was transformed by a gamma blast into an armored blue powerhouse who rolls into battle like a wrecking ball."),
        Known(1_009_144, "A.I.M.", "A.I.M. is a terrorist organization of scientists bent on overthrowing the world's governments."),
        Known(1_010_699, "Aaron Stack", fame: 0, image: false),
        Known(1_009_146, "Abomination (Emil Blonsky)", "A former spy, Emil Blonsky was exposed to gamma radiation like Bruce Banner and became a hulking creature with a grudge against the Hulk."),
        Known(1_016_823, "Abomination (Ultimate)", fame: 0),
        Known(1_009_148, "Absorbing Man", "Crusher Creel can take on the properties of anything he touches."),
        Known(1_009_149, "Abyss", fame: 0),
        Known(1_010_903, "Abyss (Age of Apocalypse)", fame: 0, image: false, modified: invalidModified),
        Known(1_011_266, "Adam Destine", fame: 0),
        Known(1_010_354, "Adam Warlock", "Adam Warlock is an artificially created being, born in a cocoon, who has guarded the Soul Gem across the cosmos."),
        Known(1_010_846, "Aegis (Trey Rollins)", fame: 0, image: false),
        Known(1_011_297, "Agent Brand"),
        Known(1_011_031, "Agent X (Nijo)", "A mercenary who first spied on Deadpool, then stepped into a role of his own."),
        Known(1_009_150, "Agent Zero"),
        Known(1_011_198, "Agents of Atlas"),
        Known(1_011_175, "Aginar", fame: 0, image: false),
        Known(1_011_136, "Air-Walker (Gabriel Lan)", fame: 0),
        Known(1_011_176, "Ajak"),
        Known(1_010_870, "Ajaxis", fame: 0),
        Known(1_011_194, "Akemi", fame: 0),
        Known(1_011_170, "Alain", fame: 0, image: false),
        Known(1_009_240, "Albert Cleary", fame: 0),
        Known(1_011_120, "Albion", fame: 0),
        Known(1_010_836, "Alex Power"),
        Known(1_010_755, "Alex Wilder", "The only one of his friends without powers, Alex Wilder became the strategist of the Runaways."),
        Known(1_011_214, "Alexa Mendez", fame: 0),
        Known(1_009_497, "Alicia Masters"),
        Known(1_010_370, "Alpha Flight", "Canada's premier super hero team."),
        Known(1_009_610, "Spider-Man (Peter Parker)", "Bitten by a radioactive spider, student Peter Parker gained the proportional strength and agility of a spider and learned that with great power comes great responsibility.", fame: 2),
        Known(1_016_181, "Spider-Man (Miles Morales)", "A teenager from Brooklyn who took up the mantle of Spider-Man with venom blasts and camouflage of his own.", fame: 2),
        Known(1_009_609, "Spider-Girl (May Parker)", "The daughter of Peter Parker inherited her father's powers and his sense of responsibility."),
        Known(1_009_220, "Captain America", "Steve Rogers volunteered for a super-soldier program and became the living symbol of liberty, fighting for what is right for more than seventy years.", fame: 2),
        Known(1_009_368, "Iron Man", "Inventor Tony Stark built an armored suit to escape captivity and now uses his genius and fortune to protect the world.", fame: 2),
        Known(1_009_351, "Hulk", "Caught in a gamma bomb blast, Dr. Bruce Banner turns into the Hulk when angered, and the angrier he gets, the stronger he gets.", fame: 2),
        Known(1_009_664, "Thor", "The Norse god of thunder wields the enchanted hammer Mjolnir in defense of Asgard and Earth.", fame: 2),
        Known(1_009_718, "Wolverine", "A mutant with keen senses, a healing factor and an unbreakable skeleton, Logan is the best there is at what he does.", fame: 2),
        Known(1_009_189, "Black Widow", "Natasha Romanoff, trained from childhood as a spy, turned her skills to the side of heroes.", fame: 2),
        Known(1_009_338, "Hawkeye", "A master archer who never misses, Clint Barton is one of the Avengers' most reliable members.", fame: 2),
        Known(1_009_629, "Storm", "Ororo Munroe commands the weather and leads the X-Men with calm authority.", fame: 2),
        Known(1_009_257, "Cyclops", fame: 2),
        Known(1_009_496, "Jean Grey", "A powerful telepath and telekinetic, and one of the original X-Men.", fame: 2),
        Known(1_009_268, "Deadpool", "Wade Wilson is a mercenary with a healing factor and no filter.", fame: 2),
        Known(1_009_282, "Doctor Strange", "Former surgeon Stephen Strange became the Sorcerer Supreme, Earth's defender against mystic threats.", fame: 2),
        Known(1_009_187, "Black Panther", "T'Challa is the king of Wakanda and the bearer of the mantle of the Black Panther.", fame: 2),
        Known(1_010_338, "Captain Marvel (Carol Danvers)", "Former Air Force pilot Carol Danvers gained cosmic powers and became one of the mightiest Avengers.", fame: 2),
        Known(1_009_562, "Scarlet Witch", "Wanda Maximoff can alter probability and reality itself.", fame: 2),
        Known(1_009_697, "Vision", "A synthetic man built by Ultron who chose to become an Avenger.", fame: 2),
        Known(1_010_801, "Ant-Man (Scott Lang)", "A reformed thief who inherited the Pym Particles and a second chance.", fame: 2),
        Known(1_009_707, "Wasp", "Janet van Dyne can shrink, fly and sting, and gave the Avengers their name.", fame: 2),
        Known(1_009_652, "Thanos", "The Mad Titan, obsessed with death and the Infinity Gems.", fame: 2),
        Known(1_009_407, "Loki", "The god of mischief, adopted brother of Thor.", fame: 2),
        Known(1_009_417, "Magneto", "The master of magnetism, who believes mutants must protect themselves from humanity by any means.", fame: 2),
        Known(1_009_504, "Professor X", "Charles Xavier, telepath, founded the X-Men to pursue peace between mutants and humans.", fame: 2),
        Known(1_009_313, "Gambit", fame: 2),
        Known(1_009_546, "Rogue", "Rogue absorbs the memories and powers of anyone she touches.", fame: 2),
        Known(1_009_262, "Daredevil", "Blinded as a boy, lawyer Matt Murdock fights crime in Hell's Kitchen with heightened senses.", fame: 2),
        Known(1_009_515, "Punisher", fame: 2),
        Known(1_009_592, "Silver Surfer", "Norrin Radd sacrificed his freedom to save his world and became the herald of Galactus.", fame: 2),
        Known(1_009_312, "Galactus", "The devourer of worlds.", fame: 2),
        Known(1_009_281, "Doctor Doom", "Victor von Doom, monarch of Latveria, sorcerer and scientist, and the Fantastic Four's greatest enemy.", fame: 2),
        Known(1_009_471, "Nick Fury", fame: 2),
        Known(1_010_743, "Groot", "A tree-like being of few words.", fame: 1),
        Known(1_010_744, "Rocket Raccoon", "A genetically engineered raccoon with a taste for big guns.", fame: 1),
        Known(1_010_763, "Gamora", "The deadliest woman in the galaxy.", fame: 1),
        Known(1_010_735, "Drax", fame: 1),
        Known(1_010_733, "Star-Lord (Peter Quill)", "Half-human Peter Quill leads the Guardians of the Galaxy.", fame: 1),
        Known(1_009_663, "Venom (Flash Thompson)", fame: 1),
        Known(1_014_985, "Green Goblin (Norman Osborn)", "Industrialist Norman Osborn, driven mad by his own formula, became Spider-Man's deadliest foe.", fame: 2),
        Known(1_009_465, "Mystique", fame: 1),
        Known(1_009_175, "Beast", "Hank McCoy combines a brilliant mind with the agility and strength of a beast.", fame: 2),
        Known(1_009_362, "Iceman", fame: 2),
        Known(1_009_249, "Colossus", fame: 1),
        Known(1_009_472, "Nightcrawler", "A teleporting mutant with a swashbuckler's heart.", fame: 2),
        Known(1_009_508, "Kitty Pryde", fame: 1),
        Known(1_009_685, "Ultron", "A robot that turned against its creator and all of humanity.", fame: 1),
        Known(1_009_535, "Red Skull", fame: 1),
        Known(1_009_389, "Kingpin", "Wilson Fisk, the crime lord of New York.", fame: 1),
        Known(1_009_288, "Elektra", fame: 1),
        Known(1_009_215, "Luke Cage", "With unbreakable skin, Luke Cage became a hero for hire.", fame: 1),
        Known(1_009_378, "Jessica Jones", fame: 1),
        Known(1_009_440, "Moon Knight", fame: 1),
        Known(1_009_318, "Ghost Rider (Johnny Blaze)", fame: 1),
        Known(1_009_165, "Avengers", "Earth's Mightiest Heroes joined forces to face the foes no single hero could withstand.", fame: 2),
        Known(1_009_726, "X-Men", "Mutants sworn to protect a world that fears and hates them.", fame: 2),
        Known(1_009_299, "Fantastic Four", fame: 2),
        Known(1_009_459, "Mr. Fantastic", "Reed Richards, whose body stretches as far as his genius.", fame: 2),
        Known(1_009_366, "Invisible Woman", fame: 2),
        Known(1_009_356, "Human Torch", fame: 2),
        Known(1_009_662, "Thing", "Ben Grimm, the ever-lovin' blue-eyed Thing.", fame: 2),
    ]

    private static let nameAdjectives = [
        "Crimson", "Silver", "Iron", "Midnight", "Scarlet", "Quantum", "Shadow", "Golden", "Cosmic",
        "Arctic", "Ember", "Thunder", "Obsidian", "Radiant", "Phantom", "Solar", "Lunar", "Steel", "Storm",
        "Neon", "Savage", "Emerald",
    ]
    private static let nameNouns = [
        "Falcon", "Warden", "Sentinel", "Witch", "Knight", "Hawk", "Spectre", "Fury", "Lancer", "Moth",
        "Viper", "Titan", "Oracle", "Ranger", "Cobra", "Wraith", "Comet", "Nomad", "Harbinger", "Mantis",
    ]
    private static let nameSuffixes = [" (Earth-616)", " (Ultimate)", " (Age of Apocalypse)", " (2099)", " (House of M)"]
    private static let descriptionTemplates = [
        "{n} first appeared as a villain before an uneasy alliance with the Avengers.",
        "A former S.H.I.E.L.D. agent, {n} now works alone.",
        "Exposed to an experimental energy source, {n} gained powers no one fully understands.",
        "{n} guards a hidden city and rarely leaves it.",
        "Little is known about {n} beyond a handful of sightings.",
    ]
    static let seriesTitles = [
        "Avengers", "Amazing Spider-Man", "Uncanny X-Men", "Fantastic Four", "Captain America", "Iron Man",
        "Thor", "Incredible Hulk", "Daredevil", "Wolverine", "X-Men", "New Avengers", "Marvel Team-Up",
        "Marvel Two-in-One", "Defenders", "Guardians of the Galaxy", "Secret Wars", "Civil War",
        "Ultimate Spider-Man", "Deadpool", "Black Panther", "Thunderbolts", "West Coast Avengers",
        "Alpha Flight", "New Mutants", "Excalibur", "X-Factor", "Marvel Comics Presents", "What If?",
        "Tales of Suspense",
    ]
    static let events: [(id: Int, name: String)] = [
        (238, "Civil War"), (270, "Secret Wars"), (269, "Secret Invasion"), (29, "Infinity Gauntlet"),
        (251, "House of M"), (227, "Age of Apocalypse"), (302, "Fear Itself"), (319, "Siege"),
        (310, "Avengers VS X-Men"), (229, "Annihilation"), (318, "Dark Reign"), (273, "World War Hulk"),
        (256, "Onslaught"), (151, "Maximum Carnage"), (246, "Inferno"), (280, "X-Tinction Agenda"),
        (116, "Acts of Vengeance!"), (233, "Atlantis Attacks"), (253, "Infinity War"), (249, "Kree-Skrull War"),
    ]
}

/// One Marvel character.
struct MarvelCharacterRecord: Sendable {
    let id: Int
    let name, description, modified: String
    /// `/images/marvel/...`, the demo-relative `thumbnail.path`.
    let thumbnailPath, thumbnailExtension: String
    let comics, series, stories, events: MarvelCollectionRecord
    let hasWiki: Bool

    /// Marvel's default order: by name, ignoring case, then by id.
    static func nameOrder(_ lhs: MarvelCharacterRecord, _ rhs: MarvelCharacterRecord) -> Bool {
        let left = lhs.name.lowercased()
        let right = rhs.name.lowercased()
        return left != right ? left < right : lhs.id < rhs.id
    }
}

/// One of a character's collections.
struct MarvelCollectionRecord: Sendable {
    let kind: MarvelCatalog.CollectionKind
    let available: Int
    let items: [MarvelItem]
}

/// A comic, series, story or event reference.
struct MarvelItem: Sendable {
    let id: Int
    let name: String
    /// Stories only: "cover", "interiorStory" or "".
    let type: String?
}
