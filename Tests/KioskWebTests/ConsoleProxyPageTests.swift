import Foundation
import Hummingbird
import HummingbirdTesting
import KioskApp
import KioskCore
import KioskStore
import KioskTestSupport
import NIOCore
import Testing
@testable import KioskConsole
@testable import KioskWeb

@Suite("The console's proxy page: listeners, live counts, and how to trust the CA")
struct ConsoleProxyPageTests {
    /// A proxy as `kiosk proxy --reverse … --ignore pinned.example.test --proxy-auth` describes itself.
    static let overview: ProxyOverview = {
        var counts = ProxyOverview.Counts()
        counts.openConnections = 2
        counts.connections = 17
        counts.requests = 42
        counts.intercepted = 5
        counts.tunnels = 1
        counts.refused = 3
        return ProxyOverview(
            listeners: [.init(kind: "forward", address: "127.0.0.1:8888"),
                        .init(kind: "reverse", address: "127.0.0.1:9000", upstream: "http://localhost:3000/api")],
            startedAt: Date(timeIntervalSince1970: 1_800_000_000), certificatePEM: TestCertificate.pem,
            fingerprint: "AB:CD:EF", interceptedHosts: [], ignoredHosts: ["pinned.example.test"], asksPassword: true, counts: counts)
    }()

    @Test("While the proxy is offline, the request list says so, with the way to its switch")
    func offlineBanner() async throws {
        var cache = ProxyCacheConfiguration()
        cache.settings = ProxyCacheSettings(mode: .fallback, offline: true)
        try await withWeb(configure: { $0.proxyCache = cache }) { harness, client in
            // Given a proxy cache switched offline
            // When the list is opened
            let offline = try await client.get(ConsoleRoute.requests.path)
            // Then it says so, linking to the proxy's page
            #expect(offline.body.contains(HTML.text(ConsoleWords.english.proxyIsOffline).rendered), "\(offline.body.prefix(800))")
            #expect(offline.body.contains("href=\"/debug/proxy\">Go online"))
            // And once online, it does not
            _ = try harness.kiosk.switchProxyCache(mode: nil, offline: false)
            #expect(!(try await client.get(ConsoleRoute.requests.path)).body.contains(HTML.text(ConsoleWords.english.proxyIsOffline).rendered))
        }
    }

    @Test("The proxy page's commands name the proxy's own data folder, as the command line printed them; the default one none")
    func commandsNameTheDataFolder() async throws {
        try await withWeb { harness, client in
            // Given a proxy started with --data-dir '/tmp/my data'
            var overview = Self.overview
            overview.dataDirectoryArgument = "'/tmp/my data'"
            harness.kiosk.attachProxy { [overview] in overview }
            // When its page is opened
            let page = try await client.get(ConsoleRoute.proxy.path).body
            // Then the env line, certutil and curl name that folder, and no step says to add it
            #expect(page.contains("eval &quot;$(kiosk proxy env --data-dir &#39;/tmp/my data&#39;)&quot;"), "\(page)")
            #expect(page.contains("-i &quot;$(kiosk proxy ca --path --data-dir &#39;/tmp/my data&#39;)&quot;"))
            #expect(page.contains("--cacert &quot;$(kiosk proxy ca --path --data-dir &#39;/tmp/my data&#39;)&quot;"))
            #expect(!page.contains("if it was given one") && !page.contains(" kiosk-proxy-ca.pem"))
            // And started in the default folder, they name none
            harness.kiosk.attachProxy { Self.overview }
            let standard = try await client.get(ConsoleRoute.proxy.path).body
            #expect(standard.contains("eval &quot;$(kiosk proxy env)&quot;") && standard.contains("--cacert &quot;$(kiosk proxy ca --path)&quot;"))
            #expect(!standard.contains("if it was given one"))
        }
    }

    @Test("kiosk serve's console says no proxy runs there, and its JSON is a 404 that says so")
    func noProxy() async throws {
        try await withWeb { _, client in
            let page = try await client.get(ConsoleRoute.proxy.path)
            #expect(page.status == .ok)
            // (the commands it names as code, never with the words' backticks)
            #expect(page.body.contains("this console belongs to <code>kiosk serve</code>. <code>kiosk proxy</code> starts one"), "\(page.body)")
            #expect(!page.body.contains("`"))
            let json = try await client.get(ConsoleRoute.apiProxy.path)
            #expect(json.status == .notFound && json.body.contains("kiosk proxy"))
            #expect(try await client.get(ConsoleRoute.proxyCertificate("ca.pem").path).status == .notFound)
        }
    }

