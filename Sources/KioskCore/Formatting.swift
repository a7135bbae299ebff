public import Foundation

// Small conversions used across modules, each in one place.

extension Duration {
    /// The duration in seconds, as a `Double` (attoseconds kept to double precision).
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// Lowercase hexadecimal text of bytes: digests, fingerprints, ids.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Two lowercase hex digits per byte, in order.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let bytes = Array(bytes)
        // Written in place: CSRF tokens are made on every request of a client without cookies.
        return String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            for (index, byte) in bytes.enumerated() {
                buffer[2 * index] = digits[Int(byte >> 4)]
                buffer[2 * index + 1] = digits[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
    }

    /// The 64-bit number as 16 hex digits, big-endian.
    public static func encode(_ value: UInt64) -> String { encode(withUnsafeBytes(of: value.bigEndian) { Array($0) }) }

    /// The value of one hex digit (`0`–`9`, `a`–`f`, `A`–`F`), or nil for any other byte.
    public static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Percent-encoding of URL parts: query items and path segments built from data.
public enum PercentEncoding {
    /// Everything but RFC 3986's unreserved characters percent-encoded (UTF-8, upper-case hex), so the
    /// result is data wherever it goes in a URL: `+`, `&`, `=`, `/` and `<` included.
    public static func unreserved(_ text: String) -> String {
        // Byte by byte rather than `addingPercentEncoding`: every row of a page encodes its picture's URL
        // and its id, and Foundation's CharacterSet path is slow on Linux.
        let utf8 = text.utf8
        if utf8.allSatisfy(isUnreserved) { return text }
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

/// FNV-1a, 64 bit: a fast, stable hash of bytes (Swift's `Hasher` is seeded per process). For content
/// fingerprints and deterministic seeds, never for security.
public enum FNV1a {
    /// The hash of `bytes`.
    public static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }
}

/// How long ago something happened, as every face shows it: "just now" under 5 seconds, else a whole
/// number of seconds, minutes, hours or days. Two ages that read the same compare equal (the web app's
/// page cache keeps a page only while the age it shows still reads the same). The steps are a table
/// (`Age.steps`), which the web app's scripts are given too, so a page's "3 h ago" and the same page's
/// banner written by the device say an age the same way.
public struct Age: Hashable, Sendable {
    /// The unit shown.
    public enum Unit: String, Hashable, Sendable, Encodable { case justNow, seconds, minutes, hours, days }

    /// One step of the table: ages below `below` seconds (nil: any larger age) read in `unit`, as the whole
    /// number of `divisor` seconds, followed by `symbol` ("3 h").
    public struct Step: Sendable, Encodable {
        public let below: TimeInterval?
        public let unit: Unit
        public let divisor: TimeInterval
        /// What follows the number ("s", "min", "h", "d"); empty for just now.
        public let symbol: String
    }

    /// The steps, smallest first.
    public static let steps: [Step] = [
        Step(below: 5, unit: .justNow, divisor: 1, symbol: ""),
        Step(below: 60, unit: .seconds, divisor: 1, symbol: "s"),
        Step(below: 3600, unit: .minutes, divisor: 60, symbol: "min"),
        Step(below: 86400, unit: .hours, divisor: 3600, symbol: "h"),
        Step(below: nil, unit: .days, divisor: 86400, symbol: "d"),
    ]

    /// The unit shown.
    public let unit: Unit
    /// The whole number shown (0 for just now).
    public let amount: Int
    private let symbol: String

    /// The age of something `seconds` old (negative ages read as just now).
    public init(_ seconds: TimeInterval) {
        let value = max(0, seconds)
        let step = Self.steps.first { $0.below.map { value < $0 } ?? true }!
        unit = step.unit
        amount = step.unit == .justNow ? 0 : Int(value / step.divisor)
        symbol = step.symbol
    }

    /// "42 s", "5 min", "3 h", "2 d"; nil for just now (faces say that in their language).
    public var compact: String? { unit == .justNow ? nil : "\(amount) \(symbol)" }

    /// English: "just now" or "3 h ago".
    public var english: String { compact.map { "\($0) ago" } ?? "just now" }
}

/// The class of an HTTP answer, as filters name it: `2xx` … `5xx`, or `error` when no response came.
public enum StatusClass: Int, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// No response: the exchange failed before a status (refused, timed out, offline).
    case error = 0
    case informational = 1
    case success = 2
    case redirection = 3
    case clientError = 4
    case serverError = 5
    /// No response from the upstream, and none needed: Kiosk answered from its store (fresh, or standing in for a
    /// failure). Not a failure, so not `error`.
    case store = 6

    /// The class of `status`, `error` when there is none.
    public init(status: Int?) {
        guard let status, (100..<600).contains(status) else { self = .error; return }
        self = StatusClass(rawValue: status / 100) ?? .error
    }

    /// Parses "2xx" (or "2", "2XX") … "5xx", "error" and "store"; nil for anything else.
    public init?(_ text: String) {
        let lowered = text.lowercased()
        if lowered == "error" { self = .error; return }
        if lowered == "store" { self = .store; return }
        let digit = lowered.hasSuffix("xx") ? String(lowered.dropLast(2)) : lowered
        guard digit.count == 1, let value = Int(digit), (1...5).contains(value), let parsed = StatusClass(rawValue: value) else {
            return nil
        }
        self = parsed
    }

    /// "2xx" … "5xx", "error" or "store".
    public var description: String {
        switch self {
        case .error: "error"
        case .store: "store"
        default: "\(rawValue)xx"
        }
    }

    /// The classes a filter offers, in order.
    public static let filterable: [StatusClass] = [.success, .redirection, .clientError, .serverError, .error, .store]
}
