// The filter language of the debugger's search box and `kiosk log --filter`:
//
//     status:5xx source:nyt cache:stale method:GET slow:>500ms has:error spider "api/character"
//
// - Terms are separated by spaces. A term `key:value` filters; anything else is a word of the
//   full-text search over URLs and bodies (every word must match the start of a word there).
// - Keys: status, source, cache, method, endpoint, host (each takes values separated by commas, any of which
//   may match: `status:4xx,5xx`), slow (one bound) and has (one value, repeatable: `has:error has:body`).
// - `-key:value` negates a term: `-source:nyt`, `-has:error`, `-slow:>2s` (2 s or less).
// - Double quotes make a word literal (`"http://x"`, `"-1"`): a colon or a leading minus is then text.
//   The index matches words, not phrases, so `"not found"` finds records with both words.
// - Keys and the words of values are case-insensitive, except endpoint names.
// A mistake throws `FilterSyntaxError` with the range of the mistake and what is accepted there.

import Foundation
public import KioskCore

/// A key of the filter language.
public enum FilterKey: String, Sendable, Hashable, CaseIterable {
    case status, source, cache, method, endpoint, host, slow, has

    /// A term showing the key in use.
    public var example: String {
        switch self {
        case .status: "status:5xx"
        case .source: "source:nyt"
        case .cache: "cache:stale"
        case .method: "method:GET"
        case .endpoint: "endpoint:rickandmorty.characters"
        case .host: "host:api.example.com"
        case .slow: "slow:>500ms"
        case .has: "has:error"
        }
    }

    /// What the key accepts, in a sentence (the help and every error about the key's value say it).
    public var accepted: String {
        switch self {
        case .status: "status must be 1xx, 2xx, 3xx, 4xx, 5xx, error (no response), store (answered from Kiosk's store) or a code from 100 to 599"
        case .source: "source must be one of " + SourceID.allCases.map(\.rawValue).joined(separator: ", ")
        case .cache:
            "cache must be hit, fwd, fwd=REASON (" + CacheStatus.Forward.allCases.map(\.rawValue).joined(separator: ", ")
                + "; fwd=miss also matches uri-miss and vary-miss), miss, stale (" + CacheDecision.servedStale.map(\.rawValue)
                .joined(separator: ", ") + ") or a decision: " + CacheDecision.allCases.map(\.rawValue).joined(separator: ", ")
        case .method: "method must be an HTTP method in letters, such as GET or HEAD"
        case .endpoint: "endpoint must be an endpoint name such as rickandmorty.characters, or an app's host:port as the log shows it (127.0.0.1:8080)"
        case .host: "host must be a host name or address, with :port for one port only (api.example.com, 127.0.0.1:8080, [::1]:3000), or *.example.com for its subdomains"
        case .slow: "slow must be a duration with its unit, such as slow:>500ms, slow:>=2s or slow:1.5s (at least)"
        case .has: "has must be error (the request failed) or body (a response body was captured)"
        }
    }

    /// Whether the key takes several values separated by commas.
    var takesList: Bool { self != .slow && self != .has }

    /// Another term of a key that takes one value, beside `example` (how to give a second one).
    public var secondExample: String { self == .has ? "has:body" : "-slow:>2s" }
}

