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
// it reads every match (tens of milliseconds at 100,000), and only when a user asks for it. Words
// joined by symbols (`page=7`) are a phrase the index cannot tell (its detail is per record): each
// match of all their words whose URL holds each of them is then checked for the phrase in its URL
// (a few LIKEs on a short column: kiosk-bench --log measures it).

extension RequestLog {
    /// The columns of a record without its bodies, in the order `record(from:)` reads them.
    private static let entryColumns = """
        logEntry.id, logEntry.startedAt, logEntry.source, logEntry.endpoint, logEntry.method, logEntry.url,
        logEntry.status, logEntry.decision, logEntry.queued, logEntry.connect, logEntry.firstByte,
        logEntry.download, logEntry.duration, logEntry.error, logEntry.requestBodySize,
        logEntry.responseBodySize, logEntry.requestHeaders, logEntry.responseHeaders, logEntry.cacheStatus,
        logEntry.touchedBy, logEntry.dns, logEntry.tls, logEntry.httpVersion
        """

    /// The records matching `filter`, newest first; with `includingBodies`, each with its bodies, read by
    /// the same statement (an export reads hundreds at a time).
    /// Without `includingHeaders`, the headers are left empty rather than decoded (an export's first pass over ids).
    static func fetchRecords(matching filter: RequestFilter, includingBodies: Bool = false, includingHeaders: Bool = true,
                             _ db: Database) throws -> [RequestRecord] {
        guard let (sql, arguments) = try listQuery(matching: filter, includingBodies: includingBodies, db) else { return [] }
        let decoder = JSONDecoder()
        // A row this version cannot read (written by a newer Kiosk) is left out rather than
        // making the whole debugger list fail.
        // A text search names the index's segments, which change as records come and go: its statement is made for the
        // one read, not cached (each new set of segments would leave one more in every connection's cache).
        let statement = filter.text?.contains(where: { !$0.isWhitespace }) == true
            ? try db.makeStatement(sql: sql) : try db.cachedStatement(sql: sql)
        return try Row.fetchAll(statement, arguments: arguments).compactMap { row in
            guard let record = record(from: row, decoder: decoder, includingHeaders: includingHeaders) else { return nil }
            return includingBodies ? withBodies(record, row) : record
        }
    }

