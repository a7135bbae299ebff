import Foundation
import KioskCore
import KioskDebugger
import KioskWeb

// The rewrite rules' pages (`/debug/rules`, the rule form) and what a request's page says about the mocks,
// rules and breakpoints that touched it. English only, like the rest of the debugger.
extension DebugPages {
    /// Where in an exchange's life rules act, for the pages that explain it.
    static let ruleOrder = "A request passes the request breakpoint, then a mock answers it or the upstream does; then the "
        + "enabled rules that match rewrite that answer, in this list's order (a later rule sees the earlier one's result); "
        + "then secrets are scrubbed, the exchange is logged as the app receives it, and the response breakpoint may pause it. "
        + "A rule that fails requests fails them before anything is sent."

    /// `/debug/rules`: the rules in the order they apply, each with its switches.
    static func rules(_ rules: [RewriteRule], context: ViewContext) -> HTML {
        var content: [HTML] = [
            E.element("p", [.class("back")], [E.element("a", [Attribute.localHref(ConsoleRoute.requests.path)], ["‹ All requests"])]),
            E.element("h1", [], ["Rewrite rules"]),
            E.element("p", [.class("status")], [
                "Rules change answers without pausing: status, headers, a JSON Patch on the body, latency, or a failure. ",
                .text(ruleOrder), " Open a logged request and choose Make a rule, or use ",
                E.element("code", [], ["kiosk rule add"]), ".",
            ]),
            E.element("p", [], [E.element("a", [Attribute.localHref(ConsoleRoute.newRule.path), .class("button")], ["New rule"]), " · ",
                                E.element("a", [Attribute.localHref(ConsoleRoute.apiRules.path)], ["JSON"])]),
        ]
        if rules.isEmpty {
            content.append(E.element("p", [.class("empty")], ["No rewrite rules."]))
        } else {
            let rows = rules.map { rule in
                return E.element("tr", [.attribute("id", "rule-\(rule.id)"), .attribute("data-id", String(rule.id))], [
                    E.element("td", [], [.text("#\(rule.id)")]),
                    E.element("td", [], [.text(rule.isEnabled ? "on" : "off")]),
                    E.element("td", [], [E.element("a", [Attribute.localHref(ConsoleRoute.rule(rule.id).path)], [.text(rule.displayName)]),
                                         E.element("span", [.class("subtitle")], [.text(rule.origin)])]),
                    E.element("td", [.class("url")], [.text(rule.match.summary)]),
                    E.element("td", [], [.text(rule.actions.summary)]),
                    E.element("td", [.class("num")], [.text(String(rule.hits))]),
                    E.element("td", [], [
                        Pages.postForm(action: ConsoleRoute.ruleAction(rule.id, rule.isEnabled ? .disable : .enable).path, fields: [],
                                       label: "\(rule.isEnabled ? "Disable" : "Enable") rule \(rule.id)",
                                       button: rule.isEnabled ? "Disable" : "Enable", className: "move", context: context),
                        Pages.postForm(action: ConsoleRoute.ruleAction(rule.id, .resetHits).path, fields: [], label: "Reset the hit count of rule \(rule.id)",
                                       button: "Reset hits", className: "move", context: context),
                        Pages.postForm(action: ConsoleRoute.ruleAction(rule.id, .delete).path, fields: [], label: "Delete rule \(rule.id)", button: "Delete",
                                       className: "delete", context: context),
                    ]),
                ])
            }
            content.append(E.element("div", [.class("table-scroll"), .attribute("tabindex", "0"), .attribute("aria-label", "Rewrite rules")], [
                E.element("table", [.class("requests")], [
                    E.element("thead", [], [E.element("tr", [], ["#", "State", "Name", "Matches", "Does", "Hits", "Actions"].map {
                        E.element("th", [.attribute("scope", "col")], [.text($0)])
                    })]),
                    E.element("tbody", [], rows),
                ]),
            ]))
        }
        return DebugPages.page(context, title: "Rewrite rules", [E.element("div", [.attribute("id", "results")], content)])
    }

