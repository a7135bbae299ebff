import Foundation
import KioskCore

/// The shared pool of New York Times articles and the rankings the most-popular lists draw from it.
///
/// Every list (kind × period × share type) ranks the same pool differently, the way the real
/// lists overlap. Texts are composed from topics and templates; everything is seeded, so the pool is
/// the same on every run.
struct NYTCatalog: Sendable {
    /// Articles in the pool, in creation order.
    let articles: [NYTArticle]
    /// Image directories (`/images/nyt/...`, without the file) that the image route serves.
    let imageDirectories: Set<String>

    static let kinds = ["emailed", "viewed", "shared"]
    static let periods = [1, 7, 30]
    static let shareTypes = ["email", "facebook", "twitter"]
    static let resultsPerList = 20
    static let copyright = "Copyright (c) 2026 The New York Times Company.  All Rights Reserved."

    /// The image renditions the Most Popular API lists, with their real sizes.
    static let imageFormats: [(format: String, suffix: String, width: Int, height: Int)] = [
        ("Standard Thumbnail", "thumbStandard", 75, 75),
        ("mediumThreeByTwo210", "mediumThreeByTwo210", 210, 140),
        ("mediumThreeByTwo440", "mediumThreeByTwo440", 440, 293),
    ]

    /// The top articles of one list, best first, with the count the list reports for each.
    func ranking(kind: String, period: Int, shareType: String?) -> [(article: NYTArticle, count: Int)] {
        // Older articles fade faster from the shorter windows, as on the real site.
        let scale: Double = switch period {
        case 1: 1.5
        case 7: 5
        default: 18
        }
        let listKey = "\(kind)/\(period)/\(shareType ?? "-")"
        let scored = articles.map { article -> (NYTArticle, Double) in
            let jitter = Double(Hashing.fnv1a("\(listKey)#\(article.id)") >> 11) * 0x1.0p-53
            let score = article.popularity * exp(-Double(article.ageDays) / scale) * (0.5 + jitter)
            return (article, score)
        }
        let top = scored.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0.id < $1.0.id }.prefix(Self.resultsPerList)
        return top.map { ($0.0, max(1, Int(($0.1 * 4000).rounded()))) }
    }

    static func build() -> NYTCatalog {
        var random = SplitMix64(seed: 0x4E59_5443_4154_4C47)
        let today = CivilTime.unixSeconds(year: 2026, month: 5, day: 1)
        var articles: [NYTArticle] = []
        var directories = Set<String>()
        for index in 0..<90 {
            let topic = topics[index % topics.count]
            let variant = index / topics.count
            let template = (index % topics.count * 7 + variant * 3) % titleTemplates.count
            let title = titleTemplates[template].replacingOccurrences(of: "{S}", with: topic.subject.titleCased)
                .capitalizedFirst
            let abstract = abstractTemplates[(index + variant) % abstractTemplates.count]
                .replacingOccurrences(of: "{s}", with: topic.subject)

            // The first third is fresh, the rest spreads over the month, so every period has candidates.
            let ageDays = switch variant {
            case 0: random.int(in: 0...2)
            case 1: random.int(in: 0...9)
            default: random.int(in: 0...29)
            }
            let published = CivilTime(unixSeconds: today - ageDays * 86_400 + random.int(in: 5...20) * 3600
                + random.int(in: 0...3599))
            let updated = CivilTime(unixSeconds: today - ageDays * 86_400 + 21 * 3600 + random.int(in: 0...9000))
            let id = 100_000_010_000_000 + index * 48_611 + random.int(in: 0...999)

            var authors = [random.pick(reporters)]
            if random.chance(0.35) {
                let second = random.pick(reporters)
                if second != authors[0] { authors.append(second) }
            }
            let byline = "By " + authors.joined(separator: " and ")
            let sectionPath = topic.section.lowercased().slug
            let datePath = published.date.replacingOccurrences(of: "-", with: "/")
            let webPath = "/web/nyt/\(datePath)/\(sectionPath)/\(title.slug.split(separator: "-").prefix(8).joined(separator: "-")).html"

            var media: NYTMedia?
            if index % 6 != 5 {
                let day = CivilTime.pad(published.day)
                let words = topic.subject.slug.split(separator: "-").prefix(2).joined(separator: "-")
                let name = "\(day)\(words)-\(String(random.int(in: 0x1000...0xFFFF), radix: 16))"
                let directory = "/images/nyt/\(datePath)/multimedia/\(name)"
                directories.insert(directory)
                media = NYTMedia(
                    caption: random.pick(captionTemplates).replacingOccurrences(of: "{s}", with: topic.subject),
                    copyright: random.chance(0.6) ? "\(random.pick(photographers)) for The New York Times"
                        : random.pick(["Associated Press", "Getty Images", "Reuters", "Agence France-Presse — Getty Images"]),
                    approvedAsInteger: index % 2 == 0,
                    directory: directory,
                    baseName: name
                )
            }

            let uuid = Hex.encode((0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            let uuidText = [uuid.prefix(8), uuid.dropFirst(8).prefix(4), uuid.dropFirst(12).prefix(4),
                            uuid.dropFirst(16).prefix(4), uuid.dropFirst(20)].joined(separator: "-")
            let uri = "nyt://\(index % 11 == 4 ? "interactive" : "article")/\(uuidText)"

            articles.append(NYTArticle(
                id: id,
                uri: uri,
                webPath: webPath,
                publishedDate: published.date,
                updated: "\(updated.date) \(updated.time)",
                section: topic.section,
                subsection: topic.subsection,
                nytdsection: topic.section.lowercased(),
                byline: byline,
                type: index % 11 == 4 ? "Interactive" : "Article",
                title: title,
                abstract: abstract,
                desFacet: topic.descriptors,
                orgFacet: topic.organizations,
                perFacet: topic.people,
                geoFacet: topic.places,
                // Older responses send "" instead of [] for an empty facet; a client must accept both.
                emptyFacetsAsString: index % 4 == 1,
                media: media.map { [$0] } ?? [],
                popularity: 0.3 + random.unit(),
                ageDays: ageDays
            ))
        }
        return NYTCatalog(articles: articles, imageDirectories: directories)
    }

    private struct Topic {
        let subject, section, subsection: String
        let descriptors, organizations, people, places: [String]
    }

    private static let topics: [Topic] = [
        Topic(subject: "heat pumps", section: "Climate", subsection: "", descriptors: ["Heat Pumps", "Energy Efficiency", "Global Warming"], organizations: [], people: [], places: ["Maine"]),
        Topic(subject: "the housing market", section: "Business", subsection: "Real Estate", descriptors: ["Real Estate and Housing (Residential)", "Mortgages", "Interest Rates"], organizations: ["Federal Reserve System"], people: [], places: []),
        Topic(subject: "minor league baseball", section: "Sports", subsection: "Baseball", descriptors: ["Baseball", "Minor Leagues"], organizations: ["Major League Baseball"], people: [], places: ["Durham (NC)"]),
        Topic(subject: "sourdough", section: "Food", subsection: "", descriptors: ["Bread", "Cooking and Cookbooks", "Baking"], organizations: [], people: [], places: []),
        Topic(subject: "electric bikes", section: "Technology", subsection: "", descriptors: ["Bicycles and Bicycling", "Batteries", "Electric Vehicles"], organizations: [], people: [], places: ["New York City"]),
        Topic(subject: "local newspapers", section: "Business", subsection: "Media", descriptors: ["News and News Media", "Newspapers", "Layoffs and Job Reductions"], organizations: [], people: ["Okafor, Adaeze"], places: ["Ohio"]),
        Topic(subject: "offshore wind", section: "Climate", subsection: "", descriptors: ["Wind Power", "Alternative and Renewable Energy"], organizations: ["Interior Department"], people: [], places: ["Atlantic Ocean", "New Jersey"]),
        Topic(subject: "sleep trackers", section: "Well", subsection: "Live", descriptors: ["Sleep", "Wearable Computing", "Mobile Applications"], organizations: [], people: [], places: []),
        Topic(subject: "public libraries", section: "U.S.", subsection: "", descriptors: ["Libraries and Librarians", "Books and Literature", "Censorship"], organizations: [], people: [], places: ["Texas"]),
        Topic(subject: "the night shift", section: "Health", subsection: "", descriptors: ["Nurses and Nursing", "Workplace Hazards and Violations", "Sleep"], organizations: [], people: ["Lindqvist, Maja"], places: []),
        Topic(subject: "A.I. chatbots", section: "Technology", subsection: "", descriptors: ["Artificial Intelligence", "Computers and the Internet", "Chatbots"], organizations: ["OpenAI Labs", "Google Inc"], people: [], places: []),
        Topic(subject: "the Mediterranean diet", section: "Well", subsection: "Eat", descriptors: ["Diet and Nutrition", "Olive Oil", "Heart"], organizations: [], people: [], places: ["Greece"]),
        Topic(subject: "coral reefs", section: "Science", subsection: "", descriptors: ["Coral", "Oceans and Seas", "Global Warming"], organizations: [], people: [], places: ["Great Barrier Reef (Australia)"]),
        Topic(subject: "Broadway revivals", section: "Theater", subsection: "", descriptors: ["Theater", "Musicals", "Theater (Broadway)"], organizations: [], people: ["Marchetti, Lucia"], places: ["Manhattan (NYC)"]),
        Topic(subject: "train travel in Europe", section: "Travel", subsection: "", descriptors: ["Railroads", "Travel and Vacations"], organizations: ["Eurostar"], people: [], places: ["Europe", "France"]),
        Topic(subject: "the measles vaccine", section: "Health", subsection: "", descriptors: ["Measles", "Vaccination and Immunization", "Children and Childhood"], organizations: ["Centers for Disease Control and Prevention"], people: [], places: []),
        Topic(subject: "remote work", section: "Business", subsection: "", descriptors: ["Telecommuting", "Office Buildings and Commercial Properties", "Labor and Jobs"], organizations: [], people: [], places: []),
        Topic(subject: "climate migration", section: "Climate", subsection: "", descriptors: ["Global Warming", "Immigration and Emigration", "Floods"], organizations: [], people: [], places: ["Bangladesh"]),
        Topic(subject: "the Supreme Court", section: "U.S.", subsection: "Politics", descriptors: ["Decisions and Verdicts", "Law and Legislation"], organizations: ["Supreme Court (US)"], people: [], places: []),
        Topic(subject: "urban foxes", section: "Science", subsection: "", descriptors: ["Foxes", "Animals", "Cities"], organizations: [], people: [], places: ["London (England)"]),
        Topic(subject: "sneaker resale", section: "Style", subsection: "", descriptors: ["Shoes and Boots", "Collectors and Collections", "E-Commerce"], organizations: ["Nike Inc"], people: [], places: []),
        Topic(subject: "the World Cup", section: "Sports", subsection: "Soccer", descriptors: ["World Cup 2026 (Soccer)", "Soccer"], organizations: ["FIFA"], people: ["Duarte, Tomás"], places: ["Mexico", "Canada"]),
        Topic(subject: "tiny houses", section: "Real Estate", subsection: "", descriptors: ["Real Estate and Housing (Residential)", "Architecture"], organizations: [], people: [], places: ["Oregon"]),
        Topic(subject: "ancient DNA", section: "Science", subsection: "", descriptors: ["DNA (Deoxyribonucleic Acid)", "Archaeology and Anthropology", "Genetics and Heredity"], organizations: [], people: [], places: ["Siberia (Russia)"]),
        Topic(subject: "grocery prices", section: "Business", subsection: "Economy", descriptors: ["Food Prices", "Inflation (Economics)", "Supermarkets and Grocery Stores"], organizations: ["Kroger Company"], people: [], places: []),
        Topic(subject: "the Mars rover", section: "Science", subsection: "Space & Cosmos", descriptors: ["Mars (Planet)", "Space and Astronomy", "Rovers (Space Vehicles)"], organizations: ["National Aeronautics and Space Administration"], people: [], places: []),
        Topic(subject: "teenage screen time", section: "Well", subsection: "Family", descriptors: ["Teenagers and Adolescence", "Smartphones", "Social Media"], organizations: [], people: [], places: []),
        Topic(subject: "marathon training", section: "Well", subsection: "Move", descriptors: ["Running", "Marathon Running", "Exercise"], organizations: [], people: ["Mwangi, Grace"], places: ["Boston (Mass)"]),
        Topic(subject: "jazz clubs", section: "Arts", subsection: "Music", descriptors: ["Jazz", "Music", "Nightclubs and Cabarets"], organizations: [], people: [], places: ["Harlem (Manhattan, NY)"]),
        Topic(subject: "the Spelling Bee", section: "Crosswords & Games", subsection: "", descriptors: ["Puzzles", "Spelling", "Word Games"], organizations: [], people: [], places: []),
    ]

    // Templates avoid verbs that agree with the subject, so singular and plural subjects both read well.
    private static let titleTemplates = [
        "The Quiet Revolution in {S}",
        "Why Everyone Is Suddenly Talking About {S}",
        "{S}: What to Know Right Now",
        "Inside the Fight Over {S}",
        "How {S} Became a Flashpoint",
        "What We Get Wrong About {S}",
        "The Surprising Economics of {S}",
        "A Year Spent Watching {S} Up Close",
        "The Hidden Costs of {S}",
    ]

    private static let abstractTemplates = [
        "New research and dozens of interviews suggest that the story of {s} is entering a new phase, with consequences for millions of people.",
        "From small towns to big cities, {s} keeps coming up in conversation. Here is what is driving the debate.",
        "Experts say the changes around {s} were years in the making, but the past few months have accelerated them.",
        "We spent months reporting on {s}. These are the questions readers asked most, and what we found.",
    ]

    private static let captionTemplates = [
        "Interest in {s} has grown sharply over the past year.",
        "A scene that has become familiar to anyone following {s}.",
        "Advocates say {s} deserves far more attention than it gets.",
        "Critics of {s} say the benefits have been overstated.",
    ]

    private static let reporters = [
        "Hannah Whitaker", "Daniel Osei", "Priya Raman", "Marcus Feld", "Elena Varga", "Tom Achterberg",
        "Keiko Matsuda", "Ruth Abernathy", "Samuel Okonkwo", "Claire Dufresne", "Jonah Pritchard",
        "Isabel Moreno", "Victor Halloran", "Nadia Karimi", "Oliver Brandt", "Amara Nwosu",
        "Felix Lindgren", "Grace Huang", "Leo Castellano", "Miriam Stein",
    ]

    private static let photographers = [
        "Ana Ribeiro", "Caleb Norris", "Sofia Lindahl", "Jamal Bright", "Yuki Tanaka", "Peter Vasquez",
    ]
}

/// One article of the pool.
struct NYTArticle: Sendable {
    let id: Int
    let uri: String
    /// Path of the article's web page on the demo host.
    let webPath, publishedDate, updated, section, subsection, nytdsection, byline, type, title, abstract: String
    let desFacet, orgFacet, perFacet, geoFacet: [String]
    let emptyFacetsAsString: Bool
    let media: [NYTMedia]
    let popularity: Double
    let ageDays: Int

    /// `adx_keywords`: every facet joined with ";".
    var adxKeywords: String { (desFacet + orgFacet + perFacet + geoFacet).joined(separator: ";") }
}

/// The photo of an article.
struct NYTMedia: Sendable {
    let caption, copyright: String
    /// Real responses send `approved_for_syndication` as `1` in some items and `true` in others.
    let approvedAsInteger: Bool
    /// `/images/nyt/.../multimedia/<name>`.
    let directory, baseName: String
}