    @Test("With a proxy attached, the page lists its listeners and counts, the CA's fingerprint, downloads and the steps")
    func attached() async throws {
        try await withWeb { harness, client in
            // Given a proxy in the process
            harness.kiosk.attachProxy { Self.overview }
            // When its page is opened
            let page = try await client.get(ConsoleRoute.proxy.path)
            // Then it lists both listeners, what each is for, and the password
            #expect(page.body.contains("<code>127.0.0.1:8888</code> — the forward proxy"))
            #expect(page.body.contains("<code>127.0.0.1:9000</code> — a reverse proxy to http://localhost:3000/api"))
            #expect(page.body.contains(HTML.text(ConsoleWords.english.proxyPassword).rendered))
            // And the counts, each marked for the script, with where the script reads them again
            #expect(page.body.contains(#"data-source="/debug/api/proxy""#))
            #expect(page.body.contains(#"<dd data-count-name="requests">42</dd>"#))
            #expect(page.body.contains(#"<dd data-count-name="openConnections">2</dd>"#))
            // And the CA: fingerprint, the two downloads, the ignored host, the setup page and every platform's steps
            #expect(page.body.contains("<code>AB:CD:EF</code>"))
            #expect(page.body.contains(#"href="/debug/proxy/ca.pem""#) && page.body.contains(#"href="/debug/proxy/ca.crt""#)
                    && page.body.contains(#"href="/debug/proxy/ca.mobileconfig""#))
            #expect(page.body.contains("pinned.example.test"))
            #expect(page.body.contains("http://kiosk.proxy/"))
            for platform in ["iPhone and iPad", "Android", "Firefox", "Chrome / Chromium", "curl and the shell"] {
                #expect(page.body.contains("<h3>\(platform)</h3>"), "\(platform)")
            }
            #expect(page.body.contains("<code>--proxy-server=http://127.0.0.1:8888 --proxy-bypass-list=&#39;&lt;-loopback&gt;&#39;</code>"), "\(page.body)")
            #expect(page.body.contains("<code>network.proxy.allow_hijacking_localhost</code>"))
            // And the JSON says the same
            let json = try await client.get(ConsoleRoute.apiProxy.path).json()
            #expect((json["counts"] as? [String: Any])?["requests"] as? Int == 42)
            #expect((json["listeners"] as? [[String: Any]])?.count == 2)
            #expect(json["fingerprint"] as? String == "AB:CD:EF" && json["asksPassword"] as? Bool == true)
        }
    }

    @Test("In Spanish the steps are Spanish too (one guide, shared with the proxy's own setup page)")
    func spanishSteps() async throws {
        try await withWeb { harness, client in
            harness.kiosk.attachProxy { Self.overview }
            let page = try await client.get(ConsoleRoute.proxy.path, headers: [.acceptLanguage: "es"])
            #expect(page.body.contains("<h3>iPhone y iPad</h3>") && page.body.contains("Ajustes › Wi-Fi"))
            #expect(!page.body.contains("Settings › Wi-Fi") && !page.body.contains("Trust Kiosk"))
        }
    }

    @Test("The console serves the CA's certificate as PEM, DER and an iOS profile, and nothing else under the proxy page")
    func certificateDownloads() async throws {
        try await withWeb { harness, client in
            harness.kiosk.attachProxy { Self.overview }
            let pem = try await client.get(ConsoleRoute.proxyCertificate("ca.pem").path)
            #expect(pem.status == .ok && pem.body == TestCertificate.pem)
            #expect(pem.header("Content-Disposition")?.contains("kiosk-proxy-ca.pem") == true)
            let der = try await client.get(ConsoleRoute.proxyCertificate("ca.crt").path)
            #expect(der.status == .ok && der.header("Content-Type") == "application/x-x509-ca-cert")
            #expect(der.bytes == Array(Data(base64Encoded: "MIIBtjCCAVugAwIBAgIUZXhhbXBsZQ==")!))
            // The profile the setup page offers too: a property list whose root payload is the certificate's DER
            let profile = try await client.get(ConsoleRoute.proxyCertificate("ca.mobileconfig").path)
            #expect(profile.status == .ok && profile.header("Content-Type") == "application/x-apple-aspen-config")
            let plist = try PropertyListSerialization.propertyList(from: Data(profile.bytes), format: nil) as? [String: Any]
            let payload = (plist?["PayloadContent"] as? [[String: Any]])?.first
            #expect(payload?["PayloadType"] as? String == "com.apple.security.root")
            #expect(payload?["PayloadContent"] as? Data == Data(base64Encoded: "MIIBtjCCAVugAwIBAgIUZXhhbXBsZQ=="))
            #expect(try await client.get(ConsoleRoute.proxyCertificate("ca-key.pem").path).status == .notFound)
        }
    }
}

/// A certificate in PEM (the test CA's shape; its bytes matter only as what is served back).
enum TestCertificate {
    static let pem = "-----BEGIN CERTIFICATE-----\nMIIBtjCCAVugAwIBAgIUZXhhbXBsZQ==\n-----END CERTIFICATE-----\n"
}

@Suite("The console's proxy cache section: how it answers, what it holds, its switches")
struct ConsoleProxyCacheTests {
    static let token = String(repeating: "c", count: 64)

