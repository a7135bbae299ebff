import Foundation
import Hummingbird
import KioskApp
import KioskCore
import KioskDebugger
import KioskWeb

// The console's queries and forms, decoded from their URL-encoded text by `FormInput` (KioskWeb).

/// The debugger's list filter: `?q=&source=&host=&status=&method=&decision=&min_ms=&before=&limit=`; anything
/// unknown or malformed is a 400.
/// What is wrong with a console list's address (its query typed or pasted by hand: the form's fields allow none of it).
enum ListQueryProblem: Sendable {
    case textTooLong(Int), noSuchSource(String), notAHost(String), badStatus, badMethod, badDecision, badMinimum, badBefore, badLimit
    case filterTooLong(Int)
}

struct DebugFilterQuery: Decodable {
    static let names: Set<String> = ["filter", "q", "source", "host", "status", "method", "decision", "min_ms", "before", "limit",
                                     "shown_source", "shown_host", "shown_status", "shown_decision"]
    /// The longest filter text accepted.
    static let maximumFilterLength = 500

    var text: String?
    var source: SourceID?
    /// A host as the filter language's `host:` takes it (`api.example.com`, `127.0.0.1:8080`): the apps' hosts in a proxy.
    var host: String?
    /// "2xx" ... "5xx", or "error".
    var status: String?
    var method: String?
    var decision: CacheDecision?
    var minMilliseconds: Double?
    var before: Int64?
    var limit: Int?
    /// `filter`: the filter language as typed (RequestFilter+Language.swift).
    var filterText: String?
    /// Why `filterText` does not parse; the console shows it where the mistake is, the JSON route answers 400.
    var syntaxError: FilterSyntaxError?
    /// `filterText` parsed.
    private var parsed: RequestFilter?
    /// A key given both in `filterText` and as its own parameter: the console's menu stands over the box's term, a script
    /// of the JSON routes is told (a 400) rather than have one of the two dropped without a word.
    private(set) var doubledKey: (key: FilterKey, filter: String)?

