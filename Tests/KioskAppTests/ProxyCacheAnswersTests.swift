import Foundation
import KioskCore
import KioskNetwork
import KioskTestSupport
import Synchronization
import Testing
@testable import KioskApp
@testable import KioskStore

/// What the proxy's cache gives an app in the cases a review found wrong: an `Age` too large to count, a stale answer
/// standing in for a failed revalidation, `only-if-cached` with the request's own limits, preconditions on a stored
/// error, the cookies of a 304, and a client on another machine.
@Suite("kiosk proxy's cache answers")
struct ProxyCacheAnswersTests {
    private static func transport(_ upstream: ScriptedTransport, mode: ProxyCacheMode, name: String) throws -> (ProxyCachingTransport, ProxyCache) {
        let cache = try ProxyCache.open(at: TemporaryDirectory.url(name).appendingPathComponent("cache.sqlite").path, maxBytes: 10_000_000)
        return (ProxyCachingTransport(base: upstream, cache: cache, settings: ProxyCacheSettings(mode: mode), now: { Date() }) { _ in }, cache)
    }

    private static func request(_ path: String, _ headers: HTTPHeaderFields = [:], purpose: HTTPRequest.Purpose = .proxied) -> HTTPRequest {
        HTTPRequest(url: URL(string: "http://app.test/\(path)")!, headers: headers, endpoint: "app.test", purpose: purpose)
    }

    private static func text(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    @Test("An Age field counts as its delta-seconds, 2^31 at most however many digits it has, and as 0 when it is not one")
    func ageValues() {
        #expect(CacheControl.age("120") == 120 && CacheControl.age(" 7 ") == 7)
        #expect(CacheControl.age("99999999999999999999999") == 2_147_483_648)
        #expect(CacheControl.age("-5") == 0 && CacheControl.age("1.5") == 0 && CacheControl.age("inf") == 0 && CacheControl.age(nil) == 0)
        // A list is the field sent twice: its first member counts, as the first line does
        #expect(CacheControl.age("1, 2") == 1)
    }

    @Test("A stored answer that came with an Age too large to count stands in for a failed upstream, its Age 2^31 however long it was kept, never a crash")
    func hugeAgeStandsIn() async throws {
        // Given an answer stored with an Age of 23 digits, then an upstream that cannot be reached
        let upstream = ScriptedTransport([.respond(200, headers: ["Cache-Control": "max-age=60", "Age": "99999999999999999999999"], body: "v1"),
                                          .fail(.offline(host: "app.test"))])
        let cache = try ProxyCache.open(at: TemporaryDirectory.url("kiosk-proxy-huge-age").appendingPathComponent("cache.sqlite").path,
                                        maxBytes: 10_000_000)
        let now = Mutex(Date())
        let transport = ProxyCachingTransport(base: upstream, cache: cache, settings: ProxyCacheSettings(mode: .fallback),
                                              now: { now.withLock { $0 } }) { _ in }
        _ = try await transport.send(Self.request("a"))
        cache.flush()

        // When the app asks again, a day later
        now.withLock { $0 += 86_400 }
        let answer = try await transport.send(Self.request("a"))

        // Then it gets the stored answer, as old as an Age can say (RFC 9111 §1.2.2: a sum that overflows is 2^31)
        #expect(Self.text(answer) == "v1" && answer.cacheStatus?.decision == .fallback)
        #expect(answer.headers["Age"] == "2147483648")
    }

    @Test("A 304 read with --insecure-upstream renews no stored HTTPS answer: anyone on the way could have written it")
    func uncheckedNotModifiedRenewsNothing() async throws {
        // Given an HTTPS answer stored stale at once with an ETag, read with the upstream's certificate checked
        let path = TemporaryDirectory.url("kiosk-proxy-unchecked-304").appendingPathComponent("cache.sqlite").path
        let cache = try ProxyCache.open(at: path, maxBytes: 10_000_000)
        let https = HTTPRequest(url: URL(string: "https://app.test/a")!, endpoint: "app.test", purpose: .proxied)
        let checked = ProxyCachingTransport(base: ScriptedTransport([.respond(200, headers: ["Cache-Control": "max-age=0", "ETag": "\"v1\""], body: "v1"),
                                                                     .fail(.offline(host: "app.test"))]),
                                            cache: cache, settings: ProxyCacheSettings(mode: .http), now: { Date() }) { _ in }
        _ = try await checked.send(https)
        cache.flush()
        // When a proxy that checks no certificate asks again and gets a 304 with fields of its own
        let unchecked = ProxyCachingTransport(base: ScriptedTransport([.respond(304, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=600",
                                                                                             "X-Renewed": "by-anyone"], body: "")]),
                                              cache: cache, settings: ProxyCacheSettings(mode: .http), verifiesUpstream: false,
                                              now: { Date() }) { _ in }
        _ = try await unchecked.send(https)
        cache.flush()
        // Then the stored answer is as it was: given in place of a failure later, it carries none of the 304's fields
        let later = try await checked.send(https)
        #expect(Self.text(later) == "v1" && later.headers["X-Renewed"] == nil, "\(later.headers)")
    }

