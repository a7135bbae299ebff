import Foundation
import Hummingbird
import KioskApp
import KioskCore
import KioskDebugger
import KioskWeb

// The rewrite rules in the console (`/debug/rules`, its forms) and in JSON (`/debug/api/rules`).
extension DebugController {
    func registerRules(on debug: RouterGroup<WebRequestContext>) {
        debug.on(.rules) { _, context in
            Pages.response(DebugPages.rules(try kiosk.debugger.rules.all(), context: context.view))
        }
        // The form, empty or filled in from a logged request ("Make a rule").
        debug.on(.newRule) { request, context in
            let query = try FormInput.decode(NewRuleQuery.self, from: request.uri.query)
            var form = RuleForm()
            if let id = query.request {
                guard let record = try kiosk.debugger.record(id: id) else {
                    throw WebError.consoleNotFound { $0.noSuchRequest(id) }
                }
                form = RuleForm(kiosk.debugger.ruleDraft(from: record), fromRequest: id)
            }
            return Pages.response(DebugPages.ruleForm(form, id: nil, endpoints: endpointNames(), error: nil, context: context.view))
        }
        debug.on(.saveNewRule) { request, context in
            let form = try await CSRFProtection.verifiedForm(request, maximumBytes: Self.maximumEditBytes, allowsLineBreaks: true)
            return try save(try form.decode(RuleForm.self), id: nil, context: context.view)
        }
        debug.on(.rule) { _, context in
            let id = try ruleID(try context.parameters.require("id"))
            let rule = try existingRule(id)
            return Pages.response(DebugPages.ruleForm(RuleForm(rule), id: id, endpoints: endpointNames(), error: nil, context: context.view))
        }
        debug.on(.saveRule) { request, context in
            let form = try await CSRFProtection.verifiedForm(request, maximumBytes: Self.maximumEditBytes, allowsLineBreaks: true)
            let id = try ruleID(try context.parameters.require("id"))
            _ = try existingRule(id)
            return try save(try form.decode(RuleForm.self), id: id, context: context.view)
        }
        debug.on(.ruleAction) { request, context in
            _ = try await CSRFProtection.verifiedForm(request)
            let id = try ruleID(try context.parameters.require("id"))
            let rules = kiosk.debugger.rules
            do {
                switch try context.parameters.require("action") {
                case "enable": try rules.setEnabled(true, id: id)
                case "disable": try rules.setEnabled(false, id: id)
                case "reset-hits": try rules.resetHits(id: id)
                case "delete":
                    try rules.remove(id: id)
                    return WebController.seeOther(ConsoleRoute.rules.path)
                default: throw WebError.consoleNotFound { $0.noSuchRuleAction }
                }
            } catch KioskError.notFound {
                throw WebError.consoleNotFound { $0.noSuchRule(id) }
            }
            return WebController.seeOther(ConsoleRoute.rules.path(anchor: "rule-\(id)"))
        }

        debug.on(.apiRules) { _, _ in try JSONResponse.ok(try kiosk.debugger.rules.all().map(RuleJSON.init)) }
        debug.on(.apiRule) { _, context in
            try JSONResponse.ok(RuleJSON(try existingRule(try ruleID(try context.parameters.require("id")))))
        }
        debug.on(.apiAddRule) { request, _ in
            let rule = try RewriteRule(json: try await jsonBody(request), origin: "added through the JSON API")
            var response = try JSONResponse.ok(RuleJSON(try kiosk.debugger.rules.add(rule)))
            response.status = .created
            return response
        }
        debug.on(.apiReplaceRule) { request, context in
            let id = try ruleID(try context.parameters.require("id"))
            let rule = try RewriteRule(json: try await jsonBody(request), origin: "")
            return try JSONResponse.ok(RuleJSON(try kiosk.debugger.rules.update(id: id, to: rule)))
        }
        debug.on(.apiDeleteRule) { request, context in
            try CSRFProtection.refuseOtherOrigins(request)
            try kiosk.debugger.rules.remove(id: try ruleID(try context.parameters.require("id")))
            return Response(status: .noContent)
        }
    }

    /// Saves the form as a new rule or over rule `id`; a rule that cannot be kept is shown again with why (422).
    private func save(_ form: RuleForm, id: Int?, context: ViewContext) throws -> Response {
        do {
            let rule = try form.rule(context.words)
            // Said in the page's language; the store checks the same again, in English, for the CLI and the JSON API.
            if let problem = rule.ruleProblem(endpoints: Set(endpointNames())) {
                return Pages.response(DebugPages.ruleForm(form, id: id, endpoints: endpointNames(), error: context.words.ruleProblem(problem),
                                                          context: context), status: .unprocessableContent)
            }
            let saved = try id.map { id in
                try kiosk.debugger.rules.update(id: id, to: rule, unchangedSince: form.version.map(Date.init(timeIntervalSinceReferenceDate:)))
            } ?? kiosk.debugger.rules.add(rule)
            return WebController.seeOther(ConsoleRoute.rules.path(anchor: "rule-\(saved.id)"))
        } catch let changed as RewriteRules.RuleChanged {
            // Changed elsewhere since the form was shown: the edit comes back as typed, saying so; saved again, it replaces
            // that change knowingly.
            var form = form
            form.version = changed.current.updatedAt.timeIntervalSinceReferenceDate
            return Pages.response(DebugPages.ruleForm(form, id: id, endpoints: endpointNames(), error: context.words.ruleChangedElsewhere,
                                                      context: context), status: .conflict)
        } catch let problem as FieldsProblem {
            return Pages.response(DebugPages.ruleForm(form, id: id, endpoints: endpointNames(), error: problem.sentence, context: context),
                                  status: .unprocessableContent)
        }
    }

    /// A JSON write's body. Scripts send JSON; a browser page of another site cannot (the content type
    /// needs a preflight Kiosk never grants, and its Origin is refused), so no CSRF token is needed.
    func jsonBody(_ request: Request) async throws -> Data {
        try CSRFProtection.refuseOtherOrigins(request)
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
            throw WebError(status: .unsupportedMediaType, title: "Unsupported media type",
                           message: "Send the body as JSON, with Content-Type: application/json.", retryPath: nil)
        }
        var request = request
        let buffer = try await request.collectBody(upTo: Self.maximumEditBytes)
        return Data(buffer.readableBytesView)
    }

    private func ruleID(_ raw: String) throws -> Int {
        guard let id = Int(raw), id > 0 else { throw WebError.consoleBadRequest { $0.badRuleID } }
        return id
    }

    private func existingRule(_ id: Int) throws -> RewriteRule {
        do {
            return try kiosk.debugger.rules.rule(id: id)
        } catch KioskError.notFound {
            throw WebError.consoleNotFound { $0.noSuchRule(id) }
        }
    }

    private func endpointNames() -> [String] { kiosk.debugger.endpoints.map(\.name) }
}
