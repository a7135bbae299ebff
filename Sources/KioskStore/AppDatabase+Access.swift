import Foundation
import GRDB
import Glibc
public import KioskCore

// How every public method reaches SQLite, and how SQLite's failures become `KioskError`s that say
// what the user can do about them.

extension AppDatabase {
    /// The connection settings shared by file and in-memory databases.
    static func makeConfiguration() -> Configuration {
        var config = Configuration()
        config.label = "Kiosk"
        // The CLI and `kiosk serve` may use the same file at once: wait for the other process's
        // write to finish instead of failing at once with SQLITE_BUSY.
        config.busyMode = .timeout(5)
        // Foreign keys guard "order is data": a page can never point at an item that is gone.
        config.foreignKeysEnabled = true
        config.prepareDatabase { db in
            // Takes effect only on a new, empty file (a no-op afterwards), and must run before
            // GRDB switches the file to WAL mode, hence here rather than in a migration. It lets
            // clearCache give space back with `incremental_vacuum`, which, unlike VACUUM, needs no
            // free disk space for a copy of the database, so it also works on a full disk.
            // Only on that new file: on an existing one the pragma is a no-op that still needs to write,
            // and on a full disk it would keep the store from opening at all.
            if !db.configuration.readonly, try Int.fetchOne(db, sql: "PRAGMA page_count") == 0 {
                try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            }
            // Every connection (the writer and each pool reader) needs the search ranking function.
            try SearchRanking.register(db)
        }
        return config
    }

