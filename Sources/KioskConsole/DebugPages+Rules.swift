import Foundation
import KioskCore
import KioskDebugger
import KioskWeb

// The rewrite rules' pages (`/debug/rules`, the rule form) and what a request's page says about the mocks,
// rules and breakpoints that touched it.
extension DebugPages {
    /// `/debug/rules`: the rules in the order they apply, each with its switches.
    static func rules(_ rules: [RewriteRule], context: ViewContext) -> HTML {
        let w = context.words
        var content: [HTML] = [
            backToRequests(w),
            E.element("h1", [], [.text(w.rewriteRules)]),
            E.element("p", [.class("status")], [
                .text(w.rulesIntro), .text(w.ruleOrder), .text(w.rulesHowTo),
                E.element("code", [], ["kiosk rule add"]), ".",
            ]),
            E.element("p", [], [E.element("a", [Attribute.localHref(ConsoleRoute.newRule.path), .class("button")], [.text(w.newRule)]), " · ",
                                E.element("a", [Attribute.localHref(ConsoleRoute.apiRules.path)], ["JSON"])]),
        ]
        if rules.isEmpty {
            content.append(E.element("p", [.class("empty")], [.text(w.noRewriteRules)]))
        } else {
            let rows = rules.map { rule in
                return E.element("tr", [.attribute("id", "rule-\(rule.id)"), .attribute("data-id", String(rule.id))], [
                    E.element("td", [], [.text("#\(rule.id)")]),
                    // (Labelled on a phone, whose rows show no column heads.)
                    E.element("td", [.attribute("data-label", w.state)], [.text(rule.isEnabled ? w.on : w.off)]),
                    E.element("td", [.class("rule-name")], [E.element("a", [Attribute.localHref(ConsoleRoute.rule(rule.id).path)], [.text(w.ruleName(rule))]),
                                         E.element("span", [.class("subtitle")], [.text(DebugPages.origin(rule.origin, w))])]),
                    // A pattern of thousands of characters (an archive's long URL) is cut here; its rule's page has it whole.
                    E.element("td", [.class("url")], [.text(rule.match.summary.count > 300 ? rule.match.summary.prefix(300) + "…" : rule.match.summary)]),
                    E.element("td", [.class("does")], [.text(w.ruleActions(rule.actions))]),
                    E.element("td", [.class("num"), .attribute("data-label", w.hits)], [.text(String(rule.hits))]),
                    E.element("td", [.class("actions")], [
                        Pages.postForm(action: ConsoleRoute.ruleAction(rule.id, rule.isEnabled ? .disable : .enable).path, fields: [],
                                       label: rule.isEnabled ? w.disableRule(rule.id) : w.enableRule(rule.id),
                                       button: .text(rule.isEnabled ? w.disable : w.enable), className: "move",
                                       // Its Disable and its Enable are one control to the script: the focus stays on it as it flips.
                                       attributes: [.attribute("data-control", "rule-switch-\(rule.id)")], context: context),
                        Pages.postForm(action: ConsoleRoute.ruleAction(rule.id, .resetHits).path, fields: [], label: w.resetHitsLabel(rule.id),
                                       button: .text(w.resetHits), className: "move", context: context),
                        Pages.postForm(action: ConsoleRoute.ruleAction(rule.id, .delete).path, fields: [], label: w.deleteRule(rule.id),
                                       button: .text(w.delete), className: "delete",
                                       attributes: [.attribute("data-confirm", w.deleteRuleConfirm(rule.id))], context: context),
                    ]),
                ])
            }
            content.append(E.element("div", [.class("table-scroll"), .attribute("tabindex", "0"), .attribute("aria-label", w.rewriteRules)], [
                E.element("table", [.class("requests rules")], [
                    E.element("thead", [], [E.element("tr", [], ["#", w.state, w.name, w.matches, w.does, w.hits, w.actions].map {
                        E.element("th", [.attribute("scope", "col")], [.text($0)])
                    })]),
                    E.element("tbody", [], rows),
                ]),
            ]))
        }
        return DebugPages.page(context, title: w.rewriteRules, [E.element("div", [.attribute("id", "results")], content)])
    }

