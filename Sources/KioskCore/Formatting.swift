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
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// How long ago something happened, as every face shows it: "just now" under 5 seconds, else a whole
/// number of seconds, minutes, hours or days. Two ages that read the same compare equal (the web app's
/// page cache keeps a page only while the age it shows still reads the same).
public struct Age: Hashable, Sendable {
    /// The unit shown.
    public enum Unit: Hashable, Sendable { case justNow, seconds, minutes, hours, days }
    /// The unit shown.
    public let unit: Unit
    /// The whole number shown (0 for just now).
    public let amount: Int

    /// The age of something `seconds` old (negative ages read as just now).
    public init(_ seconds: TimeInterval) {
        let value = max(0, seconds)
        switch value {
        case ..<5: (unit, amount) = (.justNow, 0)
        case ..<60: (unit, amount) = (.seconds, Int(value))
        case ..<3600: (unit, amount) = (.minutes, Int(value / 60))
        case ..<86400: (unit, amount) = (.hours, Int(value / 3600))
        default: (unit, amount) = (.days, Int(value / 86400))
        }
    }

    /// "42 s", "5 min", "3 h", "2 d"; nil for just now (faces say that in their language).
    public var compact: String? {
        switch unit {
        case .justNow: nil
        case .seconds: "\(amount) s"
        case .minutes: "\(amount) min"
        case .hours: "\(amount) h"
        case .days: "\(amount) d"
        }
    }

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

    /// The class of `status`, `error` when there is none.
    public init(status: Int?) {
        guard let status, (100..<600).contains(status) else { self = .error; return }
        self = StatusClass(rawValue: status / 100) ?? .error
    }

    /// Parses "2xx" (or "2", "2XX") … "5xx" and "error"; nil for anything else.
    public init?(_ text: String) {
        let lowered = text.lowercased()
        if lowered == "error" { self = .error; return }
        let digit = lowered.hasSuffix("xx") ? String(lowered.dropLast(2)) : lowered
        guard digit.count == 1, let value = Int(digit), (1...5).contains(value), let parsed = StatusClass(rawValue: value) else {
            return nil
        }
        self = parsed
    }

    /// "2xx" … "5xx", or "error".
    public var description: String { self == .error ? "error" : "\(rawValue)xx" }

    /// The classes a filter offers, in order.
    public static let filterable: [StatusClass] = [.success, .redirection, .clientError, .serverError, .error]
}
