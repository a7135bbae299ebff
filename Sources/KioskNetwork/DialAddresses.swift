import KioskCore
package import NIOCore
import NIOPosix

/// The addresses a connection dials, checked as it dials them. The outbound policy checks a name's addresses before a
/// request goes; a name that answers a public address to that check and this machine's loopback to the connection (DNS
/// rebinding) would pass it. So every dialler — Kiosk's client, the proxy's tunnels and protocol switches — looks the
/// name up itself (its own lookup, timed: the exchange's DNS phase), and when the request may reach only public
/// addresses, refuses any of those it was about to dial that is not.
package enum DialAddresses {
    /// The socket addresses for `host:port`: an address as it is written, or what `resolver` finds for a name (or for an
    /// address spelt otherwise, `127.1`, `fe80::1%eth0`) within `limit` — past it, `KioskError.offline` with the name
    /// not resolved. With `publicOnly`, throws `KioskError.refused` (for `url()`) naming the first that
    /// is not public.
    package static func look(up host: String, port: Int, publicOnly: Bool, resolver: any HostResolver, within limit: Duration,
                             url: () -> String) async throws -> [SocketAddress] {
        guard (1...65535).contains(port) else { throw KioskError.refused(url: url(), reason: "\(port) is not a TCP port") }
        let addresses: [SocketAddress]
        if let exact = try? SocketAddress(ipAddress: host, port: port) {
            addresses = [exact]
        } else {
            addresses = try await within(limit, host: host) { try await resolver.dialAddresses(of: host, port: port) }
        }
        if publicOnly, let reason = refusal(of: addresses, host: host) { throw KioskError.refused(url: url(), reason: reason) }
        return addresses
    }

    /// What `lookup` finds, or `KioskError.offline` once `limit` has passed — without waiting for a lookup that does not
    /// heed cancellation: the system's (getaddrinfo on NIO's thread pool) runs to its own timeout, many seconds with a
    /// resolver that does not answer, and a task group would wait for it on leaving. It finishes behind, its answer dropped.
    private static func within(_ limit: Duration, host: String,
                               _ lookup: @escaping @Sendable () async throws -> [SocketAddress]) async throws -> [SocketAddress] {
        let (answers, answer) = AsyncThrowingStream<[SocketAddress], any Error>.makeStream()
        let looking = Task {
            do {
                answer.yield(try await lookup())
                answer.finish()
            } catch {
                answer.finish(throwing: error)
            }
        }
        let timer = Task {
            try await Task.sleep(for: limit)
            // No answer for the name in time: said as DNS's failure, not as a connection's.
            answer.finish(throwing: KioskError.offline(host: host, reason: .unresolved))
        }
        defer {
            looking.cancel()
            timer.cancel()
        }
        for try await addresses in answers { return addresses }
        // The stream ended with no answer and no error: the caller was cancelled.
        throw CancellationError()
    }

    /// Why `addresses` (`host`'s) may not be dialled by a request that may reach public addresses only; nil when every
    /// one is public.
    package static func refusal(of addresses: [SocketAddress], host: String) -> String? {
        for address in addresses {
            guard let literal = address.ipAddress, let ip = IPAddress(literal: literal) else { return "\(host) is not an IP address" }
            if let reason = ip.nonPublicReason { return "\(host) is \(reason)" + (literal == host ? "" : " (\(ip))") }
        }
        return nil
    }
}

/// The addresses the outbound policy let a connection dial (a tunnel's, a protocol switch's), to be dialled as they are.
package struct CheckedAddresses: Sendable {
    package let addresses: [SocketAddress]

    package init(_ addresses: [SocketAddress]) { self.addresses = addresses }
}

/// A NIO resolver that answers with addresses already looked up: a `ClientBootstrap` given it races exactly those, IPv6
/// and IPv4, by Happy Eyeballs, as it would a name's.
package final class FixedAddresses: Resolver, Sendable {
    private let addresses: [SocketAddress]
    private let loop: any EventLoop

    /// Answers with `addresses`, on `loop` (the bootstrap's).
    package init(_ addresses: [SocketAddress], on loop: any EventLoop) {
        self.addresses = addresses
        self.loop = loop
    }

    package func initiateAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        loop.makeSucceededFuture(addresses.filter { $0.protocol == .inet })
    }

    package func initiateAAAAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        loop.makeSucceededFuture(addresses.filter { $0.protocol == .inet6 })
    }

    package func cancelQueries() {}
}
