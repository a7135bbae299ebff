import Foundation
import Synchronization

// Who a listener of Kiosk answers: the host names it is served under and the peers it serves. Every
// listener Kiosk starts (the web app, the embedded demo upstream and its control port, and any later one)
// judges each request by one `ListenerPolicy` before routing, so that a web page whose DNS name was made
// to point at this machine (DNS rebinding) or a peer from outside the networks Kiosk serves gets a refusal
// that touches no state. This is the rule Jupyter, Vite and webpack-dev-server apply to `Host`.

/// A network: an address and how many of its leading bits are fixed (`10.0.0.0/8`, `fd00::/8`).
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The network's address (its bits past `prefixLength` are ignored).
    public let address: IPAddress
    /// The number of leading bits every member shares.
    public let prefixLength: Int

    /// A network; nil when the prefix is longer than the address.
    public init?(_ address: IPAddress, prefixLength: Int) {
        guard (0...address.bytes.count * 8).contains(prefixLength) else { return nil }
        self.address = address
        self.prefixLength = prefixLength
    }

    /// The network of an address and its netmask (`255.255.255.0`, `ffff:ffff:ffff:ffff::`): the mask's
    /// leading one bits. Nil when the two are of different families.
    public init?(_ address: IPAddress, netmask: IPAddress) {
        guard address.bytes.count == netmask.bytes.count else { return nil }
        self.init(address, prefixLength: netmask.bytes.reduce(0) { $0 + $1.nonzeroBitCount })
    }

    /// Whether `candidate` is in this network. An IPv4 address a dual-stack socket reports as `::ffff:a.b.c.d`
    /// is compared as IPv4.
    public func contains(_ candidate: IPAddress) -> Bool {
        let candidate = candidate.unmapped
        guard candidate.bytes.count == address.bytes.count else { return false }
        var remaining = prefixLength
        for index in address.bytes.indices where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if candidate.bytes[index] & mask != address.bytes[index] & mask { return false }
            remaining -= bits
        }
        return true
    }

    /// `address/prefix`.
    public var description: String { "\(address)/\(prefixLength)" }

    /// IPv6 tunnels that carry any IPv4 host: 6to4 (`2002::/16`) and Teredo (`2001::/32`).
    public static let tunnels: [IPNetwork] = [("2002::", 16), ("2001::", 32)].map { IPNetwork(IPAddress(literal: $0.0)!, prefixLength: $0.1)! }

    /// Loopback, private (RFC 1918), shared (RFC 6598, carrier-grade NAT), link-local and unique local
    /// (RFC 4193) networks: what a home or office network, or this machine, gives its hosts.
    public static let localNetworks: [IPNetwork] = [
        ("127.0.0.0", 8), ("10.0.0.0", 8), ("172.16.0.0", 12), ("192.168.0.0", 16), ("100.64.0.0", 10),
        ("169.254.0.0", 16), ("::1", 128), ("fe80::", 10), ("fc00::", 7),
    ].map { IPNetwork(IPAddress(literal: $0.0)!, prefixLength: $0.1)! }
}

extension IPAddress {
    /// The IPv4 address a dual-stack socket reports as `::ffff:a.b.c.d`, or this address itself. Only the
    /// mapped form: a peer cannot choose it, while other IPv6 forms that embed IPv4 (6to4, NAT64) are real
    /// IPv6 addresses a host may hold.
    public var unmapped: IPAddress {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return self }
        return IPAddress(bytes: Array(bytes[12..<16])) ?? self
    }

    /// Whether a connection from this address comes from this machine: 127.0.0.0/8 or `::1`, or either as a
    /// dual-stack socket reports IPv4. Stricter than `isLoopback`, which also reads 6to4 and NAT64 forms (a
    /// guard for outbound requests): a host on the network may hold such an address, while the kernel drops
    /// packets from outside that claim these.
    public var isLoopbackPeer: Bool {
        let address = unmapped
        if address.bytes.count == 4 { return address.bytes[0] == 127 }
        return address.bytes[0..<15].allSatisfy({ $0 == 0 }) && address.bytes[15] == 1
    }

    /// Whether this address is one a local network gives its hosts (`IPNetwork.localNetworks`).
    public var isLocalNetworkPeer: Bool { IPNetwork.localNetworks.contains { $0.contains(self) } }
}

