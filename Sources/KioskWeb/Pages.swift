import Foundation
package import Hummingbird
import KioskApp
package import KioskCore

/// The HTML views. Each returns `HTML`, so every upstream string goes through `HTML.text` or an
/// `Attribute` helper on its way into a page.
package enum Pages {
    typealias E = HTML

    /// What a page shows, for the script (`<main data-view>`).
    package enum View: String {
        case home, list, search, detail, favorites, settings, error, debug, offline, pair
    }

    /// The frame of every page: skip link, brand and language switch, the catalog tabs (a bottom tab
    /// bar on a phone, a sidebar on a wide screen), the content, and the scripts (the debugger's on its
    /// pages only).
    /// A part of the app with a navigation of its own (the console) leaves the catalog tabs out (`catalogTabs`).
    package static func layout(_ context: ViewContext, title: String, current: String?, view: View, source: SourceID? = nil,
                       scripts extra: [StaticAsset] = [], catalogTabs: Bool = true, _ content: [HTML]) -> HTML {
        let strings = context.strings
        let language = context.language
        let tabs = tabs(context)
        let nav = E.element("nav", [.class("tabs"), .attribute("aria-label", strings.catalogs)], [
            E.element("ul", [], tabs.map { tab in
                E.element("li", [], [
                    E.element("a", [Attribute.localHref(tab.path), tab.path == current ? .attribute("aria-current", "page") : nil], [
                        E.element("span", [.class("icon"), .attribute("aria-hidden", "true")], [.text(tab.icon)]),
                        E.element("span", [.class("short")], [.text(tab.short)]),
                        E.element("span", [.class("long")], [.text(tab.long)]),
                    ]),
                ])
            }),
        ])
        // The other language, as a one-button POST form (it sets a cookie, so it is a state change).
        let other: Language = language == .en ? .es : .en
        let languageForm = E.element("form", [.class("lang"), .attribute("method", "post"), .attribute("action", Route.language.path)], [
            csrfField(context),
            E.void("input", [.attribute("type", "hidden"), .attribute("name", "lang"), .attribute("value", other.rawValue)]),
            E.void("input", [.attribute("type", "hidden"), .attribute("name", "return"), .attribute("value", context.path)]),
            // Named in the language it switches to, its label first ("Español (idioma)"): one voice reads it all, and a
            // voice-control user says what is shown, "Español" (or "ES" on a phone), to press it (WCAG 2.5.3).
            E.element("button", [.attribute("type", "submit"), .attribute("lang", other.rawValue),
                                 .attribute("aria-label", "\(other.nativeName) (\(other.strings.languageSwitch.lowercased()))")], [
                E.element("span", [.class("long")], [.text(other.nativeName)]),
                E.element("span", [.class("short"), .attribute("aria-hidden", "true")], [.text(other.rawValue.uppercased())]),
            ]),
        ])
        // What a phone needs to install Kiosk: the manifest, icons, the bar colours of both schemes and Safari's
        // own tags (iOS reads no manifest icon and wants apple-touch-icon).
        let installability: [HTML] = [
            E.void("link", [.attribute("rel", "manifest"), Attribute.localHref(WebManifest.path)]),
            E.void("link", [.attribute("rel", "icon"), .attribute("type", "image/png"), .attribute("sizes", "192x192"),
                            Attribute.localHref(StaticAssets.icon192.path)]),
            E.void("link", [.attribute("rel", "apple-touch-icon"), Attribute.localHref(StaticAssets.appleTouchIcon.path)]),
            E.void("meta", [.attribute("name", "theme-color"), .attribute("media", "(prefers-color-scheme: light)"),
                            .attribute("content", WebManifest.lightThemeColor)]),
            E.void("meta", [.attribute("name", "theme-color"), .attribute("media", "(prefers-color-scheme: dark)"),
                            .attribute("content", WebManifest.darkThemeColor)]),
            E.void("meta", [.attribute("name", "mobile-web-app-capable"), .attribute("content", "yes")]),
            E.void("meta", [.attribute("name", "apple-mobile-web-app-capable"), .attribute("content", "yes")]),
            E.void("meta", [.attribute("name", "apple-mobile-web-app-title"), .attribute("content", "Kiosk")]),
            E.void("meta", [.attribute("name", "apple-mobile-web-app-status-bar-style"), .attribute("content", "default")]),
        ]
        // Deferred, so they run in this order: the client table, the device's storage (both shared with the service
        // worker), the page's enhancement, then what the device does offline on top of it.
        var scripts = [context.catalogs.assets.client, StaticAssets.deviceScript, StaticAssets.script, StaticAssets.offlineScript].map { asset in
            E.element("script", [Attribute.localSource(asset.path), .flag("defer")], [])
        }
        // A page's own scripts after them (the console's).
        scripts += extra.map { E.element("script", [Attribute.localSource($0.path), .flag("defer")], []) }
        return E.group([
            E.literal("<!doctype html>"),
            E.element("html", [.attribute("lang", language.rawValue)], [
                E.element("head", [], [
                    E.void("meta", [.attribute("charset", "utf-8")]),
                    E.void("meta", [.attribute("name", "viewport"), .attribute("content", "width=device-width, initial-scale=1")]),
                    E.void("meta", [.attribute("name", "color-scheme"), .attribute("content", "light dark")]),
                    // The page's own title escaped apart from Kiosk's name: a direction override it opens is closed
                    // before " · Kiosk", which a tab would otherwise show reversed.
                    E.element("title", [], title == "Kiosk" ? [.text(title)] : [.text(title), .text(" · Kiosk")]),
                    E.void("link", [.attribute("rel", "stylesheet"), Attribute.localHref(StaticAssets.stylesheet.path)]),
                ] + installability + scripts),
                E.element("body", [.attribute("data-strings", scriptStrings(language))], [
                    E.element("a", [.class("skip"), Attribute.fragmentHref("#main")], [.text(strings.skipToContent)]),
                    E.element("header", [.class("top")], [
                        E.element("a", [.class("brand"), Attribute.localHref(Route.home.path),
                                        current == Route.home.path ? .attribute("aria-current", "page") : nil],
                                  ["Kiosk"]),
                        E.element("div", [.class("top-actions")], (context.catalogs.menuLinks(language)
                                + [MenuLink(label: language.home.settings, path: Route.settings.path)]).map { link in
                            E.element("a", [.class("tool"), Attribute.localHref(link.path),
                                            current == link.path ? .attribute("aria-current", "page") : nil],
                                      link.shortLabel == link.label ? [.text(link.label)] : [
                                          E.element("span", [.class("long")], [.text(link.label)]),
                                          E.element("span", [.class("short")], [.text(link.shortLabel)]),
                                      ])
                        } + [languageForm]),
                    ]),
                    catalogTabs ? nav : .empty,
                    E.element("main", [.attribute("id", "main"), .attribute("data-view", view.rawValue),
                                       source.map { .attribute("data-source", $0.rawValue) },
                                       source.flatMap { context.catalogs.source($0)?.ordering == .user ? .attribute("data-ordering", "user") : nil }],
                              content),
                ]),
            ]),
        ])
    }

    /// The strings the script shows, as JSON for `<body data-strings>`; the same for every page of a language.
    static func scriptStrings(_ language: Language) -> String {
        switch language {
        case .en: englishScriptStrings
        case .es: spanishScriptStrings
        }
    }

    private static let englishScriptStrings = encodeScriptStrings(.en)
    private static let spanishScriptStrings = encodeScriptStrings(.es)

    private static func encodeScriptStrings(_ language: Language) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(ScriptStrings(language))).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
    }

    /// A 200 HTML response.
    package static func response(_ html: HTML, status: HTTPResponse.Status = .ok) -> Response {
        response(ByteBuffer(string: html.rendered), status: status)
    }

    /// A page already rendered, as bytes (the page cache's).
    static func response(_ body: ByteBuffer, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: htmlHeaders, body: ResponseBody(byteBuffer: body))
    }

    /// Every page's own headers, built once. Pages show the store's current state, so a cache must ask again
    /// before reusing one (`no-cache`; no validator is sent, so it always gets the page anew), and only the
    /// browser may keep it (`private`). Not `no-store`: that would keep pages out of the back/forward cache,
    /// and Back would rebuild a long list instead of showing it at once. The CSRF token a restored page
    /// carries is the cookie's, which outlives the page, so its forms still post.
    static let htmlHeaders: HTTPFields = [.contentType: "text/html; charset=utf-8", .cacheControl: "private, no-cache"]

    /// The tabs every page shows: each catalog's list, then the favorites.
    private static func tabs(_ context: ViewContext) -> [(path: String, icon: String, short: String, long: String)] {
        let language = context.language.rawValue
        return context.catalogs.sources.map { source in
            let presentation = source.presentation
            return (Route.list(source.id).path, presentation.icon, presentation.shortName(language: language), presentation.name(language: language))
        }
        + [(Route.favorites.path, "★", context.strings.favorites, context.strings.favorites)]
    }

    /// `/offline`: what the service worker shows for a page this device has not saved while Kiosk is unreachable.
    /// The script lists the pages that were saved (it reads them from the device).
    static func offline(_ context: ViewContext) -> HTML {
        let strings = context.language.device
        return layout(context, title: strings.offlineTitle, current: nil, view: .offline, [
            E.element("h1", [], [.text(strings.offlineTitle)]),
            E.element("p", [.class("banner offline"), .attribute("role", "status")], [.text(strings.offlineMessage)]),
            // Asks for the page again (its address is the one asked for): the script reloads it, as it does by itself
            // once Kiosk answers again.
            E.element("p", [], [E.element("button", [.attribute("type", "button"), .attribute("id", "retry-page")],
                                          [.text(context.strings.retry)])]),
            E.element("h2", [], [.text(strings.savedPages)]),
            // One group a tab, in the tabs' order (as Favorites groups its items), then the pages of none (Home, the
            // console): the script fills those it has pages for and shows them.
            E.element("div", [.attribute("id", "saved-pages"), .class("saved-pages")],
                      (tabs(context).map { ($0.path, $0.long) } + [("", strings.otherSavedPages)]).map { prefix, name in
                          E.element("section", [.class("saved-group"), .attribute("data-prefix", prefix), .flag("hidden")], [
                              E.element("h3", [], [.text(name)]),
                              E.element("ul", [], []),
                          ])
                      }),
            E.element("p", [.attribute("id", "no-saved-pages"), .class("empty"), .flag("hidden")], [.text(strings.noSavedPages)]),
            E.element("p", [], [E.element("a", [Attribute.localHref(Route.home.path)], [.text(context.strings.backToCatalogs)])]),
        ])
    }

    /// An error page: what happened, and a Retry link when retrying can help.
    static func errorResponse(_ error: WebError, context: ViewContext) -> Response {
        // The title in the page's language by the status, unless the error names its own (the console's).
        let title = error.keepsTitle ? error.title : context.strings.errorTitle(Int(error.status.code))
        var content: [HTML] = [
            E.element("h1", [], [.text(title)]),
            E.element("p", [.class("banner error"), .attribute("role", "alert")], [.text(error.said?(context) ?? error.message)]),
        ]
        if let retry = error.retryPath {
            content.append(E.element("p", [], [E.element("a", [Attribute.localHref(retry)], [.text(context.strings.retry)])]))
        }
        if let extra = error.extra { content.append(extra(context)) }
        content.append(E.element("p", [], [E.element("a", [Attribute.localHref(Route.home.path)], [.text(context.strings.backToCatalogs)])]))
        return response(layout(context, title: title, current: nil, view: .error, content), status: error.status)
    }

    /// `/favorites`: every starred item across catalogs, from the store.
    static func favorites(_ items: [CatalogItem], context: ViewContext) -> HTML {
        let strings = context.strings
        var content: [HTML] = [E.element("h1", [], [.text(strings.favorites)])]
        if items.isEmpty {
            content.append(E.element("p", [.class("empty")], [.text(strings.noFavorites)]))
        } else {
            // Grouped by catalog, in the tabs' order, every row the same size (`.favorites`); everything here is a
            // favorite, so every row's star offers "remove".
            var groups = Dictionary(grouping: items, by: \.source)
            for source in context.catalogs.sources.map(\.id) + SourceID.allCases where groups[source] != nil {
                guard let group = groups.removeValue(forKey: source) else { continue }
                content.append(E.element("section", [.class("favorites-group"), .attribute("aria-label", context.sourceName(source))], [
                    E.element("h2", [], [.text("\(context.sourceName(source)) (\(Localized.number(group.count, language: context.language)))")]),
                    itemList(group, context: context, rows: true, isFavorite: { _ in true }, returnPath: Route.favorites.path,
                             undoesUnstar: true),
                    attributions(for: group, context: context),
                ]))
            }
        }
        return layout(context, title: strings.favorites, current: Route.favorites.path, view: .favorites,
                      [E.element("div", [.attribute("id", "results")], content)])
    }

    /// An item's subtitle in the page's language: what the catalog says in English ("Alive · Human", "5 comics ·
    /// 14 series", "Almost 3 years", an episode's air date) said again from the item's own values; a byline as it is,
    /// in the upstream's language (`isUpstreams`: a screen reader is told so; Kiosk's own words are the page's, even
    /// where they read alike in English, as "21 series" does).
    static func subtitle(_ item: CatalogItem, context: ViewContext) -> (text: String, isUpstreams: Bool) {
        let strings = context.strings
        switch item.detail {
        case .dog(let dog):
            return (strings.almostYears(dog.age), false)
        case .rickAndMorty(let character):
            let known = { (text: String) in !text.isEmpty && text.lowercased() != "unknown" }
            let status = known(character.status) ? characterStatus(character, strings: strings)
                : strings.field("Status") + " " + strings.filterValue("status", "unknown").lowercased()
            return (([status] + (known(character.species) ? [characterSpecies(character, strings: strings)] : []))
                .joined(separator: " · "), false)
        case .marvelCharacter(let character):
            return (strings.marvelCounts(character.comics.available, character.series.available), false)
        case .rickAndMortyEpisode(let episode):
            // "S01E01 · 2 de diciembre de 2013": the air date as the episode's own page says it.
            return ([episode.code, episode.airDate(language: context.language.locale.identifier)]
                .filter { !$0.isEmpty }.joined(separator: " · "), false)
        default:
            return (item.subtitle, true)
        }
    }

    /// A Rick and Morty character's status in the page's language, agreeing with the character where the language
    /// inflects it (Summer is "Viva"): the list's subtitle and the character's sheet say it alike.
    static func characterStatus(_ character: RickAndMortyCharacter, strings: Strings) -> String {
        let word = strings.filterValue("status", character.status.lowercased())
        return character.gender.lowercased() == "female" ? strings.ofFemaleCharacter(word) : word
    }

    /// A character's species as `characterStatus` says its status ("Humana" of Summer).
    static func characterSpecies(_ character: RickAndMortyCharacter, strings: Strings) -> String {
        let word = strings.species(character.species)
        return character.gender.lowercased() == "female" ? strings.ofFemaleCharacter(word) : word
    }

    /// Rows: picture through the image route at a fixed size, title, subtitle.
    /// `isFavorite` says which rows are starred; each row has a star form that returns to `returnPath`. `next` is the next page's address, for the script's infinite scroll.
    /// `rows` keeps a catalog that shows a grid in rows (the favorites' one row size).
    static func itemList(_ items: [CatalogItem], context: ViewContext, showSource: Bool = false, rows: Bool = false,
                         isFavorite: (CatalogItem) -> Bool = { _ in false }, returnPath: String = Route.favorites.path,
                         next: String? = nil, undoesUnstar: Bool = false) -> HTML {
        let grid = !showSource && !rows && items.first.map { context.presentation($0.source).layout == .grid } == true
        return E.element("ul", [.class(grid ? "items grid" : "items"), next.flatMap { Attribute.localPath("data-next", $0) }],
                         items.enumerated().map { index, item in
            let presentation = context.presentation(item.source)
            let (described, isUpstreams) = subtitle(item, context: context)
            // A subtitle Kiosk did not say again in the page's language (a byline) is the upstream's, in its language.
            let describedHTML: HTML = isUpstreams && !described.isEmpty ? context.contentText(described, of: item.source) : .text(described)
            let subtitle: [HTML] = showSource ? [.text("\(context.sourceName(item.source)) · "), describedHTML] : [describedHTML]
            var title: [HTML] = [.text(item.shownTitle)]
            if case .rickAndMorty(let character) = item.detail {
                // The status is also in the subtitle as words; the dot is a glance aid only.
                title.insert(E.element("span", [.class("dot \(statusClass(character.status))"), .attribute("aria-hidden", "true")], []),
                             at: 0)
            }
            let lang = context.contentLanguage(item.source)
            var text: [HTML] = [E.element("span", [.class("title"), lang], title)]
            if showSource || !described.isEmpty { text.append(E.element("span", [.class("subtitle")], subtitle)) }
            if presentation.showsSummary, !item.summary.isEmpty {
                text.append(E.element("span", [.class("summary"), lang], [.text(item.summary)]))
            }
            if case .dog(let dog) = item.detail {
                text.append(E.element("span", [.class("summary"), lang], [.text(dog.description)]))
            }
            return E.element("li", [.attribute("data-id", item.itemID)], [
                E.element("a", [Attribute.localHref(itemPath(item))], [
                    // The first rows are on screen at once: loading them lazily would only delay the page's
                    // largest paint; the rest load as they scroll near.
                    image(item.imageURL, width: presentation.thumbnailWidth, height: presentation.thumbnailHeight, alt: "",
                          lazy: index >= eagerRows, context: context),
                    E.element("span", [.class("text")], text),
                ]),
                starForm(item, isFavorite: isFavorite(item), returnPath: returnPath, undoable: undoesUnstar, context: context),
            ])
        })
    }

    /// How many rows of a list load their pictures at once: what a phone shows before any scrolling.
    static let eagerRows = 4

    /// The colour class of a Rick and Morty status dot.
    static func statusClass(_ status: String) -> String {
        switch status.lowercased() {
        case "alive": "alive"
        case "dead": "dead"
        default: "unknown"
        }
    }

    /// The hidden field every POST form carries: the request's CSRF token (the cookie's value).
    package static func csrfField(_ context: ViewContext) -> HTML {
        E.void("input", [.attribute("type", "hidden"), .attribute("name", CSRFProtection.fieldName),
                         .attribute("value", context.csrfToken)])
    }

    /// A one-button POST form with the CSRF field and hidden `fields`.
    package static func postForm(action: String, fields: [(String, String)], label: String, button: HTML,
                         className: String, pressed: Bool? = nil, attributes: [Attribute?] = [], context: ViewContext) -> HTML {
        E.element("form", [.class(className), .attribute("method", "post"), .attribute("action", action)] + attributes,
                  [csrfField(context)] + fields.map { name, value in
                      E.void("input", [.attribute("type", "hidden"), .attribute("name", name), .attribute("value", value)])
                  } + [
                      E.element("button", [.attribute("type", "submit"), .attribute("aria-label", label),
                                           pressed.map { .attribute("aria-pressed", $0 ? "true" : "false") }], [button]),
                  ])
    }

    /// The star: adds or removes the favorite, then comes back to `returnPath`. It carries both symbols, so the script
    /// can show a change made offline (waiting in the outbox) in the page's language.
    /// A star, or with `labelled` (an item's own page) a star that says what it is: "☆ Favorite", "★ Favorite" — a
    /// toggle button whose pressed state is the favorite and whose name stays "Favorite: " + the title (WAI-ARIA's
    /// toggle pattern: a name that changed with the state would say it twice, or contradict it), never a box that
    /// reads like a checkbox. The name holds the visible word (WCAG 2.5.3, for voice control).
    /// With `undoable` (the favorites page, where a removed favorite leaves the page), its removal offers Undo: the
    /// script posts `add` to the same address (`data-undo`, `data-undo-action`).
    static func starForm(_ item: CatalogItem, isFavorite: Bool, returnPath: String, labelled: Bool = false,
                         undoable: Bool = false, context: ViewContext) -> HTML {
        let name = context.strings.favoriteOf(item.shownTitle)
        let on = labelled ? "\(starOn) \(context.strings.favorite)" : starOn
        let off = labelled ? "\(starOff) \(context.strings.favorite)" : starOff
        return postForm(action: Route.favorite(item.source, item.itemID).path,
                        fields: [("action", isFavorite ? "remove" : "add"), ("return", returnPath)],
                        label: name, button: .text(isFavorite ? on : off),
                        className: labelled ? "star labelled" : "star", pressed: isFavorite,
                        attributes: [.attribute("data-label", name),
                                     .attribute("data-symbol-on", on), .attribute("data-symbol-off", off)]
                            + (undoable && isFavorite ? [Attribute.localPath("data-undo", Route.favorite(item.source, item.itemID).path),
                                                         .attribute("data-undo-action", "add")] : []),
                        context: context)
    }

    /// The star's symbols: a favorite, and not one.
    static let starOn = "★", starOff = "☆"

    /// `/{source}/{id}` with the id percent-encoded.
    static func itemPath(_ item: CatalogItem) -> String { itemPath(source: item.source, itemID: item.itemID) }

    /// `/{source}/{id}` of an item known by its id only (a linked item not stored yet).
    static func itemPath(source: SourceID, itemID: String) -> String { Route.item(source, itemID).path }

    /// An image through Kiosk's image route with fixed dimensions (no layout shift), loaded lazily;
    /// nothing when the URL is not http(s).
    /// Without a usable URL it is a placeholder of the same size (the sizes Kiosk uses have CSS classes,
    /// as the CSP allows no inline style), so rows and grids keep their shape.
    /// `altLanguage`: the language of `alt` when it is the upstream's words (a caption, a title) and not the page's.
    static func image(_ url: URL?, width: Int, height: Int, alt: String, altLanguage: Attribute? = nil, lazy: Bool = true,
                      context: ViewContext) -> HTML {
        guard let source = Attribute.imageSource(url) else {
            guard placeholderSizes.contains("\(width)x\(height)") else { return .empty }
            return E.element("span", [.class("img-placeholder ph-\(width)x\(height)"), .attribute("role", "img"),
                                      .attribute("aria-label", context.strings.imageUnavailable)], [])
        }
        return E.void("img", [source, .attribute("width", String(width)), .attribute("height", String(height)),
                              .attribute("alt", alt), alt.isEmpty ? nil : altLanguage, lazy ? .attribute("loading", "lazy") : nil,
                              .attribute("decoding", "async")])
    }

    /// The picture sizes with a placeholder class in the stylesheet.
    static let placeholderSizes: Set<String> = ["75x75", "150x225", "64x64", "80x80", "300x450", "300x300"]

    /// The credit a catalog's terms require wherever its data is shown (Marvel's): the upstream's own text
    /// when it sent one, else the source's; nothing for catalogs that require none.
    static func attribution(_ text: String?, source: SourceID, context: ViewContext) -> HTML {
        guard let required = context.presentation(source).requiredAttribution else { return .empty }
        let shown = text.flatMap { $0.isEmpty ? nil : $0 } ?? required
        // The catalog's own words (Marvel's credit), in the catalog's language.
        return E.element("p", [.class("attribution"), context.contentLanguage(source)], [.text(shown)])
    }

    /// The credits of the catalogs among `items` whose terms require one (Marvel's), once each: for a page that lists
    /// items of several catalogs (Home, Favorites), each credit in the words the first of its items came with.
    static func attributions(for items: [CatalogItem], context: ViewContext) -> HTML {
        var seen: Set<SourceID> = []
        return .group(items.compactMap { item in
            guard seen.insert(item.source).inserted, context.presentation(item.source).requiredAttribution != nil else { return nil }
            return attribution(itemAttribution(item), source: item.source, context: context)
        })
    }
}

extension CatalogItem {
    /// The title as a list, a label or a picture's description shows it: at most 300 characters, then "…" (an
    /// upstream's 1 MB title, said four times on each card, made a 4 MB page). The item's own page shows it whole.
    var shownTitle: String {
        title.count <= 300 ? title : String(title.prefix(300)) + "…"
    }
}
