import AsyncHTTPClient
import Crypto
import Foundation
import KioskApp
import KioskCore
import KioskDebugger
import KioskTestSupport
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import SwiftASN1
import Synchronization
import Testing
import X509
@testable import KioskProxy

@Suite("kiosk proxy reading inside HTTPS with Kiosk's own CA")
struct InterceptionTests {
    @Test("An app trusting Kiosk's CA gets its HTTPS request read, forwarded through the debugger and logged as https")
    func intercepted() async throws {
        try await withProxy(intercepting: true) { proxy, upstream in
            // Given an HTTPS upstream (its certificate from the tests' CA, which Kiosk trusts upstream)
            // When an app trusting Kiosk's CA asks for an https:// URL through the proxy (CONNECT, then TLS)
            var request = HTTPClientRequest(url: upstream.secureURL("/echo?page=3"))
            request.headers.add(name: "Authorization", value: "Bearer app-secret-https")
            let answer = try await proxy.http.execute(request, timeout: .seconds(10))
            let body = Data(buffer: try await answer.body.collect(upTo: 1 << 20))
            let echo = try JSONDecoder().decode(ForwardProxyTests.Echo.self, from: body)
            // Then the upstream got it from Kiosk (Via), and the app the upstream's answer
            #expect(answer.status == .ok)
            #expect(echo.uri == "/echo?page=3" && echo.values("Via").first?.hasPrefix("1.1 kiosk-") == true)
            #expect(echo.values("Authorization") == ["Bearer app-secret-https"])
            // And the log has the exchange as https under its host, its credential redacted
            let record = try #require(try proxy.records().first { $0.url.hasPrefix("https://localhost:\(upstream.port)/echo") })
            #expect(record.endpoint == "localhost:\(upstream.port)" && record.status == 200 && record.method == "GET")
            #expect(!String(decoding: try JSONEncoder().encode(record), as: UTF8.self).contains("app-secret-https"))
        }
    }

