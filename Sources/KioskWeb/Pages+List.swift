import Foundation
import KioskApp
package import KioskCore

/// What is wrong with a list address a person wrote or cut short, with names and values as the page says them.
enum BadListAddress: Sendable {
    /// A query parameter the list does not know.
    case unknownParameter(String)
    /// `?page=0` or below.
    case pageBelowOne
    /// Search text over the limit (in characters).
    case searchTooLong(Int)
    /// A filter value over the limit.
    case filterValueTooLong(name: String)
    /// A filter value the catalog does not offer, with those it offers.
    case invalidFilterValue(name: String, value: String, offered: [String])
    /// `?page=` that is not a whole number.
    case pageNotANumber
    /// A switch (`refresh`, `edit`) given something other than 1 or 0.
    case switchValue(String)

    /// `error` (a 400 saying it technically) said to a person as `problem`.
    static func said(_ problem: BadListAddress, _ error: WebError) -> WebError {
        var error = error
        error.said = { $0.strings.badListAddress(problem) }
        return error
    }

    /// What `work` returns; a refusal it throws said to a person as `problem`.
    static func said<T>(_ problem: BadListAddress, _ work: () throws -> T) throws -> T {
        do {
            return try work()
        } catch let error as WebError {
            throw said(problem, error)
        }
    }
}

/// What a list URL asks for, checked: `?page=`, `?q=`, the source's filters and `?refresh=1`.
struct ListParameters: Sendable {
    static let maximumQueryLength = 200
    static let maximumPage = 100_000

    var source: SourceID
    var page = 1
    var q: String?
    var filters: [String: String] = [:]
    var refresh = false
    /// `?edit=1` on a user-ordered catalog (the dogs): the list with Delete and Move buttons.
    var edit = false
    /// Filter values the source fills in when none is given (NYT: viewed, 7 days): their selects show
    /// that value and offer no "any".
    var defaults: [String: String] = [:]

    /// Checks a decoded list query: unknown names (`edit` is one except on a user-ordered catalog), a page out of range,
    /// an oversized query or filter value and a filter value the source does not offer are refused with a 400 (a page
    /// past any catalog's end with a 404), each said to a person in the page's language as well.
    init(source: any CatalogSource, query: ListQuery) throws {
        self.source = source.id
        let known = Set(["page", "q", "refresh"] + source.filterValues.keys + (source.ordering == .user ? [Route.editParameter] : []))
        for name in query.names.sorted() where !known.contains(name) {
            let shown = String(name.prefix(40))
            throw Self.refusal("Unknown parameter \"\(shown)\"; valid: \(known.sorted().joined(separator: ", ")).") { _ in
                .unknownParameter(shown)
            }
        }
        if let page = query.page {
            guard page >= 1 else { throw Self.refusal("Pages start at 1.") { _ in .pageBelowOne } }
            guard page <= Self.maximumPage else {
                var error = WebError.notFound("There is no page \(page).")
                error.said = { $0.strings.pageNotFound }
                throw error
            }
            self.page = page
        }
        if let raw = query.q {
            let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard trimmed.count <= Self.maximumQueryLength else {
                throw Self.refusal("The search text is longer than \(Self.maximumQueryLength) characters.") { _ in
                    .searchTooLong(Self.maximumQueryLength)
                }
            }
            q = trimmed.isEmpty ? nil : trimmed
        }
        for name in source.filterValues.keys.sorted() {
            if let value = query.filters[name], !value.isEmpty {
                guard value.count <= 40 else {
                    throw Self.refusal("The \(name) filter value is too long.") { .filterValueTooLong(name: $0.filterName(name)) }
                }
                // The source's own rule says which values it takes; its message (the JSON's) lists them.
                do {
                    _ = try source.normalize(PageRequest(source: source.id, filters: [name: value]))
                } catch KioskError.invalidRequest(let message) {
                    let offered = source.filterValues[name] ?? []
                    throw Self.refusal(message) { strings in
                        .invalidFilterValue(name: strings.filterName(name), value: String(value.prefix(40)),
                                            // What the address takes, with the word the page's menu shows for it:
                                            // "alive (Viva)", not the menu's word alone, which the address refuses.
                                            offered: offered.map { value in
                                                let label = strings.filterValue(name, value)
                                                return label.lowercased() == value.lowercased() ? value : "\(value) (\(label))"
                                            })
                    }
                }
                filters[name] = value
            }
        }
        refresh = query.refresh
        edit = query.edit
    }

