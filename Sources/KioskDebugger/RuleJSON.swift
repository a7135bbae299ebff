public import Foundation
import KioskCore

/// A rewrite rule in JSON, as `kiosk rule list --json` prints it and `/debug/api/rules` answers it.
/// `actions.patch` is the JSON Patch document's text, exactly as written (its key order and numbers kept).
public struct RuleJSON: Encodable, Sendable {
    public let id: Int
    public let name: String
    /// The name, or a summary of the rule when it has none.
    public let displayName: String
    public let enabled: Bool
    public let match: RewriteRule.Match
    public let actions: RewriteRule.Actions
    public let hits: Int
    public let createdAt: Date
    public let updatedAt: Date
    public let origin: String

    public init(_ rule: RewriteRule) {
        id = rule.id
        name = rule.name
        displayName = rule.displayName
        enabled = rule.isEnabled
        match = rule.match
        actions = rule.actions
        hits = rule.hits
        createdAt = rule.createdAt
        updatedAt = rule.updatedAt
        origin = rule.origin
    }
}

extension RewriteRule {
    /// A rule's definition read from a JSON object — `name`, `enabled`, `match` {`endpoint`, `urlPattern`,
    /// `method`} and `actions` {`status`, `setHeaders` [{`name`, `value`}], `removeHeaders`, `patch`,
    /// `latencyMilliseconds`, `failure`}, each optional but `match` — the shape `RuleJSON` writes. `patch`
    /// may be the patch document itself or its text; read with `OrderedJSON`, so its members keep their
    /// order. Throws `invalidRequest` naming the JSON path of the first problem; the rule is not checked
    /// further (adding it does that).
    public init(json data: Data, origin: String) throws {
        let document: OrderedJSON
        do {
            document = try OrderedJSON.parse(data)
        } catch let error as OrderedJSON.ParseError {
            throw KioskError.invalidRequest("The rule is not JSON: \(error.description)")
        }
        let reader = JSONReader(document, path: "$")
        try reader.refuseUnknown(["name", "enabled", "match", "actions", "id", "displayName", "hits", "createdAt", "updatedAt",
                                  "origin"])
        let match = try reader.object("match", required: true)
        try match.refuseUnknown(["endpoint", "urlPattern", "method"])
        let actions = try reader.object("actions", required: false)
        try actions.refuseUnknown(["status", "setHeaders", "removeHeaders", "patch", "latencyMilliseconds", "failure"])
        var patch: String?
        switch actions.member("patch") {
        case nil, .null?: patch = nil
        case .string(let text)?: patch = text
        case let value?: patch = value.rendered()
        }
        let failureName = try actions.string("failure")
        var failure: RuleFailure?
        if let failureName {
            guard let known = RuleFailure(rawValue: failureName) else {
                throw KioskError.invalidRequest("$.actions.failure must be one of \(RuleFailure.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            failure = known
        }
        self.init(
            name: try reader.string("name") ?? "", isEnabled: try reader.bool("enabled") ?? true,
            match: Match(endpoint: try match.string("endpoint"), urlPattern: try match.string("urlPattern"),
                         method: try match.string("method") ?? "*"),
            actions: Actions(status: try actions.int("status"), setHeaders: try actions.headers("setHeaders"),
                             removeHeaders: try actions.strings("removeHeaders"), patch: patch,
                             latencyMilliseconds: try actions.int("latencyMilliseconds"), failure: failure),
            origin: origin)
    }
}

/// Typed reads of a JSON object's members, each error naming the member's JSON path.
private struct JSONReader {
    let members: [(key: String, value: OrderedJSON)]
    let path: String

    init(_ value: OrderedJSON, path: String) {
        if case .object(let members) = value { self.members = members } else { members = [] }
        self.path = path
    }

    func member(_ name: String) -> OrderedJSON? { members.last { $0.key == name }?.value }

    private func fail(_ name: String, _ what: String) -> KioskError {
        KioskError.invalidRequest("\(path).\(name) must be \(what).")
    }

    func refuseUnknown(_ known: Set<String>) throws {
        for member in members where !known.contains(member.key) {
            throw KioskError.invalidRequest("\(path) has an unknown member “\(member.key.prefix(40))”; known: "
                                            + known.sorted().joined(separator: ", ") + ".")
        }
    }

    func object(_ name: String, required: Bool) throws -> JSONReader {
        switch member(name) {
        case .object?: return JSONReader(member(name)!, path: path + "." + name)
        case nil, .null?:
            if required { throw KioskError.invalidRequest("\(path).\(name) is missing.") }
            return JSONReader(.object([]), path: path + "." + name)
        default: throw fail(name, "an object")
        }
    }

    func string(_ name: String) throws -> String? {
        switch member(name) {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw fail(name, "a string")
        }
    }

    func bool(_ name: String) throws -> Bool? {
        switch member(name) {
        case nil, .null?: return nil
        case .bool(let flag)?: return flag
        default: throw fail(name, "true or false")
        }
    }

    func int(_ name: String) throws -> Int? {
        switch member(name) {
        case nil, .null?: return nil
        case .number(let text)?:
            guard let value = Int(text) else { throw fail(name, "a whole number") }
            return value
        default: throw fail(name, "a whole number")
        }
    }

    func strings(_ name: String) throws -> [String] {
        switch member(name) {
        case nil, .null?: return []
        case .array(let values)?:
            return try values.map { value in
                guard case .string(let text) = value else { throw fail(name, "an array of strings") }
                return text
            }
        default: throw fail(name, "an array of strings")
        }
    }

    func headers(_ name: String) throws -> [RequestRecord.HeaderField] {
        switch member(name) {
        case nil, .null?: return []
        case .array(let values)?:
            return try values.map { value in
                guard case .string(let field)? = value["name"], case .string(let text)? = value["value"] else {
                    throw fail(name, "an array of {\"name\": ..., \"value\": ...} objects")
                }
                return RequestRecord.HeaderField(name: field, value: text)
            }
        default: throw fail(name, "an array of {\"name\": ..., \"value\": ...} objects")
        }
    }
}
