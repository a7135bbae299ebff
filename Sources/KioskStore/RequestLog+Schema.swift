import Foundation
import GRDB
import KioskCore

// The request log's schema, append-only like AppDatabase's: a shipped migration is never edited.
//
// - `logEntry`: one row per request, everything but the bodies. Kept narrow so that the list view
//   and a filter that has to scan read few pages; one index per equality filter, each serving
//   `filter = ? ORDER BY id DESC LIMIT n` directly (an index on x is ordered by (x, rowid)).
// - `logBody`: the captured bodies as BLOBs, only for records that have one, read only by the
//   detail view; and `searchText`, the distinct words of their indexed UTF-8 prefixes
//   (RequestLog+SearchText.swift), what the full-text index reads.
// - `logSearchText`: a view computing the indexed text of a record (its URL, then `searchText`).
// - `logSearch` (until v8): FTS5 over that view as external content, holding only terms and rowids (`detail=none`: the
//   log is sorted by time, never ranked). FTS5 deleted an evicted row's terms by reading its text back from the view and
//   tokenizing it again, as costly as indexing it; v8 replaced it with segments that are dropped whole (below).
// - `logEntry.cacheStatus` (v3): the record's decision as its RFC 9211 Cache-Status value, which says
//   more than `decision` (the freshness left, why the request went forward, what status came back);
//   an index on the expression of its outcome (`hit`, `fwd=miss`...) serves `cache:hit` and `cache:fwd=`.
// - `logStats`: one row holding the sum of `logEntry.byteCount` (and, from v6, of `logBody.size`), updated in the same transaction
//   as every insert and delete, so a size check never sums the table; and (v5) `indexedThrough`,
//   the highest record id `logSearch` holds. Records are added to the index a moment after they
//   are stored, off the request path (RequestLog.swift says when): the records above it are stored
//   but not indexed yet, and FTS5 must never be asked to delete their terms, which it would
//   subtract from the index without checking they were ever added.
// - Shared bodies (v6): a record's bodies are stored once however many records carry them (an app polling
//   one URL, a cache giving the same answer again and again), as Pulse stores its blobs. `logBody` rows are
//   found by `hash` (SHA-256 of both bodies: `RequestLog.bodyHash`), counted by `refs` (how many records
//   point at the row by `logEntry.bodyID`) and sized by `size` (the bodies and their words), so that an
//   eviction frees a body's bytes only with the last record that carries it. A record's own `byteCount`
//   no longer counts its bodies; the stored size is the sum of both. Rows stored before v6 keep their
//   bodies in their record's `byteCount`, `size` 0 and no hash: nothing is shared with them.
// - Index segments (v8): `logSearch` and its vocabulary make way for segments, each a contentless FTS5 table over a run
//   of consecutive ids, dropped whole once every record it indexes is evicted (RequestLog+SearchSegments.swift): eviction
//   no longer deletes terms, which cost as much as indexing them. The view stays what indexing reads.
// - Segment merging (v7): FTS5 merges an index's segments four at a time by default, so a posting is rewritten at every
//   level it climbs; a busy proxy indexes a burst a second, and that rewriting was a quarter of the log's CPU per record.
//   Sixteen at a time, little by little after each pass, with a whole level merged at once only past 64 segments.
//
// - Connection phases (v9): `dns` and `tls`, the parts of `connect` spent on the lookup and the TLS handshake (NULL when
//   none was made, as for every record stored before).
// - Hidden statuses (v11): a partial index on the upstream's status (`fwd-status`) of the records answered with another
//   (the store's answer standing in for a 500, a 304 revalidating a stored 200), so few that `status:5xx` walks them
//   apart from the records whose own status is 5xx (RequestLog+Query.swift).
//
// Why the file stays bounded without VACUUM: eviction frees pages that the next inserts reuse,
// so in steady state the file stays near its high-water mark (records plus index and free pages).
// Shrinking it after every eviction (incremental_vacuum) would only make SQLite grow it again a
// moment later. `auto_vacuum = INCREMENTAL` is still set so that `clear` can give the space back
// without VACUUM's full copy, and `journal_size_limit` truncates the WAL after checkpoints.

