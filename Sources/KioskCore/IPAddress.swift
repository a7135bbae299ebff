import Foundation
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
        if text.contains(":") {
            if let percent = text.firstIndex(of: "%") { text = String(text[..<percent]) }  // an IPv6 zone (IPv4 has none)
            var address = in6_addr()
            guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
            self.bytes = withUnsafeBytes(of: &address) { Array($0) }
            return
        }
        // Names never start with a digit and end in a letter-only label... but `1.example` does, so ask
        // inet_aton: it accepts exactly the numeric forms, anything else is a name to resolve.
        guard let first = text.first, first.isNumber, !text.contains("%") else { return nil }
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
