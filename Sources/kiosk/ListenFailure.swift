import Foundation
#if canImport(Glibc)
import Glibc
#endif
import KioskCore
import NIOCore

/// Why a command's listeners could not start, in words a user can act on. The error a listener's bind throws names no
/// address ("bind(descriptor:ptr:bytes:): Address already in use"), and a command opens several (the proxy, its
/// console, reverse listeners): for an address in use, each of the command's ports is tried to say which is taken.
enum ListenFailure {
    /// One listener of the command: the option that sets its port, its host and its port (0: any free one).
    struct Listener {
        var option: String
        var host: String
        var port: Int
    }

    /// The error to show for `error`, thrown while starting `listeners`.
    static func error(_ error: any Error, listeners: [Listener]) -> KioskError {
        guard let io = error as? IOError else { return .invalidRequest("Cannot listen: \(error)") }
        switch io.errnoCode {
        case EADDRINUSE:
            let taken = listeners.filter { $0.port != 0 && isTaken($0) }
            let named = taken.isEmpty ? "one of its ports" : taken.map { "\(shown($0.host)):\($0.port) (\($0.option))" }.joined(separator: ", ")
            let options = Set((taken.isEmpty ? listeners : taken).map(\.option)).sorted().joined(separator: ", ")
            return .invalidRequest("Cannot listen on \(named): already in use, by another Kiosk or another program. "
                                   + "Choose another port with \(options), or 0 for a free one.")
        case EACCES:
            return .invalidRequest("Cannot listen: permission denied (ports below 1024 need root). Choose a port of 1024 or more.")
        case EADDRNOTAVAIL:
            let hosts = Set(listeners.map { shown($0.host) }).sorted().joined(separator: ", ")
            return .invalidRequest("Cannot listen on \(hosts): not an address of this machine.")
        default:
            return .invalidRequest("Cannot listen: \(io)")
        }
    }

    /// Throws the error `error(_:listeners:)` words when a listener's fixed port is taken already, before anything of
    /// the command starts listening.
    static func refuseTaken(_ listeners: [Listener]) throws {
        guard listeners.contains(where: { $0.port != 0 && isTaken($0) }) else { return }
        throw error(IOError(errnoCode: EADDRINUSE, reason: "bind"), listeners: listeners)
    }

    private static func shown(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }

    /// Whether binding the listener's address fails for its being in use (with SO_REUSEADDR, as NIO's listeners bind).
    private static func isTaken(_ listener: Listener) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        let host = listener.host == "localhost" ? "127.0.0.1" : listener.host
        let family = inet_pton(AF_INET, host, &v4) == 1 ? AF_INET : inet_pton(AF_INET6, host, &v6) == 1 ? AF_INET6 : -1
        guard family != -1 else { return false }
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let port = in_port_t(UInt16(listener.port).bigEndian)
        let bound: Int32
        if family == AF_INET {
            var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: port, sin_addr: v4, sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
            bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        } else {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port
            address.sin6_addr = v6
            bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        }
        return bound != 0 && errno == EADDRINUSE
    }
}
