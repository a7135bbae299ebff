import Foundation

/// A parsed JSON value, used only to say what was found where a decoding problem happened
/// (DecodingError names the expected type but not the value that was there instead).
enum JSONValue: Decodable, Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Parses `data`, or nil when it is not JSON.
    static func parse(_ data: Data) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// The value at a coding path, or nil when nothing is there.
    func value(at path: [any CodingKey]) -> JSONValue? {
        var current = self
        for key in path {
            switch current {
            case .array(let elements):
                guard let index = key.intValue, elements.indices.contains(index) else { return nil }
                current = elements[index]
            case .object(let members):
                guard let member = members[key.stringValue] else { return nil }
                current = member
            default:
                return nil
            }
        }
        return current
    }

    /// Words for a problem message: `null`, `a number (42)`, `a string ("abc")`, `an object`...
    var phrase: String {
        switch self {
        case .null: "null"
        case .bool(let value): "a boolean (\(value))"
        case .number(let value):
            value == value.rounded() && abs(value) < 1e15 ? "a number (\(Int(value)))" : "a number (\(value))"
        case .string(let value):
            value.isEmpty ? "an empty string" : "a string (\"\(Self.clip(value))\")"
        case .array(let elements): elements.isEmpty ? "an empty array" : "an array"
        case .object: "an object"
        }
    }

    /// Keeps quoted values short so one odd field cannot flood a log line.
    private static func clip(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(40)) + "…"
    }
}
