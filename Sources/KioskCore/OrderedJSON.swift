public import Foundation

/// A JSON document that keeps what Foundation's parser loses: the order of object keys and the exact
/// text of numbers. The network debugger shows and edits responses as they came, so a tree view must
/// list keys in their original order and an edit must not turn `1.10` into `1.1`.
public indirect enum OrderedJSON: Sendable, Hashable {
    case object([(key: String, value: OrderedJSON)])
    case array([OrderedJSON])
    case string(String)
    /// The number's text as written (always valid JSON number syntax).
    case number(String)
    case bool(Bool)
    case null

    public static func == (lhs: OrderedJSON, rhs: OrderedJSON) -> Bool {
        switch (lhs, rhs) {
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.array(let a), .array(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null): true
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .object(let members):
            hasher.combine(0)
            for member in members {
                hasher.combine(member.key)
                hasher.combine(member.value)
            }
        case .array(let values): hasher.combine(1); hasher.combine(values)
        case .string(let value): hasher.combine(2); hasher.combine(value)
        case .number(let value): hasher.combine(3); hasher.combine(value)
        case .bool(let value): hasher.combine(4); hasher.combine(value)
        case .null: hasher.combine(5)
        }
    }

    /// Why a document is not JSON, with the byte offset and the JSON path reached.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public let offset: Int
        public let path: String
        /// What is wrong there, for each face to say in its language (`message` says it in English).
        public let reason: Reason

        /// The error of a parse stopped at byte `offset`, JSON path `path` (`$`, `$.info[1]`), for `reason`.
        public init(offset: Int, path: String, reason: Reason) {
            self.offset = offset
            self.path = path
            self.reason = reason
        }

        /// What is wrong, in English.
        public var message: String { reason.english }

        public var description: String { "Invalid JSON at \(path) (byte \(offset)): \(message)" }

        /// What a parse found where it expected something else: a printable ASCII character, or another byte.
        public enum Found: Sendable, Hashable {
            case character(Character)
            case byte(UInt8)

            init(_ byte: UInt8) {
                self = (0x21...0x7E).contains(byte) ? .character(Character(UnicodeScalar(byte))) : .byte(byte)
            }

            /// "“x”" or "byte 0x0A", in English.
            public var english: String {
                switch self {
                case .character(let character): "“\(character)”"
                case .byte(let byte): "byte " + String(format: "0x%02X", byte)
                }
            }
        }

        /// Why a document is not JSON.
        public enum Reason: Sendable, Hashable {
            case textAfterEnd, endOfDocument
            /// Nested deeper than the parse goes (its limit).
            case tooDeep(Int)
            case expectedValue(found: Found)
            /// A literal (`true`, `false`, `null`) begun and not completed.
            case expectedLiteral(String)
            case expectedKey, expectedColon, endInsideObject
            case expectedCommaOrBrace(found: Found)
            case endInsideArray
            case expectedCommaOrBracket(found: Found)
            case invalidUTF8, controlCharacter, unpairedSurrogate, invalidUnicodeEscape, incompleteUnicodeEscape
            /// A backslash followed by a character no escape starts with.
            case invalidEscape(Character)
            case unterminatedString, incompleteNumber, expectedDigit, expectedFractionDigit, expectedExponentDigit
            /// A parse that reached its `maximumValues`.
            case tooManyValues

            /// The reason in English.
            public var english: String {
                switch self {
                case .textAfterEnd: "unexpected text after the end of the document"
                case .endOfDocument: "unexpected end of the document"
                case .tooDeep(let levels): "nested more than \(levels) levels deep"
                case .expectedValue(let found): "expected a value, found \(found.english)"
                case .expectedLiteral(let literal): "expected \(literal)"
                case .expectedKey: "expected a key in quotes"
                case .expectedColon: "expected “:” after the key"
                case .endInsideObject: "unexpected end inside an object"
                case .expectedCommaOrBrace(let found): "expected “,” or “}” in an object, found \(found.english)"
                case .endInsideArray: "unexpected end inside an array"
                case .expectedCommaOrBracket(let found): "expected “,” or “]” in an array, found \(found.english)"
                case .invalidUTF8: "invalid UTF-8 in a string"
                case .controlCharacter: "control character in a string"
                case .unpairedSurrogate: "unpaired surrogate in a string"
                case .invalidUnicodeEscape: "invalid \\u escape"
                case .incompleteUnicodeEscape: "incomplete \\u escape"
                case .invalidEscape(let character): "invalid escape \\\(character)"
                case .unterminatedString: "unterminated string"
                case .incompleteNumber: "incomplete number"
                case .expectedDigit: "expected a digit"
                case .expectedFractionDigit: "expected a digit after the decimal point"
                case .expectedExponentDigit: "expected a digit in the exponent"
                case .tooManyValues: "more values than the parse builds"
                }
            }
        }
    }

    /// Parses a complete JSON document (RFC 8259); nesting deeper than 512 levels is refused.
    public static func parse(_ data: Data) throws -> OrderedJSON {
        try data.withUnsafeBytes { raw in
            var parser = Parser(bytes: raw.bindMemory(to: UInt8.self))
            return try parser.parseDocument()
        }
    }

    /// Throws what `parse` would for a document that is not JSON, without building its values: it reads the
    /// document where it lies, so its memory stays small whatever the document's size and shape. Returns the value
    /// at `capturing` (object keys from the top, `["log", "creator"]`) when the document has one there.
    @discardableResult
    public static func check(_ data: Data, capturing: [String]? = nil) throws -> OrderedJSON? {
        try data.withUnsafeBytes { raw in
            var parser = Parser(bytes: raw.bindMemory(to: UInt8.self), building: false)
            parser.capturePath = capturing.map { $0.map { "." + $0 } }
            _ = try parser.parseDocument()
            return parser.captured
        }
    }

    /// Parses a document whose array at `streaming` (object keys from the top, `["log", "entries"]`) is handed to
    /// `element` one element at a time, with its index, as it is read, and not kept (it comes back empty): a huge
    /// list is read in the memory of one of its elements. An error `element` throws ends the parse as it is.
    /// With `maximumValues`, the document around the list, or one element, holding more values than that is refused
    /// (a `ParseError` whose reason is `tooManyValues`): a value built costs tens of times the bytes that write it
    /// (`{}` is two), so this is what keeps the memory of a parse within a few times the document's size.
    public static func parse(_ data: Data, streaming: [String], maximumValues: Int? = nil,
                             element: (Int, OrderedJSON) throws -> Void) throws -> OrderedJSON {
        try data.withUnsafeBytes { raw in
            try withoutActuallyEscaping(element) { element in
                var parser = Parser(bytes: raw.bindMemory(to: UInt8.self))
                parser.streamPath = streaming.map { "." + $0 }
                parser.maximumValues = maximumValues
                parser.onElement = element
                return try parser.parseDocument()
            }
        }
    }

    /// The value of an object's member named `key` (the last one, as JSONDecoder reads duplicates); nil
    /// for a missing key or a value that is not an object.
    public subscript(key: String) -> OrderedJSON? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.key == key }?.value
    }

    /// A number from an integer.
    public static func int(_ value: Int) -> OrderedJSON { .number(String(value)) }

    /// `.string`, or `.null` for nil.
    public static func string(orNull value: String?) -> OrderedJSON { value.map(OrderedJSON.string) ?? .null }

    /// An array of strings.
    public static func strings(_ values: [String]) -> OrderedJSON { .array(values.map(OrderedJSON.string)) }

    /// One step of a path into a document.
    public enum PathStep: Sendable, Hashable {
        /// A member of an object (the first one, should the name repeat).
        case key(String)
        /// An element of an array.
        case index(Int)
    }

    /// A copy with the value at `path`, which must exist, replaced by `newValue`; nil when the path leads
    /// nowhere (nothing is ever added).
    public func replacing(at path: some Collection<PathStep>, with newValue: OrderedJSON) -> OrderedJSON? {
        guard let step = path.first else { return newValue }
        let rest = path.dropFirst()
        switch (step, self) {
        case (.key(let name), .object(var members)):
            guard let position = members.firstIndex(where: { $0.key == name }),
                  let member = members[position].value.replacing(at: rest, with: newValue) else { return nil }
            members[position].value = member
            return .object(members)
        case (.index(let index), .array(var elements)):
            guard elements.indices.contains(index),
                  let element = elements[index].replacing(at: rest, with: newValue) else { return nil }
            elements[index] = element
            return .array(elements)
        default:
            return nil
        }
    }

    /// Parses JSON text.
    public static func parse(_ text: String) throws -> OrderedJSON { try parse(Data(text.utf8)) }

    /// The document as compact (`indent` nil) or indented JSON text, keys in their order.
    public func rendered(indent: String? = "  ") -> String {
        var output = ""
        write(to: &output, indent: indent, level: 0)
        return output
    }

    private func write(to output: inout String, indent: String?, level: Int) {
        let newline = indent == nil ? "" : "\n"
        let pad = { (depth: Int) in String(repeating: indent ?? "", count: depth) }
        switch self {
        case .object(let members):
            guard !members.isEmpty else { output += "{}"; return }
            output += "{" + newline
            for (index, member) in members.enumerated() {
                output += pad(level + 1) + Self.quoted(member.key) + (indent == nil ? ":" : ": ")
                member.value.write(to: &output, indent: indent, level: level + 1)
                output += (index < members.count - 1 ? "," : "") + newline
            }
            output += pad(level) + "}"
        case .array(let values):
            guard !values.isEmpty else { output += "[]"; return }
            output += "[" + newline
            for (index, value) in values.enumerated() {
                output += pad(level + 1)
                value.write(to: &output, indent: indent, level: level + 1)
                output += (index < values.count - 1 ? "," : "") + newline
            }
            output += pad(level) + "]"
        case .string(let value): output += Self.quoted(value)
        case .number(let text): output += text
        case .bool(let value): output += value ? "true" : "false"
        case .null: output += "null"
        }
    }

    /// Name–value pairs (header fields) as a JSON array of two-string arrays, in order, repeats kept: how the request
    /// log and the proxy cache store header fields. Written by hand: every captured exchange's fields go through here.
    @inlinable
    public static func pairsText(_ pairs: some Sequence<(name: String, value: String)>) -> String {
        // Written as bytes into one buffer: every exchange's fields go through here, for the log and for the proxy
        // cache, and joining strings cost an allocation per piece. Inlinable so that the caller's module specializes
        // it for its own sequence: unspecialized, walking a lazy map through generic metadata was a third of its cost.
        var out: [UInt8] = [UInt8(ascii: "[")]
        out.reserveCapacity(512)
        for pair in pairs {
            if out.count > 1 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "["))
            appendQuoted(pair.name, into: &out)
            out.append(UInt8(ascii: ","))
            appendQuoted(pair.value, into: &out)
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "]"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `string` as a JSON string literal, its bytes copied whole when none needs an escape.
    @usableFromInline
    static func appendQuoted(_ string: String, into out: inout [UInt8]) {
        var string = string
        let plain = string.withUTF8 { bytes in !bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C } }
        guard plain else { return writeQuoted(string, into: &out) }
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: string.utf8)
        out.append(UInt8(ascii: "\""))
    }

    /// The pairs `pairsText` wrote; nil when `text` is not such an array.
    public static func pairs(fromJSON text: String) -> [(name: String, value: String)]? {
        guard text != "[]" else { return [] }
        guard case .array(let items)? = try? parse(text) else { return nil }
        var pairs: [(name: String, value: String)] = []
        pairs.reserveCapacity(items.count)
        for item in items {
            guard case .array(let values) = item, values.count == 2, case .string(let name) = values[0],
                  case .string(let value) = values[1] else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }

    /// A JSON string literal.
    public static func quoted(_ value: String) -> String {
        // Most strings need no escape (every captured header goes through here).
        guard value.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else { return "\"" + value + "\"" }
        var bytes: [UInt8] = []
        writeQuoted(value, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The compact UTF-8 serialization: no white space, members in their order, numbers as written. What
    /// this writes, `parse` reads back to an equal value, and writing that gives the same bytes.
    public var compactBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        write(into: &out)
        return out
    }

    /// Appends the compact serialization to `out`.
    public func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: Self.nullBytes)
        case .bool(let value): out.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
        case .number(let text): out.append(contentsOf: text.utf8)
        case .string(let value): Self.writeQuoted(value, into: &out)
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
                Self.writeQuoted(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let nullBytes = Array("null".utf8)
    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The one JSON string escaper: `"`, `\` and control characters escaped; so are the invisible characters that
    /// reorder or break what is shown — the bidi marks, embeddings, overrides and isolates (U+200E, U+200F, U+202A–U+202E,
    /// U+2066–U+2069) and the line and paragraph separators (U+2028, U+2029) — so that a value reads as it is, never
    /// reversed; everything else as UTF-8.
    private static func writeQuoted(_ string: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        let utf8 = string.utf8
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            // Each of those is E2 80 8E–8F, A8–AE or E2 81 A6–A9 in UTF-8.
            if byte == 0xE2 {
                let second = utf8.index(after: index)
                if second != utf8.endIndex, utf8.index(after: second) != utf8.endIndex {
                    let (middle, last) = (utf8[second], utf8[utf8.index(after: second)])
                    let hidden = middle == 0x80 && (last == 0x8E || last == 0x8F || (0xA8...0xAE).contains(last))
                        || middle == 0x81 && (0xA6...0xA9).contains(last)
                    if hidden {
                        let scalar = 0x2000 | UInt32(middle & 0x3F) << 6 | UInt32(last & 0x3F)
                        out.append(contentsOf: Array("\\u".utf8))
                        out.append(contentsOf: Array(String(scalar, radix: 16).utf8))
                        index = utf8.index(index, offsetBy: 3)
                        continue
                    }
                }
            }
            index = utf8.index(after: index)
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0..<0x20:
                out.append(contentsOf: Array("\\u00".utf8))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether `text` is a valid JSON number.
    public static func isNumber(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBufferPointer { bytes in
            var parser = Parser(bytes: bytes)
            guard (try? parser.parseNumber()) != nil else { return false }
            return parser.index == parser.bytes.count
        }
    }
}

/// A small recursive-descent parser that records the path it is at, for error messages.
private struct Parser {
    /// The document, borrowed for the parse: never copied.
    let bytes: UnsafeBufferPointer<UInt8>
    /// Whether values are kept; a check only reads them (objects and arrays come back empty, strings "").
    var building: Bool
    var index = 0
    var path: [String] = []
    /// A checked document's value at this path is built all the same, and kept in `captured`.
    var capturePath: [String]?
    var captured: OrderedJSON?
    /// The elements of the array at this path go to `onElement` as they are read, instead of into the array.
    var streamPath: [String]?
    var onElement: ((Int, OrderedJSON) throws -> Void)?
    /// The most values built for the document around the streamed list, and for each of its elements (nil: no bound).
    var maximumValues: Int?
    /// The values built so far for the tree being built (the document's, or the streamed element's).
    var valuesBuilt = 0
    static let maximumDepth = 512

    init(bytes: UnsafeBufferPointer<UInt8>, building: Bool = true) {
        self.bytes = bytes
        self.building = building
    }

    mutating func parseDocument() throws -> OrderedJSON {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw error(.textAfterEnd) }
        return value
    }

    func error(_ reason: OrderedJSON.ParseError.Reason) -> OrderedJSON.ParseError {
        OrderedJSON.ParseError(offset: index, path: path.isEmpty ? "$" : "$" + path.joined(), reason: reason)
    }

    mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
    }

    mutating func parseValue() throws -> OrderedJSON {
        guard index < bytes.count else { throw error(.endOfDocument) }
        guard path.count < Self.maximumDepth else { throw error(.tooDeep(Self.maximumDepth)) }
        if building, let maximumValues {
            valuesBuilt += 1
            if valuesBuilt > maximumValues { throw error(.tooManyValues) }
        }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error(.expectedValue(found: .init(bytes[index])))
        }
    }

    mutating func expect(_ literal: String) throws {
        let expected = Array(literal.utf8)
        guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw error(.expectedLiteral(literal))
        }
        index += expected.count
    }

    mutating func parseObject() throws -> OrderedJSON {
        index += 1
        var members: [(key: String, value: OrderedJSON)] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object([]) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error(.expectedKey) }
            let key = try parseString(key: true)
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error(.expectedColon) }
            index += 1
            skipWhitespace()
            path.append("." + key)
            let value: OrderedJSON
            if !building, let capturePath, path == capturePath {
                building = true
                defer { building = false }
                value = try parseValue()
                captured = value
            } else {
                value = try parseValue()
            }
            path.removeLast()
            if building { members.append((key, value)) }
            skipWhitespace()
            guard index < bytes.count else { throw error(.endInsideObject) }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw error(.expectedCommaOrBrace(found: .init(bytes[index])))
        }
    }

    mutating func parseArray() throws -> OrderedJSON {
        index += 1
        var values: [OrderedJSON] = []
        var count = 0
        let streaming = building && onElement != nil && path == streamPath
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array([]) }
        while true {
            skipWhitespace()
            path.append("[\(count)]")
            // A streamed element is a tree of its own, not kept: it is counted alone.
            let around = valuesBuilt
            if streaming { valuesBuilt = 0 }
            let value = try parseValue()
            if streaming { valuesBuilt = around }
            path.removeLast()
            if streaming, let onElement {
                try onElement(count, value)
            } else if building {
                values.append(value)
            }
            count += 1
            skipWhitespace()
            guard index < bytes.count else { throw error(.endInsideArray) }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(values) }
            throw error(.expectedCommaOrBracket(found: .init(bytes[index])))
        }
    }

    /// A string's value; while checking, an object's keys only (the path names them), other strings read and "".
    mutating func parseString(key: Bool = false) throws -> String {
        index += 1
        // The string's bytes, its escapes written out, made a String once at its end (a String grown escape by escape took
        // most of the time of an archive of escaped text).
        var value: [UInt8] = []
        let keeping = building || key
        var run = index
        func flush(_ end: Int) throws {
            guard run < end else { return }
            if keeping {
                value.append(contentsOf: bytes[run..<end])
            } else if String(validating: bytes[run..<end], as: UTF8.self) == nil {
                throw error(.invalidUTF8)
            }
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                try flush(index)
                index += 1
                guard keeping else { return "" }
                guard let text = String(validating: value, as: UTF8.self) else { throw error(.invalidUTF8) }
                return text
            }
            if byte < 0x20 { throw error(.controlCharacter) }
            if byte == UInt8(ascii: "\\") {
                try flush(index)
                index += 1
                guard index < bytes.count else { break }
                let escaped: UnicodeScalar
                switch bytes[index] {
                case UInt8(ascii: "\""): escaped = "\""
                case UInt8(ascii: "\\"): escaped = "\\"
                case UInt8(ascii: "/"): escaped = "/"
                case UInt8(ascii: "b"): escaped = "\u{08}"
                case UInt8(ascii: "f"): escaped = "\u{0C}"
                case UInt8(ascii: "n"): escaped = "\n"
                case UInt8(ascii: "r"): escaped = "\r"
                case UInt8(ascii: "t"): escaped = "\t"
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code) {
                        // A surrogate pair: the low half must follow as another \u escape.
                        guard index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "\\"), bytes[index + 2] == UInt8(ascii: "u") else {
                            throw error(.unpairedSurrogate)
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error(.unpairedSurrogate) }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = UnicodeScalar(code) else { throw error(.invalidUnicodeEscape) }
                    escaped = scalar
                default: throw error(.invalidEscape(Character(UnicodeScalar(bytes[index]))))
                }
                if keeping { UTF8.encode(escaped) { value.append($0) } }
                index += 1
                run = index
                continue
            }
            index += 1
        }
        throw error(.unterminatedString)
    }

    /// Reads the 4 hex digits after `\u`, leaving `index` on the last one.
    mutating func hex4() throws -> UInt32 {
        guard index + 4 < bytes.count else { throw error(.incompleteUnicodeEscape) }
        // Digit by digit, not through a String (an archive of escaped text has millions of them: a minute's work that way).
        var value: UInt32 = 0
        for offset in 1...4 {
            let byte = bytes[index + offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.invalidUnicodeEscape)
            }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    mutating func parseNumber() throws -> String {
        let start = index
        func digits() -> Int {
            let first = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - first
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw error(.incompleteNumber) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            throw error(.expectedDigit)
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw error(.expectedFractionDigit) }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw error(.expectedExponentDigit) }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }
}