extension RequestLog {
    /// The migrator that creates and upgrades the log's schema.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try createTables(db)
        }
        migrator.registerMigration("v2: index distinct words") { db in
            try indexDistinctWords(db)
        }
        migrator.registerMigration("v3: cache status") { db in
            try addCacheStatus(db)
        }
        migrator.registerMigration("v4: touched by") { db in
            // The mocks, rewrite rules and breakpoints that acted on an exchange, as a JSON array of
            // ExchangeTouch objects; NULL for an untouched one (nearly all), so it costs nothing there.
            try db.alter(table: "logEntry") { t in t.add(column: "touchedBy", .text) }
        }
        migrator.registerMigration("v5: deferred indexing") { db in
            // Every record stored until now was indexed in the transaction that stored it.
            try db.alter(table: "logStats") { t in t.add(column: "indexedThrough", .integer).notNull().defaults(to: 0) }
            try db.execute(sql: "UPDATE logStats SET indexedThrough = (SELECT COALESCE(MAX(id), 0) FROM logEntry)")
        }
        migrator.registerMigration("v6: shared bodies") { db in
            try shareBodies(db)
        }
        migrator.registerMigration("v7: merge the index's segments sixteen at a time") { db in
            // FTS5 keeps the settings in the index's own config table. A level's segments are merged all at once, in
            // the transaction that made the last of them, only at `crisismerge` of them: left at its 16, merging sixteen
            // at a time would always be that whole-level merge, a pass that took twice the longest pass before.
            try db.execute(sql: "INSERT INTO logSearch (logSearch, rank) VALUES ('automerge', 16)")
            try db.execute(sql: "INSERT INTO logSearch (logSearch, rank) VALUES ('crisismerge', 64)")
        }
        migrator.registerMigration("v8: the index in segments") { db in
            try segmentIndex(db)
        }
        migrator.registerMigration("v9: connection phases") { db in
            // The parts of `connect` spent on the DNS lookup and the TLS handshake (NULL: none, or not measured).
            try db.alter(table: "logEntry") { t in
                t.add(column: "dns", .double)
                t.add(column: "tls", .double)
            }
        }
        migrator.registerMigration("v10: answers from the store are not failures") { db in
            // `StatusClass.store` (6): a record without a status that Kiosk answered from its store, as
            // `RequestRecord.isAnsweredFromStore` says, had the failures' class 0, so `status:error` listed every hit.
            try db.execute(sql: """
                UPDATE logEntry SET statusClass = 6 WHERE status IS NULL
                    AND (error IS NULL OR decision NOT IN ('network', 'revalidated', 'edited'))
                """)
        }
        migrator.registerMigration("v11: statuses hidden by the store") { db in
            // The records answered with another status than the upstream's (a stored answer standing in for a 500, a
            // 304 revalidating one): few, so `status:5xx` finds them without reading every record's Cache-Status.
            try db.execute(sql: """
                CREATE INDEX logEntryHiddenStatus ON logEntry(\(forwardedStatusExpression)) WHERE \(hiddenStatusCondition)
                """)
        }
        migrator.registerMigration("v12: the upstream's protocol") { db in
            // `HTTP/1.1`, `HTTP/2.0`… as the upstream answered (NULL: no upstream answered on the wire, or not recorded).
            try db.alter(table: "logEntry") { t in t.add(column: "httpVersion", .text) }
        }
        return migrator
    }()

    static func makeDatabaseConfiguration() -> GRDB.Configuration {
        // Another Kiosk process (the CLI next to `kiosk serve`) may be writing the same log.
        AppDatabase.sideFileConfiguration(label: "KioskLog")
    }

    private static func createTables(_ db: Database) throws {
        // AUTOINCREMENT: ids are never reused, even after `clear` or when the newest record is
        // evicted, so a page cursor (`beforeID`) or an id the debugger shows never points at a
        // different request later.
        try db.create(table: "logEntry") { t in
            t.autoIncrementedPrimaryKey("id")
            // Seconds since Foundation's reference date: a Date round-trips exactly.
            t.column("startedAt", .double).notNull().indexed()
            t.column("source", .text).indexed()
            t.column("endpoint", .text).notNull()
            // NOCASE so that a filter for "get" finds "GET" while the stored value stays as sent.
            t.column("method", .text).notNull().collate(.nocase).indexed()
            t.column("url", .text).notNull()
            t.column("status", .integer)
            // status / 100, or 0 without a response (the filter's "no response" class).
            t.column("statusClass", .integer).notNull().indexed()
            t.column("decision", .text).notNull().indexed()
            t.column("queued", .double)
            t.column("connect", .double)
            t.column("firstByte", .double)
            t.column("download", .double)
            t.column("duration", .double).notNull()
            t.column("error", .text)
            // A body's original size, or NULL when the request had no such body.
            t.column("requestBodySize", .integer)
            t.column("responseBodySize", .integer)
            // How many leading bytes of each body are indexed (NULL: not UTF-8 text).
            t.column("requestTextLength", .integer)
            t.column("responseTextLength", .integer)
            // The record's share of `maxBytes`, kept so that eviction never reads the bodies.
            t.column("byteCount", .integer).notNull()
            // Last: the widest text columns, as JSON arrays of [name, value] pairs, in order.
            t.column("requestHeaders", .text).notNull()
            t.column("responseHeaders", .text).notNull()
        }

        try db.create(table: "logBody") { t in
            t.primaryKey("id", .integer)
            t.column("requestBody", .blob)
            t.column("responseBody", .blob)
        }

        try db.execute(sql: """
            CREATE VIEW logSearchText AS
            SELECT logEntry.id AS id,
                   logEntry.url || char(10)
                   || COALESCE(CAST(substr(logBody.requestBody, 1, logEntry.requestTextLength) AS TEXT), '')
                   || char(10)
                   || COALESCE(CAST(substr(logBody.responseBody, 1, logEntry.responseTextLength) AS TEXT), '')
                   AS text
            FROM logEntry LEFT JOIN logBody ON logBody.id = logEntry.id
            """)

        try createSearchIndex(db)

        try db.create(table: "logStats") { t in
            t.primaryKey("id", .integer).check { $0 == 1 }
            t.column("byteCount", .integer).notNull()
        }
        try db.execute(sql: "INSERT INTO logStats (id, byteCount) VALUES (1, 0)")
    }

    /// The full-text index over `logSearchText`, and its vocabulary. Shipped migrations call this:
    /// change it only together with a migration that rebuilds the index.
    private static func createSearchIndex(_ db: Database) throws {
        // The same tokenizer as the catalog's search, so that SearchTokenizer turns user input
        // into the index's own terms. Prefix indexes of 1 to 3 characters: a short prefix (what
        // a user types first, or a number) is then one doclist read lazily, newest first, instead
        // of a merge of the doclists of every term it starts (thousands, in JSON bodies).
        try db.create(virtualTable: "logSearch", using: FTS5()) { t in
            t.content = "logSearchText"
            t.contentRowID = "id"
            t.tokenizer = SearchTokenizer.descriptor
            t.prefixes = [1, 2, 3]
            t.detail = "none"
            t.column("text")
        }

        // The index's vocabulary, read to expand a long prefix into the exact terms it stands for
        // (RequestLog+Query.swift explains why). A view of the index itself: nothing to keep in sync.
        try db.execute(sql: "CREATE VIRTUAL TABLE logSearchVocab USING fts5vocab(logSearch, 'row')")
    }

    /// v2: the index reads each record's distinct words (RequestLog+SearchText.swift) instead of
    /// its whole bodies. The index is rebuilt from the stored records, whose sizes grow by their
    /// stored words.
    private static func indexDistinctWords(_ db: Database) throws {
        // The vocabulary and the index go first: they read the view being replaced.
        try db.execute(sql: "DROP TABLE logSearchVocab")
        try db.execute(sql: "DROP TABLE logSearch")
        try db.execute(sql: "DROP VIEW logSearchText")
        try db.alter(table: "logBody") { t in
            // Each distinct word of the indexed prefixes of both bodies (RequestLog+SearchText.swift).
            t.add(column: "searchText", .text)
        }

        // The stored records' words, in batches of ids so that memory stays flat.
        var lastID: Int64 = 0
        var addedBytes: Int64 = 0
        while true {
            let rows = try Row.fetchAll(db, sql: """
                SELECT logBody.id, logBody.requestBody, logBody.responseBody,
                       logEntry.requestTextLength, logEntry.responseTextLength
                FROM logBody JOIN logEntry ON logEntry.id = logBody.id
                WHERE logBody.id > ? ORDER BY logBody.id LIMIT 500
                """, arguments: [lastID])
            guard let last = rows.last else { break }
            lastID = last[0]
            for row in rows {
                let requestText = (row[1] as Data?).flatMap { data in (row[3] as Int?).map { data.prefix($0) } }
                let responseText = (row[2] as Data?).flatMap { data in (row[4] as Int?).map { data.prefix($0) } }
                guard let text = searchText(of: [requestText, responseText].compactMap { $0 }) else { continue }
                let id: Int64 = row[0]
                try db.execute(sql: "UPDATE logBody SET searchText = ? WHERE id = ?", arguments: [text, id])
                try db.execute(sql: "UPDATE logEntry SET byteCount = byteCount + ? WHERE id = ?",
                               arguments: [text.utf8.count, id])
                addedBytes += Int64(text.utf8.count)
            }
        }
        try db.execute(sql: "UPDATE logStats SET byteCount = byteCount + ?", arguments: [addedBytes])

        try db.execute(sql: """
            CREATE VIEW logSearchText AS
            SELECT logEntry.id AS id, logEntry.url || char(10) || COALESCE(logBody.searchText, '') AS text
            FROM logEntry LEFT JOIN logBody ON logBody.id = logEntry.id
            """)
        try createSearchIndex(db)
        try db.execute(sql: "INSERT INTO logSearch (rowid, text) SELECT id, text FROM logSearchText")
    }

    /// v6: bodies stored once however many records carry them (the header comment says how). Every stored body
    /// stays its own record's (`bodyID` its id, one reference, no hash), and the index reads the same text for it.
    private static func shareBodies(_ db: Database) throws {
        try db.alter(table: "logEntry") { t in t.add(column: "bodyID", .integer) }
        try db.execute(sql: "UPDATE logEntry SET bodyID = id WHERE id IN (SELECT id FROM logBody)")
        try db.alter(table: "logBody") { t in
            t.add(column: "hash", .blob)
            t.add(column: "refs", .integer).notNull().defaults(to: 1)
            t.add(column: "size", .integer).notNull().defaults(to: 0)
        }
        // NULL hashes (the bodies stored before) are distinct from each other and from every hash.
        try db.execute(sql: "CREATE UNIQUE INDEX logBodyByHash ON logBody(hash)")
        // The index reads each record's text through this view (and reads it back to delete it): for every record
        // stored so far it gives the same text as before, `bodyID` being the record's own id.
        try db.execute(sql: "DROP VIEW logSearchText")
        try db.execute(sql: """
            CREATE VIEW logSearchText AS
            SELECT logEntry.id AS id, logEntry.url || char(10) || COALESCE(logBody.searchText, '') AS text
            FROM logEntry LEFT JOIN logBody ON logBody.id = logEntry.bodyID
            """)
    }

    /// v3: each record's decision as its Cache-Status value. The records already stored get what they tell
    /// by themselves (`CacheStatus(recordedAs:...)`, through `RequestRecord`'s own rule), in batches of ids
    /// so that memory stays flat; their sizes grow by the text stored.
    private static func addCacheStatus(_ db: Database) throws {
        try db.alter(table: "logEntry") { t in
            t.add(column: "cacheStatus", .text).notNull().defaults(to: "")
        }
        var lastID: Int64 = 0
        var addedBytes: Int64 = 0
        while true {
            let rows = try Row.fetchAll(db, sql: """
                SELECT id, decision, status, error, requestHeaders FROM logEntry WHERE id > ? ORDER BY id LIMIT 500
                """, arguments: [lastID])
            guard let last = rows.last else { break }
            lastID = last[0]
            for row in rows {
                // A decision this version does not know keeps an empty value, read back as unknown.
                guard let decision = CacheDecision(rawValue: row[1]) else { continue }
                let record = RequestRecord(startedAt: Date(), source: nil, endpoint: "", method: "", url: "",
                                           requestHeaders: headers(fromJSON: row[4]) ?? [], status: row[2],
                                           error: row[3], timings: RequestTimings(total: 0), decision: decision)
                let value = record.cacheStatus.headerValue
                let id: Int64 = row[0]
                try db.execute(sql: "UPDATE logEntry SET cacheStatus = ?, byteCount = byteCount + ? WHERE id = ?",
                               arguments: [value, value.utf8.count, id])
                addedBytes += Int64(value.utf8.count)
            }
        }
        try db.execute(sql: "UPDATE logStats SET byteCount = byteCount + ?", arguments: [addedBytes])
        // The outcome (`hit`, `fwd=miss`...) indexed like the other equality filters, without storing it
        // twice: `Kiosk;` is 6 characters, and the outcome is the first parameter (CacheStatus.swift).
        try db.execute(sql: """
            CREATE INDEX logEntryCacheOutcome ON logEntry(substr(cacheStatus, 7, instr(substr(cacheStatus, 7), ';') - 1))
            """)
    }
}
