import Foundation
#if canImport(Glibc)
import Glibc
#endif
import KioskCore
import NIOCore

/// Which local user owns the other end of a loopback TCP connection, as identd tells it: the kernel's socket table
/// (`/proc/net/tcp` and `tcp6`) lists the client's socket, by its address and port and the server's, with the user
/// id that made it. Every loopback address is this machine, so wrong secrets from it are counted per local user
/// rather than as one client: another user's program guessing the debug token then spends its own budget, and does
/// not lock the console's owner out of a login. Nil where it cannot be told (no such file, the connection gone).
enum SocketOwner {
    /// The user id owning the socket at `peer` connected to `local`, read from `tables` (the kernel's, by default).
    static func uid(of peer: SocketAddress?, connectedTo local: SocketAddress?,
                            tables: [String] = ["/proc/net/tcp", "/proc/net/tcp6"]) -> UInt32? {
        guard let peer, let local else { return nil }
        // A listener on `::` sees an IPv4 client as `::ffff:127.0.0.1`, whose own socket is an IPv4 one, listed in
        // `tcp` in IPv4's form: each end is looked for in both forms.
        let clients = keys(peer), servers = keys(local)
        for table in tables {
            guard let text = read(table) else { continue }
            for client in clients {
                for server in servers {
                    if let uid = uid(in: text, client: client, server: server) { return uid }
                }
            }
        }
        return nil
    }

    /// A file of /proc read whole: its size says 0, and the kernel makes it a page at a time as it is read, so it is
    /// read until the end rather than by its size (a busy machine's table is hundreds of kilobytes).
    private static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The uid of the row of `table` (the text of `/proc/net/tcp` or `tcp6`) whose local end is `client` and whose
    /// remote end is `server`, each written as the table writes it (`key`), while the connection is established. A
    /// client that closed at once leaves a row in TIME_WAIT, which the kernel lists as root's: it says nothing of who
    /// sent the request, and is no one's.
    static func uid(in table: String, client: String, server: String) -> UInt32? {
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid …
            guard fields.count > 7, fields[1] == client, fields[2] == server else { continue }
            return fields[3] == "01" ? UInt32(fields[7]) : nil
        }
        return nil
    }

    /// `address` as the tables may write it: as it is, and an IPv4-mapped IPv6 address also as its IPv4 one.
    static func keys(_ address: SocketAddress) -> [String] {
        guard let port = address.port, let ip = address.ipAddress.flatMap(IPAddress.init(literal:)) else { return [] }
        return (ip.unmapped == ip ? [ip] : [ip, ip.unmapped]).compactMap { key($0.bytes, port: port) }
    }

    /// An address and port as the kernel's table writes them: the address's 32-bit words each in the machine's byte
    /// order, in hex (`127.0.0.1:8080` is `0100007F:1F90` on x86), an IPv4-mapped IPv6 address in `tcp6` as such.
    static func key(_ address: SocketAddress) -> String? {
        guard let port = address.port, let bytes = address.ipAddress.flatMap(IPAddress.init(literal:))?.bytes else { return nil }
        return key(bytes, port: port)
    }

    /// `key` of an address's bytes (4 for IPv4, 16 for IPv6) and a port.
    private static func key(_ bytes: [UInt8], port: Int) -> String? {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        var words = ""
        for start in stride(from: 0, to: bytes.count, by: 4) {
            // The word as the machine reads it, printed most significant digit first.
            let word = Array(bytes[start..<start + 4]).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            words += hex(word, digits: 8)
        }
        return words + ":" + hex(UInt32(port), digits: 4)
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
