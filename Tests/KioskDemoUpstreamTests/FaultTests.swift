import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KioskCore
import KioskDemoUpstream
import Testing

@Suite("Fault injection")
struct FaultTests {
    @Test("latency delays every response by at least the injected time")
    func latency() async throws {
        try await withUpstream(DemoUpstreamConfiguration(faults: FaultSettings(latencyMilliseconds: 300))) { upstream in
            // When a list of each API, a detail and a picture are asked for at once
            let urls = [upstream.dogsURL, upstream.url("/api/character"), upstream.url("/api/character/1"),
                        upstream.nytURL("viewed/1.json"), upstream.marvelURL("characters"),
                        upstream.url("/api/character/avatar/1.jpeg")]
            let timings = try await withThrowingTaskGroup(of: (URL, Int, Duration).self) { group in
                for url in urls {
                    group.addTask {
                        let clock = ContinuousClock()
                        let start = clock.now
                        let response = try await Client.get(url)
                        return (url, response.status, clock.now - start)
                    }
                }
                return try await group.reduce(into: [(URL, Int, Duration)]()) { $0.append($1) }
            }

            // Then every one of them answered, and none sooner than the injected 300 ms
            #expect(timings.count == urls.count)
            for (url, status, elapsed) in timings {
                #expect(status == 200, "\(url)")
                #expect(elapsed >= .milliseconds(300), "\(url) took \(elapsed)")
            }
        }
    }

    @Test("a failure rate of 1 answers every request 500")
    func serverErrors() async throws {
        try await withUpstream(DemoUpstreamConfiguration(faults: FaultSettings(failureRate: 1))) { upstream in
            for url in [upstream.dogsURL, upstream.url("/api/character"), upstream.nytURL("viewed/1.json"),
                        upstream.url("/api/character/avatar/1.jpeg")] {
                // When each API and a picture are asked for
                let response = try await Client.get(url)
                // Then each is a 500 that no cache may keep
                #expect(response.status == 500, "\(url)")
                #expect(response.header("Cache-Control") == "no-store")
            }
        }
    }

    @Test("a rate-limit rate of 1 answers 429 with Retry-After")
    func rateLimited() async throws {
        let faults = FaultSettings(rateLimitRate: 1, retryAfterSeconds: 7)
        try await withUpstream(DemoUpstreamConfiguration(faults: faults)) { upstream in
            // When a signed Marvel page is asked for
            let response = try await Client.get(upstream.marvelURL("characters"))
            // Then it is a 429 saying to retry after the configured 7 s
            #expect(response.status == 429)
            #expect(response.header("Retry-After") == "7")
        }
    }

    @Test("a truncated body makes the client fail or see fewer bytes than Content-Length")
    func truncated() async throws {
        try await withUpstream(DemoUpstreamConfiguration(faults: FaultSettings(truncateRate: 1))) { upstream in
            // Given the size of the complete document
            try await upstream.setFaults(.none)
            let full = try await Client.get(upstream.url("/api/character", [("page", "1")])).body.count
            try await upstream.setFaults(FaultSettings(truncateRate: 1))

            // When the same page is asked for with every body cut short
            do {
                let response = try await Client.get(upstream.url("/api/character", [("page", "1")]))
                // Then: if the client hands something back, it is short and not parseable
                #expect(response.body.count < full)
                #expect((try? JSONSerialization.jsonObject(with: response.body)) == nil)
            } catch {
                // Then: or it reports the short read as an error, which is what a careful client should do
                #expect(error is URLError)
            }
        }
    }

    @Test("a malformed body is a 200 whose JSON does not parse, with an honest Content-Length")
    func malformed() async throws {
        try await withUpstream(DemoUpstreamConfiguration(faults: FaultSettings(malformedRate: 1))) { upstream in
            for url in [upstream.dogsURL, upstream.nytURL("viewed/7.json"), upstream.marvelURL("characters"),
                        upstream.url("/api/character/1")] {
                // When each API is asked for with every body malformed
                let response = try await Client.get(url)
                // Then it is a 200 of the length it says, whose body is not JSON
                #expect(response.status == 200)
                #expect(response.header("Content-Length") == String(response.body.count))
                #expect((try? JSONSerialization.jsonObject(with: response.body)) == nil, "\(url)")
            }
        }
    }

