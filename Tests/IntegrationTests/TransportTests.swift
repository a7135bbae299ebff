import Foundation
import KioskCore
import KioskDemoUpstream
import KioskNetwork
import Testing

@Suite("The upstream transport against the demo upstream")
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
            let transport = UpstreamTransport(configuration: TransportConfiguration(requestTimeout: .milliseconds(300)))
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

    @Test("A request's own shorter timeout bounds its wait, whatever the transport's; a longer one does not lengthen it")
    func requestTimeout() async throws {
        try await withDemo(FaultSettings(latencyMilliseconds: 1500)) { demo in
            // Given a transport that would wait a minute, and an upstream that takes 1.5 s
            let transport = UpstreamTransport(configuration: TransportConfiguration(requestTimeout: .seconds(60)))
            var request = HTTPRequest(url: await demo.nytBaseURL.appendingPathComponent("viewed/7.json"), endpoint: "test")
            request.timeout = .milliseconds(300)
            // When a request says it may take 300 ms
            do {
                _ = try await transport.send(request)
                Issue.record("expected a timeout")
            } catch let error as KioskError {
                // Then it times out (the answer would have come after 1.5 s), saying its own time
                guard case .timeout(_, let seconds) = error else { Issue.record("expected a timeout, got \(error)"); return }
                #expect(seconds == 0.3)
            }
            await transport.shutdown()
        }
        try await withDemo(FaultSettings(latencyMilliseconds: 1500)) { demo in
            // And given a transport of 300 ms, a request that says it may take a minute still has 300 ms
            let transport = UpstreamTransport(configuration: TransportConfiguration(requestTimeout: .milliseconds(300)))
            var request = HTTPRequest(url: await demo.nytBaseURL.appendingPathComponent("viewed/7.json"), endpoint: "test")
            request.timeout = .seconds(60)
            await #expect(throws: KioskError.self) { _ = try await transport.send(request) }
            await transport.shutdown()
        }
    }

    @Test("A refused connection is reported as offline at once")
    func refused() async throws {
        try await withDemo(FaultSettings(offline: true)) { demo in
            // A connect timeout far longer than any run's scheduling delay (this machine under a full
            // build still answers a refusal in well under a second), so the bound below tells a refusal
            // reported at once from one waited out, whatever the load.
            let transport = UpstreamTransport(configuration: TransportConfiguration(connectTimeout: .seconds(60), requestTimeout: .seconds(90)))
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
            let transport = UpstreamTransport()
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

    /// What `body` returned or threw, so that a test shuts its transport down before checking the result.
    func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    /// Checks what holds for every measured exchange: each phase is non-negative and together they take
    /// no longer than the whole.
    func expectConsistent(_ timings: RequestTimings, _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) {
        let phases = [timings.queued, timings.connect, timings.firstByte, timings.download].compactMap { $0 }
        #expect(phases.allSatisfy { $0 >= 0 }, comment, sourceLocation: sourceLocation)
        // A microsecond of slack for the sum of rounded durations.
        #expect(phases.reduce(0, +) <= timings.total + 1e-6, comment, sourceLocation: sourceLocation)
    }

    @Test("A server slow to answer shows in the time to first byte, not in the wait for a connection")
    func slowAnswerIsFirstByte() async throws {
        // Given an upstream that sleeps 300 ms before answering
        try await withDemo(FaultSettings(latencyMilliseconds: 300)) { demo in
            let transport = UpstreamTransport()
            // When a request is sent
            let sent = await outcome { try await transport.send(HTTPRequest(url: await demo.dogsURL, endpoint: "test")) }
            await transport.shutdown()
            let response = try sent.get()
            // Then the 300 ms are in firstByte, and the wait before the request was written is shorter
            let timings = try #require(response.timings)
            let firstByte = try #require(timings.firstByte)
            #expect(firstByte >= 0.25, "\(timings)")
            #expect(try #require(timings.queued) < firstByte, "\(timings)")
            #expect(timings.download != nil, "\(timings)")
            expectConsistent(timings, "\(timings)")
        }
    }

    @Test("A body that arrives slowly shows in the download, not in the time to first byte")
    func slowBodyIsDownload() async throws {
        // Given a server that sends its head and half the body at once, the rest two seconds later (a long pause: the
        // server's handler shares this process's threads with other tests, and may itself start late; and a loop of this
        // loaded process stalled past a one-second pause once, reading head and rest together)
        let server = try await TrapServer.start()
        let transport = UpstreamTransport()
        // When the body is fetched
        let sent = await outcome { try await transport.send(HTTPRequest(url: URL(string: "\(server.origin)/slow-body?ms=2000")!, endpoint: "test")) }
        await transport.shutdown()
        await server.stop()
        let response = try sent.get()
        // Then the whole body came, and the whole pause after the head is in download (the time to the head
        // itself depends on when this loaded process runs the server's handler, so it is not compared)
        #expect(response.body.count == 1024)
        let timings = try #require(response.timings)
        let download = try #require(timings.download)
        #expect(download >= 0.9, "\(timings)")
        #expect(timings.firstByte != nil, "\(timings)")
        expectConsistent(timings, "\(timings)")
    }

    @Test("The first request on a new client is timed connecting; the next one, on the same connection, is not")
    func newConnectionIsConnect() async throws {
        try await withDemo { demo in
            // Given a transport that has not connected anywhere yet
            let transport = UpstreamTransport()
            let url = await demo.dogsURL
            // When two requests are sent one after the other
            let sent = await outcome {
                (try await transport.send(HTTPRequest(url: url, endpoint: "test")).timings,
                 try await transport.send(HTTPRequest(url: url, endpoint: "test")).timings)
            }
            await transport.shutdown()
            let (timings1, timings2) = try sent.get()
            let first = try #require(timings1), second = try #require(timings2)
            // Then the first waited for a new connection to be opened, and the second reused it
            #expect((first.connect ?? 0) > 0, "\(first)")
            #expect(first.queued != nil, "\(first)")
            #expect(second.connect == nil, "\(second)")
            #expect(second.queued != nil, "\(second)")
            expectConsistent(first, "\(first)")
            expectConsistent(second, "\(second)")
        }
    }

    @Test("A body still trickling in when the request timeout ends is a timeout error saying how much of the body came")
    func tricklingBodyTimesOut() async throws {
        // Given a server whose body's second half comes 20 s after the head, and a 2 s request timeout (time enough for the
        // head to come on a machine loaded by the suite's first minute: 300 ms was not)
        let server = try await TrapServer.start()
        let transport = UpstreamTransport(configuration: TransportConfiguration(requestTimeout: .seconds(2)))
        // When the body is fetched
        do {
            let response = try await transport.send(HTTPRequest(url: URL(string: "\(server.origin)/slow-body?ms=20000")!, endpoint: "test"))
            Issue.record("expected a timeout, got \(response.status) with \(response.body.count) bytes")
        } catch let error as KioskError {
            // Then it is a timeout of the body, the head having come in time
            guard case .stalledBody(_, let seconds, _, let received) = error else { Issue.record("expected a stalled body, got \(error)"); return }
            #expect(seconds == 2 && received > 0, "\(error)")
        }
        await transport.shutdown()
        await server.stop()
    }

    @Test("A request after the transport shut down (a late background revalidation) fails as cancelled, and ends its waiting")
    func requestAfterShutdown() async throws {
        try await withDemo { demo in
            // Given a transport already shut down, proxy-style and not
            for passesThrough in [false, true] {
                let transport = UpstreamTransport(configuration: TransportConfiguration(passesThrough: passesThrough))
                await transport.shutdown()
                // When a request still comes (NIO traps on a promise dropped unfulfilled, in a debug build)
                await #expect(throws: KioskError.cancelled) {
                    _ = try await transport.send(HTTPRequest(url: await demo.dogsURL, endpoint: "test"))
                }
            }
        }
    }

    @Test("A body larger than the limit is refused with an error that says so")
    func bodyOverLimitIsRefused() async throws {
        try await withDemo { demo in
            // Given a transport that accepts bodies of at most 64 bytes
            let transport = UpstreamTransport(configuration: TransportConfiguration(maximumBodyBytes: 64))
            // When a longer document is fetched
            do {
                let response = try await transport.send(HTTPRequest(url: await demo.dogsURL, endpoint: "test"))
                Issue.record("expected an error, got \(response.status) with \(response.body.count) bytes")
            } catch let error as KioskError {
                // Then the error names the limit
                guard case .unreadableAnswer(_, .larger(than: 64)) = error else { Issue.record("expected a refused answer, got \(error)"); return }
                #expect(error.description.contains("larger than 64 bytes"), "\(error)")
            }
            await transport.shutdown()
        }
    }
}
