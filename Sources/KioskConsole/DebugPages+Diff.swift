import Foundation
import KioskCore
import KioskDebugger
import KioskWeb

/// `/debug/diff?a=&b=`: the two requests to compare (a the older).
struct DiffQuery: Decodable {
    var a: Int64
    var b: Int64

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        try form.refuseUnknownNames(["a", "b"])
        let refusal = WebError.consoleBadRequest { $0.diffNeedsTwoIDs }
        guard let a = try? form.value(Int64.self, "a", invalid: ""), let b = try? form.value(Int64.self, "b", invalid: ""),
              a > 0, b > 0 else { throw refusal }
        // The older one first, whichever order they were given in.
        (self.a, self.b) = (min(a, b), max(a, b))
    }
}

extension DebugPages {
    /// The request page's comparison controls: the previous answer in one click, or any request by id.
    static func compareSection(_ record: RequestRecord, previous: Int64?, _ w: ConsoleWords) -> HTML {
        E.element("section", [.class("compare")], [
            E.element("h2", [], [.text(w.compare)]),
            previous.map { previous in
                E.element("p", [], [E.element("a", [Attribute.localHref(ConsoleRoute.diff.path(QueryString(["a": String(previous), "b": String(record.id)])))],
                                              [.text(w.compareWithPrevious(previous))])])
            } ?? E.element("p", [.class("status")], [.text(w.noEarlierAnswer)]),
            E.element("form", [.attribute("method", "get"), .attribute("action", ConsoleRoute.diff.path), .class("inline")], [
                E.void("input", [.attribute("type", "hidden"), .attribute("name", "a"), .attribute("value", String(record.id))]),
                E.element("label", [], [.text(w.compareWithRequest),
                                        E.void("input", [.attribute("type", "number"), .attribute("name", "b"), .attribute("min", "1"),
                                                         .attribute("required", "required"), .attribute("inputmode", "numeric")])]),
                E.element("button", [.attribute("type", "submit")], [.text(w.compare)]),
            ]),
        ])
    }

    /// `/debug/diff` asked with no requests: the form that picks the two (their ids, as the list shows them).
    static func diffForm(context: ViewContext) -> HTML {
        let w = context.words
        func field(_ name: String, _ label: String) -> HTML {
            E.element("label", [], [.text(label), E.void("input", [.attribute("type", "number"), .attribute("name", name), .attribute("min", "1"),
                                                                   .attribute("required", "required"), .attribute("inputmode", "numeric")])])
        }
        return DebugPages.page(context, title: w.compareTwo, [E.element("article", [.class("detail debug")], [
            backToRequests(w),
            E.element("h1", [], [.text(w.compareTwo)]),
            E.element("form", [.attribute("method", "get"), .attribute("action", ConsoleRoute.diff.path), .class("inline")], [
                field("a", w.compareFirst), field("b", w.compareWithRequest),
                E.element("button", [.attribute("type", "submit")], [.text(w.compare)]),
            ]),
        ])])
    }

    /// An exchange's phases in the order they happen, each named as the request's page names it (nil: not gone through),
    /// the whole exchange last: what the request's page lists and the diff compares.
    static func phaseFacts(_ timings: RequestTimings, _ w: ConsoleWords) -> [(String, TimeInterval?)] {
        [(w.queuedFact, timings.queued), (w.connectFact, timings.connect), (w.dnsFact, timings.dns), (w.tlsFact, timings.tls),
         (w.timeToFirstByte, timings.firstByte), (w.downloadFact, timings.download), (w.totalFact, timings.total)]
    }

