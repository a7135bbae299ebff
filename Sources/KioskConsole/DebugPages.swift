import Foundation
import KioskApp
import KioskCore
import KioskDebugger
import KioskWeb

/// The network debugger's HTML: the request list and one request in full, in the page's language
/// (`ConsoleWords`); like every page it is built with `HTML`, so captured URLs, headers and bodies —
/// upstream strings all — are escaped by construction.
enum DebugPages {
    typealias E = HTML

    /// `/debug`: filters, search and the newest requests first. `eventID` is the live feed's latest event
    /// when the records were read: the page's script follows the feed from there, unless the page is not
    /// `live` (paging back through older requests). Without `catalogs` (a proxy's console whose log holds no catalog's
    /// request) the reader's filters — its sources, its pictures — are left out: they would select nothing.
    static func requests(_ records: [RequestRecord], query: DebugFilterQuery, count: Int, newestCounted: Int64 = 0, paused: Int = 0,
                         proxyOffline: Bool = false, eventID: DebugEvents.EventID, isRecording: Bool = true, unlogged: Int = 0, live: Bool,
                         hosts: [String] = [], catalogs: Bool = true, inFlight: [ExchangesInFlight.Exchange] = [],
                         pausedRows: [PausedExchange] = [], now: Date = Date(), context: ViewContext) -> HTML {
        let filter = query.filter
        let w = context.words
        // The filter form stays outside the results, which the script swaps as the filter is typed.
        // An offline proxy answers every app from its cache, or with a 504: said where the 504s are read, not only on the
        // proxy's page where it was switched.
        let offline: HTML = proxyOffline ? E.element("p", [.class("banner offline")], [
            .text(w.proxyIsOffline), E.element("a", [Attribute.localHref(ConsoleRoute.proxy.path)], [.text(w.goOnline)]),
        ]) : .empty
        let header: [HTML] = [E.element("h1", [], [.text(w.networkDebugger)]), pausedBanner(paused, w), offline,
                              filterForm(query, hosts: hosts, catalogs: catalogs, context: context)]
        var content: [HTML] = [
            E.element("p", [.class("status")], [
                live ? E.element("span", [.attribute("id", "live-status"), .attribute("role", "status"), .class("live")], [.text(w.live)])
                    : .empty,
                // (The newest id counted: the live feed counts on from it, each record once.)
                E.element("span", [.attribute("id", "log-count"), .attribute("data-count", String(count)),
                                   .attribute("data-newest", String(newestCounted))],
                          [.text(w.requestsLogged(count))]),
                .text(w.logNotes),
                E.element("a", [Attribute.localHref(ConsoleRoute.apiRequests.path(query.queryString))], ["JSON"]), " · ",
                E.element("a", [Attribute.localHref(ConsoleRoute.har.path(query.queryString))], [.text(w.exportHAR)]), " · ",
                E.element("a", [Attribute.localHref(ConsoleRoute.insights.path)], [.text(w.insights)]), " · ",
                E.element("a", [Attribute.localHref(ConsoleRoute.mocks.path)], [.text(w.mockRules)]), " · ",
                E.element("a", [Attribute.localHref(ConsoleRoute.rules.path)], [.text(w.rewriteRules)]), " · ",
                E.element("a", [Attribute.localHref(ConsoleRoute.endpoints.path)], [.text(w.endpoints)]), " · ",
                E.element("a", [Attribute.localHref(ConsoleRoute.proxy.path)], [.text(w.proxy)]),
            ]),
            isRecording ? .empty : E.element("p", [.class("banner offline"), .attribute("role", "status")], [.text(w.recordingPaused)]),
            unlogged == 0 ? .empty : E.element("p", [.attribute("id", "unlogged-banner"), .class("banner offline"), .attribute("role", "status")],
                                               [.text(w.requestsUnlogged(unlogged))]),
            E.element("div", [.class("console-actions")], [
                chips(query, catalogs: catalogs, w),
                // A button that says what it does next, its name changing with it: not also a pressed toggle, whose
                // "Resume recording, pressed" would leave a listener to guess which state is meant (WAI-ARIA's button
                // pattern: a toggle keeps its name).
                Pages.postForm(action: ConsoleRoute.recording.path, fields: [("record", isRecording ? "off" : "on")],
                               label: isRecording ? w.pauseRecording : w.resumeRecording,
                               button: .text(isRecording ? w.pauseRecording : w.resumeRecording), className: "mock",
                               context: context),
                Pages.postForm(action: ConsoleRoute.clear.path, fields: [], label: w.clearLabel, button: .text(w.clear),
                               className: "mock delete", attributes: [.attribute("data-confirm", w.clearConfirm)],
                               context: context),
            ]),
            filterNotice(query, w),
        ]
        if records.isEmpty && inFlight.isEmpty && pausedRows.isEmpty {
            if query.syntaxError == nil { content.append(E.element("p", [.class("empty")], [
                .text(count == 0 ? w.nothingLogged : w.noRequestMatches),
            ])) }
        }
        // The table is there even when empty, so that live rows have a home.
        content.append(table(records, inFlight: live ? inFlight : [], paused: live ? pausedRows : [], now: now, w))
        if !records.isEmpty {
            if records.count == filter.limit, let last = records.last {
                var older = query
                older.before = last.id
                content.append(E.element("p", [], [E.element("a", [Attribute.localHref(ConsoleRoute.requests.path(older.queryString)), .attribute("rel", "next")],
                                                               [.text(w.olderRequests)])]))
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
        return DebugPages.page(context, title: w.networkDebugger, header + [
            Pages.split(content, revalidating: false, announcesChanges: false, className: "split console",
                        attributes: [.attribute("data-debug-list", "true"), events.flatMap { Attribute.localPath("data-events", $0) }],
                        context: context),
        ])
    }

    /// "2 requests are paused at a breakpoint. Decide" — always in the page (hidden at 0), so the live
    /// feed can show it.
    static func pausedBanner(_ paused: Int, _ w: ConsoleWords) -> HTML {
        E.element("p", [.attribute("id", "paused-banner"), .class("banner offline"), .attribute("role", "alert"),
                        paused == 0 ? .flag("hidden") : nil], [
            E.element("span", [.attribute("data-count", String(paused))],
                      [.text(w.pausedCount(paused))]),
            E.element("a", [Attribute.localHref(ConsoleRoute.paused.path)], [.text(w.decide)]),
        ])
    }

    /// One-click filters over the filter language (what DevTools calls Fetch/XHR, Img…): each a link to the list
    /// with its filter, marked when it is the filter applied; All clears it.
    static func chips(_ query: DebugFilterQuery, catalogs: Bool = true, _ w: ConsoleWords) -> HTML {
        let applied = query.filter.inLanguage
        let reader: [(String, String)] = catalogs ? [(w.chipAPI, "-endpoint:image"), (w.chipPictures, "endpoint:image")] : []
        let chips: [(String, String)] = [(w.chipAll, "")] + reader + [(w.chipStore, "cache:hit"), (w.chipErrors, "status:4xx,5xx,error")]
        return E.element("nav", [.class("chips"), .attribute("aria-label", w.quickFilters)], [
            E.element("ul", [], chips.map { label, filter in
                let canonical = filter.isEmpty ? "" : ((try? RequestFilter(parsing: filter))?.inLanguage ?? filter)
                return E.element("li", [], [
                    E.element("a", [Attribute.localHref(ConsoleRoute.requests.path(QueryString(["filter": filter]))),
                                    canonical == applied ? .attribute("aria-current", "true") : nil], [.text(label)]),
                ])
            }),
        ])
    }

    /// The filter box and menus; `hosts` are the hosts apps reached lately (a proxy's), offered in a menu of their own
    /// when there are any.
    static func filterForm(_ query: DebugFilterQuery, hosts: [String] = [], catalogs: Bool = true, context: ViewContext) -> HTML {
        let w = context.words
        // Each menu names the filter language's key it sets, whose terms the script takes out of the box when it is chosen.
        // `current` is the menu's value; `chosen` whether the menu itself chose it, else it shows the box's term, and a hidden
        // field says so (`DebugFilterQuery`: sent back unchanged, the box's term stands).
        func select(_ name: StaticString, _ label: String, _ current: String?, chosen: Bool, _ options: [(String, String)], key: FilterKey) -> HTML {
            let current = current ?? ""
            return .group([
                E.element("label", [], [.text(label), E.element("select", [.attribute("name", String(describing: name)),
                                                                            .attribute("data-filter-key", key.rawValue)],
                    [E.element("option", [.attribute("value", "")], [.text(w.any)])] + options.map { value, text in
                        E.element("option", [.attribute("value", value), value == current ? .flag("selected") : nil], [.text(text)])
                    })]),
                chosen || current.isEmpty ? .empty
                    : E.void("input", [.attribute("type", "hidden"), .attribute("name", "shown_\(name)"), .attribute("value", current)]),
            ])
        }
        return E.element("form", [.class("search"), .attribute("method", "get"), .attribute("action", ConsoleRoute.requests.path),
                                  .attribute("role", "search"), .attribute("data-live-filter", "")], [
            filterField(query, w),
            // A source asked for stays offered, as a host does.
            catalogs || query.source != nil
                ? select("source", w.source, query.menuSource, chosen: query.source != nil, SourceID.allCases.map { ($0.rawValue, context.sourceName($0)) }, key: .source)
                : .empty,
            // The host asked for stays offered though it has left the menu's most recent ones.
            hosts.isEmpty && query.menuHost == nil ? .empty
                : select("host", w.host, query.menuHost, chosen: query.host != nil, (query.menuHost.map { hosts.contains($0) ? [] : [$0] } ?? []).map { ($0, $0) }
                         + hosts.map { ($0, $0) }, key: .host),
            select("status", w.status, query.menuStatus, chosen: query.status != nil,
                   StatusClass.filterable.map { ($0.description, $0 == .error ? w.noResponse : $0 == .store ? w.store : $0.description) },
                   key: .status),
            select("decision", w.cacheDecision, query.menuDecision, chosen: query.decision != nil, CacheDecision.allCases.map { ($0.rawValue, $0.rawValue) }, key: .cache),
            E.element("label", [], [.text(w.slowerThan),
                                    E.void("input", [.attribute("type", "number"), .attribute("name", "min_ms"), .attribute("min", "0"),
                                                     .attribute("value", query.minMillisecondsText),
                                                     .attribute("data-filter-key", FilterKey.slow.rawValue)])]),
            E.element("button", [.attribute("type", "submit")], [.text(w.filter)]),
        ])
    }

    /// The request list as DevTools' Network panel has it: the name (method and path) first and the host apart,
    /// then narrow columns. The classes let the stylesheet make each row two lines on a phone (method, status and
    /// path; host, time, duration and size below) and keep only the name and status beside an open request.
    /// `paused` (exchanges held at breakpoints) and `inFlight` (exchanges not yet ended) are listed first, in that order (the
    /// live feed keeps them as they are).
    static func table(_ records: [RequestRecord], inFlight: [ExchangesInFlight.Exchange] = [], paused: [PausedExchange] = [],
                      now: Date = Date(), _ w: ConsoleWords) -> HTML {
        let columns: [(String, String)] = [(w.name, "name"), (w.status, "st"), (w.host, "host"), (w.type, "type"), (w.size, "num size"),
                                           (w.time, "time"), (w.duration, "num dur"), (w.cache, "cache"), (w.waterfall, "wf"),
                                           (w.failureColumn, "failure")]
        return E.element("div", [.class("table-scroll"), .attribute("tabindex", "0"), .attribute("aria-label", w.requests)], [
            E.element("table", [.class("requests")], [
                E.element("thead", [], [E.element("tr", [], columns.map { name, className in
                    E.element("th", [.attribute("scope", "col"), .class(className)], [.text(name)])
                })]),
                E.element("tbody", [], paused.map { pausedRow($0, now: now, w) } + inFlight.map { inFlightRow($0, w) } + records.map { row($0, w) }),
            ]),
        ])
    }

    /// A URL's path and query as written (its fragment left out; "/" for none), read from its text rather than parsed:
    /// a logged URL holds `<redacted>` where a secret was, which a parse would take as a cue to escape the whole query
    /// again (`q=caf%C3%A9` shown as `q=caf%25C3%25A9`). Text that is no absolute URL is shown whole.
    static func pathAndQuery(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        guard let start = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) else { return "/" }
        var tail = rest[start...]
        if let hash = tail.firstIndex(of: "#") { tail = tail[..<hash] }
        return tail.isEmpty ? "/" : tail.hasPrefix("?") ? "/" + tail : String(tail)
    }

    /// What a row names after the method: the path and query, or a CONNECT tunnel's target, its host and port (what the
    /// app asked to be connected to, as Charles and mitmproxy show it; it has no path).
    static func target(method: String, url: String) -> String {
        guard method == "CONNECT", let schemeEnd = url.range(of: "://") else { return pathAndQuery(url) }
        let rest = url[schemeEnd.upperBound...]
        return String(rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" })
    }

    /// One request's row: the page's rows and the live feed's are made here. Its name links to the request, in
    /// the split view's pane on a wide screen; its time is UTC until the script says it in local time; its
    /// waterfall cell carries the start (ms since 1970) and the phases (queued, connect, first byte, download,
    /// total, in ms; empty when not measured), which the script draws to the scale of the rows in view.
    static func row(_ record: RequestRecord, _ w: ConsoleWords) -> HTML {
        let url = URLComponents(string: record.url)
        let path = target(method: record.method, url: record.url)
        return E.element("tr", [.attribute("data-id", String(record.id)), record.status == nil && !record.isAnsweredFromStore ? .class("failed") : nil], [
            E.element("td", [.class("name")], [
                E.element("a", [Attribute.localHref(ConsoleRoute.request(record.id).path), .attribute("data-pane", ""),
                                .attribute("title", "#\(record.id) \(record.method) \(record.url)")], [
                    E.element("span", [.class("method")], [.text(record.method)]), " ",
                    E.element("span", [.class("path")], [.text(path)]),
                ]),
            ]),
            statusCell(record, w),
            E.element("td", [.class("host")], [.text(url?.host.map { host in url?.port.map { "\(host):\($0)" } ?? host } ?? "")]),
            E.element("td", [.class("type")], [.text(contentType(record) ?? "")]),
            E.element("td", [.class("num size")], [.text(record.responseSize.map { byteCount(Int64($0), w) } ?? "")]),
            E.element("td", [.class("time")], [localTime(record.startedAt, style: .time)]),
            E.element("td", [.class("num dur")], [.text(milliseconds(record.timings.total, w))]),
            E.element("td", [.class("cache")], [cacheBadge(record.cacheStatus)]),
            E.element("td", [.class("wf")] + waterfallData(record, w), []),
            E.element("td", [.class("failure")], [.text(record.error ?? "")]),
        ])
    }

    /// The row of an exchange in flight, as a record's row has it as far as it is known: no link (there is no record
    /// yet), "pending" until its answer's head comes, then its status, and the bytes of a streamed body so far. Its
    /// duration cell carries the time in flight when it was read (`data-elapsed`, ms), which the script counts on from.
    static func inFlightRow(_ exchange: ExchangesInFlight.Exchange, _ w: ConsoleWords) -> HTML {
        let url = URLComponents(string: exchange.url)
        let elapsed = exchange.elapsed.seconds
        return E.element("tr", [.attribute("data-inflight", String(exchange.id)), .class("pending")], [
            E.element("td", [.class("name")], [
                E.element("span", [.attribute("title", "\(w.inFlightNote): \(exchange.method) \(exchange.url)")], [
                    // (What the title says, for those who get no tooltip: a screen reader, a phone.)
                    E.element("span", [.class("visually-hidden")], [.text(w.inFlightNote + ": ")]),
                    E.element("span", [.class("method")], [.text(exchange.method)]), " ",
                    E.element("span", [.class("path")], [.text(target(method: exchange.method, url: exchange.url))]),
                ]),
            ]),
            exchange.status.map { E.element("td", [.class("st st\($0 / 100)")], [.text(String($0))]) }
                ?? E.element("td", [.class("st st-pending")], [.text(w.pending)]),
            E.element("td", [.class("host")], [.text(url?.host.map { host in url?.port.map { "\(host):\($0)" } ?? host } ?? "")]),
            E.element("td", [.class("type")], [.text(exchange.contentType.flatMap(shortType) ?? "")]),
            E.element("td", [.class("num size")], [.text(exchange.received.map { byteCount(Int64($0), w) + "…" } ?? "")]),
            E.element("td", [.class("time")], [localTime(exchange.startedAt, style: .time)]),
            E.element("td", [.class("num dur"), .attribute("data-elapsed", String(Int(elapsed * 1000)))],
                      [.text("\(Int(elapsed)) s…")]),
            E.element("td", [.class("cache")], []),
            E.element("td", [.class("wf")], []),
            E.element("td", [.class("failure")], [.text(exchange.appClosed ? w.appGoneInFlight : "")]),
        ])
    }

    /// The row of an exchange held at a breakpoint: its name leads to the pause, where it is decided; "paused" in place of
    /// a status (the upstream's, at a response breakpoint, after it); its time held counting (`data-elapsed`, ms).
    static func pausedRow(_ paused: PausedExchange, now: Date, _ w: ConsoleWords) -> HTML {
        let url = URLComponents(string: paused.url)
        let elapsed = max(0, now.timeIntervalSince(paused.pausedAt))
        return E.element("tr", [.attribute("data-inflight", "p\(paused.id)"), .class("pending paused")], [
            E.element("td", [.class("name")], [
                E.element("a", [Attribute.localHref(ConsoleRoute.pausedExchange(paused.id).path),
                                .attribute("title", "\(w.pausedRowNote): \(paused.method) \(paused.url)")], [
                    E.element("span", [.class("visually-hidden")], [.text(w.pausedRowNote + ": ")]),
                    E.element("span", [.class("method")], [.text(paused.method)]), " ",
                    E.element("span", [.class("path")], [.text(pathAndQuery(paused.url))]),
                ]),
            ]),
            E.element("td", [.class("st st-pending")], [.text(w.pausedRowStatus + (paused.status.map { " · \($0)" } ?? ""))]),
            E.element("td", [.class("host")], [.text(url?.host.map { host in url?.port.map { "\(host):\($0)" } ?? host } ?? "")]),
            E.element("td", [.class("type")], []),
            E.element("td", [.class("num size")], []),
            E.element("td", [.class("time")], [localTime(paused.pausedAt, style: .time)]),
            E.element("td", [.class("num dur"), .attribute("data-elapsed", String(Int(elapsed * 1000)))], [.text("\(Int(elapsed)) s…")]),
            E.element("td", [.class("cache")], []),
            E.element("td", [.class("wf")], []),
            E.element("td", [.class("failure")], [.text(paused.appClosed ? w.appGoneInFlight : "")]),
        ])
    }

    /// A response's media type without its parameters, shortened as DevTools does ("json", "jpeg", "html").
    static func contentType(_ record: RequestRecord) -> String? {
        guard let value = record.responseHeaders.first(where: { HTTPHeaderFields.sameName($0.name, "Content-Type") })?.value
        else { return nil }
        return shortType(value)
    }

    /// A Content-Type value shortened as DevTools does ("json", "jpeg", "html"); nil for an empty one.
    static func shortType(_ value: String) -> String? {
        let type = HTTPSyntax.mediaType(value)
        guard !type.isEmpty else { return nil }
        let subtype = type.split(separator: "/").last.map(String.init) ?? type
        // "vnd.api+json" reads as "json".
        return subtype.split(separator: "+").last.map(String.init) ?? subtype
    }

    /// How a time is shown: of the day (a list's row), or date and time (a request's page).
    enum TimeStyle: String { case time, dateTime = "datetime" }

    /// A `<time>` in UTC, which the script says again in the browser's time zone and the page's language.
    static func localTime(_ date: Date, style: TimeStyle) -> HTML {
        let text = style == .time ? date.formatted(timeOfDay) : date.formatted(dateAndTime)
        return E.element("time", [.attribute("datetime", date.formatted(.iso8601)), .attribute("data-local", style.rawValue)],
                         [.text(text + " UTC")])
    }

    /// What the script draws a waterfall bar from: the start (ms since 1970) and the phases (queued,
    /// connect, first byte, download, total, in ms; empty when not measured); the phases in words for
    /// assistive technology.
    static func waterfallData(_ record: RequestRecord, _ w: ConsoleWords) -> [Attribute?] {
        let timings = record.timings
        let phases = [timings.queued, timings.connect, timings.firstByte, timings.download, Optional(timings.total)]
            .map { $0.map { String(format: "%.3f", $0 * 1000) } ?? "" }.joined(separator: ",")
        return [.attribute("data-start", String(format: "%.3f", record.startedAt.timeIntervalSince1970 * 1000)),
                .attribute("data-phases", phases), .attribute("aria-label", phaseSummary(timings, w))]
    }

    /// The time of day, and the date and time, in UTC (what a page says before its script runs, and without it).
    private static let timeOfDay = Date.VerbatimFormatStyle(format: "\(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits)",
                                                            timeZone: TimeZone(identifier: "UTC")!, calendar: Calendar(identifier: .gregorian))
    private static let dateAndTime = Date.VerbatimFormatStyle(format: "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits)",
                                                              timeZone: TimeZone(identifier: "UTC")!, calendar: Calendar(identifier: .gregorian))

    /// "queued 2 ms, connect 10 ms, first byte 80 ms, download 5 ms": the phases measured, for the waterfall's label.
    static func phaseSummary(_ timings: RequestTimings, _ w: ConsoleWords) -> String {
        let phases: [(String, TimeInterval?)] = [(w.queued, timings.queued), (w.connect, timings.connect),
                                                 (w.firstByte, timings.firstByte), (w.download, timings.download)]
        let measured = phases.compactMap { name, value in value.map { "\(name) \(milliseconds($0, w))" } }
        return measured.isEmpty ? "\(w.total) \(milliseconds(timings.total, w))" : measured.joined(separator: ", ")
    }

    /// The status, "store" for an answer that made no exchange, "failed" for an exchange that got no response.
    static func statusCell(_ record: RequestRecord, _ w: ConsoleWords) -> HTML {
        if let status = record.status { return E.element("td", [.class("st st\(status / 100)")], [.text(String(status))]) }
        return record.isAnsweredFromStore ? E.element("td", [.class("st st-store")], [.text(w.store)])
            : E.element("td", [.class("st st0")], [.text(w.failed)])
    }

    /// `/debug/requests/{id}`: everything about one exchange.
    /// `breakpoint` is what a breakpoint for the record's requests is set on (`Debugger.breakpointKey`) and its setting, nil
    /// when it can have none.
    /// `replayRefusal`: why the request cannot be sent again unchanged (said in place of Replay), nil when it can.
    /// `connectOverrides`: the origins this process reaches elsewhere (the demo upstream's), for the cURL to reach them too.
    static func request(_ record: RequestRecord, previous: Int64? = nil, breakpoint: (key: String, setting: BreakpointSetting)? = nil,
                        replayRefusal: ResendProblem? = nil, connectOverrides: [Origin: Origin] = [:], context: ViewContext) -> HTML {
        let w = context.words
        var content: [HTML] = [
            backToRequests(w),
            E.element("h1", [], [.text("#\(record.id) \(record.method) \(record.endpoint)")]),
            E.element("p", [.class("url")], [.text(record.url)]),
        ]
        var facts: [(String, String)] = [
            (w.source, record.source.map(context.sourceName) ?? "—"),
            (w.status, record.status.map(String.init) ?? (record.isAnsweredFromStore ? w.answeredFromStore : w.failed)),
        ] + (record.httpVersion.map { [(w.httpProtocol, $0)] } ?? []) + cacheFacts(record.cacheStatus, w)
        if let error = record.error { facts.append((w.error, error)) }
        facts += phaseFacts(record.timings, w).compactMap { name, value in value.map { (name, milliseconds($0, w)) } }
        content.append(E.element("dl", [.class("facts")], [E.element("dt", [], [.text(w.started)]),
                                                           E.element("dd", [], [localTime(record.startedAt, style: .dateTime)])]
            + facts.flatMap { name, value in
                [E.element("dt", [], [.text(name)]), E.element("dd", [!record.isAnsweredFromStore && name == w.status ? .class("st0") : nil], [.text(value)])]
            }))
        content.append(E.element("div", [.class("timeline")], [
            // A picture of the phases: its label says them in words.
            E.element("div", [.class("wf"), .attribute("role", "img")] + waterfallData(record, w), []),
            // The classes are the script's phase names; the words are the page's.
            E.element("p", [.class("legend"), .attribute("aria-hidden", "true")],
                      [("queued", w.queued), ("connect", w.connect), ("wait", w.firstByte), ("download", w.download)].map { phase, name in
                E.element("span", [.class(phase)], [.text(name)])
            }),
        ]))
        if record.status != nil, let body = record.responseBody, !body.isTruncated {
            content.append(Pages.postForm(action: ConsoleRoute.mockFrom(record.id).path, fields: [],
                                          label: w.mockThisResponseLabel, button: .text(w.mockThisResponse), className: "mock", context: context))
        }
        if record.status != nil || record.error != nil { content.append(makeRuleButton(record, w)) }
        content.append(resendButtons(record, replayRefusal: replayRefusal, context: context))
        if let breakpoint { content.append(breakpointButton(breakpoint.key, breakpoint.setting, context: context)) }
        if record.status != nil { content.append(compareSection(record, previous: previous, w)) }
        content.append(touchedBy(record, w))
        // (A tunnel's or a WebSocket's bytes were passed on unread: there is no request for curl to send again.)
        let curl: [HTML] = record.isTunnel ? [] : [
            E.element("h2", [], [.text(w.asCurl)]),
            // Shown by the script, which can copy (the clipboard needs it).
            E.element("button", [.attribute("type", "button"), .class("copy"), .attribute("data-copy", "curl-\(record.id)"),
                                 .attribute("aria-label", w.copyCurl), .flag("hidden")], [.text(w.copy)]),
            E.element("pre", [.class("raw"), .attribute("id", "curl-\(record.id)"), .attribute("tabindex", "0")], [.text(HAR.curl(record, connectOverrides: connectOverrides))]),
        ]
        content.append(E.element("section", [], curl + [
            // This exchange alone as an HTTP Archive: the list's export, of the one record before the next id.
            E.element("p", [], [E.element("a", [Attribute.localHref(ConsoleRoute.har.path(QueryString(["before": String(record.id + 1), "limit": "1"]))),
                                                .attribute("download", "kiosk-request-\(record.id).har")], [.text(w.exportHAR)])]),
        ]))
        content.append(headers(w.requestHeaders, record.requestHeaders, w))
        content.append(headers(w.responseHeaders, record.responseHeaders, w))
        let coding = { (fields: [RequestRecord.HeaderField]) in RequestRecord.HeaderField.combined("Content-Encoding", in: fields) }
        let type = { (fields: [RequestRecord.HeaderField]) in fields.first { HTTPHeaderFields.sameName($0.name, "Content-Type") }?.value }
        if let body = record.requestBody {
            content.append(bodySection(w.requestBody, body, w, contentEncoding: coding(record.requestHeaders), contentType: type(record.requestHeaders)))
        }
        if let body = record.responseBody {
            content.append(bodySection(w.responseBody, body, w, contentEncoding: coding(record.responseHeaders),
                                       contentType: type(record.responseHeaders)))
        }
        return DebugPages.page(context, title: w.requestTitle(record.id), [E.element("article", [.class("detail debug")], content)])
    }

    static func headers(_ title: String, _ fields: [RequestRecord.HeaderField], _ w: ConsoleWords) -> HTML {
        E.element("section", [], [
            E.element("h2", [], [.text(title)]),
            fields.isEmpty ? E.element("p", [.class("status")], [.text(w.none)]) :
                E.element("dl", [.class("facts headers")], fields.flatMap { field in
                    [E.element("dt", [], [.text(field.name)]), E.element("dd", [], [.text(field.value)])]
                }),
        ])
    }

    /// A body: a collapsible tree when it is JSON (keys in their order, arrays indexed), else its text. `storedWhole` says
    /// a body cut here is kept whole elsewhere (a stored answer), where the log's was cut at capture.
    static func bodySection(_ title: String, _ body: CapturedBody, _ w: ConsoleWords, storedWhole: Bool = false,
                            contentEncoding: String? = nil, contentType: String? = nil) -> HTML {
        // A body kept as sent in a coding Kiosk can undo (gzip, deflate, br) is shown as its content, as DevTools shows it.
        let (shown, coding) = body.decoded(contentEncoding: contentEncoding)
        let json = BodyJSON(shown, contentType: contentType)
        var note = w.bytes(shown.originalSize)
        if let coding { note += w.decodedFrom(coding, body.originalSize) }
        if coding != nil, shown.isTruncated { note += w.decodedShownFirst(shown.data.count) }
        if body.isWithheld {
            note += w.withheld(ContentCoding.single(contentEncoding))
        } else if body.isTruncated {
            note += storedWhole ? w.shownFirst(body.data.count) : w.truncatedTo(body.data.count)
        }
        let body = shown
        var parts: [HTML] = [E.element("h2", [], [.text(title)]), E.element("p", [.class("status")], [.text(note)])]
        if !body.isTruncated, let tree = try? OrderedJSON.parse(body.data) {
            var budget = maximumTreeNodes
            parts.append(E.element("div", [.class("json-tree")], [node(key: nil, tree, depth: 0, budget: &budget)]))
            if budget <= 0 { parts.append(E.element("p", [.class("status")], [.text(w.treeCut)])) }
            if budget > 0 { return E.element("section", [], parts) }
        }
        parts.append(E.element("pre", [.class("raw"), .attribute("tabindex", "0")], [.text(json.text ?? w.binary + (json.base64 ?? ""))]))
        return E.element("section", [], parts)
    }

    /// A paused body as its editor shows it: JSON laid out, any other text as it came.
    static func editable(_ text: String) -> String {
        (try? OrderedJSON.parse(text).rendered()) ?? text
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
        let w = context.words
        var content: [HTML] = [
            backToRequests(w),
            E.element("h1", [], [.text(w.pausedRequests)]),
            E.element("p", [.class("status")], [
                .text(w.pausedIntro),
                E.element("a", [Attribute.localHref(ConsoleRoute.endpoints.path)], [.text(w.switchesOnEndpoints)]),
            ]),
        ]
        if exchanges.isEmpty {
            content.append(E.element("p", [.class("empty")], [.text(w.nothingPaused)]))
        } else {
            content.append(E.element("ul", [.class("items")], exchanges.map { exchange in
                E.element("li", [.attribute("data-id", String(exchange.id))], [
                    E.element("a", [Attribute.localHref(ConsoleRoute.pausedExchange(exchange.id).path)], [
                        E.element("span", [.class("text")], [
                            E.element("span", [.class("title")], [.text("#\(exchange.id) \(exchange.endpoint) — \(w.pausedAt(exchange.phase))")]),
                            E.element("span", [.class("subtitle url")], [.text("\(exchange.method) \(exchange.url)")]),
                            E.element("span", [.class("subtitle")], countdown(exchange.appClosed ? w.appGoneAbortsIn : w.continuesIn,
                                                                              seconds: max(0, Int(exchange.deadline.timeIntervalSince(now))))),
                        ]),
                    ]),
                ])
            }))
        }
        // The list follows the console's feed: a pause beginning or ending reads it again (debug.js).
        return DebugPages.page(context, title: w.pausedRequests, [
            E.element("div", [.attribute("id", "results"), .attribute("data-debug-list", "true"), .attribute("data-reload-on-paused", "true"),
                              Attribute.localPath("data-events", ConsoleRoute.events.path)], content),
        ])
    }

    /// `phrase` said of `seconds`, the number in a span the console's script counts down each second (debug.js): a
    /// list left open goes on saying how long is left, as the in-flight list's durations go on counting.
    static func countdown(_ phrase: (String) -> String, seconds: Int) -> [HTML] {
        let marker = "\u{1}"
        let parts = phrase(marker).components(separatedBy: marker)
        let number = E.element("span", [.class("countdown"), .attribute("data-remaining", String(seconds))], [.text(String(seconds))])
        return [.text(parts[0]), number, .text(parts.dropFirst().joined())]
    }

    /// `/debug/paused/{id}`: one paused exchange with the forms that end the pause. `error` is why an edit
    /// was refused (shown with the edit as it was typed, `draft`).
    /// What an edit sent after its request went on (its timeout, another tab's decision) gets: the request is not paused
    /// any more, and what was typed is shown to copy rather than lost.
    static func pauseEnded(_ id: Int, draft: PauseDecisionForm, context: ViewContext) -> HTML {
        let w = context.words
        var content: [HTML] = [
            E.element("p", [.class("back")], [E.element("a", [Attribute.localHref(ConsoleRoute.paused.path)], [.text(w.backToPaused)])]),
            E.element("h1", [], [.text("#\(id)")]),
            E.element("p", [.class("banner error"), .attribute("role", "alert")], [.text(w.notPausedAnyMore(Int64(id)))]),
        ]
        let typed = [draft.method, draft.path, draft.status, draft.query.isEmpty ? nil : draft.query, draft.headers, draft.body]
            .compactMap { $0 }.filter { !$0.isEmpty }
        if draft.action == .edit, !typed.isEmpty {
            content.append(E.element("p", [], [.text(w.editNotSent)]))
            content.append(E.element("textarea", [.attribute("readonly", ""), .attribute("rows", "16"), .attribute("spellcheck", "false"),
                                                  .attribute("aria-label", w.editNotSent)], [.text(typed.joined(separator: "\n\n"))]))
        }
        return DebugPages.page(context, title: "#\(id)", content)
    }

    static func pausedExchange(_ exchange: PausedExchange, error: String?, draft: PauseDecisionForm?, context: ViewContext) -> HTML {
        let w = context.words
        var content: [HTML] = [
            E.element("p", [.class("back")], [E.element("a", [Attribute.localHref(ConsoleRoute.paused.path)], [.text(w.backToPaused)])]),
            E.element("h1", [], [.text("#\(exchange.id) \(exchange.endpoint): \(w.pausedAt(exchange.phase))")]),
            E.element("p", [.class("url")], [.text("\(exchange.method) \(exchange.url)")]),
        ]
        if let error {
            content.append(E.element("p", [.class("banner error"), .attribute("role", "alert")], [.text(w.notSent(error))]))
        }
        if let failure = exchange.error {
            content.append(E.element("p", [.class("banner error")], [.text(w.requestFailed(failure))]))
        }
        if exchange.appClosed { content.append(E.element("p", [.class("banner")], [.text(w.pausedAppClosed)])) }
        let action = ConsoleRoute.pausedExchange(exchange.id).path
        func button(_ value: String, _ label: String) -> HTML {
            E.element("button", [.attribute("type", "submit"), .attribute("name", "action"), .attribute("value", value)], [.text(label)])
        }
        func input(_ name: StaticString, _ label: String, _ value: String, class: String) -> HTML {
            E.element("label", [.class(`class`)], [.text(label), E.void("input", [.attribute("name", "\(name)"), .attribute("value", value),
                .attribute("spellcheck", "false"), .attribute("autocapitalize", "off"), .attribute("autocomplete", "off")])])
        }
        func headerLines(_ fields: [RequestRecord.HeaderField]) -> String {
            fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
        }
        func textarea(_ name: StaticString, _ label: String, _ text: String, rows: Int) -> HTML {
            E.element("label", [.class("editor")], [.text(label),
                E.element("textarea", [.attribute("name", "\(name)"), .attribute("rows", String(rows)), .attribute("spellcheck", "false")],
                          [.text(text)])])
        }
        // Sending unchanged and aborting post a form of their own, not the editor's: they never depend on what the
        // editor holds (a body a form cannot carry, a query item with a control character).
        let decisionForm = "decision-\(exchange.id)"
        func decision(_ value: String, _ label: String) -> HTML {
            E.element("button", [.attribute("type", "submit"), .attribute("name", "action"), .attribute("value", value),
                                 .attribute("form", decisionForm)], [.text(label)])
        }
        var fields: [HTML] = [Pages.csrfField(context)]
        switch exchange.phase {
        case .request:
            let query = URLComponents(string: exchange.url)?.queryItems?.map { "\($0.name)=\($0.value ?? "")" }.joined(separator: "\n") ?? ""
            fields.append(E.element("div", [.class("request-line")], [
                input("method", w.methodEditor, draft?.method ?? exchange.method, class: "method"),
                input("path", w.pathEditor, draft?.path ?? exchange.path, class: "path"),
            ]))
            fields.append(textarea("query", w.queryEditor, draft?.query ?? query, rows: 6))
            fields.append(textarea("headers", w.headersEditor, draft?.headers ?? headerLines(exchange.requestHeaders), rows: 4))
            if let text = exchange.requestText {
                let original = editable(text)
                fields.append(textarea("body", w.requestBodyEditor, draft?.body ?? original, rows: 12))
            }
            fields.append(E.element("p", [.class("actions")], [button("edit", w.sendEdited), decision("continue", w.sendUnchanged),
                                                               decision("abort", w.abort)]))
        case .response, .error:
            let original = exchange.responseText.map(editable) ?? ""
            let shown = draft?.body ?? original
            if let reason = BodyNotEditable(exchange, shown: shown, w) {
                fields.append(E.element("p", [.class("banner")], [
                    // (Of a body shown decoded, its content's size: what the editor would hold.)
                    .text(w.bodyNotEditable(DebugPages.byteCount(Int64(exchange.decodedFrom == nil ? exchange.responseSize
                                                                       : (exchange.responseText?.utf8.count ?? 0)), w), reason)),
                ]))
                fields.append(E.element("p", [.class("actions")], [decision("continue", w.sendUnchanged), decision("abort", w.abort)]))
                break
            }
            if let coding = exchange.decodedFrom {
                fields.append(E.element("p", [.class("banner note"), .attribute("role", "note")], [
                    .text(w.shownDecodedForEditing(coding, DebugPages.byteCount(Int64(exchange.responseSize), w))),
                ]))
            }
            // A revalidation's 304 has no body to edit: the page will show the copy it confirmed.
            if exchange.phase == .response, exchange.status == 304, original.isEmpty {
                fields.append(E.element("p", [.class("banner")], [.text(w.pausedNotModified)]))
            }
            fields.append(E.element("label", [], [.text(w.status), E.void("input", [.attribute("type", "number"), .attribute("name", "status"),
                .attribute("min", "100"), .attribute("max", "599"), .attribute("value", draft?.status ?? String(exchange.status ?? 200))])]))
            // An answer made at the error has no fields of its own: the JSON it is edited as says its type.
            let headers = exchange.phase == .response ? headerLines(exchange.responseHeaders) : "Content-Type: application/json"
            fields.append(textarea("headers", w.responseHeadersEditor, draft?.headers ?? headers, rows: 4))
            fields.append(textarea("body", exchange.phase == .error ? w.answerInsteadEditor
                                   : exchange.answersJSON ? w.responseEditor : w.responseTextEditor, shown, rows: 24))
            fields.append(E.element("label", [.class("inline")], [
                E.void("input", [.attribute("type", "checkbox"), .attribute("name", "keep"), .attribute("value", "1")]),
                .text(exchange.phase == .error ? w.keepAnswering : w.keepReturning),
            ]))
            fields.append(E.element("p", [.class("actions")], [
                button("edit", exchange.phase == .error ? w.answerWithThis : w.checkAndSend),
                decision("continue", exchange.phase == .error ? w.failWithError : w.sendUnchanged),
                decision("abort", w.abort),
            ]))
        }
        content.append(E.element("form", [.class("pause-editor"), .attribute("method", "post"), .attribute("action", action)], fields))
        content.append(E.element("form", [.attribute("id", decisionForm), .attribute("method", "post"), .attribute("action", action)],
                                 [Pages.csrfField(context)]))
        // A request not sent yet is edited, not answered: its note says so.
        // Its app gone, the deadline aborts it (as the banner above says), whatever the phase.
        let note = exchange.appClosed ? w.appGoneNote : exchange.phase == .request ? w.requestEditNote : w.editNote
        content.append(E.element("p", [.class("status")], [.text(note), localTime(exchange.deadline, style: .time), "."]))
        return DebugPages.page(context, title: w.pausedTitle(exchange.id), [E.element("article", [.class("detail debug")], content)])
    }

    /// A rule's or a mock's origin in the page's language: its file keeps it in the words it was made with (English).
    static func origin(_ text: String, _ w: ConsoleWords) -> String {
        for (prefix, words) in [("from request #", w.fromRequest), ("from a breakpoint edit of paused #", w.fromBreakpointEdit)]
        where text.hasPrefix(prefix) && text.dropFirst(prefix.count).allSatisfy(\.isNumber) {
            return words(String(text.dropFirst(prefix.count)))
        }
        switch text {
        case "added in the console": return w.addedInConsole
        case "added by hand": return w.addedByHand
        case "added through the JSON API": return w.addedThroughAPI
        default: return text
        }
    }

    /// The most text a paused response's editor holds: posted back form-encoded (up to three bytes a byte), it stays
    /// within `DebugController.maximumEditBytes`.
    static let maximumEditableText = 2 << 20

    /// Why a paused response's body is shown without an editor, or nil when it can be edited.
    enum BodyNotEditable: Sendable, Hashable {
        /// Content-coded (gzip, br...): its text would be the coded bytes.
        case coded(String)
        /// Not UTF-8, or with control characters a form would not carry back.
        case binary
        /// Its text is larger than a form may post back (the limit, written out).
        case tooLarge(String)

        init?(_ exchange: PausedExchange, shown: String, _ w: ConsoleWords) {
            // The error phase edits an answer of the user's own, however the failed one was.
            guard exchange.phase == .response else { return nil }
            if let coding = RequestRecord.HeaderField.combined("Content-Encoding", in: exchange.responseHeaders),
               !exchange.responseIsText, !coding.trimmingCharacters(in: .whitespaces).isEmpty {
                self = .coded(String(coding.prefix(40)))
            } else if !exchange.responseIsText {
                self = .binary
            } else if shown.utf8.count > DebugPages.maximumEditableText {
                self = .tooLarge(DebugPages.byteCount(Int64(DebugPages.maximumEditableText), w))
            } else {
                return nil
            }
        }
    }

    /// `/debug/endpoints`: the registry of every endpoint Kiosk calls.
    /// `hosts`: the hosts apps reached through `kiosk proxy`, each with its breakpoints, after the catalogs' endpoints.
    static func endpoints(_ endpoints: [EndpointDescription], hosts: [SeenEndpoint] = [], settings: [String: BreakpointSetting] = [:],
                          context: ViewContext) -> HTML {
        let w = context.words
        let sections = endpoints.map { endpoint in
            E.element("section", [.class("endpoint"), .attribute("id", endpoint.name)], [
                E.element("h2", [], [.text(endpoint.name)]),
                // The pictures' fetches have no address of their own: any picture's, on the hosts listed.
                E.element("p", [.class("url")], [.text(endpoint.source == nil ? "\(endpoint.method) \(w.pictureAddress) · \(endpoint.host)"
                                                       : "\(endpoint.method) \(endpoint.host)\(endpoint.template)")]),
                E.element("dl", [.class("facts")], [
                    (w.source, endpoint.source.map(context.sourceName) ?? w.anyConfiguredSource), (w.contentType, endpoint.contentType),
                    (w.response, endpoint.responseModel.described(w.responseYields)), (w.cache, w.endpointCaching(endpoint.cachePolicy)),
                    (w.requestHeaders, endpoint.headers.joined(separator: "; ")),
                ].flatMap { name, value in [E.element("dt", [], [.text(name)]), E.element("dd", [], [.text(value)])] }),
                breakpointForm(endpoint.name, settings[endpoint.name] ?? BreakpointSetting(), context: context),
                E.element("p", [], [E.element("a", [Attribute.localHref(ConsoleRoute.requests.path(QueryString(["source": endpoint.source?.rawValue])))],
                                               [.text(w.requestsOf(endpoint.source.map(context.sourceName) ?? w.pictures))])]),
            ])
        }
        let hostSections: [HTML] = hosts.isEmpty ? [] : [
            E.element("h2", [], [.text(w.appHosts)]),
            E.element("p", [.class("status")], [.text(w.appHostsIntro)]),
        ] + hosts.map { host in
            E.element("section", [.class("endpoint"), .attribute("id", host.endpoint)], [
                E.element("h3", [], [.text(host.endpoint)]),
                E.element("p", [.class("status")], [.text(w.exchangesLogged(host.exchanges))]),
                breakpointForm(host.endpoint, settings[host.endpoint] ?? BreakpointSetting(), context: context),
                E.element("p", [], [E.element("a", [Attribute.localHref(ConsoleRoute.requests.path(QueryString(["filter": "host:" + host.endpoint])))],
                                               [.text(w.requestsOf(host.endpoint))])]),
            ] + paths(of: host, settings: settings, context: context))
        }
        // Patterns set from the command line that no listed path is: each still shown, to be seen and turned off.
        let listed = Set(hosts.flatMap { $0.paths.map(\.url) })
        let patterns = settings.keys.filter { Breakpoints.isURLPattern($0) && !listed.contains($0) }.sorted()
        let patternSection: [HTML] = patterns.isEmpty ? [] : [
            E.element("h2", [], [.text(w.urlPatterns)]),
            E.element("p", [.class("status")], [.text(w.urlPatternsIntro)]),
            E.element("ul", [.class("paths")], patterns.map { pattern in
                E.element("li", [.attribute("id", pattern)], [
                    E.element("code", [], [.text(pattern)]),
                    breakpointForm(pattern, settings[pattern] ?? BreakpointSetting(), context: context),
                ])
            }),
        ]
        return DebugPages.page(context, title: w.endpoints, [
            backToRequests(w),
            E.element("h1", [], [.text(w.endpoints)]),
            E.element("p", [.class("status")], [.text(w.endpointsIntro)]),
        ] + (hosts.isEmpty ? sections + patternSection
                // Apps' hosts first when there are any (a `kiosk proxy` user came for them), the catalogs' own after.
                : hostSections + patternSection + [E.element("h2", [], [.text(w.catalogEndpoints)])] + sections))
    }

    /// A host's paths, each folded under its path and count, opening on its own breakpoint switches (open already when
    /// one is on).
    private static func paths(of host: SeenEndpoint, settings: [String: BreakpointSetting], context: ViewContext) -> [HTML] {
        guard !host.paths.isEmpty else { return [] }
        let w = context.words
        let items = host.paths.map { path in
            let setting = settings[path.url] ?? BreakpointSetting()
            // The path as the host's own: what follows the scheme and authority.
            let shown = path.url.components(separatedBy: "://").last.map { $0.drop { $0 != "/" } }.map(String.init) ?? path.url
            return E.element("li", [.attribute("id", path.url)], [
                E.element("details", [setting.isOff ? nil : .flag("open")], [
                    E.element("summary", [], [E.element("code", [], [.text(shown.isEmpty ? "/" : shown)]),
                                              .text(" · " + w.exchangesLogged(path.exchanges))]),
                    breakpointForm(path.url, setting, context: context),
                ]),
            ])
        }
        return [E.element("p", [.class("status")], [.text(w.pathsSeen)]), E.element("ul", [.class("paths")], items)]
            + (host.morePaths > 0 ? [E.element("p", [.class("status")], [.text(w.morePaths(host.morePaths))])] : [])
    }

    /// A request's "Pause this endpoint's requests": its request breakpoint on (until turned off), the others as they
    /// are; or, when it is on already, where to turn it off.
    static func breakpointButton(_ endpoint: String, _ setting: BreakpointSetting, context: ViewContext) -> HTML {
        let w = context.words
        guard setting.request != .pause else {
            return E.element("p", [.class("status")], [
                .text(w.nextRequestPauses),
                E.element("a", [Attribute.localHref(ConsoleRoute.endpoints.path(anchor: endpoint))], [.text(w.endpoints)]),
            ])
        }
        let fields = [("request", BreakpointMode.pause.rawValue), ("response", setting.response.rawValue), ("error", setting.error.rawValue)]
        return Pages.postForm(action: ConsoleRoute.breakpoint(endpoint: endpoint).path, fields: fields,
                              label: w.pauseNextRequest, button: .text(w.pauseNextRequest), className: "mock", context: context)
    }

    /// The three breakpoint switches of an endpoint.
    static func breakpointForm(_ endpoint: String, _ setting: BreakpointSetting, context: ViewContext) -> HTML {
        let w = context.words
        func select(_ name: StaticString, _ label: String, _ mode: BreakpointMode) -> HTML {
            E.element("label", [], [.text(label), E.element("select", [.attribute("name", "\(name)")], BreakpointMode.allCases.map { option in
                E.element("option", [.attribute("value", option.rawValue), option == mode ? .flag("selected") : nil], [.text(w.breakpointMode(option))])
            })])
        }
        return E.element("form", [.class("search"), .attribute("method", "post"),
                                  .attribute("action", ConsoleRoute.breakpoint(endpoint: endpoint).path)], [
            Pages.csrfField(context),
            select("request", w.breakpointOnRequest, setting.request),
            select("response", w.onResponse, setting.response),
            select("error", w.onError, setting.error),
            E.element("button", [.attribute("type", "submit"), .attribute("aria-label", w.saveBreakpoints(endpoint))], [.text(w.save)]),
        ])
    }

    /// The token form of a locked debugger, returning to `returning` (the form asked again after a wrong token), else to
    /// the console page it is shown on.
    static func loginForm(_ context: ViewContext, returning: String? = nil) -> HTML {
        let w = context.words
        // The page the token is asked on is where the console opens once it is given (not always its list).
        let back = returning ?? (context.path.hasPrefix(ConsoleRoute.prefix) && !context.path.hasPrefix(ConsoleRoute.login.path) ? context.path : nil)
        return E.element("form", [.class("search"), .attribute("method", "post"), .attribute("action", ConsoleRoute.login.path)], [
            Pages.csrfField(context),
            back.map { E.void("input", [.attribute("type", "hidden"), .attribute("name", "return"), .attribute("value", $0)]) } ?? .empty,
            E.element("label", [], [.text(w.debugToken), E.void("input", [.attribute("type", "password"), .attribute("name", "token"),
                                                                    .attribute("autocomplete", "current-password")])]),
            E.element("button", [.attribute("type", "submit")], [.text(w.openDebugger)]),
        ])
    }

    /// "‹ All requests": the way back to the list from every console page.
    static func backToRequests(_ w: ConsoleWords) -> HTML {
        E.element("p", [.class("back")], [E.element("a", [Attribute.localHref(ConsoleRoute.requests.path)], [.text(w.allRequests)])])
    }

    static func milliseconds(_ seconds: TimeInterval, _ w: ConsoleWords) -> String { decimal(seconds * 1000, w) + " ms" }
}
