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
