import Foundation
import KioskCore
import Testing
@testable import KioskStore

@Suite("Request log insights")
struct RequestLogInsightsTests {
    static func record(_ endpoint: String, source: SourceID?, seconds: Double, decision: CacheDecision = .network,
                       status: Int? = 200, bytes: Int? = nil) -> RequestRecord {
        RequestRecord(startedAt: Date(timeIntervalSinceReferenceDate: 760_000_000), source: source, endpoint: endpoint, method: "GET",
                      url: "https://example.test/\(endpoint)", status: status,
                      responseBody: bytes.map { CapturedBody(data: Data(count: min($0, 10)), originalSize: $0) },
                      timings: RequestTimings(total: seconds), decision: decision)
    }

    static func log() throws -> RequestLog {
        try RequestLog.inMemory(configuration: .init(now: { Date(timeIntervalSinceReferenceDate: 760_000_000) }))
    }

    @Test("The previous answer of a GET is the last GET of its URL, not the CORS preflight its browser sent just before")
    func previousAnswerOfTheSameMethod() throws {
        // Given a GET of a URL, then its preflight (OPTIONS, 204) and a second GET
        let log = try Self.log()
        let url = "https://api.example.test/items"
        func record(_ method: String, _ status: Int) -> RequestRecord {
            RequestRecord(startedAt: Date(timeIntervalSinceReferenceDate: 760_000_000), source: nil, endpoint: "api.example.test",
                          method: method, url: url, status: status, timings: RequestTimings(total: 0.1), decision: .network)
        }
        let first = try log.append(record("GET", 200))
        let preflight = try log.append(record("OPTIONS", 204))
        let second = try log.append(record("GET", 200))
        // When the second GET's previous answer is asked for
        // Then it is the first GET; and the preflight's is none
        #expect(try log.previousAnswer(before: second, method: "GET", url: url) == first)
        #expect(try log.previousAnswer(before: preflight, method: "OPTIONS", url: url) == nil)
    }

    @Test("endpoints are ranked by the p95 of their upstream exchanges, by nearest rank; store answers, failures and pauses at a request breakpoint are left out")
    func slowest() throws {
        // Given 20 exchanges of a list taking 10…200 ms, 4 of a detail taking 300 ms, and store answers and a
        // failure of the detail, which took no time or never got an answer
        let log = try Self.log()
        for step in 1...20 { try log.append(Self.record("list", source: .dogs, seconds: Double(step) / 100)) }
        for _ in 0..<4 { try log.append(Self.record("detail", source: .nyt, seconds: 0.3)) }
        try log.append(Self.record("detail", source: .nyt, seconds: 0, decision: .fresh, status: nil))
        try log.append(Self.record("detail", source: .nyt, seconds: 9, decision: .network, status: nil))
        // (and one held 33 s at a breakpoint before it went, timing the developer, not the upstream)
        var paused = Self.record("list", source: .dogs, seconds: 33.5)
        paused.timings.queued = 33.4
        paused.touchedBy = [ExchangeTouch(kind: .breakpoint, id: 1, name: "dogs.list", phrase: .breakpoint(.requestHeld(seconds: 33)))]
        try log.append(paused)
        // (and one whose answer was held at the response breakpoint, logged when the upstream answered: its time counts)
        var answerHeld = Self.record("list", source: .dogs, seconds: 0.2)
        answerHeld.touchedBy = [ExchangeTouch(kind: .breakpoint, id: 2, name: "dogs.list", phrase: .breakpoint(.responseHeld(seconds: 40)))]
        try log.append(answerHeld)

        // When the insights are read
        let insights = try log.insights()

        // Then the detail (p95 300 ms) comes before the list (p95 200 ms, p50 110 ms), counting only the answered exchanges
        #expect(insights.endpoints.map(\.endpoint) == ["detail", "list"])
        #expect(insights.endpoints[0].count == 4)
        #expect(insights.endpoints[1].count == 21)
        #expect(abs(insights.endpoints[1].p50 - 0.11) < 1e-9)
        #expect(abs(insights.endpoints[1].p95 - 0.2) < 1e-9)
        #expect(abs(insights.endpoints[1].maximum - 0.20) < 1e-9)
        #expect(insights.requests == 28)
    }

