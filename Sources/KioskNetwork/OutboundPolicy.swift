public import Foundation
public import KioskCore
public import NIOCore
import NIOPosix
import Synchronization

/// Turns a host name into the addresses a connection to it would use.
public protocol HostResolver: Sendable {
    /// Every address `host` resolves to (the outbound policy's check: may be remembered a while); throws
    /// `KioskError.offline` when it resolves to none.
    func addresses(of host: String) async throws -> [IPAddress]
    /// The socket addresses a connection to `host:port` dials, looked up for it (not remembered: a name's new records
    /// count at once), IPv6 scopes kept; throws `KioskError.offline` when there are none.
    func dialAddresses(of host: String, port: Int) async throws -> [SocketAddress]
}

extension HostResolver {
    /// `addresses(of:)` at `port`: what a resolver that only knows addresses (a test's) dials.
    public func dialAddresses(of host: String, port: Int) async throws -> [SocketAddress] {
        try await addresses(of: host).map { try SocketAddress(ipAddress: $0.description, port: port) }
    }
}

/// The system resolver (`getaddrinfo`, run on NIO's blocking-I/O pool so no event loop or task waits
/// on it): the policy's checks remember answers for a minute (a page of pictures resolves each host once); a
/// connection's lookup is its own, fresh.
public final class SystemHostResolver: HostResolver {
    private let cache = Mutex<[String: (expires: ContinuousClock.Instant, addresses: [IPAddress])]>([:])
    private let lifetime: Duration

    /// A resolver that keeps answers for `lifetime`.
    public init(lifetime: Duration = .seconds(60)) { self.lifetime = lifetime }

    public func addresses(of host: String) async throws -> [IPAddress] {
        let now = ContinuousClock.now
        if let hit = cache.withLock({ $0[host] }), hit.expires > now { return hit.addresses }
        let addresses = try await lookUp(host, port: 0).compactMap { $0.ipAddress.flatMap(IPAddress.init(literal:)) }
        cache.withLock { cache in
            if cache.count > 1024 { cache.removeAll() }
            cache[host] = (now + lifetime, addresses)
        }
        return addresses
    }

    public func dialAddresses(of host: String, port: Int) async throws -> [SocketAddress] {
        try await lookUp(host, port: port)
    }

    /// `getaddrinfo` of `host` on NIO's blocking-I/O pool, its answers at `port`; throws `KioskError.offline` for none.
    private func lookUp(_ host: String, port: Int) async throws -> [SocketAddress] {
        let answers = try await NIOThreadPool.singleton.runIfActive { SystemLookup.answers(for: host, port: port) }
        // Whole, as getaddrinfo gave them: an IPv6 link-local address keeps its scope (its interface).
        let addresses = answers.map { answer in
            answer.bytes.withUnsafeBytes { bytes in
                answer.isIPv6 ? SocketAddress(bytes.loadUnaligned(as: sockaddr_in6.self), host: host)
                    : SocketAddress(bytes.loadUnaligned(as: sockaddr_in.self), host: host)
            }
        }
        guard !addresses.isEmpty else { throw KioskError.offline(host: host, reason: .unresolved) }
        return addresses
    }
}

/// The one rule every outbound request Kiosk makes passes, on its first hop and on every redirect:
/// - only http and https;
/// - a catalog request (a page, an item, a probe) goes only to the exact origin — scheme, host and
///   port — of a configured source;
/// - a picture goes to such an origin, or to a host every address of which is public: never loopback,
///   private, link-local, unspecified, multicast or reserved, whether written as a name, a dotted,
///   decimal, hex or octal IPv4 literal, or an IPv6 literal that carries one;
/// - an app's request through the proxy from this machine goes to any http(s) origin; from another
///   machine, only to a host every address of which is public (the picture rule, without the sources'
///   exception); its redirects are answered to the app, not followed.
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

    /// Refuses (`KioskError.refused`, with the reason) what `purpose` may not fetch at `url`; returns whether the addresses
    /// dialled for it must be public (the connection checks them again as it dials).
    @discardableResult
    public func check(_ url: URL, purpose: HTTPRequest.Purpose) async throws -> Bool {
        // Put in words only for a refusal: every proxied request passes here, and redacting a URL is not free.
        var shown: String { url.redactedString }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw KioskError.refused(url: shown, reason: "only http and https are fetched")
        }
        // An app's request from this machine may go to any host: checked for having one, with no Origin made (every
        // request through the proxy comes here).
        if purpose == .proxied {
            guard url.host(percentEncoded: true)?.isEmpty == false else { throw KioskError.refused(url: shown, reason: "the URL has no host") }
            return false
        }
        guard let origin = Origin(url) else { throw KioskError.refused(url: shown, reason: "the URL has no host") }
        if sourceOrigins.contains(origin) && purpose != .proxiedForNetwork { return false }
        guard purpose == .picture || purpose == .proxiedForNetwork else {
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
        return true
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
            hop.addressesMustBePublic = try await policy.check(hop.url, purpose: hop.purpose)
            let response = try await base.send(hop)
            guard !hop.purpose.isProxied, [301, 302, 303, 307, 308].contains(response.status),
                  let location = response.headers["Location"] else {
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
