import Foundation
import Hummingbird
import KioskApp
import KioskCore

/// The HTML views. Each returns `HTML`, so every upstream string goes through `HTML.text` or an
/// `Attribute` helper on its way into a page.
enum Pages {
    typealias E = HTML

    /// The frame of every page: navigation across the catalogs, the stylesheet, the content.
    static func layout(title: String, current: String?, _ content: [HTML]) -> HTML {
        let tabs: [(String, String)] = [("/", "Home")] + SourceID.allCases.map { ("/\($0.rawValue)", $0.displayName) }
            + [("/favorites", "Favorites")]
        let nav = E.element("nav", [.attribute("aria-label", "Catalogs")], [
            E.element("ul", [], tabs.map { path, name in
                E.element("li", [], [
                    E.element("a", [Attribute.localHref(path), path == current ? .attribute("aria-current", "page") : nil],
                              [.text(name)]),
                ])
            }),
        ])
        return E.group([
            E.literal("<!doctype html>"),
            E.element("html", [.attribute("lang", "en")], [
                E.element("head", [], [
                    E.void("meta", [.attribute("charset", "utf-8")]),
                    E.void("meta", [.attribute("name", "viewport"), .attribute("content", "width=device-width, initial-scale=1")]),
                    E.element("title", [], [.text(title == "Kiosk" ? title : "\(title) · Kiosk")]),
                    E.void("link", [.attribute("rel", "stylesheet"), Attribute.localHref("/static/app.css")]),
                ]),
                E.element("body", [], [
                    E.element("header", [.class("top")], [nav]),
                    E.element("main", [.attribute("id", "main")], content),
                ]),
            ]),
        ])
    }