    @Test("When the revalidation of a stale answer cannot reach the upstream, an app's plain GET gets the stored answer whole, even if it left the store meanwhile, never a 304 to the proxy's validator")
    func staleStandInIsWhole() async throws {
        // Given, in http mode, an answer stored stale at once with an ETag, and an upstream that then cannot be reached —
        // and while the proxy asks it, the answer leaves the store (evicted, cleared from the console)
        let cache = try ProxyCache.open(at: TemporaryDirectory.url("kiosk-proxy-stale-whole").appendingPathComponent("cache.sqlite").path,
                                        maxBytes: 10_000_000)
        let upstream = ScriptedTransport([.respond(200, headers: ["Cache-Control": "max-age=0", "ETag": "\"v1\""], body: "v1"),
                                          .reply { _ in
                                              _ = try cache.clear()
                                              throw KioskError.offline(host: "app.test")
                                          }])
        let transport = ProxyCachingTransport(base: upstream, cache: cache, settings: ProxyCacheSettings(mode: .http), now: { Date() }) { _ in }
        _ = try await transport.send(Self.request("a"))
        cache.flush()

        // When the app asks again, with no validator of its own
        let answer = try await transport.send(Self.request("a"))

        // Then the proxy asked the upstream with the stored validator, and, that failing, the app got the body it asked for
        #expect(upstream.requests.last?.headers["If-None-Match"] == "\"v1\"")
        #expect(answer.status == 200 && Self.text(answer) == "v1")
        #expect(answer.cacheStatus?.decision == .offline)
    }

