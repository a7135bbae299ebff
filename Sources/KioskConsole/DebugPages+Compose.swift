import Foundation
import KioskCore
import KioskDebugger
import KioskWeb

// The composer: a logged request edited and sent again.
extension DebugPages {
    /// `/debug/requests/{id}/compose`: the request of `record` in a form (as logged, or `form` as typed when
    /// it could not be sent, with `error`), secrets reading `<redacted>`.
    static func composer(_ record: RequestRecord, form: ComposeForm, error: String?, context: ViewContext) -> HTML {
        let title = "Edit and resend #\(record.id)"
        func textarea(_ name: StaticString, _ label: String, _ text: String, rows: Int, hint: String) -> HTML {
            E.element("label", [.class("editor")], [.text(label),
                E.element("textarea", [.attribute("name", "\(name)"), .attribute("rows", String(rows)), .attribute("spellcheck", "false")],
                          [.text(text)]),
                E.element("span", [.class("subtitle")], [.text(hint)])])
        }
        func input(_ name: StaticString, _ label: String, _ value: String, hint: String? = nil, extra: [Attribute?] = []) -> HTML {
            E.element("label", [], [.text(label), E.void("input", [.attribute("type", "text"), .attribute("name", "\(name)"),
                                                                   .attribute("value", value), .attribute("spellcheck", "false")] + extra),
                                    hint.map { E.element("span", [.class("subtitle")], [.text($0)]) } ?? .empty])
        }
        let fields: [HTML] = [
            Pages.csrfField(context),
            input("method", "Method", form.method, extra: [.attribute("autocapitalize", "characters"), .attribute("list", "composer-methods")]),
            E.element("datalist", [.attribute("id", "composer-methods")], ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"].map { method in
                E.element("option", [.attribute("value", method)], [])
            }),
            input("url", "URL (without its query)", form.url,
                  hint: record.source.map { source in
                      "It can go to \(source.displayName)'s servers only"
                          + (record.url.contains(Redactor.placeholder) ? ", since Kiosk puts \(source.displayName)'s keys back when sending it." : ".")
                  },
                  extra: [.attribute("inputmode", "url")]),
            textarea("query", "Query items", form.query, rows: 6,
                     hint: "“name=value” per line, as they read (Kiosk encodes them). A secret reads \(Redactor.placeholder): the source puts its key back when sending."),
            textarea("headers", "Headers", form.headers, rows: 5,
                     hint: "“Name: value” per line. A header logged as \(Redactor.placeholder) is left out; Host and Content-Length are the transport's."),
            textarea("body", "Body", form.body, rows: 6, hint: "Sent as typed (UTF-8); empty for none."),
            E.element("p", [.class("actions")], [
                E.element("button", [.attribute("type", "submit")], ["Send"]),
                .text(" "),
                // Back to the request as logged, whatever was typed or sent meanwhile.
                E.element("a", [Attribute.localHref(ConsoleRoute.compose(record.id).path), .class("revert")], [.text("Revert to #\(record.id) as logged")]),
            ]),
        ]
        var content: [HTML] = [
            E.element("p", [.class("back")], [E.element("a", [Attribute.localHref(ConsoleRoute.request(record.id).path)], [.text("‹ Request #\(record.id)")])]),
            E.element("h1", [], [.text(title)]),
            E.element("p", [.class("url")], [.text("\(record.method) \(record.url)")]),
        ]
        if let error {
            content.append(E.element("p", [.class("banner error"), .attribute("role", "alert")], [.text("Not sent: \(error)")]))
        }
        content.append(E.element("form", [.class("pause-editor composer"), .attribute("method", "post"),
                                          .attribute("action", ConsoleRoute.compose(record.id).path)], fields))
        content.append(E.element("p", [.class("status")], [.text(
            "Sent through everything the app's requests go through — the outbound policy, breakpoints, mocks and rewrite rules — "
                + "and logged as a new request linked to #\(record.id). Its answer is shown in the log, never stored for the app.")]))
        return DebugPages.page(context, title: title, [E.element("article", [.class("detail debug")], content)])
    }

    /// A logged request's "Edit and resend" and "Replay" buttons, for an exchange that went to the wire.
    static func resendButtons(_ record: RequestRecord, context: ViewContext) -> HTML {
        guard [CacheDecision.network, .revalidated, .mocked, .edited].contains(record.decision) else { return .empty }
        return E.group([
            E.element("form", [.class("mock"), .attribute("method", "get"), .attribute("action", ConsoleRoute.compose(record.id).path)], [
                E.element("button", [.attribute("type", "submit"), .attribute("aria-label", "Edit this request and send it again")],
                          ["Edit and resend"]),
            ]),
            Pages.postForm(action: ConsoleRoute.replay(record.id).path, fields: [],
                           label: "Send this request again unchanged (logged as a new request)", button: "Replay", className: "mock",
                           context: context),
        ])
    }
}
