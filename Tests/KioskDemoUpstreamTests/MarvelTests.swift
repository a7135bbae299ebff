import Foundation
import KioskDemoUpstream
import KioskTestSupport
import Testing

@Suite("Marvel characters emulation")
struct MarvelTests {
    @Test("a request signed with md5(ts + private + public) is accepted")
    func goodHashIsAccepted() async throws {
        // Given the example keys from Marvel's documentation and its published hash
        let configuration = DemoUpstreamConfiguration(marvelPublicKey: "1234", marvelPrivateKey: "abcd")
        try await withUpstream(configuration) { upstream in
            let url = upstream.url("/v1/public/characters",
                                   [("ts", "1"), ("apikey", "1234"), ("hash", "ffd275c5130566a2916217b101f26150")])
            // When the characters list is asked for with ts 1, apikey 1234 and that hash
            let response = try await Client.get(url)
            // Then it is answered
            #expect(response.status == 200)
        }
    }

    @Test("a wrong hash or public key is 401 InvalidCredentials")
    func badCredentialsAre401() async throws {
        try await withUpstream { upstream in
            // Given a hash made from this upstream's keys at ts 42
            let timestamp = "42"
            let goodHash = MarvelSignature.hash(timestamp: timestamp, privateKey: upstream.keys.marvelPrivate,
                                                  publicKey: upstream.keys.marvelPublic)
            let cases = [
                [("ts", timestamp), ("apikey", upstream.keys.marvelPublic), ("hash", "0123456789abcdef0123456789abcdef")],
                [("ts", timestamp), ("apikey", "someone-else"), ("hash", goodHash)],
                [("ts", "43"), ("apikey", upstream.keys.marvelPublic), ("hash", goodHash)],
            ]
            for query in cases {
                // When the list is asked for with a wrong hash, another public key, or another ts
                let response = try await Client.get(upstream.url("/v1/public/characters", query))
                // Then each is a 401 with Marvel's code and message
                #expect(response.status == 401)
                let body = try response.object()
                #expect(body["code"] as? String == "InvalidCredentials")
                #expect(body["message"] as? String == "That hash, timestamp and key combination is invalid.")
            }
        }
    }

    @Test("a missing ts, apikey or hash is 409 MissingParameter")
    func missingParametersAre409() async throws {
        try await withUpstream { upstream in
            let keys = upstream.keys
            let cases: [([(String, String)], String)] = [
                ([("apikey", keys.marvelPublic), ("hash", "x")], "You must provide a timestamp."),
                ([("ts", "1"), ("hash", "x")], "You must provide a user key."),
                ([("ts", "1"), ("apikey", keys.marvelPublic)], "You must provide a hash."),
            ]
            for (query, message) in cases {
                // When the list is asked for without one of them
                let response = try await Client.get(upstream.url("/v1/public/characters", query))
                // Then it is a 409 naming what is missing, in Marvel's words
                #expect(response.status == 409)
                let body = try response.object()
                #expect(body["code"] as? String == "MissingParameter")
                #expect(body["message"] as? String == message)
            }
        }
    }

