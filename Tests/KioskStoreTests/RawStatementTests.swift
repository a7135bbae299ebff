import Foundation
import GRDB
import Testing
@testable import KioskStore

@Suite("Values bound through SQLite's own calls")
struct RawStatementTests {
    @Test("A date is written exactly as GRDB writes it, milliseconds rounded as its formatter rounds them, from year 1 to 9999, before 1970 too")
    func datesAsGRDBWritesThem() {
        // Given dates at the edges of days, months, leap years, eras and the format's range, and random ones with fractions
        var dates: [Date] = [0, -0.0005, -1, 0.9999, 951_782_400, 951_868_799.999, 4_107_542_399.9995, -62_135_596_800,
                             253_402_300_799.999, 1_800_000_000.123_456, -2_208_988_800.5, 1_800_000_000.0625, -1_000_000_000.0625, 1_700_000_000.5625].map(Date.init(timeIntervalSince1970:))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 { dates.append(Date(timeIntervalSince1970: Double.random(in: -62_000_000_000...253_000_000_000, using: &generator))) }

        // Then each is GRDB's own text for it
        for date in dates {
            #expect(RawBindings.databaseText(date) == String.fromDatabaseValue(date.databaseValue), "\(date.timeIntervalSince1970)")
        }
    }

    @Test("Each kind of value reads back as bound: NULL, text, integers, reals, an empty blob (not NULL), a date; RETURNING gives the id")
    func valuesReadBack() throws {
        // Given a table with a column of each kind
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b INTEGER, c REAL, d BLOB, e BLOB, f DATETIME)")
            let insert = try db.cachedStatement(sql: "INSERT INTO t (a, b, c, d, e, f) VALUES (?, ?, ?, ?, ?, ?) RETURNING id")
            let date = Date(timeIntervalSince1970: 1_800_000_000.25)

            // When two rows are inserted, the second with NULLs
            let first = try db.executeRaw(insert) { values in
                values.bind("héllo")
                values.bind(Int64.max)
                values.bind(2.5)
                values.bind(Data())
                values.bind(Data([0, 1, 2]))
                values.bind(date)
            }
            let second = try db.executeRaw(insert) { values in
                values.bind(String?.none)
                values.bind(Int?.none)
                values.bind(Double?.none)
                values.bind(Data?.none)
                values.bind(Data?.none)
                values.bind(date)
            }

            // Then the ids come back, and GRDB reads each value as it was bound
            #expect(first == 1 && second == 2)
            let row = try #require(try Row.fetchOne(db, sql: "SELECT * FROM t WHERE id = 1"))
            #expect(row["a"] as String? == "héllo" && row["b"] as Int64? == .max && row["c"] as Double? == 2.5)
            #expect(row["d"] as Data? == Data() && row["e"] as Data? == Data([0, 1, 2]) && row["f"] as Date? == date)
            let nulls = try #require(try Row.fetchOne(db, sql: "SELECT a, b, c, d, e FROM t WHERE id = 2"))
            #expect(nulls.databaseValues.allSatisfy { $0.isNull })
        }
    }

    @Test("Too few values, or a failing statement, throw with SQLite's reason and leave the statement usable")
    func failures() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (a TEXT NOT NULL UNIQUE)")
            let insert = try db.cachedStatement(sql: "INSERT INTO t (a) VALUES (?)")
            #expect(throws: DatabaseError.self) { try db.executeRaw(insert) { _ in } }
            try db.executeRaw(insert) { $0.bind("x") }
            let duplicate = #expect(throws: DatabaseError.self) { try db.executeRaw(insert) { $0.bind("x") } }
            #expect(duplicate?.resultCode == .SQLITE_CONSTRAINT)
            try db.executeRaw(insert) { $0.bind("y") }
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") == 2)
        }
    }
}
