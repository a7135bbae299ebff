import Foundation
import KioskCore
import KioskDemoUpstream
import Testing

/// One list endpoint and where its items and their names are.
private struct ListEndpoint: CustomStringConvertible {
    var description: String
    var url: URL
    /// Object keys from the document root to the items array; empty for the bare dogs array.
    var itemsPath: [String]
    var nameField: String
}

private func listEndpoints(_ upstream: RunningDemo) -> [ListEndpoint] {
    [
        ListEndpoint(description: "NYT", url: upstream.nytURL("viewed/7.json"), itemsPath: ["results"], nameField: "title"),
        ListEndpoint(description: "Marvel", url: upstream.marvelURL("characters"), itemsPath: ["data", "results"],
                     nameField: "name"),
        ListEndpoint(description: "Rick and Morty", url: upstream.url("/api/character", [("page", "2")]),
                     itemsPath: ["results"], nameField: "name"),
        ListEndpoint(description: "dogs", url: upstream.dogsURL, itemsPath: [], nameField: "dogName"),
    ]
}

/// The items array at `path`, or nil when the document has none there.
private func items(in document: Any, at path: [String]) -> [[String: Any]]? {
    var current = document
    for key in path {
        guard let object = current as? [String: Any], let next = object[key] else { return nil }
        current = next
    }
    return current as? [[String: Any]]
}

/// `document` with the items array emptied and Marvel's top-level `etag` removed: what must not change.
private func envelope(of document: Any, itemsPath: [String]) -> Any {
    func emptied(_ value: Any, _ path: ArraySlice<String>) -> Any {
        guard let key = path.first else { return [Any]() }
        guard var object = value as? [String: Any], let member = object[key] else { return value }
        object[key] = emptied(member, path.dropFirst())
        return object
    }
    var result = emptied(document, itemsPath[...])
    if var object = result as? [String: Any] {
        object["etag"] = nil
        result = object
    }
    return result
}

/// A canonical encoding (sorted keys), so two parsed values can be compared for equality.
private func canonical(_ value: Any) throws -> Data {
    try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
}

