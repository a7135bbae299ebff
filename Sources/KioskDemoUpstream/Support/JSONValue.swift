/// A JSON document built by hand.
///
/// The demo must reproduce details that `JSONEncoder` hides or normalises: explicit `null`s
/// (NYT `column`, Rick and Morty `next`/`prev`), `1` versus `true` for the same field, `""` where
/// other items have `[]`, and the key order of the real services. A tiny tree plus a serializer
/// gives that control and is faster than going through `Codable`.
enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case string(String)
    case array([JSONValue])
    /// Keys keep their order, as the real APIs send them.
    case object([(String, JSONValue)])
    /// Already serialized JSON, spliced in verbatim (Marvel's envelope wraps a pre-hashed `data`).
    case raw([UInt8])

    /// The compact UTF-8 serialization.
    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        write(into: &out)
        return out
    }

    func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: Self.nullBytes)
        case .bool(let value): out.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
        case .int(let value): out.append(contentsOf: String(value).utf8)
        case .string(let value): Self.writeString(value, into: &out)
        case .raw(let bytes): out.append(contentsOf: bytes)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(member.0, into: &out)
                out.append(UInt8(ascii: ":"))
                member.1.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let nullBytes = Array("null".utf8)
    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func writeString(_ string: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: Array("\\u00".utf8))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue {
    /// `.string` or `.null`.
    static func string(orNull value: String?) -> JSONValue {
        value.map(JSONValue.string) ?? .null
    }

    /// An array of strings.
    static func strings(_ values: [String]) -> JSONValue {
        .array(values.map(JSONValue.string))
    }
}

// MARK: - Reading and editing

