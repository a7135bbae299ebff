import Foundation
import KioskDemoUpstream
import Testing

@Suite("Rick and Morty emulation")
struct RickAndMortyTests {
    @Test("826 characters over 42 pages, ids 1 to 826, walked through the next links")
    func fullCatalogThroughNextLinks() async throws {
        try await withUpstream { upstream in
            // Given the first page's URL, and nothing read yet
            var next: URL? = upstream.url("/api/character")
            var ids: [Int] = []
            var pages = 0

            // When the client follows `next` until it is null
            while let url = next {
                let response = try await Client.get(url)
                #expect(response.status == 200)
                let body = try response.object()
                let info = try #require(body["info"] as? [String: Any])
                #expect(info["count"] as? Int == 826)
                #expect(info["pages"] as? Int == 42)
                if pages == 0 { #expect(info["prev"] is NSNull) }
                ids += try #require(body["results"] as? [[String: Any]]).compactMap { $0["id"] as? Int }
                next = (info["next"] as? String).flatMap(URL.init(string:))
                if let next { #expect(next.absoluteString.hasPrefix(upstream.baseURL.absoluteString)) }
                pages += 1
            }

            // Then 42 pages were read, holding ids 1 to 826 in order
            #expect(pages == 42)
            #expect(ids == Array(1...826))
            #expect(DemoData.rickAndMortyCount == 826)
            #expect(DemoData.rickAndMortyPageCount == 42)
        }
    }

    @Test("the first characters are the real ones, with every documented field")
    func firstCharacters() async throws {
        try await withUpstream { upstream in
            // When character 1 is asked for
            let response = try await Client.get(upstream.url("/api/character/1"))

            // Then it is Rick Sanchez with every documented field, and lists of ids and Morty's unknown origin read as the real API's
            let rick = try response.object()
            #expect(rick["name"] as? String == "Rick Sanchez")
            #expect(rick["status"] as? String == "Alive")
            #expect(rick["species"] as? String == "Human")
            #expect(rick["type"] as? String == "")
            #expect(rick["gender"] as? String == "Male")
            #expect((rick["origin"] as? [String: Any])?["name"] as? String == "Earth (C-137)")
            let base = upstream.baseURL.absoluteString
            #expect(rick["image"] as? String == "\(base)/api/character/avatar/1.jpeg")
            #expect(rick["url"] as? String == "\(base)/api/character/1")
            #expect((rick["episode"] as? [String])?.first == "\(base)/api/episode/1")
            let created = try #require(rick["created"] as? String)
            #expect(created.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#, options: .regularExpression) != nil)

            let several = try await Client.get(upstream.url("/api/character/1,2,3,4,5"))
            let names = try #require(try several.json() as? [[String: Any]]).compactMap { $0["name"] as? String }
            #expect(names == ["Rick Sanchez", "Morty Smith", "Summer Smith", "Beth Smith", "Jerry Smith"])
            let morty = try await Client.get(upstream.url("/api/character/2")).object()
            let origin = try #require(morty["origin"] as? [String: Any])
            #expect(origin["name"] as? String == "unknown")
            #expect(origin["url"] as? String == "")
        }
    }

    @Test("filters narrow the list and are carried into next and prev links")
    func filtersInLinks() async throws {
        try await withUpstream { upstream in
            // When alive characters named "rick" are asked for
            let first = try await Client.get(upstream.url("/api/character", [("name", "rick"), ("status", "alive")]))

            // Then every one matches both filters, and the next and prev links keep them
            let body = try first.object()
            let info = try #require(body["info"] as? [String: Any])
            let results = try #require(body["results"] as? [[String: Any]])
            #expect(results.allSatisfy { ($0["name"] as? String)?.lowercased().contains("rick") == true && $0["status"] as? String == "Alive" })
            let count = try #require(info["count"] as? Int)
            #expect(count > 20, "enough alive Ricks to need a second page")
            let next = try #require(info["next"] as? String)
            #expect(next == "\(upstream.baseURL.absoluteString)/api/character?page=2&name=rick&status=alive")

            let second = try await Client.get(try #require(URL(string: next)))
            let secondInfo = try #require(try second.object()["info"] as? [String: Any])
            #expect(secondInfo["prev"] as? String == "\(upstream.baseURL.absoluteString)/api/character?page=1&name=rick&status=alive")
        }
    }

    @Test("no match and a page past the end are HTTP 404 'There is nothing here'")
    func nothingHere() async throws {
        try await withUpstream { upstream in
            for url in [upstream.url("/api/character", [("name", "zzzz-nobody")]),
                        upstream.url("/api/character", [("page", "43")])] {
                // When a search with no match, or a page past the end, is asked for
                let response = try await Client.get(url)
                // Then it is a 404 in the real API's words
                #expect(response.status == 404)
                #expect(try response.object()["error"] as? String == "There is nothing here")
            }
        }
    }

    @Test("an unknown character id is 404 'Character not found'")
    func unknownCharacter() async throws {
        try await withUpstream { upstream in
            for id in ["827", "0", "abc"] {
                // When an id past the end, zero or not a number is asked for
                let response = try await Client.get(upstream.url("/api/character/\(id)"))
                // Then it is a 404 in the real API's words
                #expect(response.status == 404)
                #expect(try response.object()["error"] as? String == "Character not found")
            }
        }
    }

    @Test("a non-numeric page is treated as page 1")
    func nonNumericPage() async throws {
        try await withUpstream { upstream in
            // When page "two" is asked for
            let response = try await Client.get(upstream.url("/api/character", [("page", "two")]))
            // Then page 1 is answered
            #expect(response.status == 200)
            let first = try #require(try response.object()["results"] as? [[String: Any]]).first
            #expect(first?["id"] as? Int == 1)
        }
    }

    @Test("the last page holds the remaining 6 characters and has no next link")
    func lastPage() async throws {
        try await withUpstream { upstream in
            // When page 42 is asked for
            let response = try await Client.get(upstream.url("/api/character", [("page", "42")]))
            // Then it holds the last 6 characters, with a prev link and no next one
            let body = try response.object()
            #expect((body["results"] as? [Any])?.count == 6)
            let info = try #require(body["info"] as? [String: Any])
            #expect(info["next"] is NSNull)
            #expect(info["prev"] as? String == "\(upstream.baseURL.absoluteString)/api/character?page=41")
        }
    }
}