@Suite("Bad item fault")
struct BadItemFaultTests {
    @Test("with badItemRate 1 every list endpoint answers valid JSON whose second item's name is null and the rest intact")
    func listsGetOneBadItem() async throws {
        try await withUpstream { upstream in
            for endpoint in listEndpoints(upstream) {
                // Given the clean document
                try await upstream.setFaults(.none)
                let clean = try await Client.get(endpoint.url)
                let cleanItems = try #require(items(in: try clean.json(), at: endpoint.itemsPath), "\(endpoint)")
                #expect(cleanItems.count >= 3, "\(endpoint)")

                // When every request draws the bad item
                try await upstream.setFaults(FaultSettings(badItemRate: 1))
                let bad = try await Client.get(endpoint.url)

                // Then it is a 200 of valid JSON with an honest length and the same number of items
                #expect(bad.status == 200, "\(endpoint)")
                #expect(bad.header("Content-Type") == clean.header("Content-Type"))
                #expect(bad.header("Cache-Control") == clean.header("Cache-Control"))
                #expect(bad.header("Content-Length") == String(bad.body.count), "\(endpoint)")
                let document = try bad.json()
                let badItems = try #require(items(in: document, at: endpoint.itemsPath), "\(endpoint)")
                #expect(badItems.count == cleanItems.count, "\(endpoint)")

                // And only the second item's name field changed, to null
                #expect(badItems[1][endpoint.nameField] is NSNull, "\(endpoint)")
                for index in badItems.indices where index != 1 {
                    #expect(try canonical(badItems[index]) == canonical(cleanItems[index]), "\(endpoint) item \(index)")
                }
                var badRest = badItems[1], cleanRest = cleanItems[1]
                badRest[endpoint.nameField] = nil
                cleanRest[endpoint.nameField] = nil
                #expect(try canonical(badRest) == canonical(cleanRest), "\(endpoint)")
                #expect(try canonical(envelope(of: document, itemsPath: endpoint.itemsPath))
                        == canonical(envelope(of: try clean.json(), itemsPath: endpoint.itemsPath)), "\(endpoint)")

                // And it has its own ETag, stable across requests
                let etag = try #require(bad.header("ETag"), "\(endpoint)")
                #expect(etag != clean.header("ETag"), "\(endpoint)")
                #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && !etag.hasPrefix("W/"))
                #expect(try await Client.get(endpoint.url).header("ETag") == etag, "\(endpoint)")
            }
        }
    }

    @Test("Marvel's body etag follows the altered data, so it still equals the ETag header")
    func marvelEtagFieldFollows() async throws {
        try await withUpstream(DemoUpstreamConfiguration(faults: FaultSettings(badItemRate: 1))) { upstream in
            // When a characters page is asked for with every request drawing the bad item
            let response = try await Client.get(upstream.marvelURL("characters"))
            // Then the envelope's etag field is the altered page's, the one the ETag header quotes
            let etag = try #require(try response.object()["etag"] as? String)
            #expect(response.header("ETag") == "\"\(etag)\"")
        }
    }

    @Test("a bad-item page is its own document for conditional requests: the clean ETag gets it, its own ETag gets 304")
    func conditionalRequests() async throws {
        try await withUpstream { upstream in
            for endpoint in listEndpoints(upstream) {
                // Given the clean ETag and the bad-item page's ETag
                try await upstream.setFaults(.none)
                let cleanETag = try #require(try await Client.get(endpoint.url).header("ETag"))
                try await upstream.setFaults(FaultSettings(badItemRate: 1))
                let bad = try await Client.get(endpoint.url)
                let badETag = try #require(bad.header("ETag"))

                // When revalidating with each
                let withClean = try await Client.get(endpoint.url, headers: ["If-None-Match": cleanETag])
                let withBad = try await Client.get(endpoint.url, headers: ["If-None-Match": badETag])

                // Then the clean validator no longer matches, and the bad page's own one does
                #expect(withClean.status == 200, "\(endpoint)")
                #expect(withClean.body == bad.body, "\(endpoint)")
                #expect(withBad.status == 304, "\(endpoint)")
                #expect(withBad.body.isEmpty)
            }
        }
    }

    @Test("detail responses, multi-id arrays, images and error responses are untouched")
    func othersUntouched() async throws {
        try await withUpstream { upstream in
            let urls = [
                upstream.url("/api/character/2"),
                upstream.url("/api/character/1,2,3"),
                upstream.url("/api"),
                upstream.marvelURL("characters/1009610"),
                upstream.url("/api/character/avatar/2.jpeg"),
                upstream.url("/api/character", [("page", "43")]),
                upstream.nytURL("viewed/7.json", key: "wrong"),
                upstream.marvelURL("characters", [("limit", "500")]),
            ]
            for url in urls {
                // Given the response without faults
                try await upstream.setFaults(.none)
                let clean = try await Client.get(url)

                // When every request draws the bad item
                try await upstream.setFaults(FaultSettings(badItemRate: 1))
                let faulted = try await Client.get(url)

                // Then nothing differs
                #expect(faulted.status == clean.status, "\(url)")
                #expect(faulted.body == clean.body, "\(url)")
                #expect(faulted.header("ETag") == clean.header("ETag"), "\(url)")
            }
        }
    }

    @Test("a dogs image is untouched by the bad item, being no list")
    func imagesUntouched() async throws {
        try await withUpstream { upstream in
            // Given a dog's picture URL from the dogs document, and the picture as served without faults
            let dogs = try #require(try await Client.get(upstream.dogsURL).json() as? [[String: Any]])
            let imageText = try #require(dogs.first?["image"] as? String)
            let image = try #require(URL(string: imageText))
            let clean = try await Client.get(image)
            // When every request draws the bad item and the picture is asked for again
            try await upstream.setFaults(FaultSettings(badItemRate: 1))
            let faulted = try await Client.get(image)
            // Then it is the same picture, byte for byte, and still a valid PNG
            #expect(faulted.status == 200)
            #expect(faulted.body == clean.body)
            #expect(try DecodedPNG(faulted.body).width > 0)
        }
    }

    @Test("the bad item is one more outcome of the single draw: malformed 0.5 plus bad item 0.5 leaves no clean response")
    func sharesTheDraw() async throws {
        let faults = FaultSettings(malformedRate: 0.5, badItemRate: 0.5)
        try await withUpstream(DemoUpstreamConfiguration(faults: faults, seed: 3)) { upstream in
            var malformed = 0
            var badItem = 0
            for _ in 0..<30 {
                // When the dogs document is asked for, thirty times over
                let response = try await Client.get(upstream.dogsURL)
                // Then each response got exactly one of the two
                #expect(response.status == 200)
                if let dogs = try? JSONSerialization.jsonObject(with: response.body) as? [[String: Any]] {
                    #expect(dogs[1]["dogName"] is NSNull)
                    badItem += 1
                } else {
                    malformed += 1
                }
            }
            #expect(malformed > 0 && badItem > 0)
        }
    }

    @Test("the control endpoint accepts badItemRate 1 as a partial update and rejects 1.5 with a 400")
    func controlEndpoint() async throws {
        try await withUpstream(DemoUpstreamConfiguration(faults: FaultSettings(latencyMilliseconds: 5))) { upstream in
            // When the control endpoint gets a PUT of badItemRate alone
            let put = try await Client.send(upstream.controlURL("faults"), method: "PUT",
                                            body: Data(#"{"badItemRate": 1}"#.utf8))
            // Then only that field changed, and GET reports it
            #expect(put.status == 200)
            let expected = FaultSettings(latencyMilliseconds: 5, badItemRate: 1)
            #expect(try JSONDecoder().decode(FaultSettings.self, from: put.body) == expected)
            #expect(await upstream.faults() == expected)
            #expect(try await Client.get(upstream.controlURL("faults")).object()["badItemRate"] as? Double == 1)

            // When POST, the other verb for the same update
            let post = try await Client.send(upstream.controlURL("faults"), method: "POST",
                                             body: Data(#"{"badItemRate": 0.25}"#.utf8))
            #expect(post.status == 200)
            #expect(await upstream.faults().badItemRate == 0.25)

            // When out of range or not a number
            for body in [#"{"badItemRate": 1.5}"#, #"{"badItemRate": -0.1}"#, #"{"badItemRate": "all"}"#] {
                let rejected = try await Client.send(upstream.controlURL("faults"), method: "PUT", body: Data(body.utf8))
                // Then 400 naming the field, and the settings are kept
                #expect(rejected.status == 400, "\(body)")
                let error = try #require(try rejected.object()["error"] as? String)
                #expect(error.contains("badItemRate"), "\(error)")
            }
            #expect(await upstream.faults() == FaultSettings(latencyMilliseconds: 5, badItemRate: 0.25))
        }
    }

    @Test("badItemRate is validated like the other rates and survives a JSON round trip")
    func settingsValidationAndCoding() throws {
        // Then a rate outside 0...1 (or not a number) is refused, 1 is accepted, and the settings survive JSON unchanged
        for rate in [1.5, -0.1, Double.nan] {
            #expect(throws: KioskError.self) { try FaultSettings(badItemRate: rate).validate() }
        }
        try FaultSettings(badItemRate: 1).validate()
        let settings = FaultSettings(malformedRate: 0.2, badItemRate: 0.3)
        #expect(try JSONDecoder().decode(FaultSettings.self, from: JSONEncoder().encode(settings)) == settings)
        #expect(FaultSettings().badItemRate == 0)
    }
}
