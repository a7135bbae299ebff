import Foundation
import KioskCore
import NIOHTTP1
import Testing
@testable import KioskProxy

@Suite("A CONNECT's target and the patterns that choose what is read")
struct TunnelTargetTests {
    @Test("An upstream that cannot be reached is named with its port, which tells a machine's servers apart, whether or not the error had it",
          arguments: [("127.0.0.1", "http://127.0.0.1:8081/x", "127.0.0.1:8081"), ("api.test", "https://api.test/x", "api.test:443"),
                      ("::1", "http://[::1]:3000/", "[::1]:3000"), ("127.0.0.1:9", "http://127.0.0.1:9/", "127.0.0.1:9")])
    func unreachableNamesThePort(host: String, url: String, shown: String) throws {
        let refusal = ProxyMessages.failure(KioskError.offline(host: host, reason: .unreachable), url: try #require(URL(string: url)))
        #expect(refusal.message.hasPrefix("Kiosk could not connect to \(shown): no route to it"), "\(refusal.message)")
    }

    @Test("A CONNECT names an address (canonical) or a name a certificate can carry (lowercased, no final dot), and a port of digits",
          arguments: [
            ("Example.TEST:443", "example.test"), ("dot.test.:443", "dot.test"), ("a_b-c.test:8443", "a_b-c.test"),
            ("127.1:443", "127.0.0.1"), ("2130706433:443", "127.0.0.1"), ("[::1]:443", "::1"), ("[0:0:0:0:0:0:0:1]:443", "::1"),
            ("a..b.test:443", nil), (".lead.test:443", nil), ("x.test..:443", nil), ("\(String(repeating: "a", count: 64)).test:443", nil),
            ("\(String(repeating: "abcdefghi.", count: 26)):443", nil), ("[localhost]:443", nil), ("[v1.x]:443", nil),
            ("127.0.0.1:+443", nil), ("127.0.0.1:0443x", nil), ("café.test:443", nil), ("*.test:443", nil), ("host:65536", nil),
            // (IPv6 only in brackets, without a zone: `1::2:3` is itself an address, where its port starts a guess)
            ("::1:443", nil), ("1::2:3", nil), ("[fe80::1%25eth0]:443", nil), ("[fe80::1%eth0]:443", nil),
            // (nor after IPv4, which the address parser would take)
            ("127.0.0.1%lo:443", nil), ("127.0.0.1%00.evil:443", nil), ("10.0.0.1%lo:443", nil),
          ] as [(String, String?)])
    func tunnelTargets(target: String, expected: String?) {
        // Given a CONNECT's authority-form target, when it is read, then it is the host named, or refused
        let read = try? ProxyMessages.tunnelTarget(of: HTTPRequestHead(version: .http1_1, method: .CONNECT, uri: target))
        #expect(read?.host == expected, "\(target)")
        if expected != nil { #expect(read?.port == Int(target.split(separator: ":").last ?? "")) }
    }

    @Test("A CONNECT with two Host fields, or a URL for its target, is refused saying so")
    func refusedConnects() {
        // Given a CONNECT carrying two Hosts, which one counts would be a guess
        let twoHosts = HTTPRequestHead(version: .http1_1, method: .CONNECT, uri: "a.test:443",
                                       headers: HTTPHeaders([("Host", "a.test:443"), ("Host", "evil.example:443")]))
        func refusal(_ head: HTTPRequestHead) -> String? {
            do { _ = try ProxyMessages.tunnelTarget(of: head); return nil } catch { return error.message }
        }
        #expect(refusal(twoHosts)?.contains("more than one Host") == true)
        // And one whose target is a URL, not host:port, is told what CONNECT takes
        let url = HTTPRequestHead(version: .http1_1, method: .CONNECT, uri: "http://localhost:443/")
        #expect(refusal(url)?.contains("not a URL") == true, "\(refusal(url) ?? "taken")")
        // And one Host is read as before
        let one = HTTPRequestHead(version: .http1_1, method: .CONNECT, uri: "a.test:443", headers: HTTPHeaders([("Host", "a.test:443")]))
        #expect((try? ProxyMessages.tunnelTarget(of: one))?.host == "a.test")
    }

    @Test("An address pattern matches the address however it is spelled; a name pattern names only names")
    func addressPatterns() {
        #expect(ProxyConfiguration.matches("127.0.0.1", "127.1") && ProxyConfiguration.matches("127.0.0.1", "127.0.0.1"))
        #expect(ProxyConfiguration.matches("::1", "[::1]") && ProxyConfiguration.matches("::1", "0:0:0:0:0:0:0:1"))
        #expect(!ProxyConfiguration.matches("127.0.0.2", "127.0.0.1") && !ProxyConfiguration.matches("localhost", "127.0.0.1"))
        #expect(ProxyConfiguration.matches("api.example.com", "*.example.com") && !ProxyConfiguration.matches("example.com", "*.example.com"))
        #expect(ProxyConfiguration.matches("example.com.", "example.com"))
    }
}
