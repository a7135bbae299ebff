import Foundation
import KioskApp
import KioskCore
import KioskWeb

extension DebugPages {
    /// `text` with each stretch between backticks (a command, as the words write it: `kiosk serve`) as code, the rest as
    /// text; escaped as all text is.
    static func withCode(_ text: String) -> [HTML] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().map { index, part in
            index.isMultiple(of: 2) ? .text(String(part)) : E.element("code", [], [.text(String(part))])
        }
    }

    /// `/debug/proxy`: the `kiosk proxy` of this process — its listeners, live counts (the script reads them again from
    /// the JSON every few seconds), and how a device or a tool trusts its CA, in the page's language; or, in `kiosk serve`,
    /// that none runs here.
    static func proxy(_ overview: ProxyOverview?, cache: (ProxyCacheSettings, [(ProxyCacheHostStats, [ProxyCacheEntry])], failure: String?)? = nil,
                      now: Date,
                      context: ViewContext) -> HTML {
        let w = context.words
        var content: [HTML] = [backToRequests(w), E.element("h1", [], [.text(w.proxy)])]
        guard let overview else {
            return DebugPages.page(context, title: w.proxy, content + [E.element("p", [.class("empty")], DebugPages.withCode(w.proxyNone))])
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
        if let (settings, hosts, failure) = cache {
            content += proxyCache(settings, hosts, failure: failure, dataDirectory: overview.dataDirectoryArgument, context: context)
        }
        content.append(E.element("h2", [], [.text(w.proxyTrust)]))
        guard let fingerprint = overview.fingerprint, overview.certificatePEM != nil else {
            return DebugPages.page(context, title: w.proxy, content + [E.element("p", [], [.text(w.proxyNotReading)])])
        }
        let pem = ConsoleRoute.proxyCertificate("ca.pem").path, der = ConsoleRoute.proxyCertificate("ca.crt").path
        let profile = ConsoleRoute.proxyCertificate("ca.mobileconfig").path
        content += [
            E.element("p", [], [.text(w.proxyFingerprint), E.element("code", [], [.text(fingerprint)])]),
            E.element("p", [.class("downloads")], [
                E.element("a", [Attribute.localHref(pem)], [.text(w.downloadPEM)]), " · ",
                E.element("a", [Attribute.localHref(der)], [.text(w.downloadDER)]), " · ",
                E.element("a", [Attribute.localHref(profile)], [.text(w.downloadProfile)]),
            ]),
            overview.interceptedHosts.isEmpty ? .empty
                : E.element("p", [.class("status")], [.text(w.proxyReads(overview.interceptedHosts.joined(separator: ", ")))]),
            overview.ignoredHosts.isEmpty ? .empty
                : E.element("p", [.class("status")], [.text(w.proxyIgnores(overview.ignoredHosts.joined(separator: ", ")))]),
            E.element("p", [], [.text(w.proxySetupPage), E.element("code", [], ["http://kiosk.proxy/"]), "."]),
            {
                var guide = ProxyGuide(language: context.language == .es ? .spanish : .english, proxy: forward?.address ?? "127.0.0.1:8888",
                                       downloads: .init(pem: pem, der: der, profile: profile))
                guide.dataFolder = overview.dataDirectoryArgument.map(ProxyGuide.DataFolder.given) ?? .standard
                return guide.rendered(nested: true)
            }(),
        ]
        return DebugPages.page(context, title: w.proxy, content)
    }

    /// The cache section: how it answers now, its two switches, and what it holds per host with a clear button each.
    /// `dataDirectory`: the proxy's data folder as its commands must name it (nil: the standard one).
    private static func proxyCache(_ settings: ProxyCacheSettings, _ listed: [(ProxyCacheHostStats, [ProxyCacheEntry])], failure: String?,
                                   dataDirectory: String? = nil, context: ViewContext) -> [HTML] {
        let hosts = listed.map(\.0)
        let w = context.words
        let action = ConsoleRoute.proxyCache.path
        let state = if settings.offline {
            w.proxyCacheOffline
        } else {
            switch settings.mode {
            case .fallback: w.proxyCacheFallback
            case .http: w.proxyCacheHTTP
            case .off: w.proxyCacheOff
            }
        }
        // One button a mode, the current one pressed; offline, off is not offered (offline answers from the cache).
        let modes: [(ProxyCacheMode, String)] = [(.fallback, w.cacheModeFallback), (.http, w.cacheModeHTTP)]
            + (settings.offline ? [] : [(.off, w.cacheModeOff)])
        var section: [HTML] = [
            E.element("h2", [.attribute("id", "proxy-cache")], [.text(w.proxyCache)]),
            E.element("p", [], [.text(w.proxyCacheIntro)]),
            E.element("p", [.class(settings.offline ? "banner offline" : "status"), .attribute("role", "status")], [.text(state)]),
            failure.map { E.element("p", [.class("banner error"), .attribute("role", "alert")], [.text(w.proxyCacheCannotStore), .text($0)]) }
                ?? .empty,
            E.element("div", [.class("console-actions"), .attribute("role", "group"), .attribute("aria-label", w.cacheMode)],
                      modes.map { mode, name in
                          // (Named by its word alone: the group around the buttons says what they choose, WCAG 2.5.3.)
                          Pages.postForm(action: action, fields: [("mode", mode.rawValue)], label: name,
                                         button: .text(name), className: "mock", pressed: settings.mode == mode, attributes: [inPlace], context: context)
                      }),
            settings.mode == .off ? .empty
                : E.element("div", [.class("console-actions")], [
                    Pages.postForm(action: action, fields: [("offline", settings.offline ? "off" : "on")],
                                   label: settings.offline ? w.goOnline : w.goOffline,
                                   button: .text(settings.offline ? w.goOnline : w.goOffline), className: "mock",
                                   // No aria-pressed: its words say what a press does, and they change with the state.
                                   attributes: [inPlace], context: context),
                ]),
        ]
        guard !hosts.isEmpty else { return section + [E.element("p", [.class("empty")], [.text(w.proxyCacheEmpty)])] }
        let rows = listed.map { host, entries in
            let toTellApart = entries.idsToTellApart
            return E.element("li", [], [
                E.element("code", [], [.text(host.host)]),
                E.element("span", [.class("status")], [.text(w.proxyCacheRow(host.entries, byteCount(Int64(host.bytes), w), host.hits))]),
                Pages.postForm(action: action, fields: [("clear", host.key)], label: w.proxyCacheClearHost + " " + host.host,
                               button: .text(w.proxyCacheClearHost), className: "mock delete", attributes: [inPlace], context: context),
                E.element("details", [], [
                    E.element("summary", [], [.text(w.proxyCacheAnswersOf(host.host))]),
                    E.element("ul", [.class("paths")], entries.map { entry in
                        E.element("li", [], [
                            E.element("a", [Attribute.localHref(ConsoleRoute.proxyCacheEntry(entry.id).path)], [
                                // The method where it is not GET: a HEAD's answer is not a GET's.
                                .text("\(entry.status) \(entry.method == "GET" ? "" : entry.method + " ")"),
                                E.element("code", [], [.text(DebugPages.pathAndQuery(entry.url))]),
                            ]),
                            // Two answers to one URL (preflights from two origins) would read alike: what they vary on.
                            toTellApart.contains(entry.id) && !entry.varied.isEmpty
                                ? E.element("span", [.class("status")], [.text(" " + w.proxyCacheVaried(entry.varied))]) : .empty,
                        ])
                    }),
                    host.entries > entries.count
                        ? E.element("p", [.class("status")], DebugPages.withCode(w.proxyCacheMoreAnswers(entries.count, host.entries,
                            host.key + (dataDirectory.map { " --data-dir " + $0 } ?? "")))) : .empty,
                ]),
            ])
        }
        let total = byteCount(Int64(hosts.reduce(0) { $0 + $1.bytes }), w)
        section += [
            E.element("ul", [.class("cache-hosts")], rows),
            E.element("p", [], [.text(w.proxyCacheTotal(hosts.reduce(0) { $0 + $1.entries }, total))]),
            Pages.postForm(action: action, fields: [("clear", "")], label: w.proxyCacheClearAll, button: .text(w.proxyCacheClearAll),
                           className: "mock delete",
                           // Asked by the script before it sends the form (a page without it clears at once).
                           attributes: [inPlace, .attribute("data-confirm", w.proxyCacheClearAllConfirm(hosts.reduce(0) { $0 + $1.entries }))],
                           context: context),
        ]
        return section
    }

    /// Marks a form of the cache section (a switch, a clear, a remove) as one whose answer is the cache section itself
    /// (where the server's 303 goes too): `debug.js` sends it and shows that page again in place of the one the press was
    /// made on, so Back leaves the page rather than walk back through every press, nor to an answer just removed.
    static let inPlace = Attribute.attribute("data-in-place", ConsoleRoute.proxy.path(anchor: "proxy-cache"))

    /// `/debug/proxy/cache/{id}`: one stored answer — what was asked, when it came, how often it was given, its fields
    /// and its body (a JSON tree when it is JSON), redacted as the log's are — with a button to remove it.
    static func proxyCacheEntry(_ entry: ProxyCacheEntry, now: Date, context: ViewContext) -> HTML {
        let w = context.words
        let age = Int(max(0, now.timeIntervalSince(entry.responseTime)))
        let fields = entry.headers.map { RequestRecord.HeaderField(name: $0.name, value: $0.value) }
        return DebugPages.page(context, title: w.proxyCacheEntry, [
            E.element("p", [], [E.element("a", [Attribute.localHref(ConsoleRoute.proxy.path(anchor: "proxy-cache"))], [.text(w.proxyCache)])]),
            E.element("h1", [], [.text(w.proxyCacheEntry)]),
            E.element("p", [], [.text("\(entry.method) "), E.element("code", [], [.text(entry.url)])]),
            E.element("p", [.class("status")], [.text(w.proxyCacheEntryFacts(entry.status, age, entry.hits))]),
            entry.varied.isEmpty ? .empty : E.element("p", [.class("status")], [.text(w.proxyCacheVaried(entry.varied) + ".")]),
        ] + (entry.changedAt.map { changed in
            [E.element("p", [.class("status changed")], [.text(w.proxyCacheEntryChanged(Int(max(0, now.timeIntervalSince(changed)))))])]
        } ?? []) + [
            headers(w.responseHeaders, fields, w),
            // Its first megabyte, as the request log keeps of a body: a page with a whole 16 MB answer in it is no page.
            bodySection(w.responseBody, CapturedBody(capturing: entry.body, limit: 1 << 20), w, storedWhole: true,
                        contentEncoding: entry.headers.combined("Content-Encoding"), contentType: entry.headers["Content-Type"]),
            Pages.postForm(action: ConsoleRoute.proxyCache.path, fields: [("remove", String(entry.id))], label: w.proxyCacheRemove,
                           button: .text(w.proxyCacheRemove), className: "mock delete", attributes: [inPlace], context: context),
        ])
    }

    /// The counts as a definition list, each value marked with its name for the script to update.
    private static func counts(_ counts: ProxyOverview.Counts, _ w: ConsoleWords) -> [HTML] {
        let rows: [(String, StaticString, Int)] = [
            (w.countOpenConnections, "openConnections", counts.openConnections), (w.countConnections, "connections", counts.connections),
            (w.countRequests, "requests", counts.requests), (w.countIntercepted, "intercepted", counts.intercepted),
            (w.countTunnels, "tunnels", counts.tunnels), (w.countUpgrades, "upgrades", counts.upgrades),
            (w.countRefused, "refused", counts.refused), (w.countCutShort, "cutShort", counts.cutShort),
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