    @Test("faults limited to some sources leave the others untouched")
    func sourceScopedFaults() async throws {
        let faults = FaultSettings(failureRate: 1, sources: [.marvel])
        try await withUpstream(DemoUpstreamConfiguration(faults: faults)) { upstream in
            // When Marvel, the dogs and a Rick and Morty character are asked for with failures limited to Marvel
            let marvel = try await Client.get(upstream.marvelURL("characters"))
            let dogs = try await Client.get(upstream.dogsURL)
            let rick = try await Client.get(upstream.url("/api/character/1"))
            // Then Marvel fails and the others answer
            #expect(marvel.status == 500)
            #expect(dogs.status == 200)
            #expect(rick.status == 200)
        }
    }

    @Test("offline refuses connections while the control listener answers, and online serves again on the same port")
    func offlineAndBack() async throws {
        try await withUpstream { upstream in
            // Given an upstream that answers, on its base URL
            let base = upstream.baseURL
            #expect(try await Client.get(upstream.dogsURL).status == 200)

            // When going offline
            try await upstream.setFaults(FaultSettings(offline: true))

            // Then connections are refused, the control listener still answers
            await #expect(throws: URLError.self) { try await Client.get(upstream.dogsURL) }
            let health = try await Client.get(upstream.controlURL("health")).object()
            #expect(health["apiListening"] as? Bool == false)
            #expect(await upstream.upstream.baseURL == base)

            // When coming back online through the control listener
            let body = Data(#"{"offline": false}"#.utf8)
            let put = try await Client.send(upstream.controlURL("faults"), method: "PUT", body: body,
                                            headers: ["Content-Type": "application/json"])
            #expect(put.status == 200)

            // Then the same URL works again
            #expect(await upstream.upstream.baseURL == base)
            #expect(try await Client.get(upstream.dogsURL).status == 200)
        }
    }

    /// Whether a listener binding as SwiftNIO does (SO_REUSEADDR) could take `port` on 127.0.0.1 now.
    static func portIsFree(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, CInt(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var on: CInt = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<CInt>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return bound == 0 && listen(descriptor, 1) == 0
    }

    @Test("a server started offline refuses connections but knows its port, and no other listener can take it meanwhile")
    func startOffline() async throws {
        try await withUpstream(DemoUpstreamConfiguration(faults: FaultSettings(offline: true))) { upstream in
            // Then it has bound a port, yet refuses connections on it
            #expect(upstream.baseURL.port != 0)
            await #expect(throws: URLError.self) { try await Client.get(upstream.dogsURL) }
            // And another server asking for that port is refused it (it would answer in the upstream's place)
            #expect(!Self.portIsFree(try #require(upstream.baseURL.port)))
            // When it is brought online
            try await upstream.setFaults(.none)
            // Then the same URL answers
            #expect(try await Client.get(upstream.dogsURL).status == 200)
        }
    }

    @Test("the same seed gives the same sequence of faults")
    func seededFaultsRepeat() async throws {
        // Given two servers with the same seed and a 50 % failure rate
        func statuses() async throws -> [Int] {
            let configuration = DemoUpstreamConfiguration(faults: FaultSettings(failureRate: 0.5), seed: 7)
            return try await withUpstream(configuration) { upstream in
                var statuses: [Int] = []
                for _ in 0..<30 { statuses.append(try await Client.get(upstream.dogsURL).status) }
                return statuses
            }
        }
        // When each server is asked the same thirty times
        let first = try await statuses()
        let second = try await statuses()
        // Then both give the same statuses, a mix of failures and answers
        #expect(first == second)
        #expect(first.contains(500) && first.contains(200))
    }

    @Test("invalid fault settings are rejected")
    func invalidFaults() async throws {
        try await withUpstream { upstream in
            await #expect(throws: KioskError.self) { try await upstream.setFaults(FaultSettings(failureRate: 1.5)) }
            #expect(await upstream.faults() == .none)
        }
    }
}
