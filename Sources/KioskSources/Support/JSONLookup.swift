import Foundation
import KioskCore

// Reading a problem's context out of a response: what was found where a decoding problem happened
// (DecodingError names the expected type but not the value that was there instead). The one JSON tree
// is KioskCore's `OrderedJSON`.

extension OrderedJSON {
    /// Parses `data`, or nil when it is not JSON.
    static func parseIfValid(_ data: Data) -> OrderedJSON? { try? OrderedJSON.parse(data) }

    /// The value at a coding path, or nil when nothing is there.
    func value(at path: [any CodingKey]) -> OrderedJSON? {
        var current = self
        for key in path {
            switch current {
            case .array(let elements):
                guard let index = key.intValue, elements.indices.contains(index) else { return nil }
                current = elements[index]
            case .object:
                guard let member = current[key.stringValue] else { return nil }
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
        case .number(let text): "a number (\(text))"
        case .string(let value): value.isEmpty ? "an empty string" : "a string (\"\(Self.clip(value))\")"
        case .array(let elements): elements.isEmpty ? "an empty array" : "an array"
        case .object: "an object"
        }
    }

    /// Keeps quoted values short so one odd field cannot flood a log line.
    private static func clip(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(40)) + "…"
    }
}
