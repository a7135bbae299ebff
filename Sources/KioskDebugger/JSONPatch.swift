import Foundation
public import KioskCore

/// An RFC 6901 JSON Pointer: the path of one value inside a JSON document (`/results/0/name`; `""` is
/// the whole document). In a token, `~1` stands for `/` and `~0` for `~`; `-` names the position after
/// an array's last element, where `add` appends.
public struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    /// The reference tokens, unescaped; empty for the whole document.
    public let tokens: [String]

    /// The pointer `text` names; throws a message saying what is wrong with it.
    public init(_ text: String) throws(JSONPatch.Problem) {
        guard !text.isEmpty else {
            tokens = []
            return
        }
        guard text.hasPrefix("/") else {
            throw .notAPointer(String(text.prefix(80)))
        }
        var tokens: [String] = []
        for raw in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var token = ""
            var escaping = false
            for character in raw {
                if escaping {
                    switch character {
                    case "0": token.append("~")
                    case "1": token.append("/")
                    default: throw .badTilde(String(text.prefix(80)))
                    }
                    escaping = false
                } else if character == "~" {
                    escaping = true
                } else {
                    token.append(character)
                }
            }
            if escaping { throw .badTilde(String(text.prefix(80))) }
            tokens.append(token)
        }
        self.tokens = tokens
    }

    /// A pointer made of `tokens` (unescaped).
    public init(tokens: [String]) { self.tokens = tokens }

    /// The pointer as text, escaped again.
    public var description: String {
        tokens.map { "/" + $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1") }.joined()
    }

    /// Whether `self` names a value strictly inside the one `other` names.
    public func isInside(_ other: JSONPointer) -> Bool {
        tokens.count > other.tokens.count && Array(tokens.prefix(other.tokens.count)) == other.tokens
    }
}

/// An RFC 6902 JSON Patch: operations applied in order to a JSON document, all or nothing. It works on
/// `OrderedJSON`, so a patched document keeps its members in their order (a new member goes last) and
/// every number it does not touch exactly as written.
public struct JSONPatch: Sendable, Hashable {
    /// One operation of a patch.
    public enum Operation: Sendable, Hashable {
        /// Adds a member (replacing one of the same name) or inserts an array element; `""` replaces the document.
        case add(path: JSONPointer, value: OrderedJSON)
        /// Removes the value, which must exist.
        case remove(path: JSONPointer)
        /// Replaces the value, which must exist.
        case replace(path: JSONPointer, value: OrderedJSON)
        /// Removes the value at `from` and adds it at `path`.
        case move(from: JSONPointer, path: JSONPointer)
        /// Adds a copy of the value at `from` at `path`.
        case copy(from: JSONPointer, path: JSONPointer)
        /// Fails the whole patch unless the value at `path` equals `value` (numbers by value, objects
        /// whatever their members' order).
        case test(path: JSONPointer, value: OrderedJSON)

        /// The operation's name as a patch writes it.
        public var name: String {
            switch self {
            case .add: "add"
            case .remove: "remove"
            case .replace: "replace"
            case .move: "move"
            case .copy: "copy"
            case .test: "test"
            }
        }

        /// The pointer the operation changes or tests.
        public var path: JSONPointer {
            switch self {
            case .add(let path, _), .remove(let path), .replace(let path, _), .move(_, let path), .copy(_, let path),
                 .test(let path, _): path
            }
        }
    }

    /// What is wrong with one operation, for each face to say in its language (`english`); wrapped into an `Error`
    /// that says which operation it concerns. Pointers are quoted as written, cut to 80 characters; nil names the root.
    public enum Problem: Swift.Error, Sendable, Hashable {
        case notAPointer(String)
        /// A `~` not followed by 0 or 1, in the pointer quoted.
        case badTilde(String)
        case notAnObject
        case givenTwice(String)
        case missingMember(String)
        case memberNotAPointer(String)
        case opNotAString
        case removesWholeDocument
        case movedIntoItself(path: String, from: String)
        case unknownOperation(String)
        case testFailed(at: String?, actual: String, expected: String)
        case notAnArrayIndex(String)
        case pastTheEnd(index: Int, array: String?, count: Int)
        case cannotAddInside(String?, ValueKind)
        case rootHasNoParent
        /// `-` where a value must exist (only add may use it).
        case endOfArray(String)
        case doesNotExist(String)

