import Foundation
import GRDB
import GRDBSQLite
import KioskCore

// The inserts made for every proxied exchange (the request log's row, the proxy cache's answer) bind their values
// through SQLite's own calls. Through GRDB's StatementArguments each value became an existential and a DatabaseValue,
// and each date went through an ICU date formatter: together a third of the writers' time, more than SQLite's own
// work. The statements are still prepared and cached by GRDB, on its writer connection and within its transactions;
// only their binding and stepping are done here. Dates are written exactly as GRDB writes them, so GRDB reads them
// back, orders them and compares them as before.

/// The values bound to one execution of a statement, in order, as SQLite's own calls bind them.
struct RawBindings {
    fileprivate let statement: SQLiteStatement
    fileprivate var count: Int32 = 0

    /// Binds text; nil is NULL.
    mutating func bind(_ value: String?) {
        count += 1
        guard let value else { return }
        // SQLITE_TRANSIENT: SQLite copies the text, which outlives this call's buffer.
        sqlite3_bind_text(statement, count, value, -1, transient)
    }

    /// Binds an integer; nil is NULL.
    mutating func bind(_ value: Int?) {
        count += 1
        guard let value else { return }
        sqlite3_bind_int64(statement, count, Int64(value))
    }

    /// Binds an integer; nil is NULL.
    mutating func bind(_ value: Int64?) {
        count += 1
        guard let value else { return }
        sqlite3_bind_int64(statement, count, value)
    }

    /// Binds a real; nil is NULL.
    mutating func bind(_ value: Double?) {
        count += 1
        guard let value else { return }
        sqlite3_bind_double(statement, count, value)
    }

    /// Binds a blob (an empty one is an empty blob, not NULL); nil is NULL.
    mutating func bind(_ value: Data?) {
        count += 1
        guard let value else { return }
        value.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress, !bytes.isEmpty {
                _ = sqlite3_bind_blob64(statement, count, base, sqlite3_uint64(bytes.count), transient)
            } else {
                // A nil pointer would bind NULL.
                _ = sqlite3_bind_zeroblob(statement, count, 0)
            }
        }
    }

    /// Binds a date as GRDB stores one: UTC text, "yyyy-MM-dd HH:mm:ss.SSS".
    mutating func bind(_ value: Date) {
        bind(RawBindings.databaseText(value))
    }

    /// `date` as GRDB's storage format writes it, without a formatter: the milliseconds computed and rounded as its
    /// formatter (ICU, through CoreFoundation) computes them, then the calendar time by `CivilTime`. Dates before 1600
    /// (where ICU's calendar turns Julian) or after 9999 go through GRDB itself.
    static func databaseText(_ date: Date) -> String {
        let milliseconds = ((date.timeIntervalSinceReferenceDate + 978_307_200) * 1000 + 0.5).rounded(.down)
        guard milliseconds.isFinite, abs(milliseconds) < 250_000_000_000_000 else { return fallbackText(date) }
        let total = Int(milliseconds)
        let seconds = total >= 0 ? total / 1000 : (total - 999) / 1000
        let time = CivilTime(unixSeconds: seconds)
        guard (1600...9999).contains(time.year) else { return fallbackText(date) }
        return time.date + " " + time.time + "." + CivilTime.pad(total - seconds * 1000, 3)
    }

    private static func fallbackText(_ date: Date) -> String {
        String.fromDatabaseValue(date.databaseValue) ?? ""
    }
}

/// SQLITE_TRANSIENT: SQLite takes its own copy of a bound value.
let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

extension Database {
    /// Runs `statement` (prepared by GRDB on this connection, within the caller's access) with the values `bind` binds,
    /// which must be as many as its parameters; returns the first column of its first row as an integer (an INSERT's
    /// `RETURNING id`), nil when it returns none. Throws GRDB's `DatabaseError` on any failure.
    @discardableResult
    func executeRaw(_ statement: Statement, bind: (inout RawBindings) -> Void) throws -> Int64? {
        let sqlite = statement.sqliteStatement
        sqlite3_reset(sqlite)
        sqlite3_clear_bindings(sqlite)
        // Resetting at the end too: a statement left mid-way would keep its transaction's locks.
        defer {
            sqlite3_reset(sqlite)
            sqlite3_clear_bindings(sqlite)
        }
        var bindings = RawBindings(statement: sqlite)
        bind(&bindings)
        guard bindings.count == sqlite3_bind_parameter_count(sqlite) else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "\(bindings.count) values bound to "
                                + "\(sqlite3_bind_parameter_count(sqlite)) parameters", sql: statement.sql)
        }
        var first: Int64?
        while true {
            let code = sqlite3_step(sqlite)
            if code == SQLITE_DONE { return first }
            guard code == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqliteConnection)),
                                    sql: statement.sql)
            }
            if first == nil, sqlite3_column_count(sqlite) > 0 { first = sqlite3_column_int64(sqlite, 0) }
        }
    }
}
