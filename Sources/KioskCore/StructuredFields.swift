import Foundation

// HTTP Structured Field Values (RFC 8941), as far as `Cache-Status` (RFC 9211) needs them: a List of
// Items whose bare items and parameters are Integers, Strings, Tokens and Booleans. Serialization
// follows RFC 8941 §4.1 exactly (the canonical form: `;` before each parameter without a space, `, `
// between members, a true Boolean parameter written bare). Values are checked when they are made,
// so serializing never fails: an Integer is clamped to the 15 digits allowed, a String keeps only
// printable ASCII. The parser (§4.2) reads Kiosk's own values back (the request log stores them) and
// any Cache-Status made of those types; Decimals, Byte Sequences and Inner Lists are refused.

/// One bare item of a Structured Field (RFC 8941 §3.3) of a type Cache-Status uses.
public struct StructuredFieldItem: Sendable, Hashable, CustomStringConvertible {
    /// The typed value.
    public enum Value: Sendable, Hashable {
        case integer(Int64)
        case string(String)
        case token(String)
        case boolean(Bool)
    }

    /// The value, already within what RFC 8941 can serialize.
    public let value: Value

    private init(_ value: Value) { self.value = value }

    /// The largest magnitude of an Integer (RFC 8941 §3.3.1: at most 15 decimal digits).
    public static let integerLimit: Int64 = 999_999_999_999_999

    /// An Integer, clamped to ±999,999,999,999,999.
    public static func integer(_ value: some BinaryInteger) -> StructuredFieldItem {
        let clamped = Int64(clamping: value)
        return StructuredFieldItem(.integer(min(max(clamped, -integerLimit), integerLimit)))
    }

    /// A String; characters outside printable ASCII (which a String cannot hold) become `?`.
    public static func string(_ text: String) -> StructuredFieldItem {
        StructuredFieldItem(.string(String(String.UnicodeScalarView(text.unicodeScalars.map {
            (0x20...0x7E).contains($0.value) ? $0 : "?"
        }))))
    }

    /// A Token, or nil when `text` is not one (see `StructuredFields.isToken`).
    public static func token(_ text: String) -> StructuredFieldItem? {
        StructuredFields.isToken(text) ? StructuredFieldItem(.token(text)) : nil
    }

    /// A Token when `text` is a valid one, else a String: what a field that takes "a String or a Token"
    /// (such as Cache-Status's cache name and `detail`) is written as.
    public static func tokenOrString(_ text: String) -> StructuredFieldItem { token(text) ?? string(text) }

    /// A Boolean.
    public static func boolean(_ flag: Bool) -> StructuredFieldItem { StructuredFieldItem(.boolean(flag)) }

    /// The item serialized (RFC 8941 §4.1.3.1).
    public var description: String {
        switch value {
        case .integer(let number): String(number)
        case .token(let text): text
        case .boolean(let flag): flag ? "?1" : "?0"
        case .string(let text):
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
    }

    /// The text of a Token or a String; nil for other types.
    public var text: String? {
        switch value {
        case .token(let text), .string(let text): text
        default: nil
        }
    }
}

/// One member of a Structured Field List: an item with its parameters, in order.
public struct StructuredFieldMember: Sendable, Hashable, CustomStringConvertible {
    /// The member's item (for Cache-Status, the cache's name).
    public var item: StructuredFieldItem
    /// Parameters in order; keys are unique (a later one replaced an earlier one when parsed).
    public var parameters: [(key: String, value: StructuredFieldItem)]

    /// A member; each key must satisfy `StructuredFields.isKey` (the caller's constants do).
    public init(_ item: StructuredFieldItem, parameters: [(key: String, value: StructuredFieldItem)] = []) {
        self.item = item
        self.parameters = parameters
    }

    /// The value of parameter `key`, if present.
    public subscript(key: String) -> StructuredFieldItem? { parameters.first { $0.key == key }?.value }

    /// The member serialized (RFC 8941 §4.1.3 and §4.1.1.2): a true Boolean parameter is written bare.
    public var description: String {
        parameters.reduce(item.description) { text, parameter in
            parameter.value.value == .boolean(true) ? text + ";" + parameter.key : text + ";" + parameter.key + "=" + parameter.value.description
        }
    }

    public static func == (lhs: StructuredFieldMember, rhs: StructuredFieldMember) -> Bool {
        lhs.item == rhs.item && lhs.parameters.elementsEqual(rhs.parameters) { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(item)
        for parameter in parameters {
            hasher.combine(parameter.key)
            hasher.combine(parameter.value)
        }
    }
}

/// Why a field value is not a Structured Field List of the supported types, and where.
public struct StructuredFieldError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public var message: String
    /// The 0-based byte offset in the field value where parsing stopped.
    public var offset: Int
    public var description: String { "\(message) at byte \(offset)" }
}

/// Serializing and parsing Structured Field Lists (RFC 8941).
public enum StructuredFields {
    /// A List serialized (RFC 8941 §4.1.1): members joined by `, `.
    public static func serialize(_ members: [StructuredFieldMember]) -> String {
        members.map(\.description).joined(separator: ", ")
    }

    /// Whether `text` is a Token: `ALPHA / "*"`, then `tchar / ":" / "/"` (RFC 8941 §3.3.4).
    public static func isToken(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, isAlpha(first) || first == UInt8(ascii: "*") else { return false }
        return bytes.dropFirst().allSatisfy(isTokenByte)
    }

    /// Whether `text` is a parameter key: `lcalpha / "*"`, then `lcalpha / DIGIT / "_" / "-" / "." / "*"`.
    public static func isKey(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, isLowercase(first) || first == UInt8(ascii: "*") else { return false }
        return bytes.dropFirst().allSatisfy(isKeyByte)
    }

