import Foundation
import KioskApp
import KioskCore
import KioskDebugger
import KioskWeb

/// The network debugger's HTML: the request list and one request in full. A developer tool, so it is
/// in English only; like every page it is built with `HTML`, so captured URLs, headers and bodies —
/// upstream strings all — are escaped by construction.
enum DebugPages {
    typealias E = HTML

    /// `/debug`: filters, search and the newest requests first. `eventID` is the live feed's latest event
    /// when the records were read: the page's script follows the feed from there, unless the page is not
    /// `live` (paging back through older requests).
    static func requests(_ records: [RequestRecord], query: DebugFilterQuery, count: Int, paused: Int = 0,
                         eventID: DebugEvents.EventID, live: Bool, context: ViewContext) -> HTML {
        let filter = query.filter
        var content: [HTML] = [
            E.element("h1", [], ["Network debugger"]),
            pausedBanner(paused),
            E.element("p", [.class("status")], [
                live ? E.element("span", [.attribute("id", "live-status"), .attribute("role", "status"), .class("live")], ["Live · "])
                    : .empty,
                E.element("span", [.attribute("id", "log-count"), .attribute("data-count", String(count))],
                          [.text("\(count) request\(count == 1 ? "" : "s") logged")]),
                .text(" · redacted at capture · newest first · "),
                E.element("a", [Attribute.localHref(ConsoleRoute.apiRequests.path)], ["JSON"]), " · ",
                E.element("a", [Attribute.localHref(ConsoleRoute.har.path(query.queryString))], ["Export HAR"]), " · ",
                E.element("a", [Attribute.localHref(ConsoleRoute.insights.path)], ["Insights"]), " · ",
                E.element("a", [Attribute.localHref(ConsoleRoute.mocks.path)], ["Mock rules"]), " · ",
                E.element("a", [Attribute.localHref(ConsoleRoute.rules.path)], ["Rewrite rules"]), " · ",
                E.element("a", [Attribute.localHref(ConsoleRoute.endpoints.path)], ["Endpoints"]),
            ]),
            filterForm(query),
            filterNotice(query),
        ]
        if records.isEmpty {
            if query.syntaxError == nil { content.append(E.element("p", [.class("empty")], [
                .text(count == 0 ? "Nothing logged yet: open a catalog and its requests appear here." : "No request matches."),
            ])) }
        }
        // The table is there even when empty, so that live rows have a home.
        content.append(table(records))
        if !records.isEmpty {
            if records.count == filter.limit, let last = records.last {
                var older = query
                older.before = last.id
                content.append(E.element("p", [], [E.element("a", [Attribute.localHref(ConsoleRoute.requests.path(older.queryString)), .attribute("rel", "next")],
                                                               ["Older requests ›"])]))
            }
        }
        var events: String?
        if live {
            var stream = query
            stream.before = nil
            var query = stream.queryString
            query.set("since", eventID.description)
            events = ConsoleRoute.events.path(query)
        }
        return DebugPages.page(context, title: "Network debugger", [
            Pages.split(content, revalidating: false, announcesChanges: false, className: "split console",
                        attributes: [.attribute("data-debug-list", "true"), events.flatMap { Attribute.localPath("data-events", $0) }],
                        context: context),
        ])
    }

    /// "2 requests are paused at a breakpoint. Decide" — always in the page (hidden at 0), so the live
    /// feed can show it.
    static func pausedBanner(_ paused: Int) -> HTML {
        E.element("p", [.attribute("id", "paused-banner"), .class("banner offline"), .attribute("role", "alert"),
                        paused == 0 ? .flag("hidden") : nil], [
            E.element("span", [.attribute("data-count", String(paused))],
                      [.text("\(paused) request\(paused == 1 ? " is" : "s are") paused at a breakpoint. ")]),
            E.element("a", [Attribute.localHref(ConsoleRoute.paused.path)], ["Decide"]),
        ])
    }