    @Test("The cache section offers each of the three modes, the current one pressed and described, in English and Spanish")
    func cacheModes() async throws {
        try await withWeb(configure: { $0.proxyCache = ProxyCacheConfiguration() }) { harness, client in
            harness.kiosk.attachProxy { ConsoleProxyPageTests.overview }
            let w = ConsoleWords.english
            for (mode, sentence) in [("http", w.proxyCacheHTTP), ("off", w.proxyCacheOff), ("fallback", w.proxyCacheFallback)] {
                // When a mode's button is pressed
                let switched = try await client.post(ConsoleRoute.proxyCache.path, form: [("csrf", Self.token), ("mode", mode)], cookie: Self.token)
                #expect(switched.status == .seeOther)
                #expect(harness.kiosk.proxyCacheSettings?.mode.rawValue == mode)
                // Then the page describes that mode, offers all three in a group named for what they choose (each named by
                // its word alone, WCAG 2.5.3), and shows that one pressed
                let page = try await client.get(ConsoleRoute.proxy.path)
                #expect(page.body.contains(HTML.text(sentence).rendered), "\(mode)")
                let group = try #require(page.body.components(separatedBy: "role=\"group\" aria-label=\"\(w.cacheMode)\"").dropFirst().first?
                    .components(separatedBy: "</div>").first, "\(mode): no group")
                for name in [w.cacheModeFallback, w.cacheModeHTTP, w.cacheModeOff] {
                    #expect(group.contains("aria-label=\"\(name)\""), "\(mode) \(name)")
                }
                let name = [("fallback", w.cacheModeFallback), ("http", w.cacheModeHTTP), ("off", w.cacheModeOff)].first { $0.0 == mode }!.1
                #expect(group.contains("aria-label=\"\(name)\" aria-pressed=\"true\""), "\(mode)")
                #expect(group.components(separatedBy: "<button").count == 4)
                #expect(page.body.components(separatedBy: "aria-pressed=\"true\"").count == 2, "\(mode): one pressed")
            }
            // And offline, off is not offered (offline answers from the cache)
            try harness.kiosk.switchProxyCache(mode: .http, offline: true)
            let offline = try await client.get(ConsoleRoute.proxy.path)
            #expect(!offline.body.contains("aria-label=\"\(w.cacheModeOff)\""))
            // And a page opened before going offline, whose Off is pressed now, is refused as the JSON API and the command
            // line refuse it, and nothing changes
            let stale = try await client.post(ConsoleRoute.proxyCache.path, form: [("csrf", Self.token), ("mode", "off")], cookie: Self.token)
            #expect(stale.status == .badRequest && stale.body.contains("go online first"), "\(stale.status)")
            #expect(harness.kiosk.proxyCacheSettings == ProxyCacheSettings(mode: .http, offline: true))
            // And going offline with mode off is refused the other way round
            try harness.kiosk.switchProxyCache(mode: .off, offline: false)
            let offlineOff = try await client.post(ConsoleRoute.proxyCache.path, form: [("csrf", Self.token), ("offline", "on")], cookie: Self.token)
            #expect(offlineOff.status == .badRequest && harness.kiosk.proxyCacheSettings == ProxyCacheSettings(mode: .off, offline: false))
            try harness.kiosk.switchProxyCache(mode: .http, offline: true)
            // And in Spanish the modes are Spanish
            let spanish = try await client.get(ConsoleRoute.proxy.path, headers: [.acceptLanguage: "es"])
            #expect(spanish.body.contains(ConsoleWords.spanish.cacheModeHTTP) && spanish.body.contains(ConsoleWords.spanish.cacheMode))
        }
    }

