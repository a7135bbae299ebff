import Foundation
import GRDB
import KioskCore
import KioskDebugger
import KioskTestSupport
import Testing
@testable import KioskStore

@Suite("Request log: the filter language's criteria and Cache-Status")
struct RequestLogFilterLanguageTests {
    typealias Fixture = RequestLogTests

    /// One record of each kind the filters tell apart, oldest first.
    static func fill(_ log: RequestLog) throws {
        func record(_ url: String, source: SourceID?, endpoint: String, method: String = "GET", status: Int?, decision: CacheDecision,
                    duration: TimeInterval, error: String? = nil, body: String? = nil, conditional: Bool = false,
                    cacheStatus: CacheStatus? = nil) -> RequestRecord {
            RequestRecord(startedAt: Date(timeIntervalSinceReferenceDate: 760_000_000.25), source: source, endpoint: endpoint,
                          method: method, url: url,
                          requestHeaders: conditional ? [RequestRecord.HeaderField(name: "If-None-Match", value: "\"v1\"")] : [],
                          status: status, responseBody: body.map { CapturedBody(data: Data($0.utf8), originalSize: $0.utf8.count) },
                          error: error, timings: RequestTimings(total: duration), decision: decision, cacheStatus: cacheStatus)
        }
        let records = [
            record("https://nyt.test/miss", source: .nyt, endpoint: "nyt.mostpopular", status: 200, decision: .network,
                   duration: 0.5, body: "{}"),
            record("https://nyt.test/fresh", source: .nyt, endpoint: "nyt.mostpopular", status: nil, decision: .fresh, duration: 0,
                   cacheStatus: CacheStatus(.fresh, ttl: 100)),
            record("https://rm.test/revalidated", source: .rickandmorty, endpoint: "rickandmorty.characters", status: 304,
                   decision: .revalidated, duration: 0.5001, body: "", conditional: true),
            record("https://rm.test/down", source: .rickandmorty, endpoint: "rickandmorty.characters", status: 503,
                   decision: .network, duration: 2, body: "oops", conditional: true),
            record("https://rm.test/soe", source: .rickandmorty, endpoint: "rickandmorty.characters", status: nil,
                   decision: .staleOnError, duration: 0, error: "HTTP 503",
                   cacheStatus: CacheStatus(.staleOnError, forward: .stale, forwardStatus: 503, ttl: -30)),
            record("https://img.test/cat.png", source: nil, endpoint: "image", status: nil, decision: .network, duration: 3,
                   error: "Offline: cannot connect to img.test"),
            record("https://dogs.test/offline", source: .dogs, endpoint: "dogs.list", status: nil, decision: .offline, duration: 0,
                   cacheStatus: CacheStatus(.offline, ttl: -5)),
            record("https://dogs.test/new", source: .dogs, endpoint: "dogs.list", method: "HEAD", status: 404, decision: .mocked,
                   duration: 0.01, body: "{}"),
        ]
        for record in records { try log.append(record) }
    }

    /// The last path segment of each URL a filter in the language returns, newest first.
    static func names(_ log: RequestLog, _ text: String) throws -> [String] {
        try log.records(matching: try RequestFilter(parsing: text)).map { String($0.url.split(separator: "/").last ?? "") }
    }

