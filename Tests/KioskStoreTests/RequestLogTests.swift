import Foundation
import GRDB
import KioskCore
import Synchronization
import KioskTestSupport
import Testing
@testable import KioskStore

@Suite("Request log")
struct RequestLogTests {
    // MARK: - Fixtures

    /// A clock the test moves by hand, starting when the fixture records start (the system clock
    /// would find them all older than 7 days and evict them).
    final class TestClock: Sendable {
        private let date = Mutex(Date(timeIntervalSinceReferenceDate: 760_000_000.25))
        var now: Date { date.withLock { $0 } }
        func advance(by seconds: TimeInterval) { date.withLock { $0 += seconds } }
    }

    static func configuration(maxBytes: Int64 = 50 * 1024 * 1024, maxAge: TimeInterval = 7 * 86400,
                              clock: TestClock = TestClock()) -> RequestLog.Configuration {
        RequestLog.Configuration(maxBytes: maxBytes, maxAge: maxAge, now: { clock.now })
    }

    static func record(_ url: String = "https://rickandmortyapi.test/api/character?page=1",
                       source: SourceID? = .rickandmorty, method: String = "GET", status: Int? = 200,
                       decision: CacheDecision = .network, duration: TimeInterval = 0.120,
                       startedAt: Date = Date(timeIntervalSinceReferenceDate: 760_000_000.25),
                       requestBody: CapturedBody? = nil, responseBody: String? = nil) -> RequestRecord {
        RequestRecord(startedAt: startedAt, source: source, endpoint: "rickandmorty.characters", method: method,
                      url: url, requestBody: requestBody, status: status,
                      responseBody: responseBody.map { CapturedBody(data: Data($0.utf8), originalSize: $0.utf8.count) },
                      timings: RequestTimings(total: duration), decision: decision)
    }

    static func temporaryLogPath() throws -> (folder: URL, path: String) {
        let folder = try TemporaryDirectory.make("KioskStoreTests")
        return (folder, folder.appendingPathComponent("kiosk-log.sqlite").path)
    }

    /// The URLs of a list, newest first.
    static func urls(_ log: RequestLog, _ filter: RequestFilter) throws -> [String] {
        try log.records(matching: filter).map(\.url)
    }

    /// The stored size as the rows add it up: each record's own bytes, and each stored body once.
    static func sizeFromRows(_ log: RequestLog) throws -> Int64? {
        try log.writer.read { db in
            try Int64.fetchOne(db, sql: "SELECT (SELECT SUM(byteCount) FROM logEntry) + (SELECT COALESCE(SUM(size), 0) FROM logBody)")
        }
    }

    /// Runs FTS5's own consistency check of each segment of the index (contentless: its b-trees and doclists agree),
    /// once every stored record is indexed.
    static func checkIndexIntegrity(_ log: RequestLog) throws {
        try log.updateSearchIndex()
        try log.writer.write { db in
            for segment in try RequestLog.searchSegments(db) {
                try db.execute(sql: "INSERT INTO \(segment.table) (\(segment.table), rank) VALUES ('integrity-check', 1)")
            }
        }
    }

    // MARK: - Storing and reading