    /// A 200 HTML response.
    static func response(_ html: HTML, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: html.rendered)))
    }

    /// `/`: the four catalogs and Favorites.
    static func home() -> HTML {
        layout(title: "Kiosk", current: "/", [
            E.element("h1", [], ["Kiosk"]),
            E.element("p", [], ["Offline-first reader: everything you have seen stays readable without a network."]),
            E.element("ul", [.class("catalogs")], SourceID.allCases.map { source in
                E.element("li", [], [E.element("a", [Attribute.localHref("/\(source.rawValue)")], [.text(source.displayName)])])
            } + [E.element("li", [], [E.element("a", [Attribute.localHref("/favorites")], ["Favorites"])])]),
        ])
    }

    /// An error page: what happened, and a Retry link when retrying can help.
    static func errorResponse(_ error: WebError) -> Response {
        var content: [HTML] = [
            E.element("h1", [], [.text(error.title)]),
            E.element("p", [.class("banner error"), .attribute("role", "alert")], [.text(error.message)]),
        ]
        if let retry = error.retryPath {
            content.append(E.element("p", [], [E.element("a", [Attribute.localHref(retry)], ["Retry"])]))
        }
        content.append(E.element("p", [], [E.element("a", [Attribute.localHref("/")], ["Back to the catalogs"])]))
        return response(layout(title: error.title, current: nil, content), status: error.status)
    }

    /// `/favorites`: every starred item across catalogs, from the store.
    static func favorites(_ items: [CatalogItem]) -> HTML {
        var content: [HTML] = [E.element("h1", [], ["Favorites"])]
        if items.isEmpty {
            content.append(E.element("p", [.class("empty")], ["No favorites yet."]))
        } else {
            // Everything here is a favorite, so every row's star offers "remove".
            content.append(itemList(items, showSource: true, favorites: Set(items.map(\.itemID)), returnPath: "/favorites"))
        }
        return layout(title: "Favorites", current: "/favorites", content)
    }

    /// Rows: picture through the image route at a fixed size, title, subtitle.
    /// `favorites` holds the starred item ids of the rows' source; each row has a star form that
    /// returns to `returnPath`.
    static func itemList(_ items: [CatalogItem], showSource: Bool = false, favorites: Set<String> = [],
                         returnPath: String = "/favorites") -> HTML {
        E.element("ul", [.class("items")], items.map { item in
            let size = rowImageSize(item.source)
            var text: [HTML] = [
                E.element("span", [.class("title")], [.text(item.title)]),
                E.element("span", [.class("subtitle")], [.text(showSource ? "\(item.source.displayName) · \(item.subtitle)" : item.subtitle)]),
            ]
            if item.source == .nyt, !item.summary.isEmpty {
                text.append(E.element("span", [.class("summary")], [.text(item.summary)]))
            }
            return E.element("li", [], [
                E.element("a", [Attribute.localHref(itemPath(item))], [
                    image(item.imageURL, width: size.width, height: size.height, alt: ""),
                    E.element("span", [], text),
                ]),
                starForm(item, isFavorite: favorites.contains(item.itemID), returnPath: returnPath),
            ])
        })
    }

    /// The hidden field every POST form carries: the request's CSRF token (the cookie's value).
    static func csrfField() -> HTML {
        E.void("input", [.attribute("type", "hidden"), .attribute("name", CSRFProtection.fieldName),
                         .attribute("value", CSRFProtection.currentToken)])
    }

    /// A one-button POST form with the CSRF field and hidden `fields`.
    static func postForm(action: String, fields: [(String, String)], label: String, button: HTML,
                         className: String, pressed: Bool? = nil) -> HTML {
        E.element("form", [.class(className), .attribute("method", "post"), .attribute("action", action)],
                  [csrfField()] + fields.map { name, value in
                      E.void("input", [.attribute("type", "hidden"), .attribute("name", name), .attribute("value", value)])
                  } + [
                      E.element("button", [.attribute("type", "submit"), .attribute("aria-label", label),
                                           pressed.map { .attribute("aria-pressed", $0 ? "true" : "false") }], [button]),
                  ])
    }

    /// The star: adds or removes the favorite, then comes back to `returnPath`.
    static func starForm(_ item: CatalogItem, isFavorite: Bool, returnPath: String) -> HTML {
        postForm(action: "/favorites/\(item.source.rawValue)/" + QueryString.encode(item.itemID),
                 fields: [("action", isFavorite ? "remove" : "add"), ("return", returnPath)],
                 label: isFavorite ? "Remove \(item.title) from favorites" : "Add \(item.title) to favorites",
                 button: isFavorite ? "★" : "☆", className: "star", pressed: isFavorite)
    }

    /// `/{source}/{id}` with the id percent-encoded.
    static func itemPath(_ item: CatalogItem) -> String {
        "/\(item.source.rawValue)/" + QueryString.encode(item.itemID)
    }

    /// An image through Kiosk's image route with fixed dimensions (no layout shift), loaded lazily;
    /// nothing when the URL is not http(s).
    static func image(_ url: URL?, width: Int, height: Int, alt: String, lazy: Bool = true) -> HTML {
        guard let source = Attribute.imageSource(url) else { return .empty }
        return E.void("img", [source, .attribute("width", String(width)), .attribute("height", String(height)),
                              .attribute("alt", alt), lazy ? .attribute("loading", "lazy") : nil,
                              .attribute("decoding", "async")])
    }

    /// Row picture sizes per catalog, matching the upstream variants the rows use.
    static func rowImageSize(_ source: SourceID) -> (width: Int, height: Int) {
        switch source {
        case .nyt: (75, 75)
        case .marvel: (64, 96)
        case .rickandmorty: (64, 64)
        case .dogs: (80, 80)
        }
    }

    /// Marvel's attribution, required wherever its data is shown.
    static func attribution(_ text: String?) -> HTML {
        let shown = (text?.isEmpty ?? true) ? "Data provided by Marvel. © MARVEL" : text!
        return E.element("p", [.class("attribution")], [.text(shown)])
    }
}