    @Test("the catalog holds at least 150 characters, including every awkward case real data has")
    func catalogHasAwkwardCases() async throws {
        try await withUpstream { upstream in
            // When every page of 100 is read
            var characters: [[String: Any]] = []
            var total = Int.max
            while characters.count < total {
                let response = try await Client.get(upstream.marvelURL("characters", [("limit", "100"), ("offset", "\(characters.count)")]))
                #expect(response.status == 200)
                let body = try response.object()
                #expect(body["code"] as? Int == 200)
                #expect(body["status"] as? String == "Ok")
                #expect(body["attributionText"] as? String == "Data provided by Marvel. © 2026 MARVEL")
                #expect((body["attributionHTML"] as? String)?.hasPrefix("<a href=") == true)
                #expect(body["copyright"] as? String == "© 2026 MARVEL")
                let data = try #require(body["data"] as? [String: Any])
                total = try #require(data["total"] as? Int)
                #expect(data["limit"] as? Int == 100)
                let page = try #require(data["results"] as? [[String: Any]])
                #expect(data["count"] as? Int == page.count)
                #expect(!page.isEmpty)
                characters += page
            }

            // Then there are 150 or more distinct characters, the well-known ones among them, with empty descriptions, odd dates, missing pictures, and collections both empty and capped at 20
            #expect(total >= 150)
            #expect(total == DemoData.marvelCount)
            let names = characters.compactMap { $0["name"] as? String }
            for known in ["3-D Man", "A-Bomb (HAS)", "Spider-Man (Peter Parker)", "Captain America", "Hulk"] {
                #expect(names.contains(known), "\(known) missing")
            }
            #expect(Set(characters.compactMap { $0["id"] as? Int }).count == characters.count)
            #expect(characters.contains { $0["description"] as? String == "" })
            #expect(characters.contains { $0["modified"] as? String == "-0001-11-30T00:00:00-0500" })
            let thumbnails = characters.compactMap { $0["thumbnail"] as? [String: Any] }
            #expect(thumbnails.contains { ($0["path"] as? String)?.hasSuffix("image_not_available") == true && $0["extension"] as? String == "jpg" })
            #expect(thumbnails.allSatisfy { ($0["path"] as? String)?.hasPrefix(upstream.baseURL.absoluteString) == true })

            var sawCappedCollection = false
            var sawEmptyCollection = false
            for character in characters {
                for name in ["comics", "series", "stories", "events"] {
                    let collection = try #require(character[name] as? [String: Any])
                    let available = try #require(collection["available"] as? Int)
                    let items = try #require(collection["items"] as? [[String: Any]])
                    #expect(collection["returned"] as? Int == items.count)
                    #expect(items.count <= 20)
                    #expect(items.count == min(available, 20))
                    if available > 20 { sawCappedCollection = true }
                    if available == 0 { sawEmptyCollection = true }
                    if name == "stories" { #expect(items.allSatisfy { $0["type"] is String }) }
                }
                let urls = try #require(character["urls"] as? [[String: Any]])
                #expect(Set(urls.compactMap { $0["type"] as? String }).isSubset(of: ["detail", "wiki", "comiclink"]))
            }
            #expect(sawCappedCollection)
            #expect(sawEmptyCollection)
        }
    }

    @Test("the body's etag is the ETag header's entity tag")
    func etagFieldMatchesHeader() async throws {
        try await withUpstream { upstream in
            // When a characters page is asked for
            let response = try await Client.get(upstream.marvelURL("characters"))
            // Then its body's etag is the ETag header's value, and it may be cached for a day
            let etag = try #require(try response.object()["etag"] as? String)
            #expect(response.header("ETag") == "\"\(etag)\"")
            #expect(response.header("Cache-Control") == "public, max-age=86400")
        }
    }

    @Test("limit above 100 is 409 with Marvel's message")
    func limitAbove100() async throws {
        try await withUpstream { upstream in
            // When 101 characters are asked for at once
            let response = try await Client.get(upstream.marvelURL("characters", [("limit", "101")]))
            // Then it is a 409 in Marvel's words
            #expect(response.status == 409)
            let body = try response.object()
            #expect(body["code"] as? Int == 409)
            #expect(body["status"] as? String == "You may not request more than 100 items.")
        }
    }

    @Test("nameStartsWith is a case-insensitive prefix and name an exact match")
    func nameFilters() async throws {
        try await withUpstream { upstream in
            // When characters are asked for by the prefix "spider" and by the exact name "Hulk"
            let prefix = try await Client.get(upstream.marvelURL("characters", [("nameStartsWith", "spider")]))
            let exact = try await Client.get(upstream.marvelURL("characters", [("name", "Hulk")]))

            // Then the prefix matches every Spider name whatever its case, and the exact name only Hulk
            let prefixNames = try names(prefix)
            #expect(prefixNames.contains("Spider-Man (Peter Parker)"))
            #expect(prefixNames.allSatisfy { $0.lowercased().hasPrefix("spider") })
            #expect(try names(exact) == ["Hulk"])
        }
    }

    @Test("orderBy sorts by name or modified, ascending or descending")
    func ordering() async throws {
        try await withUpstream { upstream in
            // When the list is ordered by name both ways, by newest modification, and by something Marvel does not sort by
            let byName = try names(try await Client.get(upstream.marvelURL("characters", [("orderBy", "name"), ("limit", "100")])))
            let byNameDescending = try names(try await Client.get(upstream.marvelURL("characters", [("orderBy", "-name"), ("limit", "100")])))
            let newest = try await Client.get(upstream.marvelURL("characters", [("orderBy", "-modified"), ("limit", "100")]))
            let bad = try await Client.get(upstream.marvelURL("characters", [("orderBy", "popularity")]))

            // Then the orders hold, and the unknown order is a 409
            #expect(byName.first == "3-D Man")
            #expect(byName == byName.sorted { $0.lowercased() < $1.lowercased() })
            #expect(byNameDescending.first != byName.first)
            let modified = try results(newest).compactMap { $0["modified"] as? String }
            #expect(modified == modified.sorted(by: >))
            #expect(bad.status == 409)
        }
    }

    @Test("a character is found by id; an unknown id is 404 with Marvel's body")
    func characterByID() async throws {
        try await withUpstream { upstream in
            // When a known id and an unknown one are asked for
            let found = try await Client.get(upstream.marvelURL("characters/1011334"))
            let missing = try await Client.get(upstream.marvelURL("characters/1"))

            // Then the known one is 3-D Man, and the unknown one a 404 in Marvel's words
            #expect(found.status == 200)
            #expect(try names(found) == ["3-D Man"])
            #expect(missing.status == 404)
            let body = try missing.object()
            #expect(body["code"] as? Int == 404)
            #expect(body["status"] as? String == "We couldn't find that character")
        }
    }

    @Test("offset pages through the catalog without overlap")
    func paging() async throws {
        try await withUpstream { upstream in
            // When the first two pages of 20 are asked for
            let first = try names(try await Client.get(upstream.marvelURL("characters", [("limit", "20"), ("offset", "0")])))
            let second = try names(try await Client.get(upstream.marvelURL("characters", [("limit", "20"), ("offset", "20")])))
            // Then each is full and they share no character
            #expect(first.count == 20)
            #expect(second.count == 20)
            #expect(Set(first).isDisjoint(with: second))
        }
    }

    private func results(_ response: FetchedResponse) throws -> [[String: Any]] {
        let data = try #require(try response.object()["data"] as? [String: Any])
        return try #require(data["results"] as? [[String: Any]])
    }

    private func names(_ response: FetchedResponse) throws -> [String] {
        try results(response).compactMap { $0["name"] as? String }
    }
}