    static func filterForm(_ query: DebugFilterQuery) -> HTML {
        func select(_ name: StaticString, _ label: String, _ current: String?, _ options: [(String, String)]) -> HTML {
            let current = current ?? ""
            return E.element("label", [], [.text(label), E.element("select", [.attribute("name", String(describing: name))],
                [E.element("option", [.attribute("value", "")], ["any"])] + options.map { value, text in
                    E.element("option", [.attribute("value", value), value == current ? .flag("selected") : nil], [.text(text)])
                })])
        }
        return E.element("form", [.class("search"), .attribute("method", "get"), .attribute("action", ConsoleRoute.requests.path),
                                  .attribute("role", "search")], [
            filterField(query),
            select("source", "Source", query.source?.rawValue, SourceID.allCases.map { ($0.rawValue, $0.displayName) }),
            select("status", "Status", query.status,
                   StatusClass.filterable.map { ($0.description, $0 == .error ? "no response" : $0.description) }),
            select("decision", "Cache decision", query.decision?.rawValue, CacheDecision.allCases.map { ($0.rawValue, $0.rawValue) }),
            E.element("label", [], ["Slower than (ms)",
                                    E.void("input", [.attribute("type", "number"), .attribute("name", "min_ms"), .attribute("min", "0"),
                                                     .attribute("value", query.minMillisecondsText)])]),
            E.element("button", [.attribute("type", "submit")], ["Filter"]),
        ])
    }

    static func table(_ records: [RequestRecord]) -> HTML {
        E.element("div", [.class("table-scroll"), .attribute("tabindex", "0"), .attribute("aria-label", "Requests")], [
            E.element("table", [.class("requests")], [
                E.element("thead", [], [E.element("tr", [], ["#", "Time (UTC)", "Status", "Cache", "Duration", "Waterfall", "Request"].map {
                    E.element("th", [.attribute("scope", "col"), $0 == "Waterfall" ? .class("wf") : nil], [.text($0)])
                })]),
                E.element("tbody", [], records.map(row)),
            ]),
        ])
    }

    /// One request's row: the page's rows and the live feed's are made here. Its link opens the request
    /// in the split view's pane; its waterfall cell carries the start (ms since 1970) and the phases
    /// (queued, connect, first byte, download, total, in ms; empty when not measured), which the script
    /// draws to the scale of the rows shown.
    static func row(_ record: RequestRecord) -> HTML {
        E.element("tr", [.attribute("data-id", String(record.id))], [
            E.element("td", [], [E.element("a", [Attribute.localHref(ConsoleRoute.request(record.id).path), .attribute("data-pane", "")],
                                            [.text("#\(record.id)")])]),
            E.element("td", [], [.text(record.startedAt.formatted(timeOfDay))]),
            statusCell(record),
            E.element("td", [], [cacheBadge(record.cacheStatus)]),
            E.element("td", [.class("num")], [.text(milliseconds(record.timings.total))]),
            E.element("td", [.class("wf")] + waterfallData(record), []),
            E.element("td", [.class("url")], [.text("\(record.method) \(record.url)"),
                                              record.error.map { E.element("span", [.class("subtitle")], [.text($0)]) } ?? .empty]),
        ])
    }

    /// What the script draws a waterfall bar from: the start (ms since 1970) and the phases (queued,
    /// connect, first byte, download, total, in ms; empty when not measured); the phases in words for
    /// assistive technology.
    static func waterfallData(_ record: RequestRecord) -> [Attribute?] {
        let timings = record.timings
        let phases = [timings.queued, timings.connect, timings.firstByte, timings.download, Optional(timings.total)]
            .map { $0.map { String(format: "%.3f", $0 * 1000) } ?? "" }.joined(separator: ",")
        return [.attribute("data-start", String(format: "%.3f", record.startedAt.timeIntervalSince1970 * 1000)),
                .attribute("data-phases", phases), .attribute("aria-label", phaseSummary(timings))]
    }