    @Test("Each key of the language selects what it says in SQL, negated too", arguments: [
        // An answer from the store in place of an upstream's 503 (stale-if-error) is found by the upstream's status too
        ("status:5xx", ["soe", "down"]),
        ("status:1xx", []),
        ("status:304,404", ["new", "revalidated"]),
        // A failure has no status; neither has an answer from the store, which is no failure
        ("status:error", ["cat.png"]),
        ("status:store", ["offline", "soe", "fresh"]),
        ("-status:2xx,3xx", ["new", "offline", "cat.png", "soe", "down", "fresh"]),
        ("-status:503", ["new", "offline", "cat.png", "revalidated", "fresh", "miss"]),
        ("source:nyt,dogs", ["new", "offline", "fresh", "miss"]),
        ("-source:rickandmorty", ["new", "offline", "cat.png", "fresh", "miss"]),
        ("method:head", ["new"]),
        // A host with its scheme's own port is its URLs that leave the port out (https on 443), and no others
        ("host:nyt.test", ["fresh", "miss"]),
        ("host:nyt.test:443", ["fresh", "miss"]),
        ("host:nyt.test:80", []),
        ("-method:GET", ["new"]),
        ("endpoint:image", ["cat.png"]),
        ("-endpoint:rickandmorty.characters,dogs.list", ["cat.png", "fresh", "miss"]),
        ("cache:stale", ["offline", "soe"]),
        ("cache:network", ["cat.png", "down", "miss"]),
        ("cache:hit", ["offline", "fresh"]),
        ("cache:fwd", ["new", "cat.png", "soe", "down", "revalidated", "miss"]),
        ("cache:miss", ["new", "cat.png", "miss"]),
        ("cache:fwd=stale", ["soe", "down", "revalidated"]),
        ("cache:fwd=request", []),
        ("cache:hit,mocked", ["new", "offline", "fresh"]),
        ("-cache:stale,fwd=miss", ["down", "revalidated", "fresh"]),
        ("slow:>500ms", ["cat.png", "down", "revalidated"]),
        ("slow:>=500ms", ["cat.png", "down", "revalidated", "miss"]),
        ("-slow:>500ms", ["new", "offline", "soe", "fresh", "miss"]),
        ("-slow:>=2s", ["new", "offline", "soe", "revalidated", "fresh", "miss"]),
        ("has:error", ["cat.png", "soe"]),
        ("-has:error", ["new", "offline", "down", "revalidated", "fresh", "miss"]),
        ("has:body", ["new", "down", "miss"]),
        ("-has:body", ["offline", "cat.png", "soe", "revalidated", "fresh"]),
        ("source:rickandmorty cache:fwd=stale -status:5xx", ["revalidated"]),
        ("rm status:5xx", ["soe", "down"]),
        ("dogs -has:body", ["offline"]),
    ])
    func criteria(filter: String, expected: [String]) throws {
        // Given a log with one record of each kind
        let log = try RequestLog.inMemory(configuration: Fixture.configuration())
        try Self.fill(log)
        // When it is filtered in the language
        // Then exactly the matching records come back, newest first
        #expect(try Self.names(log, filter) == expected)
    }

    @Test("cache:miss (and fwd=miss) find the proxy's uri-miss and vary-miss too; fwd=uri-miss only its own")
    func missesOfEveryKind() throws {
        // Given a proxied answer nothing was stored for, one whose stored variant did not fit, and Kiosk's own miss
        let log = try RequestLog.inMemory(configuration: Fixture.configuration())
        for (name, forward) in [("uri", CacheStatus.Forward.uriMiss), ("vary", .varyMiss), ("own", .miss), ("stale", .stale)] {
            try log.append(RequestRecord(startedAt: Date(), source: nil, endpoint: "app.test", method: "GET", url: "http://app.test/\(name)",
                                         status: 200, timings: RequestTimings(total: 0.1), decision: .network,
                                         cacheStatus: CacheStatus(.network, forward: forward, forwardStatus: 200)))
        }
        // When misses are asked for, each way the language writes them
        // Then every miss is found, and the precise reasons find their own
        #expect(try Self.names(log, "cache:miss") == ["own", "vary", "uri"])
        #expect(try Self.names(log, "cache:fwd=miss") == ["own", "vary", "uri"])
        #expect(try Self.names(log, "cache:fwd=uri-miss") == ["uri"])
        #expect(try Self.names(log, "-cache:miss") == ["stale"])
    }

