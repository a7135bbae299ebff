import Foundation
import KioskDemoUpstream
import Testing

@Suite("Dogs document and generated images")
struct DogsAndImagesTests {
    @Test("the dogs document is a bare array of five dogs")
    func dogs() async throws {
        try await withUpstream { upstream in
            // When the dogs document is asked for
            let response = try await Client.get(upstream.dogsURL)
            // Then it is an hour-cacheable array of five dogs, each with a name, a description, an age and a picture here
            #expect(response.status == 200)
            #expect(response.header("Cache-Control") == "public, max-age=3600")
            let dogs = try #require(try response.json() as? [[String: Any]])
            #expect(dogs.count == 5)
            #expect(dogs.count == DemoData.dogsCount)
            for dog in dogs {
                #expect(dog["dogName"] is String)
                #expect(dog["description"] is String)
                #expect(dog["age"] is Int)
                #expect((dog["image"] as? String)?.hasPrefix(upstream.baseURL.absoluteString) == true)
            }
        }
    }

    @Test("every kind of image URL in the data resolves to a valid PNG of the size it implies")
    func imagesResolve() async throws {
        try await withUpstream { upstream in
            // Given one image URL of each source, taken from the API responses
            let nyt = try await Client.get(upstream.nytURL("viewed/7.json")).object()
            let articles = try #require(nyt["results"] as? [[String: Any]])
            let allMedia = articles.compactMap { ($0["media"] as? [[String: Any]])?.first }
            let media = try #require(allMedia.first)
            var expectations: [(URL, Int, Int)] = try #require(media["media-metadata"] as? [[String: Any]]).map {
                (URL(string: $0["url"] as! String)!, $0["width"] as! Int, $0["height"] as! Int)
            }
            let marvel = try await Client.get(upstream.marvelURL("characters/1009610")).object()
            let thumbnail = try #require(((marvel["data"] as? [String: Any])?["results"] as? [[String: Any]])?.first?["thumbnail"] as? [String: Any])
            let path = try #require(thumbnail["path"] as? String)
            let ext = try #require(thumbnail["extension"] as? String)
            expectations += [(URL(string: "\(path)/portrait_xlarge.\(ext)")!, 150, 225),
                             (URL(string: "\(path)/standard_medium.\(ext)")!, 100, 100),
                             (URL(string: "\(path)/landscape_incredible.\(ext)")!, 464, 261)]
            let rick = try await Client.get(upstream.url("/api/character/1")).object()
            expectations.append((URL(string: rick["image"] as! String)!, 300, 300))
            let dogs = try #require(try await Client.get(upstream.dogsURL).json() as? [[String: Any]])
            expectations.append((URL(string: dogs[0]["image"] as! String)!, 400, 300))

            for (url, width, height) in expectations {
                // When each picture is fetched
                let response = try await Client.get(url)

                // Then it is a week-cacheable, small, valid palette PNG of the size its URL names
                #expect(response.status == 200, "\(url)")
                #expect(response.header("Content-Type") == "image/png")
                #expect(response.header("Cache-Control") == "public, max-age=604800")
                let png = try DecodedPNG(response.body)
                #expect(png.width == width && png.height == height, "\(url)")
                #expect(png.colorType == 3)
                #expect(png.pixels.count == height * (width + 1))
                #expect(png.pixels.allSatisfy { Int($0) < max(png.paletteCount, 1) || $0 == 0 })
                #expect(response.body.count < 4_000, "flat colours should keep \(url) small")
            }
        }
    }

    @Test("Marvel's image_not_available path resolves too")
    func notAvailableImage() async throws {
        try await withUpstream { upstream in
            // When Marvel's image_not_available portrait is asked for
            let response = try await Client.get(upstream.url("/images/marvel/i/mg/b/40/image_not_available/portrait_xlarge.jpg"))
            // Then it is a valid 150 x 225 PNG, like any other portrait
            #expect(response.status == 200)
            let png = try DecodedPNG(response.body)
            #expect(png.width == 150 && png.height == 225)
        }
    }

    @Test("the same image URL always yields the same bytes")
    func imagesAreDeterministic() async throws {
        // Given two independent servers
        let first = try await withUpstream { try await Client.get($0.url("/api/character/avatar/7.jpeg")).body }
        let second = try await withUpstream { try await Client.get($0.url("/api/character/avatar/7.jpeg")).body }
        let other = try await withUpstream { try await Client.get($0.url("/api/character/avatar/8.jpeg")).body }
        // Then the same URL gave the same bytes on both servers, and another URL other bytes
        #expect(first == second)
        #expect(first != other)
    }

    @Test("an unknown image is 404")
    func unknownImage() async throws {
        try await withUpstream { upstream in
            for path in ["/api/character/avatar/827.jpeg", "/images/marvel/i/mg/0/00/nothing/portrait_xlarge.jpg",
                         "/images/dogs/garfield.jpg", "/images/nyt/2026/05/01/multimedia/x/x-thumbStandard.jpg"] {
                // When a picture nothing in the data points at is asked for
                let response = try await Client.get(upstream.url(path))
                // Then it is 404
                #expect(response.status == 404, "\(path)")
            }
        }
    }
}
