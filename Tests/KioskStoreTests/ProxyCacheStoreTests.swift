import Foundation
import GRDB
import KioskCore
import KioskTestSupport
import Synchronization
import Testing
@testable import KioskStore

@Suite("kiosk proxy's cache file")
struct ProxyCacheStoreTests {
    private static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// Stores `body` for `url` with no credentials and no Vary, answered at `at`, and waits for the write; returns its
    /// entry's id, nil when it was not stored.
    @discardableResult
    private static func put(_ cache: ProxyCache, _ url: String, _ body: String, at: Date = start, credentials: String = "",
                            vary: String = "", variant: String = "") async throws -> Int64? {
        let queued = cache.store(answer(url, body, at: at, credentials: credentials, vary: vary, variant: variant)) { error in
            Issue.record("the write failed: \(error)")
        }
        guard queued else { return nil }
        cache.flush()
        return try cache.entries().first { $0.url == url }?.id
    }

    private static func answer(_ url: String, _ body: String, at: Date = start, credentials: String = "", vary: String = "",
                               variant: String = "") -> ProxyCacheAnswer {
        ProxyCacheAnswer(method: "GET", url: url, host: URL(string: url)?.host ?? "", credentials: credentials, vary: vary,
                         variant: variant, status: 200, headers: ["Content-Type": "text/plain", "ETag": #""e""#],
                         body: Data(body.utf8), requestTime: at, responseTime: at)
    }

    /// The path of a new cache file, in a folder of its own.
    private static func newFile() -> String {
        TemporaryDirectory.url("kiosk-proxy-cache").appendingPathComponent("kiosk-proxy-cache.sqlite").path
    }

    /// A new cache file of its own.
    static func makeCache(maxBytes: Int) throws -> ProxyCache {
        try ProxyCache.open(at: TemporaryDirectory.url("kiosk-proxy-cache").appendingPathComponent("cache.sqlite").path, maxBytes: maxBytes)
    }

    private static func body(_ lookup: ProxyCacheLookup) -> String? {
        if case .found(let entry) = lookup { return String(decoding: entry.body, as: UTF8.self) }
        return nil
    }

    @Test("A write to a URL marks its answers changed, of every identity and variant; an answer asked for after it clears the mark, one asked before it keeps it")
    func changedMark() async throws {
        let cache = try Self.makeCache(maxBytes: 1_000_000)
        let lookup = { (url: String, credentials: String) in
            try await cache.lookup(method: "GET", url: url, credentials: credentials, variant: { _ in "" }, using: false, at: Self.start)
        }
        let changedAt = { (url: String, credentials: String) -> Date?? in
            guard case .found(let entry) = try await lookup(url, credentials) else { return nil }
            return .some(entry.changedAt)
        }
        // Given /list stored for nobody and for a signed-in user, and /other
        try await Self.put(cache, "http://a.test/list", "v1")
        try await Self.put(cache, "http://a.test/list", "v1 mine", credentials: "digest")
        let other = try #require(try await Self.put(cache, "http://a.test/other", "o"))
        // When a write to /list succeeds a minute later
        let write = Self.start.addingTimeInterval(60)
        #expect(try cache.invalidate(urls: ["http://a.test/list"], at: write) == 2)
        // Then both of its answers are kept, marked changed at that time, and /other is not marked
        #expect(try await changedAt("http://a.test/list", "") == .some(write))
        #expect(try await changedAt("http://a.test/list", "digest") == .some(write))
        #expect(try await changedAt("http://a.test/other", "") == .some(nil))
        #expect(try cache.entries().first { $0.url == "http://a.test/list" }?.changedAt == write)
        // When an answer to a GET sent before the write is stored after it, it may be the old list: the mark stays
        try await Self.put(cache, "http://a.test/list", "v1 again", at: write.addingTimeInterval(-1))
        #expect(try await changedAt("http://a.test/list", "") == .some(write))
        // And a 304 to a revalidation sent before it, or a confirmation, moves nothing either
        _ = try cache.refresh(id: try #require(try cache.entries().first { $0.url == "http://a.test/list" && $0.id != other }?.id),
                              validators: ["ETag": #""e""#], with: ["ETag": #""e""#], requestTime: write.addingTimeInterval(-1),
                              responseTime: write.addingTimeInterval(1))
        #expect(try await changedAt("http://a.test/list", "") == .some(write))
        // When one asked for after it is stored, it is the list as changed: the mark goes
        try await Self.put(cache, "http://a.test/list", "v2", at: write.addingTimeInterval(1))
        #expect(try await changedAt("http://a.test/list", "") == .some(nil))
        // And a 304 to a revalidation sent after it clears the mark of the other identity's answer
        guard case .found(let mine) = try await lookup("http://a.test/list", "digest") else { Issue.record("gone"); return }
        #expect(try cache.refresh(id: mine.id, validators: ["ETag": #""e""#], with: ["ETag": #""e""#],
                                  requestTime: write.addingTimeInterval(2), responseTime: write.addingTimeInterval(2)))
        #expect(try await changedAt("http://a.test/list", "digest") == .some(nil))
        // And so does a confirmation written behind, of an answer asked for after a second write
        let second = write.addingTimeInterval(100)
        try cache.invalidate(urls: ["http://a.test/list"], at: second)
        cache.noteConfirmed(id: mine.id, requestTime: second.addingTimeInterval(1), responseTime: second.addingTimeInterval(1),
                            date: nil, age: nil)
        cache.flush()
        #expect(try await changedAt("http://a.test/list", "digest") == .some(nil))
        #expect(try await changedAt("http://a.test/list", "") == .some(second))
    }

