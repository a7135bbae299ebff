import GRDB

// The full-text index in segments (v8), so that evicting records never touches it.
//
// Until v8 one FTS5 index held every record, and evicting a record meant deleting its terms: FTS5 reads the record's
// text back, tokenizes it again and writes a tombstone for every term and prefix, which the index then merges away — as
// costly as indexing it, 15–20 µs a record, a third of what a busy proxy's log spent per exchange once full. Now each
// segment is a contentless FTS5 table indexing one run of consecutive ids (`logSearchSegment` says which), records are
// added to the newest, and a segment is dropped whole once eviction has taken every record it indexes — a DROP TABLE,
// nothing read back. Until then it still holds the terms of its records already evicted: a search joins each match to
// its row, so those match nothing, and they are at most one segment's worth (a segment closes at an eighth of the
// records the log holds when full, and eviction takes a tenth at a time). Ids are never reused (AUTOINCREMENT), so a stale entry never
// stands for a newer record.

extension RequestLog {
    /// One segment of the full-text index: a contentless FTS5 table over the records from `firstID` on (up to the next
    /// segment's), with its vocabulary.
    struct SearchSegment: Hashable {
        let id: Int64

        /// The FTS5 table's name.
        var table: String { "logSearch\(id)" }
        /// The name of its fts5vocab table, read to expand a long prefix into the exact terms it stands for.
        var vocabulary: String { "logSearch\(id)Vocab" }
    }

    /// v8: the segments' table; the single index goes, and every stored record waits to be indexed again, into the
    /// first segment, by the background indexing that follows the upgrade (a text search indexes what still waits).
    static func segmentIndex(_ db: Database) throws {
        try db.execute(sql: "DROP TABLE logSearchVocab")
        try db.execute(sql: "DROP TABLE logSearch")
        try db.create(table: "logSearchSegment") { t in
            t.autoIncrementedPrimaryKey("id")
            // The first record id it indexes; the records before it are in older segments.
            t.column("firstID", .integer).notNull()
            // Whether records are still added to it (only the newest is open).
            t.column("isOpen", .boolean).notNull()
            // How many records were added to it: it closes at `segmentRecords`.
            t.column("records", .integer).notNull()
        }
        try db.execute(sql: "UPDATE logStats SET indexedThrough = 0")
    }

    /// The index's segments, newest first.
    static func searchSegments(_ db: Database) throws -> [SearchSegment] {
        try Int64.fetchAll(db.cachedStatement(sql: "SELECT id FROM logSearchSegment ORDER BY id DESC")).map(SearchSegment.init)
    }