    /// The time of day in the table (UTC, as the column says).
    private static let timeOfDay = Date.FormatStyle(date: .omitted, time: .standard, timeZone: TimeZone(identifier: "UTC")!)

    /// "queued 2 ms, connect 10 ms, first byte 80 ms, download 5 ms": the phases measured, for the waterfall's label.
    static func phaseSummary(_ timings: RequestTimings) -> String {
        let phases: [(String, TimeInterval?)] = [("queued", timings.queued), ("connect", timings.connect),
                                                 ("first byte", timings.firstByte), ("download", timings.download)]
        let measured = phases.compactMap { name, value in value.map { "\(name) \(milliseconds($0))" } }
        return measured.isEmpty ? "total \(milliseconds(timings.total))" : measured.joined(separator: ", ")
    }

    /// The status, "store" for an answer that made no exchange, "—" for an exchange that got no response.
    static func statusCell(_ record: RequestRecord) -> HTML {
        if let status = record.status { return E.element("td", [.class("st st\(status / 100)")], [.text(String(status))]) }
        let answeredLocally = record.error == nil || ![CacheDecision.network, .revalidated].contains(record.decision)
        return answeredLocally ? E.element("td", [.class("st st-store")], ["store"]) : E.element("td", [.class("st st0")], ["—"])
    }

    /// `/debug/requests/{id}`: everything about one exchange.
    static func request(_ record: RequestRecord, previous: Int64? = nil, context: ViewContext) -> HTML {
        var content: [HTML] = [
            E.element("p", [.class("back")], [E.element("a", [Attribute.localHref(ConsoleRoute.requests.path)], ["‹ All requests"])]),
            E.element("h1", [], [.text("#\(record.id) \(record.method) \(record.endpoint)")]),
            E.element("p", [.class("url")], [.text(record.url)]),
        ]
        var facts: [(String, String)] = [
            ("Started", record.startedAt.formatted(.iso8601)),
            ("Source", record.source?.displayName ?? "—"),
            ("Status", record.status.map(String.init) ?? "no response"),
        ] + cacheFacts(record.cacheStatus)
        if let error = record.error { facts.append(("Error", error)) }
        let phases: [(String, TimeInterval?)] = [("Queued", record.timings.queued), ("Connect", record.timings.connect),
                                                 ("Time to first byte", record.timings.firstByte),
                                                 ("Download", record.timings.download), ("Total", record.timings.total)]
        facts += phases.compactMap { name, value in value.map { (name, milliseconds($0)) } }
        content.append(E.element("dl", [.class("facts")], facts.flatMap { name, value in
            [E.element("dt", [], [.text(name)]), E.element("dd", [], [.text(value)])]
        }))
        content.append(E.element("div", [.class("timeline")], [
            // A picture of the phases: its label says them in words.
            E.element("div", [.class("wf"), .attribute("role", "img")] + waterfallData(record), []),
            E.element("p", [.class("legend"), .attribute("aria-hidden", "true")], ["queued", "connect", "wait", "download"].map { phase in
                E.element("span", [.class(phase)], [.text(phase == "wait" ? "first byte" : phase)])
            }),
        ]))
        if record.status != nil, let body = record.responseBody, !body.isTruncated {
            content.append(Pages.postForm(action: ConsoleRoute.mockFrom(record.id).path, fields: [],
                                          label: "Answer this request with this response from now on (a mock rule)",
                                          button: "Mock this response", className: "mock", context: context))
        }
        if record.status != nil || record.error != nil { content.append(makeRuleButton(record)) }
        content.append(resendButtons(record, context: context))
        if record.status != nil { content.append(compareSection(record, previous: previous)) }
        content.append(touchedBy(record))
        content.append(E.element("section", [], [
            E.element("h2", [], ["As cURL (redacted)"]),
            E.element("pre", [.class("raw"), .attribute("tabindex", "0")], [.text(HAR.curl(record))]),
        ]))
        content.append(headers("Request headers", record.requestHeaders))
        content.append(headers("Response headers", record.responseHeaders))
        if let body = record.requestBody { content.append(bodySection("Request body", body)) }
        if let body = record.responseBody { content.append(bodySection("Response body", body)) }
        return DebugPages.page(context, title: "Request #\(record.id)", [E.element("article", [.class("detail debug")], content)])
    }