    /// A 400 whose JSON says `message` and whose page says `problem` in the page's language.
    private static func refusal(_ message: String,
                                _ problem: @escaping @Sendable (Strings) -> BadListAddress) -> WebError {
        // (A closure, not `BadListAddress.said`: the problem carries names and values in the page's language.)
        var error = WebError.badRequest(message)
        error.said = { context in context.strings.badListAddress(problem(context.strings)) }
        return error
    }

    /// The page request (without the query: searching goes through `CatalogService.search`).
    var request: PageRequest { PageRequest(source: source, page: page, filters: filters) }

    /// A link to this list with another page (and never `refresh`, so links do not force revalidation).
    func path(page: Int? = nil, refresh: Bool = false, prefix: String = "") -> String {
        var query = QueryString()
        for name in filters.keys.sorted() { query.set(name, filters[name]) }
        query.set("q", q)
        let target = page ?? self.page
        if target != 1 { query.set("page", String(target)) }
        if refresh { query.set("refresh", "1") }
        return prefix + Route.list(source).path + query.encoded
    }
}

extension Pages {
    /// `/{source}`: a page of a catalog with its freshness, offline banner, paging and search form.
    /// The list sits in `#results` (what the script swaps) beside an empty detail pane that the script
    /// fills on a wide screen.
    static func list(_ parameters: ListParameters, update: CatalogUpdate, filterValues: [String: [String]],
                     favorites: Set<String> = [], context: ViewContext) -> HTML {
        let strings = context.strings
        let source = parameters.source
        var results: [HTML] = freshness(update, parameters: parameters, context: context)
        // Edit / Done heads a list its user orders, away from the editor's Reset at its end.
        if context.catalogs.source(source)?.ordering == .user {
            results.append(editModeLink(source, editing: parameters.edit, context: context))
        }
        let items = update.page.items
        let next = update.page.totalPages.map { parameters.page < $0 } ?? update.page.hasNext
        if items.isEmpty {
            results.append(E.element("div", [.class("empty")], [
                E.element("p", [], [.text(strings.nothingHere)]),
                E.element("p", [], [E.element("a", [Attribute.localHref(parameters.path(refresh: true))], [.text(strings.retry)])]),
            ]))
        } else if parameters.edit && context.catalogs.source(source)?.ordering == .user {
            results.append(userOrderEditor(source, items, context: context))
        } else {
            results.append(itemList(items, context: context, isFavorite: { favorites.contains($0.itemID) }, returnPath: parameters.path(),
                                    next: next ? parameters.path(page: parameters.page + 1) : nil))
        }
        if !update.page.skipped.isEmpty {
            results.append(E.element("p", [.class("status skipped")], [.text(strings.skippedItems(update.page.skipped.count))]))
        }
        results.append(pager(parameters, totalPages: update.page.totalPages, context: context))
        var content: [HTML] = [
            E.element("h1", [], [.text(context.sourceName(source))]),
            searchForm(parameters, filterValues: filterValues, context: context),
            split(results, revalidating: update.isRevalidating && !parameters.edit, context: context),
        ]
        content.append(attribution(update.page.attribution, source: source, context: context))
        return layout(context, title: context.sourceName(source), current: Route.list(source).path, view: .list, source: source, content)
    }

    /// `#results` and, beside it, the detail pane the script fills on a wide screen. What a new list says of itself (its
    /// count, its age, a banner) is announced by `#results-said`, which the script fills after each swap — not the rows,
    /// which a live region round the list would read out one by one. A list that changes on its own all the time (the
    /// debugger's) announces nothing (`announcesChanges`).
    package static func split(_ results: [HTML], revalidating: Bool, announcesChanges: Bool = true, className: String = "split",
                      attributes: [Attribute?] = [], context: ViewContext) -> HTML {
        E.element("div", [.class(className)], [
            announcesChanges ? E.element("p", [.attribute("id", "results-said"), .class("visually-hidden"), .attribute("role", "status")], []) : .empty,
            E.element("div", [.attribute("id", "results"),
                              .attribute("data-revalidating", revalidating ? "true" : "false")] + attributes, results),
            E.element("aside", [.attribute("id", "detail-pane"), .attribute("aria-label", context.strings.details),
                                .attribute("tabindex", "-1"), .flag("hidden")], []),
        ])
    }

