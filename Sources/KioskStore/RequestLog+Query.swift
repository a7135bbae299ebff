import Foundation
import GRDB
import KioskCore

// Reading the log: the filtered list (newest first, without bodies) and one full record.
//
// How a list query stays fast over 100,000 records:
// - Without text, the newest rows are walked backwards by id, through the index of an equality
//   filter when there is one (each index is ordered by (value, id)), until `limit` rows match.
// - With text, FTS5 walks the matches newest first (it serves ORDER BY rowid DESC and `rowid < ?`
//   from the index) and each one is joined to its row by primary key, so the query stops at
//   `limit` matches. But FTS5 evaluates a prefix by merging the whole doclist of every term it
//   starts before returning a row (20 ms for a word in 25,000 of 100,000 requests), so, as in
//   AppDatabase+Search.swift, words of 1 to 3 characters are read from the prefix indexes, and
//   longer ones are replaced by the exact terms they stand for (from `logSearchVocab`), an OR of
//   exact terms being read lazily (0.2 ms).
// The worst case is a filter combination that matches almost nothing among many text matches:
// it reads every match (tens of milliseconds at 100,000), and only when a user asks for it.

extension RequestLog {
    /// The columns of a record without its bodies, in the order `record(from:)` reads them.
    private static let entryColumns = """
        logEntry.id, logEntry.startedAt, logEntry.source, logEntry.endpoint, logEntry.method, logEntry.url,
        logEntry.status, logEntry.decision, logEntry.queued, logEntry.connect, logEntry.firstByte,
        logEntry.download, logEntry.duration, logEntry.error, logEntry.requestBodySize,
        logEntry.responseBodySize, logEntry.requestHeaders, logEntry.responseHeaders, logEntry.touchedBy
        """