        /// The problem in English.
        public var english: String {
            func place(_ pointer: String?) -> String { pointer ?? "the root" }
            switch self {
            case .notAPointer(let text): return "“\(text)” is not a JSON Pointer: it must be empty or start with “/”"
            case .badTilde(let text): return "in “\(text)”, “~” must be followed by 0 or 1 (~0 is ~, ~1 is /)"
            case .notAnObject: return "an operation is an object with “op” and “path”"
            case .givenTwice(let name): return "“\(name)” is given twice (an operation's members must be unique)"
            case .missingMember(let name): return "“\(name)” is missing"
            case .memberNotAPointer(let name): return "“\(name)” must be a string (a JSON Pointer)"
            case .opNotAString: return "“op” must be a string"
            case .removesWholeDocument: return "the whole document cannot be removed (replace it instead)"
            case let .movedIntoItself(path, from): return "a value cannot be moved into itself (\(path) is inside \(from))"
            case .unknownOperation(let name): return "“\(name)” is not an operation (add, remove, replace, move, copy or test)"
            case let .testFailed(at, actual, expected): return "the value at \(place(at)) is \(actual), not \(expected)"
            case .notAnArrayIndex(let token): return "“\(token)” is not an array index (0, 1, ... or -)"
            case let .pastTheEnd(index, array, count):
                return "index \(index) is past the end of the array at \(place(array)) (\(count) elements)"
            case let .cannotAddInside(parent, kind): return "\(place(parent)) is \(kind.english), so nothing can be added inside it"
            case .rootHasNoParent: return "the whole document has no parent"
            case .endOfArray(let path): return "\(path) names the end of an array, where there is no value (only add may use -)"
            case .doesNotExist(let path): return "the path \(path) does not exist"
            }
        }
    }

    /// What kind of JSON value a pointer reached.
    public enum ValueKind: Sendable, Hashable {
        case object, array, string, number, boolean, null

        init(_ value: OrderedJSON) {
            switch value {
            case .object: self = .object
            case .array: self = .array
            case .string: self = .string
            case .number: self = .number
            case .bool: self = .boolean
            case .null: self = .null
            }
        }

        /// "an object", "null".
        public var english: String {
            switch self {
            case .object: "an object"
            case .array: "an array"
            case .string: "a string"
            case .number: "a number"
            case .boolean: "a boolean"
            case .null: "null"
            }
        }
    }

    /// Why a patch cannot be read or applied: the operation concerned, when there is one, and why.
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// The operation's position in the patch, from 0; nil for the patch as a whole.
        public let index: Int?
        /// The operation's name and path as written ("replace /info/count"), when they could be read.
        public let operation: String?
        /// Why, for each face to say in its language (`description` says it in English).
        public let reason: Reason

        /// Why a patch cannot be read or applied.
        public enum Reason: Sendable, Hashable {
            /// The patch's text is not JSON.
            case notJSON(OrderedJSON.ParseError)
            /// The patch is JSON but no array of operations.
            case notAnArray
            /// The operation at `index` cannot be read or applied.
            case operation(Problem)
        }

        public init(index: Int?, operation: String?, reason: Reason) {
            self.index = index
            self.operation = operation
            self.reason = reason
        }

        /// The reason in English, without the operation's position.
        public var message: String {
            switch reason {
            case .notJSON(let error): "The patch is not JSON: \(error.description)"
            case .notAnArray: "A JSON Patch is an array of operations, such as " + #"[{"op": "replace", "path": "/status", "value": "Dead"}]."#
            case .operation(let problem): problem.english
            }
        }

