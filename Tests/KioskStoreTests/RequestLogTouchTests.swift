import Foundation
import GRDB
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskStore

/// What touched an exchange (mocks, rewrite rules, breakpoints) is stored with its record.
@Suite("Request log: touched by")
struct RequestLogTouchTests {
    typealias Log = RequestLogTests

    static let touches = [
        ExchangeTouch(kind: .mock, id: 2, name: "GET https://a.test/x", detail: "answered with status 200, without the upstream"),
        ExchangeTouch(kind: .rule, id: 5, name: "Rename", applied: false,
                      phrase: .ruleSkipped(.patchFailed("operation 1 (test /a): the value at /a is 1, not 2"))),
        ExchangeTouch(kind: .rule, id: 6, name: "Slow", phrase: .ruleRewrote([.status(from: 200, to: 503), .latency(milliseconds: 800)],
                                                                         validatorsDropped: true)),
    ]

    @Test("a record's touches read back in order, in the list and in full, and survive reopening the file; untouched records read none")
    func roundTrip() throws {
        // Given a log file with a touched record and an untouched one
        let (folder, path) = try Log.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        var touched = Log.record("https://a.test/touched", responseBody: "{}")
        touched.touchedBy = Self.touches
        let touchedID: Int64
        do {
            let log = try RequestLog.open(at: path, configuration: Log.configuration())
            touchedID = try log.append(touched)
            try log.append(Log.record("https://a.test/plain"))
        }
        // When it is opened again
        let log = try RequestLog.open(at: path, configuration: Log.configuration())
        // Then the touches come back as written, in the list and in the full record; the other has none
        let listed = try log.records(matching: RequestFilter())
        #expect(listed.map(\.touchedBy) == [[], Self.touches])
        let full = try #require(try log.record(id: touchedID))
        #expect(full.touchedBy == Self.touches && full.responseBody?.data == Data("{}".utf8))
        // And the untouched row stores NULL, so it costs nothing
        let nulls = try log.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM logEntry WHERE touchedBy IS NULL") }
        #expect(nulls == 1)
    }

    @Test("a log written before touches were recorded opens with its records, which read untouched; new ones keep theirs")
    func migratesSecondSchema() throws {
        // Given a log file at the second schema with one record
        let (folder, path) = try Log.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let pool = try DatabasePool(path: path, configuration: RequestLog.makeDatabaseConfiguration())
            try RequestLog.migrator.migrate(pool, upTo: "v2: index distinct words")
            try pool.write { db in
                try db.execute(sql: """
                    INSERT INTO logEntry (startedAt, source, endpoint, method, url, status, statusClass, decision,
                                          duration, byteCount, requestHeaders, responseHeaders)
                    VALUES (?, 'rickandmorty', 'rickandmorty.characters', 'GET', 'https://a.test/old', 200, 2, 'network', 0.1, 100, '[]', '[]')
                    """, arguments: [760_000_000.25])
                try db.execute(sql: "UPDATE logStats SET byteCount = 100")
            }
        }
        // When the current Kiosk opens it and logs a touched exchange
        let log = try RequestLog.open(at: path, configuration: Log.configuration())
        var touched = Log.record("https://a.test/new")
        touched.touchedBy = Self.touches
        try log.append(touched)
        // Then both read: the old one untouched, the new one with its touches
        let records = try log.records(matching: RequestFilter())
        #expect(records.map(\.url) == ["https://a.test/new", "https://a.test/old"])
        #expect(records.map(\.touchedBy) == [Self.touches, []])
    }
}
