import Foundation
import KioskApp
import KioskCore

extension Pages {
    /// `/{source}/{id}`: one item, laid out for its kind.
    static func detail(_ result: ItemResult, context: ViewContext) -> HTML {
        let strings = context.strings
        let item = result.item
        var content: [HTML] = [
            E.element("p", [.class("back")], [
                E.element("a", [Attribute.localHref(Route.list(item.source).path)], [.text("‹ \(context.sourceName(item.source))")]),
            ]),
        ]
        if let error = result.error {
            let offline = error.isConnectivityFailure
            content.append(E.element("p", [.class(offline ? "banner offline" : "banner error"), .attribute("role", "status")], [
                .text(offline ? strings.offlineSaved : strings.couldNotRefresh(strings.upstreamProblem(error))),
            ]))
        }
        content.append(E.element("div", [.class("favorite-row")], [
            starForm(item, isFavorite: result.isFavorite, returnPath: itemPath(item), labelled: true, context: context),
        ]))
        let body: [HTML]
        switch item.detail {
        case .article(let article): body = self.article(item, article, context: context)
        case .marvelCharacter(let character): body = marvel(item, character, context: context)
        case .rickAndMorty(let character): body = rickAndMorty(item, character, linked: result.linked, context: context)
        case .rickAndMortyEpisode(let episode): body = self.episode(item, episode, linked: result.linked, context: context)
        case .rickAndMortyLocation(let location): body = self.location(item, location, linked: result.linked, context: context)
        case .dog(let dog): body = self.dog(item, dog, context: context)
        }
        // What of the linked items is missing is said at the top, where a refresh error is said too.
        content += linkedProblems(result.linked, context: context)
        content.append(E.element("article", [.class("detail \(item.detail.kind)")], body))
        return layout(context, title: item.shownTitle, current: Route.list(item.source).path, view: .detail, source: item.source, content)
    }

    private static func heading(_ item: CatalogItem, context: ViewContext) -> HTML {
        E.element("h1", [context.contentLanguage(item.source)], [.text(item.title)])
    }

    private static func article(_ item: CatalogItem, _ article: Article, context: ViewContext) -> [HTML] {
        var parts: [HTML] = []
        if let picture = article.largestImage {
            parts.append(image(picture.url, width: picture.width ?? 440, height: picture.height ?? 293,
                               alt: article.caption ?? "", altLanguage: context.contentLanguage(item.source), lazy: false, context: context))
        }
        let section = [article.section, article.subsection].filter { !$0.isEmpty }.joined(separator: " · ")
        let lang = context.contentLanguage(item.source)
        if !section.isEmpty { parts.append(E.element("p", [.class("status"), lang], [.text(section)])) }
        parts.append(heading(item, context: context))
        if !article.byline.isEmpty { parts.append(E.element("p", [.class("byline"), lang], [.text(article.byline)])) }
        if !article.publishedDate.isEmpty {
            parts.append(E.element("p", [.class("status")], [
                E.element("time", [.attribute("datetime", article.publishedDate)], [.text(Localized.date(article.publishedDate, language: context.language))]),
            ]))
        }
        if !item.summary.isEmpty { parts.append(E.element("p", [.class("abstract"), lang], [.text(item.summary)])) }
        if !article.keywords.isEmpty {
            parts.append(E.element("ul", [.class("keywords"), .attribute("aria-label", context.strings.keywords)],
                                   article.keywords.map { E.element("li", [lang], [.text($0)]) }))
        }
        if let link = Attribute.externalHref(article.url) {
            parts.append(E.element("p", [], [
                E.element("a", [link, .attribute("target", "_blank"), .attribute("rel", "noopener noreferrer")],
                          [.text(context.strings.readFullArticle)]),
            ]))
        }
        return parts
    }