    @Test("Kiosk's side of an intercepted tunnel refuses an app offering only CBC suites over TLS 1.2, and serves one offering AES-GCM")
    func interceptionSuites() async throws {
        try await withProxy(intercepting: true) { proxy, upstream in
            // Given two TLS 1.2 apps that trust Kiosk's CA and use the proxy: one offering only CBC, one only AES-GCM
            let authority = try #require(proxy.authorityFile)
            func tls12Client(_ suites: String) throws -> HTTPClient {
                var tls = TLSConfiguration.makeClientConfiguration()
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(authority))
                tls.maximumTLSVersion = .tlsv12
                tls.cipherSuites = suites
                var configuration = HTTPClient.Configuration(tlsConfiguration: tls, proxy: .server(host: "127.0.0.1", port: proxy.port))
                configuration.redirectConfiguration = .disallow
                return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            }
            let cbc = try tls12Client("ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA:ECDHE-ECDSA-AES128-SHA256")
            let gcm = try tls12Client("ECDHE-ECDSA-AES128-GCM-SHA256")
            // When each asks for an https:// URL through the proxy
            let served = try? await gcm.execute(HTTPClientRequest(url: upstream.secureURL("/echo")), timeout: .seconds(10))
            let refused: (any Error)?
            do {
                _ = try await cbc.execute(HTTPClientRequest(url: upstream.secureURL("/echo")), timeout: .seconds(5))
                refused = nil
            } catch {
                refused = error
            }
            try await cbc.shutdown()
            try await gcm.shutdown()
            // Then the AES-GCM one is served and the CBC one fails its handshake with Kiosk
            #expect(served?.status == .ok)
            let error = try #require(refused, "an app offering only CBC suites was served")
            #expect(String(reflecting: error).contains("HANDSHAKE_FAILURE"), "\(String(reflecting: error))")
        }
    }

    @Test("An upstream whose certificate Kiosk does not trust is a 502 that says so; --insecure-upstream sends it and marks it")
    func untrustedUpstream() async throws {
        for insecure in [false, true] {
            // Given an HTTPS upstream whose CA Kiosk does not trust, and (second round) certificates not checked
            let upstream = try await EchoUpstream.start(tls: try TestAuthority.shared.upstreamContext())
            try await withProxy(to: upstream, stop: { await $0.stop() }, intercepting: true, configure: { kiosk in
                kiosk.proxyTransport.additionalTrustRoots = []
                kiosk.proxyTransport.verifiesCertificates = !insecure
            }) { proxy, upstream in
                // When an app asks for it through the proxy
                let answer = try await proxy.http.execute(HTTPClientRequest(url: upstream.secureURL("/echo")), timeout: .seconds(10))
                let body = String(buffer: try await answer.body.collect(upTo: 1 << 20))
                let record = try #require(try proxy.records().first { $0.url.hasPrefix("https://localhost:\(upstream.port)/echo") })
                if insecure {
                    // Then it is sent, and its record says the certificate was not checked
                    #expect(answer.status == .ok, "\(body)")
                    #expect(record.touchedBy.contains { $0.kind == .insecure && $0.detail.contains("--insecure-upstream") })
                } else {
                    // Then the app gets a 502 naming the failed handshake, and the upstream never saw a request
                    #expect(answer.status == .badGateway, "\(body)")
                    #expect(body.contains("certificate for localhost is not trusted: it was issued by Kiosk tests' upstream CA, "
                                          + "which is not among the trusted roots") && !body.contains(".cc:"), "\(body)")
                    #expect(upstream.requests == 0)
                    #expect(record.touchedBy.isEmpty)
                }
            }
        }
    }

    @Test("An HTTPS answer read with --insecure-upstream is not kept for offline: replayed later, it would carry no mark")
    func insecureAnswersNotKept() async throws {
        for insecure in [false, true] {
            // Given an HTTPS upstream Kiosk trusts, its certificate checked or (second round) not
            let upstream = try await EchoUpstream.start(tls: try TestAuthority.shared.upstreamContext())
            try await withProxy(to: upstream, stop: { await $0.stop() }, intercepting: true, configure: { kiosk in
                kiosk.proxyCache = ProxyCacheConfiguration()
                kiosk.proxyTransport.verifiesCertificates = !insecure
            }) { proxy, upstream in
                // When an app asks for an answer the cache may keep
                let answer = try await proxy.http.execute(HTTPClientRequest(url: upstream.secureURL("/echo?keep=1")), timeout: .seconds(10))
                #expect(answer.status == .ok)
                _ = try await answer.body.collect(upTo: 1 << 20)
                // Then it is kept when the certificate was checked, and not when it was not
                let deadline = ContinuousClock.now + .seconds(insecure ? 1 : 10)
                var kept = false
                while !kept, ContinuousClock.now < deadline {
                    kept = try proxy.kiosk.proxyCacheEntries().contains { $0.url.hasSuffix("/echo?keep=1") }
                    if !kept { try await Task.sleep(for: .milliseconds(20)) }
                }
                #expect(kept == !insecure, "insecure: \(insecure)")
            }
        }
    }

    @Test("An upstream whose certificate a trusted --upstream-ca issued for clients alone is a 502 that blames the certificate, not the trust")
    func clientOnlyUpstream() async throws {
        // Given an HTTPS upstream presenting a leaf of the tests' CA, which Kiosk trusts, for clients alone (clientAuth)
        let upstream = try await EchoUpstream.start(tls: try TestAuthority.shared.upstreamContext(clientOnly: true))
        try await withProxy(to: upstream, stop: { await $0.stop() }, intercepting: true) { proxy, upstream in
            // When an app asks for it through the proxy
            let answer = try await proxy.http.execute(HTTPClientRequest(url: upstream.secureURL("/echo")), timeout: .seconds(10))
            let body = String(buffer: try await answer.body.collect(upTo: 1 << 20))
            // Then the 502 says the trusted CA issued it and the certificate is not a server's, rather than "not among the roots"
            #expect(answer.status == .badGateway, "\(body)")
            #expect(body.contains("it was issued by Kiosk tests' upstream CA, which \(TestAuthority.shared.certificateFile.path) "
                                  + "(--upstream-ca) trusts, but it is not a certificate for a server"), "\(body)")
            #expect(upstream.requests == 0)
        }
    }

    @Test("An upstream's own self-signed certificate whose key usage leaves out keyCertSign, given to --upstream-ca, is a 502 that says why that file does not make it trusted and what to do")
    func selfSignedNonCAUpstream() async throws {
        // Given an HTTPS upstream whose self-signed certificate's key usage is digitalSignature alone, and Kiosk told to trust that very file
        try await expired(false)
        // And one that has expired too is said to have expired, first
        try await expired(true)
    }

    private func expired(_ expired: Bool) async throws {
        let (context, file) = try TestAuthority.selfSignedNonCA(expired: expired)
        let upstream = try await EchoUpstream.start(tls: context)
        try await withProxy(to: upstream, stop: { await $0.stop() }, intercepting: true, configure: { kiosk in
            kiosk.proxyTransport.additionalTrustRoots = [file.path]
        }) { proxy, upstream in
            // When an app asks for it through the proxy
            let answer = try await proxy.http.execute(HTTPClientRequest(url: upstream.secureURL("/echo")), timeout: .seconds(10))
            let body = String(buffer: try await answer.body.collect(upTo: 1 << 20))
            // Then the 502 names the file and the mark that keeps it from being a root, and how to make one that is
            #expect(answer.status == .badGateway, "\(body)")
            if expired {
                #expect(body.contains("certificate for localhost is not trusted: it expired on "), "\(body)")
                return
            }
            #expect(body.contains("it is the certificate \(file.path) (--upstream-ca) holds, but its key usage leaves out signing "
                                  + "certificates (keyCertSign)"), "\(body)")
            #expect(body.contains("`openssl req -x509 -addext \"subjectAltName=DNS:localhost\"`"), "\(body)")
            #expect(upstream.requests == 0)
        }
    }

    @Test("An upstream that speaks only TLS 1.0 or 1.1 is a 502 that says Kiosk refuses them, never reached over them")
    func retiredTLSUpstream() async throws {
        for version in [TLSVersion.tlsv1, .tlsv11] {
            // Given an HTTPS upstream with a trusted certificate that speaks no TLS newer than 1.0 (then 1.1)
            let upstream = try await EchoUpstream.start(tls: try TestAuthority.shared.upstreamContext(maximumVersion: version))
            try await withProxy(to: upstream, stop: { await $0.stop() }, intercepting: true) { proxy, upstream in
                // When an app asks for it through the proxy
                let answer = try await proxy.http.execute(HTTPClientRequest(url: upstream.secureURL("/echo")), timeout: .seconds(10))
                let body = String(buffer: try await answer.body.collect(upTo: 1 << 20))
                // Then it gets a 502 saying why in words, and the upstream saw no request
                #expect(answer.status == .badGateway, "\(body)")
                #expect(body.contains("speaks only TLS older than 1.2, which Kiosk refuses"), "\(body)")
                #expect(!body.contains(".cc:"))
                #expect(upstream.requests == 0)
            }
        }
    }

    @Test("An upstream whose certificate expired is a 502 that says it expired, and when")
    func expiredUpstream() async throws {
        // Given an HTTPS upstream from a trusted CA whose certificate expired yesterday
        let upstream = try await EchoUpstream.start(tls: try TestAuthority.shared.upstreamContext(expired: true))
        try await withProxy(to: upstream, stop: { await $0.stop() }, intercepting: true) { proxy, upstream in
            // When an app asks for it through the proxy
            let answer = try await proxy.http.execute(HTTPClientRequest(url: upstream.secureURL("/echo")), timeout: .seconds(10))
            let body = String(buffer: try await answer.body.collect(upTo: 1 << 20))
            // Then the 502 says the certificate expired, on which day
            let yesterday = Date().addingTimeInterval(-86_400).formatted(Date.ISO8601FormatStyle().year().month().day())
            #expect(answer.status == .badGateway)
            #expect(body.contains("certificate for localhost is not trusted: it expired on \(yesterday)"), "\(body)")
            #expect(upstream.requests == 0)
        }
    }

    @Test("An upstream whose trusted certificate is too weak (signed with SHA-1, an RSA key of 1024 bits) is a 502 that says why, as browsers refuse it",
          arguments: [(TestAuthority.WeakLeaf.sha1, "signed with SHA-1"), (.rsa1024, "RSA key has 1024 bits")])
    func weakUpstreamCertificate(leaf: TestAuthority.WeakLeaf, says: String) async throws {
        // Given an HTTPS upstream whose certificate a trusted CA signed, but weakly
        let upstream = try await EchoUpstream.start(tls: try TestAuthority.shared.upstreamContext(weak: leaf))
        try await withProxy(to: upstream, stop: { await $0.stop() }, intercepting: true) { proxy, upstream in
            // When an app asks for it through the proxy
            let answer = try await proxy.http.execute(HTTPClientRequest(url: upstream.secureURL("/echo")), timeout: .seconds(10))
            let body = String(buffer: try await answer.body.collect(upTo: 1 << 20))
            // Then the 502 says the certificate is too weak, and why; the upstream never got the request
            #expect(answer.status == .badGateway)
            #expect(body.contains("certificate for localhost is too weak to trust: ") && body.contains(says), "\(body)")
            #expect(upstream.requests == 0)
        }
    }

    @Test("With --insecure-upstream a weak upstream certificate is used, as every unchecked one is")
    func weakUpstreamCertificateInsecure() async throws {
        let upstream = try await EchoUpstream.start(tls: try TestAuthority.shared.upstreamContext(weak: .sha1))
        try await withProxy(to: upstream, stop: { await $0.stop() }, intercepting: true,
                            configure: { $0.proxyTransport.verifiesCertificates = false }) { proxy, upstream in
            // Given a proxy that checks no certificate, when an app asks the weakly certified upstream
            let answer = try await proxy.http.execute(HTTPClientRequest(url: upstream.secureURL("/echo")), timeout: .seconds(10))
            // Then it gets the upstream's answer
            #expect(answer.status == .ok)
            #expect(upstream.requests == 1)
        }
    }

    @Test("With --insecure-upstream a protocol switch over TLS (wss:) is marked as every unchecked exchange is; ws: is not")
    func insecureSwitchMarked() async throws {
        let upstream = try await EchoUpstream.start()
        try await withProxy(to: upstream, stop: { await $0.stop() }, configure: { $0.proxyTransport.verifiesCertificates = false }) { proxy, _ in
            // Given a WebSocket switched over TLS and one in the clear, through a proxy that checks no certificate
            for scheme in ["https", "http"] {
                let url = try #require(URL(string: "\(scheme)://socket.test/\(scheme)-ws"))
                proxy.kiosk.recordTunnel(TunnelSummary(host: "socket.test", port: scheme == "https" ? 443 : 80, sent: 10, received: 20,
                                                       duration: 0.5, error: nil,
                                                       upgrade: .init(method: "GET", url: url, protocolName: "websocket", status: 101)))
            }
            // Then the one over TLS says its certificate was not checked, and the other does not
            let secure = try #require(try await proxy.waitForRecord { $0.url.hasSuffix("/https-ws") })
            let plain = try #require(try await proxy.waitForRecord { $0.url.hasSuffix("/http-ws") })
            #expect(secure.url.hasPrefix("wss://") && secure.touchedBy.contains { $0.kind == .insecure && $0.detail.contains("--insecure-upstream") })
            #expect(!plain.touchedBy.contains { $0.kind == .insecure })
        }
    }

    @Test("A mock rule answers an intercepted HTTPS request, and an ignored host is tunnelled unread")
    func mockedAndIgnored() async throws {
        var configuration = ProxyConfiguration(port: 0)
        configuration.ignoredHosts = ["127.0.0.1"]
        try await withProxy(configuration, intercepting: true) { proxy, upstream in
            _ = try proxy.kiosk.debugger.mocks.add([MockRule(urlPattern: upstream.secureURL("/mocked*"), status: 201,
                                                             body: Data("from a mock".utf8))])
            let mocked = try await proxy.http.execute(HTTPClientRequest(url: upstream.secureURL("/mocked")), timeout: .seconds(10))
            #expect(mocked.status == .created)
            #expect(String(buffer: try await mocked.body.collect(upTo: 1 << 20)) == "from a mock")
            #expect(upstream.requests == 0)
            // An ignored host: a client trusting Kiosk's CA alone meets the upstream's own certificate (curl's 60, "SSL
            // certificate problem"), proof that Kiosk did not answer in its place; the tunnel is logged
            let authority = try #require(proxy.authorityFile)
            let (status, _) = try await runCurl(["-sS", "--max-time", "10", "-x", "http://127.0.0.1:\(proxy.port)", "--cacert", authority,
                                                 "https://127.0.0.1:\(upstream.port)/echo"])
            #expect(status == 60)
            var tunnel: RequestRecord?
            for _ in 0..<500 where tunnel == nil {
                tunnel = try proxy.records().first { $0.method == "CONNECT" && $0.endpoint == "127.0.0.1:\(upstream.port)" }
                if tunnel == nil { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(tunnel?.touchedBy.first?.kind == .tunnel)
        }
    }

    @Test("curl trusting Kiosk's CA reads an HTTPS upstream through the proxy")
    func curl() async throws {
        try await withProxy(intercepting: true) { proxy, upstream in
            let authority = try #require(proxy.authorityFile)
            let (status, output) = try await runCurl(["-sS", "--max-time", "10", "-x", "http://127.0.0.1:\(proxy.port)", "--cacert", authority,
                                                   upstream.secureURL("/echo")])
            #expect(status == 0)
            let echo = try JSONDecoder().decode(ForwardProxyTests.Echo.self, from: output)
            #expect(echo.values("Via").first?.hasPrefix("1.1 kiosk-") == true)
        }
    }

    @Test("An app that does not trust Kiosk's CA is logged: its CONNECT, failed, saying it refused the certificate for the host and what to do",
          arguments: [false, true])
    func appRefusesTheCertificate(tls12: Bool) async throws {
        try await withProxy(intercepting: true) { proxy, upstream in
            // Given curl trusting only the system's roots, which Kiosk's CA is not among, speaking TLS 1.3 or 1.2
            let (status, _) = try await runCurl(["-sS", "--max-time", "10", "-x", "http://127.0.0.1:\(proxy.port)"]
                                                + (tls12 ? ["--tls-max", "1.2"] : []) + [upstream.secureURL("/echo")])
            // Then curl refused the certificate (60), the upstream was never asked
            #expect(status == 60)
            #expect(upstream.requests == 0)
            // And the log holds the CONNECT, failed, saying why and what to do, and no tunnel passed unread
            let record = try #require(try await proxy.waitForRecord { $0.method == "CONNECT" })
            #expect(record.status == nil)
            #expect(record.touchedBy.isEmpty)
            let error = record.error ?? ""
            if tls12 {
                // The alert the app sent, read
                #expect(error.hasPrefix("The app refused Kiosk's certificate for localhost (TLS alert: unknown CA): it does not trust Kiosk's CA."), "\(error)")
            } else {
                // (curl's alert, under TLS 1.3, reaches BoringSSL as a record it cannot decrypt: no alert is read)
                #expect(error.hasPrefix("The app ended the TLS handshake after Kiosk's certificate for localhost ("), "\(error)")
                #expect(error.contains("most likely it does not trust Kiosk's CA."))
            }
            #expect(error.hasSuffix("`kiosk proxy ca` prints the CA for the app to trust; the console's proxy page says how."))
            #expect(!error.contains("/"), "no source paths: \(error)")
        }
    }

    @Test("An app that refuses Kiosk's certificate once a TLS 1.3 handshake is done (a name its own check wants) is logged, not lost")
    func appRefusesAfterTheHandshake() async throws {
        try await withProxy(intercepting: true) { proxy, upstream in
            // Given curl trusting Kiosk's CA, asking for 127.0.0.1 while its CONNECT names localhost: the leaf is for localhost
            // (a hello for an address names nothing), which curl's check of 127.0.0.1 refuses after TLS 1.3's handshake
            let authority = try #require(proxy.authorityFile)
            let (status, _) = try await runCurl(["-sS", "--max-time", "10", "-x", "http://127.0.0.1:\(proxy.port)", "--cacert", authority,
                                                 "--connect-to", "127.0.0.1:\(upstream.port):localhost:\(upstream.port)",
                                                 "https://127.0.0.1:\(upstream.port)/echo"])
            // Then curl refused it (60) and the upstream was never asked
            #expect(status == 60)
            #expect(upstream.requests == 0)
            // And the log holds the CONNECT, failed, saying the app refused or closed at once after the handshake
            let record = try #require(try await proxy.waitForRecord { $0.method == "CONNECT" })
            let error = record.error ?? ""
            #expect(error.hasPrefix("The app refused Kiosk's certificate for localhost")
                    || error.hasPrefix("The app closed its connection right after its TLS handshake with Kiosk's certificate for localhost"),
                    "\(error)")
        }
    }

    @Test("An app that closes its connection after Kiosk's certificate, with no alert, is logged as one that most likely does not trust the CA")
    func appClosesAfterTheCertificate() async throws {
        try await withProxy(intercepting: true) { proxy, _ in
            // Given an app that CONNECTs, sends a real TLS hello for example.test, reads the start of Kiosk's answer and closes
            let hello = try #require(Data(base64Encoded: Self.clientHello))
            try await withRawConnection(port: proxy.port) { inbound, outbound in
                var iterator = inbound.makeAsyncIterator()
                try await outbound.write(ByteBuffer(string: "CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n"))
                var received = ""
                while !received.hasSuffix("\r\n\r\n"), let chunk = try await iterator.next() { received += String(buffer: chunk) }
                try await outbound.write(ByteBuffer(bytes: hello))
                _ = try await iterator.next()
            }
            // Then the log holds its CONNECT, failed, saying it closed after the certificate, not BoringSSL's words
            let record = try #require(try await proxy.waitForRecord { $0.method == "CONNECT" })
            #expect(record.error?.hasPrefix("The app closed its connection during the TLS handshake, after Kiosk's certificate for "
                                            + "example.test: most likely it does not trust Kiosk's CA.") == true, "\(record.error ?? "")")
        }
    }

    /// A TLS 1.2–1.3 ClientHello for example.test offering http/1.1, as Python's ssl wrote it.
    private static let clientHello = "FgMBAgABAAH8AwPw/ckLrdRN78VNd2m2qYr9B60zQFl9j+A6FSP+3k+ZriDRx9WgJEea7eQGIsumEMAVXkJBqZNuyekpabhcpd8c6AAkEwITAxMBwCzAMMArwC/MqcyowCTAKMAjwCcAnwCeAGsAZwD/AQABjwAAABEADwAADGV4YW1wbGUudGVzdAALAAQDAAECAAoAFgAUAB0AFwAeABkAGAEAAQEBAgEDAQQAIwAAABAACwAJCGh0dHAvMS4xABYAAAAXAAAADQAqACgEAwUDBgMIBwgICAkICggLCAQIBQgGBAEFAQYBAwMDAQMCBAIFAgYCACsABQQDBAMDAC0AAgEBADMAJgAkAB0AIKk58+BLX4VTnfSjgK48qkJPh7uwCdBtFxJcG5j9r5lHABUA0gAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="

    @Test("An app that CONNECTs to an address and names the host in its TLS hello (SNI) gets a leaf for that name, and its requests go to it")
    func leafForTheHelloName() async throws {
        try await withProxy(intercepting: true) { proxy, upstream in
            // Given an app that resolved localhost itself: curl --connect-to sends CONNECT 127.0.0.1:port, then a TLS hello
            // for localhost, and checks the leaf against localhost
            let authority = try #require(proxy.authorityFile)
            let (status, output) = try await runCurl(["-sS", "--max-time", "10", "-x", "http://127.0.0.1:\(proxy.port)", "--cacert", authority,
                                                   "--connect-to", "localhost:\(upstream.port):127.0.0.1:\(upstream.port)",
                                                   upstream.secureURL("/echo?sni=1")])
            // Then the leaf names localhost (curl accepted it), and the request reached the upstream by that name
            #expect(status == 0, "\(String(decoding: output, as: UTF8.self))")
            let echo = try JSONDecoder().decode(ForwardProxyTests.Echo.self, from: output)
            #expect(echo.uri == "/echo?sni=1" && echo.values("Host") == ["localhost:\(upstream.port)"])
            let record = try #require(try proxy.records().first { $0.url.contains("/echo?sni=1") })
            #expect(record.url == "https://localhost:\(upstream.port)/echo?sni=1")
        }
    }

    @Test("An app that CONNECTs, reads the 200 and closes before a byte dials nothing: no upstream connection is left open")
    func connectThenClose() async throws {
        // Given a target that accepts connections and never says a word, counting them
        let accepted = Mutex(0)
        let silent = try await LoopbackServer.start { _ in accepted.withLock { $0 += 1 } }
        try await withProxy(intercepting: true) { proxy, _ in
            // When an app CONNECTs to it, reads the 200 and closes, three times
            for _ in 0..<3 {
                let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connect(host: "127.0.0.1", port: proxy.port) { channel in
                        channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
                    }
                let answer = try await channel.executeThenClose { inbound, outbound in
                    try await outbound.write(ByteBuffer(string: "CONNECT 127.0.0.1:\(silent.port) HTTP/1.1\r\nHost: 127.0.0.1:\(silent.port)\r\n\r\n"))
                    var received = ""
                    for try await chunk in inbound {
                        received += String(buffer: chunk)
                        if received.contains("\r\n\r\n") { break }
                    }
                    return received
                }
                #expect(answer.hasPrefix("HTTP/1.1 200"))
            }
            // Then, past the 2 s the proxy waits for a server that speaks first, no connection was opened to the target
            // (each was held open by no one, until the proxy stopped)
            try await Task.sleep(for: .seconds(3))
            #expect(accepted.withLock { $0 } == 0)
        }
        await silent.stop()
    }

    @Test("An app that CONNECTs to a name and asks another in its TLS hello gets a leaf for the hello's name, and its requests go where it CONNECTed")
    func connectNameWins() async throws {
        try await withProxy(intercepting: true) { proxy, upstream in
            // Given curl told to reach other.invalid (a name that resolves nowhere) at localhost: CONNECT localhost:port,
            // then a TLS hello for other.invalid
            let authority = try #require(proxy.authorityFile)
            let url = "https://other.invalid:\(upstream.port)/echo?connect=1"
            let (status, output) = try await runCurl(["-sS", "--max-time", "10", "-x", "http://127.0.0.1:\(proxy.port)", "--cacert", authority,
                                                   "--connect-to", "other.invalid:\(upstream.port):localhost:\(upstream.port)", url])
            // Then the leaf names other.invalid (curl accepted it), and the request reached localhost, where it CONNECTed
            // (it went to other.invalid, and failed: the name does not resolve)
            #expect(status == 0, "\(String(decoding: output, as: UTF8.self))")
            let echo = try JSONDecoder().decode(ForwardProxyTests.Echo.self, from: output)
            #expect(echo.uri == "/echo?connect=1" && echo.values("Host") == ["localhost:\(upstream.port)"])
            let record = try #require(try proxy.records().first { $0.url.contains("/echo?connect=1") })
            #expect(record.url == "https://localhost:\(upstream.port)/echo?connect=1")
        }
    }

    @Test("An app that CONNECTs to an address and names an ignored host in its TLS hello is tunnelled unread, as the host's own CONNECT would be")
    func ignoredByTheHelloName() async throws {
        var configuration = ProxyConfiguration(port: 0)
        configuration.ignoredHosts = ["localhost"]
        try await withProxy(configuration, intercepting: true) { proxy, upstream in
            // Given an app pinned to its upstream's own CA that resolved localhost itself: CONNECT 127.0.0.1:port, a hello
            // for localhost
            let (status, output) = try await runCurl(["-sS", "--max-time", "10", "-x", "http://127.0.0.1:\(proxy.port)",
                                                   "--cacert", TestAuthority.shared.certificateFile.path,
                                                   "--connect-to", "localhost:\(upstream.port):127.0.0.1:\(upstream.port)",
                                                   upstream.secureURL("/echo?pinned=1")])
            // Then it met the upstream's own certificate (curl accepted it against that CA alone) and reached the upstream
            // without passing Kiosk's debugger (no Via); the tunnel is logged
            #expect(status == 0, "\(String(decoding: output, as: UTF8.self))")
            let echo = try JSONDecoder().decode(ForwardProxyTests.Echo.self, from: output)
            #expect(echo.uri == "/echo?pinned=1" && echo.values("Via").isEmpty)
            let tunnel = try await proxy.waitForRecord { $0.method == "CONNECT" && $0.url.contains("127.0.0.1:\(upstream.port)") }
            #expect(tunnel?.touchedBy.first?.kind == .tunnel)
            #expect(try !proxy.records().contains { $0.url.contains("/echo?pinned=1") })
        }
    }

    @Test("An app whose TLS hello is split across two TLS records, naming an ignored host in the second, is tunnelled unread")
    func ignoredByASplitHello() async throws {
        var configuration = ProxyConfiguration(port: 0)
        configuration.ignoredHosts = ["localhost"]
        try await withProxy(configuration, intercepting: true) { proxy, upstream in
            // Given an app pinned to its upstream's own CA that CONNECTs to 127.0.0.1 and sends a hello for localhost in two
            // records, the name in the second
            let pinned = try NIOSSLCertificate.fromPEMFile(TestAuthority.shared.certificateFile.path)
            let answer = try await EagerTLSClient.get(proxyPort: proxy.port, host: "localhost", connectTo: "127.0.0.1", port: upstream.port,
                                                      path: "/echo?split=1", roots: pinned, splitHello: true)
            // Then it met the upstream's own certificate and reached it without passing Kiosk's debugger (no Via)
            #expect(answer.status == .ok)
            let echo = try JSONDecoder().decode(ForwardProxyTests.Echo.self, from: answer.body)
            #expect(echo.uri == "/echo?split=1" && echo.values("Via").isEmpty)
            #expect(try !proxy.records().contains { $0.url.contains("/echo?split=1") })
        }
    }

    @Test("An app whose TLS hello is split across records is read like any other: the leaf names the host, Via is added")
    func interceptedSplitHello() async throws {
        try await withProxy(intercepting: true) { proxy, upstream in
            // Given an app trusting Kiosk's CA that CONNECTs to 127.0.0.1 and names localhost in a hello split in two records
            let roots = try NIOSSLCertificate.fromPEMFile(try #require(proxy.authorityFile))
            let answer = try await EagerTLSClient.get(proxyPort: proxy.port, host: "localhost", connectTo: "127.0.0.1", port: upstream.port,
                                                      path: "/echo?split=2", roots: roots, splitHello: true)
            // Then its leaf named localhost (the handshake completed) and the request went through the debugger
            #expect(answer.status == .ok)
            let echo = try JSONDecoder().decode(ForwardProxyTests.Echo.self, from: answer.body)
            #expect(echo.uri == "/echo?split=2" && !echo.values("Via").isEmpty)
        }
    }

    @Test("An app offering only h2 in its TLS hello (gRPC) is tunnelled unread rather than handed a TLS it cannot use")
    func h2OnlyTunnelled() async throws {
        try await withProxy(intercepting: true) { proxy, upstream in
            // Given an app that trusts its upstream's own CA and offers only h2 (the upstream, speaking HTTP/1.1, answers
            // without ALPN, and the app's request is HTTP/1.1: what matters is who answered the handshake)
            let pinned = try NIOSSLCertificate.fromPEMFile(TestAuthority.shared.certificateFile.path)
            let answer = try await EagerTLSClient.get(proxyPort: proxy.port, host: "localhost", port: upstream.port,
                                                      path: "/echo?h2only=1", roots: pinned, alpn: ["h2"])
            // Then the upstream's own certificate answered (the app was not given Kiosk's leaf), and Kiosk did not read it
            #expect(answer.status == .ok)
            let echo = try JSONDecoder().decode(ForwardProxyTests.Echo.self, from: answer.body)
            #expect(echo.uri == "/echo?h2only=1" && echo.values("Via").isEmpty)
            // And the tunnel is logged, saying why it was not read
            let record = try #require(try await proxy.waitForRecord { $0.method == "CONNECT" && $0.url.contains("localhost:\(upstream.port)") })
            #expect(record.touchedBy.contains { $0.detail.contains("offered only protocols Kiosk does not read inside HTTPS") },
                    "\(record.touchedBy)")
            // And it is counted once, as a tunnel, not also as a connection read
            #expect(proxy.meter.snapshot.tunnels == 1 && proxy.meter.snapshot.intercepted == 0,
                    "tunnels \(proxy.meter.snapshot.tunnels), read \(proxy.meter.snapshot.intercepted)")
        }
    }

    @Test("With --intercept naming a host, an app that CONNECTs to its address is read when its TLS hello names that host, tunnelled unread when it names another")
    func interceptedByTheHelloName() async throws {
        var configuration = ProxyConfiguration(port: 0)
        configuration.interceptedHosts = ["localhost"]
        try await withProxy(configuration, intercepting: true) { proxy, upstream in
            let kioskCA = try #require(proxy.authorityFile)
            // Given an app that resolved localhost itself (CONNECT 127.0.0.1:port), its hello naming localhost, trusting Kiosk's CA
            let (status, output) = try await runCurl(["-sS", "--max-time", "10", "-x", "http://127.0.0.1:\(proxy.port)", "--cacert", kioskCA,
                                                   "--connect-to", "localhost:\(upstream.port):127.0.0.1:\(upstream.port)",
                                                   upstream.secureURL("/echo?named=1")])
            // Then Kiosk read it (its leaf for localhost, Via added) and logged the request under the name
            #expect(status == 0, "\(String(decoding: output, as: UTF8.self))")
            let echo = try JSONDecoder().decode(ForwardProxyTests.Echo.self, from: output)
            #expect(echo.uri == "/echo?named=1" && !echo.values("Via").isEmpty)
            #expect(try await proxy.waitForRecord { $0.url == "https://localhost:\(upstream.port)/echo?named=1" } != nil)
            // When an app CONNECTs to the same address with a hello naming 127.0.0.1 itself (no name: curl sends no SNI for
            // an address), trusting the upstream's own CA
            let (direct, body) = try await runCurl(["-sS", "--max-time", "10", "-x", "http://127.0.0.1:\(proxy.port)",
                                                 "--cacert", TestAuthority.shared.certificateFile.path,
                                                 "https://127.0.0.1:\(upstream.port)/echo?address=1"])
            // Then it met the upstream's own certificate, unread by Kiosk (no Via)
            #expect(direct == 0, "\(String(decoding: body, as: UTF8.self))")
            let unread = try JSONDecoder().decode(ForwardProxyTests.Echo.self, from: body)
            #expect(unread.uri == "/echo?address=1" && unread.values("Via").isEmpty)
            #expect(try !proxy.records().contains { $0.url.contains("/echo?address=1") })
        }
    }

    @Test("An app that sends its TLS hello with its CONNECT, before the 200, has it read: the handshake and its request go through")
    func helloBeforeThe200() async throws {
        try await withProxy(intercepting: true) { proxy, upstream in
            // Given an app that writes its CONNECT and its TLS hello in one write, not waiting for the 200
            let roots = try NIOSSLCertificate.fromPEMFile(try #require(proxy.authorityFile))
            let answer = try await EagerTLSClient.get(proxyPort: proxy.port, host: "localhost", port: upstream.port, path: "/echo?eager=1",
                                                      roots: roots)
            // Then Kiosk read the hello (the handshake completed against its leaf) and forwarded the request
            #expect(answer.status == .ok)
            let echo = try JSONDecoder().decode(ForwardProxyTests.Echo.self, from: answer.body)
            #expect(echo.uri == "/echo?eager=1")
        }
    }

    @Test("--intercept and --ignore patterns: *.x the subdomains, * every host, else the host exactly; case and a final dot aside",
          arguments: [
              ("api.example.com", "*.example.com", true), ("example.com", "*.example.com", false),
              ("API.Example.com.", "*.example.com", true), ("pinned.example.test.", "pinned.example.test", true),
              ("pinned.example.test", "Pinned.Example.Test.", true), ("other.test", "pinned.example.test", false),
              ("anything.test", "*", true), ("127.0.0.1", "*", true), ("notexample.com", "*.example.com", false),
          ])
    func hostPatterns(host: String, pattern: String, matches: Bool) {
        #expect(ProxyConfiguration.matches(host, pattern) == matches)
    }

    @Test("The name a leaf is made for: the hello's host name, lowercased and without a final dot; else the CONNECT's host",
          arguments: [
              ("API.Example.COM." as String?, "api.example.com"),
              ("under_score.internal", "under_score.internal"),
              ("localhost", "localhost"),
              (nil, "10.0.0.7"),
              ("192.0.2.1", "10.0.0.7"),
              ("a b.test", "10.0.0.7"),
              ("bad..dots.test", "10.0.0.7"),
              (String(repeating: "a", count: 64) + ".test", "10.0.0.7"),
          ])
    func helloName(asked: String?, expected: String) {
        #expect(ProxyMessages.serverName(asked, connectedTo: "10.0.0.7") == expected)
    }

    @Test("An app that sends part of a TLS hello and stops is disconnected after the head's timeout, not held for ever")
    func halfAHello() async throws {
        var configuration = ProxyConfiguration(port: 0)
        // (Long enough for a loaded machine to accept and read the CONNECT within it: the same timeout bounds that head.)
        configuration.requestHeadTimeout = .seconds(1)
        try await withProxy(configuration, intercepting: true) { proxy, _ in
            // Given an app that opens a CONNECT Kiosk reads and sends a TLS record's header announcing a 512-byte hello,
            // and one byte of it, then nothing
            let start = ContinuousClock.now
            let answer = try await rawExchange(port: proxy.port, "CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n"
                                                   + "\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}", timeout: .seconds(10), toClose: true)
            // Then the proxy answered the CONNECT, and closed the connection at the deadline, well before the client's 10 s
            #expect(answer.hasPrefix("HTTP/1.1 200"))
            #expect(ContinuousClock.now - start < .seconds(5))
            // And logged it, saying why
            let record = try #require(try await proxy.waitForRecord { $0.method == "CONNECT" })
            #expect(record.error == "The app's TLS handshake did not complete within 1 s: it sent part of its hello and stopped.")
        }
    }

    @Test("Inside an intercepted CONNECT, what is neither TLS nor HTTP passes byte for byte, and is logged as a tunnel: a protocol the client starts, and one the server starts",
          arguments: [false, true])
    func otherProtocolsInsideConnect(serverFirst: Bool) async throws {
        // Given a TCP server that echoes what it reads, after a banner of its own when it speaks first (SSH, SMTP)
        let upstream = try await LoopbackServer.start { try $0.pipeline.syncOperations.addHandler(BannerEcho(banner: serverFirst ? "SSH-2.0-Test\r\n" : nil)) }
        defer { Task { await upstream.stop() } }
        try await withProxy(intercepting: true) { proxy, _ in
            let received = try await withRawConnection(port: proxy.port) { inbound, outbound in
                var iterator = inbound.makeAsyncIterator()
                var received = ""
                func read(until end: String) async throws {
                    while !received.hasSuffix(end), let chunk = try await iterator.next() { received += String(buffer: chunk) }
                }
                // When the app opens the tunnel, and (the server speaking first) waits for its banner, or (the client
                // first) starts with a binary message and a Redis command
                try await outbound.write(ByteBuffer(string: "CONNECT 127.0.0.1:\(upstream.port) HTTP/1.1\r\nHost: 127.0.0.1:\(upstream.port)\r\n\r\n"))
                try await read(until: "\r\n\r\n")
                if serverFirst { try await read(until: "SSH-2.0-Test\r\n") }
                try await outbound.write(ByteBuffer(bytes: [0, 0, 0, 8] + Array("*1\r\n$4\r\nPING\r\n".utf8)))
                try await read(until: "PING\r\n")
                return received
            }
            // Then the bytes went both ways untouched
            #expect(received.hasPrefix("HTTP/1.1 200"), "\(received)")
            #expect(received.hasSuffix((serverFirst ? "SSH-2.0-Test\r\n" : "") + "\u{0}\u{0}\u{0}\u{8}*1\r\n$4\r\nPING\r\n"), "\(received.debugDescription)")
            // And the log holds a tunnel to the server, with its bytes
            let record = try #require(try await proxy.waitForRecord { $0.method == "CONNECT" && $0.url.contains(":\(upstream.port)") })
            #expect(record.touchedBy.contains { $0.kind == .tunnel && $0.detail.contains("18 bytes sent") }, "\(record.touchedBy.map(\.detail))")
            // And a tunnel opened because the app said nothing says so, and is timed from the CONNECT, its 2 s of silence in
            let silent = record.touchedBy.contains { $0.detail.contains("; the app sent nothing for 2 s after its CONNECT, so Kiosk passed it on unread") }
            #expect(silent == serverFirst, "\(record.touchedBy.map(\.detail))")
            if serverFirst { #expect(record.timings.total >= 2, "\(record.timings.total)") }
        }
    }

    @Test("Plain HTTP inside a CONNECT (curl -p, a ws:// client behind HTTPS_PROXY) is read and forwarded as http://, not dropped")
    func plainHTTPInsideConnect() async throws {
        let upstream = try await EchoUpstream.start()
        try await withProxy(to: upstream, stop: { await $0.stop() }, intercepting: true) { proxy, upstream in
            // Given an intercepting proxy and an app that tunnels its plain-HTTP request (curl's --proxytunnel)
            let (status, output) = try await runCurl(["-sS", "--max-time", "10", "-p", "-x", "http://127.0.0.1:\(proxy.port)",
                                                   upstream.url("/echo")])
            // Then the request reached the upstream through Kiosk's debugger (its Via), not through a blind tunnel
            #expect(status == 0, "\(String(decoding: output, as: UTF8.self))")
            let echo = try JSONDecoder().decode(ForwardProxyTests.Echo.self, from: output)
            #expect(echo.values("Via").first?.hasPrefix("1.1 kiosk-") == true)
            // And the log holds it as the http:// exchange it was
            var logged: RequestRecord?
            for _ in 0..<500 where logged == nil {
                logged = try proxy.records().first { $0.method == "GET" && $0.url == upstream.url("/echo") }
                if logged == nil { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(logged?.status == 200)
        }
    }

    @Test("A leaf is what clients demand: the name in SAN, serverAuth, digitalSignature, CA:false, the CA's key id, 45 days, P-256")
    func leafFields() throws {
        let folder = TemporaryDirectory.url("kiosk-proxy-ca")
        let authority = try ProxyAuthority.inDirectory(folder)
        let ca = try Certificate(pemEncoded: authority.certificatePEM)
        for (host, name) in [("api.example.test", GeneralName.dnsName("api.example.test")),
                             ("127.0.0.1", .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])))] {
            let now = Date()
            let leaf = try Certificate(derEncoded: try authority.mint(for: host, at: now).toDERBytes())
            #expect(try leaf.extensions.subjectAlternativeNames.map(Array.init) == [name])
            #expect(try leaf.extensions.extendedKeyUsage?.contains(.serverAuth) == true)
            #expect(try leaf.extensions.keyUsage?.digitalSignature == true)
            #expect(leaf.extensions[oid: .X509ExtensionID.keyUsage]?.critical == true)
            #expect(try leaf.extensions.basicConstraints == .notCertificateAuthority)
            #expect(try leaf.extensions.authorityKeyIdentifier?.keyIdentifier == ca.extensions.subjectKeyIdentifier?.keyIdentifier)
            // (Both ends count, RFC 5280 §4.1.2.5: 45 days is at most 45 × 86,400 − 1 seconds apart.)
            #expect(leaf.notValidAfter.timeIntervalSince(leaf.notValidBefore) <= 45 * 86_400 - 1)
            #expect(leaf.notValidAfter.timeIntervalSince(now) <= 45 * 86_400 + 1)
            #expect(leaf.issuer == ca.subject)
            #expect(P256.Signing.PublicKey(leaf.publicKey) != nil)
            #expect(ca.publicKey.isValidSignature(leaf.signature, for: leaf))
        }
    }

    @Test("A leaf minted near the CA's end ends with it, not 45 days on")
    func leafEndsWithItsAuthority() throws {
        // Given a CA made ten years ago, five days before its end
        let made = Date().addingTimeInterval(-(10 * 365 - 5) * 86_400)
        let authority = try ProxyAuthority.inDirectory(TemporaryDirectory.url("kiosk-proxy-ca-old"), now: { made })
        let ca = try Certificate(pemEncoded: authority.certificatePEM)
        #expect(authority.expires == ca.notValidAfter)
        // When a leaf is minted now
        let leaf = try Certificate(derEncoded: try authority.mint(for: "api.example.test", at: Date()).toDERBytes())
        // Then it ends when the CA does
        #expect(leaf.notValidAfter == ca.notValidAfter, "leaf \(leaf.notValidAfter), CA \(ca.notValidAfter)")
    }

    @Test("The TLS an app meets sends the CA after the leaf, so a client that pins the CA's key finds it in the chain")
    func chainCarriesTheAuthority() async throws {
        try await withProxy(intercepting: true) { proxy, upstream in
            // When curl fetches through the proxy, counting the certificates it was sent
            let authority = try #require(proxy.authorityFile)
            let (status, output) = try await runCurl(["-sS", "--max-time", "10", "-x", "http://127.0.0.1:\(proxy.port)", "--cacert", authority,
                                                   "-o", "/dev/null", "-w", "%{num_certs}", upstream.secureURL("/echo")])
            // Then it got two: the leaf and the CA
            #expect(status == 0 && String(decoding: output, as: UTF8.self) == "2", "\(String(decoding: output, as: UTF8.self))")
        }
    }

    @Test("Serial numbers are 20 octets at most (RFC 5280 §4.1.2.2), positive, and differ")
    func serialNumbers() {
        let serials = (0..<500).map { _ in ProxyAuthority.serialNumber() }
        #expect(serials.allSatisfy { $0.bytes.count == 20 && $0.bytes.first! & 0x80 == 0 && $0.bytes.first! != 0 })
        #expect(Set(serials.map { Array($0.bytes) }).count == 500)
    }

    @Test("A CA key reached through a symbolic link is judged by the file it names, not the link's own mode")
    func authorityKeyThroughLink() throws {
        let folder = TemporaryDirectory.url("kiosk-proxy-ca-link")
        let first = try ProxyAuthority.inDirectory(folder)
        let keyPath = folder.appendingPathComponent(ProxyAuthority.keyFileName).path
        let elsewhere = TemporaryDirectory.url("kiosk-proxy-ca-key").appendingPathComponent("key.pem").path
        try FileManager.default.createDirectory(atPath: (elsewhere as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: keyPath, toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: keyPath, withDestinationPath: elsewhere)
        #expect(try ProxyAuthority.inDirectory(folder).fingerprint == first.fingerprint)
        chmod(elsewhere, 0o644)
        #expect(SecretFile.othersCanRead(keyPath) == 0o644)
    }

    @Test("The CA is made once per data directory, its key 0600; a key others can read is refused with what to do")
    func authorityFiles() throws {
        let folder = TemporaryDirectory.url("kiosk-proxy-ca")
        let first = try ProxyAuthority.inDirectory(folder)
        let keyPath = folder.appendingPathComponent(ProxyAuthority.keyFileName).path
        #expect(SecretFile.othersCanRead(keyPath) == nil)
        #expect(try ProxyAuthority.inDirectory(folder).fingerprint == first.fingerprint)
        #expect(try ProxyAuthority.inDirectory(TemporaryDirectory.url("kiosk-proxy-ca")).fingerprint != first.fingerprint)
        chmod(keyPath, 0o644)
        #expect {
            _ = try ProxyAuthority.inDirectory(folder)
        } throws: { error in
            "\(error)".contains("can be read by others") && "\(error)".contains("chmod 600")
        }
    }

    @Test("A CA whose key is gone, or whose certificate expired, is refused saying so in words, with what to do")
    func authorityUnusable() throws {
        // Given a data directory's CA
        let folder = TemporaryDirectory.url("kiosk-proxy-ca")
        _ = try ProxyAuthority.inDirectory(folder)
        // When it is read once it has expired (a hundred years on)
        let later = Date().addingTimeInterval(100 * 365 * 86_400)
        // Then it is refused, saying when it expired and to make a new one
        #expect {
            _ = try ProxyAuthority.inDirectory(folder, now: { later })
        } throws: { error in
            "\(error)".contains("the CA certificate expired on ") && "\(error)".contains("Delete both")
        }
        // And with its key deleted, the missing file is named in words, not Foundation's error domain
        try FileManager.default.removeItem(at: folder.appendingPathComponent(ProxyAuthority.keyFileName))
        #expect {
            _ = try ProxyAuthority.inDirectory(folder)
        } throws: { error in
            "\(error)".contains("\(ProxyAuthority.keyFileName) cannot be read") && !"\(error)".contains("NSCocoaErrorDomain")
        }
    }

    /// Runs `body` on `count` threads of their own, released together (as many processes starting at once), and returns
    /// what each returned or threw. Waits off the tests' small cooperative pool, which blocked threads could starve.
    static func atOnce<Value: Sendable>(_ count: Int, _ body: @escaping @Sendable () throws -> Value) async -> [Result<Value, any Error>] {
        await withCheckedContinuation { continuation in
            let outcomes = Mutex<[Result<Value, any Error>]>([])
            let finished = DispatchGroup()
            let start = DispatchSemaphore(value: 0)
            for _ in 0..<count {
                finished.enter()
                Thread.detachNewThread {
                    start.wait()
                    let outcome = Result { try body() }
                    outcomes.withLock { $0.append(outcome) }
                    finished.leave()
                }
            }
            for _ in 0..<count { start.signal() }
            finished.notify(queue: .global()) { continuation.resume(returning: outcomes.withLock { $0 }) }
        }
    }

    /// Whether the CA files in `folder` are a pair: the key's public key is the certificate's.
    static func filesMatch(in folder: URL) throws -> Bool {
        let certificate = try Certificate(pemEncoded: String(contentsOf: folder.appendingPathComponent(ProxyAuthority.certificateFileName),
                                                             encoding: .utf8))
        let key = try Certificate.PrivateKey(pemEncoded: String(contentsOf: folder.appendingPathComponent(ProxyAuthority.keyFileName),
                                                                encoding: .utf8))
        return key.publicKey == certificate.publicKey
    }

    @Test("Sixteen starts at once on one fresh data folder make one CA: each gets the same certificate, the one on disk beside its key")
    func authorityMadeOnceByConcurrentStarts() async throws {
        // Given a data folder that does not exist yet
        let folder = TemporaryDirectory.url("kiosk-proxy-ca-race")
        // When sixteen threads ask for its CA at the same moment (as ten `kiosk proxy ca` or two `kiosk proxy` starting together)
        let outcomes = await Self.atOnce(16) { try ProxyAuthority.inDirectory(folder).certificatePEM }
        // Then none failed, and all got one certificate
        let certificates = try outcomes.map { try $0.get() }
        #expect(Set(certificates).count == 1)
        // And it is the certificate on disk, whose key is beside it: the next start uses it
        let onDisk = try String(contentsOf: folder.appendingPathComponent(ProxyAuthority.certificateFileName), encoding: .utf8)
        #expect(certificates.first == onDisk)
        #expect(try Self.filesMatch(in: folder))
        #expect(try ProxyAuthority.inDirectory(folder).certificatePEM == onDisk)
    }

    @Test("A key left without its certificate (a start that stopped between its two writes), or an empty one, is replaced by a new CA",
          arguments: [P256.Signing.PrivateKey().pemRepresentation + "\n", ""])
    func leftoverKeyReplaced(leftover: String) throws {
        // Given a data folder holding a CA key and no certificate: no CA was ever handed out from it
        let folder = try TemporaryDirectory.make("kiosk-proxy-ca-leftover")
        try SecretFile.write(leftover, to: folder.appendingPathComponent(ProxyAuthority.keyFileName))
        // When the proxy starts on it
        let authority = try ProxyAuthority.inDirectory(folder)
        // Then it makes a CA and writes it whole, its key 0600, and the next start reads the same one
        #expect(try Self.filesMatch(in: folder))
        #expect(SecretFile.othersCanRead(folder.appendingPathComponent(ProxyAuthority.keyFileName).path) == nil)
        #expect(try ProxyAuthority.inDirectory(folder).fingerprint == authority.fingerprint)
    }

    @Test("A CA that cannot be written says so in one sentence naming the file or folder and why, never in Foundation's error codes")
    func authorityWriteFailures() throws {
        // Given a data folder whose key file's name is taken by a folder, and a data folder under a file
        let blocked = try TemporaryDirectory.make("kiosk-proxy-ca-blocked")
        let keyPath = blocked.appendingPathComponent(ProxyAuthority.keyFileName).path
        try FileManager.default.createDirectory(atPath: keyPath, withIntermediateDirectories: false)
        let file = try TemporaryDirectory.make("kiosk-proxy-ca-file").appendingPathComponent("plain")
        try Data("not a folder".utf8).write(to: file)
        for (folder, says) in [(blocked, "cannot write the proxy's CA key \(keyPath): Is a directory"),
                               (file.appendingPathComponent("data"), "cannot create the folder \(file.path)/data for the proxy's CA: "
                                   + "\(file.path) is a file, not a folder")] {
            // When the proxy's CA is asked of it
            let error = #expect(throws: KioskError.self) { _ = try ProxyAuthority.inDirectory(folder) }
            // Then the error names the place and the cause, in words
            #expect(error?.description == "Storage error: \(says)")
        }
    }
}

