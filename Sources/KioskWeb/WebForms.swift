import Foundation
import Hummingbird
import KioskApp
import KioskCore
import KioskDebugger

/// Query strings and POSTed forms, decoded into typed values by Hummingbird's `URLEncodedFormDecoder`.
/// `decode` is the one place where bad input becomes a 400 that says what is wrong: every kind of malformed
/// text is refused here, and each form's `init(from:)` refuses values that do not convert with a message
/// naming the parameter (through the `KeyedDecodingContainer` helpers below).
package enum FormInput {
    /// The longest query string accepted, unless a caller allows more (a form of the debugger does).
    static let maximumLength = 4096

    /// `raw` (a query string or a form body; nil is empty) as `Form`. `allowsLineBreaks` admits tabs and
    /// line breaks, which a textarea sends; other control characters are never accepted, and neither are an
    /// oversized text, bad percent-encoding or a repeated name.
    package static func decode<Form: Decodable>(_ type: Form.Type, from raw: String?, maximumLength: Int = maximumLength,
                                        allowsLineBreaks: Bool = false) throws -> Form {
        let raw = raw ?? ""
        guard raw.utf8.count <= maximumLength else {
            throw WebError.badRequest(said: { $0.queryTooLong(maximumLength) })
        }
        try refuseControlCharacters(raw, allowsLineBreaks: allowsLineBreaks)
        do {
            return try URLEncodedFormDecoder().decode(Form.self, from: withBareNamesValued(raw))
        } catch let error as WebError {
            throw error
        } catch let error as URLEncodedFormError {
            switch error.code {
            case .duplicateKeys:
                let name = String(error.value.prefix(40))
                throw WebError.badRequest(said: { $0.givenTwice(name) })
            case .failedToPercentDecode: throw WebError.badRequest(said: { $0.badPercentEncoding })
            default:
                let near = String(error.value.prefix(40))
                throw WebError.badRequest(said: { $0.malformedNear(near) })
            }
        } catch {
            // A DecodingError: a list or a map (`q[]=a`, `q[x]=a`) where a form takes one plain value.
            throw WebError.badRequest(said: { $0.notPlainValues })
        }
    }

    /// `URLEncodedFormDecoder` skips a name without "=" (`?evil`); Kiosk reads it as that name with an empty
    /// value, as browsers do, so it is still refused as unknown, or counted as a repeat.
    private static func withBareNamesValued(_ raw: String) -> String {
        let parts = raw.split(separator: "&", omittingEmptySubsequences: true)
        guard parts.contains(where: { !$0.contains("=") }) else { return raw }
        return parts.map { $0.contains("=") ? String($0) : $0 + "=" }.joined(separator: "&")
    }

    /// Nothing legitimate sends control characters; they would end up in SQL searches, logs and pages.
    private static func refuseControlCharacters(_ raw: String, allowsLineBreaks: Bool) throws {
        // Most queries are plain ASCII without escapes: nothing to decode to find out.
        guard raw.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 < 0x20 || $0 >= 0x7F }) else { return }
        guard let decoded = raw.removingPercentEncoding else {
            throw WebError.badRequest(said: { $0.badPercentEncoding })
        }
        let allowed: Set<Unicode.Scalar> = allowsLineBreaks ? ["\t", "\n", "\r"] : []
        guard !decoded.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && !allowed.contains($0) }) else {
            throw WebError.badRequest(said: { $0.controlCharacters })
        }
    }
}

/// A parameter name as a coding key; any name is one, so a form can list the names it was given.
package struct FormKey: CodingKey {
    package let stringValue: String
    package var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    package init?(stringValue: String) { self.stringValue = stringValue }
    package init?(intValue: Int) { nil }
}

extension KeyedDecodingContainer where Key == FormKey {
    /// The names given, in no particular order.
    var names: [String] { allKeys.map(\.stringValue) }

    /// A parameter's text, nil when it is absent.
    package func text(_ name: String) throws -> String? {
        try decodeIfPresent(String.self, forKey: FormKey(name))
    }

    /// A parameter converted to `T`: nil when absent or empty (an empty number field, a select's "any"), a 400
    /// with `message` when it does not convert.
    package func value<T: LosslessStringConvertible>(_ type: T.Type, _ name: String, invalid message: @autoclosure () -> String) throws -> T? {
        try value(type, name, refusal: WebError.badRequest(message()))
    }

    /// `value(_:_:invalid:)` refusing with `refusal` (one said in the page's language).
    package func value<T: LosslessStringConvertible>(_ type: T.Type, _ name: String, refusal: @autoclosure () -> WebError) throws -> T? {
        guard let raw = try text(name), !raw.isEmpty else { return nil }
        guard let value = T(raw) else { throw refusal() }
        return value
    }

    /// One of an enumeration's raw values: nil when absent or empty, a 400 with `message` for anything else.
    package func choice<T: RawRepresentable>(_ type: T.Type, _ name: String, invalid message: @autoclosure () -> String) throws -> T?
    where T.RawValue == String {
        try choice(type, name, refusal: WebError.badRequest(message()))
    }

    /// `choice(_:_:invalid:)` refusing with `refusal` (one said in the page's language).
    package func choice<T: RawRepresentable>(_ type: T.Type, _ name: String, refusal: @autoclosure () -> WebError) throws -> T?
    where T.RawValue == String {
        guard let raw = try text(name), !raw.isEmpty else { return nil }
        guard let value = T(rawValue: raw) else { throw refusal() }
        return value
    }

