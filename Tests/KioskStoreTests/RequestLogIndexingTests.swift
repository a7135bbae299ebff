import Foundation
import GRDB
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskStore

/// How the request log's full-text index is built: from each record's distinct words, a burst at a
/// time, and migrated from the first schema.
@Suite("Request log indexing")
struct RequestLogIndexingTests {
    typealias Log = RequestLogTests

    /// The set of terms the index's tokenizer makes of `text`.
    static func terms(_ text: String) throws -> Set<String> {
        let queue = try DatabaseQueue()
        return try queue.read { db in
            var terms = Set<String>()
            try SearchTokenizer(db).forEachToken(in: text, tokenization: .document) { terms.insert($0) }
            return terms
        }
    }

    // MARK: - Distinct words

    @Test("the words indexed for a body are exactly the terms of the whole body, each once", arguments: [
        #"{"results":[{"name":"Rick Sanchez","url":"https://rickandmortyapi.com/api/character/1"},{"name":"rick SANCHEZ","url":"https://rickandmortyapi.com/api/character/2"}]}"#,
        #"{"title":"Doré’s café — “naïve” Ünïcödé","byline":"By JOSÉ Pérez","k":"e\#u{301}cole"}"#,
        "ＡＢＣ full-width, 東京タワー and emoji 🕺💀 mixed with snake_case, kebab-case and CamelCase",
        #"{"created":"2017-11-04T18:48:46.250Z","episode":["https://x.test/api/episode/1","https://x.test/api/episode/10"]}"#,
        "tabs\tand\nnew\r\nlines, dots... a.b.c; 1,000.50 $42 100% a&b <tag attr='v'>",
        "",
        "   ,,, !!! ",
    ])
    func distinctWordsKeepTheTerms(text: String) throws {
        // Given a body
        let body = Data(text.utf8)

        // When its search text is made
        let words = RequestLog.searchText(of: [body])

        // Then the tokenizer finds the same terms in it as in the whole body, and no word repeats
        #expect(try Self.terms(words ?? "") == Self.terms(text))
        let list = words?.split(separator: " ").map { $0.lowercased() } ?? []
        #expect(list.count == Set(list).count)
        #expect(words == nil || !(words?.isEmpty ?? true))
    }

