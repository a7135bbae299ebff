import Foundation
import KioskApp
import KioskCore
import KioskNetwork
import KioskTestSupport
import Synchronization
import Testing

/// What a connection dials: the addresses the outbound policy looked up and checked, no later answer for the name (DNS
/// rebinding), and the lookup and the TLS handshake timed apart within the exchange's connect phase.
@Suite("The addresses Kiosk's client dials, and its connection's phases")
struct DialAddressesTests {
    /// A resolver whose answers are scripted: each lookup takes the next answer (the last one stays), after `delay`,
    /// which it waits out whatever cancellation says, as the system's lookup (getaddrinfo on a thread) does.
    final class ScriptedResolver: HostResolver {
        private let answers: Mutex<[[IPAddress]]>
        private let delay: Duration
        /// How many lookups were made.
        let lookups = Mutex(0)

        init(_ answers: [[String]], delay: Duration = .zero) {
            self.answers = Mutex(answers.map { $0.map { IPAddress(literal: $0)! } })
            self.delay = delay
        }

        func addresses(of host: String) async throws -> [IPAddress] {
            if delay > .zero {
                let (seconds, attoseconds) = delay.components
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    DispatchQueue.global().asyncAfter(deadline: .now() + Double(seconds) + Double(attoseconds) / 1e18) { done.resume() }
                }
            }
            lookups.withLock { $0 += 1 }
            return answers.withLock { answers in answers.count > 1 ? answers.removeFirst() : answers[0] }
        }
    }

    /// What `body` gave or threw.
    private func outcome(_ body: () async throws -> HTTPResponse) async -> Result<HTTPResponse, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    /// What the outbound policy and Kiosk's client, both looking names up with `resolver`, make of a request for `url`.
    private func policed(_ url: String, _ purpose: HTTPRequest.Purpose, _ resolver: ScriptedResolver) async -> Result<HTTPResponse, any Error> {
        let transport = UpstreamTransport(resolver: resolver)
        let policed = PolicyTransport(base: transport, policy: OutboundPolicy(sourceOrigins: [], resolver: resolver))
        let result = await outcome { try await policed.send(HTTPRequest(url: URL(string: url)!, endpoint: "test", purpose: purpose)) }
        await transport.shutdown()
        return result
    }

    @Test("A name that resolves to a public address for the policy's check and to loopback for the connection is refused, and nothing is dialled")
    func rebindingIsRefused() async throws {
        // Given an upstream on loopback, and a name whose first answer is public and every later one this machine
        let upstream = try await EchoUpstream.start()
        defer { Task { await upstream.stop() } }
        let resolver = ScriptedResolver([["93.184.216.34"], ["127.0.0.1"]])
        // When an app on another machine asks for it through the proxy
        let outcome = await policed("http://rebind.test:\(upstream.port)/echo", .proxiedForNetwork, resolver)
        // Then the connection refuses the loopback address it was about to dial, saying so
        guard case .failure(KioskError.refused(_, let reason)) = outcome else {
            Issue.record("expected a refusal, got \(outcome)")
            return
        }
        #expect(reason.contains("rebind.test is a loopback address"), "\(reason)")
        // And the name was looked up twice (the check, the connection), and the upstream never asked
        #expect(resolver.lookups.withLock { $0 } == 2)
        #expect(upstream.requests == 0)
    }

    @Test("A tunnel for an app on another machine gets no loopback address to dial from a name that rebinds; one for an app on this machine does")
    func tunnelsDialWhatWasChecked() async throws {
        // Given a Kiosk whose resolver answers a name first with a public address, then with loopback
        let resolver = ScriptedResolver([["93.184.216.34"], ["127.0.0.1"]])
        let kiosk = try Kiosk(configuration: KioskConfiguration(dataDirectory: TemporaryDirectory.url("dial-tests")),
                              dependencies: .init(resolver: resolver))
        let url = URL(string: "https://rebind.test:8443/")!
        // When an app on another machine asks the proxy for a tunnel to it
        var refusal: String?
        do {
            let given = try await kiosk.vetProxied(url, forNetwork: true)
            Issue.record("expected a refusal, got \(given.addresses)")
        } catch KioskError.refused(_, let reason) {
            refusal = reason
        }
        // Then no address is given to dial: the loopback answer the tunnel would have dialled is refused
        #expect(refusal?.contains("rebind.test is a loopback address") == true, "\(String(describing: refusal))")
        // And an app on this machine gets the address its tunnel dials, at the port it asked for
        let local = try await kiosk.vetProxied(url, forNetwork: false)
        #expect(local.addresses.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } == ["127.0.0.1:8443"])
        await kiosk.shutdown()
    }

    @Test("An app on this machine may reach a loopback name through the proxy, dialling the addresses the resolver gave")
    func localAppsReachLoopback() async throws {
        // Given an upstream on loopback, and a name resolving to it
        let upstream = try await EchoUpstream.start()
        defer { Task { await upstream.stop() } }
        // When an app on this machine asks for it
        let outcome = await policed("http://app.test:\(upstream.port)/echo", .proxied, ScriptedResolver([["127.0.0.1"]]))
        // Then the upstream answered
        #expect((try? outcome.get().status) == 200, "\(outcome)")
        #expect(upstream.requests == 1)
    }

    @Test("A new HTTPS connection's DNS lookup and TLS handshake are timed apart, within its connect; a reused one has neither")
    func phasesApart() async throws {
        // Given an HTTPS upstream of the test CA, and a resolver that takes 40 ms to answer its name
        let upstream = try await EchoUpstream.start(tls: try TestAuthority.shared.upstreamContext())
        defer { Task { await upstream.stop() } }
        var configuration = TransportConfiguration()
        configuration.additionalTrustRoots = [TestAuthority.shared.certificateFile.path]
        let transport = UpstreamTransport(configuration: configuration, resolver: ScriptedResolver([["127.0.0.1"]], delay: .milliseconds(40)))
        // When it is asked for twice, one after the other
        let url = URL(string: "https://localhost:\(upstream.port)/echo")!
        let outcomes = [await outcome { try await transport.send(HTTPRequest(url: url, endpoint: "test")) },
                        await outcome { try await transport.send(HTTPRequest(url: url, endpoint: "test")) }]
        await transport.shutdown()
        let first = try #require(try outcomes[0].get().timings), second = try #require(try outcomes[1].get().timings)
        // Then the first exchange's connect holds a lookup of at least the resolver's 40 ms and a handshake, and is their sum at least
        let connect = try #require(first.connect), dns = try #require(first.dns), tls = try #require(first.tls)
        #expect(dns >= 0.040, "dns \(dns)")
        #expect(tls > 0)
        #expect(connect >= dns + tls, "connect \(connect), dns \(dns), tls \(tls)")
        // And the second, on the same connection, has no connect phase at all
        #expect(second.connect == nil && second.dns == nil && second.tls == nil)
    }

    @Test("An HTTPS upstream whose certificate names the address a name resolved to, but not the name, is refused: the name is what was asked")
    func addressVouchesForNoName() async throws {
        // Given an HTTPS upstream whose certificate names localhost and 127.0.0.1, and a name that resolves to 127.0.0.1
        let upstream = try await EchoUpstream.start(tls: try TestAuthority.shared.upstreamContext())
        defer { Task { await upstream.stop() } }
        var configuration = TransportConfiguration()
        configuration.additionalTrustRoots = [TestAuthority.shared.certificateFile.path]
        let transport = UpstreamTransport(configuration: configuration, resolver: ScriptedResolver([["127.0.0.1"]]))
        // When that name is asked for, and then localhost, which the certificate names
        let rebound = await outcome { try await transport.send(HTTPRequest(url: URL(string: "https://rebound.test:\(upstream.port)/echo")!, endpoint: "test")) }
        let named = await outcome { try await transport.send(HTTPRequest(url: URL(string: "https://localhost:\(upstream.port)/echo")!, endpoint: "test")) }
        await transport.shutdown()
        // Then the first is refused, saying the certificate does not name it, and never reached the upstream; the second is answered
        guard case .failure(let error) = rebound else {
            Issue.record("a certificate naming only the address was taken for rebound.test")
            return
        }
        #expect("\(error)".contains("does not name rebound.test"), "\(error)")
        #expect((try? named.get().status) == 200, "\(named)")
        #expect(upstream.requests == 1)
    }

    @Test("A lookup that does not answer is bounded by the connect timeout: the upstream is offline, not a request timed out")
    func lookupWithinConnectTimeout() async throws {
        // Given a resolver that takes 10 s to answer, and a transport that gives a connection 300 ms
        let transport = UpstreamTransport(configuration: TransportConfiguration(connectTimeout: .milliseconds(300), requestTimeout: .seconds(15)),
                                          resolver: ScriptedResolver([["127.0.0.1"]], delay: .seconds(10)))
        // When a name is asked for
        let clock = ContinuousClock()
        let started = clock.now
        let outcome = await outcome { try await transport.send(HTTPRequest(url: URL(string: "http://slow-dns.test:9/")!, endpoint: "test")) }
        let took = clock.now - started
        await transport.shutdown()
        // Then it fails as offline, the name not resolved, within a moment of the connect timeout
        guard case .failure(KioskError.offline(let host, .unresolved)) = outcome else {
            Issue.record("expected offline, got \(outcome)")
            return
        }
        #expect(host == "slow-dns.test")
        #expect(took < .seconds(3), "took \(took)")
    }

    @Test("A plain HTTP connection to an address has a connect phase but neither a lookup nor a handshake")
    func addressNeedsNoLookup() async throws {
        // Given a plain upstream asked for by its address, and a resolver that must not be asked
        let upstream = try await EchoUpstream.start()
        defer { Task { await upstream.stop() } }
        let resolver = ScriptedResolver([["10.0.0.1"]])
        let transport = UpstreamTransport(resolver: resolver)
        // When it is asked for
        let outcome = await outcome { try await transport.send(HTTPRequest(url: URL(string: "http://127.0.0.1:\(upstream.port)/echo")!, endpoint: "test")) }
        await transport.shutdown()
        // Then the connect phase is there, without DNS or TLS, and no lookup was made
        let timings = try #require(try outcome.get().timings)
        #expect(timings.connect != nil)
        #expect(timings.dns == nil && timings.tls == nil)
        #expect(resolver.lookups.withLock { $0 } == 0)
    }
}
