import Foundation

extension DecodingError {
    /// One line saying where in a JSON document (`root` names the whole of it: "the body", "the rules file") and what
    /// was wrong, for a person to fix: not Foundation's "The data couldn't be read because it isn't in the correct format".
    public func readableDescription(root: String = "the body") -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            guard !codingPath.isEmpty else { return root }
            // `rules[0].urlPattern`: an index joins its array's name without a dot.
            return codingPath.reduce(into: "") { text, key in
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
        }
        switch self {
        case .typeMismatch(let type, let context): return "\(path(context.codingPath)) must be \(Self.name(of: type))"
        case .valueNotFound(let type, let context): return "\(path(context.codingPath)) must be \(Self.name(of: type)), not null"
        case .keyNotFound(let key, let context):
            return context.codingPath.isEmpty ? "missing field \(key.stringValue)" : "\(path(context.codingPath)) lacks field \(key.stringValue)"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "\(root) is not valid JSON" }
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default: return String(describing: self)
        }
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is Int.Type, is Int64.Type: "an integer"
        case is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is String.Type: "a string"
        case is URL.Type: "a URL"
        case is [String].Type: "an array of strings"
        default: "a JSON object"
        }
    }
}
