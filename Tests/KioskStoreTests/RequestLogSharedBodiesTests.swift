import Foundation
import GRDB
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskStore

/// The request log stores a body once however many records carry it (RequestLog+Schema.swift, v6): an app polling one
/// URL, or a cache giving one answer again and again, costs a row per exchange, not a copy of its body.
@Suite("Request log: shared bodies")
struct RequestLogSharedBodiesTests {
    typealias Log = RequestLogTests

    /// How many bodies the file stores, and how many records point at each, by the body's response text.
    static func storedBodies(_ log: RequestLog) throws -> [String: Int] {
        try log.writer.read { db in
            var bodies: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT responseBody, refs FROM logBody") {
                bodies[String(decoding: row[0] as Data? ?? Data(), as: UTF8.self)] = row[1]
            }
            return bodies
        }
    }

    static let page = "{\"results\":[" + String(repeating: "{\"name\":\"Rick Sanchez\",\"species\":\"Human\"},", count: 40) + "{}]}"

    @Test("records carrying the same bodies share one stored copy, each reads back whole, and the second adds no body bytes")
    func sameBodiesStoredOnce() throws {
        // Given an empty log
        let log = try RequestLog.inMemory(configuration: Log.configuration())

        // When three exchanges of different URLs get the same answer, and a fourth another one
        let first = try log.append(Log.record("https://a.test/1", responseBody: Self.page))
        let sizeAfterFirst = try log.sizeInBytes()
        let second = try log.append(Log.record("https://a.test/2", responseBody: Self.page))
        let sizeAfterSecond = try log.sizeInBytes()
        let third = try log.append(Log.record("https://a.test/3", responseBody: Self.page))
        let other = try log.append(Log.record("https://a.test/4", responseBody: "{\"results\":[]}"))

        // Then the file holds two bodies, the first carried by three records
        #expect(try Self.storedBodies(log) == [Self.page: 3, "{\"results\":[]}": 1])
        // And each record reads back with its own URL and the whole body
        for (id, url) in [(first, "https://a.test/1"), (second, "https://a.test/2"), (third, "https://a.test/3")] {
            let record = try #require(try log.record(id: id))
            #expect(record.url == url)
            #expect(record.responseBody?.data == Data(Self.page.utf8))
        }
        #expect(try log.record(id: other)?.responseBody?.data == Data("{\"results\":[]}".utf8))
        // And the second record added only its own row, not the body again
        #expect(sizeAfterFirst > Int64(Self.page.utf8.count))
        #expect(sizeAfterSecond - sizeAfterFirst < Int64(Self.page.utf8.count) / 4)
        #expect(try log.sizeInBytes() == Log.sizeFromRows(log))
        // And every record is found by its body's words
        #expect(try log.records(matching: RequestFilter(text: "sanchez")).map(\.id) == [third, second, first])
        try Log.checkIndexIntegrity(log)
    }

    @Test("a request body and a response body are told apart: the same bytes on the other side are another body")
    func sidesToldApart() throws {
        // Given records whose only body is the same text, once sent and once received
        let log = try RequestLog.inMemory(configuration: Log.configuration())
        let text = "{\"query\":\"plumbus\"}"
        let sent = try log.append(Log.record("https://a.test/post", method: "POST",
                                             requestBody: CapturedBody(data: Data(text.utf8), originalSize: text.utf8.count)))
        let received = try log.append(Log.record("https://a.test/get", responseBody: text))

        // Then each reads back with its body on its own side
        #expect(try log.record(id: sent)?.requestBody?.data == Data(text.utf8))
        #expect(try log.record(id: sent)?.responseBody == nil)
        #expect(try log.record(id: received)?.requestBody == nil)
        #expect(try log.record(id: received)?.responseBody?.data == Data(text.utf8))
        #expect(try log.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM logBody") } == 2)
    }

    @Test("an expired record's shared body stays for the newer record carrying it, and goes with that record")
    func sharedBodyOutlivesOlderRecord() throws {
        // Given a log keeping a day, with an old and a new record sharing a body, and one of its own
        let clock = Log.TestClock()
        let log = try RequestLog.inMemory(configuration: Log.configuration(maxAge: 86400, clock: clock))
        let start = clock.now
        try log.append(Log.record("https://a.test/old", startedAt: start, responseBody: Self.page))
        let newer = try log.append(Log.record("https://a.test/new", startedAt: start.addingTimeInterval(43200),
                                              responseBody: Self.page))

        // When the old record expires
        clock.advance(by: 86400 + 1)
        try log.evict()

        // Then the newer record still reads back whole, its body carried by it alone, and the size adds up
        #expect(try log.count() == 1)
        #expect(try log.record(id: newer)?.responseBody?.data == Data(Self.page.utf8))
        #expect(try Self.storedBodies(log) == [Self.page: 1])
        #expect(try log.sizeInBytes() == Log.sizeFromRows(log))
        #expect(try log.sizeInBytes() > Int64(Self.page.utf8.count))
        #expect(try log.records(matching: RequestFilter(text: "sanchez")).map(\.id) == [newer])
        try Log.checkIndexIntegrity(log)

        // When the newer one expires too
        clock.advance(by: 43200)
        try log.evict()

        // Then the body goes with it and nothing is counted any more
        #expect(try log.count() == 0)
        #expect(try Self.storedBodies(log).isEmpty)
        #expect(try log.sizeInBytes() == 0)
        try Log.checkIndexIntegrity(log)
    }

    @Test("records stored in one burst that share bodies count every record carrying each, and each reads back its own")
    func burstCountsEveryCarrier() throws {
        // Given a log whose writer stores only when flushed, holding one record of a page already
        var configuration = Log.configuration()
        configuration.schedule = { _, _ in }
        let log = try RequestLog.inMemory(configuration: configuration)
        let before = try log.append(Log.record("https://a.test/before", responseBody: Self.page))
        let other = "{\"results\":[]}"

        // When one burst brings five more of that page, three of a new answer and two more of the page, in turn
        var queued: [String] = []
        for index in 0..<10 {
            let body = index < 5 || index >= 8 ? Self.page : other
            queued.append(body)
            log.enqueue(Log.record("https://a.test/burst/\(index)", responseBody: body))
        }
        try log.flush()

        // Then each answer is stored once, carried by every record of it, old and new
        #expect(try Self.storedBodies(log) == [Self.page: 8, other: 3])
        #expect(try log.sizeInBytes() == Log.sizeFromRows(log))
        let burst = try log.records(matching: RequestFilter(limit: 100)).filter { $0.id != before }.sorted { $0.id < $1.id }
        let bodies = try burst.map { String(decoding: try log.record(id: $0.id)?.responseBody?.data ?? Data(), as: UTF8.self) }
        #expect(bodies.map(\.count) == queued.map(\.count))
        #expect(bodies == queued)

        try Log.checkIndexIntegrity(log)
    }

    @Test("a burst interleaving more answers of one length than the writer keeps at hand stores and indexes each record's own")
    func burstInterleavingSameLengthBodies() throws {
        // Given a log whose writer stores only when flushed, and six answers of the same length that differ in one word
        var configuration = Log.configuration()
        configuration.schedule = { _, _ in }
        let log = try RequestLog.inMemory(configuration: configuration)
        let answers = (0..<6).map { "{\"name\":\"word\(["alpha", "bravo", "delta", "gamma", "kappa", "omega"][$0])\"}" }
        #expect(Set(answers.map(\.utf8.count)).count == 1)

        // When one burst carries them forwards, forwards again, then backwards, and then one with the same answer
        // as the last but a request body, and one with an empty request body
        let order = Array(0..<6) + Array(0..<6) + Array((0..<6).reversed())
        for (position, index) in order.enumerated() {
            log.enqueue(Log.record("https://a.test/\(position)", responseBody: answers[index]))
        }
        log.enqueue(Log.record("https://a.test/sent", requestBody: CapturedBody(data: Data("q".utf8), originalSize: 1),
                               responseBody: answers[0]))
        log.enqueue(Log.record("https://a.test/empty", requestBody: CapturedBody(data: Data(), originalSize: 0),
                               responseBody: answers[0]))
        try log.flush()
        try log.updateSearchIndex()

        // Then every record reads back its own answer, each answer is stored once for its records, the two with
        // request bodies each have bodies of their own, and each answer's word finds exactly its records
        let records = try log.records(matching: RequestFilter(limit: 100))
        for record in records {
            let position = Int(record.url.split(separator: "/").last ?? "")
            let expected = position.map { answers[order[$0]] } ?? answers[0]
            #expect(try log.record(id: record.id)?.responseBody?.data == Data(expected.utf8))
        }
        #expect(try log.record(id: try #require(records.first { $0.url.hasSuffix("/sent") }).id)?.requestBody?.data == Data("q".utf8))
        #expect(try log.record(id: try #require(records.first { $0.url.hasSuffix("/empty") }).id)?.requestBody?.data == Data())
        let (bodies, references) = try log.writer.read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM logBody"), try Int.fetchOne(db, sql: "SELECT SUM(refs) FROM logBody"))
        }
        #expect(bodies == 8)
        #expect(references == 20)
        for (index, word) in ["alpha", "bravo", "delta", "gamma", "kappa", "omega"].enumerated() {
            let expected = Set(order.enumerated().filter { $0.element == index }.map { "https://a.test/\($0.offset)" })
                .union(index == 0 ? ["https://a.test/sent", "https://a.test/empty"] : [])
            #expect(Set(try log.records(matching: RequestFilter(text: "word\(word)", limit: 100)).map(\.url)) == expected)
        }
        #expect(try log.sizeInBytes() == Log.sizeFromRows(log))
        try Log.checkIndexIntegrity(log)
    }

    @Test("a burst sharing one body that overflows the log evicts its own oldest records and keeps the body for the rest")
    func burstEvictingItsOwnRecords() throws {
        // Given an 8 KB log whose writer stores only when flushed
        var configuration = Log.configuration(maxBytes: 8 * 1024)
        configuration.schedule = { _, _ in }
        let log = try RequestLog.inMemory(configuration: configuration)

        // When one burst brings 40 records of one page, more than the log holds
        for index in 0..<40 { log.enqueue(Log.record("https://a.test/poll/\(index)", responseBody: Self.page)) }
        try log.flush()

        // Then the oldest went in the same transaction, and the page is stored once for the records left, all of them
        let left = try log.records(matching: RequestFilter(limit: 100))
        #expect(left.count > 1 && left.count < 40)
        #expect(left.first?.url == "https://a.test/poll/39")
        #expect(try Self.storedBodies(log) == [Self.page: left.count])
        for record in left { #expect(try log.record(id: record.id)?.responseBody?.data == Data(Self.page.utf8)) }
        #expect(try log.sizeInBytes() == Log.sizeFromRows(log))
        #expect(try log.sizeInBytes() <= 8 * 1024)
        try Log.checkIndexIntegrity(log)
    }

    @Test("evicting the oldest records over the size limit frees a shared body's bytes only with its last record")
    func oversizedEvictionCountsSharedBodiesOnce() throws {
        // Given a 40 KB log on a real file
        let (folder, path) = try Log.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let limit: Int64 = 40 * 1024
        let log = try RequestLog.open(at: path, configuration: Log.configuration(maxBytes: limit))

        // When many exchanges get one of three answers, in turn, past the limit
        let answers = (0..<3).map { index in Self.page + String(repeating: " ", count: index) }
        var ids: [Int64] = []
        for index in 0..<300 {
            ids.append(try log.append(Log.record("https://a.test/poll/\(index)", responseBody: answers[index % 3])))
            #expect(try log.sizeInBytes() <= limit)
        }

        // Then far more records fit than if each stored its body (about 2 KB each: under 20), the newest all there
        let count = try log.count()
        #expect(count > 40)
        #expect(try log.records(matching: RequestFilter(limit: 1000)).map(\.id) == Array(ids.suffix(count).reversed()))
        // And the three bodies are stored once each, carried by every record left, and the size adds up
        let bodies = try Self.storedBodies(log)
        #expect(bodies.count == 3)
        #expect(bodies.values.reduce(0, +) == count)
        #expect(try log.sizeInBytes() == Log.sizeFromRows(log))
        for id in ids.suffix(3) { #expect(try log.record(id: id)?.responseBody?.data.prefix(11) == Data("{\"results\":".utf8)) }
        try Log.checkIndexIntegrity(log)

        // And an explicit eviction under a limit smaller than one body leaves no body behind once its records are gone
        let tiny = try RequestLog.open(at: path, configuration: Log.configuration(maxBytes: 1024))
        try tiny.evict()
        #expect(try tiny.count() == 0)
        #expect(try Self.storedBodies(tiny).isEmpty)
        #expect(try tiny.sizeInBytes() == 0)
    }

    @Test("two logs open on one file (two Kiosk processes) share a body between their records, counted once and right")
    func twoWritersShareBodies() async throws {
        // Given one log file opened twice, as `kiosk serve` and the CLI open it
        let (folder, path) = try Log.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try RequestLog.open(at: path, configuration: Log.configuration())
        let second = try RequestLog.open(at: path, configuration: Log.configuration())

        // When both log the same answer, many times, at once
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, log) in [first, second].enumerated() {
                group.addTask {
                    for round in 0..<50 { try log.append(Log.record("https://a.test/\(index)/\(round)", responseBody: Self.page)) }
                }
            }
            try await group.waitForAll()
        }

        // Then the file holds the body once, carried by all 100 records, each reading it back whole from either log
        #expect(try Self.storedBodies(first) == [Self.page: 100])
        #expect(try first.count() == 100)
        for record in try second.records(matching: RequestFilter(limit: 100)) {
            #expect(try first.record(id: record.id)?.responseBody?.data == Data(Self.page.utf8))
        }
        #expect(try first.sizeInBytes() == Log.sizeFromRows(first))
        #expect(try second.sizeInBytes() == first.sizeInBytes())
        try Log.checkIndexIntegrity(first)
    }

    @Test("a log written before bodies were shared is migrated: its records keep their bodies and evict cleanly")
    func migratesUnsharedBodies() throws {
        // Given a log file at the schema before shared bodies, holding one record with its body stored the old way
        let (folder, path) = try Log.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let pool = try DatabasePool(path: path, configuration: RequestLog.makeDatabaseConfiguration())
            try RequestLog.migrator.migrate(pool, upTo: "v5: deferred indexing")
            try pool.write { db in
                let body = Data(Self.page.utf8)
                let searchText = try #require(RequestLog.searchText(of: [body]))
                let byteCount = 64 + body.count + searchText.utf8.count + 30
                try db.execute(sql: """
                    INSERT INTO logEntry (startedAt, source, endpoint, method, url, status, statusClass, decision,
                                          duration, responseBodySize, responseTextLength, byteCount,
                                          requestHeaders, responseHeaders, cacheStatus)
                    VALUES (?, NULL, 'proxy', 'GET', 'https://a.test/old', 200, 2, 'network', 0.1, ?, ?, ?, '[]', '[]', 'Kiosk; fwd=uri-miss')
                    """, arguments: [760_000_000.25, body.count, body.count, byteCount])
                let id = db.lastInsertedRowID
                try db.execute(sql: "INSERT INTO logBody (id, responseBody, searchText) VALUES (?, ?, ?)", arguments: [id, body, searchText])
                try db.execute(sql: "INSERT INTO logSearch (rowid, text) SELECT id, text FROM logSearchText WHERE id = ?", arguments: [id])
                try db.execute(sql: "UPDATE logStats SET byteCount = ?, indexedThrough = ?", arguments: [byteCount, id])
            }
        }

        // When the current Kiosk opens it and logs the same answer twice more
        let clock = Log.TestClock()
        let log = try RequestLog.open(at: path, configuration: Log.configuration(maxAge: 86400, clock: clock))
        let old = try #require(try log.records(matching: RequestFilter(limit: 1)).first?.id)
        let again = try log.append(Log.record("https://a.test/again", startedAt: clock.now.addingTimeInterval(60), responseBody: Self.page))
        let more = try log.append(Log.record("https://a.test/more", startedAt: clock.now.addingTimeInterval(60), responseBody: Self.page))

        // Then the old record reads back whole and is found by its body's words with the new ones; the new two share a
        // body of their own (the old one has no hash to be found by); and the size adds up
        #expect(try log.record(id: old)?.responseBody?.data == Data(Self.page.utf8))
        #expect(try log.records(matching: RequestFilter(text: "sanchez")).map(\.id) == [more, again, old])
        #expect(try log.writer.read { db in try Int.fetchAll(db, sql: "SELECT refs FROM logBody ORDER BY id") } == [1, 2])
        #expect(try log.sizeInBytes() == Log.sizeFromRows(log))
        try Log.checkIndexIntegrity(log)

        // And once every record has expired, nothing is left or counted
        clock.advance(by: 2 * 86400)
        try log.evict()
        #expect(try log.count() == 0)
        #expect(try Self.storedBodies(log).isEmpty)
        #expect(try log.sizeInBytes() == 0)
        try Log.checkIndexIntegrity(log)
    }
}
