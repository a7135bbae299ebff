import Foundation
@testable import KioskCore
import Testing

@Suite("Cache-Status (RFC 9211) for every decision")
struct CacheStatusTests {
    /// Every decision in each way Kiosk makes it, with the exact header value and label.
    static let decisions: [(CacheStatus, String, String)] = [
        (CacheStatus(.fresh, ttl: 42.9), "Kiosk;hit;ttl=42;detail=fresh", "hit fresh"),
        (CacheStatus(.fresh), "Kiosk;hit;detail=fresh", "hit fresh"),
        (CacheStatus(.staleWhileRevalidate, ttl: -412.2), "Kiosk;hit;ttl=-413;detail=stale-while-revalidate",
         "hit stale-while-revalidate"),
        (CacheStatus(.offline, ttl: -60), "Kiosk;hit;ttl=-60;detail=offline", "hit offline"),
        (CacheStatus(.offline, forward: .stale, ttl: -60), "Kiosk;fwd=stale;ttl=-60;detail=offline", "fwd=stale offline"),
        (CacheStatus(.staleOnError, forward: .stale, forwardStatus: 503, ttl: -5),
         "Kiosk;fwd=stale;fwd-status=503;ttl=-5;detail=stale-on-error", "fwd=stale stale-on-error"),
        (CacheStatus(.staleIfError, forward: .stale, forwardStatus: 503, ttl: -20),
         "Kiosk;fwd=stale;fwd-status=503;ttl=-20;detail=stale-if-error", "fwd=stale stale-if-error"),
        (CacheStatus(.maxStale, ttl: -30), "Kiosk;hit;ttl=-30;detail=max-stale", "hit max-stale"),
        (CacheStatus(.onlyIfCached, forward: .stale), "Kiosk;fwd=stale;detail=only-if-cached", "fwd=stale only-if-cached"),
        (CacheStatus(.fallback, forward: .uriMiss, ttl: -86_400), "Kiosk;fwd=uri-miss;ttl=-86400;detail=fallback", "fwd=uri-miss fallback"),
        (CacheStatus(.revalidated, forward: .stale, forwardStatus: 304, ttl: 3600, stored: true),
         "Kiosk;fwd=stale;fwd-status=304;ttl=3600;stored;detail=revalidated", "fwd=stale revalidated"),
        (CacheStatus(.network, forward: .miss, forwardStatus: 200, ttl: 86_400, stored: true),
         "Kiosk;fwd=miss;fwd-status=200;ttl=86400;stored;detail=network", "fwd=miss network"),
        (CacheStatus(.network, forward: .request, forwardStatus: 200, ttl: 600, stored: true, collapsed: true),
         "Kiosk;fwd=request;fwd-status=200;ttl=600;stored;collapsed;detail=network", "fwd=request network"),
        (CacheStatus(.network, forward: .miss, forwardStatus: 200), "Kiosk;fwd=miss;fwd-status=200;detail=network", "fwd=miss network"),
        (CacheStatus(.mocked, forward: .miss, forwardStatus: 200, ttl: 60, stored: true),
         "Kiosk;fwd=miss;fwd-status=200;ttl=60;stored;detail=mocked", "fwd=miss mocked"),
        (CacheStatus(.edited, forward: .stale, forwardStatus: 500), "Kiosk;fwd=stale;fwd-status=500;detail=edited", "fwd=stale edited"),
    ]

    @Test("Each decision is written exactly, in RFC 8941's canonical form", arguments: decisions)
    func headerValue(status: CacheStatus, header: String, label: String) {
        // Given a decision
        // When it is written
        // Then the header value and the badge's label are exactly these
        #expect(status.headerValue == header)
        #expect(status.label == label)
    }

