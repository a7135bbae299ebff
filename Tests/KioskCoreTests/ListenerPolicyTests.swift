import Synchronization
import Testing
@testable import KioskCore

@Suite("Listener policy: the names and peers a listener answers")
struct ListenerPolicyTests {
    @Test("An address to listen on is an IP address or a host name; a wrong IPv4 address, an empty one or a bracketed one is said",
          arguments: [("127.0.0.1", nil), ("::1", nil), ("0.0.0.0", nil), ("localhost", nil), ("kiosk.lan", nil),
                      ("999.1.1.1", "not an IPv4 address"), ("", "an empty address"), ("my host", "neither an IP address nor a host name"),
                      ("[::1]", "(::1 without them)")])
    func listeningAddresses(host: String, problem: String?) {
        let said = ListenerPolicy.listeningProblem(host)
        #expect(problem == nil ? said == nil : said?.contains(problem!) == true, "\(String(describing: said))")
    }

    @Test("An allowed host is a name or a domain of someone's own: a top-level or registry domain (.com, .co.uk), or a label without a letter or digit, is refused")
    func allowedHosts() {
        for taken in ["kiosk.example", ".lan.example", ".example.co.uk", "my-pi", "_kiosk._tcp.local", ".home.arpa", "KIOSK.EXAMPLE.", ".lan", ".internal", ".local"] {
            #expect(ListenerPolicy.allowedHostProblem(taken) == nil, "\(taken)")
        }
        for refused in [".com", ".co.uk", ".COM.", ".org.au", ".uk", "-", "_", ".-", "-kiosk.example", "kiosk-.example", "a..b", "10.0.0.1"] {
            #expect(ListenerPolicy.allowedHostProblem(refused) != nil, "\(refused)")
        }
        #expect(ListenerPolicy.allowedHostProblem(".co.uk")?.contains("every name under co.uk") == true)
    }

    @Test("A Host header's host is read with or without a port, lowercased, without a trailing dot or brackets", arguments: [
        ("localhost", "localhost"), ("LocalHost:8080", "localhost"), ("localhost.", "localhost"), ("127.0.0.1:80", "127.0.0.1"),
        ("[::1]:8080", "::1"), ("[::1]", "::1"), ("[::ffff:127.0.0.1]:1", "::ffff:127.0.0.1"), ("kiosk_box.lan", "kiosk_box.lan"),
    ])
    func hostNames(authority: String, host: String) {
        #expect(ListenerPolicy.hostName(ofAuthority: authority) == host)
    }

    @Test("Anything else in a Host header is not a host", arguments: [
        "", ":8080", "localhost:", "localhost:80x", "localhost:123456", "user@localhost", "local host", "localhost/x", "[::1",
        "[::1]x", "[localhost]", "a..b", ".localhost", "::1", "evil.example\r\nX: 1", "%6cocalhost",
    ])
    func malformed(authority: String) {
        #expect(ListenerPolicy.hostName(ofAuthority: authority) == nil, "\(authority)")
    }

    @Test("A whole URL as a request's target names its authority, of any scheme; a path, `*` or what is no URL names none", arguments: [
        ("http://evil.test:80/a", "evil.test:80"), ("HTTPS://Evil.Test/a?b", "Evil.Test"), ("ftp://evil.test/api", "evil.test"),
        ("ws://evil.test:1/", "evil.test:1"), ("git+ssh://h.test/x", "h.test"), ("http://u@h.test/", "u@h.test"),
        ("/api/x", nil), ("*", nil), ("h.test:80", nil), ("1http://h.test/", nil), ("ht_tp://h.test/", nil), ("mailto:a@b.test", nil),
    ] as [(String, String?)])
    func targetAuthorities(target: String, authority: String?) {
        #expect(ListenerPolicy.authority(ofTarget: target) == authority, "\(target)")
    }

    @Test("A loopback listener answers localhost, *.localhost and addresses, and refuses other names with 421 saying how to allow one")
    func loopbackNames() throws {
        let policy = ListenerPolicy.loopback(hint: "Use --allowed-host NAME.")
        for host in ["localhost:8080", "app.localhost", "127.0.0.1:8080", "[::1]:8080", "192.168.1.4", "2130706433"] {
            #expect(policy.refusal(hosts: [host], peer: IPAddress(literal: "127.0.0.1")) == nil, "\(host)")
        }
        for host in ["rebound.example:8080", "localhost.rebound.example", "notlocalhost", "127.0.0.1.nip.io"] {
            let refusal = try #require(policy.refusal(hosts: [host], peer: IPAddress(literal: "127.0.0.1")), "\(host)")
            #expect(refusal.status == 421)
            #expect(refusal.message.contains("DNS rebinding"))
        }
        let refusal = try #require(policy.refusal(hosts: ["rebound.example:8080"], peer: IPAddress(literal: "::1")))
        #expect(refusal.message.hasSuffix("Use --allowed-host rebound.example."))
    }

    @Test("No Host, two Hosts or a malformed one is a 400")
    func badHosts() {
        let policy = ListenerPolicy.loopback(), peer = IPAddress(literal: "127.0.0.1")
        #expect(policy.refusal(hosts: [], peer: peer)?.status == 400)
        #expect(policy.refusal(hosts: ["localhost", "localhost"], peer: peer)?.status == 400)
        #expect(policy.refusal(hosts: ["local host"], peer: peer)?.status == 400)
    }