        /// "operation 2 (replace /info/count): the path /info/count does not exist"; operations are
        /// counted from 1 here, as a person reads a list.
        public var description: String {
            guard let index else { return message }
            return "operation \(index + 1)" + (operation.map { " (\($0))" } ?? "") + ": " + message
        }
    }

    /// The operations, in order.
    public let operations: [Operation]

    /// A patch of `operations`.
    public init(operations: [Operation]) { self.operations = operations }

    /// Reads a patch document's text; throws what is wrong, with the operation's position.
    public init(parsing text: String) throws(Error) {
        let document: OrderedJSON
        do {
            document = try OrderedJSON.parse(text)
        } catch {
            // OrderedJSON's parse throws nothing else.
            throw Error(index: nil, operation: nil, reason: .notJSON(error as? OrderedJSON.ParseError
                ?? OrderedJSON.ParseError(offset: 0, path: "$", reason: .endOfDocument)))
        }
        try self.init(document)
    }

    /// Reads a patch document: an array of operation objects. Members a patch does not define are
    /// ignored (RFC 6902 §4); a member given twice is an error (§A.13), as is anything missing.
    public init(_ document: OrderedJSON) throws(Error) {
        guard case .array(let elements) = document else {
            throw Error(index: nil, operation: nil, reason: .notAnArray)
        }
        var operations: [Operation] = []
        for (index, element) in elements.enumerated() {
            do {
                operations.append(try Self.operation(element))
            } catch {
                throw Error(index: index, operation: Self.summary(of: element), reason: .operation(error))
            }
        }
        self.operations = operations
    }

    /// Applies every operation in order to `document`; the first that fails fails the whole patch.
    public func apply(to document: OrderedJSON) throws(Error) -> OrderedJSON {
        var result = document
        for (index, operation) in operations.enumerated() {
            do {
                result = try Self.apply(operation, to: result)
            } catch {
                throw Error(index: index, operation: "\(operation.name) \(operation.path)", reason: .operation(error))
            }
        }
        return result
    }

    // MARK: Reading

    private static func operation(_ element: OrderedJSON) throws(Problem) -> Operation {
        guard case .object(let members) = element else { throw .notAnObject }
        var seen = Set<String>()
        for member in members where !seen.insert(member.key).inserted {
            throw .givenTwice(String(member.key.prefix(40)))
        }
        func pointer(_ name: String) throws(Problem) -> JSONPointer {
            guard let value = element[name] else { throw .missingMember(name) }
            guard case .string(let text) = value else { throw .memberNotAPointer(name) }
            return try JSONPointer(text)
        }
        func value() throws(Problem) -> OrderedJSON {
            guard let value = element["value"] else { throw .missingMember("value") }
            return value
        }
        guard let op = element["op"] else { throw .missingMember("op") }
        guard case .string(let name) = op else { throw .opNotAString }
        switch name {
        case "add": return .add(path: try pointer("path"), value: try value())
        case "remove":
            let path = try pointer("path")
            guard !path.tokens.isEmpty else { throw .removesWholeDocument }
            return .remove(path: path)
        case "replace": return .replace(path: try pointer("path"), value: try value())
        case "move":
            let from = try pointer("from"), path = try pointer("path")
            guard !path.isInside(from) else { throw .movedIntoItself(path: path.description, from: from.description) }
            return .move(from: from, path: path)
        case "copy": return .copy(from: try pointer("from"), path: try pointer("path"))
        case "test": return .test(path: try pointer("path"), value: try value())
        default:
            throw .unknownOperation(String(name.prefix(40)))
        }
    }

    /// "replace /info/count" for an operation object, as far as it can be read (for error messages).
    private static func summary(of element: OrderedJSON) -> String? {
        guard case .string(let op)? = element["op"] else { return nil }
        guard case .string(let path)? = element["path"] else { return String(op.prefix(40)) }
        return "\(op.prefix(40)) \(path.prefix(80))"
    }

    // MARK: Applying

    private static func apply(_ operation: Operation, to document: OrderedJSON) throws(Problem) -> OrderedJSON {
        switch operation {
        case .add(let path, let value):
            return try add(value, at: path, in: document)
        case .remove(let path):
            return try updatingParent(of: path, in: document) { parent, last throws(Problem) in
                switch parent {
                case .object(var members):
                    guard members.contains(where: { $0.key == last }) else { throw missing(path) }
                    members.removeAll { $0.key == last }
                    return .object(members)
                case .array(var elements):
                    let index = try existingIndex(last, in: elements, path: path)
                    elements.remove(at: index)
                    return .array(elements)
                default:
                    throw missing(path)
                }
            }
        case .replace(let path, let value):
            guard !path.tokens.isEmpty else { return value }
            return try updatingParent(of: path, in: document) { parent, last throws(Problem) in
                switch parent {
                case .object(var members):
                    guard let position = members.lastIndex(where: { $0.key == last }) else { throw missing(path) }
                    members[position].value = value
                    return .object(members)
                case .array(var elements):
                    elements[try existingIndex(last, in: elements, path: path)] = value
                    return .array(elements)
                default:
                    throw missing(path)
                }
            }
        case .move(let from, let path):
            let value = try self.value(at: from, in: document)
            guard from != path else { return document }
            let removed = try apply(.remove(path: from), to: document)
            return try add(value, at: path, in: removed)
        case .copy(let from, let path):
            return try add(try value(at: from, in: document), at: path, in: document)
        case .test(let path, let expected):
            let actual = try value(at: path, in: document)
            guard OrderedJSON.areEqual(actual, expected) else {
                throw .testFailed(at: path.tokens.isEmpty ? nil : path.description, actual: shortened(actual), expected: shortened(expected))
            }
            return document
        }
    }

    private static func add(_ value: OrderedJSON, at path: JSONPointer, in document: OrderedJSON) throws(Problem) -> OrderedJSON {
        guard !path.tokens.isEmpty else { return value }
        return try updatingParent(of: path, in: document) { parent, last throws(Problem) in
            switch parent {
            case .object(var members):
                // An existing member keeps its place; a new one goes last.
                if let position = members.lastIndex(where: { $0.key == last }) {
                    members[position].value = value
                } else {
                    members.append((key: last, value: value))
                }
                return .object(members)
            case .array(var elements):
                if last == "-" {
                    elements.append(value)
                } else {
                    guard let index = arrayIndex(last) else { throw .notAnArrayIndex(String(last.prefix(40))) }
                    guard index <= elements.count else {
                        throw .pastTheEnd(index: index, array: parentText(path), count: elements.count)
                    }
                    elements.insert(value, at: index)
                }
                return .array(elements)
            default:
                throw .cannotAddInside(parentText(path), ValueKind(parent))
            }
        }
    }

    /// The document with the parent of `path`'s target (which must exist) replaced by `change`'s result;
    /// `change` receives the parent and the last token.
    private static func updatingParent(of path: JSONPointer, in document: OrderedJSON,
                                       _ change: (OrderedJSON, String) throws(Problem) -> OrderedJSON) throws(Problem) -> OrderedJSON {
        guard let last = path.tokens.last else { throw .rootHasNoParent }
        func descend(_ node: OrderedJSON, _ depth: Int) throws(Problem) -> OrderedJSON {
            if depth == path.tokens.count - 1 { return try change(node, last) }
            let token = path.tokens[depth]
            let prefix = JSONPointer(tokens: Array(path.tokens.prefix(depth + 1)))
            switch node {
            case .object(var members):
                guard let position = members.lastIndex(where: { $0.key == token }) else { throw missing(prefix) }
                members[position].value = try descend(members[position].value, depth + 1)
                return .object(members)
            case .array(var elements):
                let index = try existingIndex(token, in: elements, path: prefix)
                elements[index] = try descend(elements[index], depth + 1)
                return .array(elements)
            default:
                throw missing(prefix)
            }
        }
        return try descend(document, 0)
    }

    /// The value `path` names, which must exist.
    private static func value(at path: JSONPointer, in document: OrderedJSON) throws(Problem) -> OrderedJSON {
        var node = document
        for (depth, token) in path.tokens.enumerated() {
            let prefix = JSONPointer(tokens: Array(path.tokens.prefix(depth + 1)))
            switch node {
            case .object(let members):
                guard let member = members.last(where: { $0.key == token }) else { throw missing(prefix) }
                node = member.value
            case .array(let elements):
                node = elements[try existingIndex(token, in: elements, path: prefix)]
            default:
                throw missing(prefix)
            }
        }
        return node
    }

    /// `token` as the index of an existing element of `elements`.
    private static func existingIndex(_ token: String, in elements: [OrderedJSON], path: JSONPointer) throws(Problem) -> Int {
        guard let index = arrayIndex(token), index < elements.count else {
            if token == "-" { throw .endOfArray(path.description) }
            throw missing(path)
        }
        return index
    }

    /// An RFC 6901 array index: `0`, or digits without a leading zero.
    private static func arrayIndex(_ token: String) -> Int? {
        guard !token.isEmpty, token.utf8.allSatisfy({ (48...57).contains($0) }), token == "0" || !token.hasPrefix("0") else {
            return nil
        }
        return Int(token)
    }

    private static func missing(_ path: JSONPointer) -> Problem { .doesNotExist(path.description) }

    /// The pointer to `path`'s parent, nil for the root.
    private static func parentText(_ path: JSONPointer) -> String? {
        path.tokens.count <= 1 ? nil : JSONPointer(tokens: Array(path.tokens.dropLast())).description
    }

    private static func shortened(_ value: OrderedJSON) -> String {
        let text = value.rendered(indent: nil)
        return text.count <= 60 ? text : String(text.prefix(59)) + "…"
    }
}

extension OrderedJSON {
    /// JSON equality as RFC 6902's `test` defines it: numbers by value (`1.0` equals `1`), strings by
    /// their characters, arrays element by element in order, objects by the same members whatever their
    /// order (a repeated name counts once, its last value, as JSONDecoder reads it).
    public static func areEqual(_ lhs: OrderedJSON, _ rhs: OrderedJSON) -> Bool {
        switch (lhs, rhs) {
        case (.number(let a), .number(let b)):
            if a == b { return true }
            guard let x = Decimal(string: a, locale: Locale(identifier: "en_US_POSIX")),
                  let y = Decimal(string: b, locale: Locale(identifier: "en_US_POSIX")) else { return false }
            return x == y
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { areEqual($0, $1) }
        case (.object(let a), .object(let b)):
            let left = Dictionary(a.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
            let right = Dictionary(b.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
            guard left.count == right.count else { return false }
            return left.allSatisfy { key, value in right[key].map { areEqual(value, $0) } ?? false }
        default:
            return lhs == rhs
        }
    }
}
