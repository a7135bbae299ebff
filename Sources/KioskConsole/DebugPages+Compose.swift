import Foundation
import KioskCore
import KioskDebugger
import KioskWeb

// The composer: a logged request edited and sent again.
extension DebugPages {
    /// `/debug/requests/{id}/compose`: the request of `record` in a form (as logged, or `form` as typed when
    /// it could not be sent, with `error`), secrets reading `<redacted>`.
    static func composer(_ record: RequestRecord, form: ComposeForm, error: String?, context: ViewContext) -> HTML {
        let w = context.words
        let title = w.editAndResendTitle(record.id)
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
            input("method", w.method, form.method, extra: [.attribute("autocapitalize", "characters"), .attribute("list", "composer-methods")]),
            E.element("datalist", [.attribute("id", "composer-methods")], ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"].map { method in
                E.element("option", [.attribute("value", method)], [])
            }),
            input("url", w.urlWithoutQuery, form.url,
                  hint: record.source.map { w.urlHint(context.sourceName($0), record.url.contains(Redactor.placeholder)) },
                  extra: [.attribute("inputmode", "url")]),
            textarea("query", w.queryItems, form.query, rows: 6, hint: w.queryHint(Redactor.placeholder, record.source != nil)),
            textarea("headers", w.headers, form.headers, rows: 5, hint: w.headersHint(Redactor.placeholder, record.source != nil)),
            form.keepsBody
                ? E.element("p", [.class("status")], [
                    E.void("input", [.attribute("type", "hidden"), .attribute("name", "keep_body"), .attribute("value", "1")]),
                    E.element("strong", [], [.text(w.body + ": ")]),
                    .text(record.requestBody?.isTruncated == true
                          ? w.binaryBodyCut(DebugPages.byteCount(Int64(record.requestBody?.originalSize ?? 0), w))
                          : w.binaryBodyKept(DebugPages.byteCount(Int64(record.requestBody?.data.count ?? 0), w))),
                ])
                : textarea("body", w.body, form.body, rows: 6, hint: w.bodyHint),
            E.element("p", [.class("actions")], [
                E.element("button", [.attribute("type", "submit")], [.text(w.send)]),
                .text(" "),
                // Back to the request as logged, whatever was typed or sent meanwhile.
                E.element("a", [Attribute.localHref(ConsoleRoute.compose(record.id).path), .class("revert")], [.text(w.revertTo(record.id))]),
            ]),
        ]
        var content: [HTML] = [
            E.element("p", [.class("back")], [E.element("a", [Attribute.localHref(ConsoleRoute.request(record.id).path)], [.text(w.backToRequest(record.id))])]),
            E.element("h1", [], [.text(title)]),
            E.element("p", [.class("url")], [.text("\(record.method) \(record.url)")]),
        ]
        if let error {
            content.append(E.element("p", [.class("banner error"), .attribute("role", "alert")], [.text(w.notSent(error))]))
        }
        content.append(E.element("form", [.class("pause-editor composer"), .attribute("method", "post"),
                                          .attribute("action", ConsoleRoute.compose(record.id).path)], fields))
        content.append(E.element("p", [.class("status")], [.text(w.composeNote(record.id))]))
        return DebugPages.page(context, title: title, [E.element("article", [.class("detail debug")], content)])
    }

    /// A logged request's "Edit and resend" and "Replay" buttons, for an exchange that went to the wire; with
    /// `replayRefusal`, that reason in place of Replay (a secret the log hides is typed in the editor).
    static func resendButtons(_ record: RequestRecord, replayRefusal: ResendProblem?, context: ViewContext) -> HTML {
        // A tunnel or a protocol switch (WebSocket) is no request to send again: its bytes were passed on unread.
        guard [CacheDecision.network, .revalidated, .mocked, .edited].contains(record.decision),
              !record.isTunnel else { return .empty }
        let w = context.words
        return E.group([
            E.element("form", [.class("mock"), .attribute("method", "get"), .attribute("action", ConsoleRoute.compose(record.id).path)], [
                E.element("button", [.attribute("type", "submit"), .attribute("aria-label", w.editAndResendLabel)], [.text(w.editAndResend)]),
            ]),
            replayRefusal.map { E.element("p", [.class("status replay-refused")], [.text(w.replayRefused(w.resendProblem($0)))]) }
                ?? Pages.postForm(action: ConsoleRoute.replay(record.id).path, fields: [],
                                  label: w.replayLabel, button: .text(w.replay), className: "mock", context: context),
        ])
    }
}
