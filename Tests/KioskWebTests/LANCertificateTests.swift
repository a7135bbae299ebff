import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import KioskCore
import NIOCore
import NIOSSL
import Testing
import X509
@testable import KioskWeb
import KioskTestSupport

@Suite("HTTPS for the home network")
struct LANCertificateTests {
    static let names = ["kiosk-host", "kiosk-host.local"]
    static let addresses = ["192.168.1.20", "fd00::20"]

    static func folder() -> URL {
        TemporaryDirectory.url("kiosk-lan-tests")
    }

    @Test("A generated certificate parses, names the machine and loopback, lasts under 398 days, and its key file is 0600")
    func generated() throws {
        // Given an empty data directory
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let now = Date()
        // When the self-signed certificate is asked for
        let (material, provenance) = try TLSMaterial.selfSigned(in: folder, names: Self.names, addresses: Self.addresses, now: now)
        // Then one was made, and its file parses as a self-signed server certificate
        #expect(provenance == .created)
        let pem = try String(contentsOf: folder.appendingPathComponent(TLSMaterial.certificateFileName), encoding: .utf8)
        let certificate = try Certificate(pemEncoded: pem)
        #expect(certificate.issuer == certificate.subject)
        #expect(certificate.publicKey.isValidSignature(certificate.signature, for: certificate))
        #expect(try certificate.extensions.basicConstraints == .notCertificateAuthority)
        #expect(try certificate.extensions.extendedKeyUsage?.contains(.serverAuth) == true)
        // And it names the machine's names and addresses, and loopback's
        let alternativeNames = try #require(try certificate.extensions.subjectAlternativeNames)
        let dnsNames = alternativeNames.compactMap { name -> String? in if case .dnsName(let dns) = name { dns } else { nil } }
        let ipAddresses = alternativeNames.compactMap { name -> String? in
            if case .ipAddress(let octets) = name { IPAddress(bytes: Array(octets.bytes))?.description } else { nil }
        }
        #expect(Set(dnsNames) == ["localhost", "kiosk-host", "kiosk-host.local"])
        #expect(Set(ipAddresses) == ["127.0.0.1", "::1", "192.168.1.20", "fd00::20"])
        #expect(Set(material.names) == Set(dnsNames + ipAddresses))
        // And it is valid now, for less than the 398 days browsers accept
        #expect(certificate.notValidBefore <= now && certificate.notValidAfter > now.addingTimeInterval(396 * 86_400))
        #expect(certificate.notValidAfter.timeIntervalSince(certificate.notValidBefore) < 398 * 86_400)
        // And its fingerprint is the SHA-256 of its DER, as browsers write it
        let der = try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem).toDERBytes()
        #expect(material.fingerprint == SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined(separator: ":"))
        #expect(material.fingerprint.count == 32 * 3 - 1)
        // And the key file is readable and writable by its owner only
        let keyPath = folder.appendingPathComponent(TLSMaterial.keyFileName).path
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: keyPath)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
    }

    @Test("A second start reuses the certificate; an expired or unreadable one is replaced, saying why")
    func reuseAndReplacement() throws {
        // Given a certificate made today
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let now = Date()
        let first = try TLSMaterial.selfSigned(in: folder, names: Self.names, addresses: Self.addresses, now: now).material
        // When the next start asks again, with other addresses
        let again = try TLSMaterial.selfSigned(in: folder, names: Self.names, addresses: ["10.0.0.9"], now: now.addingTimeInterval(86_400))
        // Then the same certificate is used
        #expect(again.provenance == .reused)
        #expect(again.material.fingerprint == first.fingerprint)
        // When a start comes after it expired
        let late = now.addingTimeInterval(400 * 86_400)
        let renewed = try TLSMaterial.selfSigned(in: folder, names: Self.names, addresses: Self.addresses, now: late)
        // Then a new one replaces it, and the expiry date is said
        #expect(renewed.provenance == .replacedExpired(first.notValidAfter))
        #expect(renewed.material.fingerprint != first.fingerprint)
        #expect(renewed.material.notValidAfter > late)
        // When the key file is damaged
        try Data("not a key".utf8).write(to: folder.appendingPathComponent(TLSMaterial.keyFileName))
        let repaired = try TLSMaterial.selfSigned(in: folder, names: Self.names, addresses: Self.addresses, now: late)
        // Then a new pair replaces it, saying what was wrong, and the new key file is 0600 again
        guard case .replacedUnreadable(let reason) = repaired.provenance else {
            Issue.record("expected a replacement, got \(repaired.provenance)")
            return
        }
        #expect(reason.contains("private key"))
        let keyPath = folder.appendingPathComponent(TLSMaterial.keyFileName).path
        #expect(try FileManager.default.attributesOfItem(atPath: keyPath)[.posixPermissions] as? Int == 0o600)
        #expect(try TLSMaterial.selfSigned(in: folder, names: Self.names, addresses: Self.addresses, now: late).provenance == .reused)
    }

    @Test("A stored key that others could read is not served again: a new certificate replaces it, saying why")
    func exposedKeyIsReplaced() throws {
        // Given a certificate whose key file was made readable by the group and others
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try TLSMaterial.selfSigned(in: folder, names: Self.names, addresses: Self.addresses, now: Date()).material
        let keyPath = folder.appendingPathComponent(TLSMaterial.keyFileName).path
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyPath)
        #expect(SecretFile.othersCanRead(keyPath) == 0o644)
        // When the next start asks for it
        let next = try TLSMaterial.selfSigned(in: folder, names: Self.names, addresses: Self.addresses, now: Date())
        // Then a new one is made, saying why, and its key is the owner's only
        guard case .replacedUnreadable(let reason) = next.provenance else {
            Issue.record("an exposed key was used again: \(next.provenance)")
            return
        }
        #expect(reason.contains("readable by others (mode 644)"))
        #expect(next.material.fingerprint != first.fingerprint)
        #expect(SecretFile.othersCanRead(keyPath) == nil)
    }

    /// Runs `body` with the app served over HTTPS on a free loopback port, with a generated certificate (its PEM given).
    static func withHTTPS(_ body: @escaping @Sendable (_ port: Int, _ pem: String) async throws -> Void) async throws {
        try await withHarness { harness in
            let (material, _) = try TLSMaterial.selfSigned(in: harness.directory, names: [], addresses: [], now: Date())
            let pem = try String(contentsOf: harness.directory.appendingPathComponent(TLSMaterial.certificateFileName), encoding: .utf8)
            let app = try buildApplication(kiosk: harness.kiosk, configuration: WebConfiguration(host: "127.0.0.1", port: 0, tls: material))
            try await app.test(.ahc(.https)) { client in
                try await body(try #require(client.port), pem)
            }
        }
    }

    @Test("HTTPS refuses a client that offers only CBC suites over TLS 1.2, and serves one offering AES-GCM")
    func modernSuitesOnly() async throws {
        try await Self.withHTTPS { port, pem in
            // Given two TLS 1.2 clients that trust the certificate: one offering only CBC, one only AES-GCM
            func tls12Client(_ suites: String) throws -> HTTPClient {
                var configuration = TLSConfiguration.makeClientConfiguration()
                configuration.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem)])
                configuration.maximumTLSVersion = .tlsv12
                configuration.cipherSuites = suites
                return HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: configuration))
            }
            let cbc = try tls12Client("ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA:ECDHE-ECDSA-AES128-SHA256")
            let gcm = try tls12Client("ECDHE-ECDSA-AES128-GCM-SHA256")
            // When each opens the home page
            // Then the AES-GCM one is served and the CBC one fails its handshake
            let served = try? await gcm.execute(HTTPClientRequest(url: "https://127.0.0.1:\(port)/"), timeout: .seconds(10))
            let refused: (any Error)?
            do {
                _ = try await cbc.execute(HTTPClientRequest(url: "https://127.0.0.1:\(port)/"), timeout: .seconds(1))
                refused = nil
            } catch {
                refused = error
            }
            try await cbc.shutdown()
            try await gcm.shutdown()
            #expect(served?.status == .ok)
            let error = try #require(refused, "a client offering only CBC suites was served")
            #expect(String(reflecting: error).contains("HANDSHAKE_FAILURE"), "\(String(reflecting: error))")
        }
    }

    @Test("Plain HTTP sent to the HTTPS port is answered with a 400 naming the https:// address, and HTTPS is still served")
    func plainHTTPAnswered() async throws {
        try await Self.withHTTPS { port, pem in
            // Given a browser that typed the HTTPS listener's address with http://
            // When its plain request reaches the port
            let answer = try await rawAnswer(port: port, "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            // Then it reads, in plain HTTP, why and where to go (the listener's own address), and the connection ends
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(200))")
            #expect(answer.contains("open https://127.0.0.1:\(port)/"), "\(answer)")
            // And a client speaking TLS to the same port is served as before
            var trusting = TLSConfiguration.makeClientConfiguration()
            trusting.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem)])
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: trusting))
            let served = try? await http.execute(HTTPClientRequest(url: "https://127.0.0.1:\(port)/"), timeout: .seconds(10))
            try await http.shutdown()
            #expect(served?.status == .ok)
        }
    }

    @Test("The address the plain-HTTP answer offers is the listener's own as a phone can open it: IPv4 unmapped from a dual-stack socket, IPv6 in brackets")
    func plainHTTPAnswerAddress() throws {
        // Given the local addresses a --lan listener's connections report (bound to ::, an IPv4 phone is ::ffff:a.b.c.d)
        let mapped = try SocketAddress(ipAddress: "::ffff:192.168.1.5", port: 8443)
        let ipv6 = try SocketAddress(ipAddress: "fd00::20", port: 8443)
        let standard = try SocketAddress(ipAddress: "192.168.1.5", port: 443)
        // Then each is written as an https:// URL a browser opens, the default port left out
        #expect(PlainHTTPOnTLSPort.httpsAddress(mapped) == "https://192.168.1.5:8443/")
        #expect(PlainHTTPOnTLSPort.httpsAddress(ipv6) == "https://[fd00::20]:8443/")
        #expect(PlainHTTPOnTLSPort.httpsAddress(standard) == "https://192.168.1.5/")
    }

    @Test("The user's own certificate and key load; a key that is not the certificate's is refused, naming the files")
    func userFiles() throws {
        // Given two generated pairs
        let one = Self.folder(), two = Self.folder()
        defer { for folder in [one, two] { try? FileManager.default.removeItem(at: folder) } }
        let made = try TLSMaterial.selfSigned(in: one, names: [], addresses: [], now: Date()).material
        _ = try TLSMaterial.selfSigned(in: two, names: [], addresses: [], now: Date())
        let certificate = one.appendingPathComponent(TLSMaterial.certificateFileName).path
        // When the first pair is loaded as the user's files, then with the other pair's key
        let loaded = try TLSMaterial.load(certificateFile: certificate, keyFile: one.appendingPathComponent(TLSMaterial.keyFileName).path)
        // Then the right pair is the same certificate, and the mismatch is refused with a reason
        #expect(loaded.fingerprint == made.fingerprint)
        #expect(loaded.publicKeyPin == made.publicKeyPin)
        let mismatch = #expect(throws: KioskError.self) {
            try TLSMaterial.load(certificateFile: certificate, keyFile: two.appendingPathComponent(TLSMaterial.keyFileName).path)
        }
        #expect(mismatch?.description.contains("not the certificate's") == true)
        #expect(mismatch?.description.contains(certificate) == true)
        #expect(throws: KioskError.self) { try TLSMaterial.load(certificateFile: "/nonexistent/cert.pem", keyFile: "/nonexistent/key.pem") }
    }

    @Test("buildApplication serves real HTTPS with the certificate: a client trusting only it completes the handshake, one trusting the system roots refuses it")
    func handshake() async throws {
        // Given the app with a generated certificate and pairing, on a free loopback port
        let harness = try await Harness.start()
        do {
            let (material, _) = try TLSMaterial.selfSigned(in: harness.directory, names: [], addresses: [], now: Date())
            let pem = try String(contentsOf: harness.directory.appendingPathComponent(TLSMaterial.certificateFileName), encoding: .utf8)
            let app = try buildApplication(kiosk: harness.kiosk, configuration: WebConfiguration(
                host: "127.0.0.1", port: 0, tls: material, pairing: PairingConfiguration(report: { _ in })))
            try await app.test(.ahc(.https)) { client in
                let port = try #require(client.port)
                var trusting = TLSConfiguration.makeClientConfiguration()
                trusting.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem)])
                let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: trusting))
                // Without retries, the handshake's error is reported at once, not replaced by the deadline's on a busy machine.
                var strictConfiguration = HTTPClient.Configuration()
                strictConfiguration.connectionPool.retryConnectionEstablishment = false
                let strict = HTTPClient(eventLoopGroupProvider: .singleton, configuration: strictConfiguration)
                do {
                    // When a client that trusts only this certificate opens the home page by address and by name
                    for url in ["https://127.0.0.1:\(port)/", "https://localhost:\(port)/"] {
                        let response = try await http.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
                        // Then the handshake verifies (chain and name), the loopback peer needs no pairing, and the
                        // cookies (CSRF, Home's visit) are Secure
                        #expect(response.status == .ok, "\(url)")
                        #expect(response.headers["Set-Cookie"].count == 2)
                        #expect(response.headers["Set-Cookie"].allSatisfy { $0.contains("; Secure") })
                    }
                    // And a client trusting only the system's roots refuses the self-signed certificate
                    do {
                        _ = try await strict.execute(HTTPClientRequest(url: "https://127.0.0.1:\(port)/"), timeout: .seconds(20))
                        Issue.record("a client trusting the system roots accepted the self-signed certificate")
                    } catch {
                        #expect(String(reflecting: error).contains("CERTIFICATE_VERIFY_FAILED"), "\(error)")
                    }
                } catch {
                    try await http.shutdown()
                    try await strict.shutdown()
                    throw error
                }
                try await http.shutdown()
                try await strict.shutdown()
            }
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }
}