    @Test("The cache section shows how the cache answers and what it holds; its switches go offline and back, and clear a host")
    func cacheSection() async throws {
        try await withWeb(configure: { $0.proxyCache = ProxyCacheConfiguration() }) { harness, client in
            // Given a proxy whose cache holds an answer of one host
            harness.kiosk.attachProxy { ConsoleProxyPageTests.overview }
            let archive = harness.directory.appendingPathComponent("seed.har")
            try Data(#"{"log": {"entries": [{"startedDateTime": "2026-01-01T00:00:00Z", "request": {"method": "GET", "url": "http://app.test/a"}, "response": {"status": 200, "headers": [{"name": "X-Api-Key", "value": "k-0123456789"}], "content": {"mimeType": "text/plain", "text": "hello"}}}, {"startedDateTime": "2026-01-01T00:00:00Z", "request": {"method": "GET", "url": "http://app.test/b?access_token=tok-SECRET-4242"}, "response": {"status": 200, "headers": [], "content": {"mimeType": "text/plain", "text": "bye"}}}]}}"#.utf8)
                .write(to: archive)
            #expect(try harness.kiosk.importIntoProxyCache(atPath: archive.path).stored == 2)

            // When the page is opened: the fallback sentence, the switches, and the host's row
            let page = try await client.get(ConsoleRoute.proxy.path)
            #expect(page.body.contains(#"<h2 id="proxy-cache">Offline cache</h2>"#))
            #expect(page.body.contains(HTML.text(ConsoleWords.english.proxyCacheFallback).rendered))
            #expect(page.body.contains("<code>app.test</code>") && page.body.contains(">Go offline<"))
            // And clearing the whole cache asks first (the script asks it), saying how many answers go
            #expect(page.body.contains("data-confirm=\"Remove all 2 stored answers? Offline, apps will get a 504 for each.\""))
            // And a token in a stored URL is not on it: the cache keeps URLs exact, its lists show them redacted
            #expect(!page.body.contains("tok-SECRET-4242") && page.body.contains("access_token=&lt;redacted&gt;"), "\(page.body)")

            // When the offline switch is pressed: the proxy is offline, and the page says so
            let switched = try await client.post(ConsoleRoute.proxyCache.path, form: [("csrf", Self.token), ("offline", "on")], cookie: Self.token)
            #expect(switched.status == .seeOther)
            #expect(harness.kiosk.proxyCacheSettings?.offline == true)
            let offline = try await client.get(ConsoleRoute.proxy.path)
            #expect(offline.body.contains(HTML.text(ConsoleWords.english.proxyCacheOffline).rendered) && offline.body.contains(">Go online<"))
            // And without the form's token nothing changes
            let forged = try await client.post(ConsoleRoute.proxyCache.path, form: [("offline", "off")], cookie: Self.token)
            #expect(forged.status == .forbidden && harness.kiosk.proxyCacheSettings?.offline == true)

            // When the JSON API switches it back and reads it
            let put = try await client.execute(uri: ConsoleRoute.apiProxyCache.path, method: .put,
                                               headers: [.contentType: "application/json"], body: ByteBuffer(string: #"{"offline": false}"#)) {
                Fetched(status: $0.status, headers: $0.headers, body: String(buffer: $0.body), bytes: Array($0.body.readableBytesView))
            }
            #expect(put.status == .ok && harness.kiosk.proxyCacheSettings?.offline == false)
            let json = try await client.get(ConsoleRoute.apiProxyCache.path).json()
            #expect(json["mode"] as? String == "fallback" && json["offline"] as? Bool == false)
            #expect((json["hosts"] as? [[String: Any]])?.first?["host"] as? String == "app.test")

            // When the stored answer is opened from the host's list: its fields and body, and a button to remove it
            let id = try #require(try harness.kiosk.proxyCacheEntries().first { $0.url.hasSuffix("/a") }?.id)
            #expect(page.body.contains(#"href="\#(ConsoleRoute.proxyCacheEntry(id).path)""#))
            let entry = try await client.get(ConsoleRoute.proxyCacheEntry(id).path)
            #expect(entry.status == .ok && entry.body.contains("<code>http://app.test/a</code>") && entry.body.contains("hello"))
            #expect(entry.body.contains(">Remove this answer<"))
            // And its age reads as every face says one (it said "stored 116043306 s ago")
            #expect(entry.body.contains(/stored (just now|\d{1,2} (s|min|h) ago|\d+ d ago), given from the cache/), "\(entry.body)")
            #expect(try await client.get(ConsoleRoute.proxyCacheEntry(id + 100).path).status == .notFound)
            #expect(!entry.body.contains("A request that changed this URL"))
            // And once a request that changed its URL succeeded (as a proxy beside it marks it), the page says when it is given
            let file = try ProxyCache.open(at: harness.directory.appendingPathComponent("kiosk-proxy-cache.sqlite").path, maxBytes: nil)
            #expect(try file.invalidate(urls: ["http://app.test/a"], at: harness.now.date.addingTimeInterval(-120)) == 1)
            let changed = try await client.get(ConsoleRoute.proxyCacheEntry(id).path).body
            #expect(changed.contains("A request that changed this URL (a POST, PUT or DELETE) succeeded 2 min ago, after this answer "
                                     + "was stored"), "\(changed)")

            // And its secret field is shown redacted, and the button removes it alone
            #expect(!entry.body.contains("k-0123456789"))
            #expect(try await client.post(ConsoleRoute.proxyCache.path, form: [("csrf", Self.token), ("remove", String(id))],
                                          cookie: Self.token).status == .seeOther)
            #expect(try harness.kiosk.proxyCacheEntries().count == 1)