/// A filter that does not parse: what is wrong, and where in the text.
public struct FilterSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, for a face to say in its language (`message` says it in English).
    public enum Reason: Sendable, Hashable {
        /// A quote opened and never closed.
        case unclosedQuote
        /// A closing quote followed by something other than a space.
        case textAfterQuote
        /// A quote inside a word.
        case quoteInWord
        /// A word with a minus (`-term`) that is no key:value term.
        case negatedWord(String)
        /// A term whose key is not one of the language's (`key` is empty when the colon comes first).
        case unknownKey(key: String, term: String)
        /// A key with nothing after its colon.
        case missingValue(FilterKey)
        /// A list of values with an empty one between commas.
        case emptyValue(FilterKey)
        /// Several values for a key that takes one.
        case oneValueOnly(FilterKey)
        /// A value the key does not accept (`FilterKey.accepted` says what it does).
        case invalidValue(FilterKey)
        /// A key given in two terms; `has` names the value given twice (`has:error`).
        case givenTwice(FilterKey, has: String?)
    }

    /// What is wrong.
    public var reason: Reason
    /// The text that was parsed.
    public var input: String
    /// The mistake, in `input`.
    public var range: Range<String.Index>

    public init(_ reason: Reason, input: String, range: Range<String.Index>) {
        self.reason = reason
        self.input = input
        self.range = range
    }

    /// What is wrong, and what is accepted there, in English: one sentence, without a final period.
    public var message: String { reason.english }
}

extension FilterSyntaxError.Reason {
    /// The reason in English: one sentence, without a final period.
    public var english: String {
        switch self {
        case .unclosedQuote: "this quote is not closed"
        case .textAfterQuote: "a closing quote must be followed by a space"
        case .quoteInWord: "a quote may only begin a word"
        case .negatedWord(let term): "only key:value terms can be negated; to search for the word, quote it: \"\(term)\""
        case .unknownKey(let key, let term):
            (key.isEmpty ? "a key is missing before the colon" : "there is no key “\(key)”")
                + "; the keys are \(FilterKey.allCases.map(\.rawValue).joined(separator: ", ")) (to search for the text, quote it: \"\(term)\")"
        case .missingValue(let key): "\(key.rawValue) needs a value, such as \(key.example)"
        case .emptyValue(let key): "\(key.rawValue) has an empty value between commas; \(key.accepted)"
        case .oneValueOnly(let key): "\(key.rawValue) takes one value; repeat the key for another: \(key.example) \(key.secondExample)"
        case .invalidValue(let key): key.accepted
        case .givenTwice(_, let has?): "has:\(has) is given twice"
        case .givenTwice(let key, nil): "\(key.rawValue) is given twice; list its values with commas in one term, such as status:4xx,5xx"
        }
    }
}

extension FilterSyntaxError {

    /// The mistake's place in characters, as a terminal shows them.
    public var characterOffsets: Range<Int> {
        let start = input.distance(from: input.startIndex, to: range.lowerBound)
        return start..<start + input.distance(from: range.lowerBound, to: range.upperBound)
    }

    /// The mistake's place in UTF-16 code units, as JavaScript counts (`input.setSelectionRange`).
    public var utf16Offsets: Range<Int> {
        let start = input.utf16.distance(from: input.startIndex, to: range.lowerBound)
        return start..<start + input.utf16.distance(from: range.lowerBound, to: range.upperBound)
    }

    /// The input with carets under the mistake (at least one, after the end for a missing part), as two
    /// lines for a terminal; a control character in the input is shown as its picture (`␛` for an escape, `␉` for a tab:
    /// seen, yet never acted on by the terminal), other invisible characters as spaces, and wide characters (CJK, an
    /// emoji) counted as the two columns a terminal gives them, so the carets line up.
    public var pointer: String {
        let shown = input.map { character -> Character in
            if character.unicodeScalars.count == 1, let scalar = character.unicodeScalars.first,
               scalar.value < 0x20 || scalar.value == 0x7F {
                return Character(Unicode.Scalar(scalar.value == 0x7F ? 0x2421 : 0x2400 + scalar.value)!)
            }
            let invisible = character.isWhitespace || character.unicodeScalars.contains {
                $0.properties.generalCategory == .control || $0.properties.generalCategory == .format
            }
            return invisible ? " " : character
        }
        // Counted on the characters as they were (one for one with the input's): made a String again, a picture followed
        // by a combining mark would merge into one character, and the offsets would run past its end.
        let columns = { (characters: ArraySlice<Character>) in characters.reduce(0) { $0 + TerminalColumns.of($1) } }
        let range = min(characterOffsets.lowerBound, shown.count)..<min(characterOffsets.upperBound, shown.count)
        let before = columns(shown[..<range.lowerBound])
        let under = columns(shown[range])
        return String(shown) + "\n" + String(repeating: " ", count: before) + String(repeating: "^", count: max(1, under))
    }