    /// The records matching `filter`, newest first; with `includingBodies`, each with its bodies, read by
    /// the same statement (an export reads hundreds at a time).
    static func fetchRecords(matching filter: RequestFilter, includingBodies: Bool = false, _ db: Database) throws -> [RequestRecord] {
        var conditions: [String] = []
        var arguments = StatementArguments()
        /// Adds `condition` with its one argument, when there is a value to compare with.
        func require(_ condition: String, _ value: (any DatabaseValueConvertible)?) {
            guard let value else { return }
            conditions.append(condition)
            arguments += [value]
        }
        var pattern: String?
        switch try filter.text.map({ try searchPattern(for: $0, db) }) {
        case .noMatch: return []
        case .match(let match): pattern = match
        case .noWords, nil: pattern = nil
        }
        require("logSearch MATCH ?", pattern)
        // With a text pattern the cursor is on the FTS5 side, so that it starts its walk below it.
        require(pattern == nil ? "logEntry.id < ?" : "logSearch.rowid < ?", filter.beforeID)
        require(pattern == nil ? "logEntry.id > ?" : "logSearch.rowid > ?", filter.afterID)
        require("logEntry.source = ?", filter.source?.rawValue)
        require("logEntry.statusClass = ?", filter.statusClass?.rawValue)
        require("logEntry.method = ?", filter.method)
        require("logEntry.decision = ?", filter.decision?.rawValue)
        require("logEntry.duration >= ?", filter.minimumDuration)
        arguments += [filter.limit]

        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let columns = includingBodies ? entryColumns + ", logBody.requestBody, logBody.responseBody" : entryColumns
        let bodies = includingBodies ? "LEFT JOIN logBody ON logBody.id = logEntry.id" : ""
        // CROSS JOIN keeps the FTS5 table the outer loop, walked newest first.
        let sql = pattern == nil
            ? "SELECT \(columns) FROM logEntry \(bodies) \(whereClause) ORDER BY logEntry.id DESC LIMIT ?"
            : """
              SELECT \(columns) FROM logSearch CROSS JOIN logEntry ON logEntry.id = logSearch.rowid \(bodies)
              \(whereClause) ORDER BY logSearch.rowid DESC LIMIT ?
              """
        let decoder = JSONDecoder()
        // A row this version cannot read (written by a newer Kiosk) is left out rather than
        // making the whole debugger list fail.
        return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).compactMap { row in
            guard let record = record(from: row, decoder: decoder) else { return nil }
            return includingBodies ? withBodies(record, row) : record
        }
    }

    static func fetchRecord(id: Int64, _ db: Database) throws -> RequestRecord? {
        let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT \(entryColumns), logBody.requestBody, logBody.responseBody
            FROM logEntry LEFT JOIN logBody ON logBody.id = logEntry.id
            WHERE logEntry.id = ?
            """), arguments: [id])
        guard let row, let record = record(from: row, decoder: JSONDecoder()) else { return nil }
        return withBodies(record, row)
    }

    /// `record` with the bodies of a row of `entryColumns` followed by the two body columns.
    private static func withBodies(_ record: RequestRecord, _ row: Row) -> RequestRecord {
        var record = record
        // A NULL size means no body; a zero-length BLOB may read back as NULL, hence `?? Data()`.
        if let size: Int = row[14] {
            record.requestBody = CapturedBody(data: row[19] ?? Data(), originalSize: size)
        }
        if let size: Int = row[15] {
            record.responseBody = CapturedBody(data: row[20] ?? Data(), originalSize: size)
        }
        return record
    }

    static func fetchCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM logEntry") ?? 0
    }

    /// The record of a row of `entryColumns`, without bodies; nil when a value is not one this
    /// version knows (a source or cache decision added later).
    private static func record(from row: Row, decoder: JSONDecoder) -> RequestRecord? {
        guard let decision = CacheDecision(rawValue: row[7]),
              let requestHeaders = headers(fromJSON: row[16], decoder),
              let responseHeaders = headers(fromJSON: row[17], decoder)
        else { return nil }
        var source: SourceID?
        if let name: String = row[2] {
            guard let known = SourceID(rawValue: name) else { return nil }
            source = known
        }
        var touchedBy: [ExchangeTouch] = []
        if let json: String = row[18] {
            // A touch of a kind this version does not know leaves the list empty rather than the record out.
            touchedBy = (try? decoder.decode([ExchangeTouch].self, from: Data(json.utf8))) ?? []
        }
        return RequestRecord(
            id: row[0], startedAt: Date(timeIntervalSinceReferenceDate: row[1]), source: source,
            endpoint: row[3], method: row[4], url: row[5], requestHeaders: requestHeaders, status: row[6],
            responseHeaders: responseHeaders, error: row[13],
            timings: RequestTimings(queued: row[8], connect: row[9], firstByte: row[10], download: row[11],
                                    total: row[12]),
            decision: decision, touchedBy: touchedBy)
    }

    private static func headers(fromJSON json: String, _ decoder: JSONDecoder) -> [RequestRecord.HeaderField]? {
        guard json != "[]" else { return [] }
        guard let pairs = try? decoder.decode([[String]].self, from: Data(json.utf8)),
              pairs.allSatisfy({ $0.count == 2 })
        else { return nil }
        return pairs.map { RequestRecord.HeaderField(name: $0[0], value: $0[1]) }
    }

    /// What a search text asks for.
    enum SearchPattern: Equatable {
        /// No word at all (blank, only symbols): the text criterion matches everything, like an
        /// empty one.
        case noWords
        /// A word no logged request contains: nothing matches, without querying the index.
        case noMatch
        /// An FTS5 MATCH pattern.
        case match(String)
    }

    /// The FTS5 pattern for user input: each word (tokenized like the index, so "Doré" becomes
    /// `dore`) must prefix a term of the URL or of a body.
    ///
    /// Any input is safe: the pattern is made only of index tokens, each double-quoted, so FTS5
    /// never sees an operator (`AND`, `NEAR(`, `-`, `:`, `*`, `^`) from the user; the same approach
    /// as AppDatabase's search, including its expansion of long prefixes.
    static func searchPattern(for text: String, _ db: Database) throws -> SearchPattern {
        var tokens: [String] = []
        try SearchTokenizer(db).forEachToken(in: text, tokenization: .query) { token in
            if tokens.count < AppDatabase.maxSearchTerms, !tokens.contains(token) { tokens.append(token) }
        }
        guard !tokens.isEmpty else { return .noWords }

        var groups: [String] = []
        let expansions = try db.cachedStatement(sql: """
            SELECT term FROM logSearchVocab WHERE term >= ? AND term < ? LIMIT ?
            """)
        for token in tokens {
            if token.unicodeScalars.count <= AppDatabase.indexedPrefixLength {
                groups.append(quoted(token) + "*")
                continue
            }
            // Every term that starts with `token` sorts between it and `token` + the last scalar.
            let terms = try String.fetchAll(expansions, arguments: [token, token + "\u{10FFFF}",
                                                                    AppDatabase.maxPrefixExpansions + 1])
            if terms.isEmpty { return .noMatch }
            groups.append(terms.count > AppDatabase.maxPrefixExpansions
                ? quoted(token) + "*"
                : "(" + terms.map(quoted).joined(separator: " OR ") + ")")
        }
        return .match(groups.joined(separator: " AND "))
    }

    private static func quoted(_ token: String) -> String {
        "\"" + token.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