            // When the host is cleared: nothing is stored
            #expect(try await client.post(ConsoleRoute.proxyCache.path, form: [("csrf", Self.token), ("clear", "app.test")],
                                          cookie: Self.token).status == .seeOther)
            #expect(try harness.kiosk.proxyCacheEntries().isEmpty)
            #expect(try await client.get(ConsoleRoute.proxy.path).body.contains(HTML.text(ConsoleWords.english.proxyCacheEmpty).rendered))
        }
    }

    @Test("A host with more answers than its list shows says how to list them all; a large stored body shows its first MB, saying all of it is stored; HEAD is named")
    func cacheSectionAtScale() async throws {
        try await withWeb(configure: { $0.proxyCache = ProxyCacheConfiguration() }) { harness, client in
            // Given a proxy whose cache holds 25 answers of one host, one of them a HEAD's and one of 2 MB
            harness.kiosk.attachProxy { ConsoleProxyPageTests.overview }
            let big = String(repeating: "x", count: 2 << 20)
            var entries = (0..<23).map { #"{"startedDateTime": "2026-01-01T00:00:00Z", "request": {"method": "GET", "url": "http://app.test/n\#($0)"}, "response": {"status": 200, "headers": [], "content": {"mimeType": "text/plain", "text": "n"}}}"# }
            entries.append(#"{"startedDateTime": "2026-01-01T00:00:02Z", "request": {"method": "HEAD", "url": "http://app.test/head"}, "response": {"status": 200, "headers": [], "content": {"mimeType": "text/plain", "text": ""}}}"#)
            entries.append(#"{"startedDateTime": "2026-01-01T00:00:01Z", "request": {"method": "GET", "url": "http://app.test/big"}, "response": {"status": 200, "headers": [], "content": {"mimeType": "text/plain", "text": "\#(big)"}}}"#)
            let archive = harness.directory.appendingPathComponent("many.har")
            try Data(#"{"log": {"entries": [\#(entries.joined(separator: ","))]}}"#.utf8).write(to: archive)
            #expect(try harness.kiosk.importIntoProxyCache(atPath: archive.path).stored == 25)
            // When the page is opened
            let page = try await client.get(ConsoleRoute.proxy.path).body
            // Then the host's list says how many it shows and how to see them all
            #expect(page.contains("The 20 most recently used of 25; <code>kiosk proxy cache list --host app.test:80</code> lists every one."), "\(page)")
            // And the big answer's page carries its first megabyte only, and says so
            let id = try #require(try harness.kiosk.proxyCacheEntries().first { $0.url.hasSuffix("/big") }?.id)
            let entry = try await client.get(ConsoleRoute.proxyCacheEntry(id).path).body
            #expect(entry.utf8.count < (1 << 20) + 100_000 && entry.utf8.count > 1 << 20)
            #expect(entry.contains(HTML.text(ConsoleWords.english.shownFirst(1 << 20)).rendered), "\(entry.suffix(2000))")
            #expect(!entry.contains(HTML.text(ConsoleWords.english.truncatedTo(1 << 20)).rendered))
            // And a HEAD's answer is named as one in the list
            let head = try #require(try harness.kiosk.proxyCacheEntries().first { $0.url.hasSuffix("/head") })
            #expect(page.contains(ConsoleRoute.proxyCacheEntry(head.id).path) && page.contains("200 HEAD <code>/head</code>"))
        }
    }

    @Test("Two answers to one URL that vary on a preflight's origin are each listed with what they were asked with; an answer's page says it, in Spanish too")
    func variantsToldApart() async throws {
        try await withWeb(configure: { $0.proxyCache = ProxyCacheConfiguration() }) { harness, client in
            // Given a proxy whose cache holds /api/items asked from two origins (its answers vary on Origin), and /one alone
            harness.kiosk.attachProxy { ConsoleProxyPageTests.overview }
            func entry(_ path: String, origin: String) -> String {
                #"{"startedDateTime": "2026-01-01T00:00:00Z", "request": {"method": "GET", "url": "http://app.test\#(path)", "headers": [{"name": "Origin", "value": "\#(origin)"}]}, "#
                    + #""response": {"status": 200, "headers": [{"name": "Vary", "value": "Origin"}, {"name": "Access-Control-Allow-Origin", "value": "\#(origin)"}], "content": {"mimeType": "text/plain", "text": "n"}}}"#
            }
            let archive = harness.directory.appendingPathComponent("origins.har")
            let entries = [entry("/api/items", origin: "https://a.test"), entry("/api/items", origin: "https://b.test"), entry("/one", origin: "https://a.test")]
            try Data(#"{"log": {"entries": [\#(entries.joined(separator: ","))]}}"#.utf8).write(to: archive)
            #expect(try harness.kiosk.importIntoProxyCache(atPath: archive.path).stored == 3)
            // When the page is opened
            let page = try await client.get(ConsoleRoute.proxy.path).body
            // Then each answer to /api/items says the origin it was asked from; /one, alone, says nothing more
            #expect(page.contains("<code>/api/items</code></a><span class=\"status\"> Asked with origin: https://a.test</span>"), "\(page)")
            #expect(page.contains("<code>/api/items</code></a><span class=\"status\"> Asked with origin: https://b.test</span>"), "\(page)")
            #expect(page.contains("<code>/one</code></a></li>"), "\(page)")
            // And an answer's own page says it, in English and in Spanish
            let id = try #require(try harness.kiosk.proxyCacheEntries().first { $0.url.hasSuffix("/one") }?.id)
            #expect(try await client.get(ConsoleRoute.proxyCacheEntry(id).path).body.contains("Asked with origin: https://a.test."))
            let spanish = try await client.get(ConsoleRoute.proxyCacheEntry(id).path, headers: [.acceptLanguage: "es"]).body
            #expect(spanish.contains("Pedida con origin: https://a.test."), "\(spanish)")
        }
    }

    @Test("What an answer varies on is shown redacted as the log shows it: a field the configuration hides is never on a page")
    func variedRedacted() async throws {
        try await withWeb(configure: { $0.proxyCache = ProxyCacheConfiguration(); $0.capture.extraRedactedHeaders = ["X-Tenant-Key"] }) { harness, client in
            // Given two answers to one URL that vary on a field the configuration says is secret
            harness.kiosk.attachProxy { ConsoleProxyPageTests.overview }
            func entry(_ tenant: String) -> String {
                #"{"startedDateTime": "2026-01-01T00:00:00Z", "request": {"method": "GET", "url": "http://app.test/me", "headers": [{"name": "X-Tenant-Key", "value": "\#(tenant)"}]}, "#
                    + #""response": {"status": 200, "headers": [{"name": "Vary", "value": "X-Tenant-Key"}], "content": {"mimeType": "text/plain", "text": "n"}}}"#
            }
            let archive = harness.directory.appendingPathComponent("tenants.har")
            try Data(#"{"log": {"entries": [\#(entry("tenant-secret-41")),\#(entry("tenant-secret-42"))]}}"#.utf8).write(to: archive)
            #expect(try harness.kiosk.importIntoProxyCache(atPath: archive.path).stored == 2)
            // When the page, an answer's page and the list are read
            let page = try await client.get(ConsoleRoute.proxy.path).body
            let entries = try harness.kiosk.proxyCacheEntries()
            let one = try await client.get(ConsoleRoute.proxyCacheEntry(try #require(entries.first?.id)).path).body
            // Then the field is named, its value hidden, everywhere
            #expect(page.contains("Asked with x-tenant-key: &lt;redacted&gt;"), "\(page)")
            #expect(!page.contains("tenant-secret") && !one.contains("tenant-secret"))
            #expect(entries.allSatisfy { $0.varied == [ProxyCacheEntry.VariedField(name: "x-tenant-key", value: Redactor.placeholder)] })
        }
    }

    @Test("In Spanish the cache section is Spanish, its refusals too; kiosk serve, with no proxy cache, answers its JSON with a 404")
    func cacheSpanishAndAbsent() async throws {
        try await withWeb(configure: { $0.proxyCache = ProxyCacheConfiguration() }) { harness, client in
            harness.kiosk.attachProxy { ConsoleProxyPageTests.overview }
            let page = try await client.get(ConsoleRoute.proxy.path, headers: [.acceptLanguage: "es"])
            #expect(page.body.contains("Caché sin conexión") && page.body.contains(HTML.text(ConsoleWords.spanish.proxyCacheFallback).rendered))
            #expect(!page.body.contains("Offline cache") && !page.body.contains("Go offline"))
            // And its refusals: an answer that is not stored, a change it does not know, a stale page's Off while offline,
            // a form without its token
            let es: HTTPFields = [.acceptLanguage: "es"]
            let missing = try await client.get(ConsoleRoute.proxyCacheEntry(99_999).path, headers: es)
            #expect(missing.status == .notFound && missing.body.contains(HTML.text(ConsoleWords.spanish.noStoredAnswer(99_999)).rendered))
            // with a way back to the console's list
            #expect(missing.body.contains(#"<p class="back"><a href="/debug">"#), "\(missing.body.suffix(600))")
            let unknown = try await client.post(ConsoleRoute.proxyCache.path, form: [("csrf", Self.token), ("mode", "sometimes")],
                                                cookie: Self.token, headers: es)
            #expect(unknown.status == .badRequest && unknown.body.contains(HTML.text(ConsoleWords.spanish.proxyCacheFormUnknown).rendered))
            try harness.kiosk.switchProxyCache(mode: .fallback, offline: true)
            let off = try await client.post(ConsoleRoute.proxyCache.path, form: [("csrf", Self.token), ("mode", "off")], cookie: Self.token, headers: es)
            #expect(off.status == .badRequest && off.body.contains(HTML.text(ConsoleWords.spanish.proxyOffNeedsOnline).rendered))
            let forged = try await client.post(ConsoleRoute.proxyCache.path, form: [("offline", "off")], cookie: Self.token, headers: es)
            #expect(forged.status == .forbidden && forged.body.contains("Falta el código de seguridad"), "\(forged.body.suffix(800))")
        }
        try await withWeb(configure: { _ in }) { _, client in
            let absent = try await client.get(ConsoleRoute.apiProxyCache.path)
            #expect(absent.status == .notFound && absent.body.contains("kiosk proxy"))
        }
    }
}
