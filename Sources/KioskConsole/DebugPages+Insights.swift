import Foundation
import KioskCore
import KioskWeb

extension DebugPages {
    /// `/debug/insights`: the slowest endpoints (p50/p95 of their upstream exchanges), the bytes each
    /// source brought, and how answers were decided, stale apart from fresh.
    static func insights(_ insights: LogInsights, context: ViewContext) -> HTML {
        let w = context.words
        let decisions = insights.decisions
        let total = max(insights.requests, 1)
        // A share that rounds to 0 % or 100 % but is not (1 of 244, 243 of 244) says so: "< 1 %", "> 99 %".
        func share(_ count: Int) -> String {
            let percent = Double(count) * 100 / Double(total)
            let shown = count > 0 && percent < 0.5 ? "< 1" : count < total && percent >= 99.5 ? "> 99" : String(Int(percent.rounded()))
            return "\(count) (\(shown) %)"
        }
        let slowest = insights.endpoints.first?.p95 ?? 0
        var content: [HTML] = [
            backToRequests(w),
            E.element("h1", [], [.text(w.insights)]),
            E.element("p", [.class("status")], [
                .text(w.overRequests(insights.requests)),
                E.element("a", [Attribute.localHref(ConsoleRoute.apiInsights.path)], ["JSON"]),
            ]),
            E.element("section", [.attribute("aria-labelledby", "decisions")], [
                E.element("h2", [.attribute("id", "decisions")], [.text(w.cacheDecisions)]),
                E.element("dl", [.class("facts insights-decisions")], [
                    (w.freshDecisions, decisions.fresh),
                    (w.staleDecisions, decisions.stale),
                    (w.fromUpstream, decisions.network),
                    (w.mockedOrEdited, decisions.synthetic),
                ].flatMap { label, count in [E.element("dt", [], [.text(label)]), E.element("dd", [], [.text(share(count))])] }),
                E.element("p", [.class("status")], [.text(CacheDecision.allCases.compactMap { decision in
                    decisions.byDecision[decision.rawValue].map { "\(decision.rawValue) \($0)" }
                }.joined(separator: " · "))]),
            ]),
        ]
        content.append(E.element("section", [.attribute("aria-labelledby", "slowest")], [
            E.element("h2", [.attribute("id", "slowest")], [.text(w.slowestEndpoints)]),
            insights.endpoints.isEmpty ? E.element("p", [.class("empty")], [.text(w.noUpstreamYet)]) :
                E.element("div", [.class("table-scroll"), .attribute("tabindex", "0"), .attribute("aria-label", w.slowestEndpoints)], [
                    E.element("table", [.class("requests insights")], [
                        E.element("thead", [], [E.element("tr", [], [w.endpoint, w.requests, "p50", "p95"].map {
                            E.element("th", [.attribute("scope", "col")], [.text($0)])
                        } + [E.element("th", [.attribute("scope", "col"), .class("max")], [.text(w.slowest)]),
                             E.element("th", [.attribute("scope", "col"), .class("wf")], [.text(w.p95ToScale)])])]),
                        E.element("tbody", [], insights.endpoints.map { endpoint in
                            E.element("tr", [], [
                                E.element("th", [.attribute("scope", "row")], breakingAfterDots(endpoint.endpoint)),
                                E.element("td", [.class("num")], [.text(String(endpoint.count))]),
                                E.element("td", [.class("num")], [.text(milliseconds(endpoint.p50, w))]),
                                E.element("td", [.class("num")], [.text(milliseconds(endpoint.p95, w))]),
                                E.element("td", [.class("num max")], [.text(milliseconds(endpoint.maximum, w))]),
                                E.element("td", [.class("wf")], [scaleBar(endpoint.p95, of: slowest)]),
                            ])
                        }),
                    ]),
                ]),
        ]))
        content.append(E.element("section", [.attribute("aria-labelledby", "bytes")], [
            E.element("h2", [.attribute("id", "bytes")], [.text(w.bytesBySource)]),
            E.element("div", [.class("table-scroll"), .attribute("tabindex", "0"), .attribute("aria-label", w.bytesBySource)], [
                E.element("table", [.class("requests insights")], [
                    E.element("thead", [], [E.element("tr", [], [insights.sources.contains { $0.host != nil } ? "\(w.source) / \(w.host)" : w.source,
                                                                   w.requests, w.responseBytes].map {
                        E.element("th", [.attribute("scope", "col")], [.text($0)])
                    })]),
                    E.element("tbody", [], insights.sources.map { source in
                        E.element("tr", [], [
                            E.element("th", [.attribute("scope", "row")], [.text(source.source.map(context.sourceName) ?? source.host ?? w.otherSources)]),
                            E.element("td", [.class("num")], [.text(String(source.requests))]),
                            E.element("td", [.class("num")], [.text(byteCount(source.responseBytes, w))]),
                        ])
                    }),
                ]),
            ]),
        ]))
        return DebugPages.page(context, title: "\(w.insights) · \(w.networkDebugger)", [E.element("article", [.class("detail debug")], content)])
    }

    /// A bar as long as `value` is of `maximum`: an SVG rectangle (attributes, which the page's policy
    /// allows where an inline style is refused).
    static func scaleBar(_ value: TimeInterval, of maximum: TimeInterval) -> HTML {
        let width = maximum > 0 ? max(2, Int((value / maximum * 1000).rounded())) : 0
        return E.element("svg", [.attribute("viewBox", "0 0 1000 10"), .attribute("preserveAspectRatio", "none"),
                                 .attribute("aria-hidden", "true")], [
            E.element("rect", [.attribute("x", "0"), .attribute("y", "1"), .attribute("width", String(width)),
                               .attribute("height", "8"), .class("wait")], []),
        ])
    }

    /// "812 B", "14.2 KB", "3,1 MB" (powers of 1,000, as storage is sold; decimals in the language's way).
    static func byteCount(_ bytes: Int64, _ w: ConsoleWords) -> String {
        switch bytes {
        case ..<1000: "\(bytes) B"
        case ..<1_000_000: decimal(Double(bytes) / 1000, w) + " KB"
        default: decimal(Double(bytes) / 1_000_000, w) + " MB"
        }
    }

    /// `value` with one decimal, marked as the language marks them ("45.3", "45,3").
    static func decimal(_ value: Double, _ w: ConsoleWords) -> String {
        let text = String(format: "%.1f", value)
        return w.decimalSeparator == "." ? text : text.replacingOccurrences(of: ".", with: w.decimalSeparator)
    }

    /// A name such as `rickandmorty.episodes.byID` with a line break allowed after each dot, where a narrow column breaks it
    /// rather than inside a word (`marvel.characte` / `rs`).
    static func breakingAfterDots(_ name: String) -> [HTML] {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.enumerated().flatMap { index, part -> [HTML] in
            index == parts.count - 1 ? [.text(String(part))] : [.text(part + "."), E.void("wbr", [])]
        }
    }
}