    /// Parses a List (RFC 8941 §4.2.1) whose members are Items of the supported types.
    public static func parseList(_ text: String) throws(StructuredFieldError) -> [StructuredFieldMember] {
        var parser = Parser(bytes: Array(text.utf8))
        parser.skipSpaces()
        var members: [StructuredFieldMember] = []
        while !parser.isAtEnd {
            members.append(try parser.member())
            parser.skipOptionalWhitespace()
            if parser.isAtEnd { return members }
            guard parser.take() == UInt8(ascii: ",") else { throw parser.failure("expected a comma between members", back: 1) }
            parser.skipOptionalWhitespace()
            if parser.isAtEnd { throw parser.failure("a list ends with a comma") }
        }
        return members
    }

    private static func isAlpha(_ byte: UInt8) -> Bool { isLowercase(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) }
    private static func isLowercase(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }
    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    /// `tchar` (RFC 9110 §5.6.2) or `:` or `/`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        isAlpha(byte) || isDigit(byte) || Array("!#$%&'*+-.^_`|~:/".utf8).contains(byte)
    }

    private static func isKeyByte(_ byte: UInt8) -> Bool {
        isLowercase(byte) || isDigit(byte) || Array("_-.*".utf8).contains(byte)
    }

    /// A cursor over the field's bytes (Structured Fields are ASCII).
    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        var isAtEnd: Bool { index >= bytes.count }
        var current: UInt8? { isAtEnd ? nil : bytes[index] }

        mutating func take() -> UInt8? {
            defer { index += 1 }
            return current
        }

        func failure(_ message: String, back: Int = 0) -> StructuredFieldError {
            StructuredFieldError(message: message, offset: max(0, min(index, bytes.count) - back))
        }

        mutating func skipSpaces() { while current == UInt8(ascii: " ") { index += 1 } }

        mutating func skipOptionalWhitespace() {
            while current == UInt8(ascii: " ") || current == UInt8(ascii: "\t") { index += 1 }
        }

        /// An Item with its parameters (§4.2.3); Inner Lists are refused.
        mutating func member() throws(StructuredFieldError) -> StructuredFieldMember {
            if current == UInt8(ascii: "(") { throw failure("inner lists are not supported") }
            let item = try bareItem()
            var parameters: [(key: String, value: StructuredFieldItem)] = []
            while current == UInt8(ascii: ";") {
                index += 1
                skipSpaces()
                let key = try key()
                var value = StructuredFieldItem.boolean(true)
                if current == UInt8(ascii: "=") {
                    index += 1
                    value = try bareItem()
                }
                // A repeated key keeps its first place and takes the later value (§4.2.3.2).
                if let existing = parameters.firstIndex(where: { $0.key == key }) {
                    parameters[existing].value = value
                } else {
                    parameters.append((key, value))
                }
            }
            return StructuredFieldMember(item, parameters: parameters)
        }

        mutating func key() throws(StructuredFieldError) -> String {
            guard let first = current, StructuredFields.isLowercase(first) || first == UInt8(ascii: "*") else {
                throw failure("expected a parameter key")
            }
            let start = index
            while let byte = current, StructuredFields.isKeyByte(byte) { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// §4.2.3.1, for Integers, Strings, Tokens and Booleans.
        mutating func bareItem() throws(StructuredFieldError) -> StructuredFieldItem {
            guard let first = current else { throw failure("expected an item") }
            if first == UInt8(ascii: "-") || StructuredFields.isDigit(first) { return try integer() }
            if first == UInt8(ascii: "\"") { return try string() }
            if StructuredFields.isAlpha(first) || first == UInt8(ascii: "*") {
                let start = index
                index += 1
                while let byte = current, StructuredFields.isTokenByte(byte) { index += 1 }
                return .tokenOrString(String(decoding: bytes[start..<index], as: UTF8.self))
            }
            if first == UInt8(ascii: "?") {
                index += 1
                switch take() {
                case UInt8(ascii: "1"): return .boolean(true)
                case UInt8(ascii: "0"): return .boolean(false)
                default: throw failure("a Boolean is ?0 or ?1", back: 1)
                }
            }
            throw failure(first == UInt8(ascii: ":") ? "byte sequences are not supported" : "expected an item")
        }

        /// §4.2.4 without Decimals: an optional minus and 1 to 15 digits.
        mutating func integer() throws(StructuredFieldError) -> StructuredFieldItem {
            var sign: Int64 = 1
            if current == UInt8(ascii: "-") {
                sign = -1
                index += 1
            }
            let start = index
            while let byte = current, StructuredFields.isDigit(byte) { index += 1 }
            guard index > start else { throw failure("expected a digit") }
            guard index - start <= 15 else { throw failure("an Integer has at most 15 digits") }
            if current == UInt8(ascii: ".") { throw failure("decimals are not supported") }
            let digits = String(decoding: bytes[start..<index], as: UTF8.self)
            return .integer(sign * (Int64(digits) ?? 0))
        }

        /// §4.2.5: only `\"` and `\\` are escapes; only printable ASCII may appear.
        mutating func string() throws(StructuredFieldError) -> StructuredFieldItem {
            index += 1
            var text: [UInt8] = []
            while let byte = take() {
                switch byte {
                case UInt8(ascii: "\""): return .string(String(decoding: text, as: UTF8.self))
                case UInt8(ascii: "\\"):
                    guard let escaped = take(), escaped == UInt8(ascii: "\"") || escaped == UInt8(ascii: "\\") else {
                        throw failure("only \\\" and \\\\ are escapes in a String", back: 1)
                    }
                    text.append(escaped)
                case 0x20...0x7E: text.append(byte)
                default: throw failure("a String holds printable ASCII only", back: 1)
                }
            }
            throw failure("a String is not closed")
        }
    }
}