    @Test("stale answers are counted apart from fresh ones, and every decision by its name")
    func decisions() throws {
        // Given two fresh answers, a 304, three stale answers of each kind, one network answer, a mock and an edit
        let log = try Self.log()
        let decisions: [CacheDecision] = [.fresh, .fresh, .revalidated, .staleWhileRevalidate, .staleOnError, .offline,
                                          .network, .mocked, .edited]
        for decision in decisions { try log.append(Self.record("list", source: .rickandmorty, seconds: 0.01, decision: decision)) }

        // When the insights are read
        let counted = try log.insights().decisions

        // Then fresh is 3, stale 3, network 1, synthetic 2, and each name keeps its own count
        #expect([counted.fresh, counted.stale, counted.network, counted.synthetic] as [Int] == [3, 3, 1, 2])
        #expect(counted.byDecision["fresh", default: 0] == 2)
        #expect(counted.byDecision["stale-on-error", default: 0] == 1)
    }

    @Test("bytes are summed per source from the sizes received, the largest first, pictures of no source apart")
    func bytes() throws {
        // Given NYT answers of 1,000 and 2,500 bytes, a dogs answer of 10,000 bytes, and a picture of no source of 500
        let log = try Self.log()
        try log.append(Self.record("list", source: .nyt, seconds: 0.1, bytes: 1000))
        try log.append(Self.record("list", source: .nyt, seconds: 0.1, bytes: 2500))
        try log.append(Self.record("list", source: .dogs, seconds: 0.1, bytes: 10_000))
        try log.append(Self.record("image", source: nil, seconds: 0.1, bytes: 500))

        // When the insights are read
        let sources = try log.insights().sources

        // Then dogs (10,000) comes first, NYT sums to 3,500 over 2 requests, and the picture is counted under no source
        #expect(sources.map(\.source) == [.dogs, .nyt, nil])
        #expect(sources.map(\.responseBytes) == [10_000, 3500, 500])
        #expect(sources[1].requests == 2)
    }

    @Test("an app's traffic through kiosk proxy is told by host; Kiosk's own endpoints of no catalog and the hosts past the busiest are other traffic")
    func bytesByHost() throws {
        // Given an app's answers from two hosts, a picture of no catalog, a probe, and a catalog's answer
        let log = try Self.log()
        try log.append(Self.record("localhost:3000", source: nil, seconds: 0.1, bytes: 4000))
        try log.append(Self.record("localhost:3000", source: nil, seconds: 0.1, bytes: 1000))
        try log.append(Self.record("api.example.test", source: nil, seconds: 0.1, bytes: 700))
        try log.append(Self.record("image", source: nil, seconds: 0.1, bytes: 500))
        try log.append(Self.record("probe", source: nil, seconds: 0.1, bytes: 100))
        try log.append(Self.record("list", source: .nyt, seconds: 0.1, bytes: 3000))
        // When the insights are read knowing Kiosk's own endpoints
        let sources = try log.insights(ownEndpoints: ["image", "probe"]).sources
        // Then each host is a row of its own, among the sources by bytes, and Kiosk's own traffic of no catalog is one other row
        #expect(sources.map { $0.source?.rawValue ?? $0.host ?? "other" } == ["localhost:3000", "nyt", "api.example.test", "other"])
        #expect(sources.map(\.responseBytes) == [5000, 3000, 700, 600] && sources[0].requests == 2 && sources[3].requests == 2)
        // When only one host may be shown, then the next one joins the other traffic
        let one = try log.insights(ownEndpoints: ["image", "probe"], hosts: 1).sources
        #expect(one.map { $0.source?.rawValue ?? $0.host ?? "other" } == ["localhost:3000", "nyt", "other"])
        #expect(one.last?.responseBytes == 1300 && one.last?.requests == 3)
    }

    @Test("an empty log has no endpoints and no requests")
    func empty() throws {
        let insights = try Self.log().insights()
        #expect(insights.requests == 0)
        #expect(insights.endpoints.isEmpty)
        #expect(insights.sources.isEmpty)
    }
}
