import Foundation
import KioskCore
import KioskDemoUpstream
import KioskNetwork
import Testing

@Suite("The AsyncHTTPClient transport against the demo upstream")
struct TransportTests {
    func withDemo(_ faults: FaultSettings = .none, _ body: (DemoUpstream) async throws -> Void) async throws {
        let demo = DemoUpstream(configuration: DemoUpstreamConfiguration(faults: faults))
        try await demo.start()
        do { try await body(demo) } catch {
            await demo.stop()
            throw error
        }
        await demo.stop()
    }

    @Test("A response slower than the request timeout is a timeout error that names the redacted URL")
    func timeout() async throws {
        try await withDemo(FaultSettings(latencyMilliseconds: 1500)) { demo in
            let transport = AsyncHTTPTransport(configuration: TransportConfiguration(requestTimeout: .milliseconds(300)))
            let url = await demo.nytBaseURL.appendingPathComponent("viewed/7.json")
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
            components.queryItems = [URLQueryItem(name: "api-key", value: "SECRET-KEY")]
            do {
                _ = try await transport.send(HTTPRequest(url: components.url!, endpoint: "test"))
                Issue.record("expected a timeout")
            } catch let error as KioskError {
                guard case .timeout(let text, _) = error else { Issue.record("expected a timeout, got \(error)"); return }
                #expect(!text.contains("SECRET-KEY"))
            }
            // The response would have arrived after 1.5 s; a timeout error proves the timer fired first.
            await transport.shutdown()
        }
    }

    @Test("A refused connection is reported as offline at once")
    func refused() async throws {
        try await withDemo(FaultSettings(offline: true)) { demo in
            // A connect timeout far longer than any run's scheduling delay (this machine under a full
            // build still answers a refusal in well under a second), so the bound below tells a refusal
            // reported at once from one waited out, whatever the load.
            let transport = AsyncHTTPTransport(configuration: TransportConfiguration(connectTimeout: .seconds(60), requestTimeout: .seconds(90)))
            let started = ContinuousClock.now
            for _ in 0..<2 {
                do {
                    let response = try await transport.send(HTTPRequest(url: await demo.dogsURL, endpoint: "test"))
                    Issue.record("expected offline, got \(response.status)")
                } catch let error as KioskError {
                    #expect(error.isConnectivityFailure, "\(error)")
                }
            }
            // Well under the connect timeout: the pool did not keep retrying the refused connection.
            #expect(ContinuousClock.now - started < .seconds(30))
            await transport.shutdown()
        }
    }

    @Test("A body cut short is reported as truncated, not as data")
    func truncated() async throws {
        try await withDemo(FaultSettings(truncateRate: 1)) { demo in
            let transport = AsyncHTTPTransport()
            do {
                let response = try await transport.send(HTTPRequest(url: await demo.dogsURL, endpoint: "test"))
                Issue.record("expected an error, got \(response.status) with \(response.body.count) bytes")
            } catch let error as KioskError {
                switch error {
                case .truncatedBody, .transport: break
                default: Issue.record("expected a truncated body, got \(error)")
                }
            }
            await transport.shutdown()
        }
    }
}