    private static func marvel(_ item: CatalogItem, _ character: MarvelCharacter, context: ViewContext) -> [HTML] {
        let strings = context.strings
        var parts: [HTML] = [heading(item, context: context)]
        let picture = character.thumbnail?.url(variant: "portrait_uncanny") ?? item.imageURL
        parts.append(image(picture, width: 300, height: 450, alt: item.shownTitle, altLanguage: context.contentLanguage(item.source), lazy: false, context: context))
        // The original app hid the description when Marvel has none, rather than showing an empty block.
        let lang = context.contentLanguage(item.source)
        if !item.summary.isEmpty { parts.append(E.element("p", [.class("abstract"), lang], [.text(item.summary)])) }
        let collections: [(String, MarvelCollection)] = [("Comics", character.comics), ("Series", character.series),
                                                         ("Stories", character.stories), ("Events", character.events)]
        for (name, collection) in collections {
            var tiles = collection.items.prefix(20).map { E.element("li", [lang], [.text($0)]) }
            if collection.hasMore || collection.items.count > 20 {
                tiles.append(E.element("li", [.class("more"), .attribute("aria-label", strings.andMore)], ["…"]))
            }
            parts.append(E.element("section", [.class("collection")], [
                E.element("h2", [], [.text("\(strings.collection(name)) (\(Localized.number(collection.available, language: context.language)))")]),
                // Focusable and labelled, so the sideways-scrolling row can be scrolled from the keyboard.
                tiles.isEmpty ? E.element("p", [.class("status")], [.text(strings.noneInCollection(name))])
                    : E.element("ul", [.attribute("tabindex", "0"), .attribute("aria-label", strings.collection(name))], tiles),
            ]))
        }
        parts.append(attribution(character.attribution, source: .marvel, context: context))
        return parts
    }

    /// The character sheet first (a phone shows it before anything else), then a jump list, the places
    /// with their type, dimension and residents, and every episode in airing order: plain HTML, no script.
    private static func rickAndMorty(_ item: CatalogItem, _ character: RickAndMortyCharacter, linked: LinkedItems,
                                     context: ViewContext) -> [HTML] {
        let words = context.language.linked
        let episodes = linked.entries(.episode)
        // The signs are the original app's glance aids: hidden from screen readers, which would read "man dancing" before
        // the word that says the same.
        let sign = { (emoji: String) in E.element("span", [.attribute("aria-hidden", "true")], [.text(emoji + " ")]) }
        let rows: [(String, [HTML])] = [
            ("Status", [sign(character.statusEmoji), .text(characterStatus(character, strings: context.strings))]),
            ("Gender", [sign(genderEmoji(character.gender)), .text(context.strings.filterValue("gender", character.gender.lowercased()))]),
            ("Species", [.text(characterSpecies(character, strings: context.strings))]),
            ("Type", [character.type.isEmpty ? .text("—")
                      : context.contentText(character.type, of: item.source)]),
            ("Episodes", [.text(Localized.number(character.episodes.count, language: context.language))]),
        ]
        let episodesHeading = "\(words.episodes) (\(Localized.number(character.episodes.count, language: context.language)))"
        // One wrapper, laid out by the article's width (a container query), so the sheet sits beside the
        // places and episodes in a wide page but not in the narrower detail pane of the split view.
        return [E.element("div", [.class("character")], [
            E.element("div", [.class("sheet")], [
                image(item.imageURL, width: 300, height: 300, alt: item.shownTitle, altLanguage: context.contentLanguage(item.source), lazy: false, context: context),
                heading(item, context: context),
                E.element("dl", [], rows.flatMap { name, value in
                    [E.element("dt", [], [.text(context.strings.field(name))]), E.element("dd", [], value)]
                }),
            ]),
            E.element("nav", [.class("jump"), .attribute("aria-label", words.onThisPage)], [E.element("ul", [], [
                E.element("li", [], [E.element("a", [.attribute("href", "#places")], [.text(words.places)])]),
                E.element("li", [], [E.element("a", [.attribute("href", "#episodes")], [.text(episodesHeading)])]),
            ])]),
            E.element("section", [.attribute("id", "places"), .attribute("aria-labelledby", "places-heading")], [
                E.element("h2", [.attribute("id", "places-heading")], [.text(words.places)]),
                E.element("div", [.class("places")], [
                    place(words.origin, character.origin, linked.entries(.origin).first, of: item, context: context),
                    place(words.lastLocation, character.location, linked.entries(.location).first, of: item, context: context),
                ]),
            ]),
            E.element("section", [.attribute("id", "episodes"), .attribute("aria-labelledby", "episodes-heading")], [
                E.element("h2", [.attribute("id", "episodes-heading")], [.text(episodesHeading)]),
                episodes.isEmpty ? E.element("p", [.class("status")], [.text(context.strings.none)])
                    : E.element("ol", [.class("episodes")], episodes.map { episodeRow($0, of: item, context: context) }),
            ]),
        ])]
    }