    /// No filter.
    init() {}

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        try form.refuseUnknownNames(Self.names)
        if let text = try form.text("q")?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
            guard text.count <= 200 else { throw WebError.consoleBadRequest { $0.listQueryProblem(.textTooLong(200)) } }
            self.text = text
        }
        let sourceName = try form.text("source") ?? ""
        source = try form.choice(SourceID.self, "source", refusal: .consoleBadRequest { $0.listQueryProblem(.noSuchSource(String(sourceName.prefix(40)))) })
        if let host = try form.text("host")?.trimmingCharacters(in: .whitespaces), !host.isEmpty {
            // The filter language's own check of a host, so the field and `host:` accept the same names.
            guard !host.contains(where: { $0 == "," || $0 == "\"" || $0.isWhitespace }), let parsed = try? RequestFilter(parsing: "host:" + host),
                  parsed.hosts.values.count == 1, !parsed.hosts.isNegated else {
                throw WebError.consoleBadRequest { $0.listQueryProblem(.notAHost(String(host.prefix(60)))) }
            }
            self.host = parsed.hosts.values[0]
        }
        if let status = try form.text("status"), !status.isEmpty {
            guard StatusClass(status) != nil else { throw WebError.consoleBadRequest { $0.listQueryProblem(.badStatus) } }
            self.status = status
        }
        if let method = try form.text("method"), !method.isEmpty {
            guard method.count <= 10, method.allSatisfy(\.isLetter) else { throw WebError.consoleBadRequest { $0.listQueryProblem(.badMethod) } }
            self.method = method.uppercased()
        }
        decision = try form.choice(CacheDecision.self, "decision", refusal: .consoleBadRequest { $0.listQueryProblem(.badDecision) })
        // A menu that only showed the box's term (`menuStatus`), sent back as it was shown: the box's term stands, edited or
        // not (a menu changed from what it showed is the reader's choice, and stands over the box's term).
        if let shown = try form.text("shown_source"), shown == source?.rawValue { source = nil }
        if let shown = try form.text("shown_host"), shown == host { host = nil }
        if let shown = try form.text("shown_status"), shown == status { status = nil }
        if let shown = try form.text("shown_decision"), shown == decision?.rawValue { decision = nil }
        let minimum = WebError.consoleBadRequest { $0.listQueryProblem(.badMinimum) }
        if let milliseconds = try form.value(Double.self, "min_ms", refusal: minimum) {
            guard milliseconds >= 0, milliseconds < 86_400_000 else { throw minimum }
            minMilliseconds = milliseconds
        }
        let badBefore = WebError.consoleBadRequest { $0.listQueryProblem(.badBefore) }
        before = try form.value(Int64.self, "before", refusal: badBefore)
        guard (before ?? 1) > 0 else { throw badBefore }
        let badLimit = WebError.consoleBadRequest { $0.listQueryProblem(.badLimit) }
        limit = try form.value(Int.self, "limit", refusal: badLimit)
        guard (1...1000).contains(limit ?? 1) else { throw badLimit }
        if let raw = try form.text("filter")?.trimmingCharacters(in: .whitespaces), !raw.isEmpty {
            guard raw.count <= Self.maximumFilterLength else {
                throw WebError.consoleBadRequest { $0.listQueryProblem(.filterTooLong(Self.maximumFilterLength)) }
            }
            filterText = raw
            doubledKey = (try? RequestFilter(parsing: raw)).flatMap(fields.sharedKey(with:)).map { ($0, raw) }
            do {
                let (text, parsed) = try Self.menusStand(raw, chosen: fields)
                filterText = text.isEmpty ? nil : text
                self.parsed = text.isEmpty ? nil : parsed
            } catch let error as FilterSyntaxError {
                syntaxError = error
            }
        }
    }

    /// The filter text `raw` parsed, without the terms of a key a menu chose too (`chosen`): the menu's choice stands
    /// (the script takes the box's terms out as the menu is chosen: `debug.js`), and the box keeps the rest.
    private static func menusStand(_ raw: String, chosen: RequestFilter) throws -> (text: String, parsed: RequestFilter) {
        var text = raw
        var parsed = try RequestFilter(parsing: text)
        while let key = chosen.sharedKey(with: parsed) {
            let rest = RequestFilter.removingTerms(of: key, from: text)
            guard rest != text else { break }  // (no term of the key to take out: the text's criterion is added over the menu's)
            text = rest
            parsed = try RequestFilter(parsing: text)
        }
        return (text, parsed)
    }

    /// The separate fields' filter, before the filter text is added.
    private var fields: RequestFilter {
        var fields = RequestFilter(text: text, source: source, statusClass: status.flatMap(StatusClass.init), method: method,
                                   decision: decision, minimumDuration: minMilliseconds.map { $0 / 1000 }, beforeID: before,
                                   limit: limit ?? 100)
        fields.hosts = FilterCriterion(host.map { [$0] } ?? [])
        return fields
    }

    /// The request log's filter (100 records unless a limit is given): the fields and the filter text.
    var filter: RequestFilter { parsed.map(fields.adding) ?? fields }

    // What each menu shows: its own choice, else the one value the box's text gives its key (`status:2xx` shows in the
    // Status menu, which said "any" beside it). Choosing another takes the box's term out (`menusStand`).
    /// The Source menu's value.
    var menuSource: String? { source?.rawValue ?? Self.single(parsed?.sources)?.rawValue }
    /// The Host menu's value.
    var menuHost: String? { host ?? Self.single(parsed?.hosts) }
    /// The Status menu's value: a class (`2xx`, `error`, `store`).
    var menuStatus: String? {
        status ?? Self.single(parsed?.statuses).flatMap { if case .statusClass(let statusClass) = $0 { statusClass.description } else { nil } }
    }
    /// The Cache decision menu's value: one decision.
    var menuDecision: String? {
        decision?.rawValue ?? Self.single(parsed?.cache).flatMap { if case .decision(let decision) = $0 { decision.rawValue } else { nil } }
    }

    /// The one value of a criterion that is not negated.
    private static func single<Value>(_ criterion: FilterCriterion<Value>?) -> Value? {
        guard let criterion, !criterion.isNegated, criterion.values.count == 1 else { return nil }
        return criterion.values[0]
    }

    /// `min_ms` as it is shown in the filter form: whole numbers without a decimal point.
    var minMillisecondsText: String {
        guard let minMilliseconds else { return "" }
        return minMilliseconds.rounded() == minMilliseconds && minMilliseconds < 1e15 ? String(Int(minMilliseconds)) : String(minMilliseconds)
    }

    /// The same filter as a query string ("" when there is none), for links that keep it.
    var queryString: QueryString {
        var query = QueryString()
        query.set("filter", filterText)
        query.set("q", text)
        query.set("source", source?.rawValue)
        query.set("host", host)
        query.set("status", status)
        query.set("method", method)
        query.set("decision", decision?.rawValue)
        query.set("min_ms", minMilliseconds == nil ? nil : minMillisecondsText)
        query.set("before", before.map(String.init))
        query.set("limit", limit.map(String.init))
        return query
    }
}

