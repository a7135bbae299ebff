import Foundation
import GRDB
import GRDBSQLite
import Synchronization

// Which keys (method, credentials, URL) the cache file may hold, kept in memory, so that the lookup a proxied GET makes
// before it goes upstream answers "never stored" without reading the file. A proxy that stores each answer misses on
// nearly every request it has not seen, and each read of the file was a read transaction of its own (the WAL index's
// locks taken and let go): a sixth of what storing the answers cost the proxy.
//
// The set may hold keys the file no longer holds (an evicted entry, another process's removal): those only cost a read
// that finds nothing. It must never lack a key the file holds, or a stored answer would go unseen:
// - an answer queued by this process adds its key before it is written, and an archive's answers before their write;
// - another process's writes are seen by SQLite's `data_version`, which moves whenever another connection commits: the
//   rows added since (ids only grow: AUTOINCREMENT) are read then, before the lookup that noticed it answers. Asking
//   for it is a read transaction of its own, as costly as the lookup it spares; so it is asked only when the WAL-index
//   header (the first 48 bytes of the `-shm` file, https://sqlite.org/walformat.html §2.1) differs from the one read
//   before the last time it was asked: every commit, by any connection, writes a new header (its frame count and
//   change counter move), and a commit is complete only once the header is written. The header is read where the
//   watching connection's SQLite maps it (its VFS's xShmMap), not through a descriptor of ours: closing one would drop
//   every POSIX lock this process holds on the file, SQLite's own included. A read that fails leaves the change to be
//   read again;
// - after this process evicts or clears entries, the set is made again from the file (so it does not grow with what
//   is gone), with the keys still waiting for their write; the rows another process adds meanwhile are read again.

/// The hash of a key as the set holds it.
func proxyCacheKeyHash(_ key: String) -> Int { key.hashValue }

/// A read-only connection watching the cache file for other connections' commits and reading the keys they added.
/// Not thread-safe by itself: `ProxyCache` keeps it in a Mutex, which is what makes it Sendable.
final class ProxyCacheKeyWatcher: @unchecked Sendable {
    private let connection: OpaquePointer
    private let version: OpaquePointer
    private let added: OpaquePointer
    /// The `data_version` last read: nil before the first read.
    private var lastVersion: Int64?
    /// Whether the header may be read: once the connection has read a WAL file (it then maps the `-shm` file and holds
    /// its shared lock, which keeps another opening from resetting it). Until then, and for a file not in WAL mode,
    /// `data_version` is asked every time.
    private var readsHeader = false
    private var checkedMode = false
    /// The WAL-index header as read just before `data_version` was last asked.
    private var lastHeader: WALIndexHeader?

    /// The 48 bytes of the WAL-index header.
    private struct WALIndexHeader: Equatable {
        var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)