    public var description: String { "\(message) (at character \(characterOffsets.lowerBound + 1))" }
}

extension RequestFilter {
    /// Parses the filter language (see the top of this file); `limit` is the most records it returns.
    public init(parsing text: String, limit: Int = 100) throws(FilterSyntaxError) {
        self.init(limit: limit)
        var words: [String] = []
        var index = text.startIndex
        func fail(_ reason: FilterSyntaxError.Reason, _ range: Range<String.Index>) -> FilterSyntaxError {
            FilterSyntaxError(reason, input: text, range: range)
        }
        while true {
            while index < text.endIndex, text[index].isWhitespace { index = text.index(after: index) }
            guard index < text.endIndex else { break }
            let start = index
            if text[index] == "\"" {
                let opened = text.index(after: index)
                guard let close = text[opened...].firstIndex(of: "\"") else {
                    throw fail(.unclosedQuote, start..<text.endIndex)
                }
                index = text.index(after: close)
                if index < text.endIndex, !text[index].isWhitespace {
                    let end = text[index...].firstIndex(where: \.isWhitespace) ?? text.endIndex
                    throw fail(.textAfterQuote, index..<end)
                }
                words.append(String(text[opened..<close]))
                continue
            }
            index = text[start...].firstIndex(where: \.isWhitespace) ?? text.endIndex
            let term = start..<index
            if let quote = text[term].firstIndex(of: "\"") {
                throw fail(.quoteInWord, quote..<text.index(after: quote))
            }
            let negated = text[start] == "-" && text[term].count > 1
            let body = negated ? text.index(after: start) : start
            guard let colon = text[body..<index].firstIndex(of: ":") else {
                if negated {
                    throw fail(.negatedWord(String(text[term])), term)
                }
                words.append(String(text[term]))
                continue
            }
            let keyText = text[body..<colon]
            guard let key = FilterKey(rawValue: keyText.lowercased()) else {
                throw fail(.unknownKey(key: String(keyText), term: String(text[term])),
                           keyText.isEmpty ? colon..<text.index(after: colon) : keyText.startIndex..<keyText.endIndex)
            }
            let valueStart = text.index(after: colon)
            guard valueStart < index else {
                throw fail(.missingValue(key), term)
            }
            try apply(key, text[valueStart..<index], negated: negated, term: term, in: text)
        }
        self.text = words.isEmpty ? nil : words.joined(separator: " ")
    }

    /// Adds one key's value as a term of the language would (`value` is the text after the colon), for a
    /// face that takes keys one by one (`kiosk log --status 5xx`); errors point into `value`.
    public mutating func apply(_ key: FilterKey, _ value: String, negated: Bool = false) throws(FilterSyntaxError) {
        guard !value.isEmpty else {
            throw FilterSyntaxError(.missingValue(key), input: value, range: value.startIndex..<value.endIndex)
        }
        try apply(key, value[...], negated: negated, term: value.startIndex..<value.endIndex, in: value)
    }

