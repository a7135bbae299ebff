import Foundation

/// Builds `application/x-www-form-urlencoded` query strings for Kiosk's own links. Reading them is
/// `FormInput`'s job (Hummingbird's `URLEncodedFormDecoder` into typed forms).
struct QueryString: Sendable {
    /// Name-value pairs in order.
    private(set) var pairs: [(name: String, value: String)] = []

    init() {}

    /// Sets or removes (nil or empty) a parameter, keeping the order of the others.
    mutating func set(_ name: String, _ value: String?) {
        pairs.removeAll { $0.name == name }
        if let value, !value.isEmpty { pairs.append((name, value)) }
    }

    /// `?a=1&b=2`, or "" when empty.
    var encoded: String {
        pairs.isEmpty ? "" : "?" + pairs.map { Self.encode($0.name) + "=" + Self.encode($0.value) }.joined(separator: "&")
    }

    /// Percent-encodes everything but unreserved characters, so the result is safe in a query value.
    static func encode(_ value: String) -> String {
        // Byte by byte rather than `addingPercentEncoding`: every row of a page encodes its picture's URL
        // and its id, and Foundation's CharacterSet path is slow on Linux.
        let utf8 = value.utf8
        if utf8.allSatisfy(isUnreserved) { return value }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count * 3)
        for byte in utf8 {
            if isUnreserved(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// RFC 3986's unreserved characters: letters, digits, "-", ".", "_", "~".
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
