import Foundation
import KioskCore
import KioskNetwork
import Testing

/// A resolver with a fixed table, counting look-ups.
private struct TableResolver: HostResolver {
    let table: [String: [String]]
    func addresses(of host: String) async throws -> [IPAddress] {
        guard let texts = table[host] else { throw KioskError.offline(host: host) }
        return texts.compactMap { IPAddress(literal: $0) }
    }
}

@Suite("The outbound policy")
struct OutboundPolicyTests {
    let demo = Origin(URL(string: "http://127.0.0.1:47800/api")!)!
    var policy: OutboundPolicy {
        OutboundPolicy(sourceOrigins: [demo, Origin(URL(string: "https://api.nytimes.com/svc")!)!],
                       resolver: TableResolver(table: ["static01.nyt.com": ["151.101.1.164", "2a04:4e42::420"],
                                                       "rebound.example": ["8.8.8.8", "127.0.0.1"],
                                                       "metadata.example": ["169.254.169.254"],
                                                       "v6local.example": ["fd00::1"]]))
    }

    private func refusal(_ text: String, _ purpose: HTTPRequest.Purpose = .picture) async -> String? {
        do {
            try await policy.check(URL(string: text)!, purpose: purpose)
            return nil
        } catch let KioskError.refused(_, reason) {
            return reason
        } catch {
            return "unexpected \(error)"
        }
    }

    @Test("every literal form of a loopback, private, link-local, unspecified or multicast address is refused for pictures",
          arguments: ["http://127.0.0.1:9/x.png", "http://127.0.0.2/x", "http://2130706433/x", "http://0x7f000001/x",
                      "http://0177.0.0.1/x", "http://127.1/x", "http://0/x", "http://0.0.0.0:8080/x", "http://[::1]/x",
                      "http://[::]/x", "http://[::ffff:127.0.0.1]/x", "http://[::ffff:7f00:1]/x", "http://[::127.0.0.1]/x",
                      "http://[64:ff9b::a9fe:a9fe]/x", "http://[2002:7f00:1::]/x", "http://169.254.169.254/latest/meta-data",
                      "http://[fe80::1]/x", "http://10.0.0.1/x", "http://172.16.5.4/x", "http://192.168.1.1/x",
                      "http://100.64.0.1/x", "http://[fd12:3456::1]/x", "http://224.0.0.1/x", "http://[ff02::1]/x",
                      "http://255.255.255.255/x", "http://localhost/x", "http://LOCALHOST./x", "http://api.localhost/x"])
    func literalsRefused(url: String) async {
        // Given a picture URL naming this machine or a private network in some form
        // When the policy checks it
        let reason = await refusal(url)
        // Then it is refused, saying why
        #expect(reason != nil && reason?.hasPrefix("unexpected") == false, "\(url) was \(reason ?? "allowed")")
    }

    @Test("a name that resolves to any non-public address is refused; one that resolves to public ones only is allowed")
    func resolvedNames() async {
        #expect(await refusal("https://static01.nyt.com/images/a.jpg") == nil)
        #expect(await refusal("http://rebound.example/a.png")?.contains("loopback") == true)
        #expect(await refusal("http://metadata.example/latest")?.contains("link-local") == true)
        #expect(await refusal("http://v6local.example/a.png")?.contains("private") == true)
    }

    @Test("an app's request from another machine through kiosk proxy reaches public hosts only; from this machine, any host",
          arguments: ["http://127.0.0.1:47800/api/character", "http://[::1]:3000/", "http://10.0.0.1/x", "http://192.168.1.1/router",
                      "http://169.254.169.254/latest/meta-data", "http://[fd12:3456::1]/x", "http://localhost:8080/",
                      "http://rebound.example/a", "http://v6local.example/"])
    func proxiedForTheNetwork(url: String) async {
        // Given a URL naming this machine, a private network or a name resolving into one (a configured source's origin too)
        // When a client on another machine asks for it through the proxy, it is refused, saying why
        let reason = await refusal(url, .proxiedForNetwork)
        #expect(reason != nil && reason?.hasPrefix("unexpected") == false, "\(url) was \(reason ?? "allowed")")
        // And a client on this machine may ask for it (its own local backend)
        #expect(await refusal(url, .proxied) == nil)
    }