    /// `/{source}?q=`: search results (upstream or stored), one page.
    /// `offlineSince`: the upstream is unreachable and the results are the ones saved then (their age said at `now`).
    static func search(_ parameters: ListParameters, result: SearchResult, filterValues: [String: [String]],
                       favorites: Set<String> = [], offlineSince: Date? = nil, now: Date = Date(), context: ViewContext) -> HTML {
        let strings = context.strings
        let source = parameters.source
        var results: [HTML] = [
            E.element("p", [.class("status")], [
                .text(strings.results(result.totalItems ?? result.items.count, result.query)
                      + (result.origin == .store ? strings.inSavedData : "") + (result.moreMatch ? strings.moreMatch : "")),
            ]),
        ]
        if result.error == nil, let saved = offlineSince {
            results.append(E.element("p", [.class("banner offline"), .attribute("id", "offline-banner"), .attribute("role", "status")],
                                     Localized.ageSentence(strings.offlineSince, since: saved, now: now, language: context.language)))
        }
        if let error = result.error {
            let offline = error.isConnectivityFailure
            // Offline, the banner the page's script watches for connectivity's return, to search the upstream again.
            let attributes: [Attribute] = [.class(offline ? "banner offline" : "banner error")] + (offline ? [.attribute("id", "offline-banner")] : [])
            // A search that failed (a timeout, a 5xx) is offered again, as a list that failed to refresh is; offline, the
            // page's script searches again by itself when the upstream answers.
            results.append(E.element("p", attributes + [.attribute("role", "status")], [
                .text(offline ? strings.offlineSearching : strings.couldNotSearch(strings.upstreamProblem(error))),
            ] + (offline ? [] : [" ", E.element("a", [.class("refresh"), Attribute.localHref(parameters.path())], [.text(strings.retry)])])))
        }
        let next = result.totalPages.map { parameters.page < $0 } ?? false
        results.append(result.items.isEmpty
            ? E.element("p", [.class("empty")], [.text(strings.noMatches)])
            : itemList(result.items, context: context, isFavorite: { favorites.contains($0.itemID) }, returnPath: parameters.path(),
                       next: next ? parameters.path(page: parameters.page + 1) : nil))
        results.append(pager(parameters, totalPages: result.totalPages, context: context))
        var content: [HTML] = [
            E.element("h1", [], [.text(context.sourceName(source))]),
            searchForm(parameters, filterValues: filterValues, context: context),
            split(results, revalidating: false, context: context),
        ]
        content.append(attribution(result.items.first.flatMap(itemAttribution), source: source, context: context))
        return layout(context, title: "\(context.sourceName(source)): \(result.query)", current: Route.list(source).path, view: .search,
                      source: source, content)
    }

    /// "Edit" on a list its user orders, "Done" in edit mode: plain links, as the mode lives in the URL.
    static func editModeLink(_ source: SourceID, editing: Bool, context: ViewContext) -> HTML {
        let strings = context.strings
        return E.element("p", [.class("mode")], [
            E.element("a", [Attribute.localHref(editing ? Route.list(source).path : Route.editor(source).path)],
                      [.text(editing ? strings.done : strings.edit)]),
        ])
    }

