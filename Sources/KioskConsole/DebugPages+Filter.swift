import KioskCore
import KioskDebugger
import KioskWeb

// The console's filter box: one text field in the filter language (RequestFilter+Language.swift) that
// `kiosk log --filter` reads too, what it applies, the mistake when it does not parse, and the keys.

extension DebugPages {
    /// The filter field, with the mistake of a bad filter marked under it and the language's keys in a
    /// `<details>` after it.
    static func filterField(_ query: DebugFilterQuery, _ w: ConsoleWords) -> HTML {
        let invalid = query.syntaxError != nil
        return E.group([
            E.element("label", [.class("filter")], [.text(w.filterLabel),
                E.void("input", [.attribute("type", "search"), .attribute("name", "filter"), .attribute("id", "debug-filter"),
                                 .attribute("value", query.filterText ?? query.text ?? ""),
                                 .attribute("maxlength", String(DebugFilterQuery.maximumFilterLength)),
                                 .attribute("placeholder", "status:5xx source:nyt cache:stale slow:>500ms has:error"),
                                 .attribute("spellcheck", "false"), .attribute("autocomplete", "off"),
                                 invalid ? .attribute("aria-invalid", "true") : nil,
                                 invalid ? .attribute("aria-describedby", "debug-filter-error") : nil])]),
        ])
    }

    /// Under the form: why the filter was refused (with the mistake marked), or the filter applied in its
    /// canonical words; then the keys of the language.
    static func filterNotice(_ query: DebugFilterQuery, _ w: ConsoleWords) -> HTML {
        var parts: [HTML] = []
        if let error = query.syntaxError {
            let input = error.input, range = error.range
            parts.append(E.element("p", [.class("banner error"), .attribute("role", "alert"), .attribute("id", "debug-filter-error")], [
                .text(w.filterNotUnderstood(w.filterProblem(error.reason))),
                E.element("code", [.class("filter-mistake")], [
                    .text(String(input[..<range.lowerBound])),
                    E.element("mark", [], [.text(range.isEmpty ? " " : String(input[range]))]),
                    .text(String(input[range.upperBound...])),
                ]),
            ]))
        } else if !query.filter.inLanguage.isEmpty {
            parts.append(E.element("p", [.class("status")], [.text(w.filterApplied), E.element("code", [], [.text(query.filter.inLanguage)])]))
        }
        parts.append(E.element("details", [.class("filter-help")], [
            E.element("summary", [], [.text(w.filterKeys)]),
            E.element("dl", [.class("facts")], filterHelp(w).flatMap { example, meaning in
                [E.element("dt", [], [E.element("code", [], [.text(example)])]), E.element("dd", [], [.text(meaning)])]
            }),
        ]))
        return E.group(parts)
    }

    /// The filter language's keys, each with an example and what it accepts, then its negation and its words.
    static func filterHelp(_ w: ConsoleWords) -> [(example: String, meaning: String)] {
        FilterKey.allCases.map { ($0.example, w.filterKeyMeaning($0)) }
            + [("-source:nyt", w.negationHelp), ("spider \"api/character\"", w.wordsHelp)]
    }
}
