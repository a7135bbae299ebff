import Foundation
import KioskCore
import Testing
@testable import KioskStore

@Suite("Search")
struct SearchTests {
    /// A small catalog of two sources with accents, keywords and summaries.
    static func makeDatabase() throws -> AppDatabase {
        let database = try AppDatabase.inMemory()
        try database.saveItems([
            Fixtures.article("doré", title: "Gustave Doré at the museum", summary: "Engravings of Paris"),
            Fixtures.article("climate", title: "A warmer planet", summary: "Climate scientists warn about heat waves",
                             keywords: ["Global Warming", "Greenhouse Gas Emissions"]),
            Fixtures.article("creme", title: "Crème brûlée, the perfect recipe", summary: "Dessert"),
            Fixtures.article("summary-mars", title: "Space news", summary: "A rover on Mars found water"),
            Fixtures.article("title-mars", title: "Mars rover lands", summary: "Space news"),
            Fixtures.character("1", name: "Rick Sanchez"),
            Fixtures.character("2", name: "Morty Smith"),
            Fixtures.character("3", name: "Birdperson", species: "Bird-Person"),
        ])
        return database
    }

    @Test("search finds words in the title, the summary and the keywords")
    func findsByField() throws {
        let database = try Self.makeDatabase()
        #expect(try database.search("museum").map(\.itemID) == ["doré"])
        #expect(try database.search("scientists").map(\.itemID) == ["climate"])
        #expect(try database.search("greenhouse").map(\.itemID) == ["climate"])
        // Keywords of Rick and Morty characters include their species.
        #expect(try database.search("bird person").map(\.itemID) == ["3"])
    }

    @Test("every word is a prefix, and all words must match")
    func prefixes() throws {
        let database = try Self.makeDatabase()
        #expect(try database.search("sanc").map(\.itemID) == ["1"])
        #expect(try database.search("mor smi").map(\.itemID) == ["2"])
        #expect(try database.search("sanchez smith").isEmpty)
    }

    @Test("search ignores accents and case in both directions")
    func accents() throws {
        let database = try Self.makeDatabase()
        #expect(try database.search("dore").map(\.itemID) == ["doré"])
        #expect(try database.search("DORÉ").map(\.itemID) == ["doré"])
        #expect(try database.search("creme brulee").map(\.itemID) == ["creme"])
    }

    @Test("a title match ranks above a summary match")
    func ranking() throws {
        let database = try Self.makeDatabase()
        #expect(try database.search("mars").map(\.itemID) == ["title-mars", "summary-mars"])
    }

    @Test("search can be narrowed to one source and limited")
    func sourceAndLimit() throws {
        let database = try Self.makeDatabase()
        // "s" prefixes words of both sources (Space, Sanchez, Smith...).
        #expect(try database.search("s", source: .rickandmorty).allSatisfy { $0.source == .rickandmorty })
        #expect(try database.search("s", source: .rickandmorty).count == 2)
        #expect(try database.search("s", source: .nyt).allSatisfy { $0.source == .nyt })
        #expect(try database.search("s", limit: 1).count == 1)
        #expect(try database.search("s", limit: 0).isEmpty)
    }

    @Test("hostile input never throws", arguments: [
        "\"", "\"\"", "*", "AND", "OR", "NOT", "NEAR", "(", ")", "NEAR(", "NEAR(rick morty", "-", "-rick", ":",
        "title:rick", "'", "rick'", "^rick", "{title}: rick", "rick AND", "OR OR", "\\", "%", "_", "+", "\u{0}",
        "😀", "🐕‍🦺 dog", "", "   ", "\n\t", String(repeating: "a", count: 1000),
        String(repeating: "a ", count: 500), String(repeating: "\"(*", count: 334),
    ])
    func hostileInput(_ text: String) throws {
        // Given a populated store
        let database = try Self.makeDatabase()
        // When the input is searched both ways, then nothing throws (#expect fails on a throw)
        _ = try database.search(text)
        _ = try database.search(text, source: .nyt)
        _ = try database.searchByLike(text)
    }

    @Test("input without any word finds nothing")
    func symbolOnlyInput() throws {
        let database = try Self.makeDatabase()
        for text in ["", "  ", "\"", "*", "(", "-", ":", "'", "😀", "🐕‍🦺", "\"(*)\":-^"] {
            #expect(try database.search(text).isEmpty, "\(text)")
        }
    }

    @Test("operator words are searched as plain words")
    func operatorsAreWords() throws {
        // Given items whose titles contain operator words
        let database = try AppDatabase.inMemory()
        try database.saveItems([Fixtures.article("1", title: "Rock AND roll"), Fixtures.article("2", title: "Near the end")])
        // Then searching them finds them instead of failing or being parsed
        #expect(try database.search("AND roll").map(\.itemID) == ["1"])
        #expect(try database.search("NEAR(").map(\.itemID) == ["2"])
        #expect(try database.search("\"rock\" -roll*").map(\.itemID) == ["1"])
    }

