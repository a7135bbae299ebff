import Foundation
import GRDB
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskStore
import KioskProcess

@Suite("Database file")
struct DatabaseFileTests {
    @Test("a one-page list stored before v3 counts what it holds after the upgrade, the upstream's count kept apart")
    func migrationV3() throws {
        // Given a v2 file holding a NYT list of two articles that says 1,491 items (num_results), as before v3
        let folder = try TemporaryDirectory.make("KioskStoreTests")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("kiosk.sqlite").path
        let request = PageRequest(source: .nyt)
        do {
            let database = try AppDatabase.open(at: path)
            try database.saveSnapshot(Fixtures.snapshot(request, [Fixtures.article("1", title: "A"), Fixtures.article("2", title: "B")]))
            try database.writer.write { db in
                try db.execute(sql: "UPDATE snapshot SET totalItems = 1491, totalPages = 1")
                try db.execute(sql: "ALTER TABLE snapshot DROP COLUMN reportedTotal")
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v3'")
            }
        }
        // When it is opened by this version
        let upgraded = try AppDatabase.open(at: path)
        // Then the page counts its two items and keeps 1,491 as the upstream's count
        let page = try #require(try upgraded.snapshot(forKey: request.cacheKey)).page
        #expect(page.items.count == 2)
        #expect(page.totalItems == 2)
        #expect(page.reportedTotal == 1491)
    }