    /// The configuration of a file kept beside the store (the request log, the proxy cache): WAL through a pool,
    /// waiting 5 s for another process's write (the CLI beside a server), incremental auto-vacuum set on a new file
    /// (so that a clear gives space back without VACUUM's copy, and only on a new file: on an existing one the pragma
    /// still writes, and on a full disk would keep the file from opening), checkpoints every 16 MB of WAL, cut back to 16 MB after a
    /// checkpoint that followed a large deletion, statement journals in memory, and commits not each synced to the disk (see below).
    static func sideFileConfiguration(label: String) -> Configuration {
        var config = Configuration()
        config.label = label
        config.busyMode = .timeout(5)
        config.prepareDatabase { db in
            if !db.configuration.readonly, try Int.fetchOne(db, sql: "PRAGMA page_count") == 0 {
                try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            }
            try db.execute(sql: "PRAGMA journal_size_limit = 16777216")
            // The writer adds a row and its index entries with every exchange: with SQLite's default 2 MB of page cache
            // a busy proxy's writes read back the index pages they just wrote (a fifth of the log's writing time).
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA cache_size = -16384") }
            // Statement journals in memory: SQLite keeps one per statement that fires a trigger or may stop halfway (the
            // proxy cache's upsert, the log's indexing pass), in memory up to 64 KB and then in a temporary file for the rest
            // of the transaction, where every later statement of a busy proxy's burst wrote its pages again (15,000 pwrite
            // calls a second, a sixth of the writer's time). A statement's journal holds only the pages it changes.
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
            // Checkpoints every 16 MB of WAL rather than SQLite's 4 MB: a busy proxy's log rewrites the same index pages
            // batch after batch, and each checkpoint copies them and syncs the disk once, whatever it holds.
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 4000")
            // In WAL mode NORMAL syncs at checkpoints, not at every commit: a committed write survives a killed process
            // (it is in the WAL, which the next open reads), and only a power cut may lose the last commits — fine for a
            // debugging log and a cache, whose writes come with every exchange and would otherwise each wait for the disk.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        return config
    }

    /// Opens a WAL pool on the file at `path` (`what` names it in an error, say "the proxy cache"), trying again when
    /// another opening of the same file at once holds it; throws `KioskError.storage` saying why when it cannot.
    /// Two processes (or connections) opening one new file at once both switch it to WAL, each holding a read lock and
    /// asking for the exclusive one: SQLite answers one of them SQLITE_BUSY at once, without waiting (its busy handler is
    /// skipped where waiting could deadlock), and what it asks is to begin again. Only that answer, which comes at once,
    /// is tried again (a few times); a file another process holds past the 5 s busy timeout is said to be locked then.
    static func openPool(at path: String, configuration: Configuration, what: String) throws -> DatabasePool {
        var attempt = 0
        while true {
            let began = ContinuousClock.now
            do {
                return try DatabasePool(path: path, configuration: configuration)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && attempt < 5
                        && ContinuousClock.now - began < .milliseconds(500) {
                attempt += 1
                usleep(UInt32(10_000 * attempt))
            } catch {
                throw storageError(error, while: "open \(what)", path: path)
            }
        }
    }

    /// The configuration of a connection that only reads (a watcher of another process's commits, a count): it waits
    /// 5 s for another process's write, as the writer does — by default GRDB fails at once, and its opening already reads
    /// the file (to tell a database from another file), which a process making the file at that moment holds.
    static func readOnlyConfiguration() -> Configuration {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(5)
        return config
    }

    /// How a storage error says a file is not a database Kiosk can read (`isUnreadable`).
    static let corruptWords = "is corrupt or is not a Kiosk database"
    /// How a storage error says a newer Kiosk wrote the file.
    static let newerVersionWords = "was written by a newer version of Kiosk"

    /// Whether `error` says its file cannot be read at all — corrupt, not a database, or a newer Kiosk's — rather than
    /// that reading it failed this time (a full disk, a lock, a permission).
    public static func isUnreadable(_ error: KioskError) -> Bool {
        guard case .storage(let message) = error else { return false }
        return message.contains(corruptWords) || message.contains(newerVersionWords)
    }

    /// Runs `migrator`'s migrations not applied yet to `writer`'s file, `what` (say "the request log") at `path`; throws
    /// `KioskError.storage` saying why when it cannot. A file a newer Kiosk has migrated further is refused, untouched:
    /// this build does not know how that version keeps its rows, and writing them its own way could corrupt them (an
    /// index it does not maintain, a column it leaves empty). Two processes opening one new file at once (the
    /// CLI beside a server, two proxies) both find a migration unapplied and both run it: the second fails on what the
    /// first made ("table already exists"). Then what counts is that every migration is applied, by whichever process:
    /// it tries again, a few times, and fails only when migrations are still missing.
    static func migrate(_ migrator: DatabaseMigrator, _ writer: any DatabaseWriter, what: String, path: String?) throws {
        let isNewer: Bool
        do {
            isNewer = try writer.read(migrator.hasBeenSuperseded)
        } catch {
            throw storageError(error, while: "read \(what)'s schema", path: path)
        }
        guard !isNewer else {
            throw KioskError.storage("\(what) \(path ?? "in memory") \(AppDatabase.newerVersionWords): "
                + "move it aside (or use that version) to use it with this one.")
        }
        do {
            try migrateConcurrently(migrator, writer)
        } catch {
            throw storageError(error, while: "prepare \(what)'s schema", path: path)
        }
    }

    private static func migrateConcurrently(_ migrator: DatabaseMigrator, _ writer: any DatabaseWriter) throws {
        var attempt = 0
        while true {
            do {
                try migrator.migrate(writer)
                return
            } catch {
                attempt += 1
                if (try? writer.read { try migrator.hasCompletedMigrations($0) }) == true { return }
                guard attempt < 5 else { throw error }
                usleep(UInt32(20_000 * attempt))
            }
        }
    }

    /// Whether `error` says the store cannot be written now (a full disk, a read-only file or folder) — what is fetched
    /// can still be shown, unstored — rather than that something is wrong with what was asked.
    public static func cannotWrite(_ error: KioskError) -> Bool {
        guard case .storage(let message) = error else { return false }
        return error.isDiskFull || message.contains(" is read-only: could not ") || message.hasPrefix("permission denied for ")
    }

    /// Turns any failure into a `KioskError` whose message names the file and the remedy.
    static func storageError(_ error: any Error, while action: String, path: String?) -> KioskError {
        if let error = error as? KioskError { return error }
        if error is CancellationError { return .cancelled }
        let file = path.map { "the database file \($0)" } ?? "the in-memory database"
        guard let error = error as? DatabaseError else {
            return .storage("could not \(action): \(reason(error))")
        }
        let detail = error.message.map { " (\($0))" } ?? ""
        switch error.resultCode {
        case .SQLITE_FULL:
            // A clear that failed for want of space (its journal needs some) cannot be the remedy for itself.
            return .storage("\(KioskError.diskFullPrefix): could not \(action). Free some disk space"
                            + (action.hasPrefix("clear") ? " on its disk." : " or clear the cache."))
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return .storage("\(file) \(AppDatabase.corruptWords): could not \(action)\(detail). "
                + "Move the file aside to start with an empty store.")
        case .SQLITE_READONLY:
            // A file system mounted read-only (a snapshot, a CD, a container's image) is no matter of the file's mode.
            if let path, isOnReadOnlyFileSystem(path) {
                return .storage("\(file) is on a read-only file system: could not \(action). Use a writable data folder.")
            }
            return .storage("\(file) is read-only: could not \(action). Check the file's permissions.")
        case .SQLITE_CANTOPEN:
            return .storage("cannot open \(file): could not \(action)\(detail). "
                + "Check that its folder exists and is writable.")
        case .SQLITE_PERM, .SQLITE_AUTH:
            return .storage("permission denied for \(file): could not \(action).")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return .storage("\(file) is locked by another process: could not \(action). Try again.")
        case .SQLITE_IOERR:
            return .storage("disk input/output error on \(file): could not \(action)\(detail).")
        case .SQLITE_INTERRUPT:
            return .cancelled
        default:
            return .storage("could not \(action)\(detail).")
        }
    }

    /// Whether the file system holding `path` (or its folder, for a file not made yet) is mounted read-only.
    static func isOnReadOnlyFileSystem(_ path: String) -> Bool {
        var info = statvfs()
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard statvfs(path, &info) == 0 || statvfs(folder, &info) == 0 else { return false }
        return info.f_flag & UInt(ST_RDONLY) != 0
    }

    /// Makes the folder of the side file at `path` (`what` names it in an error), and the file itself readable by its
    /// owner only (0600) — a new one and one an older version made — with its WAL and shared-memory index when they
    /// exist: they hold apps' exchanges and answers. SQLite gives a new WAL the database file's own mode. A new file
    /// is created with O_EXCL and its mode is set by path: closing a descriptor of a file this process has open
    /// elsewhere (another opening's SQLite connections) would drop every POSIX lock it holds on it.
    static func prepareOwnerOnlyFile(at path: String, what: String) throws {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try SecretFile.makeFolder(folder)
        } catch let error as KioskError {
            throw error
        } catch {
            throw KioskError.storage("cannot create the folder \(folder.path) for \(what) \(path): " + KioskError.fileReason(error, path: folder.path))
        }
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 { close(descriptor) }
        // A hot journal (`-journal`) SQLite would roll back into the file on opening it: as much a way in as the WAL.
        if let problem = SecretFile.foreignOwner(path + "-journal") { throw KioskError.storage("cannot use \(what): \(problem)") }
        for file in [path, path + "-wal", path + "-shm"] {
            if let problem = SecretFile.foreignOwner(file) { throw KioskError.storage("cannot use \(what): \(problem)") }
            chmod(file, 0o600)
        }
    }

    /// A short human reason for a non-SQLite error.
    static func reason(_ error: any Error) -> String {
        switch error {
        case is DecodingError: "stored data could not be decoded"
        case is EncodingError: "data could not be encoded"
        default: KioskError.fileReason(error)
        }
    }
}

/// A SQLite file of this module (the store, the request log): reads and writes that report failures as
/// `KioskError`s naming the file and the remedy.
protocol StoreFile {
    /// The connection (pool) to the file.
    var writer: any DatabaseWriter { get }
    /// The file, nil for an in-memory database.
    var path: String? { get }
}

extension StoreFile {
    /// Runs `body` in a read transaction, mapping failures to `KioskError`.
    func read<T>(_ action: @autoclosure () -> String, _ body: (Database) throws -> T) throws -> T {
        do {
            return try writer.read(body)
        } catch {
            throw AppDatabase.storageError(error, while: action(), path: path)
        }
    }

    /// Runs `body` in a write transaction (all or nothing), mapping failures to `KioskError`.
    func write<T>(_ action: @autoclosure () -> String, _ body: (Database) throws -> T) throws -> T {
        do {
            return try writer.write(body)
        } catch {
            throw AppDatabase.storageError(error, while: action(), path: path)
        }
    }
}

extension DatabaseWriter {
    /// Copies what the write-ahead log holds into the database's own file, as far as no other process's reader keeps it
    /// (best effort, never waiting): else the file alone, copied or moved aside as a backup, holds little or nothing of
    /// a small store, which never reaches SQLite's automatic checkpoint (16 MB of log).
    func foldWriteAheadLog() {
        _ = try? writeWithoutTransaction { db in try db.checkpoint(.passive) }
    }
}

extension AppDatabase {
    /// What the write-ahead log holds copied into `path`'s file (before the process ends): see `foldWriteAheadLog`.
    public func foldWriteAheadLog() {
        if path != nil { writer.foldWriteAheadLog() }
    }
}