/// The peers a listener serves.
public enum PeerScope: Sendable {
    /// This machine only: a loopback listener, which no other machine can reach, refuses any other peer
    /// too (a reverse proxy on this machine would make every visitor look local; see docs/SECURITY.md).
    case loopback
    /// This machine, local networks (`IPNetwork.localNetworks`) and the machine's own networks (its
    /// neighbours, whose addresses may be global: an IPv6 phone on the home Wi-Fi).
    case localNetworks(also: NeighbourNetworks)
    /// Any peer (the user opted in); `neighbours` are the machine's own networks, whose peers still count as neighbours
    /// (a phone on the home Wi-Fi's global IPv6 /64 is not a stranger).
    case any(neighbours: NeighbourNetworks = NeighbourNetworks([]))

    /// Whether `peer` is served. A request whose peer is unknown — its connection closed before it was read,
    /// or an in-process responder with no socket — is served only when any peer is.
    public func admits(_ peer: IPAddress?) -> Bool {
        guard let peer else {
            if case .any = self { return true }
            return false
        }
        switch self {
        case .loopback: return peer.isLoopbackPeer
        case .localNetworks(let also): return peer.isLoopbackPeer || peer.isLocalNetworkPeer || also.contains(peer)
        case .any: return true
        }
    }

    /// Whether a peer is one of the networks this scope serves besides loopback (a neighbour rather than a
    /// stranger from the internet).
    public func isNeighbour(_ peer: IPAddress) -> Bool {
        switch self {
        case .loopback: return peer.isLoopbackPeer
        case .localNetworks(let also): return peer.isLoopbackPeer || peer.isLocalNetworkPeer || also.contains(peer)
        case .any(let neighbours): return peer.isLoopbackPeer || peer.isLocalNetworkPeer || neighbours.contains(peer)
        }
    }
}

/// The machine's own networks, read again at most every `interval`, so that a new address (a rotated IPv6
/// prefix, another Wi-Fi) counts without a restart.
public final class NeighbourNetworks: Sendable {
    private struct State {
        var networks: [IPNetwork]
        var readAt: ContinuousClock.Instant?
    }

    private let read: @Sendable () -> [IPNetwork]
    private let interval: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let state = Mutex(State(networks: [], readAt: nil))

    /// The networks `read` returns, read when first asked and again once `interval` has passed by `now`.
    public init(interval: Duration = .seconds(30), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
                read: @escaping @Sendable () -> [IPNetwork]) {
        self.read = read
        self.interval = interval
        self.now = now
    }

    /// A fixed set (tests, and listeners that serve no neighbours).
    public convenience init(_ networks: [IPNetwork]) {
        self.init(interval: .seconds(1 << 40)) { networks }
    }

    /// Whether `address` is in one of the networks.
    public func contains(_ address: IPAddress) -> Bool {
        let now = now()
        let networks = state.withLock { state in
            if let readAt = state.readAt, now - readAt < interval { return state.networks }
            state.networks = read()
            state.readAt = now
            return state.networks
        }
        return networks.contains { $0.contains(address) }
    }
}

/// Why a listener refuses a request, before routing: an HTTP status and a message for the person or
/// program that sent it.
public struct ListenerRefusal: Sendable, Hashable, Error {
    /// 400 (no usable Host), 421 (a name this listener is not served under) or 403 (a peer it does not serve).
    public let status: Int
    /// One or two sentences, plain text.
    public let message: String
}