/// `POST /debug/recording`: `record=on` or `off`.
struct RecordingForm: Decodable {
    var record: Bool

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        switch try form.text("record") {
        case "on": record = true
        case "off": record = false
        default: throw WebError.badRequest("record must be on or off.")
        }
    }
}

/// `POST /debug/proxy/cache`: one of `mode=fallback|http|off`, `offline=on|off`, `clear=` (a host; empty for all), or
/// `remove=` (an answer's id).
struct ProxyCacheForm: Decodable {
    enum Change: Equatable {
        case mode(ProxyCacheMode)
        case offline(Bool)
        case clear(host: String?)
        case remove(Int64)
    }

    var change: Change

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        if let mode = try form.text("mode") {
            guard let parsed = ProxyCacheMode(rawValue: mode) else { throw WebError.consoleBadRequest { $0.proxyCacheFormUnknown } }
            change = .mode(parsed)
        } else if let offline = try form.text("offline") {
            switch offline {
            case "on": change = .offline(true)
            case "off": change = .offline(false)
            default: throw WebError.consoleBadRequest { $0.proxyCacheFormUnknown }
            }
        } else if let host = try form.text("clear") {
            change = .clear(host: host.isEmpty ? nil : host)
        } else if let id = try form.text("remove") {
            guard let id = Int64(id), id > 0 else { throw WebError.consoleBadRequest { $0.proxyCacheFormUnknown } }
            change = .remove(id)
        } else {
            throw WebError.consoleBadRequest { $0.proxyCacheFormUnknown }
        }
    }
}

/// `PUT /debug/api/proxy/cache`: `{"mode": "fallback"|"http"|"off", "offline": true|false}`, either or both.
struct ProxyCacheSwitch: Decodable {
    var mode: ProxyCacheMode?
    var offline: Bool?
}

/// `GET /debug/api/proxy/cache`: how the proxy cache answers and what it holds per host.
struct ProxyCacheJSON: Encodable {
    var mode: ProxyCacheMode
    var offline: Bool
    var hosts: [ProxyCacheHostStats]
}

/// `POST /debug/breakpoints/{endpoint}`: `request=`, `response=`, `error=`, each `pause` or `ignore`.
struct BreakpointForm: Decodable {
    var setting: BreakpointSetting

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        func mode(_ name: String) throws -> BreakpointMode {
            try form.requiredChoice(BreakpointMode.self, name, invalid: "\(name) must be pause or ignore.")
        }
        setting = BreakpointSetting(request: try mode("request"), response: try mode("response"), error: try mode("error"))
    }
}

/// `POST /debug/paused/{id}`: the console's decision on a paused exchange.
struct PauseDecisionForm: Decodable {
    enum Action: String { case `continue`, abort, edit }

