import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Phone-friendly web app: manifest, icons, back/forward cache")
struct WebManifestTests {
    @Test("The manifest names the app, opens standalone at /, and lists icons and a shortcut per catalog and Favorites")
    func manifest() async throws {
        try await withWeb { _, client in
            // When the manifest is fetched without any cookie, as a browser does
            let answer = try await client.get("/manifest.webmanifest")
            // Then it is a manifest with what installation needs
            #expect(answer.status == .ok)
            #expect(answer.header("Content-Type") == "application/manifest+json")
            let manifest = try answer.json()
            #expect(manifest["name"] as? String == "Kiosk")
            #expect(manifest["short_name"] as? String == "Kiosk")
            #expect(manifest["start_url"] as? String == "/")
            #expect(manifest["display"] as? String == "standalone")
            #expect(manifest["theme_color"] as? String == "#0b57d0")
            let icons = try #require(manifest["icons"] as? [[String: String]])
            #expect(Set(icons.map { "\($0["sizes"] ?? "") \($0["purpose"] ?? "")" })
                    == ["192x192 any", "512x512 any", "192x192 maskable", "512x512 maskable"])
            // And every icon it names is a PNG served at its address
            for icon in icons {
                let png = try await client.get(try #require(icon["src"]))
                #expect(png.status == .ok)
                #expect(png.header("Content-Type") == "image/png")
                #expect(Array(png.bytes.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            }
            let shortcuts = try #require(manifest["shortcuts"] as? [[String: Any]])
            #expect(shortcuts.compactMap { $0["url"] as? String } == ["/nyt", "/marvel", "/rickandmorty", "/dogs", "/favorites"])
            // And a second fetch with its ETag is a 304
            let etag = try #require(answer.header("ETag"))
            let again = try await client.get("/manifest.webmanifest", headers: [.ifNoneMatch: etag])
            #expect(again.status == .notModified)
        }
    }

    @Test("The manifest follows the language: a Spanish browser gets Spanish shortcut names; Favorites is described as Home does, not as an empty list")
    func spanishManifest() async throws {
        try await withWeb { _, client in
            let manifest = try await client.get("/manifest.webmanifest", headers: [.acceptLanguage: "es"]).json()
            let shortcuts = try #require(manifest["shortcuts"] as? [[String: Any]])
            #expect(shortcuts.last?["name"] as? String == "Favoritos")
            #expect(shortcuts.last?["description"] as? String == "Lo que marcaste con una estrella, guardado para leer sin conexión.")
            #expect(manifest["lang"] as? String == "es")
            let english = try await client.get("/manifest.webmanifest").json()
            let favorites = try #require((english["shortcuts"] as? [[String: Any]])?.last)
            #expect(favorites["description"] as? String == "What you starred, kept for reading offline.")
        }
    }

    @Test("Every page links the manifest, the icons, both theme colours and Safari's tags")
    func headTags() async throws {
        try await withWeb { _, client in
            let html = try await client.get("/rickandmorty").body
            #expect(html.contains("<link rel=\"manifest\" href=\"/manifest.webmanifest\">"))
            #expect(html.contains("rel=\"apple-touch-icon\" href=\"/static/apple-touch-icon."))
            #expect(html.contains("<meta name=\"theme-color\" media=\"(prefers-color-scheme: dark)\" content=\"#121214\">"))
            #expect(html.contains("<meta name=\"apple-mobile-web-app-capable\" content=\"yes\">"))
            #expect(html.contains("rel=\"icon\" type=\"image/png\" sizes=\"192x192\""))
        }
    }

    @Test("Pages may enter the back/forward cache: private and revalidated, never no-store")
    func cacheableForBackForward() async throws {
        try await withWeb { _, client in
            for path in ["/", "/rickandmorty", "/rickandmorty/1", "/favorites", "/no-such-catalog"] {
                let page = try await client.get(path)
                #expect(page.header("Cache-Control") == "private, no-cache", "\(path)")
            }
        }
    }
}