    @Test("A record's Cache-Status is stored and read back as it was recorded, or as its exchange tells")
    func cacheStatusStored() throws {
        // Given a log with store answers recorded with their freshness, and exchanges recorded as they came
        let log = try RequestLog.inMemory(configuration: Fixture.configuration())
        try Self.fill(log)
        // When they are read back
        let statuses = try log.records(matching: RequestFilter()).map { String($0.url.split(separator: "/").last ?? "") + " " + $0.cacheStatus.headerValue }
        // Then each has its exact value
        #expect(statuses == [
            "new Kiosk;fwd=miss;fwd-status=404;detail=mocked",
            "offline Kiosk;hit;ttl=-5;detail=offline",
            "cat.png Kiosk;fwd=miss;detail=network",
            "soe Kiosk;fwd=stale;fwd-status=503;ttl=-30;detail=stale-on-error",
            "down Kiosk;fwd=stale;fwd-status=503;detail=network",
            "revalidated Kiosk;fwd=stale;fwd-status=304;detail=revalidated",
            "fresh Kiosk;hit;ttl=100;detail=fresh",
            "miss Kiosk;fwd=miss;fwd-status=200;detail=network",
        ])
    }

    @Test("Upgrading a log gives the records it already holds the Cache-Status they tell, and the filters find them")
    func migrationBackfills() throws {
        // Given a log file at the previous schema version holding a conditional exchange and an offline store answer
        let (folder, path) = try Fixture.temporaryLogPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let queue = try DatabaseQueue(path: path, configuration: RequestLog.makeDatabaseConfiguration())
            try RequestLog.migrator.migrate(queue, upTo: "v2: index distinct words")
            try queue.write { db in
                for (url, status, decision, error, headers) in [
                    ("https://rm.test/a", Int?.some(200), "network", String?.none, #"[["If-None-Match","\"v1\""]]"#),
                    ("https://rm.test/b", nil, "offline", "Offline: cannot connect to rm.test", "[]"),
                ] {
                    try db.execute(sql: """
                        INSERT INTO logEntry (startedAt, source, endpoint, method, url, status, statusClass, decision, duration,
                                              error, byteCount, requestHeaders, responseHeaders)
                        VALUES (760000000.25, 'rickandmorty', 'rickandmorty.characters', 'GET', ?, ?, ?, ?, 0.1, ?, 100, ?, '[]')
                        """, arguments: [url, status, (status ?? 0) / 100, decision, error, headers])
                }
                try db.execute(sql: "UPDATE logStats SET byteCount = 200")
            }
        }
        // When Kiosk opens it
        let log = try RequestLog.open(at: path, configuration: Fixture.configuration())
        // Then the records read back with the Cache-Status they tell, their sizes grew by it, and the filters use it
        let records = try log.records(matching: RequestFilter())
        #expect(records.map(\.cacheStatus.headerValue) == ["Kiosk;fwd=stale;detail=offline", "Kiosk;fwd=stale;fwd-status=200;detail=network"])
        #expect(try log.sizeInBytes() == 200 + Int64(records.map(\.cacheStatus.headerValue.utf8.count).reduce(0, +)))
        #expect(try log.records(matching: try RequestFilter(parsing: "cache:fwd=stale")).count == 2)
        #expect(try log.records(matching: try RequestFilter(parsing: "cache:hit")).isEmpty)
    }

    @Test("host:*.name is the name's subdomains, on any port or the one given, never the name itself nor a URL holding it in its path",
          arguments: [("host:*.example.test", ["img", "api"]), ("host:*.example.test:8443", ["img"]), ("-host:*.example.test", ["user", "query", "path", "bare"]),
                      ("host:*.test", ["user", "query", "img", "path", "api", "bare"])])
    func subdomains(filter: String, expected: [String]) throws {
        // Given records of a name, its subdomains, and URLs holding the name elsewhere
        let log = try RequestLog.inMemory(configuration: Fixture.configuration())
        for url in ["http://example.test/bare", "http://api.example.test/api", "http://evil.test/x.example.test/path",
                    "https://img.cdn.example.test:8443/img", "http://evil.test?u=a.example.test/query", "http://a.example.test:x@evil.test/user"] {
            try log.append(RequestRecord(startedAt: Date(), source: nil, endpoint: "app", method: "GET", url: url, status: 200,
                                         timings: RequestTimings(total: 0.1), decision: .network))
        }
        // When the list is filtered by the subdomains
        // Then exactly theirs come back, newest first
        #expect(try Self.names(log, filter) == expected)
    }

    @Test("An exchange in flight is selected by a host, method, source or endpoint filter exactly when its record will be",
          arguments: ["host:*.example.test", "host:*.example.test:8443", "-host:*.example.test", "host:*.test", "host:example.test",
                      "host:example.test:80", "host:img.cdn.example.test:443", "host:img.cdn.example.test:8443", "host:[::1]:8080",
                      "host:[::1]", "-host:evil.test", "host:api.example.test,evil.test", "method:post", "-method:GET",
                      "source:nyt", "-source:nyt", "endpoint:app", "-endpoint:app", "method:GET host:*.example.test"])
    func inFlightAgreesWithTheLog(filter text: String) throws {
        // Given records of many authorities (a name, its subdomains, ports, IPv6, a user name before an @, a name in a
        // path or a query) and the same requests in flight
        let urls = ["http://example.test/bare", "http://api.example.test/api", "http://evil.test/x.example.test/path",
                    "https://img.cdn.example.test:8443/img", "https://img.cdn.example.test/img443", "http://evil.test?u=a.example.test/query",
                    "http://a.example.test:x@evil.test/user", "http://example.test:8080/port", "http://[::1]:8080/v6", "http://[::1]/v6bare",
                    "https://example.test/secure"]
        let log = try RequestLog.inMemory(configuration: Fixture.configuration())
        let inFlight = ExchangesInFlight(redactor: .standard)
        for (index, url) in urls.enumerated() {
            let method = index % 2 == 0 ? "GET" : "POST", source: SourceID? = index % 3 == 0 ? .nyt : nil
            let endpoint = index % 4 == 0 ? "app" : "other"
            try log.append(RequestRecord(startedAt: Date(), source: source, endpoint: endpoint, method: method, url: url, status: 200,
                                         timings: RequestTimings(total: 0.1), decision: .network))
            _ = inFlight.begin(HTTPRequest(method: method, url: URL(string: url)!, source: source, endpoint: endpoint),
                               startedAt: Date(), start: .now)
        }
        // When the log is filtered, and the exchanges in flight are
        let filter = try RequestFilter(parsing: text)
        // (Named by their URLs' last parts: the one with a password before its @ is shown with it hidden in flight.)
        let name = { (url: String) in String(url.split(separator: "/").last ?? "") }
        let logged = Set(try log.records(matching: filter).map { name($0.url) })
        let flying = Set(inFlight.snapshot().filter(filter.mayMatch).map { name($0.url) })
        // Then both select the same requests
        #expect(flying == logged, "\(text): in flight \(flying.sorted()), logged \(logged.sorted())")
    }

    @Test("A single decision or Cache-Status outcome is read from its index in id order, without a sort")
    func queryPlans() throws {
        // Given a log
        let log = try RequestLog.inMemory(configuration: Fixture.configuration())
        // When the plans of a one-decision filter and of a group are asked for
        func plan(_ text: String) throws -> String {
            let filter = try RequestFilter(parsing: text)
            return try log.writer.read { db in
                try RequestLog.queryPlan(matching: filter, db)
            }
        }
        // Then one decision, and one outcome of the Cache-Status, read their index in id order (no sort)
        for filter in ["cache:offline", "cache:hit", "cache:fwd=uri-miss"] {
            let plan = try plan(filter)
            #expect(plan.contains("USING INDEX logEntry_on_decision") || plan.contains("USING INDEX logEntryCacheOutcome"), "\(filter): \(plan)")
            #expect(!plan.contains("TEMP B-TREE"), "\(filter): \(plan)")
        }
    }

    @Test("A status a log holds few of is walked by the statuses' index, and the store's stand-ins by the hidden statuses' index, not every GET")
    func rareStatusPlans() throws {
        // Given a log
        let log = try RequestLog.inMemory(configuration: Fixture.configuration())
        // When the plan of a server error filter beside other equalities (the issue's example) is asked for
        let plan = try log.writer.read { db in
            try RequestLog.queryPlan(matching: try RequestFilter(parsing: "status:5xx source:nyt cache:stale method:GET slow:>500ms has:error"), db)
        }
        // Then it reads the statuses' index and the partial index of hidden statuses, never the method's or source's
        #expect(plan.contains("USING INDEX logEntry_on_statusClass"), "\(plan)")
        #expect(plan.contains("USING INDEX logEntryHiddenStatus"), "\(plan)")
        #expect(!plan.contains("logEntry_on_method") && !plan.contains("logEntry_on_source"), "\(plan)")
    }
}
