package import KioskCore
package import NIOCore
import NIOPosix

/// The addresses a connection dials, looked up once and dialled as they were checked. The outbound policy checks a
/// name's addresses before a request goes; were the connection to look the name up again, a name that answers a public
/// address to the check and this machine's loopback to the connection (DNS rebinding) would pass it. So every dialler —
/// Kiosk's client, the proxy's tunnels — looks up through the policy's resolver (the same answer, remembered), checks
/// again what it will dial when the request may reach only public addresses, and dials exactly that.
package enum DialAddresses {
    /// The addresses for `host`: an address as it is written (any of its spellings), a name's through `resolver`. With
    /// `publicOnly`, throws `KioskError.refused` (for `url`, as shown) when any of them is not public; `KioskError.offline`
    /// when the name resolves to nothing.
    package static func look(up host: String, url: String, publicOnly: Bool, resolver: any HostResolver) async throws -> [IPAddress] {
        let addresses: [IPAddress]
        if let literal = IPAddress(literal: host) { addresses = [literal] } else { addresses = try await resolver.addresses(of: host) }
        if publicOnly {
            for address in addresses {
                if let reason = address.nonPublicReason {
                    throw KioskError.refused(url: url, reason: "\(host) is \(reason)" + (address.description == host ? "" : " (\(address))"))
                }
            }
        }
        return addresses
    }

    /// `addresses` at `port`, as NIO dials them.
    package static func socketAddresses(_ addresses: [IPAddress], port: Int) throws -> [SocketAddress] {
        try addresses.map { try SocketAddress(ipAddress: $0.description, port: port) }
    }
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