    /// `/{source}?edit=1` of a list its user orders (the dogs): each item with Move up / Move down / Delete forms
    /// (keyboard-usable buttons with labels naming the item, as the icons alone say nothing to a screen reader),
    /// and Reset. Rows are draggable for the script's drag and drop, which posts to the row's `data-move`; every
    /// form says where it returns to (`return`), which the device's outbox reads when Kiosk is unreachable.
    static func userOrderEditor(_ source: SourceID, _ items: [CatalogItem], context: ViewContext) -> HTML {
        let strings = context.strings
        let back = ("return", Route.editor(source).path)
        let rows = items.enumerated().map { index, item in
            let move = Route.move(source, item.itemID).path
            // Both on every row, the first's up and the last's down hidden: when the device shows edits waiting to be sent
            // (rows moved, deleted), its script shows each row the buttons of the place it has then.
            var buttons: [HTML] = [
                postForm(action: move, fields: [("to", String(max(0, index - 1))), back],
                         label: strings.moveUp(item.shownTitle), button: "↑", className: "move",
                         attributes: [.attribute("data-direction", "up")] + (index > 0 ? [] : [.flag("hidden")]), context: context),
                postForm(action: move, fields: [("to", String(index + 1)), back],
                         label: strings.moveDown(item.shownTitle), button: "↓", className: "move",
                         attributes: [.attribute("data-direction", "down")] + (index < items.count - 1 ? [] : [.flag("hidden")]),
                         context: context),
            ]
            // `data-undo`: where the script's Undo posts, after the deletion.
            buttons.append(postForm(action: Route.delete(source, item.itemID).path, fields: [back], label: strings.deleteItem(item.shownTitle),
                                    button: .text(strings.delete), className: "delete",
                                    attributes: [Attribute.localPath("data-undo", Route.restore(source, item.itemID).path)], context: context))
            return E.element("li", [.attribute("data-id", item.itemID), .attribute("draggable", "true"),
                                    Attribute.localPath("data-move", move)], [
                E.element("span", [.class("grip"), .attribute("aria-hidden", "true")], ["⠿"]),
                image(item.imageURL, width: 80, height: 80, alt: "", context: context),
                E.element("span", [.class("title"), context.contentLanguage(item.source)], [.text(item.shownTitle)]),
                E.element("span", [.class("actions")], buttons),
            ])
        }
        return E.group([
            E.element("ul", [.class("items edit")], rows),
            // Reset forgets every deletion and the order: a second, deliberate step, never one tap.
            E.element("details", [.class("confirm-reset")], [
                E.element("summary", [], [.text(strings.reset + "…")]),
                E.element("p", [], [.text(strings.resetWarning(context.sourceName(source)))]),
                postForm(action: Route.reset(source).path, fields: [back], label: strings.resetLabel(context.sourceName(source)),
                         button: .text(strings.resetLabel(context.sourceName(source))), className: "reset", context: context),
            ]),
        ])
    }

    /// The credit an item carries from the answer it came in (Marvel's `attributionText`).
    static func itemAttribution(_ item: CatalogItem) -> String? {
        if case .marvelCharacter(let character) = item.detail { return character.attribution }
        return nil
    }

    /// "Updated 3 h ago" (labelled stale when it is, "refreshing…" while a revalidation runs), the
    /// offline banner, or a failed-refresh notice.
    static func freshness(_ update: CatalogUpdate, parameters: ListParameters, context: ViewContext) -> [HTML] {
        let strings = context.strings
        // When it was fetched, as its age is counted (never after the moment it is shown).
        let fetched = update.asOf.addingTimeInterval(-update.age)
        func sentence(_ words: (String) -> String) -> [HTML] {
            Localized.ageSentence(words, since: fetched, now: update.asOf, language: context.language)
        }
        var status: [HTML] = sentence(strings.updated)
        if update.isStale { status += [" · ", E.element("span", [.class("stale")], [.text(strings.stale)])] }
        if update.isRevalidating { status += [" · ", E.element("span", [.class("refreshing")], [.text(strings.refreshing)])] }
        status += [" · ", E.element("a", [.class("refresh"), Attribute.localHref(parameters.path(refresh: true))], [.text(strings.refresh)])]
        var parts = [E.element("p", [.class("status")], status)]
        if update.isOffline {
            parts.append(E.element("p", [.class("banner offline"), .attribute("id", "offline-banner"), .attribute("role", "status")],
                                   sentence(strings.offlineSince)))
        } else if let error = update.error {
            parts.append(E.element("p", [.class("banner error"), .attribute("role", "status")], [
                .text(strings.couldNotRefresh(strings.upstreamProblem(error)) + " "),
                E.element("a", [Attribute.localHref(parameters.path(refresh: true))], [.text(strings.retry)]),
            ]))
        }
        return parts
    }

