import Foundation
import KioskApp
import KioskCore

// Home, a reader's front page, and Settings, where what the device keeps and the reading history are managed.

extension Pages {
    /// What Home shows besides the catalogs, read from the store for one visit.
    struct HomeActivity {
        /// Where this visit's changes start; nil on a browser's first visit.
        var since: Date?
        /// What changed in each catalog since then.
        var changes: [CatalogChanges]
        var recentlyRead: [ReadItem]
        /// The latest favorites, and how many there are in all.
        var favorites: [CatalogItem]
        var favoriteCount: Int
        var now: Date
    }

    /// `/`: what changed since the last visit, what the reader opened last, the latest favorites, then the catalogs.
    /// The brand bar already says "Kiosk": the page's heading is Home.
    static func home(_ context: ViewContext, activity: HomeActivity) -> HTML {
        let strings = context.strings
        let words = context.language.home
        let favoriteSet = Set(activity.favorites.map(\.id))
        let isFavorite = { (item: CatalogItem) in favoriteSet.contains(item.id) }
        var content: [HTML] = [
            E.element("h1", [], [.text(strings.home)]),
            E.element("p", [.class("tagline")], [.text(strings.tagline)]),
        ]
        if let since = activity.since {
            content.append(changesSection(activity.changes, since: since, now: activity.now, context: context))
        }
        if !activity.recentlyRead.isEmpty {
            content.append(homeSection("recent", title: words.recentlyRead, [
                itemList(activity.recentlyRead.map(\.item), context: context, showSource: true, rows: true,
                         isFavorite: isFavorite, returnPath: Route.home.path),
            ]))
        }
        if !activity.favorites.isEmpty {
            content.append(homeSection("home-favorites", title: strings.favorites, [
                itemList(activity.favorites, context: context, showSource: true, rows: true, isFavorite: { _ in true },
                         returnPath: Route.home.path),
                E.element("p", [.class("more")], [
                    E.element("a", [Attribute.localHref(Route.favorites.path)], [
                        .text("\(words.allFavorites) (\(Localized.number(activity.favoriteCount, language: context.language)))"),
                    ]),
                ]),
            ]))
        }
        content.append(homeSection("home-catalogs", title: strings.catalogs, [catalogCards(context)]))
        // Marvel's terms ask for its credit wherever its data is shown: a character read or starred is shown here.
        content.append(attributions(for: activity.changes.flatMap(\.latest) + activity.recentlyRead.map(\.item) + activity.favorites,
                                    context: context))
        return layout(context, title: strings.home, current: Route.home.path, view: .home, content)
    }

    /// A part of Home: a section labelled by its heading.
    private static func homeSection(_ id: String, title: String, _ content: [HTML]) -> HTML {
        E.element("section", [.class("home-part"), .attribute("id", id), .attribute("aria-labelledby", id + "-title")],
                  [E.element("h2", [.attribute("id", id + "-title")], [.text(title)])] + content)
    }

    /// "Since your last visit": per catalog, how many items are new and updated, and the latest of them; or that
    /// nothing changed.
    private static func changesSection(_ changes: [CatalogChanges], since: Date, now: Date, context: ViewContext) -> HTML {
        let words = context.language.home
        let ago = Localized.age(now.timeIntervalSince(since), language: context.language)
        guard !changes.isEmpty else { return E.element("p", [.class("status nothing-new")], [.text(words.nothingNew(ago))]) }
        return homeSection("changes", title: words.sinceLastVisit(ago), [
            E.element("ul", [.class("changes")], changes.map { change in
                let presentation = context.presentation(change.source)
                return E.element("li", [], [
                    E.element("a", [.class("catalog"), Attribute.localHref(Route.list(change.source).path)], [
                        E.element("span", [.class("icon"), .attribute("aria-hidden", "true")], [.text(presentation.icon)]),
                        E.element("span", [.class("title")], [.text(context.sourceName(change.source))]),
                        E.element("span", [.class("subtitle")], [.text(words.changeCounts(change.added, change.updated))]),
                    ]),
                    E.element("ul", [.class("changed-items")], change.latest.map { item in
                        E.element("li", [], [E.element("a", [Attribute.localHref(itemPath(item)), context.contentLanguage(item.source)],
                                                 [.text(item.shownTitle)])])
                    }),
                ])
            }),
        ])
    }

