import Foundation
import KioskDemoUpstream
import Testing

@Suite("Validators and conditional requests")
struct CachingTests {
    @Test("every API and image response carries a strong ETag and Cache-Control, and a matching If-None-Match gets 304 with no body")
    func conditionalRequests() async throws {
        try await withUpstream { upstream in
            // Given one URL of each API and a picture, with the Cache-Control each must carry
            let urls: [(URL, String)] = [
                (upstream.nytURL("emailed/1.json"), "public, max-age=3600"),
                (upstream.marvelURL("characters", [("limit", "5")]), "public, max-age=86400"),
                (upstream.url("/api/character", [("page", "3")]), "public, max-age=86400"),
                (upstream.dogsURL, "public, max-age=3600"),
                (upstream.url("/api/character/avatar/1.jpeg"), "public, max-age=604800"),
            ]
            for (url, cacheControl) in urls {
                // When each is fetched, then fetched again with its own ETag and with another one
                let first = try await Client.get(url)
                let etag = try #require(first.header("ETag"))
                let again = try await Client.get(url, headers: ["If-None-Match": etag])
                let changed = try await Client.get(url, headers: ["If-None-Match": "\"something-else\""])

                // Then the ETag is strong, a match gets 304 with no body, and a mismatch gets the same document again
                #expect(first.status == 200)
                #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && !etag.hasPrefix("W/"))
                #expect(first.header("Cache-Control") == cacheControl)
                #expect(again.status == 304, "\(url)")
                #expect(again.body.isEmpty)
                #expect(again.header("ETag") == etag)
                #expect(changed.status == 200)
                #expect(changed.body == first.body)
            }
        }
    }

    @Test("HEAD answers the headers of GET without a body")
    func head() async throws {
        try await withUpstream { upstream in
            // When the dogs document is asked for with GET and with HEAD
            let get = try await Client.get(upstream.dogsURL)
            let head = try await Client.send(upstream.dogsURL, method: "HEAD")
            // Then HEAD has GET's status, ETag and length, and no body
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("ETag") == get.header("ETag"))
            #expect(head.header("Content-Length") == String(get.body.count))
        }
    }

    @Test("the ETag is stable across requests and differs between documents")
    func etagsAreStable() async throws {
        try await withUpstream { upstream in
            // When page 1 is fetched twice and page 2 once
            let one = try await Client.get(upstream.url("/api/character", [("page", "1")])).header("ETag")
            let again = try await Client.get(upstream.url("/api/character", [("page", "1")])).header("ETag")
            let two = try await Client.get(upstream.url("/api/character", [("page", "2")])).header("ETag")
            // Then page 1 has one ETag both times, and page 2 another
            #expect(one != nil)
            #expect(one == again)
            #expect(one != two)
        }
    }
}
