import Foundation
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskStore

@Suite("kiosk proxy's cache file")
struct ProxyCacheStoreTests {
    private static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// Stores `body` for `url` with no credentials and no Vary, answered at `at`.
    @discardableResult
    private static func put(_ cache: ProxyCache, _ url: String, _ body: String, at: Date = start, credentials: String = "",
                            vary: String = "", variant: String = "") async throws -> Int64? {
        try await cache.store(ProxyCacheAnswer(method: "GET", url: url, host: URL(string: url)?.host ?? "", credentials: credentials,
                                               vary: vary, variant: variant, status: 200,
                                               headers: ["Content-Type": "text/plain", "ETag": #""e""#], body: Data(body.utf8),
                                               requestTime: at, responseTime: at))
    }

    /// A new cache file of its own.
    static func makeCache(maxBytes: Int) throws -> ProxyCache {
        try ProxyCache.open(at: TemporaryDirectory.url("kiosk-proxy-cache").appendingPathComponent("cache.sqlite").path, maxBytes: maxBytes)
    }

    private static func body(_ lookup: ProxyCacheLookup) -> String? {
        if case .found(let entry) = lookup { return String(decoding: entry.body, as: UTF8.self) }
        return nil
    }

    @Test("An answer is found again by its key only: another URL is a uri-miss, another variant a vary-miss, other credentials nothing")
    func keys() async throws {
        let cache = try Self.makeCache(maxBytes: 1_000_000)
        try await Self.put(cache, "http://a.test/x", "fr answer", credentials: "alice", vary: "accept-language", variant: "accept-language=fr")
        let fr = { (_: String) in "accept-language=fr" }, de = { (_: String) in "accept-language=de" }
        #expect(Self.body(try cache.lookup(method: "GET", url: "http://a.test/x", credentials: "alice", variant: fr, using: false, at: Self.start))
                == "fr answer")
        #expect(try cache.lookup(method: "GET", url: "http://a.test/x", credentials: "alice", variant: de, using: false, at: Self.start) == .varyMiss)
        #expect(try cache.lookup(method: "GET", url: "http://a.test/x", credentials: "bob", variant: fr, using: false, at: Self.start) == .uriMiss)
        #expect(try cache.lookup(method: "GET", url: "http://a.test/y", credentials: "alice", variant: fr, using: false, at: Self.start) == .uriMiss)
        // A variant that can never match (Vary: *) is a vary-miss
        #expect(try cache.lookup(method: "GET", url: "http://a.test/x", credentials: "alice", variant: { _ in nil }, using: false,
                                 at: Self.start) == .varyMiss)
    }

    @Test("Storing again under one key replaces the answer, and the size follows")
    func replaces() async throws {
        let cache = try Self.makeCache(maxBytes: 1_000_000)
        try await Self.put(cache, "http://a.test/x", "one")
        let before = try cache.sizeInBytes()
        try await Self.put(cache, "http://a.test/x", "one, longer")
        #expect(try cache.entries().count == 1)
        #expect(try cache.sizeInBytes() == before + ", longer".utf8.count)
        #expect(Self.body(try cache.lookup(method: "GET", url: "http://a.test/x", credentials: "", variant: { _ in "" }, using: false,
                                           at: Self.start)) == "one, longer")
    }

    @Test("Past its size the least recently used answers go first, down to 90%; a use makes an answer recent")
    func leastRecentlyUsedGoFirst() async throws {
        let body = String(repeating: "x", count: 900)
        let cache = try Self.makeCache(maxBytes: 10_000)
        for index in 0..<9 { try await Self.put(cache, "http://a.test/\(index)", body, at: Self.start.addingTimeInterval(Double(index))) }
        // The oldest, used now, becomes the most recent
        let first = try #require(try cache.entries().first { $0.url.hasSuffix("/0") })
        cache.noteUse(id: first.id, at: Self.start.addingTimeInterval(100))
        try await Self.put(cache, "http://a.test/new", body, at: Self.start.addingTimeInterval(200))
        try await Self.put(cache, "http://a.test/newer", body, at: Self.start.addingTimeInterval(201))
        let kept = Set(try cache.entries().map { URL(string: $0.url)!.lastPathComponent })
        #expect(try cache.sizeInBytes() <= 10_000)
        #expect(kept.contains("0") && kept.contains("new") && kept.contains("newer"))
        #expect(!kept.contains("1"))
        #expect(try cache.entries().first { $0.url.hasSuffix("/0") }?.hits == 1)
    }

    @Test("Uses and unchanged answers are written behind, in order of time: a read sees them, an older one moves nothing back")
    func writtenBehind() async throws {
        let cache = try Self.makeCache(maxBytes: 1_000_000)
        let id = try #require(try await Self.put(cache, "http://a.test/x", "same"))
        let later = Self.start.addingTimeInterval(60)
        cache.noteConfirmed(id: id, requestTime: later, responseTime: later)
        cache.noteUse(id: id, at: later)
        cache.noteUse(id: id, at: Self.start)
        var entry = try #require(try cache.entry(id: id))
        #expect(entry.responseTime == later && entry.lastUsed == later && entry.hits == 2)
        cache.noteConfirmed(id: id, requestTime: Self.start, responseTime: Self.start)
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
        try cache.refresh(id: id, with: ["Content-Length": "0", "ETag": #""1""#, "X-A": "b", "X-New": "n"], requestTime: later, responseTime: later)
        let entry = try #require(try cache.entry(id: id))
        #expect(entry.headers["X-A"] == "b" && entry.headers["X-New"] == "n" && entry.headers["Content-Length"] == "4")
        #expect(String(decoding: entry.body, as: UTF8.self) == "body")
        #expect(entry.responseTime == later)
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

    @Test("A lookup sees at once what another opening of the file stored, replaced or cleared, with its connections kept between lookups")
    func lookupsFollowOtherWriters() async throws {
        // Given two openings of one file (as the proxy and `kiosk proxy cache clear` in another process)
        let path = TemporaryDirectory.url("kiosk-proxy-cache").appendingPathComponent("kiosk-proxy-cache.sqlite").path
        let proxy = try ProxyCache.open(at: path, maxBytes: 1_000_000)
        let other = try ProxyCache.open(at: path, maxBytes: 1_000_000)
        let look = { try proxy.lookup(method: "GET", url: "http://a.test/x", credentials: "", variant: { _ in "" }, using: false,
                                      at: Self.start) }
        // The proxy's lookup has already read the file once (its connection is kept for the next lookups)
        #expect(try look() == .uriMiss)

        // When the other stores an answer, replaces it, then clears the cache, the proxy's lookups follow each step
        try await Self.put(other, "http://a.test/x", "first")
        #expect(Self.body(try look()) == "first")
        try await Self.put(other, "http://a.test/x", "second")
        #expect(Self.body(try look()) == "second")
        #expect(try other.clear() == 1)
        #expect(try look() == .uriMiss)
    }

    @Test("Answers given at once are stored together, each under its own key, and each caller gets its own entry's id once it is stored")
    func concurrentStores() async throws {
        // Given a cache
        let cache = try Self.makeCache(maxBytes: 1_000_000)

        // When 40 answers are given at once (an app's concurrent requests), one URL twice
        let ids = try await withThrowingTaskGroup(of: (String, Int64?).self) { group in
            for index in 0..<40 {
                let url = "http://a.test/\(index == 39 ? 0 : index)"
                group.addTask { (url, try await Self.put(cache, url, "answer \(index)")) }
            }
            return try await group.reduce(into: [:]) { $0[$1.0, default: []].append($1.1) }
        }

        // Then every caller got an id, which finds its URL's entry as soon as the call returns, and the URL given twice
        // is one entry
        #expect(ids.count == 39 && ids.values.allSatisfy { $0.allSatisfy { $0 != nil } })
        #expect(Set(try #require(ids["http://a.test/0"])).count == 1)
        for (url, urlIDs) in ids {
            let id = try #require(urlIDs.first ?? nil)
            #expect(try cache.entry(id: id)?.url == url)
        }
        #expect(try cache.entries().count == 39)
    }
}