    @Test("Every decision with every reason and parameter reads back through the Structured Fields parser")
    func everyWordIsAToken() throws {
        // Given every forward reason with every decision, and every parameter, as written
        for decision in CacheDecision.allCases {
            for forward in CacheStatus.Forward.allCases + [nil] {
                let status = CacheStatus(decision, forward: forward, forwardStatus: 200, ttl: -3, stored: true, collapsed: true)
                // Then the parser of Structured Fields reads each back as the same decision (a word that is not a
                // Token would have to be a quoted String, and would not parse)
                #expect(CacheStatus(headerValue: status.headerValue) == status, "\(status.headerValue)")
            }
        }
        // And integers past RFC 8941's 15 digits are written clamped, so the value still parses
        var status = CacheStatus(.fresh)
        status.ttl = Int.max
        status.forwardStatus = Int.min
        #expect(status.headerValue == "Kiosk;hit;fwd-status=-999999999999999;ttl=999999999999999;detail=fresh")
        #expect(CacheStatus(headerValue: status.headerValue) != nil)
    }

    @Test("Every decision Kiosk has appears in the table above")
    func everyDecisionCovered() {
        #expect(Set(Self.decisions.map(\.0.decision)) == Set(CacheDecision.allCases))
    }

    @Test("A header value reads back as the same decision, and begins as the log's prefix match expects", arguments: decisions)
    func roundTrip(status: CacheStatus, header: String, label: String) throws {
        // Given a written decision
        // When it is parsed back
        let parsed = try #require(CacheStatus(headerValue: header))
        // Then it is the same decision, its outcome is what follows the name up to the next ';' (what the
        // request log indexes), and the filter's words for that outcome find it
        #expect(parsed == status)
        #expect(header.hasPrefix("Kiosk;" + status.outcome + ";"))
        let match: CacheMatch = status.forward.map { .forwarded($0) } ?? .hit
        #expect(match.outcomes?.first == status.outcome)
        // (a miss finds the proxy cache's more precise misses too)
        #expect(match.outcomes?.count == (status.forward == .miss ? 3 : 1))
        #expect(CacheMatch.forwarded(nil).outcomes?.contains(status.outcome) == !status.isHit)
    }

    @Test("A record without a decision of its own tells what its exchange shows", arguments: [
        (CacheDecision.fresh, Int?.none, false, false, "Kiosk;hit;detail=fresh"),
        (.staleWhileRevalidate, nil, false, false, "Kiosk;hit;detail=stale-while-revalidate"),
        (.offline, nil, false, false, "Kiosk;hit;detail=offline"),
        (.offline, nil, false, true, "Kiosk;fwd=stale;detail=offline"),
        (.staleOnError, nil, false, true, "Kiosk;fwd=stale;detail=stale-on-error"),
        (.staleIfError, 503, true, false, "Kiosk;fwd=stale;fwd-status=503;detail=stale-if-error"),
        (.fallback, nil, false, true, "Kiosk;fwd=stale;detail=fallback"),
        (.revalidated, 304, true, false, "Kiosk;fwd=stale;fwd-status=304;detail=revalidated"),
        (.network, 200, false, false, "Kiosk;fwd=miss;fwd-status=200;detail=network"),
        (.network, 200, true, false, "Kiosk;fwd=stale;fwd-status=200;detail=network"),
        (.network, nil, false, true, "Kiosk;fwd=miss;detail=network"),
        (.mocked, 404, false, false, "Kiosk;fwd=miss;fwd-status=404;detail=mocked"),
        (.edited, 200, true, false, "Kiosk;fwd=stale;fwd-status=200;detail=edited"),
    ])
    func recorded(decision: CacheDecision, status: Int?, conditional: Bool, failed: Bool, header: String) {
        // Given a record of an exchange (conditional when it sent a validator) or of a store answer
        let headers = conditional ? [RequestRecord.HeaderField(name: "if-none-match", value: "\"v1\"")] : []
        let record = RequestRecord(startedAt: Date(), source: .dogs, endpoint: "dogs.list", method: "GET", url: "https://dogs.test/",
                                   requestHeaders: headers, status: status, error: failed ? "Offline" : nil,
                                   timings: RequestTimings(total: 0), decision: decision)
        // When it is made without a Cache-Status
        // Then its Cache-Status is what the exchange tells
        #expect(record.cacheStatus.headerValue == header)
    }

