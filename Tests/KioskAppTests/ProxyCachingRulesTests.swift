import Crypto
import Foundation
import KioskCore
import KioskNetwork
import KioskTestSupport
import Synchronization
import Testing
@testable import KioskApp
@testable import KioskStore

@Suite("kiosk proxy's cache rules (RFC 9111)")
struct ProxyCachingRulesTests {
    private static let url = URL(string: "http://app.test/items")!

    private static func response(_ status: Int, _ headers: HTTPHeaderFields = [:]) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: Data("b".utf8), url: url)
    }

    private static func request(_ headers: HTTPHeaderFields = [:]) -> HTTPRequest {
        HTTPRequest(url: url, headers: headers, endpoint: "app.test")
    }

    @Test("A key spells a URL one way: scheme and host lowercased, the scheme's own port and the fragment left out, escapes in capitals, an unreserved character's undone; the rest as it is",
          arguments: [("http://x.test/a?b=1", "http://x.test/a?b=1"),
                      ("http://x.test/caf%c3%a9?name=caf%c3%A9", "http://x.test/caf%C3%A9?name=caf%C3%A9"),
                      ("HTTP://X.test/caf%c3%a9", "http://x.test/caf%C3%A9"),
                      ("http://x.test/100%25?q=%2a%7e", "http://x.test/100%25?q=%2A~"),
                      ("http://x.test/%7Euser/%41%2d%2E%5f%30%2F", "http://x.test/~user/A-._0%2F"),
                      ("HTTP://X.Test:80/a?b=1#top", "http://x.test/a?b=1"),
                      ("https://x.test:443/a", "https://x.test/a"),
                      ("https://x.test:8443/A?Q=B", "https://x.test:8443/A?Q=B"),
                      ("http://x.test:443/a", "http://x.test:443/a"),
                      ("http://x.test/a#frag", "http://x.test/a")])
    func keySpelling(url: String, key: String) throws {
        #expect(ProxyCachingTransport.Key.normalized(try #require(URL(string: url))) == key)
    }

    @Test("Storable: a default-cacheable status, or explicit freshness; never no-store (either side), Vary: *, a range or a partial answer",
          arguments: [
            (200, [:], [:], true),
            (404, [:], [:], true),
            (301, [:], [:], true),
            (302, [:], [:], false),
            (302, ["Cache-Control": "max-age=60"], [:], true),
            (500, [:], [:], false),
            (503, ["Expires": "Thu, 01 Jan 2099 00:00:00 GMT"], [:], true),
            (201, ["Cache-Control": "private"], [:], true),
            (200, ["Cache-Control": "private, no-store"], [:], false),
            (200, ["Cache-Control": "No-Store"], [:], false),
            (200, [:], ["Cache-Control": "no-store"], false),
            (200, ["Vary": "Accept, *"], [:], false),
            (200, [:], ["Range": "bytes=0-1"], false),
            (206, ["Cache-Control": "max-age=60"], [:], false),
            (200, ["Cache-Control": "no-cache"], [:], true),
          ] as [(Int, HTTPHeaderFields, HTTPHeaderFields, Bool)])
    func storable(status: Int, headers: HTTPHeaderFields, asked: HTTPHeaderFields, expected: Bool) {
        #expect(ProxyCachingTransport.isStorable(Self.response(status, headers), for: Self.request(asked)) == expected)
    }

    @Test("To a client on another machine the cache is shared: a private answer is not stored for it, s-maxage is explicit freshness",
          arguments: [
            (201, ["Cache-Control": "private"], false, true),
            (201, ["Cache-Control": "private"], true, false),
            (200, ["Cache-Control": "private, max-age=60"], true, false),
            (201, ["Cache-Control": "s-maxage=60"], true, true),
            (201, ["Cache-Control": "s-maxage=60"], false, false),
          ] as [(Int, HTTPHeaderFields, Bool, Bool)])
    func storableWhenShared(status: Int, headers: HTTPHeaderFields, network: Bool, expected: Bool) {
        var request = Self.request()
        if network { request.purpose = .proxiedForNetwork }
        #expect(ProxyCachingTransport.isStorable(Self.response(status, headers), for: request) == expected)
    }

    @Test("An edited, mocked or streamed answer is not stored")
    func notTheUpstreamsBytes() {
        var edited = Self.response(200)
        edited.isEdited = true
        let mocked = Self.response(200, [HTTPResponse.mockMarkerHeader: "1"])
        var streamed = Self.response(200)
        streamed.stream = BodyStream(pull: { nil }, stop: {})
        for response in [edited, mocked, streamed] {
            #expect(!ProxyCachingTransport.isStorable(response, for: Self.request()))
        }
    }

    @Test("Age is the corrected initial age plus the time resident (RFC 9111 §4.2.3)")
    func age() {
        let requested = Date(timeIntervalSince1970: 1_000)
        let received = requested.addingTimeInterval(2)
        func entry(_ headers: HTTPHeaderFields) -> ProxyCacheEntry {
            ProxyCacheEntry(id: 1, method: "GET", url: "u", host: "h", status: 200, headers: headers, body: Data(), requestTime: requested,
                            responseTime: received, lastUsed: received, hits: 0, size: 0)
        }
        let now = received.addingTimeInterval(100)
        // No Date, no Age: the response delay (2 s) plus 100 s resident
        #expect(ProxyCachingTransport.currentAge(of: entry([:]), at: now) == 102)
        // An upstream Age of 30: 30 + the delay, as it is larger than the apparent age
        #expect(ProxyCachingTransport.currentAge(of: entry(["Age": "30"]), at: now) == 132)
        // A Date 50 s before it came: an apparent age of 50
        let date = HTTPDate.format(received.addingTimeInterval(-50))
        #expect(ProxyCachingTransport.currentAge(of: entry(["Date": date]), at: now) == 150)
        // In whole seconds, as Age is sent: 102.7 s resident reads 102, so that Age and ttl add up to the lifetime
        #expect(ProxyCachingTransport.currentAge(of: entry([:]), at: now.addingTimeInterval(0.7)) == 102)
    }

    @Test("Freshness lifetime: max-age, else Expires less Date, else a tenth since Last-Modified (at most a day); no-cache is none",
          arguments: [
            (200, ["Cache-Control": "max-age=60", "Expires": "Thu, 01 Jan 2099 00:00:00 GMT"], 60.0),
            (200, ["Cache-Control": "no-cache, max-age=60"], 0),
            (200, ["Date": "Wed, 01 Jan 2025 00:00:00 GMT", "Expires": "Wed, 01 Jan 2025 00:10:00 GMT"], 600),
            (200, ["Expires": "0"], 0),
            (200, ["Date": "Wed, 02 Jan 2025 00:00:00 GMT", "Last-Modified": "Wed, 01 Jan 2025 00:00:00 GMT"], 8640),
            (200, ["Date": "Wed, 01 Jan 2025 00:00:00 GMT", "Last-Modified": "Wed, 01 Jan 2020 00:00:00 GMT"], 86400),
            (302, ["Date": "Wed, 02 Jan 2025 00:00:00 GMT", "Last-Modified": "Wed, 01 Jan 2025 00:00:00 GMT"], 0),
            (200, [:], 0),
          ] as [(Int, HTTPHeaderFields, Double)])
    func lifetime(status: Int, headers: HTTPHeaderFields, expected: Double) {
        let received = Date(timeIntervalSince1970: 1_735_689_600)
        let entry = ProxyCacheEntry(id: 1, method: "GET", url: "u", host: "h", status: status, headers: headers, body: Data(),
                                    requestTime: received, responseTime: received, lastUsed: received, hits: 0, size: 0)
        #expect(ProxyCachingTransport.freshnessLifetime(of: entry, shared: false) == expected)
    }

    @Test("Freshness lifetime where the cache is shared: s-maxage before max-age, and it or proxy-revalidate is must-revalidate; a private cache reads neither",
          arguments: [
            (["Cache-Control": "max-age=60, s-maxage=5"], true, 5.0, true),
            (["Cache-Control": "max-age=60, s-maxage=5"], false, 60, false),
            (["Cache-Control": "s-maxage=5"], false, 0, false),
            (["Cache-Control": "max-age=60, proxy-revalidate"], true, 60, true),
            (["Cache-Control": "max-age=60, proxy-revalidate"], false, 60, false),
          ] as [(HTTPHeaderFields, Bool, Double, Bool)])
    func sharedLifetime(headers: HTTPHeaderFields, shared: Bool, expected: Double, mustRevalidate: Bool) {
        let received = Date(timeIntervalSince1970: 1_735_689_600)
        let entry = ProxyCacheEntry(id: 1, method: "GET", url: "u", host: "h", status: 200, headers: headers, body: Data(),
                                    requestTime: received, responseTime: received, lastUsed: received, hits: 0, size: 0)
        #expect(ProxyCachingTransport.freshnessLifetime(of: entry, shared: shared) == expected)
        #expect(ProxyCachingTransport.control(of: headers, shared: shared).mustRevalidate == mustRevalidate)
    }

    @Test("An answer is unchanged when its status, body and fields are, Date and Age aside")
    func unchanged() {
        let received = Date(timeIntervalSince1970: 1_000)
        let entry = ProxyCacheEntry(id: 1, method: "GET", url: "u", host: "h", status: 200,
                                    headers: ["Content-Type": "text/plain", "Date": "Thu, 01 Jan 2026 00:00:00 GMT"], body: Data("b".utf8),
                                    requestTime: received, responseTime: received, lastUsed: received, hits: 0, size: 0)
        #expect(ProxyCachingTransport.isUnchanged(entry, Self.response(200, ["Content-Type": "text/plain", "Date": "Fri, 02 Jan 2026 00:00:00 GMT", "Age": "3"])))
        #expect(!ProxyCachingTransport.isUnchanged(entry, Self.response(200, ["Content-Type": "text/html"])))
        #expect(!ProxyCachingTransport.isUnchanged(entry, Self.response(201, ["Content-Type": "text/plain"])))
        var other = Self.response(200, ["Content-Type": "text/plain"])
        other.body = Data("c".utf8)
        #expect(!ProxyCachingTransport.isUnchanged(entry, other))
    }

    @Test("A directive's seconds: a number too large to hold is 2^31 (RFC 9111 §1.2.2), a negative one 0, anything else none — but an invalid max-age is 0, stale (§4.2.1)",
          arguments: [
            ("max-age=60", 60), (#"max-age="60""#, 60), ("max-age=99999999999999999999999", 2_147_483_648),
            ("max-age=4294967296", 2_147_483_648), ("max-age=-5", 0), ("max-age=abc", nil), ("max-age=", nil), ("max-age=1e3", nil),
            ("max-age=+600", nil),
            // No space around `=` in the grammar (RFC 9111 §5.2): taken as invalid, as max-age=60a is; around the directive is fine
            ("max-age = 60", nil), ("max-age =60", nil), ("max-age= 60", nil), ("  max-age=60  ", 60),
          ] as [(String, Int?)])
    func deltaSeconds(header: String, expected: Int?) {
        #expect(CacheControl(header).maxAge == expected ?? 0)
        #expect(CacheControl(header.replacingOccurrences(of: "max-age", with: "stale-if-error")).staleIfError == expected)
    }

    @Test("An Age that is a list counts as its first member, as an Age sent twice does (RFC 9110 §5.3: the same field)",
          arguments: [("7200, 7200", 7200), (" 60 ,1", 60), ("7200", 7200), ("x, 60", 0), ("", 0), ("-5, 60", 0)])
    func ageList(value: String, seconds: Int) {
        #expect(CacheControl.age(value) == seconds)
    }

    @Test("stale-if-error stands in for 500, 502, 503, 504 and a broken exchange within its window, never for a 501 or 505; an unreachable upstream is disconnection",
          arguments: [(ProxyCachingTransport.Failure.status(500), true), (.status(502), true), (.status(503), true), (.status(504), true),
                      (.status(501), false), (.status(505), false), (.status(507), false), (.failed, true)])
    func staleIfErrorStatuses(failure: ProxyCachingTransport.Failure, standsIn: Bool) {
        #expect(failure.standIn(staleIfError: 60, staleness: 30) == (standsIn ? .staleIfError : nil))
        #expect(failure.standIn(staleIfError: 60, staleness: 61) == nil)
        #expect(failure.standIn(staleIfError: nil, staleness: 1) == nil)
        #expect(ProxyCachingTransport.Failure.unreachable.standIn(staleIfError: nil, staleness: 1_000_000) == .offline)
    }

    @Test("A repeated max-age counts as its first value, whichever is larger (RFC 9111 §4.2.1), in one field or two")
    func repeatedMaxAge() {
        #expect(CacheControl("max-age=0, max-age=100").maxAge == 0)
        #expect(CacheControl("max-age=100, max-age=0").maxAge == 100)
        #expect(ProxyCachingTransport.requestDirectives(HTTPHeaderFields([("Cache-Control", "max-age=1"), ("Cache-Control", "max-age=100")])).maxAge == 1)
    }

    @Test("A comma inside a directive's quoted value separates nothing (RFC 9111 §5.2's quoted-string)")
    func quotedCommas() {
        // A freshness named only inside an extension's quoted value gives none
        #expect(CacheControl(#"ext="x, max-age=1000""#).maxAge == nil)
        // Qualified no-cache and private name fields, not directives: the answer is still storable by a private cache
        let qualifiedNoCache = CacheControl(#"no-cache="x, no-store", max-age=100"#)
        #expect(qualifiedNoCache.noCache && !qualifiedNoCache.noStore && qualifiedNoCache.maxAge == 100)
        let qualifiedPrivate = CacheControl(#"max-age=100, private="a, no-store""#)
        #expect(qualifiedPrivate.isPrivate && !qualifiedPrivate.noStore && qualifiedPrivate.maxAge == 100)
        // An escaped quote stays inside its string
        #expect(CacheControl(#"ext="a\", no-store", max-age=5"#).noStore == false)
        #expect(CacheControl(#"ext="a\", no-store", max-age=5"#).maxAge == 5)
        // And a quote never closed hides nothing after it
        #expect(CacheControl(#"ext="x, no-store, private"#).noStore)
    }

    @Test("A 451 is heuristically cacheable (RFC 7725 §3), as a 404 is; a 302 is not")
    func unavailableForLegalReasons() throws {
        let url = try #require(URL(string: "http://app.test/banned"))
        let old = HTTPDate.format(Date(timeIntervalSinceNow: -30 * 86_400))
        for (status, storable) in [(451, true), (404, true), (302, false)] {
            let response = HTTPResponse(status: status, headers: ["Last-Modified": old], body: Data(), url: url)
            #expect(ProxyCachingTransport.isStorable(response, for: HTTPRequest(url: url, endpoint: "")) == storable, "\(status)")
        }
    }

    @Test("The request's directives: Cache-Control, else Pragma: no-cache")
    func requestDirectives() {
        #expect(ProxyCachingTransport.requestDirectives(["Pragma": "no-cache"]).noCache)
        #expect(!ProxyCachingTransport.requestDirectives(["Pragma": "no-cache", "Cache-Control": "max-age=5"]).noCache)
        #expect(ProxyCachingTransport.requestDirectives(["Cache-Control": "only-if-cached, max-age=0"]).onlyIfCached)
        #expect(ProxyCachingTransport.requestDirectives(["Cache-Control": "stale-if-error=30"]).staleIfError == 30)
        #expect(ProxyCachingTransport.requestDirectives(["Cache-Control": "min-fresh=100"]).minFresh == 100)
        // max-stale: a bound, any staleness without one, nothing with a malformed one (RFC 9111 §5.2.1.2)
        #expect(ProxyCachingTransport.requestDirectives(["Cache-Control": "max-stale=60"]).maxStale == 60)
        #expect(ProxyCachingTransport.requestDirectives(["Cache-Control": "max-stale"]).maxStale == Int.max)
        #expect(ProxyCachingTransport.requestDirectives(["Cache-Control": "max-stale=soon"]).maxStale == nil)
    }

    @Test("A request's max-stale takes a stale answer within its bound, unless the answer says must-revalidate or no-cache")
    func maxStale() {
        let asked = CacheControl("max-stale=60"), any = CacheControl("max-stale")
        #expect(ProxyCachingTransport.requestAcceptsStale(asked, of: CacheControl("max-age=10"), staleness: 60))
        #expect(!ProxyCachingTransport.requestAcceptsStale(asked, of: CacheControl("max-age=10"), staleness: 61))
        #expect(ProxyCachingTransport.requestAcceptsStale(any, of: CacheControl("max-age=10"), staleness: 1e9))
        #expect(!ProxyCachingTransport.requestAcceptsStale(any, of: CacheControl("max-age=10, must-revalidate"), staleness: 1))
        #expect(!ProxyCachingTransport.requestAcceptsStale(any, of: CacheControl("no-cache"), staleness: 1))
        #expect(!ProxyCachingTransport.requestAcceptsStale(CacheControl(nil), of: CacheControl("max-age=10"), staleness: 1))
    }

    @Test("The app's validator: If-None-Match by weak comparison (and *), else If-Modified-Since against Last-Modified")
    func validators() {
        let stored: HTTPHeaderFields = ["ETag": #"W/"v1""#, "Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT"]
        #expect(ProxyCachingTransport.validatorMatches(["If-None-Match": #""v0", "v1""#], stored))
        #expect(ProxyCachingTransport.validatorMatches(["If-None-Match": "*"], stored))
        #expect(!ProxyCachingTransport.validatorMatches(["If-None-Match": #""v2""#], stored))
        // If-None-Match decides alone when present
        #expect(!ProxyCachingTransport.validatorMatches(["If-None-Match": #""v2""#, "If-Modified-Since": "Fri, 02 Jan 2026 00:00:00 GMT"], stored))
        #expect(ProxyCachingTransport.validatorMatches(["If-Modified-Since": "Fri, 02 Jan 2026 00:00:00 GMT"], stored))
        #expect(!ProxyCachingTransport.validatorMatches(["If-Modified-Since": "Wed, 31 Dec 2025 00:00:00 GMT"], stored))
        #expect(!ProxyCachingTransport.validatorMatches([:], stored))
        // `*` matches a stored answer that has no ETag too: any current representation does
        #expect(ProxyCachingTransport.validatorMatches(["If-None-Match": "*"], ["Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT"]))
        #expect(ProxyCachingTransport.validatorMatches(["If-None-Match": #""v9", *"#], [:]))
    }

    @Test("Entity tags are read whole: a comma or W/ inside the quotes is the tag's own, W/ only before them makes it weak; lists span lines")
    func entityTags() {
        // Given a stored tag whose opaque part is `W/7` (strong), and one holding a comma
        #expect(!ProxyCachingTransport.validatorMatches(["If-None-Match": #""7""#], ["ETag": #""W/7""#]))
        #expect(ProxyCachingTransport.validatorMatches(["If-None-Match": #""W/7""#], ["ETag": #""W/7""#]))
        #expect(ProxyCachingTransport.validatorMatches(["If-None-Match": #""v1,2""#], ["ETag": #""v1,2""#]))
        #expect(!ProxyCachingTransport.validatorMatches(["If-None-Match": #""v1""#], ["ETag": #""v1,2""#]))
        // And a weak tag matches its strong twin (weak comparison), in a list written over two lines
        let twoLines = HTTPHeaderFields([("If-None-Match", #""a", "b""#), ("If-None-Match", #"W/"c, d""#)])
        #expect(ProxyCachingTransport.validatorMatches(twoLines, ["ETag": #""c, d""#]))
        #expect(!ProxyCachingTransport.validatorMatches(twoLines, ["ETag": #""d""#]))
        // And a tag a server sent without quotes is compared as written
        #expect(ProxyCachingTransport.validatorMatches(["If-None-Match": "abc"], ["ETag": "abc"]))
        let parsed = ProxyCachingTransport.EntityTag.list([#" W/"x", "y,z" ,*"#])
        #expect(parsed.star && parsed.tags == [ProxyCachingTransport.EntityTag(#"W/"x""#)!, ProxyCachingTransport.EntityTag(#""y,z""#)!])
        #expect(parsed.tags.map(\.opaque) == ["x", "y,z"] && parsed.tags.map(\.isWeak) == [true, false])
    }

    @Test("A HEAD's answer says the stored GET's is out of date when an ETag, Last-Modified or Content-Length both carry differs — a length of 0 beside matching validators aside")
    func headSaysChanged() {
        #expect(!ProxyCachingTransport.headSaysChanged(["ETag": #""a""#, "Content-Length": "5"], ["ETag": #""a""#, "Content-Length": "5"]))
        #expect(ProxyCachingTransport.headSaysChanged(["ETag": #""b""#], ["ETag": #""a""#, "Content-Length": "5"]))
        // Another length beside the same tag is another representation (RFC 9111 §4.3.5) ...
        #expect(ProxyCachingTransport.headSaysChanged(["ETag": #""a""#, "Content-Length": "6"], ["ETag": #""a""#, "Content-Length": "5"]))
        // ... but a length of 0 beside a matching validator is a HEAD handler that never counted its body
        #expect(!ProxyCachingTransport.headSaysChanged(["ETag": #""a""#, "Content-Length": "0"], ["ETag": #""a""#, "Content-Length": "5"]))
        #expect(ProxyCachingTransport.headSaysChanged(["Content-Length": "6"], ["ETag": #""a""#, "Content-Length": "5"]))
        #expect(ProxyCachingTransport.headSaysChanged(["Last-Modified": "Fri, 02 Jan 2026 00:00:00 GMT"],
                                                      ["Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT"]))
        #expect(!ProxyCachingTransport.headSaysChanged([:], ["ETag": #""a""#]))
        // A tag said weak on one side only, or a date written in another form, is the same
        #expect(!ProxyCachingTransport.headSaysChanged(["ETag": #"W/"a""#], ["ETag": #""a""#]))
        #expect(!ProxyCachingTransport.headSaysChanged(["Last-Modified": "Thursday, 01-Jan-26 00:00:00 GMT"],
                                                       ["Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT"]))
    }

    @Test("If-Modified-Since on an answer stored without Last-Modified is compared with its Date, else the time it came (RFC 9111 §4.3.2)")
    func modifiedSinceWithoutLastModified() {
        let dated: HTTPHeaderFields = ["Date": "Thu, 01 Jan 2026 00:00:00 GMT"]
        #expect(ProxyCachingTransport.validatorMatches(["If-Modified-Since": "Thu, 01 Jan 2026 00:00:00 GMT"], dated))
        #expect(!ProxyCachingTransport.validatorMatches(["If-Modified-Since": "Wed, 31 Dec 2025 23:59:59 GMT"], dated))
        let received = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01 00:00:00 UTC
        #expect(ProxyCachingTransport.validatorMatches(["If-Modified-Since": "Thu, 01 Jan 2026 00:00:00 GMT"], [:], receivedAt: received))
        #expect(!ProxyCachingTransport.validatorMatches(["If-Modified-Since": "Wed, 31 Dec 2025 00:00:00 GMT"], [:], receivedAt: received))
        #expect(!ProxyCachingTransport.validatorMatches(["If-Modified-Since": "Thu, 01 Jan 2026 00:00:00 GMT"], [:]))
    }

    @Test("The key's variant lists the named headers' values, whitespace around commas aside, a secret one's as a digest; * never matches")
    func variant() {
        let key = ProxyCachingTransport.Key(HTTPRequest(url: Self.url, headers: ["Accept-Language": "fr,  en", "Accept": "a/b"], endpoint: "e"))
        let names = ProxyCachingTransport.Key.varyNames(["Vary": "Accept-Language", "vary": " accept , ACCEPT-language"])
        #expect(names == "accept,accept-language")
        #expect(key.variant(for: names) == "accept=a/b\naccept-language=fr,en")
        #expect(key.variant(for: "*") == nil)
        #expect(key.variant(for: "") == "")
        // Credentials are a digest, never the value; none gives none
        #expect(key.credentials.isEmpty)
        let alice = ProxyCachingTransport.Key(HTTPRequest(url: Self.url, headers: ["Authorization": "Bearer alice"], endpoint: "e"))
        #expect(alice.credentials.count == 64 && !alice.credentials.contains("alice"))
        // And an answer stored for Authorization alone keeps the key it had before other credential fields counted
        let before = Hex.encode(SHA256.hash(data: Data("authorization\nBearer alice\ncookie\n".utf8)))
        #expect(alice.credentials == before)
        // And an API key's header is an identity of its own, by its value, whatever its name's case
        let keyed = { (name: String, value: String) in
            ProxyCachingTransport.Key(HTTPRequest(url: Self.url, headers: [name: value], endpoint: "e")).credentials
        }
        #expect(keyed("X-Api-Key", "key-one") != "" && keyed("X-Api-Key", "key-one") != keyed("X-Api-Key", "key-two"))
        #expect(keyed("x-api-key", "key-one") == keyed("X-API-KEY", "key-one"))
        #expect(keyed("X-Goog-Api-Key", "key-one") != keyed("X-Api-Key", "key-one"))
        // And so is a field off the list whose name says it holds a secret (an app's own `X-Client-Secret`); an
        // ordinary field is no identity
        #expect(keyed("X-Client-Secret", "s-one") != "" && keyed("X-Client-Secret", "s-one") != keyed("X-Client-Secret", "s-two"))
        #expect(keyed("X-Client-Secret", "s-one") != keyed("X-Shop-Token", "s-one"))
        #expect(keyed("X-Trace-Id", "t-one") == "")
        // And a signature, made anew for each request, is none: a signed app's requests still find their stored answers
        #expect(keyed("X-Request-Signature", "sig-1") == "")
        // (nor a session's id, an App Check token or a DPoP proof, made anew at each launch, hour or request; an Azure
        // subscription key is a key, and an identity)
        for name in ["X-Session-Id", "Mcp-Session-Id", "X-Firebase-AppCheck", "DPoP"] { #expect(keyed(name, "value-123456") == "", "\(name)") }
        #expect(keyed("Ocp-Apim-Subscription-Key", "k-one") != "" && keyed("Ocp-Apim-Subscription-Key", "k-one") != keyed("Ocp-Apim-Subscription-Key", "k-two"))
        // And a secret field a Vary names is in the variant as a digest, never its value, still telling values apart
        let cookie = { (value: String) in ProxyCachingTransport.Key(HTTPRequest(url: Self.url, headers: ["Cookie": value], endpoint: "e")) }
        let variant = cookie("sid=secret-session").variant(for: "cookie") ?? ""
        #expect(variant.hasPrefix("cookie=sha256:") && !variant.contains("secret-session"))
        #expect(variant != cookie("sid=other-session").variant(for: "cookie") && variant == cookie("sid=secret-session").variant(for: "cookie"))
    }

    @Test("On a full disk the proxy goes on answering; once a write has failed answers are not said stored, why is said once, and storing resumes (and the failure is over) when the disk has room")
    func fullDisk() async throws {
        // Given a cache whose file cannot grow (as on a full disk)
        let cache = try ProxyCache.open(at: TemporaryDirectory.url("kiosk-proxy-cache").appendingPathComponent("cache.sqlite").path,
                                        maxBytes: 10_000_000)
        let pages = try await cache.writer.write { db in try Int.fetchOne(db, sql: "PRAGMA page_count")! }
        try await cache.writer.write { db in try db.execute(sql: "PRAGMA max_page_count = \(pages)") }
        let warnings = Mutex<[String]>([])
        let upstream = ScriptedTransport(always: .respond(200, body: String(repeating: "x", count: 100_000)))
        let transport = ProxyCachingTransport(base: upstream, cache: cache, settings: ProxyCacheSettings(), now: { Date() }) { warning in
            warnings.withLock { $0.append(warning) }
        }
        let send = { (path: String) in try await transport.send(HTTPRequest(url: URL(string: "http://app.test/\(path)")!, endpoint: "app.test")) }

        // When an answer comes through and its write fails, then two more come; then the disk has room again, and two more
        let first = try await send("1")
        cache.flush()
        let second = try await send("2")
        let third = try await send("3")
        cache.flush()
        let failingWhileFull = cache.isFailing
        try await cache.writer.write { db in try db.execute(sql: "PRAGMA max_page_count = 1000000") }
        let fourth = try await send("4")
        cache.flush()
        let fifth = try await send("5")
        cache.flush()

        // Then every answer reached the app. The first was queued before the failure was known; the next three, given
        // while the last write had failed, are not said stored (the second and third were not: their write failed too;
        // the fourth was). The reason was said once. Once a write succeeded, the fifth is said stored and is.
        #expect([first, second, third, fourth, fifth].allSatisfy { $0.status == 200 && $0.body.count == 100_000 })
        #expect(first.cacheStatus?.isStored == true)
        #expect([second, third, fourth].allSatisfy { $0.cacheStatus?.isStored == false })
        #expect(fifth.cacheStatus?.isStored == true)
        #expect(warnings.withLock { $0.count } == 1)
        #expect(warnings.withLock { $0.first?.contains("disk is full") } == true)
        #expect(transport.failure.withLock { $0 }?.contains("disk is full") == true)
        #expect(try cache.entries().map(\.url).sorted() == ["http://app.test/4", "http://app.test/5"])
        // And the cache says it is failing while the disk is full, and no longer once a write succeeded (the console's
        // banner goes with it)
        #expect(failingWhileFull && !cache.isFailing)
    }

    @Test("An upstream that cannot be trusted (its certificate, a retired TLS) is the app's error, marked with the cache's status, never hidden behind a stored answer; a plain failure is")
    func trustFailuresAreNotStoodIn() async throws {
        // Given a stored answer for /a in fallback, then an upstream whose certificate fails, then one that breaks the connection
        let cache = try ProxyCache.open(at: TemporaryDirectory.url("kiosk-proxy-trust").appendingPathComponent("cache.sqlite").path,
                                        maxBytes: 10_000_000)
        let untrusted = "the upstream's certificate for app.test is not trusted: it expired on 2026-01-01"
        let upstream = ScriptedTransport([.respond(200, body: "v1"), .fail(.transport(url: "http://app.test/a", message: untrusted)),
                                          .fail(.transport(url: "http://app.test/a", message: "the connection closed"))])
        let transport = ProxyCachingTransport(base: upstream, cache: cache, settings: ProxyCacheSettings(), now: { Date() }) { _ in }
        let request = HTTPRequest(url: URL(string: "http://app.test/a")!, endpoint: "app.test")
        _ = try await transport.send(request)
        cache.flush()

        // When the app asks again and the certificate fails, then it gets the failure, saying why, marked with what the cache
        // did (as any failure the proxy answers with its own 502 is: the header and the log say the same)
        await #expect { try await transport.send(request) } throws: { error in
            String(describing: error).contains(untrusted)
                && (error as? CacheMarkedFailure)?.cacheStatus.headerValue == "Kiosk;fwd=stale;detail=network"
        }
        // And when the connection merely breaks, the stored answer stands in as before
        let standIn = try await transport.send(request)
        #expect(String(decoding: standIn.body, as: UTF8.self) == "v1" && standIn.cacheStatus?.decision == .fallback)
    }

    @Test("When a stored answer could stand in, the upstream gets --fallback-after to answer; past it the stored answer is given and the request goes again behind, its answer stored; with nothing stored it gets the transport's whole time")
    func slowUpstreamFallsBack() async throws {
        // Given a stored answer v1 for /a, and an upstream that then times out once (as the transport does past the
        // request's own timeout), then answers v2
        let cache = try ProxyCache.open(at: TemporaryDirectory.url("kiosk-proxy-slow").appendingPathComponent("cache.sqlite").path,
                                        maxBytes: 10_000_000)
        let upstream = ScriptedTransport([.respond(200, body: "v1"), .fail(.timeout(url: "http://app.test/a", seconds: 8)),
                                          .respond(200, body: "v2"), .respond(200, body: "b")])
        let transport = ProxyCachingTransport(base: upstream, cache: cache, settings: ProxyCacheSettings(), patience: .seconds(8),
                                              now: { Date() }) { _ in }
        let request = { (path: String) in HTTPRequest(url: URL(string: "http://app.test/\(path)")!, endpoint: "app.test") }
        let first = try await transport.send(request("a"))
        cache.flush()

        // When the app asks for /a again
        let answer = try await transport.send(request("a"))

        // Then the request went upstream with 8 s to answer (the first, with nothing stored, with the transport's own time)
        #expect(first.status == 200 && upstream.requests.first?.timeout == nil)
        #expect(upstream.requests.dropFirst().first?.timeout == .seconds(8))
        // And, that passed, the app got the stored answer, marked as the fallback standing in
        #expect(answer.status == 200 && String(decoding: answer.body, as: UTF8.self) == "v1")
        #expect(answer.cacheStatus?.decision == .fallback && answer.cacheStatus?.forwardStatus == nil)
        // And the request went again behind, without the short wait, and what it brought is stored for next time
        var stored: [String] = []
        for _ in 0..<500 {
            cache.flush()
            stored = try cache.entries().compactMap { try cache.entry(id: $0.id).map { String(decoding: $0.body, as: UTF8.self) } }
            if stored == ["v2"] { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(stored == ["v2"])
        #expect(upstream.requests.count == 3 && upstream.requests.last?.timeout == nil)

        // And a request with nothing stored to stand in waits the transport's whole time
        _ = try await transport.send(request("b"))
        #expect(upstream.requests.last?.url.path == "/b" && upstream.requests.last?.timeout == nil)
    }

    @Test("A stored CORS preflight stands in for a slow upstream after --fallback-after, as its request's answer does, in either mode")
    func slowPreflightFallsBack() async throws {
        // Given a preflight stored in http mode, and an upstream that then times out (as the transport does past its patience)
        let cache = try ProxyCache.open(at: TemporaryDirectory.url("kiosk-proxy-slow-preflight").appendingPathComponent("cache.sqlite").path,
                                        maxBytes: 10_000_000)
        let allowed: HTTPHeaderFields = ["Access-Control-Allow-Origin": "http://page.test", "Access-Control-Allow-Methods": "POST",
                                         "Access-Control-Max-Age": "600"]
        let upstream = ScriptedTransport([.respond(204, headers: allowed), .fail(.timeout(url: "http://api.test/items", seconds: 8)),
                                          .respond(204, headers: allowed)])
        var settings = ProxyCacheSettings()
        settings.mode = .http
        let transport = ProxyCachingTransport(base: upstream, cache: cache, settings: settings, patience: .seconds(8), now: { Date() }) { _ in }
        let preflight = HTTPRequest(method: "OPTIONS", url: URL(string: "http://api.test/items")!,
                                    headers: ["Origin": "http://page.test", "Access-Control-Request-Method": "POST"], endpoint: "api.test")
        _ = try await transport.send(preflight)
        cache.flush()
        // When the browser sends it again
        let answer = try await transport.send(preflight)
        // Then the upstream had the patience a GET gets, and past it the stored preflight answered
        #expect(upstream.requests.dropFirst().first?.timeout == .seconds(8))
        #expect(answer.status == 204 && answer.headers["Access-Control-Allow-Origin"] == "http://page.test")
        #expect(answer.cacheStatus?.decision == .fallback)
    }

    @Test("A request that takes no stored answer unconfirmed (no-cache, as a long poll asks) gets the upstream's whole time; a failure still has the stored answer stand in")
    func noCacheRequestIsWaitedFor() async throws {
        // Given a stored answer for /poll, and an upstream that then fails
        let cache = try ProxyCache.open(at: TemporaryDirectory.url("kiosk-proxy-poll").appendingPathComponent("cache.sqlite").path,
                                        maxBytes: 10_000_000)
        let upstream = ScriptedTransport([.respond(200, body: "event 1"), .fail(.offline(host: "app.test"))])
        let transport = ProxyCachingTransport(base: upstream, cache: cache, settings: ProxyCacheSettings(), patience: .seconds(8),
                                              now: { Date() }) { _ in }
        var poll = HTTPRequest(url: URL(string: "http://app.test/poll")!, headers: ["Cache-Control": "no-cache"], endpoint: "app.test")
        _ = try await transport.send(poll)
        cache.flush()
        // When the app polls again, saying no-cache
        poll.headers["Cache-Control"] = "no-cache"
        let answer = try await transport.send(poll)
        // Then the upstream was given its whole time (no 8 s patience), and its failure had the stored answer stand in
        #expect(upstream.requests.count == 2 && upstream.requests.last?.timeout == nil)
        #expect(answer.status == 200 && answer.cacheStatus?.decision == .fallback)
    }

    @Test("A write to a URL keeps its stored answer for when the upstream cannot answer: fallback and offline give it, http gives it only confirmed, a slow upstream is waited for")
    func changedAnswerStandsInOnlyForFailures() async throws {
        // Given /dogs stored as v1 in fallback, with 8 s for the upstream before a stored answer stands in for it
        let cache = try ProxyCache.open(at: TemporaryDirectory.url("kiosk-proxy-changed").appendingPathComponent("cache.sqlite").path,
                                        maxBytes: 10_000_000)
        let url = "http://app.test/dogs"
        let offline = KioskError.offline(host: "app.test")
        let upstream = ScriptedTransport([.respond(200, body: "v1"), .respond(201, headers: ["Location": "/dogs/7"]),
                                          .fail(.timeout(url: url, seconds: 60)), .fail(offline), .fail(offline), .fail(offline)])
        let transport = ProxyCachingTransport(base: upstream, cache: cache, settings: ProxyCacheSettings(), patience: .seconds(8),
                                              now: { Date() }) { _ in }
        let get = HTTPRequest(url: URL(string: url)!, endpoint: "app.test")
        var post = get
        post.method = "POST"
        _ = try await transport.send(get)
        cache.flush()

        // When the app adds a dog, and the upstream says it did
        #expect(try await transport.send(post).status == 201)

        // Then the list is kept, marked changed
        #expect(try cache.entries().first { $0.url == url }?.changedAt != nil)
        // And the next read waits for the upstream as long as the transport allows, not 8 s: the app reads back its write
        let slow = try await transport.send(get)
        #expect(upstream.requests.count == 3 && upstream.requests.last?.timeout == nil)
        // And past that, and when the upstream cannot be reached at all, the list as it was stands in: what the app saw last
        #expect(String(decoding: slow.body, as: UTF8.self) == "v1" && slow.cacheStatus?.decision == .fallback)
        let gone = try await transport.send(get)
        #expect(String(decoding: gone.body, as: UTF8.self) == "v1" && gone.cacheStatus?.decision == .fallback)
        #expect(gone.cacheStatus?.forward == .stale)
        // And offline it is given too
        transport.settings.withLock { $0.offline = true }
        let replayed = try await transport.send(get)
        #expect(String(decoding: replayed.body, as: UTF8.self) == "v1" && replayed.cacheStatus?.decision == .offline)

        // When the mode is http, then it is given only once confirmed: with the upstream gone, a 504 that says why
        transport.settings.withLock { $0 = ProxyCacheSettings(mode: .http) }
        await #expect { try await transport.send(get) } throws: { error in
            (error as? CacheMarkedFailure).map { if case .changed? = $0.withheld { true } else { false } } ?? false
        }
        // And a request that takes nothing but a stored answer gets none
        var onlyIfCached = get
        onlyIfCached.headers["Cache-Control"] = "only-if-cached"
        #expect(try await transport.send(onlyIfCached).status == 504)
        #expect(upstream.requests.count == 5)
    }
}
