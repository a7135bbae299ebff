import Foundation
import GRDB
import KioskCore

// Offline search: FTS5 with a pattern built from the user's words only, and a LIKE scan as the
// benchmark's baseline.

extension AppDatabase {
    /// More words than this add nothing a user meant and only slow the query down.
    static let maxSearchTerms = 8
    /// Longer "words" (pasted garbage) are cut; a prefix of a prefix still matches.
    static let maxSearchTermLength = 64

    /// The FTS5 pattern for user input, or nil when it holds no word.
    ///
    /// Every run of letters and digits becomes a quoted prefix term (`"word"*`), and the terms are
    /// ANDed. Quoting is what makes any input safe: inside a string FTS5 has no operators, so
    /// `AND`, `NEAR(`, `-`, `:`, `*`, `^` and parentheses are just text, and quotes cannot occur
    /// because they are not letters. The table's own tokenizer then re-tokenizes each string,
    /// which is how "Doré" and "dore" meet. (GRDB's `FTS5Pattern(matchingAllPrefixesIn:)` does the
    /// same but opens two temporary databases per call to tokenize and validate.)
    static func ftsPattern(for text: String) -> String? {
        var terms: [String] = []
        var seen: Set<String> = []
        var word = ""
        func flush() {
            defer { word = "" }
            guard !word.isEmpty, terms.count < maxSearchTerms else { return }
            let term = String(word.prefix(maxSearchTermLength))
            if seen.insert(term.lowercased()).inserted { terms.append(term) }
        }
        for character in text {
            if character.isLetter || character.isNumber {
                word.append(character)
            } else {
                flush()
            }
        }
        flush()
        guard !terms.isEmpty else { return nil }
        return terms
            .map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"*" }
            .joined(separator: " ")
    }

    // CROSS JOIN pins the loop order: the full-text match drives, items are looked up by rowid.
    // `rank` is bm25 with the column weights configured in the migration.
    private static let searchSQL = """
        SELECT item.payload FROM itemSearch CROSS JOIN item ON item.id = itemSearch.rowid
        WHERE itemSearch MATCH ?
        ORDER BY itemSearch.rank LIMIT ?
        """
    private static let searchInSourceSQL = """
        SELECT item.payload FROM itemSearch CROSS JOIN item ON item.id = itemSearch.rowid
        WHERE itemSearch MATCH ? AND item.source = ?
        ORDER BY itemSearch.rank LIMIT ?
        """

    static func fullTextSearch(pattern: String, source: SourceID?, limit: Int, _ db: Database) throws -> [CatalogItem] {
        if let source {
            return try fetchItems(db, sql: searchInSourceSQL, arguments: [pattern, source.rawValue, limit])
        }
        return try fetchItems(db, sql: searchSQL, arguments: [pattern, limit])
    }

    private static let likeSQL = """
        SELECT payload FROM item
        WHERE (title LIKE ?1 ESCAPE '\\' OR subtitle LIKE ?1 ESCAPE '\\'
               OR summary LIKE ?1 ESCAPE '\\' OR keywords LIKE ?1 ESCAPE '\\')
        ORDER BY title, id LIMIT ?2
        """
    private static let likeInSourceSQL = """
        SELECT payload FROM item
        WHERE source = ?3
          AND (title LIKE ?1 ESCAPE '\\' OR subtitle LIKE ?1 ESCAPE '\\'
               OR summary LIKE ?1 ESCAPE '\\' OR keywords LIKE ?1 ESCAPE '\\')
        ORDER BY title, id LIMIT ?2
        """

    static func likeSearch(_ text: String, source: SourceID?, limit: Int, _ db: Database) throws -> [CatalogItem] {
        // The user's % and _ are literal characters, not wildcards.
        let escaped = text
            .replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
        let pattern = "%\(escaped)%"
        if let source {
            return try fetchItems(db, sql: likeInSourceSQL, arguments: [pattern, limit, source.rawValue])
        }
        return try fetchItems(db, sql: likeSQL, arguments: [pattern, limit])
    }
}