    @Test("an app's request from another machine to a host with public addresses only is allowed")
    func proxiedForTheNetworkPublic() async {
        #expect(await refusal("https://static01.nyt.com/svc/x.json", .proxiedForNetwork) == nil)
        #expect(await refusal("https://8.8.8.8/", .proxiedForNetwork) == nil)
    }

    @Test("the exact origin of a configured source is allowed even on loopback, and only with its port and scheme")
    func sourceOrigins() async {
        #expect(await refusal("http://127.0.0.1:47800/api/character/avatar/1.jpeg") == nil)
        #expect(await refusal("http://127.0.0.1:47800/api/character", .catalog) == nil)
        #expect(await refusal("http://127.0.0.1:47801/debug") != nil)
        #expect(await refusal("https://127.0.0.1:47800/api") != nil)
        #expect(await refusal("http://api.nytimes.com/svc", .catalog) != nil)
    }

    @Test("a catalog request goes nowhere but a configured source's origin, public or not")
    func catalogsOnlyToSources() async {
        #expect(await refusal("https://static01.nyt.com/svc/x.json", .catalog)?.contains("not the origin of a configured source") == true)
        #expect(await refusal("https://api.nytimes.com/svc/mostpopular/v2/viewed/7.json", .catalog) == nil)
    }

    @Test("only http and https are fetched", arguments: ["file:///etc/passwd", "ftp://static01.nyt.com/a", "gopher://127.0.0.1:47800/"])
    func schemes(url: String) async {
        #expect(await refusal(url)?.contains("only http and https") == true)
    }
}

@Suite("Proxy settings")
struct ProxySettingsTests {
    @Test("HTTPS_PROXY, HTTP_PROXY and NO_PROXY are read in either case, lowercase first")
    func environment() throws {
        let settings = try ProxySettings.fromEnvironment([
            "HTTPS_PROXY": "http://upper:1", "https_proxy": "http://127.0.0.1:8080", "HTTP_PROXY": "proxy.lan:3128",
            "NO_PROXY": "example.com, .internal.net,10.1.2.3:8443",
        ])
        #expect(settings.httpsProxy?.absoluteString == "http://127.0.0.1:8080")
        #expect(settings.httpProxy?.absoluteString == "http://proxy.lan:3128")
        #expect(settings.noProxy == ["example.com", ".internal.net", "10.1.2.3:8443"])
        #expect(throws: KioskError.self) { try ProxySettings.fromEnvironment(["HTTPS_PROXY": "socks5://x:1"]) }
    }

    @Test("NO_PROXY hosts, domains and ports go direct; loopback goes direct unless asked")
    func decisions() throws {
        var settings = ProxySettings(httpProxy: URL(string: "http://p:1"), httpsProxy: URL(string: "http://p:2"),
                                     noProxy: ["example.com", ".internal.net", "10.1.2.3:8443"])
        func proxy(_ url: String) -> String? {
            let url = URL(string: url)!
            return settings.proxy(for: url, connectingTo: url.host!, port: url.port ?? 443)?.absoluteString
        }
        #expect(proxy("https://api.nytimes.com/x") == "http://p:2")
        #expect(proxy("http://rickandmortyapi.com:80/x") == "http://p:1")
        #expect(proxy("https://example.com/x") == nil)
        #expect(proxy("https://cdn.example.com/x") == nil)
        #expect(proxy("https://notexample.com/x") == "http://p:2")
        #expect(proxy("https://a.internal.net/x") == nil)
        #expect(proxy("https://10.1.2.3:8443/x") == nil)
        #expect(proxy("https://10.1.2.3:9443/x") == "http://p:2")
        #expect(proxy("http://127.0.0.1:47800/x") == nil)
        #expect(proxy("http://localhost:47800/x") == nil)
        settings.proxyLoopback = true
        #expect(proxy("http://127.0.0.1:47800/x") == "http://p:1")
        settings.noProxy = ["*"]
        #expect(proxy("https://api.nytimes.com/x") == nil)
    }
}