    /// A place card: its name linking to the location page, then type, dimension and residents.
    private static func place(_ label: String, _ place: RickAndMortyCharacter.Place, _ entry: LinkedItems.Entry?,
                              of character: CatalogItem, context: ViewContext) -> HTML {
        let words = context.language.linked
        var parts: [HTML] = [E.element("h3", [], [.text(label)])]
        if let item = entry?.item, case .rickAndMortyLocation(let location) = item.detail {
            parts.append(E.element("p", [.class("place-name")], [
                E.element("a", [Attribute.localHref(itemPath(item)), context.contentLanguage(item.source)], [.text(item.shownTitle)]),
            ]))
            let residents = words.residentCount(Localized.number(location.residents.count, language: context.language))
            var facts: [HTML] = []
            if !location.typeAndDimension.isEmpty {
                facts += [context.contentText(location.typeAndDimension, of: item.source), .text(" · ")]
            }
            parts.append(E.element("p", [.class("status")], facts + [.text(residents)]))
        } else if let entry {
            // Linked but not stored, and it could not be fetched: the link still leads to its page.
            parts.append(E.element("p", [.class("place-name")], [
                E.element("a", [Attribute.localHref(itemPath(source: character.source, itemID: entry.link.itemID)),
                                context.contentLanguage(character.source)], [.text(place.name)]),
            ]))
            parts.append(E.element("p", [.class("status")], [.text(words.notSaved)]))
        } else {
            let known = !place.name.isEmpty && place.name.lowercased() != "unknown"
            parts.append(E.element("p", [.class("place-name"), known ? context.contentLanguage(character.source) : nil],
                                   [.text(known ? place.name : words.unknown)]))
        }
        return E.element("div", [.class("place")], parts)
    }

    /// "S01E01 · Pilot · December 2, 2013" as a link to the episode, or what is known of a missing one.
    private static func episodeRow(_ entry: LinkedItems.Entry, of character: CatalogItem, context: ViewContext) -> HTML {
        guard let item = entry.item, case .rickAndMortyEpisode(let episode) = item.detail else {
            return missingRow(entry, of: character, context: context)
        }
        return E.element("li", [], [E.element("a", [Attribute.localHref(itemPath(item))], episodeLine(item, episode, context: context))])
    }

    /// A linked item neither stored nor fetched: its id, linking to its page (which may fetch it), and why.
    private static func missingRow(_ entry: LinkedItems.Entry, of item: CatalogItem, context: ViewContext) -> HTML {
        E.element("li", [.class("missing")], [
            E.element("a", [Attribute.localHref(itemPath(source: item.source, itemID: entry.link.itemID))], [.text(entry.link.itemID)]),
            .text(" — " + context.language.linked.notSaved),
        ])
    }

    private static func episodeLine(_ item: CatalogItem, _ episode: RickAndMortyEpisode, context: ViewContext) -> [HTML] {
        var parts: [HTML] = []
        if !episode.code.isEmpty { parts += [E.element("span", [.class("code")], [.text(episode.code)]), .text(" · ")] }
        parts.append(E.element("span", [.class("name"), context.contentLanguage(item.source)], [.text(item.shownTitle)]))
        if !episode.airDate.isEmpty { parts += [.text(" · "), airDate(episode, context: context)] }
        return parts
    }

    private static func airDate(_ episode: RickAndMortyEpisode, context: ViewContext) -> HTML {
        let text = episode.airDate(language: context.language.locale.identifier)
        guard let day = episode.airDay, let year = day.year, let month = day.month, let dayOfMonth = day.day else {
            return .text(text)
        }
        let iso = String(format: "%04d-%02d-%02d", year, month, dayOfMonth)
        return E.element("time", [.attribute("datetime", iso)], [.text(text)])
    }

    /// An episode: code and air date, then its characters a page at a time.
    private static func episode(_ item: CatalogItem, _ episode: RickAndMortyEpisode, linked: LinkedItems,
                                context: ViewContext) -> [HTML] {
        let words = context.language.linked
        var rows: [HTML] = []
        if !episode.code.isEmpty { rows += [E.element("dt", [], [.text(words.episode)]), E.element("dd", [], [.text(episode.code)])] }
        if !episode.airDate.isEmpty { rows += [E.element("dt", [], [.text(words.aired)]), E.element("dd", [], [airDate(episode, context: context)])] }
        return [heading(item, context: context), E.element("dl", [], rows)]
            + linkedCharacters(item, linked, role: .character, heading: words.characters, context: context)
    }

