import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback port that takes no new connection and says nothing: a listener with a backlog of one, filled by a
/// connection of its own and never accepted, so Linux drops every further SYN and a connect waits out its timeout —
/// what a host behind a firewall that drops packets looks like, without leaving loopback. Or, `taking` connections, one
/// whose connections open (the kernel's queue holds them) and never hear a byte: a server that hangs.
public final class UnansweringPort: Sendable {
    private let listener: CInt
    private let filler: CInt?
    /// The port that does not answer.
    public let port: Int

    /// Listens on a free port of 127.0.0.1 and, unless `taking` connections, fills its queue; nil when the system refuses
    /// a step.
    public init?(taking: Bool = false) {
        let listener = socket(AF_INET, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                // A backlog of 0 holds one connection (the queue is full when it holds more than the backlog).
                bind(listener, $0, length) == 0 && listen(listener, taking ? 64 : 0) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard !taking else {
            guard ready else {
                close(listener)
                return nil
            }
            self.listener = listener
            filler = nil
            port = Int(UInt16(bigEndian: address.sin_port))
            return
        }
        let filler = socket(AF_INET, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        let filled = filler >= 0 && ready && withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard filled else {
            close(listener)
            if filler >= 0 { close(filler) }
            return nil
        }
        self.listener = listener
        self.filler = filler
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        if let filler { close(filler) }
        close(listener)
    }
}