/// The names and peers one listener answers. A request passes when its `Host` is one of the listener's
/// names (or an IP address, which no DNS answer can stand for) and its peer is in the listener's scope.
public struct ListenerPolicy: Sendable {
    /// The TLS 1.2 suites Kiosk's TLS listeners offer (`serve --lan`, the proxy's interception), in OpenSSL's names,
    /// strongest first: forward-secret AEAD suites only, no CBC, no SHA-1 MAC, no RSA key exchange (TLS 1.3's are all so).
    public static let tls12CipherSuites = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    /// Exact host names (lowercased, no trailing dot), beyond `localhost` and `*.localhost`, which every
    /// listener answers (browsers resolve them to loopback themselves, never through DNS).
    public let names: Set<String>
    /// Domains whose every subdomain is answered too (written `.example.com`, stored without the dot).
    public let domains: Set<String>
    /// The peers served.
    public let peers: PeerScope
    /// What a refused name's message suggests, e.g. "start it with --allowed-host NAME" (`NAME` is replaced).
    public let hint: String?
    /// Host header values already answered: the decision depends on the value alone, and a listener meets the
    /// same few again on every request, so a set lookup spares parsing them again.
    private let answered = AnsweredHosts()

    /// A policy answering `names` (each an exact name, or `.example.com` for a domain and its subdomains;
    /// case and a trailing dot do not matter) and `peers`.
    public init(names: [String], peers: PeerScope, hint: String? = nil) {
        var exact = Set<String>(), domains = Set<String>()
        for name in names.map(Self.normalized) where !name.isEmpty {
            if name.hasPrefix(".") { domains.insert(String(name.dropFirst())) } else { exact.insert(name) }
        }
        self.names = exact
        self.domains = domains
        self.peers = peers
        self.hint = hint
    }

    /// A loopback listener answering `localhost`, `*.localhost`, IP addresses and `names`.
    public static func loopback(names: [String] = [], hint: String? = nil) -> ListenerPolicy {
        ListenerPolicy(names: names, peers: .loopback, hint: hint)
    }