    @Test("A database or proxy cache a newer Kiosk migrated further is refused, naming the file, and left as it was",
          arguments: ["kiosk.sqlite", "kiosk-proxy-cache.sqlite"])
    func refusesNewerSchema(file: String) throws {
        // Given a file a later version migrated further than this one knows
        let folder = try TemporaryDirectory.make("kiosk-newer-schema")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent(file).path
        func open() throws {
            if file == "kiosk.sqlite" { _ = try AppDatabase.open(at: path) } else { _ = try ProxyCache.open(at: path, maxBytes: nil) }
        }
        try open()
        let pool = try DatabasePool(path: path)
        try pool.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')") }
        let tables = try pool.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master ORDER BY name") }

        // When this version opens it
        // Then it is refused, saying whose file it is and what to do, and its schema is untouched
        #expect {
            try open()
        } throws: { error in
            let message = (error as? KioskError)?.description ?? ""
            return message.contains(path) && message.contains("newer version of Kiosk") && message.contains("move it aside")
        }
        #expect(try pool.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master ORDER BY name") } == tables)
        #expect(try pool.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") }.contains("v99: from the future"))
    }

    @Test("A full disk says to free space, and to clear the cache unless clearing is what failed")
    func fullDiskAdvice() {
        // Given SQLite's full-disk error while saving a page and while clearing the proxy cache
        let full = DatabaseError(resultCode: .SQLITE_FULL)
        let saving = AppDatabase.storageError(full, while: "save the page", path: "/tmp/kiosk.sqlite")
        let clearing = AppDatabase.storageError(full, while: "clear the proxy cache", path: "/tmp/kiosk.sqlite")
        // Then both say the disk is full; only the first sends the user to clear the cache
        #expect(saving.description.contains("Free some disk space or clear the cache."), "\(saving)")
        #expect(clearing.description.contains("Free some disk space on its disk.") && !clearing.description.contains("clear the cache."),
                "\(clearing)")
    }

    @Test("The database is its owner's only, as is a folder made for it (not the umask's 0755 and 0644)")
    func ownerOnly() throws {
        // When a database is opened in a folder that does not exist yet
        let folder = TemporaryDirectory.url("kiosk-owner-only").appendingPathComponent("data")
        _ = try AppDatabase.open(at: folder.appendingPathComponent("kiosk.sqlite").path)
        // Then the folder is 0700 and the file 0600
        func mode(_ path: String) throws -> Int { (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? 0) & 0o777 }
        #expect(try mode(folder.path) == 0o700)
        #expect(try mode(folder.appendingPathComponent("kiosk.sqlite").path) == 0o600)
    }

    @Test("A WAL file another process holds open is told from one no other process has open")
    func openElsewhere() throws {
        // Given a request log written and closed by this process
        let path = try TemporaryDirectory.make("kiosk-open-elsewhere").appendingPathComponent("log.sqlite").path
        let log = try RequestLog.open(at: path)
        try log.append(RequestRecord(startedAt: Date(), source: nil, endpoint: "app", method: "GET", url: "http://app.test/",
                                     timings: RequestTimings(total: 0), decision: .network))
        try log.close()
        #expect(!AppDatabase.isOpenElsewhere(path: path))

        // When another process opens it and reads it, as a running kiosk serve does
        let holder = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3", "-c", """
            import sqlite3, sys, time
            c = sqlite3.connect(sys.argv[1]); c.execute("select count(*) from sqlite_master").fetchall()
            print("open", flush=True); time.sleep(30)
            """, path], stdout: .pipe, stderr: .inherit)
        defer { holder.signal(SIGKILL); holder.waitUntilExit() }
        _ = holder.standardOutput?.availableData

        // Then it is seen open elsewhere; and once that process is gone, not
        #expect(AppDatabase.isOpenElsewhere(path: path))
        holder.signal(SIGKILL)
        holder.waitUntilExit()
        #expect(!AppDatabase.isOpenElsewhere(path: path))
    }

    @Test("a file database is created with its folders, migrated once, and keeps everything when reopened")
    func reopenKeepsDataAndMigrations() throws {
        // Given a database file in folders that do not exist yet
        let folder = try TemporaryDirectory.make("KioskStoreTests")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("nested/deeper/kiosk.sqlite").path

        do {
            let database = try AppDatabase.open(at: path)
            #expect(database.path == path)
            try database.saveSnapshot(Fixtures.snapshot(PageRequest(source: .nyt), [Fixtures.article("1", title: "Kept")]))
            _ = try database.mergeUserOrder(Fixtures.dogs("Rex", "Fido", "Luna"), source: .dogs)
            try database.moveInUserOrder(.dogs, itemID: "Luna", to: 0)
            try database.deleteFromUserOrder(.dogs, itemID: "Fido", at: Date())
            try database.setFavorite(true, source: .nyt, itemID: "1")
        }

        // When it is opened again
        let reopened = try AppDatabase.open(at: path)

        // Then the schema is at the latest migration, in WAL mode, and the data and user edits are there
        let (applied, journalMode) = try reopened.writer.read { db in
            (try AppDatabase.migrator.appliedIdentifiers(db), try String.fetchOne(db, sql: "PRAGMA journal_mode"))
        }
        #expect(applied == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9"])
        #expect(journalMode == "wal")
        // Incremental auto-vacuum must have been set before WAL mode (clearCache relies on it).
        #expect(try reopened.writer.read { try Int.fetchOne($0, sql: "PRAGMA auto_vacuum") } == 2)
        #expect(try reopened.snapshot(forKey: PageRequest(source: .nyt).cacheKey)?.page.items.map(\.title) == ["Kept"])
        #expect(try reopened.userOrdered(.dogs).map(\.itemID) == ["Luna", "Rex"])
        #expect(try reopened.favorites().map(\.itemID) == ["1"])
    }

    @Test("opening a path whose folder cannot be created is a storage error naming the folder")
    func unwritablePath() throws {
        // Given a path that goes through a regular file, so its folder can never be created
        let folder = try TemporaryDirectory.make("KioskStoreTests")
        defer { try? FileManager.default.removeItem(at: folder) }
        let blocker = folder.appendingPathComponent("not-a-folder")
        try Data("x".utf8).write(to: blocker)
        let path = blocker.appendingPathComponent("kiosk.sqlite").path

        // When it is opened
        let error = #expect(throws: KioskError.self) { try AppDatabase.open(at: path) }

        // Then the error is a storage error that says which folder failed
        let message = try #require(error?.storageMessage)
        #expect(message.contains("cannot create the folder"))
        #expect(message.contains(blocker.path))
    }

    @Test("opening a file that is not a database is a storage error saying it is corrupt")
    func corruptFile() throws {
        // Given a file full of garbage where the database should be
        let folder = try TemporaryDirectory.make("KioskStoreTests")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("kiosk.sqlite").path
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: path))

        // When it is opened
        let error = #expect(throws: KioskError.self) { try AppDatabase.open(at: path) }

        // Then the message says the file is corrupt and names it
        let message = try #require(error?.storageMessage)
        #expect(message.contains("corrupt or is not a Kiosk database"))
        #expect(message.contains(path))
    }

    @Test("a full disk is reported as such and the failed write leaves the stored page untouched")
    func diskFull() throws {
        // Given a stored page, and a database that cannot grow (as on a full disk)
        let database = try AppDatabase.inMemory()
        let request = PageRequest(source: .nyt)
        let good = Fixtures.snapshot(request, [Fixtures.article("1", title: "Good")])
        try database.saveSnapshot(good)
        try database.writer.write { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count")!
            try db.execute(sql: "PRAGMA max_page_count = \(pages)")
        }

        // When a bigger page is saved
        let huge = Fixtures.article("2", title: "Huge", summary: String(repeating: "lorem ipsum ", count: 50_000))
        let error = #expect(throws: KioskError.self) {
            try database.saveSnapshot(Fixtures.snapshot(request, [Fixtures.article("1", title: "Changed"), huge]))
        }

        // Then the error says the disk is full and the transaction left the old page as it was
        #expect(error?.storageMessage?.contains("the disk is full") == true)
        #expect(try database.snapshot(forKey: request.cacheKey) == good)
        #expect(try database.itemCount() == 1)
    }

    @Test("on a full disk the cache can still be cleared, which makes room to save again")
    func clearCacheOnFullDisk() throws {
        // Given a database that cannot grow any more
        let database = try AppDatabase.inMemory()
        try database.saveItems((0..<500).map {
            Fixtures.article("\($0)", title: "Article \($0)", summary: String(repeating: "words ", count: 100))
        })
        try database.writer.write { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count")!
            try db.execute(sql: "PRAGMA max_page_count = \(pages)")
        }
        let big = (0..<500).map { Fixtures.article("new\($0)", title: "New \($0)", summary: String(repeating: "more ", count: 100)) }
        #expect(throws: KioskError.self) { try database.saveItems(big) }

        // When the cache is cleared
        try database.clearCache()

        // Then the items are gone and there is room again
        #expect(try database.itemCount() == 0)
        try database.saveItems(big)
        #expect(try database.itemCount() == 500)
    }

    @Test("concurrent readers and writers on a file database all succeed")
    func concurrentAccess() async throws {
        // Given a file database shared by many tasks
        let folder = try TemporaryDirectory.make("KioskStoreTests")
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try AppDatabase.open(at: folder.appendingPathComponent("kiosk.sqlite").path)

        // When 20 tasks each save a page and read pages at the same time
        try await withThrowingTaskGroup(of: Void.self) { group in
            for page in 1...20 {
                group.addTask {
                    let request = PageRequest(source: .rickandmorty, page: page)
                    try database.saveSnapshot(Fixtures.snapshot(request, (0..<20).map {
                        Fixtures.character("\(page)-\($0)", name: "Morty \(page)-\($0)")
                    }))
                    _ = try database.snapshot(forKey: PageRequest(source: .rickandmorty, page: 1).cacheKey)
                    _ = try database.search("morty", source: .rickandmorty)
                }
            }
            try await group.waitForAll()
        }

        // Then every page and item is stored
        #expect(try database.storedPageCount(source: .rickandmorty) == 20)
        #expect(try database.itemCount(source: .rickandmorty) == 400)
    }

    @Test("a side file's statements keep their journals in memory: a statement rewriting a megabyte within a transaction opens no temporary file")
    func statementJournalsStayInMemory() throws {
        // Given a side file (the request log, the proxy cache) holding a table whose updates fire a trigger, as the
        // proxy cache's sizes do, and a megabyte of rows
        let folder = TemporaryDirectory.url("kiosk-journal")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let pool = try DatabasePool(path: folder.appendingPathComponent("side.sqlite").path,
                                    configuration: AppDatabase.sideFileConfiguration(label: "JournalTest"))
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE entry (id INTEGER PRIMARY KEY, body BLOB NOT NULL, size INTEGER NOT NULL);
                CREATE TABLE total (bytes INTEGER NOT NULL);
                INSERT INTO total VALUES (0);
                CREATE TRIGGER entryChanged AFTER UPDATE OF size ON entry BEGIN
                    UPDATE total SET bytes = bytes - old.size + new.size;
                END;
                """)
            for _ in 0..<256 { try db.execute(sql: "INSERT INTO entry (body, size) VALUES (zeroblob(4000), 4000)") }
        }

        // When one transaction runs a statement that rewrites every row (its journal must hold each page's old
        // content, far past SQLite's 64 KB before it spills to a file), then another, and looks at the temporary
        // files the process opened meanwhile. The descriptor table is the whole test process's, and other tests
        // running beside this one may open temporary files of their own (a VACUUM, a big sort) for a moment, so
        // the experiment runs up to three times: a spilled journal stays open until the transaction ends and
        // shows every time, another test's file does not coincide with all three.
        func temporaryFileNames() -> Set<String> {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return Set(descriptors.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
                .filter { $0.contains("etilqs_") })
        }
        var temporaryFiles: Set<String> = []
        var lastSize = 4000
        for attempt in 1...3 {
            lastSize = 4000 + 2 * attempt
            temporaryFiles = try pool.write { db -> Set<String> in
                let before = temporaryFileNames()
                try db.execute(sql: "UPDATE entry SET body = randomblob(4000), size = \(lastSize - 1)")
                try db.execute(sql: "UPDATE entry SET body = randomblob(4000), size = \(lastSize)")
                return temporaryFileNames().subtracting(before)
            }
            if temporaryFiles.isEmpty { break }
        }

        // Then SQLite opened no temporary file (unlinked at once, it shows as "/…/etilqs_… (deleted)"): once spilled,
        // every later statement of the transaction wrote its pages there (a sixth of a busy proxy's writing time)
        #expect(temporaryFiles == [])
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT bytes FROM total") } == 256 * (lastSize - 4000))
    }
}

