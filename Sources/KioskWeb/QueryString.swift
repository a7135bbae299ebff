import Foundation
import KioskCore

/// Builds `application/x-www-form-urlencoded` query strings for Kiosk's own links. Reading them is
/// `FormInput`'s job (Hummingbird's `URLEncodedFormDecoder` into typed forms).
package struct QueryString: Sendable {
    /// Name-value pairs in order.
    private(set) var pairs: [(name: String, value: String)] = []

    package init() {}

    /// The parameters in this order, those nil or empty left out.
    package init(_ parameters: KeyValuePairs<String, String?>) {
        for (name, value) in parameters { set(name, value) }
    }

    /// Sets or removes (nil or empty) a parameter, keeping the order of the others.
    package mutating func set(_ name: String, _ value: String?) {
        pairs.removeAll { $0.name == name }
        if let value, !value.isEmpty { pairs.append((name, value)) }
    }

    /// `?a=1&b=2`, or "" when empty.
    package var encoded: String {
        pairs.isEmpty ? "" : "?" + pairs.map { Self.encode($0.name) + "=" + Self.encode($0.value) }.joined(separator: "&")
    }

    /// Percent-encodes everything but unreserved characters, so the result is safe in a query value.
    package static func encode(_ value: String) -> String { PercentEncoding.unreserved(value) }
}