    @Test("A host names every port's answers, a host with a port that port's alone (the scheme's own port as a URL leaves it out)")
    func hostWithPort() async throws {
        let cache = try Self.makeCache(maxBytes: 1_000_000)
        // Given answers of two local servers on one host, of a site over HTTPS, and of an IPv6 loopback server
        for url in ["http://localhost:3000/a", "http://localhost:3000/b", "http://localhost:4000/c", "https://example.test/d",
                    "http://[::1]:8080/e"] {
            try await Self.put(cache, url, url)
        }
        let urls = { (host: String) in try cache.entries(host: host).map(\.url).sorted() }
        // Then the host alone lists every port's, and with a port that port's
        #expect(try urls("localhost").count == 3)
        #expect(try urls("LOCALHOST:3000") == ["http://localhost:3000/a", "http://localhost:3000/b"])
        #expect(try urls("example.test:443") == ["https://example.test/d"] && (try urls("example.test:80")).isEmpty)
        #expect(try urls("[::1]:8080") == ["http://[::1]:8080/e"] && (try urls("[::1]:8081")).isEmpty)
        // And clearing one port leaves the other's
        #expect(try cache.clear(host: "localhost:4000") == 1)
        #expect(try urls("localhost") == ["http://localhost:3000/a", "http://localhost:3000/b"])
    }

