import Foundation
import KioskCore
import KioskProxy
import KioskTestSupport
import Testing

@Suite("kiosk proxy --proxy-auth: a password for every client, and other machines kept off this one's own addresses")
struct ProxyAuthTests {
    private static func basic(_ password: String, user: String = ProxyCredentials.user) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    @Test("The password is made once, kept only as a salted digest the owner alone can read, and renewing it retires the old one")
    func passwordFile() throws {
        // Given an empty data directory
        let directory = TemporaryDirectory.url("proxy-auth")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // When credentials are asked for the first time
        let (made, password) = try ProxyCredentials.inDirectory(directory)
        let secret = try #require(password)
        // Then a long random password is given once, and the file holds neither it nor anything readable by others
        #expect(secret.count >= 40)
        let file = directory.appendingPathComponent(ProxyCredentials.fileName)
        let stored = try String(contentsOf: file, encoding: .utf8)
        #expect(!stored.contains(secret))
        #expect(SecretFile.othersCanRead(file.path) == nil)
        #expect(made.admits([Self.basic(secret)]))
        // And read again, the same password is admitted and none is shown
        let (again, none) = try ProxyCredentials.inDirectory(directory)
        #expect(none == nil)
        #expect(again.admits([Self.basic(secret)]))
        #expect(!again.admits([Self.basic(secret + "x")]))
        #expect(!again.admits([Self.basic(secret, user: "admin")]))
        #expect(!again.admits(["Bearer " + secret, "Basic !!!", ""]))
        // And two values, the right one among them, are not one answer: each request tries one guess
        #expect(!again.admits([Self.basic(secret + "x"), Self.basic(secret)]))
        #expect(!again.admits([Self.basic(secret), Self.basic(secret)]))
        // When it is renewed, the old password no longer opens it
        let (renewed, newPassword) = try ProxyCredentials.inDirectory(directory, renew: true)
        #expect(newPassword != nil && newPassword != secret)
        #expect(!renewed.admits([Self.basic(secret)]))
        #expect(try ProxyCredentials.inDirectory(directory).credentials.admits([Self.basic(try #require(newPassword))]))
        // And a digest file others can read is refused, saying what to do
        chmod(file.path, 0o644)
        #expect(throws: KioskError.self) { try ProxyCredentials.inDirectory(directory) }
        do {
            _ = try ProxyCredentials.inDirectory(directory)
        } catch {
            #expect("\(error)".contains("chmod 600"))
        }
    }

    @Test("Sixteen starts at once on one fresh data folder make one password: it is shown once, and it is the one that works")
    func passwordMadeOnceByConcurrentStarts() async throws {
        // Given a data folder that does not exist yet
        let folder = TemporaryDirectory.url("proxy-auth-race")
        // When sixteen threads ask for its credentials at the same moment (as two `kiosk proxy --proxy-auth` starting together)
        let outcomes = await InterceptionTests.atOnce(16) { try ProxyCredentials.inDirectory(folder).newPassword }
        // Then none failed, one made the password and showed it, and the others read it
        let shown = try outcomes.compactMap { try $0.get() }
        #expect(shown.count == 1)
        // And that password is the one the folder admits from now on
        let password = try #require(shown.first)
        #expect(try ProxyCredentials.inDirectory(folder).credentials.admits([Self.basic(password)]))
    }

    @Test("Without the password every request and CONNECT is answered 407 with a Basic challenge; with it the request goes through, the password not passed on")
    func requestsNeedThePassword() async throws {
        let directory = TemporaryDirectory.url("proxy-auth")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (credentials, password) = try ProxyCredentials.inDirectory(directory)
        let secret = try #require(password)
        var configuration = ProxyConfiguration(port: 0)
        configuration.credentials = credentials
        try await withProxy(configuration) { proxy, upstream in
            // Given a client without the password, or with a wrong one
            for headers in [[], [("Proxy-Authorization", Self.basic("wrong"))]] {
                let refused = try await proxy.send(.GET, upstream.url("/echo"), headers: headers)
                // Then it is told to authenticate, and the upstream is not asked
                #expect(refused.status == .proxyAuthenticationRequired)
                #expect(refused.header("Proxy-Authenticate").first?.hasPrefix("Basic realm=") == true)
                #expect(refused.text.contains("password"))
            }
            #expect(upstream.requests == 0)
            let tunnel = try await rawExchange(port: proxy.port, "CONNECT 127.0.0.1:\(upstream.port) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                                               toClose: true)
            #expect(tunnel.hasPrefix("HTTP/1.1 407"), "\(tunnel)")
            // When it sends the password
            let answer = try await proxy.send(.GET, upstream.url("/echo"), headers: [("Proxy-Authorization", Self.basic(secret))])
            // Then the request is forwarded, and the upstream never sees the proxy's credential
            #expect(answer.status == .ok)
            #expect(!answer.text.lowercased().contains("proxy-authorization"))
            #expect(!answer.text.contains(secret))
            // And a CONNECT with it opens a tunnel, through which a request reaches the upstream
            let opened = try await rawExchange(port: proxy.port, "CONNECT 127.0.0.1:\(upstream.port) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                               + "Proxy-Authorization: \(Self.basic(secret))\r\n\r\n"
                                               + "GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(opened.hasPrefix("HTTP/1.1 200"), "\(opened)")
            #expect(opened.contains("X-Upstream: echo"), "\(opened)")
        }
    }

    // Private addresses are refused by the same rule (OutboundPolicyTests tables every range); this test only asks for
    // loopback, so that a regression could never send a test's traffic off the machine.
    @Test("A client on another machine may not reach this machine's loopback addresses, by request, tunnel or switch")
    func otherMachinesStayOff() async throws {
        // Given a proxy whose every client counts as another machine's (the peer check injected)
        var configuration = ProxyConfiguration(port: 0)
        configuration.isLocalPeer = { _ in false }
        try await withProxy(configuration) { proxy, upstream in
            // When such a client asks for this machine's loopback, in every form a proxy takes it
            let request = try await proxy.send(.GET, upstream.url("/echo"))
            let named = try await proxy.send(.GET, "http://localhost:\(upstream.port)/echo")
            let otherLoopback = try await proxy.send(.GET, "http://127.0.0.2:\(upstream.port)/echo")
            let mapped = try await proxy.send(.GET, "http://[::ffff:127.0.0.1]:\(upstream.port)/echo")
            let tunnel = try await rawExchange(port: proxy.port, "CONNECT 127.0.0.1:\(upstream.port) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                                               toClose: true)
            let upgrade = try await rawExchange(port: proxy.port, "GET \(upstream.url("/ws")) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                                + "Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n", toClose: true)
            // Then each is refused by the outbound policy, saying why, and the upstream is never asked
            for answer in [request, named, otherLoopback, mapped] {
                #expect(answer.status == .badGateway)
                #expect(answer.text.contains("refused"), "\(answer.text)")
            }
            #expect(request.text.contains("a loopback address"), "\(request.text)")
            #expect(tunnel.hasPrefix("HTTP/1.1 502") && tunnel.contains("loopback"), "\(tunnel)")
            #expect(upgrade.hasPrefix("HTTP/1.1 502") && upgrade.contains("loopback"), "\(upgrade)")
            #expect(upstream.requests == 0)
        }
    }
}