@Suite("Database files opened at once")
struct DatabaseFilesOpenedAtOnceTests {
    @Test("Eight openings of one new store, log and proxy cache at once, over and over, all open: none is refused as locked by another")
    func openingsAtOnce() async throws {
        let folder = try TemporaryDirectory.make("KioskStoreOpenings")
        defer { try? FileManager.default.removeItem(at: folder) }
        for round in 0..<25 {
            // Given three files that do not exist yet
            let store = folder.appendingPathComponent("store-\(round).sqlite").path
            let log = folder.appendingPathComponent("log-\(round).sqlite").path
            let cache = folder.appendingPathComponent("cache-\(round).sqlite").path
            // When eight threads each open all three at once (as processes started together do: a CLI beside a server)
            let failures = await withTaskGroup(of: String?.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        await withCheckedContinuation { (done: CheckedContinuation<String?, Never>) in
                            Thread.detachNewThread {
                                do {
                                    _ = try AppDatabase.open(at: store)
                                    _ = try RequestLog.open(at: log)
                                    _ = try ProxyCache.open(at: cache, maxBytes: nil)
                                    done.resume(returning: nil)
                                } catch {
                                    done.resume(returning: "\(error)")
                                }
                            }
                        }
                    }
                }
                return await group.compactMap { $0 }.reduce(into: [String]()) { $0.append($1) }
            }
            // Then every opening succeeded
            #expect(failures.isEmpty, "round \(round): \(failures)")
            if !failures.isEmpty { break }
        }
    }
}