    var action: Action
    /// "name=value" lines (request phase).
    var query: String
    /// "Name: value" lines: the request's (request phase) or the answer's (response and error phases; nil: its own).
    var headers: String?
    /// The request's method and percent-encoded path (request phase; nil: its own).
    var method: String?
    var path: String?
    /// The response body to answer with (response and error phases).
    var body: String?
    /// The status to answer with, as typed: a bad one is shown again in the editor (422), not refused as a 400.
    var status: String?
    /// "Keep returning this": the edit also becomes a rewrite rule.
    var keep = false

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        action = try form.requiredChoice(Action.self, "action", invalid: "The action must be continue, abort or edit.")
        query = try form.text("query") ?? ""
        headers = try form.text("headers")?.replacingOccurrences(of: "\r\n", with: "\n")
        method = try form.text("method")?.trimmingCharacters(in: .whitespaces)
        path = try form.text("path")?.trimmingCharacters(in: .whitespaces)
        // A browser sends a textarea's line breaks as CR LF whatever they were (the HTML form submission rules): the body
        // goes to the app with the line feeds it was shown with.
        body = try form.text("body")?.replacingOccurrences(of: "\r\n", with: "\n")
        status = try form.text("status")
        keep = try form.flag("keep")
    }
}

/// `POST /debug/login`: `token=`.
struct DebugLoginForm: Decodable {
    var token: String?
    /// The console page the token was asked on, to go back to.
    var returnPath: String?

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        token = try form.text("token")
        returnPath = try form.text("return")
    }
}

/// `POST /debug/mocks/{id}`: a mock rule's answer as the form holds it, each field kept as typed, so that one not saved is
/// shown again with its reason and nothing typed is lost.
struct MockForm: Decodable, Sendable {
    static let names: Set<String> = ["csrf", "status", "headers", "body", "version"]

    var status: String
    /// "Name: value" lines.
    var headers: String
    /// The body as text; nil where the form has none (a body that is not text, which stays as it is).
    var body: String?
    /// The answer's `MockRule.answerVersion` when the form was shown, for a save to tell a change made since.
    var version: String?

    /// The form showing `rule`'s answer, a JSON body laid out.
    init(_ rule: MockRule) {
        version = rule.answerVersion
        status = String(rule.status)
        headers = rule.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
        body = Self.text(of: rule.body).map(DebugPages.editable)
    }

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        try form.refuseUnknownNames(Self.names)
        status = try form.text("status") ?? ""
        headers = try form.text("headers") ?? ""
        // A browser sends a textarea's line breaks as CR LF whatever they were (the HTML form submission rules): the body
        // is kept with the line feeds it was shown with.
        body = try form.text("body")?.replacingOccurrences(of: "\r\n", with: "\n")
        version = try form.text("version")
    }

    /// A body as the form can show it: UTF-8 text without control characters but tab and line breaks (which a form
    /// could not send back); nil for any other.
    static func text(of body: Data) -> String? {
        guard let text = String(data: body, encoding: .utf8),
              !text.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" && $0 != "\n" && $0 != "\r" || $0.value == 0x7F })
        else { return nil }
        return text
    }

    /// The body to keep for a rule whose body was `stored`: that one where the form had no body or sent it back as shown
    /// (its bytes and layout kept), else the text typed — a JSON answer stored on one line kept on one line.
    func body(replacing stored: Data) -> Data {
        guard let body else { return stored }
        let original = Self.text(of: stored)
        // Compared as the form sends text back (its line breaks as LF): a body stored with CR LF, sent back untouched, stays.
        guard body != original.map({ DebugPages.editable($0).replacingOccurrences(of: "\r\n", with: "\n") }) else { return stored }
        let typed = Data(body.utf8)
        if let original, !original.contains("\n"), body.contains("\n"), let edited = try? OrderedJSON.parse(typed) {
            return Data(edited.compactBytes)
        }
        return typed
    }
}