    @Test("the words of both bodies are merged, and a repetitive JSON page shrinks to a fraction")
    func wordsOfBothBodies() throws {
        // Given a request body and a response repeating the same keys and URLs 200 times
        let request = Data(#"{"query":"Squanchy"}"#.utf8)
        let items = (0..<200).map { #"{"id":\#($0 % 5),"name":"Morty","url":"https://rickandmortyapi.com/api/character/1"}"# }
        let response = Data(("{\"results\":[" + items.joined(separator: ",") + "]}").utf8)

        // When their search text is made
        let words = try #require(RequestLog.searchText(of: [request, response]))

        // Then it has the terms of both, and is a small fraction of the response
        #expect(try Self.terms(words) == Self.terms(#"{"query":"Squanchy"}"#).union(Self.terms(String(decoding: response, as: UTF8.self))))
        #expect(words.utf8.count * 20 < response.count)
    }

    // MARK: - Batched writes

    /// Waits for what the log's writer was asked to do before now (a write runs after those queued before it).
    static func writerIsDone(_ log: RequestLog) throws {
        log.writer.writeWithoutTransaction { _ in }
    }

    /// Records committed to the file, counted without the log's reads (which store what waits first).
    static func committed(_ log: RequestLog) throws -> Int {
        try log.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM logEntry") ?? 0 }
    }

    @Test("an enqueued burst is stored by itself when its batching delay passes, without a flush, and is searchable")
    func enqueuedBurstIsStoredAlone() async throws {
        // Given a log storing 20 ms after the first record of a burst, on a clock the test moves
        let clock = ManualClock()
        let log = try RequestLog.inMemory(configuration: RequestLog.Configuration(
            now: { Date(timeIntervalSinceReferenceDate: 760_000_000.25) }, batchingDelay: 0.02, schedule: clock.scheduler))

        // When a burst of records is enqueued and 19 ms pass
        for index in 0..<5 { log.enqueue(Log.record("https://a.test/\(index)", responseBody: "{\"w\":\"tinkles\(index)\"}")) }
        await clock.advance(by: .milliseconds(19))
        try Self.writerIsDone(log)
        // Then nothing is stored yet, and one store waits for the burst
        #expect(try Self.committed(log) == 0)
        #expect(clock.timerCount == 1)

        // When the 20th millisecond passes
        await clock.advance(by: .milliseconds(1))
        try Self.writerIsDone(log)
        // Then the burst is stored, by itself, and found
        #expect(try Self.committed(log) == 5)
        #expect(log.droppedCount == 0)
        #expect(try Log.urls(log, RequestFilter(text: "tinkles3")) == ["https://a.test/3"])
        try Log.checkIndexIntegrity(log)
    }

    @Test("a read shows the records still waiting to be stored: the list, a record, the count and the size")
    func readsStoreWaitingRecords() throws {
        // Given a log that would store a burst only after an hour
        let log = try RequestLog.inMemory(configuration: RequestLog.Configuration(
            now: { Date(timeIntervalSinceReferenceDate: 760_000_000.25) }, batchingDelay: 3600))

        // When two records are enqueued, then the log is read without a flush
        log.enqueue(Log.record("https://a.test/first", responseBody: "{\"w\":\"plumbus\"}"))
        log.enqueue(Log.record("https://a.test/second"))

        // Then every read sees them at once
        #expect(try log.count() == 2)
        #expect(try Log.urls(log, RequestFilter(text: "plumbus")) == ["https://a.test/first"])
        let newest = try #require(try log.records(matching: RequestFilter(limit: 1)).first)
        #expect(newest.url == "https://a.test/second")
        #expect(try log.record(id: newest.id)?.url == "https://a.test/second")
        #expect(try log.sizeInBytes() > 0)
        log.enqueue(Log.record("https://a.test/third"))
        #expect(try log.records(matching: RequestFilter()).map(\.url).first == "https://a.test/third")
    }

    // MARK: - Deferred indexing

    /// Whether stored records wait to be indexed.
    static func waitsToIndex(_ log: RequestLog) throws -> Bool {
        try log.writer.read(RequestLog.hasUnindexedRecords)
    }

    @Test("stored records are indexed by a pass of their own after the indexing delay, with no search asking")
    func indexesAfterTheDelay() async throws {
        // Given a log indexing half a second after a store, on a clock the test moves
        let clock = ManualClock()
        let log = try RequestLog.inMemory(configuration: RequestLog.Configuration(
            now: { Date(timeIntervalSinceReferenceDate: 760_000_000.25) }, indexingDelay: 0.5, schedule: clock.scheduler))

        // When a burst is stored, and 0.4 s pass
        for index in 0..<3 { log.enqueue(Log.record("https://a.test/\(index)", responseBody: "{\"w\":\"squanchy\(index)\"}")) }
        try log.flush()
        await clock.advance(by: .milliseconds(400))
        try Self.writerIsDone(log)
        // Then it still waits to be indexed
        #expect(try Self.waitsToIndex(log))

        // When the half second is over
        await clock.advance(by: .milliseconds(100))
        try Self.writerIsDone(log)
        // Then it is indexed, no search having asked, and found
        #expect(try !Self.waitsToIndex(log))
        #expect(try Log.urls(log, RequestFilter(text: "squanchy1")) == ["https://a.test/1"])
        try Log.checkIndexIntegrity(log)
    }

    @Test("a text search, a live read and an export find records stored a moment ago, before their indexing pass")
    func searchIndexesWhatWaits() throws {
        // Given a log that would index only after an hour, holding records stored just now
        let log = try RequestLog.inMemory(configuration: RequestLog.Configuration(
            now: { Date(timeIntervalSinceReferenceDate: 760_000_000.25) }, indexingDelay: 3600))
        let first = try log.append(Log.record("https://a.test/first", responseBody: "{\"w\":\"meeseeks\"}"))
        let second = try log.append(Log.record("https://a.test/second", responseBody: "{\"w\":\"gromflomite\"}"))
        #expect(try Self.waitsToIndex(log))

        // When they are searched by a body word (the list, the live console's read, an export)
        // Then each finds them, and a search without words indexes nothing
        #expect(try log.committedRecords(first...second, matching: RequestFilter(text: "meeseeks")).map(\.url) == ["https://a.test/first"])
        let third = try log.append(Log.record("https://a.test/third", responseBody: "{\"w\":\"meeseeks\"}"))
        #expect(try log.fullRecords(matching: RequestFilter(text: "meeseeks")).map(\.id) == [third, first])
        log.enqueue(Log.record("https://a.test/fourth", responseBody: "{\"w\":\"gromflomite\"}"))
        _ = try log.records(matching: RequestFilter(text: "  "))
        #expect(try Self.waitsToIndex(log))
        #expect(try Log.urls(log, RequestFilter(text: "gromflomite")) == ["https://a.test/fourth", "https://a.test/second"])
        #expect(try !Self.waitsToIndex(log))
        try Log.checkIndexIntegrity(log)
    }

    @Test("evicting records that were never indexed leaves a whole index, which finds only the records kept")
    func evictingUnindexedRecordsKeepsTheIndexWhole() throws {
        // Given a log bounded to about 20 records of 2 KB, indexing only when asked, whose first
        // records are indexed and the rest not
        let clock = Log.TestClock()
        var configuration = Log.configuration(maxBytes: 40_000, maxAge: 3600, clock: clock)
        configuration.indexingDelay = 3600
        let log = try RequestLog.inMemory(configuration: configuration)
        let body = String(repeating: "x", count: 2000)
        for index in 0..<5 { try log.append(Log.record("https://a.test/indexed/\(index)", startedAt: clock.now, responseBody: "{\"w\":\"early\(index) \(body)\"}")) }
        try log.updateSearchIndex()
        clock.advance(by: 1)

        // When many more records are stored, evicting the indexed ones and some never indexed,
        // and then the oldest kept ones expire
        for index in 0..<60 { try log.append(Log.record("https://a.test/late/\(index)", startedAt: clock.now, responseBody: "{\"w\":\"late\(index) \(body)\"}")) }
        let kept = try log.count()
        #expect(kept < 60)
        clock.advance(by: 3500)
        for index in 60..<65 { try log.append(Log.record("https://a.test/late/\(index)", startedAt: clock.now, responseBody: "{\"w\":\"late\(index) \(body)\"}")) }
        clock.advance(by: 200)
        try log.evict()

        // Then FTS5 finds its index whole, and a word finds exactly the records kept
        try Log.checkIndexIntegrity(log)
        #expect(try Log.urls(log, RequestFilter(text: "early0")).isEmpty)
        #expect(try Log.urls(log, RequestFilter(text: "late0")).isEmpty)
        #expect(try Log.urls(log, RequestFilter(text: "late64")) == ["https://a.test/late/64"])
        #expect(try log.count() == 5)
    }

    @Test("eviction drops a segment of the index whole once its records are gone, and a search pages through the kept records of every segment, newest first")
    func evictionDropsWholeSegments() throws {
        // Given a log of 512 KB, indexing when asked, and 5,000 small records, each body its own, indexed a hundred at a
        // time as they come (a segment closes at an eighth of the records the full log holds)
        let clock = Log.TestClock()
        var configuration = Log.configuration(maxBytes: 1 << 19, clock: clock)
        configuration.indexingDelay = 3600
        let log = try RequestLog.inMemory(configuration: configuration)
        let total = 5000
        for index in 0..<total {
            try log.append(Log.record("https://a.test/\(index)", startedAt: clock.now, responseBody: "{\"w\":\"alpha\(index) common\"}"))
            if index % 100 == 99 { try log.updateSearchIndex() }
        }

        // When the segments and the records kept are looked at
        let kept = try log.records(matching: RequestFilter(limit: total)).map(\.url)
        let segments = try log.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT id, firstID FROM logSearchSegment ORDER BY id").map { ($0[0] as Int64, $0[1] as Int64) }
        }
        let tables = try log.writer.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE name GLOB 'logSearch[0-9]*' AND sql LIKE 'CREATE VIRTUAL%'")
        }

        // Then eviction kept the newest records under 4 MB and dropped the segments of the evicted ones whole: the
        // oldest segment left starts at or before the oldest record, the next one after it, and no table is left behind
        let oldest = try #require(try log.records(matching: RequestFilter(limit: total)).last?.id)
        #expect(kept.count > 1000 && kept.count < total, "\(kept.count) \(segments)")
        #expect(try log.sizeInBytes() <= 1 << 19)
        #expect(segments.count >= 2 && segments.count <= 12, "\(kept.count) \(segments)")
        #expect(segments[0].0 > 1, "the first segment is dropped: \(segments)")
        #expect(segments[0].1 <= oldest && (segments.count == 1 || segments[1].1 > oldest), "\(segments), oldest \(oldest)")
        #expect(Set(tables) == Set(segments.flatMap { ["logSearch\($0.0)", "logSearch\($0.0)Vocab"] }), "\(tables)")
        try Log.checkIndexIntegrity(log)

        // And a word finds exactly the records kept, an evicted record's word nothing, and paging through a word every
        // record holds crosses the segments newest first, each record once
        #expect(try Log.urls(log, RequestFilter(text: "alpha0")).isEmpty)
        #expect(try Log.urls(log, RequestFilter(text: "alpha4999")) == ["https://a.test/4999"])
        #expect(try Log.urls(log, RequestFilter(text: "alpha\(total - kept.count)")) == [kept.last])
        var paged: [String] = []
        var page = RequestFilter(text: "common", limit: 37)
        while true {
            let records = try log.records(matching: page)
            paged += records.map(\.url)
            guard records.count == page.limit, let last = records.last else { break }
            page.beforeID = last.id
        }
        let pagedAsKept = paged == kept
        #expect(pagedAsKept, "\(paged.count) paged, \(kept.count) kept")
        // And a prefix long enough to be expanded from the vocabularies finds the same
        let expanded = try log.records(matching: RequestFilter(text: "alpha49", limit: total)).map(\.url)
            == kept.filter { $0.hasPrefix("https://a.test/49") }
        #expect(expanded)

        // And a clear drops every segment
        try log.clear()
        #expect(try log.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM logSearchSegment") } == 0)
        #expect(try log.writer.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE name GLOB 'logSearch[0-9]*'")
        } == 0)
    }

    @Test("records a stopped process stored and never indexed are indexed when the log is opened again")
    func indexesWhatAnEarlierProcessLeft() async throws {
        // Given a log file holding records never indexed (the process stopped first)
        let (folder, path) = try Log.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let log = try RequestLog.open(at: path, configuration: RequestLog.Configuration(indexingDelay: 3600))
            for index in 0..<3 { try log.append(Log.record("https://a.test/\(index)", responseBody: "{\"w\":\"birdperson\(index)\"}")) }
            #expect(try Self.waitsToIndex(log))
        }

        // When it is opened again, nothing is searched, and the indexing delay passes
        let clock = ManualClock()
        let log = try RequestLog.open(at: path, configuration: RequestLog.Configuration(indexingDelay: 0.05, schedule: clock.scheduler))
        #expect(try Self.waitsToIndex(log))
        await clock.advance(by: .milliseconds(50))
        try Self.writerIsDone(log)

        // Then they are indexed, and found
        #expect(try !Self.waitsToIndex(log))
        #expect(try Log.urls(log, RequestFilter(text: "birdperson2")) == ["https://a.test/2"])
        try Log.checkIndexIntegrity(log)
    }

    @Test("every segment of a log's index merges its b-trees sixteen at a time, not FTS5's four, in a new log and an upgraded one")
    func mergesSegmentsSixteenAtATime() throws {
        // Given a new log, and a log file made at the schema before the setting, each holding a record
        let (folder, path) = try Log.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fresh = try RequestLog.open(at: path, configuration: Log.configuration())
        let (oldFolder, oldPath) = try Log.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: oldFolder) }
        do {
            let pool = try DatabasePool(path: oldPath, configuration: RequestLog.makeDatabaseConfiguration())
            try RequestLog.migrator.migrate(pool, upTo: "v6: shared bodies")
        }

        // When the old one is opened by this version, and both index a record
        let upgraded = try RequestLog.open(at: oldPath, configuration: Log.configuration())
        for log in [fresh, upgraded] {
            try log.append(Log.record("https://a.test/merging"))
            try log.updateSearchIndex()
        }

        // Then both indexes say so in FTS5's own settings (a busy proxy indexes a burst a second: merging four at a time
        // rewrote every posting at each level it climbed, a quarter of the log's CPU per record)
        // — little by little, a whole level merged at once only past 64 b-trees, so that no pass holds up the writer
        for log in [fresh, upgraded] {
            let segments = try log.writer.read(RequestLog.searchSegments)
            #expect(segments.count == 1)
            for segment in segments {
                let settings = try log.writer.read { db in
                    try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT k, v FROM \(segment.table)_config").map { row in
                        (row["k"] as String, row["v"] as DatabaseValue)
                    })
                }
                #expect(settings["automerge"] == 16.databaseValue)
                #expect(settings["crisismerge"] == 64.databaseValue)
            }
        }
    }

    @Test("a segment's size is reckoned from the log's first and last ids read in one seek each, never a scan of its records")
    func segmentSizeReadsTheIdsEnds() throws {
        // Given a log holding records
        let (folder, path) = try Log.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = try RequestLog.open(at: path, configuration: Log.configuration())
        for index in 0..<3 { try log.append(Log.record("https://a.test/span/\(index)")) }

        // When SQLite plans the query every indexing pass makes to size the open segment
        let plan = try log.writer.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + RequestLog.idSpanSQL).map { $0["detail"] as String? ?? "" }
        }

        // Then it seeks each end of the table (MIN and MAX in one SELECT read every record: 15 ms at each pass in a full log)
        // and it reads the ids the records have
        // (SQLite before 3.36 words it "SEARCH TABLE logEntry")
        #expect(plan.filter { $0.hasPrefix("SEARCH") && $0.contains("logEntry") }.count == 2, "\(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN") && $0.contains("logEntry") }, "\(plan)")
        let ids = try log.writer.read { db in try Row.fetchOne(db, sql: RequestLog.idSpanSQL) }
        let all = try log.writer.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM logEntry ORDER BY id") }
        #expect(ids?[0] as Int64? == all.first)
        #expect(ids?[1] as Int64? == all.last)
    }

    @Test("a log written by a newer Kiosk is refused with a message saying so, and left as it was")
    func refusesANewerLog() throws {
        // Given a log file that a later version migrated further than this one knows
        let (folder, path) = try Log.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let log = try RequestLog.open(at: path, configuration: Log.configuration())
            try log.append(Log.record("https://a.test/kept"))
            try log.writer.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')")
            }
        }

        // When this version opens it
        // Then it is refused, naming the file and what to do, and the record is still there
        #expect {
            _ = try RequestLog.open(at: path, configuration: Log.configuration())
        } throws: { error in
            let message = (error as? KioskError)?.description ?? ""
            return message.contains(path) && message.contains("newer version of Kiosk") && message.contains("move it aside")
        }
        let pool = try DatabasePool(path: path)
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM logEntry") } == 1)
    }

    // MARK: - Migration

    @Test("a log written by the first schema is migrated: its records are searchable by body words and stay bounded")
    func migratesFirstSchema() throws {
        // Given a log file at the first schema, holding two records indexed the old way
        let (folder, path) = try Log.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let oldSize: Int64
        do {
            let pool = try DatabasePool(path: path, configuration: RequestLog.makeDatabaseConfiguration())
            try RequestLog.migrator.migrate(pool, upTo: "v1")
            oldSize = try pool.write { db in
                var size: Int64 = 0
                for (index, word) in ["gazorpazorp", "cromulon"].enumerated() {
                    let body = Data(String(repeating: "{\"species\":\"\(word)\",\"note\":\"old record\"},", count: 20).utf8)
                    let byteCount = 64 + body.count + 30
                    try db.execute(sql: """
                        INSERT INTO logEntry (startedAt, source, endpoint, method, url, status, statusClass, decision,
                                              duration, responseBodySize, responseTextLength, byteCount,
                                              requestHeaders, responseHeaders)
                        VALUES (?, 'rickandmorty', 'rickandmorty.characters', 'GET', ?, 200, 2, 'network', 0.1, ?, ?, ?, '[]', '[]')
                        """, arguments: [760_000_000.25, "https://a.test/old/\(index)", body.count, body.count, byteCount])
                    let id = db.lastInsertedRowID
                    try db.execute(sql: "INSERT INTO logBody (id, responseBody) VALUES (?, ?)", arguments: [id, body])
                    try db.execute(sql: "INSERT INTO logSearch (rowid, text) SELECT id, text FROM logSearchText WHERE id = ?",
                                   arguments: [id])
                    size += Int64(byteCount)
                }
                try db.execute(sql: "UPDATE logStats SET byteCount = ?", arguments: [size])
                return size
            }
        }

        // When the current Kiosk opens it
        let log = try RequestLog.open(at: path, configuration: RequestLog.Configuration(
            maxBytes: 50 * 1024 * 1024, now: { Date(timeIntervalSinceReferenceDate: 760_000_000.25) }))

        // Then the old records wait to be indexed again, into the index's segments (v8); a search finds them by their
        // body words, the index is whole, and their size now counts the words stored for the index
        #expect(try Self.waitsToIndex(log))
        #expect(try Log.urls(log, RequestFilter(text: "gazorpazorp")) == ["https://a.test/old/0"])
        #expect(try !Self.waitsToIndex(log))
        #expect(try Log.urls(log, RequestFilter(text: "old record")).count == 2)
        try Log.checkIndexIntegrity(log)
        let size = try log.sizeInBytes()
        #expect(size > oldSize)
        #expect(try size == Log.sizeFromRows(log))

        // And new records join them, and clearing everything leaves a whole, empty index
        try log.append(Log.record("https://a.test/new", responseBody: "{\"species\":\"cromulon\"}"))
        #expect(try Log.urls(log, RequestFilter(text: "cromulon")) == ["https://a.test/new", "https://a.test/old/1"])
        try log.clear()
        #expect(try Log.urls(log, RequestFilter(text: "cromulon")).isEmpty)
        try Log.checkIndexIntegrity(log)
    }
}