    private mutating func apply(_ key: FilterKey, _ value: Substring, negated: Bool, term: Range<String.Index>,
                                in text: String) throws(FilterSyntaxError) {
        func fail(_ reason: FilterSyntaxError.Reason, _ range: Range<String.Index>) -> FilterSyntaxError {
            FilterSyntaxError(reason, input: text, range: range)
        }
        // Each part between commas, with its range (for the error that points at it).
        var parts: [Substring] = []
        if key.takesList {
            var partStart = value.startIndex
            for position in value.indices where value[position] == "," {
                parts.append(value[partStart..<position])
                partStart = value.index(after: position)
            }
            parts.append(value[partStart..<value.endIndex])
            if let empty = parts.first(where: \.isEmpty) {
                let at = empty.startIndex < text.endIndex ? empty.startIndex..<text.index(after: empty.startIndex)
                    : text.index(before: empty.startIndex)..<empty.startIndex
                throw fail(.emptyValue(key), at)
            }
        } else if let comma = value.firstIndex(of: ",") {
            throw fail(.oneValueOnly(key), comma..<text.index(after: comma))
        } else {
            parts = [value]
        }
        func parsed<Value>(_ parse: (String) -> Value?) throws(FilterSyntaxError) -> [Value] {
            var values: [Value] = []
            for part in parts {
                guard let parsed = parse(String(part)) else { throw fail(.invalidValue(key), part.startIndex..<part.endIndex) }
                values.append(parsed)
            }
            return values
        }
        func twice() -> FilterSyntaxError {
            fail(.givenTwice(key, has: nil), term)
        }
        switch key {
        case .status:
            guard statuses.isEmpty else { throw twice() }
            statuses = FilterCriterion(try parsed(StatusMatch.init(filterValue:)), negated: negated)
        case .source:
            guard sources.isEmpty else { throw twice() }
            sources = FilterCriterion(try parsed { SourceID(rawValue: $0.lowercased()) }, negated: negated)
        case .cache:
            guard cache.isEmpty else { throw twice() }
            cache = FilterCriterion(try parsed(CacheMatch.init(filterValue:)), negated: negated)
        case .method:
            guard methods.isEmpty else { throw twice() }
            methods = FilterCriterion(try parsed { word in
                word.count <= 20 && word.allSatisfy { $0.isASCII && $0.isLetter } ? word.uppercased() : nil
            }, negated: negated)
        case .endpoint:
            guard endpoints.isEmpty else { throw twice() }
            endpoints = FilterCriterion(try parsed { name in
                // (An app's exchanges are listed under its host and port: `127.0.0.1:8080`, `[::1]:3000`.)
                name.count <= 270 && name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-:[]".unicodeScalars.contains($0)) }
                    ? name : nil
            }, negated: negated)
        case .host:
            guard hosts.isEmpty else { throw twice() }
            hosts = FilterCriterion(try parsed { name in
                // `*.example.com`: its subdomains, as rules, mocks and breakpoints take them.
                let named = name.hasPrefix("*.") ? name.dropFirst(2) : Substring(name)
                // (`::1` starts with a colon; `:8080` alone names no host.)
                guard named.count <= 262, !named.isEmpty, !named.hasPrefix(":") || named.hasPrefix("::"), !named.hasPrefix("."),
                      named.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || ".-_:[]".unicodeScalars.contains($0)) })
                else { return nil }
                return name.lowercased()
            }, negated: negated)
        case .slow:
            guard duration == nil else { throw twice() }
            guard var bound = try parsed(DurationBound.init(filterValue:)).first else { throw fail(.invalidValue(key), term) }
            // Negated, "more than N" becomes "N or less" and "at least N" becomes "less than N".
            if negated {
                bound.isUpper = true
                bound.isInclusive.toggle()
            }
            duration = bound
        case .has:
            let word = value.lowercased()
            switch word {
            case "error":
                guard hasError == nil else { throw fail(.givenTwice(key, has: "error"), term) }
                hasError = !negated
            case "body":
                guard hasResponseBody == nil else { throw fail(.givenTwice(key, has: "body"), term) }
                hasResponseBody = !negated
            default:
                throw fail(.invalidValue(key), value.startIndex..<value.endIndex)
            }
        }
    }

    /// The filter in the language, keys in a fixed order then the words (quoted where they would read as a
    /// term): parsing it gives the same filter, cursors and limit aside. Empty when it matches everything.
    public var inLanguage: String {
        var terms: [String] = []
        func add<Value>(_ key: FilterKey, _ criterion: FilterCriterion<Value>, _ word: (Value) -> String) {
            guard !criterion.isEmpty else { return }
            terms.append((criterion.isNegated ? "-" : "") + key.rawValue + ":" + criterion.values.map(word).joined(separator: ","))
        }
        add(.status, statuses) { $0.filterValue }
        add(.source, sources) { $0.rawValue }
        add(.cache, cache) { $0.filterValue }
        add(.method, methods) { $0 }
        add(.endpoint, endpoints) { $0 }
        add(.host, hosts) { $0 }
        if let duration { terms.append((duration.isUpper ? "-" : "") + "slow:" + duration.filterValue) }
        if let hasError { terms.append((hasError ? "" : "-") + "has:error") }
        if let hasResponseBody { terms.append((hasResponseBody ? "" : "-") + "has:body") }
        for word in (text ?? "").split(whereSeparator: \.isWhitespace) {
            // A quote cannot be written inside a word; the search ignores punctuation anyway.
            let plain = word.replacingOccurrences(of: "\"", with: "")
            guard !plain.isEmpty else { continue }
            terms.append(plain.contains(":") || plain.hasPrefix("-") ? "\"\(plain)\"" : plain)
        }
        return terms.joined(separator: " ")
    }

    /// `text` (in the filter language) without its terms of `key` (`status:5xx`, `-status:4xx,5xx`), every other word
    /// and term as written: what a menu's choice of that key leaves of a filter typed beside it.
    public static func removingTerms(of key: FilterKey, from text: String) -> String {
        var words: [Substring] = []
        var start: String.Index?
        var quoted = false
        for index in text.indices {
            let character = text[index]
            if character == "\"" { quoted.toggle() }
            if character.isWhitespace && !quoted {
                if let begun = start { words.append(text[begun..<index]) }
                start = nil
            } else if start == nil {
                start = index
            }
        }
        if let begun = start { words.append(text[begun...]) }
        let prefix = key.rawValue + ":"
        return words.filter { word in !(word.hasPrefix("-") ? word.dropFirst() : word).lowercased().hasPrefix(prefix) }
            .joined(separator: " ")
    }

    /// The first key both this filter and `other` set: combining them would drop one of the two.
    public func sharedKey(with other: RequestFilter) -> FilterKey? {
        let pairs: [(FilterKey, Bool, Bool)] = [
            (.status, !statuses.isEmpty, !other.statuses.isEmpty), (.source, !sources.isEmpty, !other.sources.isEmpty),
            (.cache, !cache.isEmpty, !other.cache.isEmpty), (.method, !methods.isEmpty, !other.methods.isEmpty),
            (.endpoint, !endpoints.isEmpty, !other.endpoints.isEmpty), (.host, !hosts.isEmpty, !other.hosts.isEmpty),
            (.slow, duration != nil, other.duration != nil),
            (.has, hasError != nil || hasResponseBody != nil, other.hasError != nil || other.hasResponseBody != nil),
        ]
        return pairs.first { $0.1 && $0.2 }?.0
    }

    /// This filter with every criterion `other` sets (check `sharedKey(with:)` first: `other` wins a shared
    /// key), the words of both texts, and this filter's cursors and limit: how the older single-value
    /// flags and form fields join a filter in the language.
    public func adding(_ other: RequestFilter) -> RequestFilter {
        var combined = self
        let words = [text, other.text].compactMap { $0 }
        combined.text = words.isEmpty ? nil : words.joined(separator: " ")
        if !other.statuses.isEmpty { combined.statuses = other.statuses }
        if !other.sources.isEmpty { combined.sources = other.sources }
        if !other.cache.isEmpty { combined.cache = other.cache }
        if !other.methods.isEmpty { combined.methods = other.methods }
        if !other.endpoints.isEmpty { combined.endpoints = other.endpoints }
        if !other.hosts.isEmpty { combined.hosts = other.hosts }
        if let duration = other.duration { combined.duration = duration }
        if let hasError = other.hasError { combined.hasError = hasError }
        if let hasBody = other.hasResponseBody { combined.hasResponseBody = hasBody }
        return combined
    }

    /// Every key with an example, for inline help.
    public static let languageHelp: [(example: String, meaning: String)] = FilterKey.allCases.map { ($0.example, $0.accepted) } + [
        ("-source:nyt", "a minus before a key:value term keeps only what does not match it"),
        ("spider \"api/character\"", "other words search URLs and bodies; quotes make a word with a colon or a leading minus literal"),
    ]
}