    /// The segment records are added to, made (starting at `firstID`) when none is open.
    static func openSegment(from firstID: Int64, _ db: Database) throws -> (segment: SearchSegment, records: Int) {
        if let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT id, records FROM logSearchSegment WHERE isOpen")) {
            return (SearchSegment(id: row[0]), row[1])
        }
        try db.execute(sql: "INSERT INTO logSearchSegment (firstID, isOpen, records) VALUES (?, 1, 0)", arguments: [firstID])
        let segment = SearchSegment(id: db.lastInsertedRowID)
        // The same tokenizer as the catalog's search, so that SearchTokenizer turns user input into the index's own
        // terms. Prefix indexes of 1 to 3 characters: a short prefix (what a user types first, or a number) is then one
        // doclist read lazily, newest first, instead of a merge of the doclists of every term it starts (thousands, in
        // JSON bodies). Contentless: the terms and rowids only, nothing read back. `detail=none`: the log is sorted by
        // time, never ranked, and every query is an AND of prefixes, so positions would only make the index bigger.
        try db.create(virtualTable: segment.table, using: FTS5()) { t in
            t.content = ""
            t.tokenizer = SearchTokenizer.descriptor
            t.prefixes = [1, 2, 3]
            t.detail = "none"
            t.column("text")
        }
        // FTS5 merges an index's segments four at a time by default, so a posting is rewritten at every level it
        // climbs; a busy proxy indexes a burst a second, and that rewriting was a quarter of the log's CPU per record.
        // Sixteen at a time, little by little after each pass; a whole level is merged at once, in the transaction
        // that made its last b-tree, only at `crisismerge` of them: left at its 16, merging sixteen at a time would
        // always be that whole-level merge.
        try db.execute(sql: "INSERT INTO \(segment.table) (\(segment.table), rank) VALUES ('automerge', 16)")
        try db.execute(sql: "INSERT INTO \(segment.table) (\(segment.table), rank) VALUES ('crisismerge', 64)")
        try db.execute(sql: "CREATE VIRTUAL TABLE \(segment.vocabulary) USING fts5vocab(\(segment.table), 'row')")
        return (segment, 0)
    }

    /// Notes that the open segment `segment` now indexes `records` records, closing it once they are `segmentRecords`.
    static func fill(_ segment: SearchSegment, records: Int, maxBytes: Int64, _ db: Database) throws {
        try db.cachedStatement(sql: "UPDATE logSearchSegment SET records = ?, isOpen = ? WHERE id = ?")
            .execute(arguments: [records, records < segmentRecords(maxBytes: maxBytes, db), segment.id])
    }

    /// How many records a segment indexes before the next one starts: an eighth of what the log holds when full (its
    /// bound over the stored size a record takes so far, on average), so that a full log has about nine segments and
    /// the terms of evicted records a segment keeps until all of its records go stay a small part of the index; and at
    /// least 256, so that a small log does not make and drop a table every few records.
    static func segmentRecords(maxBytes: Int64, _ db: Database) throws -> Int {
        let minimum = 256
        guard let row = try Row.fetchOne(db.cachedStatement(sql: idSpanSQL)),
              let oldest = row[0] as Int64?, let newest = row[1] as Int64? else { return minimum }
        // The span of ids stands for the count: only an eviction by age leaves gaps, and it is read in two seeks.
        let span = newest - oldest + 1
        let perRecord = max(1, try storedBytes(db) / span)
        return max(minimum, Int(clamping: maxBytes / perRecord / 8))
    }

    /// The log's oldest and newest ids. Two subqueries, each one seek at an end of the table: SQLite reads a lone `MIN` or
    /// `MAX` from the b-tree's edge, but both in one SELECT scanned every record (15 ms in a full log of 165,000, at every
    /// indexing pass: a sixth of a busy proxy's log writer).
    static let idSpanSQL = "SELECT (SELECT MIN(id) FROM logEntry), (SELECT MAX(id) FROM logEntry)"

    /// Drops the segments whose every record is gone (all of them when the log is empty), within the caller's
    /// transaction after an eviction.
    static func dropEmptiedSegments(_ db: Database) throws {
        let segments = try Row.fetchAll(db.cachedStatement(sql: "SELECT id, firstID FROM logSearchSegment ORDER BY id"))
        guard !segments.isEmpty else { return }
        let oldest = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MIN(id) FROM logEntry"))
        // A segment's records end where the next one's begin; the newest's, at the last record indexed.
        let ends = segments.dropFirst().map { $0[1] as Int64 } + [try indexedThrough(db) + 1]
        for (row, end) in zip(segments, ends) where oldest.map({ $0 >= end }) ?? true {
            try drop(SearchSegment(id: row[0]), db)
        }
    }

    /// Drops every segment, within the caller's transaction (the log's `clear`).
    static func dropAllSegments(_ db: Database) throws {
        for segment in try searchSegments(db) { try drop(segment, db) }
    }

    private static func drop(_ segment: SearchSegment, _ db: Database) throws {
        try db.execute(sql: "DROP TABLE IF EXISTS \(segment.vocabulary)")
        try db.execute(sql: "DROP TABLE IF EXISTS \(segment.table)")
        try db.execute(sql: "DELETE FROM logSearchSegment WHERE id = ?", arguments: [segment.id])
    }
}