extension JSONValue {
    /// Parses a complete JSON document; nil when `bytes` is not exactly one valid JSON value.
    ///
    /// Built for faults that alter a document the server already encoded (the reply cache holds
    /// bytes, not trees): parsing keeps member order, and serializing the result with `bytes` gives
    /// back the same bytes for anything this type wrote, so an edit changes only what it names.
    /// Numbers stay as written: integers that print back identically become `.int`, any other
    /// literal (fractions, exponents, `-0`, overflow) is kept verbatim as `.raw`.
    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        var parser = Parser(bytes: bytes)
        return try? parser.document()
    }

    /// One step of a path into a document.
    enum PathStep: Sendable, Hashable {
        /// A member of an object (the first one, should the name repeat).
        case key(String)
        /// An element of an array.
        case index(Int)
    }

    /// A copy with the value at `path`, which must exist, replaced by `newValue`; nil when the path
    /// leads nowhere, so a fault never adds a field the real document did not have.
    func replacing(at path: some Collection<PathStep>, with newValue: JSONValue) -> JSONValue? {
        guard let step = path.first else { return newValue }
        let rest = path.dropFirst()
        switch (step, self) {
        case (.key(let name), .object(var members)):
            guard let position = members.firstIndex(where: { $0.0 == name }),
                  let member = members[position].1.replacing(at: rest, with: newValue) else { return nil }
            members[position].1 = member
            return .object(members)
        case (.index(let index), .array(var elements)):
            guard elements.indices.contains(index),
                  let element = elements[index].replacing(at: rest, with: newValue) else { return nil }
            elements[index] = element
            return .array(elements)
        default:
            // Includes `.raw`: spliced-in bytes are opaque here; parse the document instead to edit inside them.
            return nil
        }
    }

    /// A strict RFC 8259 recursive-descent reader over UTF-8 bytes.
    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        struct Invalid: Error {}

        /// Deep enough for any real API document; stops hostile nesting from exhausting the stack.
        private static let maximumDepth = 256

        mutating func document() throws -> JSONValue {
            let result = try value(depth: 0)
            skipWhitespace()
            guard index == bytes.count else { throw Invalid() }
            return result
        }

        private mutating func value(depth: Int) throws -> JSONValue {
            guard depth < Self.maximumDepth else { throw Invalid() }
            skipWhitespace()
            guard index < bytes.count else { throw Invalid() }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            default: return try number()
            }
        }

        private mutating func object(depth: Int) throws -> JSONValue {
            index += 1  // {
            var members: [(String, JSONValue)] = []
            skipWhitespace()
            if consume(UInt8(ascii: "}")) { return .object(members) }
            repeat {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Invalid() }
                let name = try string()
                skipWhitespace()
                guard consume(UInt8(ascii: ":")) else { throw Invalid() }
                members.append((name, try value(depth: depth + 1)))
                skipWhitespace()
            } while consume(UInt8(ascii: ","))
            guard consume(UInt8(ascii: "}")) else { throw Invalid() }
            return .object(members)
        }

        private mutating func array(depth: Int) throws -> JSONValue {
            index += 1  // [
            var elements: [JSONValue] = []
            skipWhitespace()
            if consume(UInt8(ascii: "]")) { return .array(elements) }
            repeat {
                elements.append(try value(depth: depth + 1))
                skipWhitespace()
            } while consume(UInt8(ascii: ","))
            guard consume(UInt8(ascii: "]")) else { throw Invalid() }
            return .array(elements)
        }

        private mutating func string() throws -> String {
            index += 1  // opening quote
            var out: [UInt8] = []
            while true {
                guard index < bytes.count else { throw Invalid() }
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    // Validating rather than repairing: a body with broken UTF-8 is not one to edit.
                    guard let text = String(validating: out, as: UTF8.self) else { throw Invalid() }
                    return text
                case UInt8(ascii: "\\"):
                    try escape(into: &out)
                case 0..<0x20:
                    throw Invalid()  // control characters must be escaped inside strings
                default:
                    out.append(byte)
                }
            }
        }

        private mutating func escape(into out: inout [UInt8]) throws {
            guard index < bytes.count else { throw Invalid() }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalarValue = UInt32(try hexQuad())
                if (0xD800..<0xDC00).contains(scalarValue) {
                    // A high surrogate is only valid followed by an escaped low one; together they are one scalar.
                    guard consume(UInt8(ascii: "\\")), consume(UInt8(ascii: "u")) else { throw Invalid() }
                    let low = UInt32(try hexQuad())
                    guard (0xDC00..<0xE000).contains(low) else { throw Invalid() }
                    scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(scalarValue) else { throw Invalid() }  // lone low surrogate
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                throw Invalid()
            }
        }

        private mutating func hexQuad() throws -> UInt16 {
            guard index + 4 <= bytes.count else { throw Invalid() }
            var result: UInt16 = 0
            for byte in bytes[index..<(index + 4)] {
                let digit: UInt8 = switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
                default: throw Invalid()
                }
                result = result << 4 | UInt16(digit)
            }
            index += 4
            return result
        }

        private mutating func number() throws -> JSONValue {
            let start = index
            _ = consume(UInt8(ascii: "-"))
            // Integer part: a lone 0, or digits not starting with 0 (a leading zero ends it, so `01` fails later).
            if !consume(UInt8(ascii: "0")) {
                guard digits() > 0 else { throw Invalid() }
            }
            var isInteger = true
            if consume(UInt8(ascii: ".")) {
                isInteger = false
                guard digits() > 0 else { throw Invalid() }
            }
            if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
                isInteger = false
                if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
                guard digits() > 0 else { throw Invalid() }
            }
            let literal = Array(bytes[start..<index])
            let text = String(decoding: literal, as: UTF8.self)
            if isInteger, let value = Int(text), String(value) == text { return .int(value) }
            return .raw(literal)
        }

        /// Consumes a run of decimal digits and says how many there were.
        private mutating func digits() -> Int {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - start
        }

        private mutating func literal(_ word: String) throws {
            let expected = Array(word.utf8)
            guard index + expected.count <= bytes.count, bytes[index..<(index + expected.count)].elementsEqual(expected) else {
                throw Invalid()
            }
            index += expected.count
        }

        /// Consumes `byte` if it is next.
        private mutating func consume(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private mutating func skipWhitespace() {
            while index < bytes.count,
                  bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D {
                index += 1
            }
        }
    }
}