        static func == (lhs: Self, rhs: Self) -> Bool { lhs.words == rhs.words }
    }

    static let addedSQL = "SELECT id, method, credentials, url FROM cacheEntry WHERE id > ?"

    init(path: String) throws {
        let connection = try openReadOnlyConnection(path)
        var version: OpaquePointer?
        var added: OpaquePointer?
        let flags = UInt32(SQLITE_PREPARE_PERSISTENT)
        var prepared = sqlite3_prepare_v3(connection, "PRAGMA data_version", -1, flags, &version, nil)
        if prepared == SQLITE_OK { prepared = sqlite3_prepare_v3(connection, Self.addedSQL, -1, flags, &added, nil) }
        guard prepared == SQLITE_OK, let version, let added else {
            let message = String(cString: sqlite3_errmsg(connection))
            sqlite3_finalize(version)
            sqlite3_finalize(added)
            sqlite3_close_v2(connection)
            throw DatabaseError(resultCode: ResultCode(rawValue: prepared), message: message)
        }
        self.connection = connection
        self.version = version
        self.added = added
    }

    deinit {
        sqlite3_finalize(version)
        sqlite3_finalize(added)
        sqlite3_close_v2(connection)
    }

    /// Whether another connection committed since the last call (true the first time).
    func changed() throws -> Bool {
        // Read before `data_version` is asked: a commit after this read writes another header, seen next time.
        let header = readsHeader ? walIndexHeader() : nil
        if let header, let lastHeader, header == lastHeader { return false }
        defer { sqlite3_reset(version) }
        let stepped = sqlite3_step(version)
        guard stepped == SQLITE_ROW else { throw error(stepped, sql: "PRAGMA data_version") }
        let now = sqlite3_column_int64(version, 0)
        sqlite3_reset(version)
        defer { lastVersion = now }
        lastHeader = header
        if !checkedMode {
            checkedMode = true
            readsHeader = journalMode() == "wal"
        }
        return lastVersion != now
    }

    /// The connection's journal mode, lowercased ("" when it cannot be read).
    private func journalMode() -> String {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection, "PRAGMA journal_mode", -1, &statement, nil) == SQLITE_OK, let statement else { return "" }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return "" }
        return String(sqliteStatement: statement, index: 0).lowercased()
    }

    /// The WAL-index header, copied from SQLite's own mapping of the `-shm` file's first region; nil when it cannot be.
    private func walIndexHeader() -> WALIndexHeader? {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(connection, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK, let file,
              let methods = file.pointee.pMethods, methods.pointee.iVersion >= 2, let map = methods.pointee.xShmMap else { return nil }
        // Region 0 of 32 KB (SQLite's own size for it), not extended: mapped already, since the connection has read.
        var region: UnsafeMutableRawPointer?
        guard map(file, 0, 32768, 0, &region) == SQLITE_OK, let region else { return nil }
        var header = WALIndexHeader()
        withUnsafeMutableBytes(of: &header.words) { $0.copyMemory(from: UnsafeRawBufferPointer(start: region, count: $0.count)) }
        return header
    }

    /// The hashes of the keys of the rows whose id is past `id`, and the largest id read (`id` when none).
    func keys(after id: Int64) throws -> (hashes: [Int], maxID: Int64) {
        // Resetting ends the statement's read transaction (one left open would keep the WAL from being checkpointed).
        defer { sqlite3_reset(added) }
        sqlite3_bind_int64(added, 1, id)
        var hashes: [Int] = []
        var maxID = id
        while true {
            let stepped = sqlite3_step(added)
            if stepped == SQLITE_DONE { return (hashes, maxID) }
            guard stepped == SQLITE_ROW else { throw error(stepped, sql: Self.addedSQL) }
            maxID = max(maxID, sqlite3_column_int64(added, 0))
            let key = ProxyCache.queueKey(method: String(sqliteStatement: added, index: 1),
                                          credentials: String(sqliteStatement: added, index: 2),
                                          url: String(sqliteStatement: added, index: 3))
            hashes.append(proxyCacheKeyHash(key))
        }
    }

    private func error(_ code: Int32, sql: String) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }
}

extension ProxyCache {
    /// The keys the file may hold, as `ProxyCache` keeps them with its write queue.
    struct KnownKeys {
        var hashes: Set<Int> = []
        /// Whether the file's keys were read (by the first lookup): until then `hashes` holds only those queued.
        var isLoaded = false
        /// Every row of the file whose id is at most this has its key in `hashes`.
        var syncedID: Int64 = 0
        /// Bumped each time the set is made again: rows read by a watcher before that are not added after it.
        var generation = 0
        /// Whether the rows past `syncedID` must be read before the next answer, whatever `data_version` says.
        var mustSync = true
    }

    /// Every key of the file as `db` sees it (which must be a transaction's snapshot), and its largest id.
    static func allKeys(_ db: Database) throws -> (hashes: Set<Int>, maxID: Int64) {
        var hashes = Set<Int>()
        // The unique index holds the three columns and the id: SQLite reads it alone, not the rows and their bodies.
        let rows = try Row.fetchCursor(db, sql: "SELECT id, method, credentials, url FROM cacheEntry")
        var maxID: Int64 = 0
        while let row = try rows.next() {
            maxID = max(maxID, row[0])
            hashes.insert(proxyCacheKeyHash(queueKey(method: row[1], credentials: row[2], url: row[3])))
        }
        // Rows may have been removed past the largest left: AUTOINCREMENT's sequence still says which ids were given.
        let sequence = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'cacheEntry'") ?? 0
        return (hashes, max(maxID, sequence))
    }
}
