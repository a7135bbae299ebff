import Foundation
import Hummingbird
import KioskCore

/// The languages of the web app. Upstream data stays in the language the API sends it in.
package enum Language: String, CaseIterable, Sendable {
    case en
    case es

    /// The cookie that makes a choice made with the switch stick.
    static let cookieName = "kiosk_lang"

    /// The language's name in itself, as the switch shows it.
    var nativeName: String {
        switch self {
        case .en: "English"
        case .es: "Español"
        }
    }

    /// The locale used for dates and numbers.
    var locale: Locale { Locale(identifier: self == .es ? "es_ES" : "en_US") }

    /// The strings of this language (one shared instance each).
    var strings: Strings { self == .es ? .spanish : .english }

    /// The language for a request: the switch's cookie when valid, else the best Accept-Language match,
    /// else English.
    static func negotiate(cookie: String?, acceptLanguage: String?) -> Language {
        if let cookie, let chosen = Language(rawValue: cookie) { return chosen }
        return preferred(acceptLanguage) ?? .en
    }

    /// The highest-weighted supported language in an Accept-Language header ("es-ES,es;q=0.9,en;q=0.8");
    /// ties keep header order, q=0 means "not this one".
    static func preferred(_ header: String?) -> Language? {
        guard let header, header.utf8.count <= 1024 else { return nil }
        var best: (language: Language, weight: Double)?
        for entry in header.split(separator: ",") {
            let parts = entry.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = parts.first?.lowercased(), !tag.isEmpty else { continue }
            let primary = String(tag.split(separator: "-").first ?? "")
            var weight = 1.0
            for parameter in parts.dropFirst() where parameter.lowercased().hasPrefix("q=") {
                weight = Double(parameter.dropFirst(2)) ?? 0
            }
            guard weight > 0, let language = Language(rawValue: primary) else { continue }
            if best == nil || weight > best!.weight { best = (language, weight) }
        }
        return best?.language
    }
}

/// Puts the request's language and path in its context, and marks responses as varying by the language.
struct LanguageMiddleware: RouterMiddleware {
    func handle(_ request: Request, context: WebRequestContext,
                next: (Request, WebRequestContext) async throws -> Response) async throws -> Response {
        var context = context
        context.language = Language.negotiate(cookie: request.cookies[Language.cookieName]?.value,
                                              acceptLanguage: request.headers[.acceptLanguage])
        // The request target as sent ("/rickandmorty?page=2"); rebuilt only for the rare absolute form.
        let target = request.uri.string
        context.path = target.hasPrefix("/") ? target : request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
        var response = try await next(request, context)
        // Only pages are in a language; pictures, scripts and JSON stay cacheable whatever the cookie.
        if response.headers[.contentType]?.hasPrefix("text/html") == true {
            let fields: [HTTPFields.Element]
            switch context.language {
            case .en: fields = Self.englishFields
            case .es: fields = Self.spanishFields
            }
            for field in fields { response.headers[fields: field.name] = [field] }
        }
        return response
    }

    // Vary and Content-Language, built (and their values checked) once per language.
    private static let englishFields = fields(.en)
    private static let spanishFields = fields(.es)

    private static func fields(_ language: Language) -> [HTTPFields.Element] {
        [HTTPFields.Element(name: .vary, value: "Accept-Language, Cookie"), HTTPFields.Element(name: .contentLanguage, value: language.rawValue)]
    }
}

/// Dates, numbers and ages in a language.
enum Localized {
    /// "Oct 21, 2025" / "21 oct 2025" for an ISO date ("2025-10-21" or a full timestamp); the input
    /// unchanged when it is not a date.
    static func date(_ iso: String, language: Language) -> String {
        guard let date = parseDate(iso) else { return iso }
        return date.formatted(Date.FormatStyle(date: .abbreviated, time: .omitted, locale: language.locale,
                                               timeZone: TimeZone(identifier: "UTC")!))
    }

    /// A whole number with the language's grouping ("1,234" / "1234" or "12.345").
    static func number(_ value: Int, language: Language) -> String {
        value.formatted(.number.locale(language.locale))
    }

    /// "3 h ago" / "hace 3 h".
    static func age(_ seconds: TimeInterval, language: Language) -> String {
        Age(seconds).compact.map(language.strings.ago) ?? language.strings.justNow
    }

    /// `sentence` ("Updated {age}") with the age of `date` at `now` as `<time class="ago" datetime>`, which app.js says
    /// again as time passes: a page left open, or kept on the device and opened offline a day later, does not go on
    /// saying "just now".
    static func ageSentence(_ sentence: (String) -> String, since date: Date, now: Date, language: Language) -> [HTML] {
        let age = Self.age(now.timeIntervalSince(date), language: language)
        let marker = "\u{1}"
        let parts = sentence(marker).components(separatedBy: marker)
        guard parts.count == 2 else { return [.text(sentence(age))] }
        let time = HTML.element("time", [.class("ago"), .attribute("datetime", date.ISO8601Format())], [.text(age)])
        return [.text(parts[0]), time, .text(parts[1])]
    }

    private static func parseDate(_ text: String) -> Date? {
        let day = String(text.prefix(10))
        let parts = day.split(separator: "-")
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let dayOfMonth = Int(parts[2]),
              (1...12).contains(month), (1...31).contains(dayOfMonth) else { return nil }
        var components = DateComponents()
        components.year = year
        components.month = month
        components.day = dayOfMonth
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: components)
    }
}
