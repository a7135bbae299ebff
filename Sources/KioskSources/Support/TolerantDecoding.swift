import Foundation
import KioskCore

// Tolerant decoding, item by item: envelopes are decoded strictly (a failure there is a whole-response
// error), while each element of a results array is decoded on its own so one odd item cannot sink a page.

/// One element of a results array: the decoded value, or the error that made this element unreadable.
/// Its initializer never throws, so the surrounding array keeps decoding the next elements.
struct Tolerant<Value: Decodable>: Decodable {
    /// The element, or why it could not be read.
    let result: Result<Value, DecodingError>

    init(from decoder: any Decoder) {
        do {
            result = .success(try Value(from: decoder))
        } catch let error as DecodingError {
            result = .failure(error)
        } catch {
            // DTO initialisers only throw DecodingError; anything else is still reported, never thrown.
            result = .failure(.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(error)")))
        }
    }
}

/// Where a decoding problem is and what it was, in words for a user or a log.
struct DecodingProblem: Sendable, Hashable {
    /// Coding path of the offending value, from the document root.
    var codingPath: [PathComponent]
    /// E.g. `expected a string, found null`.
    var message: String

    /// One step of a JSON path.
    enum PathComponent: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    /// Describes `error`, looking the offending value up in `document` (when it parsed) to say what was there.
    /// Foundation's account of a value it could not read, in words for a person: its JSON decoder names some problems
    /// by Swift's own names (`numberIsNotRepresentableInSwift(parsed: "1e400")`,
    /// `cannotConvertInputStringDataToUTF8(location: …)`), which say nothing to a reader.
    static func readable(_ description: String, found: String) -> String {
        if description.contains("numberIsNotRepresentableInSwift") || description.contains("not representable") {
            // Foundation may name the item rather than the field: then say which number, as it gave it.
            let number = description.range(of: #"parsed: "?([^")]+)"?"#, options: .regularExpression).map {
                String(description[$0]).replacingOccurrences(of: "parsed: ", with: "").replacingOccurrences(of: "\"", with: "")
            }
            return "a number its field cannot hold (a fraction where a whole number goes, or out of range)"
                + (number.map { ": \($0)" } ?? (found.hasPrefix("an object") || found.hasPrefix("an array") ? "" : ": found \(found)"))
        }
        if let syntax = ResponseBody.parserProblem(description) { return syntax }
        if description.contains("UTF8") || description.contains("UTF-8") { return "the text is not valid UTF-8" }
        // Any other name of Swift's own (`someCase(…)`): what was found, without it.
        if let first = description.first, first.isLowercase, description.contains("("),
           description.prefix(while: { $0 != "(" }).allSatisfy({ $0.isLetter || $0.isNumber }) {
            return "the value cannot be read: found \(found)"
        }
        return description
    }