    /// The catalogs and Favorites as cards, each with a line saying what it holds.
    private static func catalogCards(_ context: ViewContext) -> HTML {
        let language = context.language.rawValue
        let cards = context.catalogs.sources.map { source in
            E.element("li", [], [
                E.element("a", [Attribute.localHref(Route.list(source.id).path)], [
                    E.element("span", [.class("icon"), .attribute("aria-hidden", "true")], [.text(source.presentation.icon)]),
                    E.element("span", [.class("title")], [.text(source.presentation.name(language: language))]),
                    E.element("span", [.class("subtitle")], [.text(source.presentation.tagline(language: language))]),
                ]),
            ])
        } + [E.element("li", [], [
            E.element("a", [Attribute.localHref(Route.favorites.path)], [
                E.element("span", [.class("icon"), .attribute("aria-hidden", "true")], ["★"]),
                E.element("span", [.class("title")], [.text(context.strings.favorites)]),
                E.element("span", [.class("subtitle")], [.text(context.language.home.favoritesTagline)]),
            ]),
        ])]
        return E.element("ul", [.class("catalogs")], cards)
    }

    /// `/settings`: what this device keeps for offline reading, and the reading history.
    static func settings(_ context: ViewContext) -> HTML {
        let words = context.language.home
        return layout(context, title: words.settings, current: Route.settings.path, view: .settings, [
            E.element("h1", [], [.text(words.settings)]),
            deviceSection(context),
            E.element("section", [.class("settings-part"), .attribute("aria-labelledby", "history-title")], [
                E.element("h2", [.attribute("id", "history-title")], [.text(words.readingHistory)]),
                E.element("p", [.class("hint")], [.text(words.readingHistoryHint)]),
                // Clearing cannot be undone: a second, deliberate step, as the dogs list's Reset is.
                E.element("details", [.class("confirm-reset")], [
                    E.element("summary", [], [.text(words.clearHistory + "…")]),
                    E.element("p", [], [.text(words.clearHistoryWarning(words.recentlyRead))]),
                    postForm(action: Route.clearHistory.path, fields: [], label: words.clearHistory, button: .text(words.clearHistory),
                             className: "clear-history", context: context),
                ]),
            ]),
        ])
    }

    /// What this device keeps for offline reading, and the controls over it. Hidden until the script shows it:
    /// without a service worker (no script, or plain HTTP off loopback) nothing is kept on the device.
    static func deviceSection(_ context: ViewContext) -> HTML {
        let strings = context.language.device
        let limits = [25, 50, 100, 250]
        return E.element("section", [.attribute("id", "device"), .class("device"), .flag("hidden"),
                                     .attribute("aria-labelledby", "device-title")], [
            E.element("h2", [.attribute("id", "device-title")], [.text(strings.onThisDevice)]),
            E.element("p", [.attribute("id", "device-usage"), .attribute("role", "status")], []),
            E.element("label", [.class("switch")], [
                E.void("input", [.attribute("type", "checkbox"), .attribute("id", "save-offline"), .flag("checked")]),
                " ", .text(strings.saveForOffline),
            ]),
            E.element("p", [.class("hint")], [.text(strings.saveForOfflineHint)]),
            E.element("label", [.class("limit")], [
                .text(strings.storageLimit), " ",
                E.element("select", [.attribute("id", "device-limit")], limits.map { megabytes in
                    E.element("option", [.attribute("value", String(megabytes)), megabytes == 50 ? .flag("selected") : nil],
                              [.text("\(megabytes) MB")])
                }),
            ]),
            E.element("button", [.attribute("type", "button"), .attribute("id", "device-clear")], [.text(strings.clear)]),
        ])
    }
}
