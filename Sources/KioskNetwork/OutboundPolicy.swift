import Foundation
import KioskCore
import NIOPosix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address as bytes, classified by what it may reach.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    /// An address from its bytes (4 or 16 of them).
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// A literal host as URLs write it, in every form a resolver would accept: dotted IPv4 and the
    /// decimal, hex, octal and short forms (`2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`, which
    /// `inet_aton` reads as the resolver does), and IPv6 with or without brackets. Nil for a name.
    public init?(literal host: String) {
        var text = host
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if let percent = text.firstIndex(of: "%") { text = String(text[..<percent]) }  // an IPv6 zone
        if text.contains(":") {
            var address = in6_addr()
            guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
            self.bytes = withUnsafeBytes(of: &address) { Array($0) }
            return
        }
        // Names never start with a digit and end in a letter-only label... but `1.example` does, so ask
        // inet_aton: it accepts exactly the numeric forms, anything else is a name to resolve.
        guard let first = text.first, first.isNumber else { return nil }
        var address = in_addr()
        guard inet_aton(text, &address) != 0 else { return nil }
        self.bytes = withUnsafeBytes(of: &address) { Array($0) }
    }

    /// The IPv4 address an IPv6 one carries (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64
    /// `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`), which is where a connection to it really goes.
    public var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        let tail = Array(bytes[12..<16])
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF { return IPAddress(bytes: tail) }
        if bytes[0..<12].allSatisfy({ $0 == 0 }) { return IPAddress(bytes: tail) }
        if bytes[0..<12].elementsEqual([0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0]) { return IPAddress(bytes: tail) }
        if bytes[0] == 0x20, bytes[1] == 0x02 { return IPAddress(bytes: Array(bytes[2..<6])) }
        return nil
    }

    /// Why this address must not be fetched from a picture URL (loopback, private, link-local...), or
    /// nil for an ordinary public address.
    public var nonPublicReason: String? {
        if bytes.count == 4 { return Self.ipv4Reason(bytes) }
        if let reason = Self.ipv6Reason(bytes) { return reason }
        return embeddedIPv4?.nonPublicReason.map { "\($0) (inside \(self))" }
    }

    private static func ipv4Reason(_ b: [UInt8]) -> String? {
        switch (b[0], b[1]) {
        case (0, _): return "an unspecified address"
        case (10, _), (172, 16...31), (192, 168): return "a private address"
        case (100, 64...127): return "a shared (carrier-grade NAT) address"
        case (127, _): return "a loopback address"
        case (169, 254): return "a link-local address"
        case (192, 0) where b[2] == 0 || b[2] == 2: return "a reserved address"
        case (198, 18...19): return "a reserved address"
        case (198, 51) where b[2] == 100, (203, 0) where b[2] == 113: return "a reserved address"
        case (224...239, _): return "a multicast address"
        case (240...255, _): return "a reserved address"
        default: return nil
        }
    }

    private static func ipv6Reason(_ b: [UInt8]) -> String? {
        if b.allSatisfy({ $0 == 0 }) { return "an unspecified address" }
        if b[0..<15].allSatisfy({ $0 == 0 }), b[15] == 1 { return "a loopback address" }
        if b[0] == 0xFE, b[1] & 0xC0 == 0x80 { return "a link-local address" }
        if b[0] == 0xFE, b[1] & 0xC0 == 0xC0 { return "a site-local address" }
        if b[0] & 0xFE == 0xFC { return "a private (unique local) address" }
        if b[0] == 0xFF { return "a multicast address" }
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0, b[3] == 0 { return "a Teredo tunnel address" }
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x0D, b[3] == 0xB8 { return "a reserved address" }
        if b[0] == 0x01, b[1..<8].allSatisfy({ $0 == 0 }) { return "a reserved address" }
        if b[0] == 0, b[1] == 0x64, b[2] == 0xFF, b[3] == 0x9B { return "a NAT64 local-use address" }
        return nil
    }

    /// Whether a connection to this address stays on this machine (127.0.0.0/8, `::1`, or either inside IPv6).
    public var isLoopback: Bool {
        if bytes.count == 4 { return bytes[0] == 127 }
        if bytes[0..<15].allSatisfy({ $0 == 0 }), bytes[15] == 1 { return true }
        return embeddedIPv4?.isLoopback ?? false
    }

    /// Whether a host, by name (`localhost`, `*.localhost`) or literal, is this machine.
    public static func isLoopback(host: String) -> Bool {
        let host = Origin(scheme: "http", host: host, port: 80).host
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        return IPAddress(literal: host)?.isLoopback ?? false
    }

    /// Dotted IPv4 or RFC 5952 IPv6 text.
    public var description: String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Turns a host name into the addresses a connection to it would use.
public protocol HostResolver: Sendable {
    /// Every address `host` resolves to; throws `KioskError.offline` when it resolves to none.
    func addresses(of host: String) async throws -> [IPAddress]
}

/// The system resolver (`getaddrinfo`, run on NIO's blocking-I/O pool so no event loop or task waits
/// on it), remembering answers for a minute: a page of pictures resolves each host once.
public final class SystemHostResolver: HostResolver {
    private let cache = Mutex<[String: (expires: ContinuousClock.Instant, addresses: [IPAddress])]>([:])
    private let lifetime: Duration

