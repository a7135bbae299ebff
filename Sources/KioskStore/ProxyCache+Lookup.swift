import Foundation
import GRDB
import GRDBSQLite
import KioskCore
import Synchronization

// The cache's lookup, which every proxied GET makes before it goes upstream, on the event loop's thread.
//
// Through GRDB's DatabasePool a lookup took a reader from the pool (a barrier queue, a semaphore) and ran on that
// reader's dispatch queue, which together cost more than the statement itself: a quarter of the proxy's event-loop
// time under load. So the lookup keeps connections of its own, each with its one statement prepared, taken by the
// thread looking up and given back after. They are ordinary SQLite connections on the same WAL file: each lookup is a
// read transaction of its own, so it sees every answer committed before it, by this process's writer or another's
// (`kiosk proxy cache clear` from the CLI, a second proxy), exactly as GRDB's readers do. Values are read with GRDB's
// own column conversions, so a stored date reads back as GRDB wrote it.

/// A pool of read-only connections to the cache file, each with the lookup statement prepared.
final class ProxyCacheLookups: Sendable {
    private let path: String
    /// Connections not in use; a lookup takes one (or opens one) and gives it back.
    private let idle = Mutex<[LookupConnection]>([])
    /// At most this many idle connections are kept: as many as threads looked up at once, in practice the event loops.
    private static let maxIdle = 8

    init(path: String) {
        self.path = path
    }

    /// The entries stored for `method`, `url` and `credentials`, whole (one per variant; nearly always one).
    func rows(method: String, url: String, credentials: String) throws -> [StoredRow] {
        let connection = try idle.withLock { $0.popLast() } ?? LookupConnection(path: path)
        let rows = try connection.rows(method: method, url: url, credentials: credentials)
        idle.withLock { connections in
            if connections.count < Self.maxIdle { connections.append(connection) }
        }
        return rows
    }

    /// One stored entry's columns, as the lookup reads them.
    struct StoredRow {
        var entry: ProxyCacheEntry
        var vary: String
        var variant: String
    }
}

/// The rows recent lookups read, by key, kept while no connection has committed to the file since they were read: a hit
/// then reads no row and decodes no header again. Reading them cost a fifth of a hit's time on the event loops.
///
/// Whether anything committed is told by a `ProxyCacheKeyWatcher` of its own (the WAL-index header, read from shared
/// memory, compared with the one seen before): every commit counts, this process's writer's (an answer stored, uses
/// written behind, an eviction) as another process's (`kiosk proxy cache clear`, a second proxy). So rows come from
/// here only as a read of the file would give them at the same moment, and under load they are read again after each
/// write-behind, ten times a second at most.
final class RecentLookups: Sendable {
    private struct State {
        var watcher: ProxyCacheKeyWatcher?
        /// Counts the commits noticed: rows are kept for the count they were read at.
        var generation: UInt64 = 0
        var rows: [String: [ProxyCacheLookups.StoredRow]] = [:]
        var bytes = 0
    }

    private let state = Mutex(State())
    private let path: String
    /// What the kept rows may add up to, in bytes (bodies, and a little for each row's other columns).
    static let maxBytes = 32 << 20
    /// Rows larger than this are not kept: a few large bodies would push every small answer out.
    static let maxRowBytes = 1 << 20
    /// Keys kept at most.
    static let maxKeys = 4096

    init(path: String) {
        self.path = path
    }

    /// The rows stored under `key`: kept ones when nothing was committed since they were read, else `read()`'s (kept
    /// for the next lookup).
    func rows(key: String, read: () throws -> [ProxyCacheLookups.StoredRow]) throws -> [ProxyCacheLookups.StoredRow] {
        let looked = state.withLock { state -> (rows: [ProxyCacheLookups.StoredRow]?, generation: UInt64)? in
            do {
                if state.watcher == nil { state.watcher = try ProxyCacheKeyWatcher(path: path) }
                guard let watcher = state.watcher else { return nil }
                if try watcher.changed() {
                    state.generation &+= 1
                    state.rows = [:]
                    state.bytes = 0
                }
            } catch {
                // Without a watcher nothing can be kept: the file is read as it would be without this.
                state.watcher = nil
                return nil
            }
            return (state.rows[key], state.generation)
        }
        if let rows = looked?.rows { return rows }
        let rows = try read()
        let size = rows.reduce(0) { $0 + $1.entry.body.count + 512 }
        guard let generation = looked?.generation, size <= Self.maxRowBytes else { return rows }
        state.withLock { state in
            // A commit noticed meanwhile: these rows may be older than it.
            guard state.generation == generation else { return }
            if state.bytes + size > Self.maxBytes || state.rows.count >= Self.maxKeys {
                state.rows = [:]
                state.bytes = 0
            }
            state.rows[key] = rows
            state.bytes += size
        }
        return rows
    }
}