extension StatusMatch {
    /// `1xx` … `5xx`, `error`, `store`, or a code from 100 to 599.
    init?(filterValue text: String) {
        if let statusClass = StatusClass(text.lowercased()), text.count > 1 || statusClass == .error {
            self = .statusClass(statusClass)
        } else if text.count == 3, text.allSatisfy(\.isASCII), let code = Int(text), (100...599).contains(code) {
            self = .code(code)
        } else {
            return nil
        }
    }

    /// How the language writes it.
    var filterValue: String {
        switch self {
        case .statusClass(let statusClass): statusClass.description
        case .code(let code): String(code)
        }
    }
}

extension CacheMatch {
    /// A decision, `stale`, `hit`, `fwd`, `miss` (as `fwd=miss`) or `fwd=<reason>`.
    init?(filterValue text: String) {
        let word = text.lowercased()
        if let decision = CacheDecision(rawValue: word) {
            self = .decision(decision)
        } else if word == "stale" {
            self = .stale
        } else if word == "hit" {
            self = .hit
        } else if word == "fwd" {
            self = .forwarded(nil)
        } else if word == "miss" {
            self = .forwarded(.miss)
        } else if word.hasPrefix("fwd="), let reason = CacheStatus.Forward(rawValue: String(word.dropFirst(4))) {
            self = .forwarded(reason)
        } else {
            return nil
        }
    }