    @Test("ttl is rounded down, and left out when it is not a number")
    func ttlRounding() {
        #expect(CacheStatus(.fresh, ttl: 0.5).ttl == 0)
        #expect(CacheStatus(.fresh, ttl: -0.5).ttl == -1)
        #expect(CacheStatus(.fresh, ttl: .nan).ttl == nil)
        #expect(CacheStatus(.fresh, ttl: .infinity).ttl == nil)
        #expect(CacheStatus(.fresh, ttl: 1e20).headerValue == "Kiosk;hit;ttl=999999999999999;detail=fresh")
    }

    @Test("Kiosk's member is found in a list other caches wrote, in either form of its name; others are not Kiosk's")
    func readsAmongOtherMembers() {
        // Given lists written by other caches as well, with RFC 9211's spacing
        let chain = #"OriginCache; hit; ttl=1100, "CDN Company Here"; hit; ttl=545,  Kiosk; fwd=stale; fwd-status=304; detail=revalidated"#
        // Then Kiosk's member is read, and lists without it (or with an unknown decision) are not
        #expect(CacheStatus(headerValue: chain) == CacheStatus(.revalidated, forward: .stale, forwardStatus: 304))
        #expect(CacheStatus(headerValue: #""Kiosk";hit;detail=fresh"#) == CacheStatus(.fresh))
        #expect(CacheStatus(headerValue: "ExampleCache; hit; ttl=376") == nil)
        #expect(CacheStatus(headerValue: "Kiosk;hit;detail=warm") == nil)
        #expect(CacheStatus(headerValue: "Kiosk;detail=fresh") == nil)
        #expect(CacheStatus(headerValue: "Kiosk;hit;fwd=miss;detail=fresh") == nil)
        #expect(CacheStatus(headerValue: "") == nil)
    }

    @Test("A decision encodes as its header value and decodes back")
    func codable() throws {
        let status = CacheStatus(.revalidated, forward: .stale, forwardStatus: 304, ttl: 10, stored: true)
        let data = try JSONEncoder().encode([status])
        #expect(String(decoding: data, as: UTF8.self) == #"["Kiosk;fwd=stale;fwd-status=304;ttl=10;stored;detail=revalidated"]"#)
        #expect(try JSONDecoder().decode([CacheStatus].self, from: data) == [status])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([CacheStatus].self, from: Data(#"["nope"]"#.utf8)) }
    }
}

@Suite("Cache-Status as a Structured Field (RFC 8941, through swift-http-structured-headers)")
struct CacheStatusFieldTests {
    @Test("Kiosk's member is read among other caches' members, with the whitespace RFC 8941 allows; the last of ours wins")
    func readAmongOthers() throws {
        let value = "  ExampleCDN; fwd=uri-miss; stored,\tKiosk;hit;ttl=5;detail=fresh , Kiosk;fwd=stale;fwd-status=304;detail=revalidated"
        let status = try #require(CacheStatus(headerValue: value))
        #expect(status == CacheStatus(.revalidated, forward: .stale, forwardStatus: 304))
        #expect(CacheStatus(headerValue: "Kiosk;hit;ttl=5;detail=fresh")?.ttl == 5)
    }

    @Test("What is not a Structured Field List, or holds no member of Kiosk's, reads as none", arguments: [
        "", "Kiosk;hit;detail=fresh,", "Kiosk B", "Kiosk;ttl=1.5.2;detail=fresh", #"Kiosk;detail="open"#, "ExampleCDN;hit",
        "Kiosk;hit;detail=unheard-of", "Kiosk;detail=fresh", "Kiosk;hit;fwd=miss;detail=network", "Kiosk;hit;Ttl=1;detail=fresh",
    ])
    func refusals(value: String) {
        #expect(CacheStatus(headerValue: value) == nil, "\(value)")
    }

    @Test("Integers are clamped to the 15 digits a field holds, so writing never fails, and read back as written")
    func clamped() throws {
        let status = CacheStatus(.fresh, ttl: 1e20)
        #expect(status.headerValue == "Kiosk;hit;ttl=999999999999999;detail=fresh")
        #expect(CacheStatus(headerValue: status.headerValue) == status)
        #expect(CacheStatus(.fresh, ttl: -1e20).headerValue == "Kiosk;hit;ttl=-999999999999999;detail=fresh")
    }
}