/// An app that pipelines: its CONNECT and its TLS hello leave in one write, and the proxy's 200 is read off the front of
/// what comes back before TLS sees the rest. Then one GET inside.
private enum EagerTLSClient {
    struct Answer {
        let status: HTTPResponseStatus
        let body: Data
    }

    /// `connectTo` is the CONNECT's host (else `host`, which the hello names); `alpn` what the hello offers; with
    /// `splitHello` the hello's handshake message goes in two TLS records, its name in the second.
    static func get(proxyPort: Int, host: String, connectTo: String? = nil, port: Int, path: String, roots: [NIOSSLCertificate],
                    alpn: [String] = [], splitHello: Bool = false) async throws -> Answer {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(roots)
        tls.applicationProtocols = alpn
        let context = try NIOSSLContext(configuration: tls)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: proxyPort).get()
        defer { channel.close(promise: nil) }
        let promise = channel.eventLoop.makePromise(of: Answer.self)
        let target = connectTo ?? host
        try await channel.eventLoop.submit {
            let operations = channel.pipeline.syncOperations
            // Written, not flushed: the TLS handler's hello flushes both at once.
            operations.write(NIOAny(ByteBuffer(string: "CONNECT \(target):\(port) HTTP/1.1\r\nHost: \(target):\(port)\r\n\r\n")), promise: nil)
            try operations.addHandler(ConnectAnswerStripper())
            if splitHello { try operations.addHandler(HelloSplitter()) }
            try operations.addHandler(NIOSSLClientHandler(context: context, serverHostname: host))
            try operations.addHTTPClientHandlers()
            try operations.addHandler(OneGet(host: "\(host):\(port)", path: path, promise: promise))
        }.get()
        return try await promise.futureResult.get()
    }

    /// Re-frames the first TLS record written (the hello) as two, cut 40 bytes into its handshake message — before the
    /// extensions, so the server name is in the second — as some TLS stacks and middleboxes send it (RFC 8446 §5.1).
    final class HelloSplitter: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private var done = false

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let bytes = Array(unwrapOutboundIn(data).readableBytesView)
            guard !done, bytes.count > 5 + 40, bytes[0] == 0x16 else { return context.write(data, promise: promise) }
            done = true
            let length = Int(bytes[3]) << 8 | Int(bytes[4])
            let payload = bytes[5..<(5 + length)]
            func record(_ fragment: ArraySlice<UInt8>) -> [UInt8] {
                [bytes[0], bytes[1], bytes[2], UInt8(fragment.count >> 8), UInt8(fragment.count & 0xFF)] + fragment
            }
            let split = record(payload.prefix(40)) + record(payload.dropFirst(40)) + bytes[(5 + length)...]
            context.write(wrapOutboundOut(ByteBuffer(bytes: split)), promise: promise)
        }
    }

    /// Drops the proxy's answer to the CONNECT (up to its blank line), then passes every byte on.
    final class ConnectAnswerStripper: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        private var head = ByteBuffer()
        private var passing = false

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !passing else { return context.fireChannelRead(data) }
            var buffer = unwrapInboundIn(data)
            head.writeBuffer(&buffer)
            guard let end = head.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
            head.moveReaderIndex(to: end.upperBound)
            passing = true
            if head.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(head)) }
        }
    }

    /// Sends one GET once TLS is up and completes `promise` with the answer.
    final class OneGet: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart
        let host: String, path: String
        let promise: EventLoopPromise<Answer>
        private var status: HTTPResponseStatus?
        private var body = Data()

        init(host: String, path: String, promise: EventLoopPromise<Answer>) {
            (self.host, self.path, self.promise) = (host, path, promise)
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case .handshakeCompleted? = event as? TLSUserEvent {
                var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
                head.headers.add(name: "Host", value: host)
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
            context.fireUserInboundEventTriggered(event)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): status = head.status
            case .body(let chunk): body.append(contentsOf: chunk.readableBytesView)
            case .end: promise.succeed(Answer(status: status ?? .internalServerError, body: body))
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.fail(error)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            promise.fail(ChannelError.eof)
        }
    }
}

