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
