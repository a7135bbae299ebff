import Foundation
import KioskCore
import KioskDebugger
import KioskWeb

/// `POST /debug/rules[/{id}]`: a rewrite rule as the form holds it. Every field is kept as typed, so a
/// rule that cannot be saved is shown again with its reason and nothing the user wrote is lost; the
/// conversion (`rule()`) says what is wrong in words.
struct RuleForm: Decodable, Sendable {
    static let names: Set<String> = ["csrf", "name", "enabled", "endpoint", "url_pattern", "method", "status", "set_headers",
                                     "remove_headers", "patch", "latency_ms", "fail", "from_request", "version"]

    var name = ""
    var enabled = true
    var endpoint = ""
    var urlPattern = ""
    var method = "*"
    var status = ""
    /// "Name: value" lines.
    var setHeaders = ""
    /// One name per line (or separated by commas).
    var removeHeaders = ""
    var patch = ""
    var latency = ""
    var fail = ""
    /// The logged request the rule was made from, when it was ("Make a rule" on a request's page).
    var fromRequest: Int64?
    /// The rule's `updatedAt` when the form was shown (seconds since 2001), for a save to tell a change made since.
    var version: Double?

    /// An empty form.
    init() {}

    /// The form showing `rule`.
    init(_ rule: RewriteRule, fromRequest: Int64? = nil) {
        name = rule.name
        enabled = rule.isEnabled
        endpoint = rule.match.endpoint ?? ""
        urlPattern = rule.match.urlPattern ?? ""
        method = rule.match.method
        status = rule.actions.status.map(String.init) ?? ""
        setHeaders = rule.actions.setHeaders.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
        removeHeaders = rule.actions.removeHeaders.joined(separator: "\n")
        patch = rule.actions.patch ?? ""
        latency = rule.actions.latencyMilliseconds.map(String.init) ?? ""
        fail = rule.actions.failure?.rawValue ?? ""
        self.fromRequest = fromRequest
        version = rule.updatedAt.timeIntervalSinceReferenceDate
    }

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        try form.refuseUnknownNames(Self.names)
        name = try form.text("name") ?? ""
        // An unchecked box sends nothing.
        enabled = try form.flag("enabled")
        endpoint = try form.text("endpoint") ?? ""
        urlPattern = try form.text("url_pattern") ?? ""
        method = try form.text("method") ?? "*"
        status = try form.text("status") ?? ""
        setHeaders = try form.text("set_headers") ?? ""
        removeHeaders = try form.text("remove_headers") ?? ""
        patch = try form.text("patch") ?? ""
        latency = try form.text("latency_ms") ?? ""
        fail = try form.text("fail") ?? ""
        fromRequest = try form.value(Int64.self, "from_request", invalid: "from_request must be a request id.")
        version = try form.value(Double.self, "version", invalid: "version must be a number.")
    }

    /// The rule the form describes, not yet checked by the rules (they say what else is wrong); throws, in `w`'s words,
    /// for a field that does not convert.
    func rule(_ w: ConsoleWords) throws(DebugController.FieldsProblem) -> RewriteRule {
        func trimmed(_ text: String) -> String? {
            let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
            return text.isEmpty ? nil : text
        }
        func number(_ text: String, _ sentence: String) throws(DebugController.FieldsProblem) -> Int? {
            guard let text = trimmed(text) else { return nil }
            guard let value = Int(text) else { throw DebugController.FieldsProblem(sentence: sentence) }
            return value
        }
        var failure: RuleFailure?
        if let name = trimmed(fail) {
            guard let known = RuleFailure(rawValue: name) else {
                throw DebugController.FieldsProblem(sentence: w.unknownFailure(RuleFailure.allCases.map(\.rawValue).joined(separator: ", ")))
            }
            failure = known
        }
        let headers = try DebugController.headerFields(setHeaders, w)
        let removed = removeHeaders.split(whereSeparator: { $0.isNewline || $0 == "," })
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return RewriteRule(
            name: name.trimmingCharacters(in: .whitespaces), isEnabled: enabled,
            match: RewriteRule.Match(endpoint: trimmed(endpoint), urlPattern: trimmed(urlPattern), method: trimmed(method) ?? "*"),
            actions: RewriteRule.Actions(
                status: try number(status, w.ruleProblem(.statusOutOfRange)), setHeaders: headers,
                removeHeaders: removed, patch: trimmed(patch),
                latencyMilliseconds: try number(latency, w.latencyNotANumber), failure: failure),
            origin: fromRequest.map { "from request #\($0)" } ?? "added in the console")
    }
}

/// `GET /debug/rules/new?request=`: the logged request a new rule starts from.
struct NewRuleQuery: Decodable {
    var request: Int64?

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        try form.refuseUnknownNames(["request"])
        request = try form.value(Int64.self, "request", invalid: "request must be a request id.")
        guard (request ?? 1) > 0 else { throw WebError.badRequest("request must be a request id.") }
    }
}