    static func headers(_ title: String, _ fields: [RequestRecord.HeaderField]) -> HTML {
        E.element("section", [], [
            E.element("h2", [], [.text(title)]),
            fields.isEmpty ? E.element("p", [.class("status")], ["None"]) :
                E.element("dl", [.class("facts headers")], fields.flatMap { field in
                    [E.element("dt", [], [.text(field.name)]), E.element("dd", [], [.text(field.value)])]
                }),
        ])
    }

    /// A body: a collapsible tree when it is JSON (keys in their order, arrays indexed), else its text.
    static func bodySection(_ title: String, _ body: CapturedBody) -> HTML {
        let json = BodyJSON(body)
        var note = "\(body.originalSize) bytes"
        if body.isTruncated { note += ", truncated to \(body.data.count) at capture" }
        var parts: [HTML] = [E.element("h2", [], [.text(title)]), E.element("p", [.class("status")], [.text(note)])]
        if !body.isTruncated, let tree = try? OrderedJSON.parse(body.data) {
            var budget = maximumTreeNodes
            parts.append(E.element("div", [.class("json-tree")], [node(key: nil, tree, depth: 0, budget: &budget)]))
            if budget <= 0 { parts.append(E.element("p", [.class("status")], ["The tree is cut short; the raw text follows."])) }
            if budget > 0 { return E.element("section", [], parts) }
        }
        parts.append(E.element("pre", [.class("raw"), .attribute("tabindex", "0")], [.text(json.text ?? "(binary, base64) " + (json.base64 ?? ""))]))
        return E.element("section", [], parts)
    }

    /// Beyond this many nodes the page would be too heavy to be useful; the raw text is shown too.
    static let maximumTreeNodes = 20_000

    /// One node of the tree: objects and arrays as `<details>` (open near the root), scalars typed by class.
    static func node(key: String?, _ value: OrderedJSON, depth: Int, budget: inout Int) -> HTML {
        budget -= 1
        let label: HTML = key.map { E.element("span", [.class("key")], [.text($0)]) } ?? .empty
        let separator: HTML = key == nil ? .empty : ": "
        switch value {
        case .object(let members):
            var children: [HTML] = []
            for member in members where budget > 0 {
                children.append(E.element("li", [], [node(key: member.key, member.value, depth: depth + 1, budget: &budget)]))
            }
            return container(label, "{\(members.count)}", children, depth: depth)
        case .array(let values):
            var children: [HTML] = []
            for (index, element) in values.enumerated() where budget > 0 {
                children.append(E.element("li", [], [node(key: "[\(index)]", element, depth: depth + 1, budget: &budget)]))
            }
            return container(label, "[\(values.count)]", children, depth: depth)
        case .string(let text):
            return E.group([label, separator, E.element("span", [.class("string")], [.text(OrderedJSON.quoted(text))])])
        case .number(let text):
            return E.group([label, separator, E.element("span", [.class("number")], [.text(text)])])
        case .bool(let flag):
            return E.group([label, separator, E.element("span", [.class("bool")], [.text(flag ? "true" : "false")])])
        case .null:
            return E.group([label, separator, E.element("span", [.class("null")], ["null"])])
        }
    }

    private static func container(_ label: HTML, _ summary: String, _ children: [HTML], depth: Int) -> HTML {
        E.element("details", [depth < 2 ? .flag("open") : nil], [
            E.element("summary", [], [label, " ", E.element("span", [.class("count")], [.text(summary)])]),
            E.element("ul", [], children),
        ])
    }