    /// The form that makes (`id` nil) or edits a rule; `error` is why the last attempt was not saved, shown
    /// above the fields as they were typed.
    static func ruleForm(_ form: RuleForm, id: Int?, endpoints: [String], error: String?, context: ViewContext) -> HTML {
        let title = id.map { "Edit rule #\($0)" } ?? "New rule"
        func input(_ name: StaticString, _ label: String, _ value: String, type: String = "text", hint: String? = nil,
                   extra: [Attribute?] = []) -> HTML {
            E.element("label", [], [.text(label), E.void("input", [.attribute("type", type), .attribute("name", "\(name)"),
                                                                   .attribute("value", value)] + extra),
                                    hint.map { E.element("span", [.class("subtitle")], [.text($0)]) } ?? .empty])
        }
        func textarea(_ name: StaticString, _ label: String, _ text: String, rows: Int, hint: String) -> HTML {
            E.element("label", [.class("editor")], [.text(label),
                E.element("textarea", [.attribute("name", "\(name)"), .attribute("rows", String(rows)), .attribute("spellcheck", "false")],
                          [.text(text)]),
                E.element("span", [.class("subtitle")], [.text(hint)])])
        }
        func select(_ name: StaticString, _ label: String, _ current: String, _ options: [(String, String)]) -> HTML {
            E.element("label", [], [.text(label), E.element("select", [.attribute("name", "\(name)")], options.map { value, text in
                E.element("option", [.attribute("value", value), value == current ? .flag("selected") : nil], [.text(text)])
            })])
        }
        var endpointOptions = [("", "any endpoint (match by URL)")] + endpoints.map { ($0, $0) }
        if !form.endpoint.isEmpty, !endpoints.contains(form.endpoint) { endpointOptions.append((form.endpoint, form.endpoint)) }
        let methods = ["*", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
        var methodOptions = methods.map { ($0, $0 == "*" ? "any method" : $0) }
        if !methods.contains(form.method) { methodOptions.append((form.method, form.method)) }
        var fields: [HTML] = [Pages.csrfField(context)]
        if let request = form.fromRequest {
            fields.append(E.void("input", [.attribute("type", "hidden"), .attribute("name", "from_request"), .attribute("value", String(request))]))
        }
        fields += [
            input("name", "Name", form.name, hint: "Optional: without one, the rule is called by what it does."),
            E.element("label", [.class("inline")], [
                E.void("input", [.attribute("type", "checkbox"), .attribute("name", "enabled"), .attribute("value", "1"),
                                 form.enabled ? .flag("checked") : nil]),
                "Enabled",
            ]),
            E.element("fieldset", [], [
                E.element("legend", [], ["Which requests"]),
                select("endpoint", "Endpoint", form.endpoint, endpointOptions),
                input("url_pattern", "URL pattern", form.urlPattern,
                      hint: "An exact URL (secret query items and their order ignored) or one with * wildcards; empty for any."),
                select("method", "Method", form.method, methodOptions),
            ]),
            E.element("fieldset", [], [
                E.element("legend", [], ["What it does"]),
                input("status", "Status", form.status, type: "number", hint: "Empty keeps the answer's status.",
                      extra: [.attribute("min", "100"), .attribute("max", "599")]),
                textarea("set_headers", "Headers to set", form.setHeaders, rows: 3,
                         hint: "“Name: value” per line; each replaces every header of its name."),
                textarea("remove_headers", "Headers to remove", form.removeHeaders, rows: 2, hint: "One name per line."),
                textarea("patch", "JSON Patch (RFC 6902) applied to the body", form.patch, rows: 10,
                         hint: #"For example [{"op": "replace", "path": "/results/0/name", "value": "Rule Rick"}]. "#
                             + "Operations add, remove, replace, move, copy and test; paths are JSON Pointers (\"\" is the whole body). "
                             + "When it cannot apply to an answer, the answer passes unchanged and its request's page says why."),
                input("latency_ms", "Latency (ms)", form.latency, type: "number", hint: "Added before the answer reaches the app.",
                      extra: [.attribute("min", "0"), .attribute("max", String(RewriteRule.maximumLatencyMilliseconds))]),
                select("fail", "Fail the request", form.fail,
                       [("", "no: answer")] + RuleFailure.allCases.map { ($0.rawValue, "yes: \($0.summary)") }),
            ]),
            E.element("p", [.class("actions")], [E.element("button", [.attribute("type", "submit")], [id == nil ? "Create the rule" : "Save the rule"])]),
        ]
        var content: [HTML] = [
            E.element("p", [.class("back")], [E.element("a", [Attribute.localHref(ConsoleRoute.rules.path)], ["‹ Rewrite rules"])]),
            E.element("h1", [], [.text(title)]),
        ]
        if let error {
            content.append(E.element("p", [.class("banner error"), .attribute("role", "alert")], [.text("Not saved: \(error)")]))
        }
        content.append(E.element("form", [.class("pause-editor rule-editor"), .attribute("method", "post"),
                                          .attribute("action", (id.map(ConsoleRoute.rule) ?? .rules).path)], fields))
        content.append(E.element("p", [.class("status")], [.text(ruleOrder)]))
        return DebugPages.page(context, title: title, [E.element("article", [.class("detail debug")], content)])
    }

    /// A logged request's "Make a rule" button: the rule form, filled in from the exchange.
    static func makeRuleButton(_ record: RequestRecord) -> HTML {
        E.element("form", [.class("mock"), .attribute("method", "get"), .attribute("action", ConsoleRoute.newRule.path)], [
            E.void("input", [.attribute("type", "hidden"), .attribute("name", "request"), .attribute("value", String(record.id))]),
            E.element("button", [.attribute("type", "submit"), .attribute("aria-label", "Make a rewrite rule from this request")],
                      ["Make a rule"]),
        ])
    }

    /// What acted on the exchange: each mock, rule and breakpoint, linked, with what it did or why it did not.
    static func touchedBy(_ record: RequestRecord) -> HTML {
        guard !record.touchedBy.isEmpty else { return .empty }
        let items = record.touchedBy.map { touch -> HTML in
            let link: (path: String, label: String)
            switch touch.kind {
            case .rule: link = (ConsoleRoute.rule(touch.id).path, "Rule #\(touch.id) “\(touch.name)”")
            case .mock: link = (ConsoleRoute.mocks.path, "Mock rule #\(touch.id) \(touch.name)")
            case .breakpoint: link = (ConsoleRoute.endpoints.path(anchor: touch.name), "Breakpoint on \(touch.name) (paused #\(touch.id))")
            case .resend: link = (ConsoleRoute.request(Int64(touch.id)).path, "Request #\(touch.id)")
            }
            return E.element("li", [.class(touch.applied ? "applied" : "skipped")], [
                E.element("a", [Attribute.localHref(link.path)], [.text(link.label)]),
                touch.applied ? .text(" — applied: " + touch.detail)
                    : E.group([" — ", E.element("strong", [], ["did not apply"]), .text(": " + touch.detail)]),
            ])
        }
        return E.element("section", [.class("touched-by")], [
            E.element("h2", [], ["Touched by"]),
            E.element("ul", [], items),
        ])
    }
}
