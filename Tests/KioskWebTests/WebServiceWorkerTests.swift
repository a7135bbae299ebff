import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Offline on the device: the service worker, its shell and the offline page")
struct WebServiceWorkerTests {
    /// The prelude's JSON: `self.kioskShell = {...};` on the first line.
    private func shell(_ script: String) throws -> [String: Any] {
        let firstLine = try #require(script.split(separator: "\n", maxSplits: 1).first)
        #expect(firstLine.hasPrefix("self.kioskShell = "))
        let json = firstLine.dropFirst("self.kioskShell = ".count).dropLast()
        return try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    @Test("The worker is served at the root, never cached by HTTP, and names every shell file pages link")
    func worker() async throws {
        try await withWeb { _, client in
            // When the worker and a page are fetched
            let answer = try await client.get("/sw.js")
            let page = try await client.get("/rickandmorty").body
            // Then the worker is JavaScript revalidated on every check, so a new version is found at once
            #expect(answer.status == .ok)
            #expect(answer.header("Content-Type") == "text/javascript; charset=utf-8")
            #expect(answer.header("Cache-Control") == "no-cache")
            // And its shell lists the stylesheet and every script the page links, the icons, and the shell's pages
            let shell = try shell(answer.body)
            let assets = try #require(shell["assets"] as? [String])
            let linked = page.matches(of: /(?:href|src)="(\/static\/[^"]+)"/).map { String($0.output.1) }
            #expect(!linked.isEmpty)
            for path in linked { #expect(assets.contains(path), "\(path) is linked by the page but not precached") }
            #expect(assets.contains { $0.hasPrefix("/static/icon-512.") })
            #expect(shell["pages"] as? [String] == ["/", "/offline", "/manifest.webmanifest"])
            #expect((shell["deviceScript"] as? String)?.hasPrefix("/static/device.") == true)
            #expect((shell["clientScript"] as? String)?.hasPrefix("/static/client.") == true)
            #expect((shell["version"] as? String)?.count == 16)
            // And every file it precaches is served
            for path in assets { #expect(try await client.get(path).status == .ok, "\(path)") }
            // And a browser checking for an update with the ETag it has gets a 304
            let again = try await client.get("/sw.js", headers: [.ifNoneMatch: try #require(answer.header("ETag"))])
            #expect(again.status == .notModified)
        }
    }

    @Test("Every page loads the client table, the device storage, the page script and the offline script, in that order")
    func scripts() async throws {
        try await withWeb { _, client in
            let html = try await client.get("/").body
            let scripts = html.matches(of: /<script src="\/static\/([a-z]+)\.[0-9a-f]{16}\.js" defer>/).map { String($0.output.1) }
            #expect(scripts == ["client", "device", "app", "offline"])
        }
    }

    @Test("The offline page says the page is not saved, has a list for what is, and a way home, in the page's language")
    func offlinePage() async throws {
        try await withWeb { _, client in
            let english = try await client.get("/offline")
            #expect(english.status == .ok)
            #expect(english.body.contains("<h1>Not saved on this device</h1>"))
            // (a group a tab, in the tabs' order, then one for the pages of none, each hidden until the script fills it)
            #expect(english.body.contains("<div id=\"saved-pages\" class=\"saved-pages\"><section class=\"saved-group\" data-prefix=\"/"))
            #expect(english.body.contains("<section class=\"saved-group\" data-prefix=\"/favorites\" hidden><h3>Favorites</h3><ul></ul></section>"
                                          + "<section class=\"saved-group\" data-prefix=\"\" hidden><h3>Other pages</h3><ul></ul></section></div>"))
            #expect(english.body.contains("data-view=\"offline\""))
            #expect(english.body.contains("href=\"/\""))
            let spanish = try await client.get("/offline", headers: [.acceptLanguage: "es"]).body
            #expect(spanish.contains("<h1>Página no guardada en este dispositivo</h1>"))
            // (Its list of pages says "guardadas", agreeing as the heading does)
            #expect(spanish.contains("<h2>Páginas guardadas en este dispositivo</h2>"))
        }
    }

    @Test("Settings has the device panel, hidden until the script runs, with the switch on and 50 MB chosen; Home has none")
    func devicePanel() async throws {
        try await withWeb { _, client in
            #expect(try await !client.get("/").body.contains("id=\"device\""))
            let html = try await client.get("/settings").body
            #expect(html.contains("<section id=\"device\" class=\"device\" hidden aria-labelledby=\"device-title\">"))
            #expect(html.contains("<input type=\"checkbox\" id=\"save-offline\" checked>"))
            #expect(html.contains("<option value=\"50\" selected>50 MB</option>"))
            #expect(html.contains("<button type=\"button\" id=\"device-clear\">Clear saved pages</button>"))
        }
    }

    @Test("The script's banners come localized in the page: unreachable, waiting edits, a new version")
    func scriptStrings() async throws {
        try await withWeb { _, client in
            for (language, expected) in [("en", "Kiosk is unreachable — showing what this device saved {ago}"),
                                         ("es", "Kiosk no responde: se muestra lo que este dispositivo guardó {ago}")] {
                let html = try await client.get("/nyt", headers: [.acceptLanguage: language]).body
                let match = try #require(html.firstMatch(of: /data-strings="([^"]*)"/))
                let json = String(match.output.1).replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
                let strings = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])
                #expect(strings["unreachable"] == expected)
                #expect(strings["pendingMany"]?.contains("{n}") == true)
                #expect(strings["newVersion"] != nil && strings["reload"] != nil)
            }
        }
    }

    @Test("A star carries its name and both symbols, so a change waiting offline is shown in the page's language")
    func starLabels() async throws {
        try await withWeb { _, client in
            let html = try await client.get("/rickandmorty", headers: [.cookie: "kiosk_lang=es"]).body
            #expect(html.contains("data-label=\"Favorito: Rick Sanchez\" data-symbol-on=\"★\" data-symbol-off=\"☆\""))
        }
    }
}
