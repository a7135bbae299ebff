import Foundation
import KioskCore
import KioskDemoUpstream
import Testing

@Suite("Control listener and request counts")
struct ControlTests {
    @Test("GET /faults reports the settings and PUT changes only the fields it names")
    func partialUpdate() async throws {
        try await withUpstream(DemoUpstreamConfiguration(faults: FaultSettings(latencyMilliseconds: 5))) { upstream in
            // Given an upstream started with 5 ms of latency, which GET /faults reports, with no source filter
            let initial = try await Client.get(upstream.controlURL("faults"))
            #expect(try initial.object()["latencyMilliseconds"] as? Int == 5)
            #expect(try initial.object()["sources"] is NSNull)

            // When a PUT names only the failure rate and the sources
            let body = Data(#"{"failureRate": 0.25, "sources": ["marvel", "rickandmorty"]}"#.utf8)
            let put = try await Client.send(upstream.controlURL("faults"), method: "PUT", body: body)

            // Then the answer and the upstream's settings have those two fields changed and the latency kept
            #expect(put.status == 200)
            let answered = try JSONDecoder().decode(FaultSettings.self, from: put.body)
            let expected = FaultSettings(latencyMilliseconds: 5, failureRate: 0.25, sources: [.marvel, .rickandmorty])
            #expect(answered == expected)
            #expect(await upstream.faults() == expected)

            // When the settings are deleted
            let reset = try await Client.send(upstream.controlURL("faults"), method: "DELETE")
            // Then every fault is off again
            #expect(reset.status == 200)
            #expect(await upstream.faults() == .none)
        }
    }

    @Test("concurrent partial updates keep each other's fields")
    func concurrentPartialUpdates() async throws {
        try await withUpstream { upstream in
            // When two clients each change one field at the same time, many times over
            let url = upstream.controlURL("faults")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 1...20 {
                    let body = index.isMultiple(of: 2) ? #"{"latencyMilliseconds": 1}"# : #"{"retryAfterSeconds": 9}"#
                    group.addTask { _ = try await Client.send(url, method: "PUT", body: Data(body.utf8)) }
                }
                try await group.waitForAll()
            }
            // Then both changes survive
            #expect(await upstream.faults() == FaultSettings(latencyMilliseconds: 1, retryAfterSeconds: 9))
        }
    }