    /// Why `host` cannot be an address to listen on (empty, "999.1.1.1", "my host"); nil for an IP address or a host
    /// name, which the system looks up.
    public static func listeningProblem(_ host: String) -> String? {
        if host.isEmpty { return "an empty address" }
        if host.hasPrefix("["), host.hasSuffix("]"), IPAddress(literal: String(host.dropFirst().dropLast())) != nil {
            return "an IPv6 address in [ ], which a URL needs and a listener does not (\(host.dropFirst().dropLast()) without them)"
        }
        if IPAddress(literal: host) != nil { return nil }
        // All digits and dots is an IPv4 address written wrong, never a name (a browser reads it as an address too).
        if host.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) { return "not an IPv4 address (four numbers from 0 to 255)" }
        return isValidName(host) ? nil : "neither an IP address nor a host name"
    }

    /// Why an `--allowed-host` value cannot be taken, nil when it can: a host name whose every label has a letter or a
    /// digit and neither starts nor ends with `-`, or a domain (`.example.com`) of someone's own — not a top-level
    /// domain nor a registry's (`.com`, `.co.uk`), under which any site's name could be pointed at Kiosk (DNS rebinding).
    public static func allowedHostProblem(_ text: String) -> String? {
        guard isValidName(text) else {
            return "is not a host name (letters, digits, - and dots; .example.com for a domain and its subdomains; addresses are always answered)"
        }
        let name = normalized(text), domain = name.hasPrefix(".")
        let labels = (domain ? String(name.dropFirst()) : name).split(separator: ".", omittingEmptySubsequences: false)
        if let bad = labels.first(where: { label in
            !label.utf8.contains { (48...57).contains($0) || (97...122).contains($0) } || label.hasPrefix("-") || label.hasSuffix("-")
        }) {
            return "is not a host name: its label “\(bad.prefix(63))” needs a letter or a digit, and may not start or end with -"
        }
        guard domain else { return nil }
        // (A heuristic, with no public suffix list: the domains no one registers names under — private use, or special
        // — are a home network's own; the registries named cover the common second-level ones, not shared hosting's
        // such as .github.io, which LAN.md says to leave out.)
        let privateUse: Set<Substring> = ["home", "internal", "lan", "local", "localdomain", "corp", "intranet", "private", "test", "example"]
        let registries: Set<Substring> = ["ac", "co", "com", "edu", "go", "gob", "gov", "ltd", "mil", "ne", "net", "or", "org", "plc", "sch"]
        if (labels.count == 1 && !privateUse.contains(labels[0]))
            || (labels.count == 2 && registries.contains(labels[0]) && labels[1].allSatisfy(\.isLetter)) {
            return "would answer every name under \(name.dropFirst()), a domain that is no one's own: any web site's name there could "
                + "be pointed at Kiosk and its pages act on it (DNS rebinding); give your own domain (.example.com) or names"
        }
        return nil
    }

    /// Whether an `--allowed-host` value is a name this policy can hold: an exact name or `.domain`, of
    /// letters, digits, `-`, `_` and dots, not an address (addresses are always answered).
    public static func isValidName(_ text: String) -> Bool {
        let name = normalized(text)
        let body = name.hasPrefix(".") ? String(name.dropFirst()) : name
        return !body.isEmpty && body.utf8.count <= 253 && !body.hasPrefix(".") && !body.contains("..")
            && body.utf8.allSatisfy(Self.isNameByte) && IPAddress(literal: body) == nil
    }

    /// The refusal for a request whose Host header values are `hosts` (all of them: HTTP/1.1 allows exactly
    /// one) from `peer`; nil when it is answered. A request whose peer is unknown is refused unless any peer is
    /// served (`PeerScope.admits`).
    public func refusal(hosts: [String], peer: IPAddress?) -> ListenerRefusal? {
        guard peers.admits(peer) else {
            let from = peer.map { "\($0.unmapped)" } ?? "an address that could not be read"
            if case .loopback = peers {
                return ListenerRefusal(status: 403, message: "Kiosk on this address serves this machine only, and this connection comes from \(from).")
            }
            return ListenerRefusal(status: 403, message: "Kiosk serves the machine it runs on and its local networks; \(from) is outside them "
                                       + "(kiosk serve --allow-global-peers admits every address).")
        }
        return nameRefusal(hosts: hosts)
    }

    /// The refusal for a request whose Host header values are `hosts` by the names alone (a listener whose peers are
    /// judged otherwise: `kiosk proxy`'s reverse listeners, on loopback only); nil when it is answered.
    public func nameRefusal(hosts given: [String]) -> ListenerRefusal? {
        // A field's value leaves out the whitespace around it (RFC 9110 §5.5): `Host: name:port ` names name:port.
        let padded = { (value: String) in value.utf8.first.map(Self.isFieldWhitespace) == true || value.utf8.last.map(Self.isFieldWhitespace) == true }
        let hosts = given.contains(where: padded) ? given.map { $0.trimmingCharacters(in: Self.fieldWhitespace) } : given
        if hosts.count == 1, answered.contains(hosts[0]) { return nil }
        guard hosts.count == 1, let host = Self.hostName(ofAuthority: hosts[0]) else {
            return ListenerRefusal(status: 400, message: hosts.isEmpty
                ? "The request has no Host header, which HTTP/1.1 requires."
                : hosts.count > 1 ? "The request has \(hosts.count) Host headers; HTTP allows one."
                : "The request's Host header is not a host name or an address with an optional port.")
        }
        guard answers(host) else {
            var message = "Kiosk does not answer to the name \u{201C}\(host)\u{201D}: it answers only to the names it is "
                + "served under, so that no web page can reach it through a name made to point at this machine (DNS rebinding)."
            if let hint { message += " " + hint.replacingOccurrences(of: "NAME", with: host) }
            return ListenerRefusal(status: 421, message: message)
        }
        answered.insert(hosts[0])
        return nil
    }

    /// The whitespace a field value may have around it (OWS: spaces and tabs).
    private static let fieldWhitespace = CharacterSet(charactersIn: " \t")
    private static func isFieldWhitespace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    /// Whether the (normalised) host name is answered.
    public func answers(_ host: String) -> Bool {
        let host = Self.normalized(host)
        if host == "localhost" || host.hasSuffix(".localhost") || names.contains(host) { return true }
        if IPAddress(literal: host) != nil { return true }
        return domains.contains { host == $0 || host.hasSuffix("." + $0) }
    }

    /// The authority of a target in absolute form, `scheme://authority…` (user information included, which no Host may
    /// hold: such a request is refused as naming no valid host); nil for an origin-form target (`/path`). Of any scheme: a
    /// server reads the path of `ftp://rebound.example/api` as it does `http://`'s, so its name is judged alike.
    public static func authority(ofTarget target: String) -> String? {
        let bytes = target.utf8
        guard let first = bytes.first, first != UInt8(ascii: "/"), first != UInt8(ascii: "*"),
              let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        // RFC 3986 §3.1: a letter, then letters, digits, `+`, `-` and `.`.
        let scheme = target.utf8[..<colon]
        let isLetter = { (byte: UInt8) in (65...90).contains(byte) || (97...122).contains(byte) }
        guard let letter = scheme.first, isLetter(letter),
              scheme.allSatisfy({ isLetter($0) || (48...57).contains($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }),
              target[colon...].hasPrefix("://") else { return nil }
        let start = target.utf8.index(colon, offsetBy: 3)
        let rest = target[start...]
        let end = rest.utf8.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? rest.endIndex
        return String(rest[..<end])
    }

    /// The host of a Host header value (`name`, `name:port`, `1.2.3.4:80`, `[::1]:8080`), lowercased and
    /// without a trailing dot; nil when the value is anything else (userinfo, a path, spaces, an empty or
    /// non-numeric port, characters no host name has).
    public static func hostName(ofAuthority authority: String) -> String? {
        var host = Substring(authority)
        var port: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                port = rest.dropFirst()
            }
            let literal = host[host.startIndex...close]
            guard let address = IPAddress(literal: String(literal)), address.bytes.count == 16,
                  literal.dropFirst().dropLast().utf8.allSatisfy({ isHexByte($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") })
            else { return nil }
            host = literal
        } else if let colon = host.lastIndex(of: ":") {
            port = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        if let port, port.isEmpty || port.utf8.count > 5 || !port.utf8.allSatisfy({ (48...57).contains($0) })
            || !(1...65_535).contains(Int(port) ?? 0) { return nil }
        guard !host.isEmpty, host.utf8.count <= 255 else { return nil }
        if !host.hasPrefix("[") {
            guard host.utf8.allSatisfy(isNameByte), !host.hasPrefix("."), !host.contains("..") else { return nil }
        }
        return normalized(String(host))
    }

    /// Lowercased, brackets and one trailing dot removed (`LocalHost.` and `localhost` are one name).
    static func normalized(_ name: String) -> String {
        var name = name.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.count > 1, name.hasSuffix(".") { name.removeLast() }
        return name
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
    }

    private static func isHexByte(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
    }
}

/// The Host values a listener answered, at most `capacity` of them (a client sending ever new ones — each a
/// valid name with another port — only stops being remembered).
final class AnsweredHosts: Sendable {
    private let values = Mutex(Set<String>())
    private let capacity = 256

    func contains(_ value: String) -> Bool { values.withLock { $0.contains(value) } }

    func insert(_ value: String) {
        values.withLock { values in
            if values.count < capacity { values.insert(value) }
        }
    }
}