    /// SQLite's plan for the list query of `filter`, one step a line (for tests and benchmarks of the
    /// indexes); "" when the query would not run (a word no record contains).
    static func queryPlan(matching filter: RequestFilter, _ db: Database) throws -> String {
        guard let (sql, arguments) = try listQuery(matching: filter, includingBodies: false, db) else { return "" }
        return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments)
            .map { $0["detail"] as String? ?? "" }.joined(separator: "\n")
    }

    /// The list query of `filter` and its arguments; nil when nothing can match (a word no record contains).
    private static func listQuery(matching filter: RequestFilter, includingBodies: Bool,
                                  _ db: Database) throws -> (String, StatementArguments)? {
        var conditions: [String] = []
        var arguments = StatementArguments()
        /// Adds `condition` with its one argument, when there is a value to compare with.
        func require(_ condition: String, _ value: (any DatabaseValueConvertible)?) {
            guard let value else { return }
            conditions.append(condition)
            arguments += [value]
        }
        var pattern: String?
        var literal: String?
        switch try filter.text.map({ try searchPattern(for: $0, db) }) {
        case .noMatch: return nil
        case .match(let match): pattern = match
        // Symbols only (`✓`, `$$$`, `%`): no word for the index, so the URLs are searched for them as typed — a search
        // that matched every record would say they all hold it.
        case .noWords: literal = filter.text?.trimmingCharacters(in: .whitespacesAndNewlines)
            if literal?.isEmpty == true { literal = nil }
        case nil: pattern = nil
        }
        require("instr(logEntry.url, ?) > 0", literal)
        // Words typed joined by symbols (`per_page=5`, `api/character`) are found together in a URL: the index, whose detail
        // is too coarse for phrases, matched a URL holding them apart (`?per=1&page=5`). A URL holding each of them is a
        // match only with the phrase as typed (ASCII letters in any case); a record whose words are (some) in a body is
        // matched by them, as any other words are: reading every candidate's body for the phrase cost ~20 ms a search at
        // 100,000 records. Checked last, after every cheaper criterion (below).
        var phrases: [(condition: String, arguments: StatementArguments)] = []
        if pattern != nil {
            for run in joinedRuns(in: filter.text ?? "") {
                let words = run.lowered.split { !$0.isLetter && !$0.isNumber }.map(String.init)
                let like = { (text: String) in
                    "%" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                        .replacingOccurrences(of: "_", with: "\\_") + "%"
                }
                let apart = words.map { _ in "logEntry.url LIKE ? ESCAPE '\\'" }.joined(separator: " AND ")
                phrases.append(("(logEntry.url LIKE ? ESCAPE '\\' OR NOT (\(apart)))",
                                StatementArguments([like(run.lowered)] + words.map(like))))
            }
        }
        // With a text pattern the cursor is on the FTS5 side (below), so that it starts its walk below it.
        if pattern == nil {
            require("logEntry.id < ?", filter.beforeID)
            require("logEntry.id > ?", filter.afterID)
        }
        // Without text, a status criterion is two walks (below): as one condition, its OR made SQLite walk every GET.
        let splitsStatuses = pattern == nil && !filter.statuses.isEmpty && !filter.statuses.isNegated
        for (condition, values) in criteria(filter, includingStatuses: !splitsStatuses) {
            conditions.append(condition)
            arguments += StatementArguments(values)
        }
        for phrase in phrases {
            conditions.append(phrase.condition)
            arguments += phrase.arguments
        }

        let columns = includingBodies ? entryColumns + ", logBody.requestBody, logBody.responseBody" : entryColumns
        let bodies = includingBodies ? "LEFT JOIN logBody ON logBody.id = logEntry.bodyID" : ""
        guard let pattern else {
            guard splitsStatuses, let (direct, hidden) = statusClauses(filter) else {
                let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
                return ("SELECT \(columns) FROM logEntry \(bodies) \(whereClause) ORDER BY logEntry.id DESC LIMIT ?",
                        arguments + [filter.limit])
            }
            // The records with the status asked for, walked by the status classes' index when every status asked for is
            // one a log holds few of (a failure, 1xx, 4xx, 5xx): SQLite, without statistics of each value, takes any index
            // of an equality for as good as another, and walked every GET for `status:5xx method:GET`. Then those answered
            // with another status than the upstream's, by the partial index holding only them (migration v11).
            let rare = filter.statuses.values.allSatisfy { match in
                switch match {
                case .statusClass(let statusClass): [.error, .informational, .clientError, .serverError].contains(statusClass)
                case .code(let code): !(200..<400).contains(code)
                }
            }
            let statusWalk = "SELECT \(columns) FROM logEntry \(rare ? "INDEXED BY logEntry_on_statusClass" : "") \(bodies) WHERE "
                + ([direct.0] + conditions).joined(separator: " AND ") + " ORDER BY logEntry.id DESC LIMIT ?"
            let directArguments = StatementArguments(direct.1) + arguments + [filter.limit]
            guard let hidden else { return (statusWalk, directArguments) }
            let hiddenWalk = "SELECT \(columns) FROM logEntry INDEXED BY logEntryHiddenStatus \(bodies) WHERE "
                + ([hiddenStatusCondition, hidden.0, "NOT \(direct.0)"] + conditions).joined(separator: " AND ")
                + " ORDER BY logEntry.id DESC LIMIT ?"
            return ("SELECT * FROM (\(statusWalk))\nUNION ALL\nSELECT * FROM (\(hiddenWalk))\nORDER BY 1 DESC LIMIT ?",
                    directArguments + StatementArguments(hidden.1) + StatementArguments(direct.1) + arguments + [filter.limit, filter.limit])
        }
        // Each segment of the index walked newest first, its matches joined to their rows (CROSS JOIN keeps the FTS5
        // table the outer loop), the newest `limit` of each; then the newest of those. A segment's terms of records
        // already evicted join to no row.
        let segments = try searchSegments(db)
        guard !segments.isEmpty else { return nil }
        var selects: [String] = []
        var allArguments = StatementArguments()
        for segment in segments {
            var own = ["\(segment.table) MATCH ?"]
            var ownArguments: StatementArguments = [pattern]
            if let before = filter.beforeID { own.append("\(segment.table).rowid < ?"); ownArguments += [before] }
            if let after = filter.afterID { own.append("\(segment.table).rowid > ?"); ownArguments += [after] }
            selects.append("""
                SELECT * FROM (SELECT \(columns) FROM \(segment.table) CROSS JOIN logEntry ON logEntry.id = \(segment.table).rowid
                \(bodies) WHERE \((own + conditions).joined(separator: " AND ")) ORDER BY \(segment.table).rowid DESC LIMIT ?)
                """)
            allArguments += ownArguments
            allArguments += arguments
            allArguments += [filter.limit]
        }
        let sql = segments.count == 1 ? selects[0] : selects.joined(separator: "\nUNION ALL\n") + "\nORDER BY 1 DESC LIMIT ?"
        if segments.count > 1 { allArguments += [filter.limit] }
        return (sql, allArguments)
    }

    static func fetchRecord(id: Int64, _ db: Database) throws -> RequestRecord? {
        let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT \(entryColumns), logBody.requestBody, logBody.responseBody
            FROM logEntry LEFT JOIN logBody ON logBody.id = logEntry.bodyID
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
            record.requestBody = CapturedBody(data: row[23] ?? Data(), originalSize: size)
        }
        // A tunnel's (or a WebSocket's) size is the bytes it passed on unread: no body was captured, none is cut.
        if let size: Int = row[15], !record.isTunnel {
            record.responseBody = CapturedBody(data: row[24] ?? Data(), originalSize: size)
        }
        return record
    }

    static func fetchCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM logEntry") ?? 0
    }

    /// The record of a row of `entryColumns`, without bodies; nil when a value is not one this
    /// version knows (a source or cache decision added later).
    private static func record(from row: Row, decoder: JSONDecoder, includingHeaders: Bool = true) -> RequestRecord? {
        guard let decision = CacheDecision(rawValue: row[7]),
              let requestHeaders = includingHeaders ? headers(fromJSON: row[16]) : [],
              let responseHeaders = includingHeaders ? headers(fromJSON: row[17]) : []
        else { return nil }
        var source: SourceID?
        if let name: String = row[2] {
            guard let known = SourceID(rawValue: name) else { return nil }
            source = known
        }
        var touchedBy: [ExchangeTouch] = []
        if let json: String = row[19] {
            // A touch of a kind this version does not know leaves the list empty rather than the record out.
            touchedBy = (try? decoder.decode([ExchangeTouch].self, from: Data(json.utf8))) ?? []
        }
        var record = RequestRecord(
            id: row[0], startedAt: Date(timeIntervalSinceReferenceDate: row[1]), source: source,
            endpoint: row[3], method: row[4], url: row[5], requestHeaders: requestHeaders, status: row[6],
            responseHeaders: responseHeaders, error: row[13],
            timings: RequestTimings(queued: row[8], connect: row[9], dns: row[20], tls: row[21], firstByte: row[10], download: row[11],
                                    total: row[12]),
            // An empty value (a decision added later, when the log was upgraded) is read from the record.
            decision: decision, cacheStatus: CacheStatus(headerValue: row[18]), touchedBy: touchedBy, responseSize: row[15])
        record.httpVersion = row[22]
        return record
    }

    /// A record's Cache-Status outcome (`hit`, `fwd=miss`...: what follows `Kiosk;` up to the next `;`),
    /// written exactly as the index of migration v3 is, so that SQLite reads that index for it.
    static let cacheOutcomeExpression = "substr(cacheStatus, 7, instr(substr(cacheStatus, 7), ';') - 1)"

    /// The status that came back from below the cache, as a record's Cache-Status says it (`fwd-status=500`), NULL
    /// when none did; written exactly as the partial index of migration v11 is, so that SQLite reads that index for it.
    static let forwardedStatusExpression = "CAST(substr(cacheStatus, nullif(instr(cacheStatus, ';fwd-status='), 0) + 12, 4) AS INTEGER)"

    /// The condition of migration v11's partial index: a record answered with another status than the upstream's.
    static let hiddenStatusCondition = "\(forwardedStatusExpression) <> COALESCE(status, 0)"

    /// The status criterion in two parts: `direct`, on the status the app got, with the status classes' index's
    /// column first; and `hidden`, what follows `forwardedStatusExpression` for the upstream's status an answer from
    /// the store stood in for (`fallback`, `stale-if-error`: the server error a developer looks for is not hidden by
    /// it), nil when no class or code can have been hidden. Nil without a status criterion.
    private static func statusClauses(_ filter: RequestFilter)
        -> (direct: (String, [(any DatabaseValueConvertible)?]), hidden: (String, [(any DatabaseValueConvertible)?])?)? {
        guard !filter.statuses.isEmpty else { return nil }
        var classes: [Int] = [], codes: [Int] = []
        for match in filter.statuses.values {
            switch match {
            case .statusClass(let statusClass): classes.append(statusClass.rawValue)
            case .code(let code): codes.append(code)
            }
        }
        let list = { (values: [Int]) in Array(repeating: "?", count: values.count).joined(separator: ", ") }
        // A code is looked for among its class's records, so that the classes' index serves it too. A record without
        // a status (no response) has no code: COALESCE keeps it out of a code's match.
        let codeClasses = codes.map { $0 / 100 }.filter { !classes.contains($0) }
        let indexed = Array(Set(classes + codeClasses)).sorted()
        var direct = "logEntry.statusClass IN (\(list(indexed)))"
        var directArguments: [(any DatabaseValueConvertible)?] = indexed
        if !codes.isEmpty {
            let coded = "COALESCE(logEntry.status, 0) IN (\(list(codes)))"
            direct += classes.isEmpty ? " AND " + coded : " AND (logEntry.statusClass IN (\(list(classes))) OR \(coded))"
            directArguments += (classes.isEmpty ? [] : classes as [(any DatabaseValueConvertible)?]) + codes
        }
        let ranges = classes.filter { (1...5).contains($0) }
        let hidden = ranges.map { _ in "\(forwardedStatusExpression) BETWEEN ? AND ?" }
            + (codes.isEmpty ? [] : ["\(forwardedStatusExpression) IN (\(list(codes)))"])
        let hiddenArguments: [(any DatabaseValueConvertible)?] = ranges.flatMap { [$0 * 100, $0 * 100 + 99] } + codes
        return (("(" + direct + ")", directArguments),
                hidden.isEmpty ? nil : ("(" + hidden.joined(separator: " OR ") + ")", hiddenArguments))
    }

    /// The SQL conditions of the filter's criteria besides text and cursors, each with its arguments.
    /// One value of an indexed column is compared with `=`, so its index serves `ORDER BY id DESC`
    /// directly; several are an `IN` list.
    /// Without `includingStatuses`, the status criterion is left to the caller (`listQuery`).
    private static func criteria(_ filter: RequestFilter, includingStatuses: Bool = true) -> [(String, [(any DatabaseValueConvertible)?])] {
        var result: [(String, [(any DatabaseValueConvertible)?])] = []
        /// `column` is one of `values`.
        func oneOf(_ column: String, _ values: [any DatabaseValueConvertible]) -> (String, [(any DatabaseValueConvertible)?]) {
            (values.count == 1 ? "\(column) = ?" : "\(column) IN (\(Array(repeating: "?", count: values.count).joined(separator: ", ")))",
             values)
        }
        /// Any of `alternatives` (none of them when negated).
        func anyOf(_ alternatives: [(String, [(any DatabaseValueConvertible)?])], negated: Bool) {
            guard !alternatives.isEmpty else { return }
            let joined = alternatives.count == 1 ? alternatives[0].0 : "(" + alternatives.map(\.0).joined(separator: " OR ") + ")"
            result.append((negated ? "NOT \(joined)" : joined, alternatives.flatMap(\.1)))
        }
        if !filter.sources.isEmpty {
            // Negated, a record without a source (an image) is not one of them: it must not compare as NULL.
            let column = filter.sources.isNegated ? "COALESCE(logEntry.source, '')" : "logEntry.source"
            anyOf([oneOf(column, filter.sources.values.map(\.rawValue))], negated: filter.sources.isNegated)
        }
        if !filter.statuses.isEmpty, includingStatuses, let (direct, hidden) = statusClauses(filter) {
            // A record without an upstream's status compares as NULL: COALESCE keeps it in a negation's match.
            anyOf([direct] + (hidden.map { [("COALESCE(\($0.0), 0)", $0.1)] } ?? []), negated: filter.statuses.isNegated)
        }
        if !filter.methods.isEmpty {
            anyOf([oneOf("logEntry.method", filter.methods.values)], negated: filter.methods.isNegated)
        }
        if !filter.endpoints.isEmpty {
            anyOf([oneOf("logEntry.endpoint", filter.endpoints.values)], negated: filter.endpoints.isNegated)
        }
        if !filter.hosts.isEmpty {
            // The URL's authority, http or https (ws or wss for a WebSocket's record): exactly `host:port` when a port is
            // named, else the host on any port. A URL leaves its scheme's own port out (http://name/ is on 80): `name:80`
            // is the bare name's http and ws URLs too, `name:443` its https and wss ones.
            var alternatives: [(String, [(any DatabaseValueConvertible)?])] = []
            let escape = { (text: String) in
                text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
            }
            // The URL's authority (up to the first /, ? or #), without a user name before an @: `http://a.example.com:x@evil.test/`
            // is evil.test's. Read as the authority, not LIKE over the URL: `%.example.com/%` matched `http://evil.test/x.example.com/`.
            let afterScheme = "substr(logEntry.url, instr(logEntry.url, '://') + 3)"
            let withUser = "substr(\(afterScheme), 1, min(instr(\(afterScheme) || '/', '/'), instr(\(afterScheme) || '?', '?'), "
                + "instr(\(afterScheme) || '#', '#')) - 1)"
            let authority = "substr(\(withUser), instr(\(withUser), '@') + 1)"
            let scheme = "lower(substr(logEntry.url, 1, instr(logEntry.url, '://') - 1))"
            for host in filter.hosts.values {
                let name = host.hasPrefix("*.") ? String(host.dropFirst(2)) : host
                let portStart = name.hasPrefix("[") ? name.range(of: "]:").map { name.index(after: $0.lowerBound) } : name.lastIndex(of: ":")
                // (First a search for the name anywhere in the URL, which SQLite makes fast: the authority is read only then.)
                var condition = "logEntry.url LIKE ? ESCAPE '\\' AND "
                var arguments: [(any DatabaseValueConvertible)?] = ["%" + escape(portStart.map { String(name[..<$0]) } ?? name) + "%"]
                if host.hasPrefix("*.") {
                    // Its subdomains: the authority ends with `.name`, on any port unless one is named.
                    let escaped = "%." + escape(name)
                    condition += portStart != nil ? "\(authority) LIKE ? ESCAPE '\\'"
                        : "(\(authority) LIKE ? ESCAPE '\\' OR \(authority) LIKE ? ESCAPE '\\')"
                    arguments += portStart != nil ? [escaped] : [escaped, escaped + ":%"]
                } else if let portStart {
                    // `name:port`, or the bare name on its scheme's own port, which a URL leaves out (`name:80` is the bare
                    // name's http and ws URLs too, `name:443` its https and wss ones).
                    let port = name[name.index(after: portStart)...], bare = String(name[..<portStart])
                    let schemes = port == "80" ? ["http", "ws"] : port == "443" ? ["https", "wss"] : []
                    condition += "\(scheme) IN ('http', 'https', 'ws', 'wss') AND (\(authority) LIKE ? ESCAPE '\\'"
                        + (schemes.isEmpty ? ")" : " OR (\(scheme) IN ('\(schemes[0])', '\(schemes[1])') AND \(authority) LIKE ? ESCAPE '\\'))")
                    arguments += [escape(name)] + (schemes.isEmpty ? [] : [escape(bare)])
                } else {
                    // The name on any port.
                    condition += "\(scheme) IN ('http', 'https', 'ws', 'wss') AND (\(authority) LIKE ? ESCAPE '\\' OR \(authority) LIKE ? ESCAPE '\\')"
                    arguments += [escape(name), escape(name) + ":%"]
                }
                alternatives.append(("(" + condition + ")", arguments))
            }
            anyOf(alternatives, negated: filter.hosts.isNegated)
        }
        if !filter.cache.isEmpty {
            var decisions: [CacheDecision] = [], outcomes: [String] = []
            var alternatives: [(String, [(any DatabaseValueConvertible)?])] = []
            for match in filter.cache.values {
                if let matched = match.decisions {
                    decisions += matched.filter { !decisions.contains($0) }
                } else if let matched = match.outcomes {
                    outcomes += matched.filter { !outcomes.contains($0) }
                }
            }
            if !decisions.isEmpty { alternatives.append(oneOf("logEntry.decision", decisions.map(\.rawValue))) }
            if !outcomes.isEmpty { alternatives.append(oneOf(cacheOutcomeExpression, outcomes)) }
            anyOf(alternatives, negated: filter.cache.isNegated)
        }
        if let bound = filter.duration {
            let comparison = bound.isUpper ? (bound.isInclusive ? "<=" : "<") : (bound.isInclusive ? ">=" : ">")
            result.append(("logEntry.duration \(comparison) ?", [bound.seconds]))
        }
        if let hasError = filter.hasError {
            result.append((hasError ? "logEntry.error IS NOT NULL" : "logEntry.error IS NULL", []))
        }
        if let hasBody = filter.hasResponseBody {
            result.append((hasBody ? "logEntry.responseBodySize > 0" : "COALESCE(logEntry.responseBodySize, 0) = 0", []))
        }
        return result
    }

    /// The fields `headersJSON` wrote, nil when the text is not such an array.
    static func headers(fromJSON json: String) -> [RequestRecord.HeaderField]? {
        OrderedJSON.pairs(fromJSON: json)?.map { RequestRecord.HeaderField(name: $0.name, value: $0.value) }
    }

    /// What a search text asks for.
    enum SearchPattern: Equatable {
        /// No word at all (blank, only symbols): blank matches everything, like no text; symbols are looked for in
        /// the URLs as typed.
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
        // The terms of every segment's vocabulary (UNION: each once).
        let vocabularies = try searchSegments(db).map(\.vocabulary)
        guard !vocabularies.isEmpty else { return .noMatch }
        // UNION ALL under DISTINCT, not UNION: a UNION collects every arm's terms before LIMIT applies (fts5vocab counting
        // each one's doclist), where this stops at the limit (0.3 against 230 ms over two segments of 20,000 records).
        let expansions = try db.makeStatement(sql: "SELECT DISTINCT term FROM ("
            + vocabularies.map { "SELECT term FROM \($0) WHERE term >= ?1 AND term < ?2" }.joined(separator: " UNION ALL ")
            + ") LIMIT ?3")
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

    /// The runs of `text` between spaces that hold a symbol between two letters or digits (`per_page=5`, not `rick`
    /// nor `rick!`), as typed and ASCII lowercased, each once.
    static func joinedRuns(in text: String) -> [(typed: String, lowered: String)] {
        var runs: [(typed: String, lowered: String)] = []
        for run in text.split(whereSeparator: \.isWhitespace) {
            let word = run.drop(while: { !$0.isLetter && !$0.isNumber })
            let trimmed = String(word.reversed().drop(while: { !$0.isLetter && !$0.isNumber }).reversed())
            guard trimmed.contains(where: { !$0.isLetter && !$0.isNumber }) else { continue }
            // ASCII only, as SQLite's lower() folds the stored text.
            let lowered = String(String.UnicodeScalarView(trimmed.unicodeScalars.map {
                ("A"..."Z").contains($0) ? Unicode.Scalar($0.value + 32)! : $0
            }))
            if !runs.contains(where: { $0.typed == trimmed }) { runs.append((trimmed, lowered)) }
        }
        return runs
    }

    private static func quoted(_ token: String) -> String {
        "\"" + token.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
