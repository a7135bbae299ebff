import Foundation
package import Hummingbird
import KioskApp
import KioskCore
package import KioskWeb

/// The network debugger's console as a part of the web app: its pages, JSON and live stream under `/debug`,
/// behind `DebugAccess`, and its script. `kiosk serve` builds the app with it; the reader knows nothing of it.
package struct Console: WebFeature {
    let controller: DebugController

    /// The console of the app being built: its token and its listener (loopback or not) decide who may open
    /// it, its scheme whether the session cookie is `Secure`, and its peers how wrong tokens are counted.
    package init(_ app: WebFeatureContext) {
        self.init(kiosk: app.kiosk,
                  access: DebugAccess(token: app.configuration.debugToken, isLoopback: app.configuration.isLoopback,
                                      secureCookies: app.isSecure, now: app.kiosk.now,
                                      attempts: ClientAttempts(now: app.kiosk.now, peers: app.peers), peer: socketPeer))
    }

    /// The console over `kiosk`, open to whom `access` lets in.
    init(kiosk: Kiosk, access: DebugAccess) {
        controller = DebugController(kiosk: kiosk, access: access)
    }

    package func register(on router: Router<WebRequestContext>) { controller.register(on: router) }

    package var assets: [StaticAsset] { [Self.script] }

    package var networkOnlyPrefixes: [String] { [ConsoleRoute.prefix] }

    package var jsonPrefixes: [String] { [ConsoleRoute.apiPrefix] }

    package func menuLink(_ language: Language) -> MenuLink? {
        let words = ConsoleWords.in(language)
        return MenuLink(label: words.networkDebugger, shortLabel: words.debugger, path: ConsoleRoute.requests.path)
    }

    /// `debug.js`, the console's enhancement (live list, filter help, keyboard), read once from the resource
    /// bundle (`kiosk_KioskConsole.resources`, beside the binary).
    static let script: StaticAsset = {
        guard let url = Bundle.module.url(forResource: "debug", withExtension: "js"), let data = try? Data(contentsOf: url) else {
            fatalError("Kiosk's resource bundle (kiosk_KioskConsole.resources, beside the kiosk binary) has no debug.js: reinstall Kiosk.")
        }
        return StaticAsset(fileName: "debug.js", contents: Array(data), contentType: "text/javascript; charset=utf-8")
    }()
}

extension DebugPages {
    /// A console page: the app's layout with the console's script, and the words the script shows in the page's language.
    static func page(_ context: ViewContext, title: String, _ content: [HTML]) -> HTML {
        let words = E.element("div", [.attribute("id", "console-words"), .attribute("data-words", ScriptWords.json(context.language)),
                                      .flag("hidden")], [])
        return Pages.layout(context, title: title, current: ConsoleRoute.requests.path, view: .debug, scripts: [Console.script],
                            catalogTabs: false, content + [words])
    }
}