/// A read-only connection to the cache file, without SQLite's own mutexes (one thread uses it at a time), waiting for
/// a writer's lock as GRDB's connections do rather than failing at once (only a WAL recovery takes one).
func openReadOnlyConnection(_ path: String) throws -> OpaquePointer {
    var connection: OpaquePointer?
    let opened = sqlite3_open_v2(path, &connection, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
    guard opened == SQLITE_OK, let connection else {
        let message = connection.map { String(cString: sqlite3_errmsg($0)) }
        sqlite3_close_v2(connection)
        throw DatabaseError(resultCode: ResultCode(rawValue: opened), message: message)
    }
    sqlite3_busy_timeout(connection, 5000)
    return connection
}

/// One connection and its prepared lookup. Not thread-safe by itself: `ProxyCacheLookups` hands it to one thread at a
/// time (taken out of, and put back into, its Mutex'd list), which is what makes it Sendable.
private final class LookupConnection: @unchecked Sendable {
    private let connection: OpaquePointer
    private let statement: OpaquePointer

    static let sql = """
        SELECT id, method, url, host, status, headers, body, requestTime, responseTime, lastUsed, hits, size, vary, variant,
            changedAt
        FROM cacheEntry WHERE method = ? AND url = ? AND credentials = ?
        """

    init(path: String) throws {
        let connection = try openReadOnlyConnection(path)
        var statement: OpaquePointer?
        let prepared = sqlite3_prepare_v3(connection, Self.sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard prepared == SQLITE_OK, let statement else {
            let message = String(cString: sqlite3_errmsg(connection))
            sqlite3_close_v2(connection)
            throw DatabaseError(resultCode: ResultCode(rawValue: prepared), message: message, sql: Self.sql)
        }
        self.connection = connection
        self.statement = statement
    }

    deinit {
        sqlite3_finalize(statement)
        sqlite3_close_v2(connection)
    }

    func rows(method: String, url: String, credentials: String) throws -> [ProxyCacheLookups.StoredRow] {
        defer {
            // Ends the statement's read transaction (a reader left open would keep the WAL from being checkpointed).
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in [method, url, credentials].enumerated() {
            // SQLITE_TRANSIENT: SQLite copies the text, which outlives this call's buffer.
            let bound = sqlite3_bind_text(statement, Int32(index + 1), value, -1, transient)
            guard bound == SQLITE_OK else { throw error(bound) }
        }
        var rows: [ProxyCacheLookups.StoredRow] = []
        while true {
            let stepped = sqlite3_step(statement)
            if stepped == SQLITE_DONE { return rows }
            guard stepped == SQLITE_ROW else { throw error(stepped) }
            rows.append(try row())
        }
    }

    /// The current row, converted as GRDB converts a column of that type.
    private func row() throws -> ProxyCacheLookups.StoredRow {
        func text(_ column: Int32) -> String { String(sqliteStatement: statement, index: column) }
        func date(_ column: Int32) throws -> Date {
            guard let date = Date(sqliteStatement: statement, index: column) else {
                throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "a stored time could not be read", sql: Self.sql)
            }
            return date
        }
        var entry = ProxyCacheEntry(
            id: Int64(sqliteStatement: statement, index: 0), method: text(1), url: text(2), host: text(3),
            status: Int(Int64(sqliteStatement: statement, index: 4)), headers: ProxyCache.decode(Data(sqliteStatement: statement, index: 5)),
            body: Data(sqliteStatement: statement, index: 6), requestTime: try date(7), responseTime: try date(8),
            lastUsed: try date(9), hits: Int(Int64(sqliteStatement: statement, index: 10)),
            size: Int(Int64(sqliteStatement: statement, index: 11)))
        entry.changedAt = sqlite3_column_type(statement, 14) == SQLITE_NULL ? nil : try date(14)
        return ProxyCacheLookups.StoredRow(entry: entry, vary: text(12), variant: text(13))
    }

    private func error(_ code: Int32) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: Self.sql)
    }

}