    /// A choice the form cannot do without: absent is as wrong as invalid.
    package func requiredChoice<T: RawRepresentable>(_ type: T.Type, _ name: String, invalid message: @autoclosure () -> String) throws -> T
    where T.RawValue == String {
        try requiredChoice(type, name, refusal: WebError.badRequest(message()))
    }

    /// `requiredChoice(_:_:invalid:)` refusing with `refusal` (one said in the page's language).
    package func requiredChoice<T: RawRepresentable>(_ type: T.Type, _ name: String, refusal: @autoclosure () -> WebError) throws -> T
    where T.RawValue == String {
        guard let value = try choice(T.self, name, refusal: refusal()) else { throw refusal() }
        return value
    }

    /// A switch such as `?refresh=1`: on for "1", off when absent, empty or "0"; anything else is a 400 (the OpenAPI
    /// document's enum), said to a person as a mistyped address.
    package func flag(_ name: String) throws -> Bool {
        switch try text(name) {
        case nil, "", "0": return false
        case "1": return true
        default:
            throw BadListAddress.said(.switchValue(name), WebError.badRequest("\(name) must be 1 (on) or 0 (off)."))
        }
    }

    /// A 400 naming the first unknown parameter and the valid ones.
    package func refuseUnknownNames(_ known: Set<String>) throws {
        for name in names.sorted() where !known.contains(name) {
            throw WebError.badRequest("Unknown parameter \"\(name.prefix(40))\"; "
                                      + (known.isEmpty ? "this address takes none." : "valid: \(known.sorted().joined(separator: ", "))."))
        }
    }
}

// MARK: - Query strings

/// A list URL's query: `?page=&q=&refresh=` (and `edit=` on dogs) plus the catalog's filters, which
/// `ListParameters` checks against the catalog's names.
struct ListQuery: Decodable {
    /// The names that are not filters.
    static let fixedNames: Set<String> = ["page", "q", "refresh", "edit"]

    var names: [String] = []
    var page: Int?
    var q: String?
    var refresh = false
    var edit = false
    /// Every other parameter, by name.
    var filters: [String: String] = [:]

    /// No parameters.
    init() {}

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        names = form.names
        page = try BadListAddress.said(.pageNotANumber) { try form.value(Int.self, "page", invalid: "The page must be a whole number.") }
        q = try form.text("q")
        refresh = try form.flag("refresh")
        edit = try form.flag("edit")
        for name in names where !Self.fixedNames.contains(name) { filters[name] = try form.text(name) }
    }
}

/// An item page's query: `?page=` of a long linked list (a location's residents) and `?refresh=`. Other
/// names are ignored, as item pages always have: a GET on a POST route (`/dogs/reset?csrf=`) stays a 404.
struct DetailQuery: Decodable {
    var page = 1
    var refresh = false
    /// The refusal of a parameter the page does not take (a mistyped address, refused as a list's is: docs/API.md), for
    /// the page to throw once it knows its item is there (an address with nothing at it is a 404 whatever its query).
    var unknownParameter: WebError?

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        if let unknown = form.names.sorted().first(where: { !["page", "refresh"].contains($0) }) {
            do { try form.refuseUnknownNames(["page", "refresh"]) } catch let error as WebError {
                unknownParameter = BadListAddress.said(.unknownParameter(String(unknown.prefix(40))), error)
            }
        }
        page = try BadListAddress.said(.pageNotANumber) { try form.value(Int.self, "page", invalid: "The page must be a whole number.") } ?? 1
        guard page >= 1 else { throw BadListAddress.said(.pageBelowOne, WebError.badRequest("The page must be 1 or more.")) }
        refresh = try form.flag("refresh")
    }
}

/// The query of an address that takes none (`/api/favorites`, `/api/connectivity`): any parameter is refused.
struct NoQuery: Decodable {
    init(from decoder: any Decoder) throws {
        try decoder.container(keyedBy: FormKey.self).refuseUnknownNames([])
    }
}

/// `/image?url=`.
struct ImageQuery: Decodable {
    var url: String

    init(from decoder: any Decoder) throws {
        guard let url = try decoder.container(keyedBy: FormKey.self).text("url"), !url.isEmpty else {
            throw WebError.badRequest(said: { $0.pictureAddressRequired })
        }
        self.url = url
    }
}

// MARK: - POSTed forms (their CSRF field is checked first, by `CSRFProtection.verifiedForm`)

/// Where a form sends the browser afterwards; only a local path is followed (see `WebController.localReturnPath`).
private func formReturnPath(_ form: KeyedDecodingContainer<FormKey>) throws -> String? { try form.text("return") }

/// `POST /favorites/{source}/{id}`: `action=add|remove`, `return=`.
struct FavoriteForm: Decodable {
    enum Action: String { case add, remove }

    var action: Action
    var returnPath: String?

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        action = try form.requiredChoice(Action.self, "action", invalid: "The action must be add or remove.")
        returnPath = try formReturnPath(form)
    }
}

/// `POST /dogs/{id}/move`: `to=` a position from 0.
struct MoveForm: Decodable {
    var to: Int

    init(from decoder: any Decoder) throws {
        let message = "The position must be a whole number from 0."
        guard let to = try decoder.container(keyedBy: FormKey.self).value(Int.self, "to", invalid: message), to >= 0 else {
            throw WebError.badRequest(message)
        }
        self.to = to
    }
}

/// `POST /language`: `lang=en|es`, `return=`.
struct LanguageForm: Decodable {
    var language: Language
    var returnPath: String?

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        let offered = Language.allCases.map(\.rawValue).joined(separator: ", ")
        language = try form.requiredChoice(Language.self, "lang", refusal: WebError.badRequest(said: { $0.unknownLanguage(offered) }))
        returnPath = try formReturnPath(form)
    }
}