    /// The form that makes (`id` nil) or edits a rule; `error` is why the last attempt was not saved, shown
    /// above the fields as they were typed.
    static func ruleForm(_ form: RuleForm, id: Int?, endpoints: [String], error: String?, context: ViewContext) -> HTML {
        let w = context.words
        let title = id.map(w.editRuleTitle) ?? w.newRule
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
        var endpointOptions = [("", w.anyEndpoint)] + endpoints.map { ($0, $0) }
        if !form.endpoint.isEmpty, !endpoints.contains(form.endpoint) { endpointOptions.append((form.endpoint, form.endpoint)) }
        let methods = ["*", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
        var methodOptions = methods.map { ($0, $0 == "*" ? w.anyMethod : $0) }
        if !methods.contains(form.method) { methodOptions.append((form.method, form.method)) }
        var fields: [HTML] = [Pages.csrfField(context)]
        if let request = form.fromRequest {
            fields.append(E.void("input", [.attribute("type", "hidden"), .attribute("name", "from_request"), .attribute("value", String(request))]))
        }
        if let version = form.version, id != nil {
            fields.append(E.void("input", [.attribute("type", "hidden"), .attribute("name", "version"), .attribute("value", String(version))]))
        }
        fields += [
            input("name", w.name, form.name, hint: w.nameHint),
            E.element("label", [.class("inline")], [
                E.void("input", [.attribute("type", "checkbox"), .attribute("name", "enabled"), .attribute("value", "1"),
                                 form.enabled ? .flag("checked") : nil]),
                .text(w.enabled),
            ]),
            E.element("fieldset", [], [
                E.element("legend", [], [.text(w.whichRequests)]),
                select("endpoint", w.endpoint, form.endpoint, endpointOptions),
                input("url_pattern", w.urlPattern, form.urlPattern, hint: w.urlPatternHint),
                select("method", w.method, form.method, methodOptions),
            ]),
            E.element("fieldset", [], [
                E.element("legend", [], [.text(w.whatItDoes)]),
                input("status", w.status, form.status, type: "number", hint: w.statusHint,
                      extra: [.attribute("min", "100"), .attribute("max", "599")]),
                textarea("set_headers", w.headersToSet, form.setHeaders, rows: 3, hint: w.headersToSetHint),
                textarea("remove_headers", w.headersToRemove, form.removeHeaders, rows: 2, hint: w.headersToRemoveHint),
                textarea("patch", w.patch, form.patch, rows: 10, hint: w.patchHint),
                input("latency_ms", w.latency, form.latency, type: "number", hint: w.latencyHint,
                      extra: [.attribute("min", "0"), .attribute("max", String(RewriteRule.maximumLatencyMilliseconds))]),
                select("fail", w.failRequest, form.fail, [("", w.noAnswer)] + RuleFailure.allCases.map { ($0.rawValue, w.failure($0)) }),
            ]),
            E.element("p", [.class("actions")], [E.element("button", [.attribute("type", "submit")], [.text(id == nil ? w.createRule : w.saveRule)])]),
        ]
        var content: [HTML] = [
            E.element("p", [.class("back")], [E.element("a", [Attribute.localHref(ConsoleRoute.rules.path)], [.text(w.backToRules)])]),
            E.element("h1", [], [.text(title)]),
        ]
        if let error {
            content.append(E.element("p", [.class("banner error"), .attribute("role", "alert")], [.text(w.notSaved(error))]))
        }
        content.append(E.element("form", [.class("pause-editor rule-editor"), .attribute("method", "post"),
                                          .attribute("action", (id.map(ConsoleRoute.rule) ?? .rules).path)], fields))
        content.append(E.element("p", [.class("status")], [.text(w.ruleOrder)]))
        return DebugPages.page(context, title: title, [E.element("article", [.class("detail debug")], content)])
    }

    /// A logged request's "Make a rule" button: the rule form, filled in from the exchange.
    static func makeRuleButton(_ record: RequestRecord, _ w: ConsoleWords) -> HTML {
        E.element("form", [.class("mock"), .attribute("method", "get"), .attribute("action", ConsoleRoute.newRule.path)], [
            E.void("input", [.attribute("type", "hidden"), .attribute("name", "request"), .attribute("value", String(record.id))]),
            E.element("button", [.attribute("type", "submit"), .attribute("aria-label", w.makeRuleLabel)], [.text(w.makeRule)]),
        ])
    }

    /// What acted on the exchange: each mock, rule and breakpoint, linked, with what it did or why it did not.
    static func touchedBy(_ record: RequestRecord, _ w: ConsoleWords) -> HTML {
        guard !record.touchedBy.isEmpty else { return .empty }
        let items = record.touchedBy.map { touch -> HTML in
            let link: (path: String, label: String)
            switch touch.kind {
            case .rule: link = (ConsoleRoute.rule(touch.id).path, w.ruleTouch(touch.id, touch.name))
            case .mock: link = (ConsoleRoute.mocks.path, w.mockTouch(touch.id, touch.name))
            case .breakpoint: link = (ConsoleRoute.endpoints.path(anchor: touch.name), w.breakpointTouch(touch.name, touch.id))
            case .resend: link = (ConsoleRoute.request(Int64(touch.id)).path, w.requestTitle(Int64(touch.id)))
            case .tunnel: link = (ConsoleRoute.endpoints.path(anchor: touch.name), w.tunnelTouch(touch.name))
            case .stream: link = (ConsoleRoute.endpoints.path(anchor: touch.name), w.streamTouch)
            case .insecure: link = (ConsoleRoute.proxy.path, w.insecureTouch)
            case .uncleanEnd: link = (ConsoleRoute.endpoints.path(anchor: touch.name), w.uncleanEndTouch)
            case .appClosed: link = (ConsoleRoute.endpoints.path(anchor: touch.name), w.appClosedTouch)
            case .bodyCut: link = (ConsoleRoute.endpoints.path(anchor: touch.name), w.bodyCutTouch)
            }
            // In the page's language where the touch says it as data; else as it was written (in English).
            let said = touch.phrase.map(w.touchPhrase) ?? touch.detail
            return E.element("li", [.class(touch.applied ? "applied" : "skipped")], [
                E.element("a", [Attribute.localHref(link.path)], [.text(link.label)]),
                touch.applied ? .text(w.applied + said)
                    : E.group([" — ", E.element("strong", [], [.text(w.didNotApply)]), .text(": " + said)]),
            ])
        }
        return E.element("section", [.class("touched-by")], [
            E.element("h2", [], [.text(w.touchedBy)]),
            E.element("ul", [], items),
        ])
    }
}