    /// A GET form, so search and filters work without JavaScript and live in the URL. `data-delay` is the
    /// script's debounce (Marvel's rate limit asks for a longer one).
    static func searchForm(_ parameters: ListParameters, filterValues: [String: [String]], context: ViewContext) -> HTML {
        let strings = context.strings
        var fields: [HTML] = [
            E.element("label", [], [
                .text(strings.search),
                E.void("input", [.attribute("type", "search"), .attribute("name", "q"), .attribute("value", parameters.q ?? ""),
                                 .attribute("maxlength", String(ListParameters.maximumQueryLength)),
                                 .attribute("autocomplete", "off"), .attribute("enterkeyhint", "search")]),
            ]),
        ]
        for name in filterValues.keys.sorted() {
            let current = parameters.filters[name]?.lowercased() ?? parameters.defaults[name] ?? ""
            let any = parameters.defaults[name] == nil ? [E.element("option", [.attribute("value", "")], [.text(strings.any)])] : []
            let options = any + (filterValues[name] ?? []).map { value in
                E.element("option", [.attribute("value", value), value == current ? .flag("selected") : nil],
                          [.text(strings.filterValue(name, value))])
            }
            fields.append(E.element("label", [], [.text(strings.filterName(name)), E.element("select", [.attribute("name", name)], options)]))
        }
        fields.append(E.element("button", [.attribute("type", "submit")], [.text(strings.go)]))
        // The source says how long typing waits before a search.
        let debounce = context.catalogs.source(parameters.source)?.search.debounce ?? .milliseconds(500)
        let delay = Int((debounce.seconds * 1000).rounded())
        return E.element("form", [.class("search"), .attribute("method", "get"), .attribute("action", Route.list(parameters.source).path),
                                  .attribute("role", "search"), .attribute("data-delay", String(delay))], fields)
    }

    /// Previous/next and windowed page numbers (1 … 4 5 [6] 7 8 … 42), all plain links.
    static func pager(_ parameters: ListParameters, totalPages: Int?, context: ViewContext) -> HTML {
        pager(current: parameters.page, totalPages: totalPages, path: { parameters.path(page: $0) }, context: context)
    }

    /// The pager of any paged view, `path` giving each page's address.
    static func pager(current: Int, totalPages: Int?, path: (Int) -> String, context: ViewContext) -> HTML {
        guard let total = totalPages, total > 1 else { return .empty }
        var entries: [HTML] = []
        if current > 1 {
            entries.append(E.element("li", [], [
                E.element("a", [Attribute.localHref(path( current - 1)), .attribute("rel", "prev")],
                          [.text(context.strings.previous)]),
            ]))
        }
        for number in pageWindow(current: current, total: total) {
            guard let number else {
                entries.append(E.element("li", [], [E.element("span", [.attribute("aria-hidden", "true")], ["…"])]))
                continue
            }
            let attributes: [Attribute?] = number == current
                ? [Attribute.localHref(path( number)), .attribute("aria-current", "page")]
                : [Attribute.localHref(path( number))]
            entries.append(E.element("li", [], [E.element("a", attributes, [.text(String(number))])]))
        }
        if current < total {
            entries.append(E.element("li", [], [
                E.element("a", [Attribute.localHref(path( current + 1)), .attribute("rel", "next")],
                          [.text(context.strings.next)]),
            ]))
        }
        return E.element("nav", [.class("pages"), .attribute("aria-label", context.strings.pages)], [E.element("ul", [], entries)])
    }

    /// The first, the last and two on each side of the current page; nil marks a gap.
    static func pageWindow(current: Int, total: Int) -> [Int?] {
        guard total >= 1 else { return [] }
        // Clamped first: a range with its bounds the wrong way round would trap.
        let center = min(max(current, 1), total)
        let shown = Set([1, total] + Array(max(1, center - 2)...min(total, center + 2))).sorted()
        var result: [Int?] = []
        for number in shown {
            if let last = result.last ?? nil, number > last + 1 { result.append(nil) }
            result.append(number)
        }
        return result
    }
}