    @Test("the log file and its WAL are readable by their owner only, a file an older version made with 0644 too")
    func ownerOnly() throws {
        // Given a log file an older version left readable by all
        let (_, path) = try Self.temporaryLogPath()
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644]))
        // When the log is opened and a record written
        let log = try RequestLog.open(at: path)
        log.enqueue(Self.record())
        try log.flush()
        // Then the file and its WAL are 0600
        for file in [path, path + "-wal"] {
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
            #expect(mode == 0o600, "\(file): \(String(mode, radix: 8))")
        }
    }

    @Test("a data folder other users may write to is refused, saying why and what to do, and so is a file another user made where Kiosk's goes")
    func refusesFoldersAndFilesOfOthers() throws {
        // Given a data folder anyone may write to (0777, as a folder under /tmp may be made)
        let (folder, path) = try Self.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(chmod(folder.path, 0o777) == 0)

        // When the request log, the store and the proxy cache are opened there
        // Then each is refused: another user could put files there for Kiosk to read as its own
        let refusals: [any Error] = [
            #expect(throws: KioskError.self) { _ = try RequestLog.open(at: path) },
            #expect(throws: KioskError.self) { _ = try AppDatabase.open(at: folder.appendingPathComponent("kiosk.sqlite").path) },
            #expect(throws: KioskError.self) { _ = try ProxyCache.open(at: folder.appendingPathComponent("cache.sqlite").path, maxBytes: nil) },
        ].compactMap { $0 }
        #expect(refusals.count == 3)
        for refusal in refusals {
            #expect("\(refusal)".contains("other users may write to the folder \(folder.path) (mode 777)"), "\(refusal)")
            #expect("\(refusal)".contains("chmod o-w \(folder.path)"), "\(refusal)")
        }
        #expect(!FileManager.default.fileExists(atPath: path))

        // And once the folder is its owner's, it opens; but a file in it that another user owns (made by root here, or
        // skipped where this process cannot give a file away) is refused
        #expect(chmod(folder.path, 0o700) == 0)
        _ = try RequestLog.open(at: path)
        let planted = folder.appendingPathComponent("planted.sqlite").path
        #expect(FileManager.default.createFile(atPath: planted, contents: nil, attributes: [.posixPermissions: 0o666]))
        guard chown(planted, 65534, 65534) == 0 else { return }
        let refused = #expect(throws: KioskError.self) { _ = try RequestLog.open(at: planted) }
        #expect("\(String(describing: refused))".contains("belongs to another user (uid 65534)"), "\(String(describing: refused))")
        // And so is a hot journal of another user's beside a file of ours, which SQLite would roll back into it
        let ours = folder.appendingPathComponent("ours.sqlite").path
        _ = try RequestLog.open(at: ours)
        #expect(FileManager.default.createFile(atPath: ours + "-journal", contents: Data("planted".utf8)))
        #expect(chown(ours + "-journal", 65534, 65534) == 0)
        let journal = #expect(throws: KioskError.self) { _ = try RequestLog.open(at: ours) }
        #expect("\(String(describing: journal))".contains("\(ours)-journal belongs to another user"), "\(String(describing: journal))")
    }

    @Test("an appended record reads back equal: every field, headers in order, timings, bodies and truncation")
    func roundTrip() throws {
        // Given a record with every field set, duplicate headers in a deliberate order, a truncated
        // binary response and an empty request body
        let log = try RequestLog.inMemory(configuration: Self.configuration())
        let full = RequestRecord(
            startedAt: Date(timeIntervalSinceReferenceDate: 760_000_000.123_456_7), source: .marvel,
            endpoint: "marvel.characters", method: "POST",
            url: "https://gateway.marvel.test/v1/public/characters?apikey=REDACTED&ts=1",
            requestHeaders: [.init(name: "Accept", value: "application/json"), .init(name: "X-B", value: "2"),
                             .init(name: "X-A", value: "1"), .init(name: "X-B", value: "3"),
                             .init(name: "X-Odd", value: "\"quoted\" back\\slash\ttab\u{01}\u{1F} ünï 🕺")],
            requestBody: CapturedBody(data: Data(), originalSize: 0), status: 503,
            responseHeaders: [.init(name: "Retry-After", value: "120"), .init(name: "Content-Type", value: "image/png")],
            responseBody: CapturedBody(data: Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF]), originalSize: 9_000),
            error: "server error \"busy\" — é",
            timings: RequestTimings(queued: 0.001, connect: 0.04, dns: 0.012_5, tls: 0.021, firstByte: 0.25, download: 0.003_333, total: 0.3),
            decision: .staleOnError)
        let bare = RequestRecord(startedAt: Date(timeIntervalSinceReferenceDate: 759_999_000), source: nil, endpoint: "image",
                                 method: "GET", url: "https://img.test/a.png", timings: RequestTimings(total: 0),
                                 decision: .offline)

        // When they are appended and read back by id
        let fullID = try log.append(full)
        let bareID = try log.append(bare)

        // Then each reads back exactly, with its new id, and the truncation is visible
        var expected = full
        expected.id = fullID
        let stored = try #require(try log.record(id: fullID))
        #expect(stored == expected)
        #expect(stored.responseBody?.isTruncated == true)
        #expect(stored.requestBody?.isTruncated == false)
        expected = bare
        expected.id = bareID
        #expect(try log.record(id: bareID) == expected)
        #expect(bareID > fullID)
        #expect(try log.record(id: 999) == nil)
        #expect(try log.count() == 2)
    }

    @Test("the list leaves the bodies out; the detail has them")
    func listWithoutBodies() throws {
        // Given a record with both bodies
        let log = try RequestLog.inMemory(configuration: Self.configuration())
        var record = Self.record(requestBody: CapturedBody(data: Data("{\"q\":1}".utf8), originalSize: 7),
                                 responseBody: "{\"results\":[]}")
        record.requestHeaders = [.init(name: "Accept", value: "*/*")]
        let id = try log.append(record)

        // When the list and the detail are read
        let listed = try #require(try log.records(matching: RequestFilter()).first)
        let detail = try #require(try log.record(id: id))

        // Then the list has everything but the bodies, the detail has them too
        #expect(listed.requestBody == nil)
        #expect(listed.responseBody == nil)
        #expect(listed.requestHeaders == record.requestHeaders)
        #expect(listed.url == record.url)
        #expect(detail.requestBody == record.requestBody)
        #expect(detail.responseBody == record.responseBody)
    }

    @Test("the list is newest first and at most limit long")
    func newestFirstAndLimit() throws {
        let log = try RequestLog.inMemory(configuration: Self.configuration())
        for index in 0..<5 { try log.append(Self.record("https://a.test/\(index)")) }
        #expect(try Self.urls(log, RequestFilter(limit: 3)) == ["https://a.test/4", "https://a.test/3", "https://a.test/2"])
        #expect(try log.records(matching: RequestFilter(limit: 0)).isEmpty)
    }

    // MARK: - Filters

    @Test("each filter keeps only the matching records, and filters combine")
    func everyFilter() throws {
        // Given records that differ in source, status, method, decision and duration
        let log = try RequestLog.inMemory(configuration: Self.configuration())
        try log.append(Self.record("https://nyt.test/ok", source: .nyt, status: 200, decision: .fresh, duration: 0.001))
        try log.append(Self.record("https://nyt.test/missing", source: .nyt, status: 404, decision: .network, duration: 0.2))
        try log.append(Self.record("https://rm.test/post", source: .rickandmorty, method: "POST", status: 201,
                                   decision: .mocked, duration: 0.05))
        try log.append(Self.record("https://rm.test/down", source: .rickandmorty, status: 503,
                                   decision: .staleOnError, duration: 2.5))
        try log.append(Self.record("https://rm.test/offline", source: .rickandmorty, status: nil,
                                   decision: .offline, duration: 5))
        try log.append(Self.record("https://img.test/cat.png", source: nil, status: 304, decision: .revalidated,
                                   duration: 0.01))

        // Then each criterion selects what it says, newest first
        #expect(try Self.urls(log, RequestFilter(source: .nyt)) == ["https://nyt.test/missing", "https://nyt.test/ok"])
        #expect(try Self.urls(log, RequestFilter(statusClass: .success)) == ["https://rm.test/post", "https://nyt.test/ok"])
        #expect(try Self.urls(log, RequestFilter(statusClass: .redirection)) == ["https://img.test/cat.png"])
        #expect(try Self.urls(log, RequestFilter(statusClass: .clientError)) == ["https://nyt.test/missing"])
        #expect(try Self.urls(log, RequestFilter(statusClass: .serverError)) == ["https://rm.test/down"])
        // (the offline one was answered from the store: not a failure)
        #expect(try Self.urls(log, RequestFilter(statusClass: .error)).isEmpty)
        #expect(try Self.urls(log, RequestFilter(statusClass: .store)) == ["https://rm.test/offline"])
        #expect(try Self.urls(log, RequestFilter(method: "POST")) == ["https://rm.test/post"])
        #expect(try Self.urls(log, RequestFilter(method: "post")) == ["https://rm.test/post"], "methods ignore case")
        #expect(try Self.urls(log, RequestFilter(decision: .revalidated)) == ["https://img.test/cat.png"])
        #expect(try Self.urls(log, RequestFilter(decision: .edited)).isEmpty)
        #expect(try Self.urls(log, RequestFilter(minimumDuration: 2.5)) == ["https://rm.test/offline", "https://rm.test/down"])
        #expect(try log.records(matching: RequestFilter(method: "GET")).count == 5)

        // And criteria combine, with and without text
        #expect(try Self.urls(log, RequestFilter(source: .rickandmorty, statusClass: .serverError)) == ["https://rm.test/down"])
        #expect(try Self.urls(log, RequestFilter(source: .rickandmorty, minimumDuration: 1, limit: 1)) == ["https://rm.test/offline"])
        #expect(try Self.urls(log, RequestFilter(text: "rm", source: .rickandmorty, method: "GET", decision: .staleOnError))
            == ["https://rm.test/down"])
        #expect(try Self.urls(log, RequestFilter(text: "nyt", statusClass: .success)) == ["https://nyt.test/ok"])
        #expect(try Self.urls(log, RequestFilter(text: "nyt", source: .rickandmorty)).isEmpty)
    }

    // MARK: - Full-text search

    @Test("text finds words of the URL and of both bodies by prefix, ignoring case and accents")
    func textSearch() throws {
        // Given records with words in the URL, the request body and the response body
        let log = try RequestLog.inMemory(configuration: Self.configuration())
        try log.append(Self.record("https://rickandmortyapi.test/api/character/?name=Squanchy&page=2"))
        try log.append(Self.record("https://api.nytimes.test/svc/search.json",
                                   requestBody: CapturedBody(data: Data("{\"query\":\"Portal Gun\"}".utf8), originalSize: 22)))
        try log.append(Self.record("https://dogs.test/list.json", responseBody: "{\"name\":\"Doré\",\"breed\":\"Bouvier\"}"))

        // Then each word is found where it is, by a prefix of it, whatever its case or accents
        #expect(try Self.urls(log, RequestFilter(text: "squanchy")) == ["https://rickandmortyapi.test/api/character/?name=Squanchy&page=2"])
        #expect(try Self.urls(log, RequestFilter(text: "SQUAN")) == ["https://rickandmortyapi.test/api/character/?name=Squanchy&page=2"])
        #expect(try Self.urls(log, RequestFilter(text: "portal")) == ["https://api.nytimes.test/svc/search.json"])
        #expect(try Self.urls(log, RequestFilter(text: "bouv")) == ["https://dogs.test/list.json"])
        #expect(try Self.urls(log, RequestFilter(text: "doré")) == ["https://dogs.test/list.json"])
        #expect(try Self.urls(log, RequestFilter(text: "DORE")) == ["https://dogs.test/list.json"])
        // Every word must match, in any field
        #expect(try Self.urls(log, RequestFilter(text: "list bouvier")) == ["https://dogs.test/list.json"])
        #expect(try Self.urls(log, RequestFilter(text: "list portal")).isEmpty)
        #expect(try Self.urls(log, RequestFilter(text: "json")) == ["https://dogs.test/list.json",
                                                                    "https://api.nytimes.test/svc/search.json"])
        #expect(try Self.urls(log, RequestFilter(text: "zzz")).isEmpty)
    }

    @Test("words joined by symbols are found in a URL only in that order, side by side, the last as a prefix; in a body as words; words apart by spaces anywhere")
    func joinedWords() throws {
        // Given one URL asking for per_page=5, and another whose words per, page and 5 are all there but apart
        let log = try RequestLog.inMemory(configuration: Self.configuration())
        try log.append(Self.record("https://api.test/items?per_page=5&page=2"))
        try log.append(Self.record("https://api.test/items?per=1&page=5"))

        // When the query is searched as typed, Then only the first matches
        #expect(try Self.urls(log, RequestFilter(text: "per_page=5")) == ["https://api.test/items?per_page=5&page=2"])
        // And the last word is a prefix, long or short
        #expect(try Self.urls(log, RequestFilter(text: "per_pa")) == ["https://api.test/items?per_page=5&page=2"])
        #expect(try Self.urls(log, RequestFilter(text: "items?per_pag")) == ["https://api.test/items?per_page=5&page=2"])
        // And out of order, nothing
        #expect(try log.records(matching: RequestFilter(text: "page_per")).isEmpty)
        // And joined words in a body (not in its URL) are found as its words, in any case
        try log.append(Self.record("https://api.test/other", responseBody: "{\"next\":\"/items?sort_by=name\"}"))
        #expect(try Self.urls(log, RequestFilter(text: "SORT_BY")) == ["https://api.test/other"])
        // And words apart by spaces match wherever they are
        #expect(try Self.urls(log, RequestFilter(text: "per 5")) == ["https://api.test/items?per=1&page=5",
                                                                     "https://api.test/items?per_page=5&page=2"])
    }

    @Test("A body that came in a content coding (gzip, deflate) is searched by the words of its content, as the console shows it")
    func codedBodiesSearched() throws {
        // Given answers whose JSON came gzip- and deflate-coded, kept as sent with their Content-Encoding, and one cut short
        let log = try RequestLog.inMemory(configuration: Self.configuration())
        for (coding, word) in [("gzip", "gzippedword"), ("deflate", "deflatedword")] {
            let content = Data(#"{"note": "lorem \#(word) ipsum"}"#.utf8)
            var record = Self.record("https://api.test/\(coding)")
            record.responseHeaders = [.init(name: "Content-Encoding", value: coding)]
            let coded = try #require(ContentCoding.encoded(content, coding: coding))
            record.responseBody = CapturedBody(data: coded, originalSize: coded.count)
            try log.append(record)
        }
        // Then each is found by a word of its content
        #expect(try Self.urls(log, RequestFilter(text: "gzippedword")) == ["https://api.test/gzip"])
        #expect(try Self.urls(log, RequestFilter(text: "deflatedw")) == ["https://api.test/deflate"])
        #expect(try Self.urls(log, RequestFilter(text: "lorem")).count == 2)
    }

    @Test("only UTF-8 text is indexed, and only the first 256 KB of a body, cut on a character boundary")
    func indexedText() throws {
        // Given a binary body that happens to contain ASCII letters, and a long body whose word
        // lies beyond the cap
        let log = try RequestLog.inMemory(configuration: Self.configuration())
        var binary = Data([0xFF, 0xD8, 0xFF])
        binary.append(Data(" hiddenword ".utf8))
        try log.append(Self.record("https://img.test/a.jpg",
                                   requestBody: nil).with(responseBody: CapturedBody(data: binary, originalSize: binary.count)))
        let long = String(repeating: "filler ", count: RequestLog.maxIndexedBodyBytes / 7 + 1) + " farword"
        try log.append(Self.record("https://big.test/long", responseBody: long))

        // Then neither word is found, while the start of the long body is
        #expect(try Self.urls(log, RequestFilter(text: "hiddenword")).isEmpty)
        #expect(try Self.urls(log, RequestFilter(text: "farword")).isEmpty)
        #expect(try Self.urls(log, RequestFilter(text: "filler")) == ["https://big.test/long"])

        // And the indexed length never splits a character (a capture limit may have cut one)
        let euro = Data("ab€".utf8)  // € is 3 bytes
        #expect(RequestLog.indexedTextLength(of: euro) == 5)
        #expect(RequestLog.indexedTextLength(of: euro.prefix(4)) == 2)
        #expect(RequestLog.indexedTextLength(of: Data()) == nil)
        let capped = Data(repeating: 0x61, count: RequestLog.maxIndexedBodyBytes - 1) + Data("€".utf8)
        #expect(RequestLog.indexedTextLength(of: capped)
            == RequestLog.maxIndexedBodyBytes - 1)
    }

    @Test("hostile search input never throws: quotes, operators, SQL, emoji", arguments: [
        "\"", "\"\"", "*", "**", "a*b", "AND", "OR", "NOT", "a AND", "AND b", "NEAR(", "NEAR(a b", "near/3",
        "'); DROP TABLE logEntry; --", "title:rick", "-rick", "^rick", "(", ")", "{}", "[x]", "+", ":", "\\",
        "🦄", "rick 🦄 morty", "日本語", "ﬁ", "\u{0}", "%", "_", "   ", "",
        String(repeating: "word ", count: 200), String(repeating: "x", count: 5000),
    ])
    func hostileInput(_ text: String) throws {
        // Given a log with a record whose URL has words
        let log = try RequestLog.inMemory(configuration: Self.configuration())
        try log.append(Self.record("https://rickandmortyapi.test/api/character?name=rick+morty"))

        // When the input is used as a search, alone and with other filters and a page cursor
        let results = try log.records(matching: RequestFilter(text: text))
        _ = try log.records(matching: RequestFilter(text: text, source: .nyt, statusClass: .error, method: "GET",
                                                    decision: .mocked, minimumDuration: 1, beforeID: 5, limit: 3))

        // Then nothing throws, and the table is still there
        #expect(results.count <= 1)
        #expect(try log.count() == 1)
    }

    @Test("blank text is no criterion; symbols alone are looked for in the URLs as typed; operators are searched as words")
    func wordlessText() throws {
        let log = try RequestLog.inMemory(configuration: Self.configuration())
        try log.append(Self.record("https://a.test/near/and"))
        try log.append(Self.record("https://b.test/other?$top=5"))
        // Blank: everything
        #expect(try log.records(matching: RequestFilter(text: "")).count == 2)
        #expect(try log.records(matching: RequestFilter(text: "  ")).count == 2)
        // Only symbols: the URLs that hold them as typed, and none when none does (not every record)
        #expect(try Self.urls(log, RequestFilter(text: "$")) == ["https://b.test/other?$top=5"])
        #expect(try log.records(matching: RequestFilter(text: "\" * ( ) - : ^")).isEmpty)
        #expect(try log.records(matching: RequestFilter(text: "✓")).isEmpty)
        // FTS5 keywords are plain words
        #expect(try Self.urls(log, RequestFilter(text: "NEAR(")) == ["https://a.test/near/and"])
        #expect(try Self.urls(log, RequestFilter(text: "AND")) == ["https://a.test/near/and"])
    }

    // MARK: - Paging

    @Test("beforeID pages back through the log, with and without text")
    func paging() throws {
        // Given 25 records, every other one about dogs
        let log = try RequestLog.inMemory(configuration: Self.configuration())
        var ids: [Int64] = []
        for index in 0..<25 {
            ids.append(try log.append(Self.record(index.isMultiple(of: 2) ? "https://dogs.test/\(index)" : "https://cats.test/\(index)")))
        }

        // When pages of 10 are read, each starting below the last id of the previous one
        var seen: [Int64] = []
        var cursor: Int64?
        repeat {
            let page = try log.records(matching: RequestFilter(beforeID: cursor, limit: 10))
            seen += page.map(\.id)
            cursor = page.count == 10 ? page.last?.id : nil
        } while cursor != nil

        // Then every record is seen once, newest first
        #expect(seen == ids.reversed())

        // And the same with text
        let firstDogs = try log.records(matching: RequestFilter(text: "dogs", limit: 5))
        let nextDogs = try log.records(matching: RequestFilter(text: "dogs", beforeID: firstDogs.last?.id, limit: 100))
        #expect((firstDogs + nextDogs).map(\.url) == stride(from: 24, through: 0, by: -2).map { "https://dogs.test/\($0)" })
    }

    @Test("afterID keeps only what was stored after a known record, with and without text")
    func afterID() throws {
        // Given 10 records, every other one about dogs
        let log = try RequestLog.inMemory(configuration: Self.configuration())
        var ids: [Int64] = []
        for index in 0..<10 {
            ids.append(try log.append(Self.record(index.isMultiple(of: 2) ? "https://dogs.test/\(index)" : "https://cats.test/\(index)")))
        }

        // When the records after the sixth are asked for, then those about dogs
        let after = try log.records(matching: RequestFilter(afterID: ids[5], limit: 100))
        let dogsAfter = try log.records(matching: RequestFilter(text: "dogs", afterID: ids[5], limit: 100))

        // Then only the last four come back, newest first, and the text keeps the two about dogs
        #expect(after.map(\.id) == Array(ids[6...].reversed()))
        #expect(dogsAfter.map(\.url) == ["https://dogs.test/8", "https://dogs.test/6"])
    }

    // MARK: - Bounds

    @Test("records older than maxAge are evicted by evict() and automatically on a later write")
    func ageEviction() throws {
        // Given a 1-day log with records started 3 days, 2 days and 1 hour ago by the injected clock
        let clock = TestClock()
        let log = try RequestLog.inMemory(configuration: Self.configuration(maxAge: 86400, clock: clock))
        for (name, age) in [("old", 3 * 86400.0), ("two-days-old", 2 * 86400.0), ("recent", 3600.0)] {
            try log.append(Self.record("https://a.test/\(name)", startedAt: clock.now.addingTimeInterval(-age)))
        }
        // (the automatic check runs at most once a minute, so it ran on the first write only)
        // When evict() is called
        try log.evict()

        // Then only the recent one remains, and the size shrank accordingly
        #expect(try Self.urls(log, RequestFilter()) == ["https://a.test/recent"])
        let sizeOfOne = try log.sizeInBytes()
        #expect(sizeOfOne > 0)

        // When the clock moves on 2 days and another record of the same size is appended
        clock.advance(by: 2 * 86400)
        try log.append(Self.record("https://a.test/newest", startedAt: clock.now))

        // Then the automatic eviction removed the now-expired one, and search agrees
        #expect(try Self.urls(log, RequestFilter()) == ["https://a.test/newest"])
        #expect(try Self.urls(log, RequestFilter(text: "recent")).isEmpty)
        #expect(try log.sizeInBytes() == sizeOfOne)
        try Self.checkIndexIntegrity(log)
    }

    @Test("over maxBytes the oldest records are evicted, the newest kept, and the size stays under the limit")
    func sizeEviction() throws {
        // Given a 100 KB log on a real file
        let (folder, path) = try Self.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let limit: Int64 = 100 * 1024
        let log = try RequestLog.open(at: path, configuration: Self.configuration(maxBytes: limit))

        // When 300 records of about 1 KB each are appended
        var ids: [Int64] = []
        for index in 0..<300 {
            let body = "{\"index\":\(index),\"words\":\"" + String(repeating: "plumbus ", count: 120) + "\"}"
            ids.append(try log.append(Self.record("https://a.test/item/\(index)", responseBody: body)))
            #expect(try log.sizeInBytes() <= limit)
        }

        // Then the stored size is under the limit, the newest records are all there, and what
        // remains is a contiguous run of the newest
        let count = try log.count()
        #expect(count > 50 && count < 100)
        let remaining = try log.records(matching: RequestFilter(limit: 1000)).map(\.id)
        #expect(remaining == Array(ids.suffix(count).reversed()))
        #expect(try log.record(id: ids[0]) == nil)
        #expect(try log.records(matching: RequestFilter(text: "plumbus", limit: 1000)).count == count)
        #expect(try Self.urls(log, RequestFilter(text: "item 0")).isEmpty)
        #expect(try log.sizeInBytes() == Self.sizeFromRows(log))
        try Self.checkIndexIntegrity(log)

        // And an explicit evict under a smaller bound keeps the newest
        let smaller = try RequestLog.open(at: path, configuration: Self.configuration(maxBytes: 10 * 1024))
        try smaller.evict()
        #expect(try smaller.sizeInBytes() <= 10 * 1024)
        #expect(try smaller.records(matching: RequestFilter(limit: 1)).first?.id == ids.last)
    }

    @Test("clear deletes everything, and ids are not reused afterwards")
    func clear() throws {
        let log = try RequestLog.inMemory(configuration: Self.configuration())
        let first = try log.append(Self.record(responseBody: "{\"a\":\"squanch\"}"))
        log.enqueue(Self.record())
        try log.clear()
        #expect(try log.count() == 0)
        #expect(try log.sizeInBytes() == 0)
        #expect(try log.records(matching: RequestFilter(text: "squanch")).isEmpty)
        try log.flush()
        #expect(try log.count() == 0, "a record still queued is cleared too")
        let next = try log.append(Self.record(responseBody: "{\"a\":\"squanch\"}"))
        #expect(next > first)
        #expect(try log.records(matching: RequestFilter(text: "squanch")).map(\.id) == [next])
        try Self.checkIndexIntegrity(log)
    }

    // MARK: - Queued writes

    @Test("enqueued records are all stored, in order, once flushed; appends keep their place")
    func enqueueAndFlush() async throws {
        // Given a log on a real file
        let (folder, path) = try Self.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = try RequestLog.open(at: path, configuration: Self.configuration())

        // When 2,000 records are enqueued from one task, an append is made midway, and 4 other
        // tasks enqueue 500 each concurrently
        for index in 0..<1000 { log.enqueue(Self.record("https://seq.test/\(index)")) }
        try log.append(Self.record("https://seq.test/appended"))
        for index in 1000..<2000 { log.enqueue(Self.record("https://seq.test/\(index)")) }
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    for index in 0..<500 { log.enqueue(Self.record("https://par.test/task\(task)/\(index)")) }
                }
            }
        }
        try log.flush()

        // Then everything is stored, nothing dropped, the sequential ones in enqueue order
        #expect(try log.count() == 4001)
        #expect(log.droppedCount == 0)
        let sequential = try log.records(matching: RequestFilter(text: "seq", limit: 5000)).map(\.url).reversed()
        let expected = (0..<1000).map { "https://seq.test/\($0)" } + ["https://seq.test/appended"]
            + (1000..<2000).map { "https://seq.test/\($0)" }
        #expect(Array(sequential) == expected)
        for task in 0..<4 {
            let urls = try log.records(matching: RequestFilter(text: "task\(task)", limit: 1000)).map(\.url).reversed()
            #expect(Array(urls) == (0..<500).map { "https://par.test/task\(task)/\($0)" })
        }
    }

    @Test("the live feed's read of committed records neither stores nor waits for the queued ones, and keeps their headers (a row's type is its answer's)")
    func committedReadLeavesTheQueueAlone() async throws {
        // Given a log that keeps records queued a minute, with one record stored and one still queued
        let (folder, path) = try Self.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = try RequestLog.open(at: path, configuration: RequestLog.Configuration(
            now: { Date(timeIntervalSinceReferenceDate: 760_000_000.25) }, batchingDelay: 60))
        var stored = Self.record("https://stored.test/1")
        stored.requestHeaders = [.init(name: "Accept", value: "application/json")]
        log.enqueue(stored)
        try log.flush()
        let id = try #require(try log.records(matching: RequestFilter(limit: 1)).first?.id)
        log.enqueue(Self.record("https://queued.test/2"))
        // When the committed range is read as a live console reads it
        let read = try log.committedRecords(id...id, matching: RequestFilter())
        // Then it has the stored record, with its headers, and the queued one is still queued
        #expect(read.map(\.url) == ["https://stored.test/1"] && read.first?.requestHeaders.map(\.name) == ["Accept"])
        #expect(try log.committedRecords(id...(id + 10), matching: RequestFilter()).map(\.url) == ["https://stored.test/1"])
        // And the list's own read stores it and shows both, headers included
        let listed = try log.records(matching: RequestFilter(limit: 10))
        #expect(listed.map(\.url) == ["https://queued.test/2", "https://stored.test/1"])
        #expect(listed.last?.requestHeaders.map(\.name) == ["Accept"])
    }

    @Test("a read made while a write has taken the queued records but not committed them waits and sees them")
    func readWaitsForTakenRecords() async throws {
        // Given a log on a real file (reads use their own connection) with a record enqueued, and a
        // write on the log's writer that has taken it into its transaction and holds it uncommitted
        let (folder, path) = try Self.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = try RequestLog.open(at: path, configuration: RequestLog.Configuration(
            now: { Date(timeIntervalSinceReferenceDate: 760_000_000.25) }, batchingDelay: 60))
        log.enqueue(Self.record("https://taken.test/1"))
        let taken = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        log.writer.asyncWriteWithoutTransaction { db in
            var count = 0
            try? db.inTransaction {
                count = try log.storePending(db)?.count ?? 0
                taken.signal()
                release.wait()
                return .commit
            }
            log.settle(count)
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { taken.wait(); continuation.resume() }
        }

        // When the list is read while that write still holds the record, and the write commits later
        let reading = Task.detached { try log.records(matching: RequestFilter(limit: 10)).map(\.url) }
        try await Task.sleep(for: .milliseconds(200))
        release.signal()

        // Then the read shows the request already made, instead of an empty log
        #expect(try await reading.value == ["https://taken.test/1"])
    }

    @Test("the records waiting for the writer hold at most 64 MB: past it new ones are dropped and counted, and the log takes records again once they are stored")
    func waitingRecordsBoundedInBytes() throws {
        // Given a log (large enough to keep all) whose queued write has not run yet (its timer is held by the test)
        let held = Mutex<[@Sendable () -> Void]>([])
        var configuration = Self.configuration(maxBytes: 1 << 30)
        configuration.schedule = { _, work in held.withLock { $0.append(work) } }
        let log = try RequestLog.inMemory(configuration: configuration)
        let megabyte = String(repeating: "x", count: 1 << 20)

        // When 100 records of a megabyte each are enqueued while the writer is held up
        for index in 0..<100 { log.enqueue(Self.record("https://big.test/\(index)", responseBody: megabyte)) }

        // Then those past 64 MB are dropped and counted, not held in memory
        let dropped = log.droppedCount
        #expect(dropped > 30 && dropped < 40, "\(dropped) dropped")
        // And once the waiting ones are stored, the log takes records again
        try log.flush()
        #expect(try log.count() == 100 - dropped)
        log.enqueue(Self.record("https://big.test/after", responseBody: megabyte))
        try log.flush()
        #expect(log.droppedCount == dropped)
        #expect(try log.records(matching: RequestFilter(limit: 1)).first?.url == "https://big.test/after")
    }

    @Test("a deferred record is made by the writer when it stores it, counted by its declared size, and never made when dropped")
    func deferredRecordsMadeByTheWriter() throws {
        // Given a log whose queued write is held by the test, and deferred records that count how often they are made
        let held = Mutex<[@Sendable () -> Void]>([])
        var configuration = Self.configuration(maxBytes: 1 << 30)
        configuration.schedule = { _, work in held.withLock { $0.append(work) } }
        let log = try RequestLog.inMemory(configuration: configuration)
        let made = Mutex<[String]>([])
        let deferred = { @Sendable (url: String, bodyBytes: Int) in
            DeferredRecord(bodyBytes: bodyBytes, urlBytes: url.utf8.count) {
                made.withLock { $0.append(url) }
                return Self.record(url)
            }
        }

        // When two are enqueued, the second declaring more than the queue may hold beside the first
        log.enqueue(deferred("https://deferred.test/1", 1 << 20))
        log.enqueue(deferred("https://deferred.test/2", 64 << 20))

        // Then neither is made while it waits (enqueue does not make it), and the second is dropped by its declared size
        #expect(made.withLock { $0 } == [])
        #expect(log.droppedCount == 1)
        // And when the writer stores the queue, the one kept is made once, and stored as made
        try log.flush()
        #expect(made.withLock { $0 } == ["https://deferred.test/1"])
        #expect(try Self.urls(log, RequestFilter()) == ["https://deferred.test/1"])
    }

    @Test("a failing flush counts the dropped records instead of throwing into enqueue")
    func droppedOnFailure() throws {
        // Given a log whose file cannot grow (as on a full disk)
        let log = try RequestLog.inMemory(configuration: Self.configuration())
        try log.writer.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            try db.execute(sql: "PRAGMA max_page_count = \(pages)")
        }

        // When large records are enqueued and flushed (the queued write may fail before the flush
        // runs, in which case the flush has nothing left to store and does not throw)
        for _ in 0..<3 { log.enqueue(Self.record(responseBody: String(repeating: "x", count: 100_000))) }
        do {
            try log.flush()
        } catch let error as KioskError {
            #expect(error.storageMessage?.contains("disk is full") == true)
        }

        // Then enqueue never threw, and the 3 records are counted as dropped
        #expect(log.droppedCount == 3)
        #expect(try log.count() == 0)
    }

    @Test("a log that cannot store tells why once for a run of failures, and again only after a write has worked")
    func toldOnceOnFailure() throws {
        // Given a log whose file cannot grow (as on a full disk), told of failures
        let log = try RequestLog.inMemory(configuration: Self.configuration())
        let told = Mutex<[String]>([])
        log.onStoreFailure { reason in told.withLock { $0.append(reason) } }
        func limit(_ pages: Int?) throws {
            try log.writer.writeWithoutTransaction { db in
                let count = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
                try db.execute(sql: "PRAGMA max_page_count = \(pages ?? count)")
            }
        }
        try limit(nil)
        let large = String(repeating: "x", count: 100_000)

        // When two writes of large records fail in a row
        for _ in 0..<2 {
            log.enqueue(Self.record(responseBody: large))
            _ = try? log.flush()
        }

        // Then the failure is told once, in the storage error's words
        #expect(told.withLock { $0.count } == 1)
        #expect(told.withLock { $0.first }?.contains("disk is full") == true, "\(told.withLock { $0 })")

        // And when the file may grow again and a record is stored, a later failure is told again
        try limit(1_000_000)
        try log.append(Self.record("https://a.test/stored"))
        try limit(nil)
        log.enqueue(Self.record(responseBody: large))
        _ = try? log.flush()
        #expect(told.withLock { $0.count } == 2)
        #expect(log.droppedCount == 3)
    }

    // MARK: - Files

    @Test("a log reopened after being closed keeps its records, index and size")
    func reopen() throws {
        let (folder, path) = try Self.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let size: Int64
        do {
            let log = try RequestLog.open(at: path, configuration: Self.configuration())
            try log.append(Self.record("https://a.test/kept", responseBody: "{\"name\":\"Birdperson\"}"))
            log.enqueue(Self.record("https://a.test/queued"))
            try log.flush()
            size = try log.sizeInBytes()
        }

        let reopened = try RequestLog.open(at: path, configuration: Self.configuration())
        #expect(try Self.urls(reopened, RequestFilter()) == ["https://a.test/queued", "https://a.test/kept"])
        #expect(try Self.urls(reopened, RequestFilter(text: "birdperson")) == ["https://a.test/kept"])
        #expect(try reopened.sizeInBytes() == size)
        let (journalMode, autoVacuum) = try reopened.writer.read { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA auto_vacuum"))
        }
        #expect(journalMode == "wal")
        #expect(autoVacuum == 2)
    }

    @Test("a file that is not a database is a storage error saying it is corrupt and naming it")
    func corruptFile() throws {
        let (folder, path) = try Self.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: path))

        let error = #expect(throws: KioskError.self) { try RequestLog.open(at: path) }

        let message = try #require(error?.storageMessage)
        #expect(message.contains("corrupt"))
        #expect(message.contains(path))
    }

    @Test("a path whose folder cannot be created is a storage error naming the folder")
    func unwritablePath() throws {
        let folder = try TemporaryDirectory.make("KioskStoreTests")
        defer { try? FileManager.default.removeItem(at: folder) }
        let blocker = folder.appendingPathComponent("not-a-folder")
        try Data("x".utf8).write(to: blocker)

        let error = #expect(throws: KioskError.self) {
            try RequestLog.open(at: blocker.appendingPathComponent("kiosk-log.sqlite").path)
        }

        let message = try #require(error?.storageMessage)
        #expect(message.contains("cannot create the folder"))
        #expect(message.contains(blocker.path))
    }
}

extension RequestRecord {
    /// A copy with another response body.
    func with(responseBody: CapturedBody?) -> RequestRecord {
        var copy = self
        copy.responseBody = responseBody
        return copy
    }
}
