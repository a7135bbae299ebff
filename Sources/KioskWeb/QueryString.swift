import Foundation

/// Parses and builds `application/x-www-form-urlencoded` query strings. Hummingbird's own parser
/// does not turn "+" into a space, which is what a plain HTML GET form sends, so the web layer
/// reads the raw query itself.
struct QueryString: Sendable {
    /// The longest query string accepted at all; each known parameter has its own, smaller limit.
    static let maximumLength = 4096

    /// Name-value pairs in order.
    private(set) var pairs: [(name: String, value: String)] = []

    init() {}

    /// Parses a raw query; throws a 400 for an oversized query, bad percent-encoding, a repeated name
    /// or a control character (nothing legitimate sends those).
    /// `allowsLineBreaks` admits tabs and line breaks in values: a form's textarea sends them.
    init(parsing raw: String?, maximumLength: Int = QueryString.maximumLength, allowsLineBreaks: Bool = false) throws {
        guard let raw, !raw.isEmpty else { return }
        guard raw.utf8.count <= maximumLength else {
            throw WebError.badRequest("The query string is longer than \(maximumLength) characters.")
        }
        var seen = Set<String>()
        for part in raw.split(separator: "&", omittingEmptySubsequences: true) {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try Self.decode(pieces[0], allowsLineBreaks: false)
            let value = pieces.count > 1 ? try Self.decode(pieces[1], allowsLineBreaks: allowsLineBreaks) : ""
            guard !seen.contains(name) else { throw WebError.badRequest("The parameter \"\(name)\" is given twice.") }
            seen.insert(name)
            pairs.append((name, value))
        }
    }

    /// The value of a parameter, if present.
    subscript(name: String) -> String? { pairs.first { $0.name == name }?.value }

    /// The names present.
    var names: [String] { pairs.map(\.name) }

    /// Sets or removes (nil or empty) a parameter, keeping the order of the others.
    mutating func set(_ name: String, _ value: String?) {
        pairs.removeAll { $0.name == name }
        if let value, !value.isEmpty { pairs.append((name, value)) }
    }

    /// `?a=1&b=2`, or "" when empty.
    var encoded: String {
        pairs.isEmpty ? "" : "?" + pairs.map { Self.encode($0.name) + "=" + Self.encode($0.value) }.joined(separator: "&")
    }

    private static func decode(_ part: Substring, allowsLineBreaks: Bool) throws -> String {
        let spaced = part.replacingOccurrences(of: "+", with: " ")
        guard let decoded = spaced.removingPercentEncoding else {
            throw WebError.badRequest("The query string is not validly percent-encoded.")
        }
        let allowed: Set<Unicode.Scalar> = allowsLineBreaks ? ["\t", "\n", "\r"] : []
        guard !decoded.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && !allowed.contains($0) }) else {
            throw WebError.badRequest("The query string contains control characters.")
        }
        return decoded
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
