import Foundation
import GRDB
import KioskCore
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

    @Test("an enqueued burst is stored by itself, without a flush, and is searchable")
    func enqueuedBurstIsStoredAlone() async throws {
        // Given a log storing 20 ms after the first record of a burst
        let log = try RequestLog.inMemory(configuration: RequestLog.Configuration(
            now: { Date(timeIntervalSinceReferenceDate: 760_000_000.25) }, batchingDelay: 0.02))

        // When a burst of records is enqueued and nothing else happens
        for index in 0..<5 { log.enqueue(Log.record("https://a.test/\(index)", responseBody: "{\"w\":\"tinkles\(index)\"}")) }

        // Then they are stored soon after (polled for up to 10 s) and found
        var stored = try log.count()
        for _ in 0..<200 where stored < 5 {
            try await Task.sleep(for: .milliseconds(50))
            stored = try log.count()
        }
        #expect(stored == 5)
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

        // Then the old records are found by their body words, the index is whole, and their size
        // now counts the words stored for the index
        #expect(try Log.urls(log, RequestFilter(text: "gazorpazorp")) == ["https://a.test/old/0"])
        #expect(try Log.urls(log, RequestFilter(text: "old record")).count == 2)
        try Log.checkIndexIntegrity(log)
        let size = try log.sizeInBytes()
        #expect(size > oldSize)
        #expect(try size == log.writer.read { db in try Int64.fetchOne(db, sql: "SELECT SUM(byteCount) FROM logEntry") })

        // And new records join them, and clearing everything leaves a whole, empty index
        try log.append(Log.record("https://a.test/new", responseBody: "{\"species\":\"cromulon\"}"))
        #expect(try Log.urls(log, RequestFilter(text: "cromulon")) == ["https://a.test/new", "https://a.test/old/1"])
        try log.clear()
        #expect(try Log.urls(log, RequestFilter(text: "cromulon")).isEmpty)
        try Log.checkIndexIntegrity(log)
    }
}