    @Test("A --host given as a URL (copied from the log) is refused saying to give the host, not a URL", arguments: ["http://127.0.0.1:48455/", "https://[::1]:8443/x"])
    func urlForHost(url: String) throws {
        #expect { try ProxyCache.check(host: url) } throws: { error in
            guard case .invalidRequest(let message)? = error as? KioskError else { return false }
            return message.contains("give a host's name or address, with :PORT if you like, not a URL")
        }
    }

    @Test("A --host that is not a host, or whose port is not one, is refused with what is wrong, and clears nothing",
          arguments: ["localhost:typo", "localhost:3000x", "localhost:3000/", "localhost:3000 ", "localhost:-1", "localhost:", "localhost:0",
                      "localhost:65536", ":3000", "http://localhost/", "a b", "[::1", "[localhost]:80", "[::1]x", "::zz"])
    func badHosts(host: String) async throws {
        // Given two local servers' answers
        let cache = try Self.makeCache(maxBytes: 1_000_000)
        for url in ["http://localhost:3000/a", "http://localhost:4000/b"] { try await Self.put(cache, url, url) }
        // When a host that is not one is listed, or cleared
        // Then each is refused as bad input, naming the host, and both answers stay
        for attempt in [{ _ = try cache.entries(host: host) }, { _ = try cache.clear(host: host) }] {
            #expect { try attempt() } throws: { error in
                guard case .invalidRequest(let message)? = error as? KioskError else { return false }
                return message.contains("--host") && message.contains(host.lowercased().debugDescription)
            }
        }
        #expect(try cache.entries().count == 2)
    }

    @Test("An answer is found again by its key only: another URL is a uri-miss, another variant a vary-miss, other credentials nothing")
    func keys() async throws {
        let cache = try Self.makeCache(maxBytes: 1_000_000)
        try await Self.put(cache, "http://a.test/x", "fr answer", credentials: "alice", vary: "accept-language", variant: "accept-language=fr")
        let fr = { (_: String) in "accept-language=fr" }, de = { (_: String) in "accept-language=de" }
        #expect(Self.body(try await cache.lookup(method: "GET", url: "http://a.test/x", credentials: "alice", variant: fr, using: false, at: Self.start))
                == "fr answer")
        #expect(try await cache.lookup(method: "GET", url: "http://a.test/x", credentials: "alice", variant: de, using: false, at: Self.start) == .varyMiss(varyBy: ["accept-language"]))
        #expect(try await cache.lookup(method: "GET", url: "http://a.test/x", credentials: "bob", variant: fr, using: false, at: Self.start) == .uriMiss)
        #expect(try await cache.lookup(method: "GET", url: "http://a.test/y", credentials: "alice", variant: fr, using: false, at: Self.start) == .uriMiss)
        // A variant that can never match (Vary: *) is a vary-miss
        #expect(try await cache.lookup(method: "GET", url: "http://a.test/x", credentials: "alice", variant: { _ in nil }, using: false,
                                 at: Self.start) == .varyMiss(varyBy: ["accept-language"]))
    }

    @Test("Storing again under one key replaces the answer, and the size follows")
    func replaces() async throws {
        let cache = try Self.makeCache(maxBytes: 1_000_000)
        try await Self.put(cache, "http://a.test/x", "one")
        let before = try cache.sizeInBytes()
        try await Self.put(cache, "http://a.test/x", "one, longer")
        #expect(try cache.entries().count == 1)
        #expect(try cache.sizeInBytes() == before + ", longer".utf8.count)
        #expect(Self.body(try await cache.lookup(method: "GET", url: "http://a.test/x", credentials: "", variant: { _ in "" }, using: false,
                                           at: Self.start)) == "one, longer")
    }

    @Test("The size an answer is queued with is the size its stored row counts, for fields without escapes, none to many")
    func queuedSizeIsTheStoredSize() async throws {
        // Given answers with no header field, one, and several (the queue counts them before the writer encodes them)
        let many: HTTPHeaderFields = ["Content-Type": "application/json", "ETag": "W/1", "Cache-Control": "max-age=60", "Vary": "Accept"]
        for headers in [HTTPHeaderFields(), ["Content-Type": "text/plain"], many] {
            let cache = try Self.makeCache(maxBytes: 1_000_000)
            var answer = Self.answer("http://a.test/sized", "a body")
            answer.headers = headers
            // When one is stored
            let queued = ProxyCache.Encoded(answer).size
            #expect(cache.store(answer) { error in Issue.record("the write failed: \(error)") })
            cache.flush()
            // Then the size it was queued with is what the file counts for it
            #expect(try cache.sizeInBytes() == queued, "\(headers)")
        }
    }

    @Test("The size the cache counts is its entries' sum through every write: new, replaced in one write and across writes, removed, evicted, cleared")
    func sizeFollowsEveryWrite() async throws {
        let path = Self.newFile()
        let cache = try ProxyCache.open(at: path, maxBytes: 20_000)
        let counted = { () throws -> (total: Int, sum: Int) in
            let total = try cache.sizeInBytes()
            let sum = try DatabaseQueue(path: path).read { db in try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(size), 0) FROM cacheEntry") ?? -1 }
            return (total, sum)
        }
        // Given answers stored behind, one URL twice in the same write (the second replaces the first)
        for (url, body) in [("http://a.test/1", "one"), ("http://a.test/2", "two"), ("http://a.test/1", "one, longer"),
                            ("http://b.test/3", "three")] {
            _ = cache.store(Self.answer(url, body)) { error in Issue.record("\(error)") }
        }
        cache.flush()
        // Then the total is the entries' sum, and counts the replaced one once
        var now = try counted()
        #expect(try cache.entries().count == 3 && now.total == now.sum && now.sum > 0, "\(now)")
        // And so after a replacement in a later write, an archive's batch with a key twice and a removal
        try await Self.put(cache, "http://a.test/2", "two, and more")
        try cache.store([Self.answer("http://c.test/4", "four"), Self.answer("http://c.test/4", "four again"),
                         Self.answer("http://c.test/5", "five")])
        now = try counted()
        #expect(now.total == now.sum, "\(now)")
        let removed = try #require(try cache.entries().first { $0.url == "http://c.test/5" })
        #expect(try cache.remove(id: removed.id))
        #expect(try !cache.remove(id: removed.id))
        now = try counted()
        let afterRemovals = try cache.entries().count
        #expect(now.total == now.sum && afterRemovals == 4, "\(now)")
        // And past the bound, as eviction takes the least recently used out
        let body = String(repeating: "x", count: 1_500)
        for index in 0..<20 { try await Self.put(cache, "http://d.test/\(index)", body, at: Self.start.addingTimeInterval(Double(index))) }
        now = try counted()
        let afterEviction = try cache.entries().count
        #expect(now.total == now.sum && now.total <= 20_000 && afterEviction < 23, "\(now)")
        // And after a host is cleared, then all
        #expect(try cache.clear(host: "d.test") > 0)
        now = try counted()
        #expect(now.total == now.sum, "\(now)")
        try cache.clear()
        #expect(try counted() == (0, 0))
    }

    @Test("A total another writer left wrong (an older proxy beside this one) is summed again when a proxy opens the file, and every hundred writes")
    func wrongTotalComesRight() async throws {
        // Given a file holding answers whose total another writer left at 0
        let path = Self.newFile()
        let cache = try ProxyCache.open(at: path, maxBytes: 1_000_000)
        for index in 0..<3 { try await Self.put(cache, "http://a.test/\(index)", "body \(index)") }
        let sum = try cache.sizeInBytes()
        let spoil = { try DatabaseQueue(path: path).write { db in try db.execute(sql: "UPDATE cacheStats SET bytes = 0") } }
        try spoil()
        #expect(try cache.sizeInBytes() == 0 && sum > 0)
        // When a proxy opens it, the total is the entries' sum again
        let reopened = try ProxyCache.open(at: path, maxBytes: 1_000_000)
        #expect(try reopened.sizeInBytes() == sum)
        // And when it is spoiled under a running cache, a hundred writes behind bring it right
        try spoil()
        for index in 0..<ProxyCache.writesPerSum {
            _ = reopened.store(Self.answer("http://b.test/\(index)", "")) { error in Issue.record("\(error)") }
            reopened.flush()
        }
        let entries = try await DatabaseQueue(path: path).read { db in try Int.fetchOne(db, sql: "SELECT SUM(size) FROM cacheEntry") ?? -1 }
        #expect(try reopened.sizeInBytes() == entries)
    }

    @Test("A file whose total a version before this one kept by triggers opens with the same total, and keeps it exact")
    func sizeAcrossTheTriggersMigration() async throws {
        // Given a cache file at schema v3, its total kept by triggers, holding two answers
        let path = Self.newFile()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: path)
        try ProxyCache.migrator.migrate(queue, upTo: "v3")
        try await queue.write { db in
            for (url, size) in [("http://a.test/1", 10), ("http://a.test/2", 20)] {
                try db.execute(sql: """
                    INSERT INTO cacheEntry (method, url, host, credentials, vary, variant, status, headers, body, requestTime, responseTime,
                                            lastUsed, hits, size)
                    VALUES ('GET', ?, 'a.test', '', '', '', 200, X'5B5D', X'00', 0, 0, 0, 0, ?)
                    """, arguments: [url, size])
            }
        }
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT bytes FROM cacheStats") } == 30)
        try queue.close()
        // When this version opens it and stores and removes answers
        let cache = try ProxyCache.open(at: path, maxBytes: 1_000_000)
        #expect(try cache.sizeInBytes() == 30)
        try await Self.put(cache, "http://a.test/3", "three")
        let first = try #require(try cache.entries().first { $0.url == "http://a.test/1" })
        #expect(try cache.remove(id: first.id))
        // Then the total is still the entries' sum
        let sum = try await DatabaseQueue(path: path).read { db in try Int.fetchOne(db, sql: "SELECT SUM(size) FROM cacheEntry") ?? -1 }
        #expect(try cache.sizeInBytes() == sum && sum > 20)
    }

    @Test("Past its size the least recently used answers go first, down to 90%; a use, an unchanged answer or a 304 makes an answer recent")
    func leastRecentlyUsedGoFirst() async throws {
        let body = String(repeating: "x", count: 900)
        let cache = try Self.makeCache(maxBytes: 10_000)
        for index in 0..<9 { try await Self.put(cache, "http://a.test/\(index)", body, at: Self.start.addingTimeInterval(Double(index))) }
        // Given the three oldest asked for again: one given from the store, one the upstream sent again unchanged (as
        // every answer in `fallback` online), one a 304 confirmed
        let stored = try cache.entries()
        let id = { (name: String) in try #require(stored.first { $0.url.hasSuffix("/\(name)") }).id }
        cache.noteUse(id: try id("0"), at: Self.start.addingTimeInterval(100))
        let again = Self.start.addingTimeInterval(101)
        cache.noteConfirmed(id: try id("1"), requestTime: again, responseTime: again, date: nil, age: nil)
        #expect(try cache.refresh(id: try id("2"), validators: ["ETag": #""e""#], with: ["ETag": #""e""#], requestTime: again, responseTime: again))
        // When two more are stored, past the bound
        try await Self.put(cache, "http://a.test/new", body, at: Self.start.addingTimeInterval(200))
        try await Self.put(cache, "http://a.test/newer", body, at: Self.start.addingTimeInterval(201))
        // Then the ones that went are the least recently asked for, and only the one given from the store counts a hit
        let kept = Set(try cache.entries().map { URL(string: $0.url)!.lastPathComponent })
        #expect(try cache.sizeInBytes() <= 10_000)
        #expect(["0", "1", "2", "new", "newer"].allSatisfy(kept.contains), "\(kept.sorted())")
        #expect(!kept.contains("3"))
        #expect(try cache.entries().first { $0.url.hasSuffix("/0") }?.hits == 1)
        #expect(try cache.entries().first { $0.url.hasSuffix("/1") }?.hits == 0)
    }

    @Test("Uses and unchanged answers are written behind, in order of time: a read sees them, an older one moves nothing back")
    func writtenBehind() async throws {
        let cache = try Self.makeCache(maxBytes: 1_000_000)
        let id = try #require(try await Self.put(cache, "http://a.test/x", "same"))
        let later = Self.start.addingTimeInterval(60)
        cache.noteConfirmed(id: id, requestTime: later, responseTime: later, date: nil, age: nil)
        cache.noteUse(id: id, at: later)
        cache.noteUse(id: id, at: Self.start)
        var entry = try #require(try cache.entry(id: id))
        #expect(entry.responseTime == later && entry.lastUsed == later && entry.hits == 2)
        cache.noteConfirmed(id: id, requestTime: Self.start, responseTime: Self.start, date: nil, age: nil)
        entry = try #require(try cache.entry(id: id))
        #expect(entry.responseTime == later)
    }

    @Test("An answer larger than a tenth of the cache is not stored")
    func tooLarge() async throws {
        let cache = try Self.makeCache(maxBytes: 10_000)
        #expect(try await Self.put(cache, "http://a.test/big", String(repeating: "x", count: 2_000)) == nil)
        #expect(try cache.entries().isEmpty)
    }

    @Test("A 304's fields replace the stored ones of their names; the body and its Content-Length stay")
    func refresh() throws {
        let cache = try Self.makeCache(maxBytes: 1_000_000)
        let stored = try cache.store([ProxyCacheAnswer(method: "GET", url: "http://a.test/x", host: "a.test", credentials: "", vary: "",
                                                       variant: "", status: 200, headers: ["Content-Length": "4", "ETag": #""1""#, "X-A": "a"],
                                                       body: Data("body".utf8), requestTime: Self.start, responseTime: Self.start)])
        let id = try #require(stored.first ?? nil)
        let later = Self.start.addingTimeInterval(60)
        #expect(try cache.refresh(id: id, validators: ["ETag": #""1""#], with: ["Content-Length": "0", "ETag": #""1""#, "X-A": "b", "X-New": "n"],
                                  requestTime: later, responseTime: later))
        let entry = try #require(try cache.entry(id: id))
        #expect(entry.headers["X-A"] == "b" && entry.headers["X-New"] == "n" && entry.headers["Content-Length"] == "4")
        #expect(String(decoding: entry.body, as: UTF8.self) == "body")
        #expect(entry.responseTime == later)
    }

    @Test("A 304 renews only the representation it was asked about: an answer stored under the key meanwhile is left as it is")
    func refreshLeavesAnotherRepresentation() throws {
        // Given an entry whose ETag is "2": a newer answer stored while a revalidation of the "1" it replaced was in flight
        let cache = try Self.makeCache(maxBytes: 1_000_000)
        let stored = try cache.store([ProxyCacheAnswer(method: "GET", url: "http://a.test/x", host: "a.test", credentials: "", vary: "",
                                                       variant: "", status: 200, headers: ["ETag": #""2""#, "X-A": "a"],
                                                       body: Data("two".utf8), requestTime: Self.start, responseTime: Self.start)])
        let id = try #require(stored.first ?? nil)
        // When the 304 about "1" comes back
        let later = Self.start.addingTimeInterval(60)
        let refreshed = try cache.refresh(id: id, validators: ["ETag": #""1""#], with: ["ETag": #""1""#, "X-A": "b"],
                                          requestTime: later, responseTime: later)
        // Then the entry keeps its own fields and times, and the caller is told nothing was renewed
        #expect(!refreshed)
        let entry = try #require(try cache.entry(id: id))
        #expect(entry.headers["ETag"] == #""2""# && entry.headers["X-A"] == "a" && entry.responseTime == Self.start)
        // And a refresh of an entry that is gone says so too
        #expect(try cache.remove(id: id))
        #expect(try !cache.refresh(id: id, validators: ["ETag": #""2""#], with: ["ETag": #""2""#], requestTime: later, responseTime: later))
    }

    @Test("A file's bound is the one the proxy opened it with: a command opening it beside the proxy (an import) keeps to it; a new file has the default")
    func boundIsTheFiles() throws {
        let path = TemporaryDirectory.url("kiosk-proxy-cache").appendingPathComponent("bound.sqlite").path
        // Given a new file opened by a command: the default bound
        #expect(try ProxyCache.open(at: path, maxBytes: nil).maxBytes == ProxyCache.defaultMaxBytes)
        // When a proxy opens it with --cache-size 2 (MB)
        let proxy = try ProxyCache.open(at: path, maxBytes: 2_000_000)
        // Then a command that opens it after keeps to 2 MB, not to the default
        #expect(proxy.maxBytes == 2_000_000)
        #expect(try ProxyCache.open(at: path, maxBytes: nil).maxBytes == 2_000_000)
    }

    @Test("The file and its WAL are readable by their owner only, survive a reopen, and clear by host or whole")
    func fileAndClear() async throws {
        let folder = TemporaryDirectory.url("kiosk-proxy-cache")
        let path = folder.appendingPathComponent("kiosk-proxy-cache.sqlite").path
        do {
            let cache = try ProxyCache.open(at: path, maxBytes: 1_000_000)
            try await Self.put(cache, "http://a.test/1", "a1")
            try await Self.put(cache, "http://a.test/2", "a2")
            try await Self.put(cache, "http://b.test/1", "b1")
        }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: path + suffix)[.posixPermissions] as? Int)
            #expect(mode & 0o077 == 0, "\(suffix): \(String(mode, radix: 8))")
        }
        let reopened = try ProxyCache.open(at: path, maxBytes: 1_000_000)
        #expect(try reopened.hostStats().map(\.host) == ["a.test", "b.test"])
        #expect(try reopened.clear(host: "A.test") == 2)
        #expect(try reopened.entries().map(\.host) == ["b.test"])
        #expect(try reopened.clear() == 1)
        #expect(try reopened.sizeInBytes() == 0)
    }

    @Test("Clearing more entries than one statement deletes clears them all, by host and whole, and counts each")
    func clearsInChunks() throws {
        // Given 1,300 answers for one host and 700 for another (a clear deletes a few hundred a statement, so that a
        // statement's journal, kept in memory, stays small)
        let cache = try Self.makeCache(maxBytes: 500_000_000)
        let answers = (0..<2000).map { index in
            Self.answer(index < 1300 ? "http://a.test/\(index)" : "http://b.test/\(index)", "body \(index)")
        }
        try cache.store(answers)

        // When one host is cleared, then the rest
        let fromA = try cache.clear(host: "a.test")
        let left = try cache.hostStats()
        let rest = try cache.clear()

        // Then every one of that host's went and none of the other's; then everything, each counted once
        #expect(fromA == 1300)
        #expect(left.map(\.host) == ["b.test"])
        #expect(left.first?.entries == 700)
        #expect(rest == 700)
        #expect(try cache.entries().isEmpty)
        #expect(try cache.sizeInBytes() == 0)
    }

    @Test("What is stored is counted per host and port, as --host names them, so that a machine's local servers are told apart")
    func statsByHostAndPort() throws {
        // Given answers of two local servers on one address, one of them over two paths, and of a host on its default port
        let cache = try Self.makeCache(maxBytes: 500_000_000)
        try cache.store([Self.answer("http://127.0.0.1:18401/a", "one"), Self.answer("http://127.0.0.1:18401/b?x=1", "two"),
                         Self.answer("http://127.0.0.1:18402?q=1", "three"), Self.answer("https://api.test/c", "four")])
        // When the cache is counted
        let stats = try cache.hostStats()
        // Then each server has its own line, named as a URL names it, with the key --host takes to reach it alone
        #expect(Set(stats.map(\.host)) == ["127.0.0.1:18401", "127.0.0.1:18402", "api.test"])
        #expect(Set(stats.map(\.key)) == ["127.0.0.1:18401", "127.0.0.1:18402", "api.test:443"])
        #expect(stats.first { $0.host == "127.0.0.1:18401" }?.entries == 2)
        // And clearing one of them by its key leaves the others, a host's own port as well as another of its ports
        #expect(try cache.clear(host: "127.0.0.1:18401") == 2)
        try cache.store([Self.answer("https://api.test:8443/d", "five")])
        #expect(try cache.clear(host: try #require(try cache.hostStats().first { $0.host == "api.test" }).key) == 1)
        #expect(Set(try cache.hostStats().map(\.host)) == ["127.0.0.1:18402", "api.test:8443"])
    }

    @Test("A lookup sees at once what another opening of the file stored, replaced or cleared, with its connections kept between lookups")
    func lookupsFollowOtherWriters() async throws {
        // Given two openings of one file (as the proxy and `kiosk proxy cache clear` in another process)
        let path = Self.newFile()
        let proxy = try ProxyCache.open(at: path, maxBytes: 1_000_000)
        let other = try ProxyCache.open(at: path, maxBytes: 1_000_000)
        let look = { try await proxy.lookup(method: "GET", url: "http://a.test/x", credentials: "", variant: { _ in "" }, using: false,
                                      at: Self.start) }
        // The proxy's lookup has already read the file once (its connection is kept for the next lookups)
        #expect(try await look() == .uriMiss)

        // When the other stores an answer, replaces it, then clears the cache, the proxy's lookups follow each step
        try await Self.put(other, "http://a.test/x", "first")
        #expect(Self.body(try await look()) == "first")
        try await Self.put(other, "http://a.test/x", "second")
        #expect(Self.body(try await look()) == "second")
        #expect(try other.clear() == 1)
        #expect(try await look() == .uriMiss)
    }

    @Test("An answer a lookup read is given again only until the next write: this cache's own replacement, queued or written, and its uses written behind are seen")
    func readRowsLastUntilTheNextWrite() async throws {
        // Given a stored answer, looked up once (its row is then kept)
        let cache = try Self.makeCache(maxBytes: 1_000_000)
        let look = { (using: Bool) in
            try await cache.lookup(method: "GET", url: "http://a.test/x", credentials: "", variant: { _ in "" }, using: using, at: Self.start)
        }
        try await Self.put(cache, "http://a.test/x", "first")
        #expect(Self.body(try await look(false)) == "first")

        // When the same cache stores another answer for the URL, not yet written
        let queued = cache.store(Self.answer("http://a.test/x", "second")) { error in Issue.record("the write failed: \(error)") }
        #expect(queued)
        // Then the next lookup gets the new answer, not the row it read before
        #expect(Self.body(try await look(false)) == "second")

        // And when a use of it is written behind, a lookup reads the count the file now holds
        guard case .found(let used) = try await look(true) else { Issue.record("the answer is gone"); return }
        #expect(used.hits == 1)
        cache.flush()
        guard case .found(let after) = try await look(false) else { Issue.record("the answer is gone"); return }
        #expect(after.hits == 1)
    }

    @Test("Answers are stored behind: the call returns at once, answers given together are written together, and a lookup of one waiting for its write gets it")
    func storedBehind() async throws {
        // Given a cache, and a second opening of its file (another process)
        let path = Self.newFile()
        let cache = try ProxyCache.open(at: path, maxBytes: 1_000_000)
        let other = try ProxyCache.open(at: path, maxBytes: 1_000_000)
        let look = { (cache: ProxyCache, url: String) in
            Self.body(try await cache.lookup(method: "GET", url: url, credentials: "", variant: { _ in "" }, using: false, at: Self.start))
        }

        // When 40 answers are given at once (an app's concurrent requests), one URL twice
        for index in 0..<40 {
            #expect(cache.store(Self.answer("http://a.test/\(index == 39 ? 0 : index)", "answer \(index)")) { error in
                Issue.record("the write failed: \(error)")
            })
        }

        // Then they wait for their write (the other process sees none yet), this process's lookup of one gets it at once —
        // the later of the URL given twice — and all were written together, each under its own key
        #expect(try await look(other, "http://a.test/5") == nil)
        #expect(try await look(cache, "http://a.test/0") == "answer 39")
        #expect(try await look(other, "http://a.test/38") == "answer 38")
        #expect(try other.entries().count == 39)
    }

    @Test("A list made while the write behind is under way waits for it, and shows the answer")
    func listWaitsForTheWriteUnderWay() async throws {
        // Given a cache, and another connection holding the file's write lock
        let path = Self.newFile()
        let cache = try ProxyCache.open(at: path, maxBytes: 1_000_000)
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        let holder = try DatabaseQueue(path: path, configuration: configuration)
        try holder.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE") }

        // When an answer is stored and its write behind starts (it has taken the answer and waits for the lock)
        #expect(cache.store(Self.answer("http://a.test/x", "x")) { error in Issue.record("the write failed: \(error)") })
        try await Task.sleep(for: .milliseconds(400))
        // and the lock is let go a moment after a list is asked for (from threads of their own: a blocked cooperative
        // thread must not be what lets the lock go, when the other suites running at once hold the rest)
        Thread.detachNewThread {
            usleep(300_000)
            try? holder.inDatabase { db in try db.execute(sql: "COMMIT") }
        }
        let urls = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[String], any Error>) in
            DispatchQueue.global().async { continuation.resume(with: Result { try cache.entries().map(\.url) }) }
        }

        // Then the list waited for that write, and shows the answer
        #expect(urls == ["http://a.test/x"])
    }

    @Test("An answer whose write fails is said to its caller; while writes fail answers are not said stored, and the cache goes on")
    func failedWrite() async throws {
        // Given a cache, and another opening of its file
        let path = Self.newFile()
        let cache = try ProxyCache.open(at: path, maxBytes: 1_000_000)
        try await Self.put(cache, "http://a.test/1", "one")
        let other = try ProxyCache.open(at: path, maxBytes: 1_000_000)
        let failures = Mutex<[String]>([])

        // When an answer is written while its table is missing (the other opening renamed it), then the table comes back
        try await other.writer.write { db in try db.execute(sql: "ALTER TABLE cacheEntry RENAME TO hidden") }
        #expect(cache.store(Self.answer("http://a.test/2", "two")) { error in failures.withLock { $0.append(error.description) } })
        cache.flush()
        try await other.writer.write { db in try db.execute(sql: "ALTER TABLE hidden RENAME TO cacheEntry") }

        // Then the caller is told why; the next answer, given while the last write had failed, is not said to be stored,
        // but is; and once a write has succeeded again answers are said stored
        #expect(failures.withLock { $0.count } == 1)
        #expect(failures.withLock { $0.first?.contains("store an answer in the proxy cache") } == true)
        #expect(!cache.store(Self.answer("http://a.test/3", "three")) { _ in Issue.record("the write failed") })
        #expect(Self.body(try await cache.lookup(method: "GET", url: "http://a.test/3", credentials: "", variant: { _ in "" },
                                                 using: false, at: Self.start)) == "three")
        #expect(try await Self.put(cache, "http://a.test/4", "four") != nil)
    }

    /// The key the cache knows an answer of `url` by (GET, no credentials).
    private static func key(_ url: String) -> String { ProxyCache.queueKey(method: "GET", credentials: "", url: url) }

    @Test("A URL never stored is known as such without a read of the file; what another opening stores, an archive's answers included, is known at the next lookup")
    func knownKeysFollowOtherWriters() async throws {
        // Given a file with one answer, opened twice (the proxy, and the CLI or a second proxy)
        let path = Self.newFile()
        let first = try ProxyCache.open(at: path, maxBytes: 1_000_000)
        try await Self.put(first, "http://a.test/old", "old")
        let proxy = try ProxyCache.open(at: path, maxBytes: 1_000_000)
        let other = try ProxyCache.open(at: path, maxBytes: 1_000_000)

        // Then the proxy knows the answer the file held when it opened, and what it never stored is not held
        #expect(try proxy.mayHold(Self.key("http://a.test/old")))
        #expect(try !proxy.mayHold(Self.key("http://a.test/x")))
        #expect(try await proxy.lookup(method: "GET", url: "http://a.test/x", credentials: "", variant: { _ in "" }, using: false,
                                       at: Self.start) == .uriMiss)

        // When the other opening stores one answer behind and an archive's two at once
        try await Self.put(other, "http://a.test/x", "x")
        try other.store([Self.answer("http://a.test/y", "y"), Self.answer("http://b.test/z", "z", credentials: "alice")])

        // Then the proxy's next lookups know all three (and only under their own credentials)
        #expect(try proxy.mayHold(Self.key("http://a.test/x")))
        #expect(try proxy.mayHold(Self.key("http://a.test/y")))
        #expect(try proxy.mayHold(ProxyCache.queueKey(method: "GET", credentials: "alice", url: "http://b.test/z")))
        #expect(try !proxy.mayHold(Self.key("http://b.test/z")))
        #expect(Self.body(try await proxy.lookup(method: "GET", url: "http://a.test/y", credentials: "", variant: { _ in "" },
                                                 using: false, at: Self.start)) == "y")

        // And an answer the proxy stores itself is known before its write
        #expect(proxy.store(Self.answer("http://a.test/mine", "mine")) { error in Issue.record("the write failed: \(error)") })
        #expect(try proxy.mayHold(Self.key("http://a.test/mine")))
    }

    @Test("After entries are evicted or cleared the cache forgets their keys, keeps those waiting for their write, and still learns what another opening stores")
    func knownKeysAfterEvictionAndClear() async throws {
        // Given a cache of 10 KB, and another opening of its file
        let path = Self.newFile()
        let cache = try ProxyCache.open(at: path, maxBytes: 10_000)
        let other = try ProxyCache.open(at: path, maxBytes: 10_000)
        let body = String(repeating: "x", count: 900)

        // When eleven answers of about 1 KB are stored, one by one, so the least recently used go
        for index in 0..<11 { try await Self.put(cache, "http://a.test/\(index)", body, at: Self.start.addingTimeInterval(Double(index))) }

        // Then the evicted are no longer known, the kept are
        let kept = Set(try cache.entries().map(\.url))
        #expect(!kept.contains("http://a.test/0") && kept.contains("http://a.test/10"))
        #expect(try !cache.mayHold(Self.key("http://a.test/0")))
        #expect(try cache.mayHold(Self.key("http://a.test/10")))

        // When an answer waits for its write (a tenth of a second) while the set is made again from the file
        #expect(cache.store(Self.answer("http://a.test/waiting", "w")) { error in Issue.record("the write failed: \(error)") })
        cache.remakeKnownKeysBehind()

        // Then its key is still known
        #expect(try cache.mayHold(Self.key("http://a.test/waiting")))

        // When the cache is cleared (the waiting answer written first), then no key is known
        #expect(try cache.clear() == kept.count + 1)
        #expect(try !cache.mayHold(Self.key("http://a.test/10")))
        #expect(try !cache.mayHold(Self.key("http://a.test/waiting")))

        // When the other opening stores an answer after the clear, then it is known
        try await Self.put(other, "http://a.test/after", "after")
        #expect(try cache.mayHold(Self.key("http://a.test/after")))
    }
}