    /// `/debug/paused`: the exchanges held at breakpoints, oldest first.
    static func paused(_ exchanges: [PausedExchange], now: Date, context: ViewContext) -> HTML {
        var content: [HTML] = [
            E.element("p", [.class("back")], [E.element("a", [Attribute.localHref(ConsoleRoute.requests.path)], ["‹ All requests"])]),
            E.element("h1", [], ["Paused requests"]),
            E.element("p", [.class("status")], [
                "Requests held at a breakpoint. Each continues unchanged by itself when its time is up. Switches are on the ",
                E.element("a", [Attribute.localHref(ConsoleRoute.endpoints.path)], ["endpoints"]), " page.",
            ]),
        ]
        if exchanges.isEmpty {
            content.append(E.element("p", [.class("empty")], ["Nothing is paused."]))
        } else {
            content.append(E.element("ul", [.class("items")], exchanges.map { exchange in
                E.element("li", [.attribute("data-id", String(exchange.id))], [
                    E.element("a", [Attribute.localHref(ConsoleRoute.pausedExchange(exchange.id).path)], [
                        E.element("span", [.class("text")], [
                            E.element("span", [.class("title")], [.text("#\(exchange.id) \(exchange.endpoint) — paused at the \(exchange.phase.rawValue)")]),
                            E.element("span", [.class("subtitle url")], [.text("\(exchange.method) \(exchange.url)")]),
                            E.element("span", [.class("subtitle")], [.text("continues by itself in \(max(0, Int(exchange.deadline.timeIntervalSince(now)))) s")]),
                        ]),
                    ]),
                ])
            }))
        }
        return DebugPages.page(context, title: "Paused requests", [E.element("div", [.attribute("id", "results"), .attribute("data-debug-list", "true")], content)])
    }

    /// `/debug/paused/{id}`: one paused exchange with the forms that end the pause. `error` is why an edit
    /// was refused (shown with the edit as it was typed, `draft`).
    static func pausedExchange(_ exchange: PausedExchange, error: String?, draft: String?, context: ViewContext) -> HTML {
        var content: [HTML] = [
            E.element("p", [.class("back")], [E.element("a", [Attribute.localHref(ConsoleRoute.paused.path)], ["‹ Paused requests"])]),
            E.element("h1", [], [.text("#\(exchange.id) \(exchange.endpoint): paused at the \(exchange.phase.rawValue)")]),
            E.element("p", [.class("url")], [.text("\(exchange.method) \(exchange.url)")]),
        ]
        if let error {
            content.append(E.element("p", [.class("banner error"), .attribute("role", "alert")], [.text("Not sent: \(error)")]))
        }
        if let failure = exchange.error {
            content.append(E.element("p", [.class("banner error")], [.text("The request failed: \(failure)")]))
        }
        let action = ConsoleRoute.pausedExchange(exchange.id).path
        func button(_ value: String, _ label: String) -> HTML {
            E.element("button", [.attribute("type", "submit"), .attribute("name", "action"), .attribute("value", value)], [.text(label)])
        }
        func textarea(_ name: StaticString, _ label: String, _ text: String, rows: Int) -> HTML {
            E.element("label", [.class("editor")], [.text(label),
                E.element("textarea", [.attribute("name", "\(name)"), .attribute("rows", String(rows)), .attribute("spellcheck", "false")],
                          [.text(text)])])
        }
        var fields: [HTML] = [Pages.csrfField(context)]
        switch exchange.phase {
        case .request:
            let query = URLComponents(string: exchange.url)?.queryItems?.map { "\($0.name)=\($0.value ?? "")" }.joined(separator: "\n") ?? ""
            fields.append(textarea("query", "Query items (name=value per line; <redacted> keeps the secret)", query, rows: 6))
            fields.append(textarea("headers", "Headers (Name: value per line)",
                                   exchange.requestHeaders.map { "\($0.name): \($0.value)" }.joined(separator: "\n"), rows: 4))
            fields.append(E.element("p", [.class("actions")], [button("edit", "Send the edited request"), button("continue", "Send unchanged"),
                                                               button("abort", "Abort")]))
        case .response, .error:
            let original = exchange.responseText.map { text in (try? OrderedJSON.parse(text).rendered()) ?? text } ?? ""
            fields.append(E.element("label", [], ["Status", E.void("input", [.attribute("type", "number"), .attribute("name", "status"),
                .attribute("min", "100"), .attribute("max", "599"), .attribute("value", String(exchange.status ?? 200))])]))
            fields.append(textarea("body", exchange.phase == .error ? "A response to answer with instead (JSON)" : "Response body (JSON, editable)",
                                   draft ?? original, rows: 24))
            fields.append(E.element("label", [.class("inline")], [
                E.void("input", [.attribute("type", "checkbox"), .attribute("name", "keep"), .attribute("value", "1")]),
                "Keep returning this: also make a rewrite rule that answers this request with this status and body from now on",
            ]))
            fields.append(E.element("p", [.class("actions")], [
                button("edit", exchange.phase == .error ? "Answer with this response" : "Check and send the edit"),
                button("continue", exchange.phase == .error ? "Fail with the error" : "Send unchanged"),
                button("abort", "Abort"),
            ]))
        }
        content.append(E.element("form", [.class("pause-editor"), .attribute("method", "post"), .attribute("action", action)], fields))
        content.append(E.element("p", [.class("status")], [.text("An edited response is shown to the app, marked edited in the log, and never stored. "
            + "Without a decision the request continues unchanged at \(exchange.deadline.formatted(.iso8601)).")]))
        return DebugPages.page(context, title: "Paused #\(exchange.id)", [E.element("article", [.class("detail debug")], content)])
    }

