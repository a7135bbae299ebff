import Foundation
#if canImport(Glibc)
import Glibc
#endif
import GRDB
import KioskProcess
import KioskStore
import KioskTestSupport
import Testing

/// `kiosk proxy`'s cache file under processes that die or share it, through `kiosk proxy cache import` (a hundred
/// answers a transaction, as the proxy stores a burst of them).
@Suite("The proxy cache file across processes", .serialized)
struct ProxyCacheProcessTests {
    /// A HAR archive of `count` GET answers of 8 KB under `prefix`.
    private static func archive(_ folder: URL, _ name: String, prefix: String, count: Int) throws -> URL {
        let body = String(repeating: "x", count: 8_000)
        let entries = (0..<count).map { index in
            #"{"startedDateTime": "2026-01-01T00:00:00Z", "request": {"method": "GET", "url": "http://app.test/\#(prefix)/\#(index)"}, "#
                + #""response": {"status": 200, "headers": [], "content": {"mimeType": "text/plain", "text": "\#(body)"}}}"#
        }
        let file = folder.appendingPathComponent(name)
        try Data((#"{"log": {"version": "1.2", "entries": ["# + entries.joined(separator: ",") + #"]}}"#).utf8).write(to: file)
        return file
    }

    /// The entries of the cache file, after checking it is whole and that its size row adds them up.
    private static func checkedEntries(_ path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        return try queue.read { db in
            #expect(try String.fetchOne(db, sql: "PRAGMA integrity_check") == "ok")
            let sum = try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(size), 0) FROM cacheEntry") ?? -1
            #expect(try Int.fetchOne(db, sql: "SELECT bytes FROM cacheStats") == sum)
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM cacheEntry") ?? -1
        }
    }

    @Test("An import keeps to the bound the proxy set on the file, and says how many of its answers no longer fit")
    func importKeepsTheFilesBound() async throws {
        let folder = TemporaryDirectory.url("kiosk-proxy-cache-bound")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let data = folder.appendingPathComponent("data")
        let cacheFile = data.appendingPathComponent("kiosk-demo-proxy-cache.sqlite").path
        // Given a cache file a proxy bounded to 100 KB (`--cache-size`), and an archive of 30 answers of 8 KB
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        _ = try ProxyCache.open(at: cacheFile, maxBytes: 100_000)
        let archive = try Self.archive(folder, "bound.har", prefix: "b", count: 30)
        // When it is imported beside the proxy
        let result = try await ChildProcess.run(CLI.executable, arguments: ["proxy", "cache", "import", archive.path, "--data-dir", data.path])
        // Then the file holds no more than its bound, and the summary says the rest no longer fit
        #expect(result.status == 0, "\(result.stderr)")
        let kept = try Self.checkedEntries(cacheFile)
        #expect(kept > 0 && kept * 8_000 <= 100_000, "\(kept)")
        #expect(result.stdout.contains("Stored 30 answers of 30 entries. \(30 - kept) of them no longer fit: the cache keeps 100 KB"),
                "\(result.stdout)")
        // And the cache's stats say the bound beside what is stored
        let stats = try await ChildProcess.run(CLI.executable, arguments: ["proxy", "cache", "stats", "--data-dir", data.path])
        #expect(stats.status == 0 && stats.stdout.contains("\(kept) answers,") && stats.stdout.contains("in all of at most 100 KB (--cache-size)"),
                "\(stats.stdout)")
    }

    @Test("Two answers to one URL that vary (by language, a preflight's origin) are listed each with what it was asked with; one alone is listed plain")
    func variantsListedApart() async throws {
        let folder = TemporaryDirectory.url("kiosk-proxy-cache-variants")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let data = folder.appendingPathComponent("data").path
        // Given an archive with /greeting asked in English and in Spanish (its answers vary on Accept-Language), one asked
        // without the field, and /plain, which varies on nothing
        func entry(_ path: String, language: String?, text: String, vary: Bool = true) -> String {
            let asked = language.map { #"[{"name": "Accept-Language", "value": "\#($0)"}]"# } ?? "[]"
            let fields = vary ? #"[{"name": "Vary", "value": "Accept-Language"}, {"name": "Cache-Control", "value": "max-age=60"}]"# : "[]"
            return #"{"startedDateTime": "2026-01-01T00:00:00Z", "request": {"method": "GET", "url": "http://app.test\#(path)", "headers": \#(asked)}, "#
                + #""response": {"status": 200, "headers": \#(fields), "content": {"mimeType": "text/plain", "text": "\#(text)"}}}"#
        }
        let archive = folder.appendingPathComponent("variants.har")
        let entries = [entry("/greeting", language: "en", text: "hello"), entry("/greeting", language: "es", text: "hola"),
                       entry("/greeting", language: nil, text: "hi"), entry("/plain", language: "en", text: "plain", vary: false)]
        try Data((#"{"log": {"version": "1.2", "entries": ["# + entries.joined(separator: ",") + #"]}}"#).utf8).write(to: archive)
        #expect(try await ChildProcess.run(CLI.executable, arguments: ["proxy", "cache", "import", archive.path, "--data-dir", data]).status == 0)
        // When they are listed
        let list = try await ChildProcess.run(CLI.executable, arguments: ["proxy", "cache", "list", "--data-dir", data])
        let json = try await ChildProcess.run(CLI.executable, arguments: ["proxy", "cache", "list", "--json", "--data-dir", data])
        // Then each answer to /greeting says what it was asked with, and /plain is listed as it was
        let rows = list.stdout.split(separator: "\n").map(String.init)
        #expect(rows.contains { $0.hasSuffix("GET http://app.test/greeting (accept-language: en)") }, "\(list.stdout)")
        #expect(rows.contains { $0.hasSuffix("GET http://app.test/greeting (accept-language: es)") }, "\(list.stdout)")
        #expect(rows.contains { $0.hasSuffix("GET http://app.test/greeting (no accept-language)") }, "\(list.stdout)")
        #expect(rows.contains { $0.hasSuffix("GET http://app.test/plain") }, "\(list.stdout)")
        // And the JSON gives every answer's varied fields, a field the request lacked without a value
        struct Listed: Decodable {
            struct Field: Decodable, Equatable { let name: String; let value: String? }
            let url: String
            let varied: [Field]
        }
        let listed = try JSONDecoder().decode([Listed].self, from: Data(json.stdout.utf8))
        #expect(Set(listed.filter { $0.url.hasSuffix("/greeting") }.map { $0.varied.first?.value ?? "none" }) == ["en", "es", "none"])
        #expect(listed.first { $0.url.hasSuffix("/plain") }?.varied == [])
        #expect(json.stdout.contains(#""name" : "accept-language","#) && json.stdout.contains(#""value" : null"#), "\(json.stdout)")
    }

    @Test("The cache's list and stats are tables with a header, and its export says how many answers it wrote")
    func listStatsAndExportSaid() async throws {
        let folder = TemporaryDirectory.url("kiosk-proxy-cache-said")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let data = folder.appendingPathComponent("data").path
        // Given three answers imported
        let archive = try Self.archive(folder, "three.har", prefix: "t", count: 3)
        #expect(try await ChildProcess.run(CLI.executable, arguments: ["proxy", "cache", "import", archive.path, "--data-dir", data]).status == 0)
        // When they are listed, counted and exported
        let list = try await ChildProcess.run(CLI.executable, arguments: ["proxy", "cache", "list", "--data-dir", data])
        let stats = try await ChildProcess.run(CLI.executable, arguments: ["proxy", "cache", "stats", "--data-dir", data])
        let export = try await ChildProcess.run(CLI.executable, arguments: ["proxy", "cache", "export", folder.appendingPathComponent("out.har").path, "--data-dir", data])
        // Then each list starts with its columns' names, a row an answer (or a host) below
        let rows = list.stdout.split(separator: "\n")
        #expect(rows.first?.hasPrefix("ID") == true && rows.first?.contains("REQUEST") == true && rows.count == 4, "\(list.stdout)")
        #expect(rows.dropFirst().allSatisfy { $0.contains("GET http://app.test/t/") })
        #expect(stats.stdout.hasPrefix("HOST") && stats.stdout.contains("\napp.test "), "\(stats.stdout)")
        // And the export says what it wrote
        #expect(export.status == 0 && export.stderr.contains("Wrote 3 stored answers to "), "\(export.stderr)")
    }

    @Test("kill -9 in the middle of storing leaves a whole file whose answers add up, and the next run stores them all")
    func killedMidWrite() async throws {
        let folder = TemporaryDirectory.url("kiosk-proxy-cache-kill")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let archive = try Self.archive(folder, "many.har", prefix: "k", count: 3000)
        let data = folder.appendingPathComponent("data")
        let cacheFile = data.appendingPathComponent("kiosk-demo-proxy-cache.sqlite").path
        // Given an import storing 3000 answers, a hundred a transaction
        let child = try ChildProcess(CLI.executable, arguments: ["proxy", "cache", "import", archive.path, "--data-dir", data.path],
                                     stdout: .null, stderr: .null)
        // When it is killed once some are stored
        // (Watched from a thread of its own: the other suites running at once can keep the test's task from being resumed
        // in time, and the import could finish before it looked.)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                let deadline = Date().addingTimeInterval(60)
                while child.isRunning, Date() < deadline,
                      ((try? FileManager.default.attributesOfItem(atPath: cacheFile + "-wal")[.size] as? Int) ?? 0) < 2_000_000 {
                    usleep(2_000)
                }
                child.signal(SIGKILL)
                done.resume()
            }
        }
        #expect(await child.exited() == 128 + SIGKILL)
        // Then the file is whole and its size row adds up what it holds
        let kept = try Self.checkedEntries(cacheFile)
        #expect(kept > 0 && kept < 3000, "\(kept) answers kept")
        // And the next run stores every answer
        let again = try await ChildProcess.run(CLI.executable, arguments: ["proxy", "cache", "import", archive.path, "--data-dir", data.path])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Self.checkedEntries(cacheFile) == 3000)
    }

    @Test("Two processes storing into one data directory at once both finish, and the file holds both's answers")
    func twoProcesses() async throws {
        let folder = TemporaryDirectory.url("kiosk-proxy-cache-two")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let data = folder.appendingPathComponent("data")
        let archives = try ["a", "b"].map { try Self.archive(folder, "\($0).har", prefix: $0, count: 800) }
        let children = try archives.map { archive in
            try ChildProcess(CLI.executable, arguments: ["proxy", "cache", "import", archive.path, "--data-dir", data.path],
                             stdout: .null, stderr: .pipe)
        }
        for child in children {
            let ended = await child.collected()
            #expect(ended.status == 0, "\(ended.stderr)")
        }
        #expect(try Self.checkedEntries(data.appendingPathComponent("kiosk-demo-proxy-cache.sqlite").path) == 1600)
    }

    @Test("A cache that watched its file for other writers, let go, leaves this process's locks on the file: another process still waits for the write lock held here")
    func locksKeptAcrossOpenings() async throws {
        // Given a cache file opened here, and this process holding its write lock (a write under way)
        let folder = TemporaryDirectory.url("kiosk-proxy-cache-locks")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let data = folder.appendingPathComponent("data")
        let archive = try Self.archive(folder, "one.har", prefix: "l", count: 1)
        let seeded = try await ChildProcess.run(CLI.executable, arguments: ["proxy", "cache", "import", archive.path, "--data-dir", data.path])
        #expect(seeded.status == 0, "\(seeded.stderr)")
        let cacheFile = data.appendingPathComponent("kiosk-demo-proxy-cache.sqlite").path
        var cache: ProxyCache? = try ProxyCache.open(at: cacheFile, maxBytes: 1_000_000)
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        let holder = try DatabaseQueue(path: cacheFile, configuration: configuration)
        try holder.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE") }

        // When the cache is looked up in (which watches the file for other writers' commits), then let go
        #expect(try await cache?.lookup(method: "GET", url: "http://app.test/l/0", credentials: ProxyCacheAnswer.importedCredentials, variant: { _ in "" },
                                        using: false, at: Date()) != .uriMiss)
        #expect(try await cache?.lookup(method: "GET", url: "http://app.test/none", credentials: "", variant: { _ in "" },
                                        using: false, at: Date()) == .uriMiss)
        cache = nil

        // Then another process still cannot write (it waits its 5 s for the lock, then says so), and can once it is let go
        let blocked = try await ChildProcess.run(CLI.executable, arguments: ["proxy", "cache", "import", archive.path, "--data-dir", data.path])
        #expect(blocked.status != 0)
        #expect(blocked.stderr.contains("locked") || blocked.stderr.contains("busy"), "\(blocked.stderr)")
        try holder.inDatabase { db in try db.execute(sql: "COMMIT") }
        let after = try await ChildProcess.run(CLI.executable, arguments: ["proxy", "cache", "import", archive.path, "--data-dir", data.path])
        #expect(after.status == 0, "\(after.stderr)")
    }
}
