import Foundation
import Hummingbird
import KioskCore

/// `/manifest.webmanifest`: what makes Kiosk installable on a phone or a desktop — its names, the page it
/// opens on, a standalone window, its colours, icons of every size and purpose, and a shortcut to each
/// configured catalog and to Favorites. Served to anyone, like the icons it names: a browser fetches it
/// without cookies.
enum WebManifest {
    /// Where pages link it.
    static let path = Route.manifest.path
    /// The light scheme's bar colour (the accent).
    static let lightThemeColor = "#0b57d0"
    /// The dark scheme's bar colour (the page background).
    static let darkThemeColor = "#121214"

    /// The manifest in `language`, with a shortcut per catalog of `catalogs`.
    static func document(catalogs: Catalogs, language: Language) throws -> [UInt8] {
        let strings = language.strings
        let icons = [
            Icon(src: StaticAssets.icon192.path, sizes: "192x192", purpose: "any"),
            Icon(src: StaticAssets.icon512.path, sizes: "512x512", purpose: "any"),
            Icon(src: StaticAssets.maskableIcon192.path, sizes: "192x192", purpose: "maskable"),
            Icon(src: StaticAssets.maskableIcon512.path, sizes: "512x512", purpose: "maskable"),
        ]
        let shortcutIcon = [Icon(src: StaticAssets.icon192.path, sizes: "192x192", purpose: "any")]
        let shortcuts = catalogs.sources.map { source in
            let presentation = source.presentation
            return Shortcut(name: presentation.name(language: language.rawValue),
                            short_name: presentation.shortName(language: language.rawValue),
                            description: presentation.tagline(language: language.rawValue),
                            url: Route.list(source.id).path, icons: shortcutIcon)
        } + [Shortcut(name: strings.favorites, short_name: strings.favorites, description: language.home.favoritesTagline,
                      url: Route.favorites.path, icons: shortcutIcon)]
        let manifest = Manifest(
            id: Route.home.path, name: "Kiosk", short_name: "Kiosk", description: strings.tagline, lang: language.rawValue,
            start_url: Route.home.path, scope: Route.home.path, display: "standalone", orientation: "any",
            background_color: "#fafafa", theme_color: lightThemeColor, icons: icons, shortcuts: shortcuts)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(manifest))
    }

    /// The manifest as a response: `application/manifest+json`, revalidated by ETag (its names follow the
    /// language and the configured catalogs, so it is not immutable).
    static func response(catalogs: Catalogs, language: Language, request: Request) throws -> Response {
        let body = try document(catalogs: catalogs, language: language)
        let etag = "\"" + Fingerprint.hex(body) + "\""
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "no-cache", .vary: "Accept-Language, Cookie"]
        if request.matchesETag(etag) { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = "application/manifest+json"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    // The W3C manifest's member names, snake_case as the format spells them.
    private struct Manifest: Encodable {
        let id, name, short_name, description, lang, start_url, scope, display, orientation: String
        let background_color, theme_color: String
        let icons: [Icon]
        let shortcuts: [Shortcut]
    }

    private struct Icon: Encodable {
        let src, sizes: String
        let type = "image/png"
        let purpose: String
    }

    private struct Shortcut: Encodable {
        let name, short_name, description, url: String
        let icons: [Icon]
    }
}