    /// How the language writes it.
    var filterValue: String {
        switch self {
        case .decision(let decision): decision.rawValue
        case .stale: "stale"
        case .hit: "hit"
        case .forwarded(let reason): reason.map { "fwd=\($0.rawValue)" } ?? "fwd"
        }
    }
}

extension DurationBound {
    /// `>N`, `>=N` or `N` (at least), N a number with `ms` or `s`, below a day.
    init?(filterValue text: String) {
        var rest = Substring(text.lowercased())
        var inclusive = true
        if rest.hasPrefix(">=") {
            rest = rest.dropFirst(2)
        } else if rest.hasPrefix(">") {
            rest = rest.dropFirst()
            inclusive = false
        }
        // Divided rather than multiplied by 0.001, so that 500ms is exactly the 0.5 s that `--min-ms 500` gives.
        let divisor: Double
        if rest.hasSuffix("ms") {
            rest = rest.dropLast(2)
            divisor = 1000
        } else if rest.hasSuffix("s") {
            rest = rest.dropLast()
            divisor = 1
        } else {
            return nil
        }
        // Digits with at most one decimal point: no sign, exponent, "inf" or "nan".
        guard !rest.isEmpty, rest.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), rest.filter({ $0 == "." }).count <= 1,
              rest != ".", let number = Double(rest) else { return nil }
        let seconds = number / divisor
        guard seconds < 86_400 else { return nil }
        self.init(seconds: seconds, isInclusive: inclusive)
    }

    /// How the language writes it (in milliseconds, as the debugger shows durations), without the minus.
    var filterValue: String {
        // Negated bounds flip back: "N or less" was written ">N", "less than N" ">=N".
        let inclusive = isUpper ? !isInclusive : isInclusive
        let milliseconds = seconds * 1000
        let number = milliseconds.rounded() == milliseconds && milliseconds < 1e15 ? String(Int(milliseconds)) : String(milliseconds)
        return (inclusive ? ">=" : ">") + number + "ms"
    }
}