    @Test("A request whose peer cannot be read (its connection already closed) is refused, unless every peer is served")
    func unknownPeer() {
        #expect(ListenerPolicy.loopback().refusal(hosts: ["localhost"], peer: nil)?.status == 403)
        #expect(ListenerPolicy(names: [], peers: .localNetworks(also: NeighbourNetworks([]))).refusal(hosts: ["localhost"], peer: nil)?.status == 403)
        #expect(ListenerPolicy(names: [], peers: .any()).refusal(hosts: ["localhost"], peer: nil) == nil)
    }

    @Test("Configured names are exact, or a domain with its subdomains when written with a leading dot")
    func configuredNames() {
        let policy = ListenerPolicy(names: ["Kiosk.Example.", ".lan.example"], peers: .any())
        #expect(policy.answers("kiosk.example"))
        #expect(!policy.answers("www.kiosk.example"))
        #expect(policy.answers("lan.example") && policy.answers("phone.lan.example") && policy.answers("a.b.lan.example"))
        #expect(!policy.answers("evillan.example") && !policy.answers("lan.example.evil"))
        #expect(ListenerPolicy.isValidName("kiosk.example") && ListenerPolicy.isValidName(".lan.example"))
        #expect(!ListenerPolicy.isValidName("") && !ListenerPolicy.isValidName(".") && !ListenerPolicy.isValidName("a b"))
        #expect(!ListenerPolicy.isValidName("192.168.1.4") && !ListenerPolicy.isValidName("kiosk.example:8080"))
    }

    @Test("A Host with spaces or a tab around it names what is between them (a field's value leaves them out); one inside is no host")
    func paddedHost() {
        let policy = ListenerPolicy(names: [], peers: .any())
        #expect(policy.nameRefusal(hosts: ["localhost:47201 "]) == nil)
        #expect(policy.nameRefusal(hosts: ["\t127.0.0.1:8080\t"]) == nil)
        #expect(policy.nameRefusal(hosts: [" evil.example "])?.status == 421)
        #expect(policy.nameRefusal(hosts: ["local host"])?.status == 400)
    }

    @Test("A loopback listener serves loopback peers only, however the socket writes them", arguments: [
        ("127.0.0.1", true), ("127.9.9.9", true), ("::1", true), ("::ffff:127.0.0.1", true), ("192.168.1.4", false),
        ("2002:7f00:1::1", false), ("::127.0.0.1", false),
    ])
    func loopbackPeers(address: String, served: Bool) throws {
        let peer = try #require(IPAddress(literal: address))
        let refusal = ListenerPolicy.loopback().refusal(hosts: ["localhost"], peer: peer)
        #expect((refusal == nil) == served, "\(address)")
        if !served { #expect(refusal?.status == 403) }
    }

    @Test("Off loopback, peers of local ranges and the machine's own networks are served, global ones refused unless allowed", arguments: [
        ("10.1.2.3", true), ("172.16.0.9", true), ("172.32.0.1", false), ("192.168.1.40", true), ("100.64.3.4", true),
        ("169.254.10.1", true), ("fe80::1", true), ("fd12:3456::7", true), ("::ffff:192.168.1.40", true), ("127.0.0.1", true),
        ("8.8.8.8", false), ("2001:db8:aaaa:1::5", true), ("2001:db8:aaaa:2::5", false), ("203.0.113.77", true),
        ("203.0.114.1", false),
    ])
    func localNetworkPeers(address: String, served: Bool) throws {
        let own = [IPNetwork(IPAddress(literal: "2001:db8:aaaa:1::")!, prefixLength: 64)!,
                   IPNetwork(IPAddress(literal: "203.0.113.10")!, netmask: IPAddress(literal: "255.255.255.0")!)!]
        let peer = try #require(IPAddress(literal: address))
        let policy = ListenerPolicy(names: [], peers: .localNetworks(also: NeighbourNetworks(own)))
        #expect((policy.refusal(hosts: ["localhost"], peer: peer) == nil) == served, "\(address)")
        #expect(ListenerPolicy(names: [], peers: .any()).refusal(hosts: ["localhost"], peer: peer) == nil)
    }
}

@Suite("Neighbour networks")
struct NeighbourNetworksTests {
    @Test("The machine's networks are read once, and again after the interval, so a new address counts without a restart")
    func rereadAfterInterval() {
        // Given a reader whose answer changes, asked at most every 30 s of a clock the test moves
        let answers = Mutex([[IPNetwork(IPAddress(literal: "2001:db8:1::")!, prefixLength: 64)!],
                             [IPNetwork(IPAddress(literal: "2001:db8:2::")!, prefixLength: 64)!]])
        let clock = Mutex(ContinuousClock.now)
        let networks = NeighbourNetworks(interval: .seconds(30), now: { clock.withLock { $0 } }) {
            answers.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }
        }
        // When asked at once, 29 s later, then past the interval
        #expect(networks.contains(IPAddress(literal: "2001:db8:1::9")!))
        clock.withLock { $0 += .seconds(29) }
        #expect(networks.contains(IPAddress(literal: "2001:db8:1::9")!))
        clock.withLock { $0 += .seconds(2) }
        // Then the second answer is used
        #expect(networks.contains(IPAddress(literal: "2001:db8:2::9")!))
        #expect(!networks.contains(IPAddress(literal: "2001:db8:1::9")!))
    }
}
