import Foundation
import GRDB
import KioskCore

// Offline search: FTS5 with a pattern built from the user's words only, and a LIKE scan as the
// benchmark's baseline.
//
// How a query stays within a few milliseconds over 100,000 items, whatever the input:
// - Every word is a prefix, but FTS5 evaluates a prefix phrase by merging the full doclist of
//   every matching term before returning the first row (3 ms for a word found in 40,000 items).
//   Prefixes of 1 to 3 characters are read from the table's prefix indexes instead, and longer
//   ones are replaced by the exact terms they stand for, found in `searchTerm`: an OR of exact
//   terms is read lazily, so the query stops as soon as it has enough rows.
// - Only the newest `rankedCandidates` matches are ranked (see `rankedCandidates`).
// - Ranking is `kiosk_rank`, a BM25 without the per-query IDF scan (see SearchRanking.swift).

extension AppDatabase {
    /// More words than this add nothing a user meant and only slow the query down.
    static let maxSearchTerms = 8
    /// A prefix standing for more terms than this is searched as a prefix (slower, still correct).
    static let maxPrefixExpansions = 32
    /// Prefixes of at most this many characters are served by the table's prefix indexes.
    static let indexedPrefixLength = 3
    /// How many of the most recently stored matches are ranked.
    ///
    /// Ranking costs a few microseconds per row, and a common word or a one-letter prefix over
    /// 100,000 items matches most of them. Ranking only the newest `rankedCandidates` matches
    /// bounds a search whatever the input; queries with fewer matches, which is what a user has
    /// typed after a word or two, are ranked over all their matches.
    static let rankedCandidates = 500

    /// What a search text asks for.
    enum SearchPattern: Equatable {
        /// No word at all (empty, blank, only symbols or emoji): nothing to search.
        case noWords
        /// A word no stored item can match: the answer is empty without querying the index.
        case noMatch
        /// An FTS5 MATCH pattern over the text columns.
        case match(String)
    }

    /// The MATCH pattern for user input: each word of it (tokenized like the index, so "Doré"
    /// becomes `dore`) must be the prefix of a term of the title, subtitle, summary or keywords.
    ///
    /// Any input is safe: the pattern is made only of index tokens, each double-quoted, so FTS5
    /// never sees an operator (`AND`, `NEAR(`, `-`, `:`, `*`, `^`, parentheses) from the user.
    static func searchPattern(for text: String, source: SourceID?, _ db: Database) throws -> SearchPattern {
        var tokens: [String] = []
        try SearchTokenizer(db).forEachToken(in: text, tokenization: .query) { token in
            if tokens.count < maxSearchTerms, !tokens.contains(token) { tokens.append(token) }
        }
        guard !tokens.isEmpty else { return .noWords }

        var groups: [String] = []
        let expansionsStatement = try db.cachedStatement(sql: """
            SELECT term FROM searchTerm WHERE term >= ? AND term < ? ORDER BY term LIMIT ?
            """)
        for token in tokens {
            if token.unicodeScalars.count <= indexedPrefixLength {
                groups.append(quoted(token) + "*")
                continue
            }
            // Every term that starts with `token` sorts between it and `token` + the last scalar.
            let expansions = try String.fetchAll(expansionsStatement,
                                                 arguments: [token, token + "\u{10FFFF}", maxPrefixExpansions + 1])
            if expansions.isEmpty { return .noMatch }
            if expansions.count > maxPrefixExpansions {
                groups.append(quoted(token) + "*")
            } else {
                groups.append("(" + expansions.map(quoted).joined(separator: " OR ") + ")")
            }
        }
        // The column filter keeps the user's words away from the `source` column ("nyt" must not
        // match every NYT item); the source, when given, is one more phrase of the same query.
        // The AND is explicit because FTS5 only allows an implicit one between plain phrases.
        let text = "{title subtitle summary keywords} : (\(groups.joined(separator: " AND ")))"
        guard let source else { return .match(text) }
        return .match("source : \(quoted(source.rawValue)) AND \(text)")
    }

    private static func quoted(_ token: String) -> String {
        "\"" + token.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    // The inner query walks matches newest first (FTS5 serves ORDER BY rowid DESC from the index
    // and stops at the LIMIT), ranking only those; the outer query keeps the best, newest first
    // among equals.
    private static let searchSQL = """
        SELECT item.payload
        FROM (SELECT rowid AS id, \(SearchRanking.functionName)(itemSearch) AS relevance
              FROM itemSearch WHERE itemSearch MATCH ?1
              ORDER BY rowid DESC LIMIT ?3) AS hit
        JOIN item ON item.id = hit.id
        ORDER BY hit.relevance DESC, hit.id DESC
        LIMIT ?2
        """

    static func fullTextSearch(_ text: String, source: SourceID?, limit: Int, _ db: Database) throws -> [CatalogItem] {
        guard case .match(let pattern) = try searchPattern(for: text, source: source, db) else { return [] }
        return try fetchItems(db, sql: searchSQL, arguments: [pattern, limit, max(limit, rankedCandidates)])
    }

    /// Adds the long terms of the searchable texts of changed items to `searchTerm`, within the
    /// caller's transaction.
    static func addSearchTerms(of texts: [String], _ db: Database) throws {
        guard !texts.isEmpty else { return }
        let tokenizer = try SearchTokenizer(db)
        var terms: Set<String> = []
        for text in texts {
            try tokenizer.forEachToken(in: text, tokenization: .document) { token in
                if token.unicodeScalars.count > indexedPrefixLength { terms.insert(token) }
            }
        }
        guard !terms.isEmpty else { return }
        // One statement for all terms (a JSON array unpacked by json_each), for the same reason
        // items are upserted in chunks: each statement costs an FTS5 savepoint flush.
        let json = try String(decoding: JSONEncoder().encode(Array(terms)), as: UTF8.self)
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO searchTerm (term) SELECT value FROM json_each(?)")
            .execute(arguments: [json])
    }

    /// Rebuilds `searchTerm` from the stored items (after `clearCache` deleted most of them).
    static func rebuildSearchTerms(_ db: Database) throws {
        try SearchTermRecord.deleteAll(db)
        let texts = try String.fetchAll(db, sql: """
            SELECT title || ' ' || subtitle || ' ' || summary || ' ' || keywords FROM item
            """)
        try addSearchTerms(of: texts, db)
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