    @Test("only-if-cached is never given an answer that set a cookie (a bypass), and holds the request's max-age in fallback mode: both a 504 with no upstream request")
    func onlyIfCachedLimits() async throws {
        // Given, in fallback mode, a fresh answer that set a cookie (/a) and a fresh one that did not (/b)
        let upstream = ScriptedTransport([.respond(200, headers: ["Cache-Control": "max-age=600", "Set-Cookie": "s=1"], body: "a"),
                                          .respond(200, headers: ["Cache-Control": "max-age=600"], body: "b")])
        let (transport, cache) = try Self.transport(upstream, mode: .fallback, name: "kiosk-proxy-only-if-cached")
        _ = try await transport.send(Self.request("a"))
        _ = try await transport.send(Self.request("b"))
        cache.flush()

        // When the app asks for each with only-if-cached, and for /b with max-age=0 beside it
        let cookie = try await transport.send(Self.request("a", ["Cache-Control": "only-if-cached"]))
        let plain = try await transport.send(Self.request("b", ["Cache-Control": "only-if-cached"]))
        let tooOld = try await transport.send(Self.request("b", ["Cache-Control": "only-if-cached, max-age=0"]))

        // Then only the plain one is answered from the store; the other two are 504s; none reached the upstream
        #expect(plain.status == 200 && Self.text(plain) == "b")
        #expect(cookie.status == 504 && tooOld.status == 504)
        #expect(upstream.requests.count == 2)
        // And each 504 says it was the request's only-if-cached, not an offline proxy, with why it would have gone on
        #expect(tooOld.headers["Cache-Status"] == "Kiosk;fwd=request;detail=only-if-cached", "\(tooOld.headers)")
        let never = try await transport.send(Self.request("c", ["Cache-Control": "only-if-cached"]))
        #expect(never.status == 504 && never.headers["Cache-Status"] == "Kiosk;fwd=uri-miss;detail=only-if-cached",
                "\(never.headers)")
        // And the answer that set a cookie was passed over by the cache's rule, fresh as it is — in http mode too, not "stale"
        let http = ProxyCachingTransport(base: upstream, cache: cache, settings: ProxyCacheSettings(mode: .http), now: { Date() }) { _ in }
        for passedOver in [cookie, try await http.send(Self.request("a", ["Cache-Control": "only-if-cached"]))] {
            #expect(passedOver.headers["Cache-Status"] == "Kiosk;fwd=bypass;detail=only-if-cached", "\(passedOver.headers)")
        }
    }

    @Test("A stored 404 is given as it is to a request whose If-Modified-Since its Last-Modified meets: preconditions speak of 2xx answers only")
    func storedErrorIgnoresPreconditions() async throws {
        // Given, in http mode, a fresh 404 stored with a Last-Modified
        let modified = "Wed, 01 Jan 2025 00:00:00 GMT"
        let upstream = ScriptedTransport([.respond(404, headers: ["Cache-Control": "max-age=600", "Last-Modified": modified], body: "gone")])
        let (transport, cache) = try Self.transport(upstream, mode: .http, name: "kiosk-proxy-stored-404")
        _ = try await transport.send(Self.request("a"))
        cache.flush()

        // When the app asks again, with If-Modified-Since that date
        let answer = try await transport.send(Self.request("a", ["If-Modified-Since": modified]))

        // Then it gets the 404 and its body, from the store
        #expect(answer.status == 404 && Self.text(answer) == "gone")
        #expect(answer.cacheStatus?.decision == .fresh && upstream.requests.count == 1)
    }

    @Test("A 304 that confirms a stored answer gives the app the whole answer with the cookie the 304 set, and the store keeps only that it set one")
    func notModifiedCookies() async throws {
        // Given, in http mode, an answer stored stale at once with an ETag, and an upstream that confirms it, setting a cookie
        let upstream = ScriptedTransport([.respond(200, headers: ["Cache-Control": "max-age=0", "ETag": "\"v1\""], body: "v1"),
                                          .respond(304, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=0",
                                                                  "Set-Cookie": "session=secret-value"])])
        let (transport, cache) = try Self.transport(upstream, mode: .http, name: "kiosk-proxy-304-cookie")
        _ = try await transport.send(Self.request("a"))
        cache.flush()

        // When the app asks again with no validator of its own
        let answer = try await transport.send(Self.request("a"))
        cache.flush()

        // Then it gets a 200 with the stored body and the 304's cookie
        #expect(answer.status == 200 && Self.text(answer) == "v1")
        #expect(answer.headers.values(for: "Set-Cookie") == ["session=secret-value"])
        // And the stored answer, refreshed, holds no cookie's value: only the mark that one was set
        let entry = try #require(try cache.entries().first.flatMap { try cache.entry(id: $0.id) })
        #expect(entry.headers.values(for: "Set-Cookie") == [""])
        #expect(!entry.headers.map(\.value).joined().contains("secret-value"))
    }

    @Test("A client on another machine is never given an answer a local app stored, nor a local app one it stored")
    func networkClientsHaveTheirOwnAnswers() async throws {
        // Given a fresh answer stored for a local app
        let upstream = ScriptedTransport([.respond(200, headers: ["Cache-Control": "max-age=600"], body: "local"),
                                          .respond(200, headers: ["Cache-Control": "max-age=600"], body: "network")])
        let (transport, cache) = try Self.transport(upstream, mode: .http, name: "kiosk-proxy-network-identity")
        _ = try await transport.send(Self.request("a"))
        cache.flush()

        // When a client on another machine asks for the same URL, and then each asks again
        let remote = try await transport.send(Self.request("a", purpose: .proxiedForNetwork))
        cache.flush()
        let remoteAgain = try await transport.send(Self.request("a", purpose: .proxiedForNetwork))
        let localAgain = try await transport.send(Self.request("a"))

        // Then the remote client's first request went upstream; after that each is given its own stored answer
        #expect(Self.text(remote) == "network" && remote.cacheStatus?.decision != .fresh)
        #expect(Self.text(remoteAgain) == "network" && Self.text(localAgain) == "local")
        #expect(upstream.requests.count == 2)
    }

    @Test("To clients on other machines the cache is shared: one's private answer is not given to the next, and s-maxage, not max-age, says how long an answer is fresh")
    func sharedForNetworkClients() async throws {
        // Given, in http mode, a URL whose answers are private, and one fresh for a minute to a browser but 0 s to a shared cache
        let upstream = ScriptedTransport([.respond(200, headers: ["Cache-Control": "private, max-age=600"], body: "alice's"),
                                          .respond(200, headers: ["Cache-Control": "private, max-age=600"], body: "bob's"),
                                          .respond(200, headers: ["Cache-Control": "max-age=60, s-maxage=0"], body: "v1"),
                                          .respond(200, headers: ["Cache-Control": "max-age=60, s-maxage=0"], body: "v2"),
                                          .respond(200, headers: ["Cache-Control": "private, max-age=600"], body: "mine"),
                                          .respond(200, headers: ["Cache-Control": "max-age=60, s-maxage=0"], body: "v3")])
        let (transport, cache) = try Self.transport(upstream, mode: .http, name: "kiosk-proxy-network-shared")

        // When two clients on other machines ask for the private URL in turn, then for the other one in turn
        let alice = try await transport.send(Self.request("me", purpose: .proxiedForNetwork))
        cache.flush()
        let bob = try await transport.send(Self.request("me", purpose: .proxiedForNetwork))
        _ = try await transport.send(Self.request("list", purpose: .proxiedForNetwork))
        cache.flush()
        let again = try await transport.send(Self.request("list", purpose: .proxiedForNetwork))

        // Then each got the upstream's answer for them, none stored: the second went upstream too
        #expect(Self.text(alice) == "alice's" && Self.text(bob) == "bob's")
        #expect(Self.text(again) == "v2" && again.cacheStatus?.decision != .fresh)
        // And a local app, whose own cache it is, has its private answer stored and max-age read
        _ = try await transport.send(Self.request("me"))
        _ = try await transport.send(Self.request("list"))
        cache.flush()
        #expect(Self.text(try await transport.send(Self.request("me"))) == "mine")
        #expect(Self.text(try await transport.send(Self.request("list"))) == "v3")
        #expect(upstream.requests.count == 6)
    }

    @Test("An archive's private answer, imported into the cache, stands in for this machine's apps but never for a client on another machine")
    func importedPrivateNotShared() async throws {
        // Given, offline, an imported answer marked private, and another one public
        let (_, cache) = try Self.transport(ScriptedTransport([]), mode: .fallback, name: "kiosk-proxy-imported-private")
        let now = Date()
        for (path, control) in [("me", "private, max-age=600"), ("list", "max-age=600")] {
            _ = try cache.store([ProxyCacheAnswer(method: "GET", url: "http://app.test/\(path)", host: "app.test",
                                                  credentials: ProxyCacheAnswer.importedCredentials, vary: "", variant: "", status: 200,
                                                  headers: ["Cache-Control": control], body: Data(path.utf8), requestTime: now, responseTime: now)])
        }
        let offline = ProxyCachingTransport(base: ScriptedTransport([]), cache: cache, settings: ProxyCacheSettings(mode: .fallback, offline: true),
                                            now: { Date() }) { _ in }
        // When a local app and a client on another machine ask for each
        let local = try await offline.send(Self.request("me"))
        let remote = try await offline.send(Self.request("me", purpose: .proxiedForNetwork))
        let remoteList = try await offline.send(Self.request("list", purpose: .proxiedForNetwork))
        // Then the private one is the local app's alone; the public one stands for both
        #expect(Self.text(local) == "me" && remote.status == 504)
        #expect(Self.text(remoteList) == "list")
    }

    @Test("In fallback, an unreachable upstream with only another variant stored says so to a local app, and nothing to a client on another machine")
    func otherVariantWithheld() async throws {
        // Given, in fallback mode, a URL's gzip variant stored (Vary: Accept-Encoding), then an upstream that cannot be reached
        let upstream = ScriptedTransport([.respond(200, headers: ["Cache-Control": "max-age=600", "Vary": "Accept-Encoding"], body: "gz"),
                                          .fail(.offline(host: "app.test")), .fail(.offline(host: "app.test"))])
        let (transport, cache) = try Self.transport(upstream, mode: .fallback, name: "kiosk-proxy-other-variant")
        _ = try await transport.send(Self.request("a", ["Accept-Encoding": "gzip"]))
        cache.flush()
        // When a local app and a client on another machine ask for it without gzip
        for (purpose, expected) in [(HTTPRequest.Purpose.proxied, CacheMarkedFailure.Withheld.otherVariants(varyBy: ["accept-encoding"])), (.proxiedForNetwork, nil)] {
            await #expect {
                _ = try await transport.send(Self.request("a", ["Accept-Encoding": "identity"], purpose: purpose))
            } throws: { error in
                // Then the local app's failure says answers are held for other variants; the other machine's says nothing of them
                (error as? CacheMarkedFailure)?.withheld == expected
            }
        }
    }

    @Test("Offline, a client on another machine is not told that a local app's answer is stored for a URL: a plain miss")
    func offlineNetworkClientLearnsNothing() async throws {
        // Given an answer stored for a local app's request, with its session
        let upstream = ScriptedTransport([.respond(200, headers: ["Cache-Control": "max-age=600"], body: "local")])
        let (transport, cache) = try Self.transport(upstream, mode: .fallback, name: "kiosk-proxy-network-offline")
        _ = try await transport.send(Self.request("a", ["Cookie": "session=mine"]))
        cache.flush()
        let offline = ProxyCachingTransport(base: upstream, cache: cache, settings: ProxyCacheSettings(mode: .fallback, offline: true),
                                            now: { Date() }) { _ in }
        // When, offline, a client on another machine and the local app without the answer's identity ask for it
        let remote = try await offline.send(Self.request("a", purpose: .proxiedForNetwork))
        let local = try await offline.send(Self.request("a", ["Cookie": "session=other"]))
        // Then the remote one gets a 504 that says nothing of what is stored, the local one that it is held for others
        #expect(remote.status == 504 && remote.headers["Cache-Status"] == "Kiosk;fwd=miss;detail=offline")
        #expect(!Self.text(remote).contains("holds answers"))
        #expect(local.status == 504 && local.headers["Cache-Status"] == "Kiosk;fwd=vary-miss;detail=offline")
        #expect(Self.text(local).contains("holds answers"))
    }
}