/// An HTTPS upstream that answers without a length, then closes its connection without TLS's close_notify (as
/// Python's ssl servers and many embedded ones do): the answer's end is marked only by the close.
private final class UncleanEndHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        // HTTP/1.0 framing: no Content-Length and no chunking, the body ends with the connection.
        let head = HTTPResponseHead(version: .http1_0, status: .ok, headers: ["Content-Type": "text/plain"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "ended by the close")))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            // The TLS handler's close_notify is dropped on its way out (`Mute`), so the socket just closes.
            if let mute = try? channel.pipeline.syncOperations.handler(type: Mute.self) { mute.muted.withLock { $0 = true } }
            channel.close(promise: nil)
        }
    }

    /// Drops every write once `muted`: put before the TLS handler, it keeps close_notify off the wire.
    final class Mute: ChannelOutboundHandler, Sendable {
        typealias OutboundIn = ByteBuffer
        let muted = Mutex(false)
        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if muted.withLock({ $0 }) { promise?.succeed() } else { context.write(data, promise: promise) }
        }
    }
}

@Suite("kiosk proxy and an HTTPS upstream that ends without close_notify")
struct UncleanEndTests {
    @Test("An answer of no declared length ended by a TLS close without close_notify reaches the app whole, noted on its record, as browsers take it")
    func closeWithoutNotify() async throws {
        // Given an HTTPS upstream that ends its answer by closing without close_notify
        let server = try await LoopbackServer.start { channel in
            try channel.pipeline.syncOperations.addHandler(UncleanEndHandler.Mute())
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: try TestAuthority.shared.upstreamContext()))
            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
            try channel.pipeline.syncOperations.addHandler(UncleanEndHandler())
        }
        try await withProxy(to: server, stop: { await $0.stop() }, intercepting: true) { proxy, server in
            // When an app asks for it through the proxy
            let answer = try await proxy.http.execute(HTTPClientRequest(url: server.secureURL("/ends")), timeout: .seconds(10))
            let body = String(buffer: try await answer.body.collect(upTo: 1 << 20))
            // Then it gets the answer whole, not a 502
            #expect(answer.status == .ok && body == "ended by the close", "\(body)")
            // And the record says how it ended
            let record = try #require(try proxy.records().first { $0.url.hasSuffix("/ends") })
            #expect(record.touchedBy.contains { $0.kind == .uncleanEnd && $0.detail.contains("close_notify") }, "\(record.touchedBy)")
        }
    }
}

/// A TCP server's connection that writes `banner` first (a protocol where the server speaks first), then echoes.
private final class BannerEcho: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private let banner: String?

    init(banner: String?) { self.banner = banner }

    func channelActive(context: ChannelHandlerContext) {
        if let banner { context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: banner)), promise: nil) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.writeAndFlush(data, promise: nil)
    }
}
