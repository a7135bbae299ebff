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
        #expect(match.outcomes == [status.outcome])
        #expect(CacheMatch.forwarded(nil).outcomes?.contains(status.outcome) == !status.isHit)
    }

    @Test("A record without a decision of its own tells what its exchange shows", arguments: [
        (CacheDecision.fresh, Int?.none, false, false, "Kiosk;hit;detail=fresh"),
        (.staleWhileRevalidate, nil, false, false, "Kiosk;hit;detail=stale-while-revalidate"),
        (.offline, nil, false, false, "Kiosk;hit;detail=offline"),
        (.offline, nil, false, true, "Kiosk;fwd=stale;detail=offline"),
        (.staleOnError, nil, false, true, "Kiosk;fwd=stale;detail=stale-on-error"),
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

@Suite("Structured field values (RFC 8941)")
struct StructuredFieldsTests {
    @Test("Items are serialized as RFC 8941 says", arguments: [
        (StructuredFieldItem.integer(0), "0"),
        (.integer(-42), "-42"),
        (.integer(Int64.max), "999999999999999"),
        (.integer(Int64.min), "-999999999999999"),
        (.boolean(true), "?1"),
        (.boolean(false), "?0"),
        (.string(""), #""""#),
        (.string(#"a "quoted" \ word"#), #""a \"quoted\" \\ word""#),
        (.string("café\u{7}"), #""caf??""#),
        (.tokenOrString("Kiosk"), "Kiosk"),
        (.tokenOrString("*star/1.0:x"), "*star/1.0:x"),
        (.tokenOrString("stale-while-revalidate"), "stale-while-revalidate"),
        (.tokenOrString("9lives"), #""9lives""#),
        (.tokenOrString("two words"), #""two words""#),
        (.tokenOrString(""), #""""#),
        (.tokenOrString("naïve"), #""na?ve""#),
    ])
    func items(item: StructuredFieldItem, serialized: String) {
        #expect(item.description == serialized)
    }

    @Test("Tokens and keys are told from other text")
    func tokensAndKeys() {
        #expect(StructuredFields.isToken("Kiosk") && StructuredFields.isToken("*") && StructuredFields.isToken("a!#$%&'*+-.^_`|~:/9"))
        #expect(!StructuredFields.isToken("") && !StructuredFields.isToken("-a") && !StructuredFields.isToken("a b")
                && !StructuredFields.isToken("a\"b") && !StructuredFields.isToken("é"))
        #expect(StructuredFields.isKey("fwd-status") && StructuredFields.isKey("*x") && StructuredFields.isKey("a_b.c*1"))
        #expect(!StructuredFields.isKey("Ttl") && !StructuredFields.isKey("1a") && !StructuredFields.isKey("") && !StructuredFields.isKey("a:b"))
    }

    @Test("A list is written with bare true booleans, =?0 for false, ';' without spaces and ', ' between members")
    func list() throws {
        let members = [
            StructuredFieldMember(.tokenOrString("A"), parameters: [("hit", .boolean(true)), ("x", .boolean(false)), ("ttl", .integer(-3))]),
            StructuredFieldMember(.tokenOrString("B C"), parameters: [("detail", .string("y"))]),
        ]
        #expect(StructuredFields.serialize(members) == #"A;hit;x=?0;ttl=-3, "B C";detail="y""#)
        #expect(try StructuredFields.parseList(StructuredFields.serialize(members)) == members)
    }

    @Test("Lists parse with the whitespace RFC 8941 allows, and a repeated key keeps its place with the later value")
    func parsing() throws {
        let members = try StructuredFields.parseList("  A; hit;ttl=1,\tB;ttl=2;ttl=3  ")
        #expect(members.count == 2)
        #expect(members[0]["hit"] == .boolean(true) && members[0]["ttl"] == .integer(1))
        #expect(members[1].parameters.count == 1 && members[1]["ttl"] == .integer(3))
        #expect(try StructuredFields.parseList("").isEmpty)
    }

    @Test("What is not a list of the supported items is refused, with where parsing stopped", arguments: [
        ("A,", "a list ends with a comma"),
        ("A B", "expected a comma between members"),
        ("A ;hit", "expected a comma between members"),
        ("A;ttl=1.5", "decimals are not supported"),
        ("(A B)", "inner lists are not supported"),
        ("A;k=:YWJj:", "byte sequences are not supported"),
        (#""open"#, "a String is not closed"),
        (#""a\nb""#, #"only \" and \\ are escapes in a String"#),
        ("A;ttl=1234567890123456", "an Integer has at most 15 digits"),
        ("A;Ttl=1", "expected a parameter key"),
        ("A;b=?2", "a Boolean is ?0 or ?1"),
        ("A;b=-", "expected a digit"),
        ("\u{E9}", "expected an item"),
    ])
    func refusals(text: String, message: String) {
        #expect(throws: StructuredFieldError.self) { try StructuredFields.parseList(text) }
        do throws(StructuredFieldError) {
            _ = try StructuredFields.parseList(text)
        } catch {
            #expect(error.message == message)
            #expect(error.offset <= text.utf8.count)
        }
    }
}
