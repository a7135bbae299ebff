import Foundation
import KioskCore
import KioskDebugger
import KioskWeb

// The mock rules' pages: the list (`/debug/mocks`) and one rule's answer, to read and edit (`/debug/mocks/{id}`).
extension DebugPages {
    /// `/debug/mocks`: the rules in the order they are tried, each with its switches.
    static func mocks(_ rules: [MockRule], context: ViewContext) -> HTML {
        let w = context.words
        var content: [HTML] = [
            backToRequests(w),
            E.element("h1", [], [.text(w.mockRules)]),
            E.element("p", [.class("status")], [
                .text(w.mocksIntroBefore), E.element("code", [], ["kiosk har import"]), .text(w.mocksIntroAfter),
            ]),
        ]
        if rules.isEmpty {
            content.append(E.element("p", [.class("empty")], [.text(w.noMockRules)]))
        } else {
            let rows = rules.map { rule in
                return E.element("tr", [.attribute("id", "mock-\(rule.id)")], [
                    E.element("td", [], [.text("#\(rule.id)")]),
                    // (Labelled on a phone, whose rows show no column heads.)
                    E.element("td", [.attribute("data-label", w.state)], [.text(rule.isEnabled ? w.on : w.off)]),
                    E.element("td", [.class("num"), .attribute("data-label", w.status)], [.text(String(rule.status))]),
                    E.element("td", [.class("num"), .attribute("data-label", w.hits)], [.text(String(rule.hits))]),
                    // The rule's page shows its answer, to read and change.
                    E.element("td", [.class("url")], [E.element("a", [Attribute.localHref(ConsoleRoute.mock(rule.id).path)],
                                                                [.text("\(rule.method) \(rule.urlPattern)")]),
                                                      E.element("span", [.class("subtitle")], [.text(DebugPages.origin(rule.origin, w))])]),
                    E.element("td", [], [
                        Pages.postForm(action: ConsoleRoute.mockAction(rule.id, rule.isEnabled ? .disable : .enable).path, fields: [],
                                       label: rule.isEnabled ? w.disableRule(rule.id) : w.enableRule(rule.id),
                                       button: .text(rule.isEnabled ? w.disable : w.enable), className: "move",
                                       // Its Disable and its Enable are one control to the script: the focus stays on it as it flips.
                                       attributes: [.attribute("data-control", "mock-switch-\(rule.id)")], context: context),
                        Pages.postForm(action: ConsoleRoute.mockAction(rule.id, .delete).path, fields: [], label: w.deleteRule(rule.id),
                                       button: .text(w.delete), className: "delete",
                                       attributes: [.attribute("data-confirm", w.deleteRuleConfirm(rule.id))], context: context),
                    ]),
                ])
            }
            content.append(E.element("div", [.class("table-scroll"), .attribute("tabindex", "0"), .attribute("aria-label", w.mockRules)], [
                E.element("table", [.class("requests")], [
                    E.element("thead", [], [E.element("tr", [], ["#", w.state, w.status, w.hits, w.request, w.actions].map {
                        E.element("th", [.attribute("scope", "col")], [.text($0)])
                    })]),
                    E.element("tbody", [], rows),
                ]),
            ]))
        }
        return DebugPages.page(context, title: w.mockRules, [E.element("div", [.attribute("id", "results")], content)])
    }

    /// A mock rule's page: what it matches and where it came from, and its answer in a form — status, "Name: value" lines and
    /// the body (JSON laid out, and a tree in the browser) — or, for a body that is not text, the status and headers alone;
    /// `error` is why the last attempt was not saved, shown above the fields as they were typed.
    static func mockForm(_ rule: MockRule, _ form: MockForm, error: String?, context: ViewContext) -> HTML {
        let w = context.words
        let title = w.editMockTitle(rule.id)
        var answer: [HTML] = [
            E.element("legend", [], [.text(w.mockAnswer)]),
            E.element("label", [], [.text(w.status), E.void("input", [.attribute("type", "number"), .attribute("name", "status"),
                                                                      .attribute("value", form.status), .attribute("min", "100"),
                                                                      .attribute("max", "599"), .attribute("required", "")]),
                                    E.element("span", [.class("subtitle")], [.text(w.mockStatusHint)])]),
            E.element("label", [.class("editor")], [.text(w.headers),
                E.element("textarea", [.attribute("name", "headers"), .attribute("rows", "4"), .attribute("spellcheck", "false")],
                          [.text(form.headers)]),
                E.element("span", [.class("subtitle")], [.text(w.mockHeadersHint)])]),
        ]
        if let body = form.body {
            answer.append(E.element("label", [.class("editor")], [.text(w.body),
                E.element("textarea", [.attribute("name", "body"), .attribute("rows", "16"), .attribute("spellcheck", "false")], [.text(body)]),
                E.element("span", [.class("subtitle")], [.text(w.mockBodyHint)])]))
        } else {
            answer.append(E.element("p", [.class("status")], [.text(w.mockBinaryBody(byteCount(Int64(rule.body.count), w)))]))
        }
        var content: [HTML] = [
            E.element("p", [.class("back")], [E.element("a", [Attribute.localHref(ConsoleRoute.mocks.path)], [.text(w.backToMocks)])]),
            E.element("h1", [], [.text(title)]),
            E.element("dl", [.class("facts")], [
                E.element("dt", [], [.text(w.matches)]),
                E.element("dd", [.class("url")], [.text("\(rule.method) \(rule.urlPattern)"),
                                                  E.element("span", [.class("subtitle")], [.text(DebugPages.origin(rule.origin, w))])]),
                E.element("dt", [], [.text(w.state)]), E.element("dd", [], [.text(rule.isEnabled ? w.on : w.off)]),
                E.element("dt", [], [.text(w.hits)]), E.element("dd", [], [.text(String(rule.hits))]),
            ]),
        ]
        if let error {
            content.append(E.element("p", [.class("banner error"), .attribute("role", "alert")], [.text(w.notSaved(error))]))
        }
        content.append(E.element("form", [.class("pause-editor rule-editor"), .attribute("method", "post"),
                                          .attribute("action", ConsoleRoute.mock(rule.id).path)], [
            Pages.csrfField(context),
            form.version.map { E.void("input", [.attribute("type", "hidden"), .attribute("name", "version"), .attribute("value", $0)]) } ?? .empty,
            E.element("fieldset", [], answer),
            E.element("p", [.class("actions")], [E.element("button", [.attribute("type", "submit")], [.text(w.saveMock)])]),
        ]))
        return DebugPages.page(context, title: title, [E.element("article", [.class("detail debug")], content)])
    }
}
