#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
// NIO's C shim declares the socket types too: in a compile job that also reads a file importing NIO, their fields are
// its module's (which of the two owns them depends on how the files are batched), and MemberImportVisibility wants
// the owner imported.
#if canImport(CNIOLinux)
import CNIOLinux
#endif

/// `getaddrinfo(3)` for stream sockets: what the system resolver answers for a host.
enum SystemLookup {
    /// One answer: a `sockaddr_in` or `sockaddr_in6` (an IPv6 link-local address with its scope) as its bytes, port set.
    struct Answer: Sendable {
        let isIPv6: Bool
        let bytes: [UInt8]
    }

    /// The answers for `host`, each at `port`; none when it does not resolve. Blocks: run it off the event loops.
    static func answers(for host: String, port: Int) -> [Answer] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var result: [Answer] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let socketAddress = entry.pointee.ai_addr {
                switch Int32(socketAddress.pointee.sa_family) {
                case AF_INET:
                    var address = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
                    address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
                    result.append(Answer(isIPv6: false, bytes: withUnsafeBytes(of: &address) { Array($0) }))
                case AF_INET6:
                    var address = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
                    address.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
                    result.append(Answer(isIPv6: true, bytes: withUnsafeBytes(of: &address) { Array($0) }))
                default: break
                }
            }
            cursor = entry.pointee.ai_next
        }
        return result
    }
}