    init(_ error: DecodingError, document: OrderedJSON?) {
        func found(at path: [any CodingKey]) -> String {
            guard let document else { return "something else" }
            return document.value(at: path)?.phrase ?? "nothing"
        }
        switch error {
        case .typeMismatch(let type, let context):
            codingPath = Self.components(context.codingPath)
            message = "expected \(Self.kind(of: type)), found \(found(at: context.codingPath))"
        case .valueNotFound(let type, let context):
            codingPath = Self.components(context.codingPath)
            message = "expected \(Self.kind(of: type)), found \(found(at: context.codingPath))"
        case .keyNotFound(let key, let context):
            codingPath = Self.components(context.codingPath + [key])
            message = "required field is missing"
        case .dataCorrupted(let context):
            codingPath = Self.components(context.codingPath)
            // "The given data was not valid JSON." says nothing; the parser's own error under it says what.
            let underlying = ((context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String)
                ?? context.underlyingError.map { String(describing: $0) } ?? ""
            message = Self.readable(underlying.isEmpty ? context.debugDescription : underlying, found: found(at: context.codingPath))
        @unknown default:
            codingPath = []
            message = "\(error)"
        }
    }

    /// The path without the root marker, as item issues show it: `results[3].name`, `[2].dogName`.
    var relativePath: String {
        var text = ""
        for component in codingPath {
            switch component {
            case .key(let name): text += text.isEmpty ? name : ".\(name)"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    /// The path from the root marker, as whole-response errors show it: `$`, `$.data.results`.
    var rootedPath: String {
        var text = "$"
        for component in codingPath {
            switch component {
            case .key(let name): text += ".\(name)"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    /// This problem as a skipped item's report.
    var issue: DecodingIssue { DecodingIssue(path: relativePath, message: message) }

    /// This problem as a whole-response error.
    var error: KioskError { .malformedResponse(path: rootedPath, message: message) }

    private static func components(_ path: [any CodingKey]) -> [PathComponent] {
        // Array positions are the only keys with an integer value: every DTO key is string-based.
        path.map { key in key.intValue.map(PathComponent.index) ?? .key(key.stringValue) }
    }

    private static func kind(of type: Any.Type) -> String {
        switch type {
        case is String.Type, is Substring.Type: return "a string"
        case is Bool.Type: return "a boolean"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type, is UInt64.Type, is Double.Type,
             is Float.Type, is Decimal.Type:
            return "a number"
        case is URL.Type: return "a URL"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array") || name.hasPrefix("[") || name.contains("UnkeyedDecodingContainer") {
                return "an array"
            }
            return "an object"
        }
    }
}

/// Reading response bodies: the envelope strictly, the items one by one.
enum ResponseBody {
    /// Decodes the whole body as `type`; any failure is a `KioskError.malformedResponse` with a `$` path.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            // A document the decoder could not read at all (a number no type holds, which Kiosk's own parser takes) is
            // said as the parser says it.
            let unreadable = if case .dataCorrupted(let context) = error, context.codingPath.isEmpty { true } else { false }
            guard let document = OrderedJSON.parseIfValid(data), !unreadable else {
                throw KioskError.malformedResponse(path: "$", message: syntaxProblem(in: data))
            }
            throw DecodingProblem(error, document: document).error
        } catch {
            throw KioskError.malformedResponse(path: "$", message: "\(error)")
        }
    }

    /// Splits decoded slots into the good values (with their upstream position) and the reported issues.
    static func collect<Value>(_ slots: [Tolerant<Value>], body: Data) -> (values: [(position: Int, value: Value)], issues: [DecodingIssue]) {
        var values: [(position: Int, value: Value)] = []
        var issues: [DecodingIssue] = []
        var document: OrderedJSON??  // parsed only if some item is bad, then reused for the others
        for (position, slot) in slots.enumerated() {
            switch slot.result {
            case .success(let value):
                values.append((position, value))
            case .failure(let error):
                if document == nil { document = .some(OrderedJSON.parseIfValid(body)) }
                issues.append(DecodingProblem(error, document: document ?? nil).issue)
            }
        }
        return (values, issues)
    }

    /// Says why a body is not JSON: empty, HTML, cut short, nested too deeply, or where else it goes wrong.
    static func syntaxProblem(in data: Data) -> String {
        let bytes = data.drop { [0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        guard let first = bytes.first else { return "expected JSON, found an empty body" }
        if first == UInt8(ascii: "<") { return "expected JSON, found HTML or XML" }
        // Text that starts no JSON value at all is not JSON gone wrong somewhere.
        guard Set("{[\"-0123456789tfn".utf8).contains(first) else {
            return endsEarly(bytes) ? "the JSON ends early (truncated body)" : "expected JSON, found text that is not valid JSON"
        }
        // The parser's own account, in words: where it stopped, and why. A body left open (a string, an object or an
        // array) reads as cut short, unless the parser stopped well before its end: `{"a": 1,, "b": [}` is a mistake
        // at byte 14, however its brackets count.
        var problem: String?
        var stoppedAt: Int?
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
        } catch {
            if let description = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String {
                problem = parserProblem(description)
                stoppedAt = description.range(of: #"character [0-9]+"#, options: .regularExpression)
                    .flatMap { Int(description[$0].dropFirst("character ".count)) }
            }
        }
        let stoppedBeforeTheEnd = stoppedAt.map { $0 < data.count - 2 } ?? false
        if endsEarly(bytes), !stoppedBeforeTheEnd { return "the JSON ends early (truncated body)" }
        return problem ?? "expected JSON, found text that is not valid JSON"
    }

    /// Foundation's JSON parser's account of a document it could not read ("Invalid value around character 8.",
    /// "Too many nested arrays or dictionaries around character 513.") in words for a person; nil for another.
    static func parserProblem(_ description: String) -> String? {
        let byte = description.range(of: #"character [0-9]+"#, options: .regularExpression).map { description[$0].dropFirst("character ".count) }
        let at = byte.map { " at byte \($0)" } ?? ""
        if description.contains("Too many nested") { return "the JSON is nested too deeply to read" + at }
        if description.contains("Unexpected end of file") { return "the JSON ends early (truncated body)" }
        if description.contains("surrogate") { return "a string holds half of a character (a lone \\u surrogate escape)" + at }
        if description.contains("not representable") {
            let number = description.range(of: #"Number \S+ is"#, options: .regularExpression)
                .map { String(description[$0].dropFirst("Number ".count).dropLast(" is".count)) }
            return "a number too large to read" + (number.map { ": \($0)" } ?? "")
        }
        if description.contains("Invalid value") || description.contains("Unexpected character") || description.contains("Badly formed") {
            return "the JSON is not valid" + at
        }
        return nil
    }

    /// Whether the text leaves a string, object or array open, which is what a cut-off body looks like.
    private static func endsEarly(_ bytes: Data.SubSequence) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
        return inString || depth > 0
    }
}

// Field readers for "optional-ish" values: absent or null falls back to a default, but a value of the
// wrong type is still an error, so a genuinely broken item is reported rather than shown half-empty.
extension KeyedDecodingContainer {
    /// The string at `key`; missing or null gives `fallback`.
    func lenientString(_ key: Key, default fallback: String = "") throws -> String {
        guard contains(key), try !decodeNil(forKey: key) else { return fallback }
        return try decode(String.self, forKey: key)
    }

    /// The integer at `key`, as `wholeNumber` reads it; missing or null gives `fallback`.
    func lenientInt(_ key: Key, default fallback: Int) throws -> Int {
        guard contains(key), try !decodeNil(forKey: key) else { return fallback }
        return try wholeNumber(key)
    }

    /// The integer at `key`, or nil when it is missing or null.
    func wholeNumberIfPresent(_ key: Key) throws -> Int? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try wholeNumber(key)
    }

    /// The integer at `key`, also when written as a string of digits (`"42"`, as APIs written in languages whose JSON
    /// libraries quote large numbers send ids and counts): a number is the same whichever way it came. Any other string
    /// is the type mismatch it was.
    func wholeNumber(_ key: Key) throws -> Int {
        guard let text = try? decode(String.self, forKey: key) else { return try decode(Int.self, forKey: key) }
        // Int(_:) takes digits with an optional sign, nothing else ("", "1e3", "0x1F" and "12abc" are nil).
        guard let number = Int(text.trimmingCharacters(in: .whitespaces)) else {
            throw DecodingError.typeMismatch(Int.self, .init(codingPath: codingPath + [key], debugDescription: "expected a whole number"))
        }
        return number
    }

    /// The array at `key`; missing, null or `""` (which older APIs send for "none") gives `[]`.
    func lenientArray<Element: Decodable>(_ key: Key, of type: Element.Type = Element.self) throws -> [Element] {
        guard contains(key), try !decodeNil(forKey: key) else { return [] }
        if let text = try? decode(String.self, forKey: key), text.trimmingCharacters(in: .whitespaces).isEmpty {
            return []
        }
        return try decode([Element].self, forKey: key)
    }

    /// A list of strings that may arrive as `[String]`, as `""` or a lone string, or not at all;
    /// null entries and blank strings inside are dropped.
    func stringList(_ key: Key) throws -> [String] {
        guard contains(key), try !decodeNil(forKey: key) else { return [] }
        if let text = try? decode(String.self, forKey: key) {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? [] : [trimmed]
        }
        return try decode([String?].self, forKey: key)
            .compactMap { $0?.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty }
    }

    /// A flag sent as `true`/`false` or `1`/`0`; missing or null gives false.
    func flexibleBool(_ key: Key) throws -> Bool {
        guard contains(key), try !decodeNil(forKey: key) else { return false }
        if let flag = try? decode(Bool.self, forKey: key) { return flag }
        if let number = try? decode(Int.self, forKey: key) { return number != 0 }
        throw DecodingError.typeMismatch(
            Bool.self,
            .init(codingPath: codingPath + [key], debugDescription: "expected a boolean or 0/1")
        )
    }

    /// A URL sent as a string; missing, null, empty or unparsable gives nil (a bad link is no reason to drop an item).
    func optionalURL(_ key: Key) throws -> URL? {
        let text = try lenientString(key).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : URL(string: text)
    }
}
