import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP port held without listening while the demo API is offline: a bound socket that never listens, so a
/// connection to the port is refused (as from a host that is down) and no other listener — another test's
/// server asking for port 0 — can be given it meanwhile, which would answer in the upstream's place. Tests use
/// one (port 0) for an upstream that refuses connections.
package final class PortReservation: Sendable {
    private let descriptor: CInt
    /// The port held.
    package let port: Int

    /// Binds `port` on `host` (an IPv4 or IPv6 literal; port 0 for a free one); nil when the host is a name or the
    /// port cannot be held.
    package init?(host: String, port: Int) {
        guard (0...65535).contains(port) else { return nil }
        var v4 = in_addr(), v6 = in6_addr()
        let family: CInt
        if inet_pton(AF_INET, host, &v4) == 1 { family = AF_INET } else if inet_pton(AF_INET6, host, &v6) == 1 { family = AF_INET6 } else { return nil }
        // No SO_REUSEADDR: a listener that sets it (as SwiftNIO does) cannot share the port with this socket.
        let descriptor = socket(family, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        let bound: CInt
        if family == AF_INET {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr = v4
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        } else {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            address.sin6_addr = v6
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
        var held = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &held) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        // sin_port and sin6_port sit at the same offset, after the family.
        self.port = withUnsafePointer(to: &held) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    deinit { close(descriptor) }
}