    @Test("bad JSON, unknown fields and out-of-range values are 400 with a clear message")
    func badRequests() async throws {
        try await withUpstream { upstream in
            let cases = [
                (#"{"failureRate": "#, "not valid JSON"),
                (#"{"latencyMs": 100}"#, "unknown field \"latencyMs\""),
                (#"{"failureRate": 2}"#, "failureRate must be between 0 and 1"),
                (#"{"offline": "yes"}"#, "offline must be true or false"),
                (#"{"sources": ["hbo"]}"#, "unknown source \"hbo\""),
            ]
            for (body, message) in cases {
                // When the control endpoint gets a PUT of that body
                let response = try await Client.send(upstream.controlURL("faults"), method: "PUT", body: Data(body.utf8))
                // Then it is 400 with the reason in "error"
                #expect(response.status == 400, "\(body)")
                let error = try #require(try response.object()["error"] as? String)
                #expect(error.contains(message), "\(error)")
            }
            #expect(await upstream.faults() == .none)
        }
    }

    @Test("requests are counted by path and query, without credentials")
    func requestCounts() async throws {
        try await withUpstream { upstream in
            // Given request counts at zero
            await upstream.resetRequestCounts()

            // When three Rick and Morty pages and two signed Marvel pages are asked for
            _ = try await Client.get(upstream.url("/api/character", [("page", "2")]))
            _ = try await Client.get(upstream.url("/api/character", [("page", "2")]))
            _ = try await Client.get(upstream.url("/api/character", [("page", "3")]))
            _ = try await Client.get(upstream.marvelURL("characters", [("limit", "5")]))
            _ = try await Client.get(upstream.marvelURL("characters", [("limit", "5")]))

            // Then the counts are by path and query, Marvel's without ts, apikey or hash, and /stats says the same
            #expect(await upstream.requestCount(pathPrefix: "/api/character") == 3)
            #expect(await upstream.requestCount(pathPrefix: "/api/character?page=2") == 2)
            #expect(await upstream.requestCount(pathPrefix: "/v1/public/characters?limit=5") == 2)
            let stats = try await Client.get(upstream.controlURL("stats")).object()
            #expect(stats["total"] as? Int == 5)
            #expect((stats["byPath"] as? [String: Any])?["/api/character"] as? Int == 3)

            // When the counts are reset
            await upstream.resetRequestCounts()
            // Then nothing is counted any more
            #expect(await upstream.requestCount(pathPrefix: "/") == 0)
        }
    }

    @Test("health reports the API listener and its base URL")
    func health() async throws {
        try await withUpstream { upstream in
            // When the control listener's health is asked for
            let health = try await Client.get(upstream.controlURL("health")).object()
            // Then it is ok, with the API listening on the base URL it reports
            #expect(health["status"] as? String == "ok")
            #expect(health["apiListening"] as? Bool == true)
            #expect(health["baseURL"] as? String == upstream.baseURL.absoluteString)
        }
    }

    @Test("default keys are random per configuration and derived URLs use the bound port")
    func keysAndURLs() async throws {
        // Given two configurations made without keys
        let first = DemoUpstreamConfiguration()
        let second = DemoUpstreamConfiguration()
        // Then each drew its own random keys, and a started upstream derives every URL from its bound port
        #expect(first.nytAPIKey != second.nytAPIKey)
        #expect(first.marvelPrivateKey.count == 40)
        try await withUpstream(first) { upstream in
            let base = upstream.baseURL.absoluteString
            #expect(upstream.baseURL.port != 0)
            #expect(upstream.controlURL.port != upstream.baseURL.port)
            #expect(await upstream.upstream.nytBaseURL.absoluteString == base + "/svc/mostpopular/v2")
            #expect(await upstream.upstream.marvelBaseURL.absoluteString == base + "/v1/public")
            #expect(await upstream.upstream.rickAndMortyBaseURL.absoluteString == base + "/api")
            #expect(upstream.dogsURL.absoluteString == base + "/dogs.json")
            #expect(upstream.keys.nyt == first.nytAPIKey)
        }
    }

    @Test("A web page of another origin cannot change the faults or the counts (a form's text/plain needs no preflight)")
    func crossSiteWritesRefused() async throws {
        try await withUpstream(DemoUpstreamConfiguration()) { upstream in
            // When a page on another origin posts faults, as a form would, and asks to reset them and the counts
            let page = ["Origin": "http://evil.test:8000", "Content-Type": "text/plain"]
            let posted = try await Client.send(upstream.controlURL("faults"), method: "POST", body: Data(#"{"offline": true}"#.utf8), headers: page)
            let put = try await Client.send(upstream.controlURL("faults"), method: "PUT", body: Data(#"{"failureRate": 1}"#.utf8), headers: page)
            let deleted = try await Client.send(upstream.controlURL("stats"), method: "DELETE", headers: page)
            // Then each is refused and nothing changed
            #expect(posted.status == 403 && put.status == 403 && deleted.status == 403)
            #expect(await upstream.faults() == .none)
            // And the listener's own origin, and a client sending none (the CLI, tests), still may
            let own = try await Client.send(upstream.controlURL("faults"), method: "PUT", body: Data(#"{"failureRate": 0.5}"#.utf8),
                                            headers: ["Origin": "http://" + (upstream.controlURL("").host() ?? "") + ":\(upstream.controlURL("").port ?? 0)"])
            #expect(own.status == 200)
        }
    }

    @Test("fault settings survive a JSON round trip and a partial object decodes with defaults")
    func faultSettingsCoding() throws {
        // Given settings with every fault set
        let settings = FaultSettings(latencyMilliseconds: 10, failureRate: 0.1, rateLimitRate: 0.2, retryAfterSeconds: 3,
                                     truncateRate: 0.3, malformedRate: 0.4, offline: true, sources: [.nyt, .dogs])
        // When they go through JSON, and a JSON object naming only offline is decoded
        let decoded = try JSONDecoder().decode(FaultSettings.self, from: JSONEncoder().encode(settings))
        let partial = try JSONDecoder().decode(FaultSettings.self, from: Data(#"{"offline": true}"#.utf8))
        // Then they come back equal, and the missing fields take their defaults
        #expect(decoded == settings)
        #expect(partial == FaultSettings(offline: true))
    }
}