    /// `/debug/diff`: status, timing (each phase), headers and body of two exchanges side by side in one list of changes.
    static func diff(_ diff: ExchangeDiff, context: ViewContext) -> HTML {
        let old = diff.before, new = diff.after
        let w = context.words
        func link(_ record: RequestRecord) -> HTML {
            E.element("a", [Attribute.localHref(ConsoleRoute.request(record.id).path)], [.text("#\(record.id)")])
        }
        func status(_ record: RequestRecord) -> String { record.status.map(String.init) ?? w.noResponse }
        var content: [HTML] = [
            backToRequests(w),
            E.element("h1", [], [.text("#\(old.id) → #\(new.id)")]),
            E.element("p", [.class("url")], [.text(old.url == new.url ? new.url : "\(old.url) → \(new.url)")]),
        ]
        let facts: [(String, String, String)] = [
            (w.request, "#\(old.id) \(old.method) \(old.endpoint)", "#\(new.id) \(new.method) \(new.endpoint)"),
            (w.started, old.startedAt.formatted(.iso8601), new.startedAt.formatted(.iso8601)),
            (w.status, status(old), status(new)),
            (w.cacheDecision, old.decision.rawValue, new.decision.rawValue),
        ] + zip(phaseFacts(old.timings, w), phaseFacts(new.timings, w)).compactMap { before, after in
            // A phase neither exchange went through (no new connection, no TLS) is no row; one only one did reads "—" for the other.
            guard before.1 != nil || after.1 != nil else { return nil }
            return (before.0, before.1.map { milliseconds($0, w) } ?? "—", after.1.map { milliseconds($0, w) } ?? "—")
        } + [
            (w.bodySize, old.responseBody.map { w.bytes($0.originalSize) } ?? w.noBody, new.responseBody.map { w.bytes($0.originalSize) } ?? w.noBody),
        ]
        content.append(E.element("div", [.class("table-scroll"), .attribute("tabindex", "0"), .attribute("aria-label", w.summary)], [
            E.element("table", [.class("requests diff")], [
                E.element("thead", [], [E.element("tr", [], [
                    // The row names' column, named for assistive technology (an empty header is none).
                    E.element("td", [], []),
                    E.element("th", [.attribute("scope", "col")], [link(old)]),
                    E.element("th", [.attribute("scope", "col")], [link(new)]),
                ])]),
                E.element("tbody", [], facts.map { name, before, after in
                    // Times as every console page says one, in the page's own terms (compared as instants).
                    let shown = { (text: String, date: Date) -> HTML in name == w.started ? localTime(date, style: .dateTime) : .text(text) }
                    return E.element("tr", [before == after ? nil : .class("differs")], [
                        E.element("th", [.attribute("scope", "row")], [.text(name)]),
                        E.element("td", [], [shown(before, old.startedAt)]), E.element("td", [], [shown(after, new.startedAt)]),
                    ])
                }),
            ]),
        ]))
        content.append(E.element("section", [], [
            E.element("h2", [], [.text(w.responseHeaders)]),
            diff.responseHeaders.isEmpty ? E.element("p", [.class("status")], [.text(w.theSame)]) :
                E.element("ul", [.class("diff-changes")], diff.responseHeaders.map { change in
                    E.element("li", [.class(change.old == nil ? "added" : change.new == nil ? "removed" : "changed")], [
                        E.element("code", [], [.text(change.name)]), ": ",
                        change.old.map { E.element("del", [], [.text($0)]) } ?? .empty,
                        change.old != nil && change.new != nil ? " → " : .empty,
                        change.new.map { E.element("ins", [], [.text($0)]) } ?? .empty,
                    ])
                }),
        ]))
        // A 304 carries no body: compared with one that does, every line would read removed.
        let notModified = [old, new].first { $0.status == 304 && ($0.responseBody?.originalSize ?? 0) == 0 }
        content.append(E.element("section", [], [E.element("h2", [], [.text(w.responseBody)]),
                                                 notModified.map { E.element("p", [.class("status")], [.text(w.notModifiedNoBody($0.id))]) }
                                                     ?? bodyChanges(diff.body, cut: [old, new].filter { $0.responseBody.map { $0.isTruncated && !$0.isWithheld } == true }.map(\.id), w)]))
        return DebugPages.page(context, title: "#\(old.id) → #\(new.id) · \(w.networkDebugger)", [E.element("article", [.class("detail debug")], content)])
    }

    /// The body's changes: JSON by path (added, removed, old → new), or the changed lines; `cut` names the records whose
    /// body the capture cut (no whole JSON, whatever it was sent as: what the line-by-line comparison says instead).
    static func bodyChanges(_ body: ExchangeDiff.Body, cut: [Int64] = [], _ w: ConsoleWords) -> HTML {
        /// A value on one line, cut at 200 characters (the request's page shows it whole).
        func short(_ value: OrderedJSON) -> String {
            let text = value.rendered(indent: nil)
            return text.count > 200 ? String(text.prefix(200)) + "…" : text
        }
        switch body {
        case .identical:
            return E.element("p", [.class("status")], [.text(w.sameBytes)])
        case .json(let changes, let truncated):
            guard !changes.isEmpty else { return E.element("p", [.class("status")], [.text(w.sameJSON)]) }
            let counts = (added: changes.count { if case .added = $0 { true } else { false } },
                          removed: changes.count { if case .removed = $0 { true } else { false } })
            var parts: [HTML] = [
                E.element("p", [.class("status")], [.text(w.changeCounts(changes.count, truncated, counts.added, counts.removed,
                                                                         changes.count - counts.added - counts.removed))]),
                E.element("ul", [.class("diff-changes")], changes.map { change in
                    switch change {
                    case .added(let path, let value):
                        E.element("li", [.class("added")], [E.element("code", [], [.text(path)]), .text(w.added),
                                                              E.element("ins", [], [.text(short(value))])])
                    case .removed(let path, let value):
                        E.element("li", [.class("removed")], [E.element("code", [], [.text(path)]), .text(w.removed),
                                                                E.element("del", [], [.text(short(value))])])
                    case .changed(let path, let old, let new):
                        E.element("li", [.class("changed")], [E.element("code", [], [.text(path)]), " ",
                                                                E.element("del", [], [.text(short(old))]), " → ",
                                                                E.element("ins", [], [.text(short(new))])])
                    }
                }),
            ]
            if truncated { parts.append(E.element("p", [.class("status")], [.text(w.onlyFirstChanges)])) }
            return E.group(parts)
        case .text(let lines, let prefix, let suffix, let truncated):
            var parts: [HTML] = [E.element("p", [.class("status")], [.text(cut.isEmpty ? w.comparedByLine(prefix, suffix)
                                                                          : w.comparedCutByLine(cut, prefix, suffix))])]
            parts.append(E.element("pre", [.class("raw text-diff"), .attribute("tabindex", "0")], lines.map { line in
                switch line {
                case .same(let text): E.element("span", [], [.text("  " + text + "\n")])
                case .removed(let text): E.element("del", [], [.text("- " + text + "\n")])
                case .added(let text): E.element("ins", [], [.text("+ " + text + "\n")])
                }
            }))
            if truncated { parts.append(E.element("p", [.class("status")], [.text(w.onlyFirstLines)])) }
            return E.group(parts)
        }
    }
}