    /// `/debug/endpoints`: the registry of every endpoint Kiosk calls.
    static func endpoints(_ endpoints: [EndpointDescription], settings: [String: BreakpointSetting] = [:], context: ViewContext) -> HTML {
        let sections = endpoints.map { endpoint in
            E.element("section", [.class("endpoint"), .attribute("id", endpoint.name)], [
                E.element("h2", [], [.text(endpoint.name)]),
                E.element("p", [.class("url")], [.text("\(endpoint.method) \(endpoint.host)\(endpoint.template)")]),
                E.element("dl", [.class("facts")], [
                    ("Source", endpoint.source?.displayName ?? "any configured source"), ("Content type", endpoint.contentType),
                    ("Response", endpoint.responseModel), ("Cache", endpoint.cachePolicy),
                    ("Request headers", endpoint.headers.joined(separator: "; ")),
                ].flatMap { name, value in [E.element("dt", [], [.text(name)]), E.element("dd", [], [.text(value)])] }),
                breakpointForm(endpoint.name, settings[endpoint.name] ?? BreakpointSetting(), context: context),
                E.element("p", [], [E.element("a", [Attribute.localHref(ConsoleRoute.requests.path(QueryString(["source": endpoint.source?.rawValue])))],
                                               [.text("Requests of \(endpoint.source?.displayName ?? "images")")])]),
            ])
        }
        return DebugPages.page(context, title: "Endpoints", [
            E.element("p", [.class("back")], [E.element("a", [Attribute.localHref(ConsoleRoute.requests.path)], ["‹ All requests"])]),
            E.element("h1", [], ["Endpoints"]),
            E.element("p", [.class("status")], ["Every upstream endpoint Kiosk calls, as configured now. Secrets read <redacted>."]),
        ] + sections)
    }