    /// A location: type, dimension and resident count, then its residents a page at a time.
    private static func location(_ item: CatalogItem, _ location: RickAndMortyLocation, linked: LinkedItems,
                                 context: ViewContext) -> [HTML] {
        let words = context.language.linked
        // The upstream's words in its language; what Kiosk says of an unknown one in the page's.
        let known = { (text: String, unknown: String) -> HTML in
            text.isEmpty || text.lowercased() == "unknown" ? .text(unknown)
                : context.contentText(text, of: item.source)
        }
        let rows: [(String, HTML)] = [
            (context.strings.field("Type"), known(location.type, words.unknown)),
            (words.dimension, known(location.dimension, words.unknownDimension)),
            (words.residents, .text(Localized.number(location.residents.count, language: context.language))),
        ]
        return [heading(item, context: context), E.element("dl", [], rows.flatMap { name, value in
            [E.element("dt", [], [.text(name)]), E.element("dd", [], [value])]
        })] + linkedCharacters(item, linked, role: .resident, heading: words.residents, context: context)
    }

    /// The page of linked characters as list rows (picture, name, status) linking to them, with a pager.
    private static func linkedCharacters(_ item: CatalogItem, _ linked: LinkedItems, role: ItemLink.Role, heading: String,
                                         context: ViewContext) -> [HTML] {
        let entries = linked.entries(role)
        let total = linked.counts[role] ?? 0
        var parts: [HTML] = [E.element("h2", [.attribute("id", "linked-heading")],
                                       [.text("\(heading) (\(Localized.number(total, language: context.language)))")])]
        if entries.isEmpty { parts.append(E.element("p", [.class("status")], [.text(context.strings.none)])) }
        let stored = entries.compactMap(\.item)
        if !stored.isEmpty {
            parts.append(itemList(stored, context: context, isFavorite: { linked.favorites.contains($0.itemID) },
                                  returnPath: itemPath(item)))
        }
        let missing = entries.filter { $0.item == nil }
        if !missing.isEmpty {
            parts.append(E.element("ul", [.class("missing-links")], missing.map { missingRow($0, of: item, context: context) }))
        }
        parts.append(pager(current: linked.page, totalPages: linked.pageCount,
                           path: { itemPath(item) + ($0 == 1 ? "" : "?page=\($0)") }, context: context))
        return [E.element("section", [.attribute("aria-labelledby", "linked-heading")], parts)]
    }

    /// Says what of the linked items is missing and why, so a failed fetch never passes unnoticed.
    private static func linkedProblems(_ linked: LinkedItems, context: ViewContext) -> [HTML] {
        let words = context.language.linked
        var notes: [HTML] = []
        let missing = linked.missing.count
        if missing > 0 {
            var text = words.missing(missing)
            if let error = linked.error { text += " " + context.strings.couldNotRefresh(context.strings.upstreamProblem(error)) }
            notes.append(E.element("p", [.class("banner error"), .attribute("role", "status")], [.text(text)]))
        }
        if !linked.skipped.isEmpty {
            notes.append(E.element("p", [.class("status")], [.text(words.skipped(linked.skipped.count))]))
        }
        return notes
    }

    /// The original app's gender signs; "?" when unknown, like the status.
    static func genderEmoji(_ gender: String) -> String {
        switch gender.lowercased() {
        case "female": "♀️"
        case "male": "♂️"
        case "genderless": "⚪"
        default: "?"
        }
    }

    private static func dog(_ item: CatalogItem, _ dog: Dog, context: ViewContext) -> [HTML] {
        [
            image(dog.image ?? item.imageURL, width: 300, height: 300, alt: item.shownTitle, altLanguage: context.contentLanguage(item.source), lazy: false, context: context),
            heading(item, context: context),
            E.element("p", [.class("abstract"), context.contentLanguage(item.source)], [.text(dog.description)]),
            E.element("p", [.class("status")], [.text(context.strings.almostYears(dog.age))]),
        ]
    }
}