    @Test("the index follows updates and deletions of items")
    func indexStaysInSync() throws {
        // Given an indexed item
        let database = try AppDatabase.inMemory()
        try database.saveItems([Fixtures.article("1", title: "Original headline")])
        #expect(try database.search("original").count == 1)

        // When it is updated
        try database.saveItems([Fixtures.article("1", title: "Corrected headline")])

        // Then the old words no longer find it and the new ones do
        #expect(try database.search("original").isEmpty)
        #expect(try database.search("corrected").map(\.title) == ["Corrected headline"])

        // When the cache is cleared (the item is not a favorite)
        try database.clearCache()

        // Then it is no longer found
        #expect(try database.search("corrected").isEmpty)
    }

    @Test("long prefixes are expanded to the stored terms they stand for")
    func longPrefixes() throws {
        let database = try Self.makeDatabase()
        #expect(try database.search("gust").map(\.itemID) == ["doré"])
        #expect(try database.search("sanche").map(\.itemID) == ["1"])
        #expect(try database.search("engrav pari").map(\.itemID) == ["doré"])
        // A word that starts no stored term answers at once with nothing.
        #expect(try database.search("zzzzqq").isEmpty)
        #expect(try database.search("rick zzzzqq").isEmpty)
        // Operators in the input end up as quoted words only.
        let pattern = try database.writer.read { try AppDatabase.searchPattern(for: "Doré (OR x*", source: .nyt, $0) }
        #expect(pattern == .match(#"source : "nyt" AND {title subtitle summary keywords} : (("dore") AND "or"* AND "x"*)"#))
    }

    @Test("a prefix of more stored terms than are expanded still finds them all")
    func manyExpansions() throws {
        // Given 40 distinct terms sharing the prefix "term"
        let database = try AppDatabase.inMemory()
        try database.saveItems((0..<40).map { Fixtures.article("\($0)", title: "term\(1000 + $0)") })

        // When the prefix is searched, Then every item is found (through a plain prefix query)
        #expect(try database.search("term", limit: 100).count == 40)
        #expect(try database.search("term101", limit: 100).count == 10)
    }

    @Test("when more items match than are ranked, search still returns the limit, all matching")
    func manyMatches() throws {
        // Given more matching items than the ranking considers
        let database = try AppDatabase.inMemory()
        let count = AppDatabase.rankedCandidates + 200
        try database.saveItems((0..<count).map {
            Fixtures.article("\($0)", title: $0 % 2 == 0 ? "Common title \($0)" : "Other \($0)", summary: "common words")
        })
        // When a word all of them contain is searched
        let found = try database.search("common", limit: 50)
        // Then 50 are returned, title matches first
        #expect(found.count == 50)
        #expect(found.allSatisfy { $0.title.hasPrefix("Common") })
    }

    @Test("the vocabulary follows updates and is rebuilt when the cache is cleared")
    func vocabularyMaintenance() throws {
        // Given an item, updated with new words
        let database = try AppDatabase.inMemory()
        try database.saveItems([Fixtures.article("1", title: "Original"), Fixtures.article("2", title: "Ephemeral")])
        try database.saveItems([Fixtures.article("1", title: "Corrected headline")])
        #expect(try database.search("correc").map(\.itemID) == ["1"])

        // When the cache is cleared with only item 1 a favorite
        try database.setFavorite(true, source: .nyt, itemID: "1")
        try database.clearCache()

        // Then the vocabulary holds only the favorite's words, which are still found by prefix
        let terms = try database.writer.read { try String.fetchAll($0, sql: "SELECT term FROM searchTerm ORDER BY term") }
        #expect(terms.contains("corrected") && terms.contains("headline"))
        #expect(!terms.contains("ephemeral"))
        #expect(try database.search("headl").map(\.itemID) == ["1"])
    }

    @Test("the LIKE baseline finds substrings case-insensitively and treats % and _ literally")
    func likeSearch() throws {
        let database = try Self.makeDatabase()
        try database.saveItems([Fixtures.article("pct", title: "100% sure"), Fixtures.article("under", title: "snake_case")])
        #expect(try database.searchByLike("ORTY").map(\.itemID) == ["2"])
        #expect(try database.searchByLike("warming").map(\.itemID) == ["climate"])
        #expect(try database.searchByLike("%").map(\.itemID) == ["pct"])
        #expect(try database.searchByLike("e_c").map(\.itemID) == ["under"])
        #expect(try database.searchByLike("mars", source: .rickandmorty).isEmpty)
        #expect(try database.searchByLike("  ").isEmpty)
    }
}
