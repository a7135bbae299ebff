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
                E.element("a", [Attribute.localHref("/\(item.source.rawValue)")], [.text("‹ \(context.sourceName(item.source))")]),
            ]),
        ]
        if let error = result.error {
            let offline = error.isConnectivityFailure
            content.append(E.element("p", [.class(offline ? "banner offline" : "banner error"), .attribute("role", "status")], [
                .text(offline ? strings.offlineSaved : strings.couldNotRefresh(error.description)),
            ]))
        }
        content.append(E.element("div", [.class("favorite-row")], [
            starForm(item, isFavorite: result.isFavorite, returnPath: itemPath(item), context: context),
            result.isFavorite ? E.element("span", [.class("favorite")], [.text(strings.favorite)]) : .empty,
        ]))
        let body: [HTML]
        switch item.detail {
        case .article(let article): body = self.article(item, article, context: context)
        case .marvelCharacter(let character): body = marvel(item, character, context: context)
        case .rickAndMorty(let character): body = rickAndMorty(item, character, context: context)
        case .dog(let dog): body = self.dog(item, dog, context: context)
        }
        content.append(E.element("article", [.class("detail")], body))
        return layout(context, title: item.title, current: "/\(item.source.rawValue)", view: .detail, source: item.source, content)
    }

    private static func heading(_ item: CatalogItem) -> HTML {
        E.element("h1", [], [.text(item.title)])
    }

    private static func article(_ item: CatalogItem, _ article: Article, context: ViewContext) -> [HTML] {
        var parts: [HTML] = []
        if let picture = article.largestImage {
            parts.append(image(picture.url, width: picture.width ?? 440, height: picture.height ?? 293,
                               alt: article.caption ?? "", lazy: false, context: context))
        }
        let section = [article.section, article.subsection].filter { !$0.isEmpty }.joined(separator: " · ")
        if !section.isEmpty { parts.append(E.element("p", [.class("status")], [.text(section)])) }
        parts.append(heading(item))
        if !article.byline.isEmpty { parts.append(E.element("p", [.class("byline")], [.text(article.byline)])) }
        if !article.publishedDate.isEmpty {
            parts.append(E.element("p", [.class("status")], [
                E.element("time", [.attribute("datetime", article.publishedDate)], [.text(Localized.date(article.publishedDate, language: context.language))]),
            ]))
        }
        if !item.summary.isEmpty { parts.append(E.element("p", [.class("abstract")], [.text(item.summary)])) }
        if !article.keywords.isEmpty {
            parts.append(E.element("ul", [.class("keywords"), .attribute("aria-label", context.strings.keywords)],
                                   article.keywords.map { E.element("li", [], [.text($0)]) }))
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
        var parts: [HTML] = [heading(item)]
        let picture = character.thumbnail?.url(variant: "portrait_uncanny") ?? item.imageURL
        parts.append(image(picture, width: 300, height: 450, alt: item.title, lazy: false, context: context))
        // The original app hid the description when Marvel has none, rather than showing an empty block.
        if !item.summary.isEmpty { parts.append(E.element("p", [.class("abstract")], [.text(item.summary)])) }
        let collections: [(String, MarvelCollection)] = [("Comics", character.comics), ("Series", character.series),
                                                         ("Stories", character.stories), ("Events", character.events)]
        for (name, collection) in collections {
            var tiles = collection.items.prefix(20).map { E.element("li", [], [.text($0)]) }
            if collection.hasMore || collection.items.count > 20 {
                tiles.append(E.element("li", [.class("more"), .attribute("aria-label", strings.andMore)], ["…"]))
            }
            parts.append(E.element("section", [.class("collection")], [
                E.element("h2", [], [.text("\(strings.collection(name)) (\(Localized.number(collection.available, language: context.language)))")]),
                // Focusable and labelled, so the sideways-scrolling row can be scrolled from the keyboard.
                tiles.isEmpty ? E.element("p", [.class("status")], [.text(strings.none)])
                    : E.element("ul", [.attribute("tabindex", "0"), .attribute("aria-label", strings.collection(name))], tiles),
            ]))
        }
        parts.append(attribution(character.attribution, source: .marvel, context: context))
        return parts
    }

    private static func rickAndMorty(_ item: CatalogItem, _ character: RickAndMortyCharacter, context: ViewContext) -> [HTML] {
        let rows: [(String, String)] = [
            ("Status", "\(character.statusEmoji) \(character.status)"),
            ("Gender", "\(genderEmoji(character.gender)) \(character.gender)"),
            ("Species", character.species),
            ("Type", character.type.isEmpty ? "—" : character.type),
            ("Origin", character.origin.name),
            ("Location", character.location.name),
            ("Episodes", Localized.number(character.episodes.count, language: context.language)),
        ]
        return [
            image(item.imageURL, width: 300, height: 300, alt: item.title, lazy: false, context: context),
            heading(item),
            E.element("dl", [], rows.flatMap { name, value in
                [E.element("dt", [], [.text(context.strings.field(name))]), E.element("dd", [], [.text(value)])]
            }),
        ]
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
            image(dog.image ?? item.imageURL, width: 300, height: 300, alt: item.title, lazy: false, context: context),
            heading(item),
            E.element("p", [.class("abstract")], [.text(dog.description)]),
            E.element("p", [.class("status")], [.text(context.strings.almostYears(dog.age))]),
        ]
    }
}
