import Foundation
import KioskApp
import KioskCore
import KioskWeb

extension DebugPages {
    /// `/debug/proxy`: the `kiosk proxy` of this process — its listeners, live counts (the script reads them again from
    /// the JSON every few seconds), and how a device or a tool trusts its CA, in the page's language; or, in `kiosk serve`,
    /// that none runs here.
    static func proxy(_ overview: ProxyOverview?, cache: (ProxyCacheSettings, [ProxyCacheHostStats], failure: String?)? = nil, now: Date,
                      context: ViewContext) -> HTML {
        let w = context.words
        var content: [HTML] = [backToRequests(w), E.element("h1", [], [.text(w.proxy)])]
        guard let overview else {
            return DebugPages.page(context, title: w.proxy, content + [E.element("p", [.class("empty")], [.text(w.proxyNone)])])
        }
        let forward = overview.listeners.first { $0.kind == "forward" }
        content += [
            E.element("h2", [], [.text(w.proxyListeners)]),
            E.element("ul", [.class("listeners")], overview.listeners.map { listener in
                E.element("li", [], [
                    E.element("code", [], [.text(listener.address)]), " — ",
                    .text(listener.upstream.map(w.reverseListener) ?? w.forwardListener),
                ])
            }),
            overview.asksPassword ? E.element("p", [.class("status")], [.text(w.proxyPassword)]) : .empty,
            overview.verifiesUpstream ? .empty
                : E.element("p", [.class("banner error"), .attribute("role", "alert")], [.text(w.proxyInsecure)]),
            E.element("h2", [], [.text(w.proxyCounts)]),
            E.element("dl", [.class("facts"), .attribute("id", "proxy-counts"),
                             Attribute.localPath("data-source", ConsoleRoute.apiProxy.path)], counts(overview.counts, w)),
        ]
        if let (settings, hosts, failure) = cache { content += proxyCache(settings, hosts, failure: failure, context: context) }
        content.append(E.element("h2", [], [.text(w.proxyTrust)]))
        guard let fingerprint = overview.fingerprint, overview.certificatePEM != nil else {
            return DebugPages.page(context, title: w.proxy, content + [E.element("p", [], [.text(w.proxyNotReading)])])
        }
        let pem = ConsoleRoute.proxyCertificate("ca.pem").path, der = ConsoleRoute.proxyCertificate("ca.crt").path
        content += [
            E.element("p", [], [.text(w.proxyFingerprint), E.element("code", [], [.text(fingerprint)])]),
            E.element("p", [.class("downloads")], [
                E.element("a", [Attribute.localHref(pem)], [.text(w.downloadPEM)]), " · ",
                E.element("a", [Attribute.localHref(der)], [.text(w.downloadDER)]),
            ]),
            overview.interceptedHosts.isEmpty ? .empty
                : E.element("p", [.class("status")], [.text(w.proxyReads(overview.interceptedHosts.joined(separator: ", ")))]),
            overview.ignoredHosts.isEmpty ? .empty
                : E.element("p", [.class("status")], [.text(w.proxyIgnores(overview.ignoredHosts.joined(separator: ", ")))]),
            E.element("p", [], [.text(w.proxySetupPage), E.element("code", [], ["http://kiosk.proxy/"]), "."]),
            ProxyGuide(language: context.language == .es ? .spanish : .english, proxy: forward?.address ?? "127.0.0.1:8888",
                       downloads: .init(pem: pem, der: der)).rendered(nested: true),
        ]
        return DebugPages.page(context, title: w.proxy, content)
    }

    /// The cache section: how it answers now, its two switches, and what it holds per host with a clear button each.
    private static func proxyCache(_ settings: ProxyCacheSettings, _ hosts: [ProxyCacheHostStats], failure: String?,
                                   context: ViewContext) -> [HTML] {
        let w = context.words
        let action = ConsoleRoute.proxyCache.path
        let state = settings.offline ? w.proxyCacheOffline : settings.mode == .off ? w.proxyCacheOff : w.proxyCacheFallback
        var section: [HTML] = [
            E.element("h2", [.attribute("id", "proxy-cache")], [.text(w.proxyCache)]),
            E.element("p", [], [.text(w.proxyCacheIntro)]),
            E.element("p", [.class(settings.offline ? "banner offline" : "status"), .attribute("role", "status")], [.text(state)]),
            failure.map { E.element("p", [.class("banner error"), .attribute("role", "alert")], [.text(w.proxyCacheCannotStore), .text($0)]) }
                ?? .empty,
            E.element("div", [.class("console-actions")], [
                settings.mode == .off ? .empty
                    : Pages.postForm(action: action, fields: [("offline", settings.offline ? "off" : "on")],
                                     label: settings.offline ? w.goOnline : w.goOffline,
                                     button: .text(settings.offline ? w.goOnline : w.goOffline), className: "mock",
                                     pressed: settings.offline, context: context),
                settings.offline ? .empty
                    : Pages.postForm(action: action, fields: [("mode", settings.mode == .off ? "fallback" : "off")],
                                     label: settings.mode == .off ? w.storeAnswers : w.storeNothing,
                                     button: .text(settings.mode == .off ? w.storeAnswers : w.storeNothing), className: "mock",
                                     pressed: settings.mode == .off, context: context),
            ]),
        ]
        guard !hosts.isEmpty else { return section + [E.element("p", [.class("empty")], [.text(w.proxyCacheEmpty)])] }
        let rows = hosts.map { host in
            E.element("li", [], [
                E.element("code", [], [.text(host.host)]),
                E.element("span", [.class("status")], [.text(w.proxyCacheRow(host.entries, byteCount(Int64(host.bytes)), host.hits))]),
                Pages.postForm(action: action, fields: [("clear", host.host)], label: w.proxyCacheClearHost + " " + host.host,
                               button: .text(w.proxyCacheClearHost), className: "mock delete", context: context),
            ])
        }
        let total = byteCount(Int64(hosts.reduce(0) { $0 + $1.bytes }))
        section += [
            E.element("ul", [.class("cache-hosts")], rows),
            E.element("p", [], [.text(w.proxyCacheTotal(hosts.reduce(0) { $0 + $1.entries }, total))]),
            Pages.postForm(action: action, fields: [("clear", "")], label: w.proxyCacheClearAll, button: .text(w.proxyCacheClearAll),
                           className: "mock delete", context: context),
        ]
        return section
    }

    /// The counts as a definition list, each value marked with its name for the script to update.
    private static func counts(_ counts: ProxyOverview.Counts, _ w: ConsoleWords) -> [HTML] {
        let rows: [(String, StaticString, Int)] = [
            (w.countOpenConnections, "openConnections", counts.openConnections), (w.countConnections, "connections", counts.connections),
            (w.countRequests, "requests", counts.requests), (w.countIntercepted, "intercepted", counts.intercepted),
            (w.countTunnels, "tunnels", counts.tunnels), (w.countUpgrades, "upgrades", counts.upgrades),
            (w.countRefused, "refused", counts.refused),
        ]
        return rows.flatMap { label, name, value in
            [E.element("dt", [], [.text(label)]),
             E.element("dd", [.attribute("data-count-name", name.description)], [.text(String(value))])]
        }
    }

    /// A PEM certificate's DER bytes (the base64 between its armour lines).
    static func der(fromPEM pem: String) -> [UInt8] {
        let base64 = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return Array(Data(base64Encoded: base64) ?? Data())
    }
}