    /// A resolver that keeps answers for `lifetime`.
    public init(lifetime: Duration = .seconds(60)) { self.lifetime = lifetime }

    public func addresses(of host: String) async throws -> [IPAddress] {
        let now = ContinuousClock.now
        if let hit = cache.withLock({ $0[host] }), hit.expires > now { return hit.addresses }
        let addresses = try await NIOThreadPool.singleton.runIfActive { Self.lookUp(host) }
        guard !addresses.isEmpty else { throw KioskError.offline(host: host) }
        cache.withLock { cache in
            if cache.count > 1024 { cache.removeAll() }
            cache[host] = (now + lifetime, addresses)
        }
        return addresses
    }

    private static func lookUp(_ host: String) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var result: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let socketAddress = entry.pointee.ai_addr {
                switch Int32(socketAddress.pointee.sa_family) {
                case AF_INET:
                    socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                        var address = pointer.pointee.sin_addr
                        result.append(IPAddress(bytes: withUnsafeBytes(of: &address) { Array($0) })!)
                    }
                case AF_INET6:
                    socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                        var address = pointer.pointee.sin6_addr
                        result.append(IPAddress(bytes: withUnsafeBytes(of: &address) { Array($0) })!)
                    }
                default: break
                }
            }
            cursor = entry.pointee.ai_next
        }
        return result
    }
}

/// The one rule every outbound request Kiosk makes passes, on its first hop and on every redirect:
/// - only http and https;
/// - a catalog request (a page, an item, a probe) goes only to the exact origin — scheme, host and
///   port — of a configured source;
/// - a picture goes to such an origin, or to a host every address of which is public: never loopback,
///   private, link-local, unspecified, multicast or reserved, whether written as a name, a dotted,
///   decimal, hex or octal IPv4 literal, or an IPv6 literal that carries one.
public struct OutboundPolicy: Sendable {
    /// The origins of the configured sources (the demo upstream's among them): the only places a
    /// catalog request may go, and the only non-public places a picture may come from.
    public var sourceOrigins: Set<Origin>
    /// Redirects followed before giving up (each one checked again).
    public var maxRedirects: Int
    /// Resolves names for the picture rule.
    public var resolver: any HostResolver

    /// A policy for these origins.
    public init(sourceOrigins: Set<Origin>, maxRedirects: Int = 5, resolver: any HostResolver = SystemHostResolver()) {
        self.sourceOrigins = sourceOrigins
        self.maxRedirects = maxRedirects
        self.resolver = resolver
    }

    /// Throws `KioskError.refused` with the rule's reason unless `url` may be fetched for `purpose`.
    public func check(_ url: URL, purpose: HTTPRequest.Purpose) async throws {
        let shown = url.redactedString
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw KioskError.refused(url: shown, reason: "only http and https are fetched")
        }
        guard let origin = Origin(url) else { throw KioskError.refused(url: shown, reason: "the URL has no host") }
        if sourceOrigins.contains(origin) { return }
        guard purpose == .picture else {
            throw KioskError.refused(url: shown, reason: "\(origin) is not the origin of a configured source")
        }
        let addresses: [IPAddress]
        if let literal = IPAddress(literal: origin.host) {
            addresses = [literal]
        } else if IPAddress.isLoopback(host: origin.host) {
            throw KioskError.refused(url: shown, reason: "\(origin.host) is a loopback name")
        } else {
            addresses = try await resolver.addresses(of: origin.host)
        }
        for address in addresses {
            if let reason = address.nonPublicReason {
                throw KioskError.refused(url: shown, reason: "\(origin.host) is \(reason)" +
                                         (address.description == origin.host ? "" : " (\(address))"))
            }
        }
    }
}

/// Applies the outbound policy below everything else: the first hop is checked before it is sent, and
/// redirects are followed here (the HTTP client itself follows none), each target checked again, at
/// most `maxRedirects` of them; a refusal is an error the request log records with its reason.
public final class PolicyTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let policy: OutboundPolicy

    /// Wraps the wire transport `base`.
    public init(base: any HTTPTransport, policy: OutboundPolicy) {
        self.base = base
        self.policy = policy
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var hop = request
        var redirects = 0
        while true {
            try await policy.check(hop.url, purpose: hop.purpose)
            let response = try await base.send(hop)
            guard [301, 302, 303, 307, 308].contains(response.status), let location = response.headers["Location"] else {
                return response
            }
            guard let target = URL(string: location, relativeTo: hop.url)?.absoluteURL else {
                throw KioskError.refused(url: hop.url.redactedString, reason: "the redirect's Location is not a URL")
            }
            redirects += 1
            guard redirects <= policy.maxRedirects else {
                throw KioskError.refused(url: request.url.redactedString,
                                         reason: "more than \(policy.maxRedirects) redirects")
            }
            // 303, and 301/302 after a POST, continue as a GET without a body, as browsers do.
            if response.status == 303 || (hop.method == "POST" && response.status <= 302) {
                hop.method = "GET"
                hop.body = nil
            }
            // Credentials never follow a redirect to another origin.
            if Origin(target) != Origin(hop.url) {
                hop.headers["Authorization"] = nil
                hop.headers["Cookie"] = nil
            }
            hop.url = target
        }
    }
}