    /// The three breakpoint switches of an endpoint.
    static func breakpointForm(_ endpoint: String, _ setting: BreakpointSetting, context: ViewContext) -> HTML {
        func select(_ name: StaticString, _ label: String, _ mode: BreakpointMode) -> HTML {
            E.element("label", [], [.text(label), E.element("select", [.attribute("name", "\(name)")], BreakpointMode.allCases.map { option in
                E.element("option", [.attribute("value", option.rawValue), option == mode ? .flag("selected") : nil], [.text(option.rawValue)])
            })])
        }
        return E.element("form", [.class("search"), .attribute("method", "post"),
                                  .attribute("action", ConsoleRoute.breakpoint(endpoint: endpoint).path)], [
            Pages.csrfField(context),
            select("request", "Breakpoint on the request", setting.request),
            select("response", "on the response", setting.response),
            select("error", "on an error", setting.error),
            E.element("button", [.attribute("type", "submit"), .attribute("aria-label", "Save the breakpoints of \(endpoint)")], ["Save"]),
        ])
    }

    /// `/debug/mocks`: the rules in the order they are tried, each with its switches.
    static func mocks(_ rules: [MockRule], context: ViewContext) -> HTML {
        var content: [HTML] = [
            E.element("p", [.class("back")], [E.element("a", [Attribute.localHref(ConsoleRoute.requests.path)], ["‹ All requests"])]),
            E.element("h1", [], ["Mock rules"]),
            E.element("p", [.class("status")], [
                "Matching requests are answered by the rule, without the upstream, and logged as mocked. Import an archive with ",
                E.element("code", [], ["kiosk har import"]), ", or open a logged request and choose Mock this response.",
            ]),
        ]
        if rules.isEmpty {
            content.append(E.element("p", [.class("empty")], ["No mock rules."]))
        } else {
            let rows = rules.map { rule in
                return E.element("tr", [], [
                    E.element("td", [], [.text("#\(rule.id)")]),
                    E.element("td", [], [.text(rule.isEnabled ? "on" : "off")]),
                    E.element("td", [.class("num")], [.text(String(rule.status))]),
                    E.element("td", [.class("num")], [.text(String(rule.hits))]),
                    E.element("td", [.class("url")], [.text("\(rule.method) \(rule.urlPattern)"),
                                                      E.element("span", [.class("subtitle")], [.text(rule.origin)])]),
                    E.element("td", [], [
                        Pages.postForm(action: ConsoleRoute.mockAction(rule.id, rule.isEnabled ? .disable : .enable).path, fields: [],
                                       label: "\(rule.isEnabled ? "Disable" : "Enable") rule \(rule.id)",
                                       button: rule.isEnabled ? "Disable" : "Enable", className: "move", context: context),
                        Pages.postForm(action: ConsoleRoute.mockAction(rule.id, .delete).path, fields: [], label: "Delete rule \(rule.id)", button: "Delete",
                                       className: "delete", context: context),
                    ]),
                ])
            }
            content.append(E.element("div", [.class("table-scroll"), .attribute("tabindex", "0"), .attribute("aria-label", "Mock rules")], [
                E.element("table", [.class("requests")], [
                    E.element("thead", [], [E.element("tr", [], ["#", "State", "Status", "Hits", "Request", "Actions"].map {
                        E.element("th", [.attribute("scope", "col")], [.text($0)])
                    })]),
                    E.element("tbody", [], rows),
                ]),
            ]))
        }
        return DebugPages.page(context, title: "Mock rules", [E.element("div", [.attribute("id", "results")], content)])
    }

    /// The token form of a locked debugger.
    static func loginForm(_ context: ViewContext) -> HTML {
        E.element("form", [.class("search"), .attribute("method", "post"), .attribute("action", ConsoleRoute.login.path)], [
            Pages.csrfField(context),
            E.element("label", [], ["Debug token", E.void("input", [.attribute("type", "password"), .attribute("name", "token"),
                                                                    .attribute("autocomplete", "current-password")])]),
            E.element("button", [.attribute("type", "submit")], ["Open the debugger"]),
        ])
    }

    static func milliseconds(_ seconds: TimeInterval) -> String { String(format: "%.1f ms", seconds * 1000) }
}
