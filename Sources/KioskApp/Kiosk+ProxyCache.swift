import Foundation
public import KioskCore
public import KioskDebugger
import KioskNetwork
import KioskStore

// The faces' way to `kiosk proxy`'s cache (see ProxyCaching.swift): what it holds, removing from it, and HAR in and
// out of it. Each works beside a running proxy (two processes share the file).

/// What `kiosk proxy cache import` made of an archive.
public struct ProxyCacheImport: Sendable, Hashable {
    /// How many answers were stored.
    public var stored: Int
    /// How many entries the archive holds.
    public var entries: Int
    /// Entries whose answer HTTP would not let a cache store: the sum of the three below.
    public var notStorable: Int { notRead + noStore + notCacheable }
    /// Entries of another method than GET or HEAD, CORS preflights aside.
    public var notRead = 0
    /// Answers whose `Cache-Control`, or their request's, says no-store.
    public var noStore = 0
    /// Other answers a cache may not keep: a status not cacheable without a lifetime given (a 500, a 302), `Vary: *`.
    public var notCacheable = 0
    /// Answers stored for the credentials (Authorization, Cookie) recorded with them: only a request sending those gets one.
    public var forCredentials = 0
    /// The archive's other entries left out, and why ("3 without a response, 1 data: URL"); empty when none.
    public var skippedDescription: String
    /// Entries whose request carried credentials the archive hides (a redacting export's placeholders): whose answer
    /// they were cannot be told, so none is given to anyone.
    public var hiddenCredentials: Int = 0
    /// Answers each larger than a tenth of the cache's bound, which the cache keeps none of.
    public var tooLarge: Int = 0
    /// Answers stored and then pushed out again by the cache's bound (least recently used first) within the import.
    public var pushedOut: Int = 0
    /// The cache's bound, in bytes (the file's, set by the proxy's `--cache-size`).
    public var maxBytes: Int = 0
    /// Answers the cache holds already, as the proxy stored them (an export of this cache imported again).
    public var alreadyHeld: Int = 0
    /// Entries left because the cache holds a newer answer to the same request (an earlier import's, or the proxy's own).
    public var newerHeld: Int = 0
    /// Answers Kiosk's debugger made (a mock's, an edit), which its own export marks: not the upstream's to replay.
    public var madeByDebugger: Int = 0
    /// Answers stored whose text is in UTF-8, and labelled so, where their Content-Type named a charset that cannot hold it
    /// or that Kiosk cannot write (`HAR.Import.Recorded.inUTF8Instead`).
    public var inUTF8Instead: Int = 0
}

extension Kiosk {
    /// What `kiosk proxy`'s cache holds per host (an empty list when there is no cache file yet).
    public func proxyCacheStats() throws -> [ProxyCacheHostStats] {
        try openedProxyCache()?.hostStats() ?? []
    }

    /// The most the proxy cache's answers may take, in bytes (the file's bound, the proxy's `--cache-size`); nil when
    /// there is no cache file yet.
    public func proxyCacheBound() throws -> Int? {
        try openedProxyCache()?.maxBytes
    }

    /// The answers `kiosk proxy`'s cache holds, most recently used first, of one host when given; without bodies, their
    /// URLs and fields redacted as the log's are (a page or a terminal shows them).
    public func proxyCacheEntries(host: String? = nil, limit: Int = 1000) throws -> [ProxyCacheEntry] {
        try ProxyCache.check(host: host)
        return try (openedProxyCache()?.entries(host: host, limit: limit) ?? []).map { entry in
            var entry = entry
            entry.url = URL(string: entry.url).map(redactor.redact) ?? entry.url
            entry.headers = redactor.redact(entry.shownHeaders ?? entry.headers)
            entry.shownHeaders = nil
            entry.varied = redactedVaried(entry.varied)
            return entry
        }
    }

    /// The request fields an answer varies on as a page shows them: a value of a field the log hides (a configured
    /// `redactHeaders` name, a secret in a URL) redacted as the log's are — the cache keeps the values exact to match on.
    private func redactedVaried(_ varied: [ProxyCacheEntry.VariedField]) -> [ProxyCacheEntry.VariedField] {
        let present = varied.compactMap { field in field.value.map { (name: field.name, value: $0) } }
        var shown = redactor.redact(HTTPHeaderFields(present)).makeIterator()
        return varied.map { field in
            field.value == nil ? field : ProxyCacheEntry.VariedField(name: field.name, value: shown.next()?.value ?? field.value)
        }
    }

    /// One stored answer, with its body; nil when there is none with that id.
    public func proxyCacheEntry(id: Int64) throws -> ProxyCacheEntry? {
        try openedProxyCache()?.entry(id: id)
    }

    /// One stored answer as a page may show it: its URL, fields and body redacted as the log's are (the cache keeps them
    /// exact, to replay them); nil when there is none with that id.
    public func redactedProxyCacheEntry(id: Int64) throws -> ProxyCacheEntry? {
        guard var entry = try proxyCacheEntry(id: id) else { return nil }
        entry.url = URL(string: entry.url).map(redactor.redact) ?? entry.url
        entry.headers = redactor.redact(entry.shownHeaders ?? entry.headers)
        entry.body = redactor.redactBody(entry.shownBody ?? entry.body, contentType: entry.headers["Content-Type"],
                                         contentEncoding: entry.headers.combined("Content-Encoding"))
        entry.shownHeaders = nil
        entry.shownBody = nil
        entry.varied = redactedVaried(entry.varied)
        return entry
    }

    /// Removes one stored answer; false when there was none with that id.
    @discardableResult
    public func removeProxyCacheEntry(id: Int64) throws -> Bool {
        try openedProxyCache()?.remove(id: id) ?? false
    }

    /// Removes every stored answer, or one host's; returns how many went. From a process that does not hold the file
    /// (`kiosk proxy cache clear`), clearing it whole on a full disk removes its files, which SQLite cannot write even a
    /// delete to there, when no running proxy holds them (`Kiosk.clearRequestLog` says why).
    @discardableResult
    public func clearProxyCache(host: String? = nil) throws -> Int {
        try ProxyCache.check(host: host)
        if let proxyCache { return try proxyCache.clear(host: host) }
        let url = configuration.proxyCacheURL
        guard FileManager.default.fileExists(atPath: url.path) else { return 0 }
        let count: Int
        do {
            // Opened here, and closed (released) before the files are looked at: this process must not hold them.
            count = try { try ProxyCache.open(at: url.path, maxBytes: configuration.proxyCache?.maxBytes).clear(host: host) }()
        } catch let error as KioskError where error.isDiskFull && host == nil {
            let held = try ProxyCache.countEntries(at: url.path)
            guard Self.removeStoreFiles(url) else { throw Self.heldOnFullDisk(error, "the proxy cache", url) }
            return held
        }
        if host == nil { Self.giveBackStrandedWAL(url) }
        return count
    }

    /// The proxy cache of this process, else the data directory's file when it exists (the CLI beside a running
    /// `kiosk proxy`: two processes share it); nil when there is none.
    func openedProxyCache() throws -> ProxyCache? {
        if let proxyCache { return proxyCache }
        let path = configuration.proxyCacheURL.path
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        // A command beside the proxy keeps to the file's bound, which the proxy set.
        return try ProxyCache.open(at: path, maxBytes: configuration.proxyCache?.maxBytes)
    }

    /// Seeds the proxy cache from a HAR archive (a browser's, mitmproxy's, Kiosk's — what `kiosk har import` reads), so a
    /// session recorded elsewhere replays through the proxy, offline too. Its answers are stored by method and URL,
    /// as old as the archive says (its entry's time, the answer's `Date` and `Age`: an answer recorded last year is not
    /// fresh today). One recorded without credentials answers a request with or without any (the app sends its own);
    /// one recorded with `Authorization` or `Cookie` is kept for those credentials only, as the proxy keeps what it
    /// stores itself, and one whose credentials the archive hides (redacted) is left out: whose it was cannot be told.
    /// Throws `HAR.ImportError` for a malformed archive, storing nothing.
    public func importIntoProxyCache(atPath path: String) throws -> ProxyCacheImport {
        let data = try HAR.readArchive(atPath: path)
        let folder = path == "-" ? nil : URL(fileURLWithPath: path).deletingLastPathComponent()
        // A body kept as sent, still coded (Kiosk's own export, Polly.JS), is stored so, with its Content-Encoding.
        let archive = try HAR.importArchive(data, origin: "har", folder: folder, ignoringQueryItems: [], keepingContentCoding: true,
                                            byRecordedRequest: true)
        let cache = try openedProxyCache() ?? ProxyCache.open(at: configuration.proxyCacheURL.path, maxBytes: configuration.proxyCache?.maxBytes)
        let now = now()
        var answers: [ProxyCacheAnswer] = []
        // For each answer, whether its text is UTF-8 where its recorded label named another charset.
        var inUTF8Instead: [Bool] = []
        var hidden = 0, notRead = 0, noStore = 0, notCacheable = 0, alreadyHeld = 0, newerHeld = 0, madeByDebugger = 0
        for (index, rule) in archive.rules.enumerated() {
            // The archive's address as recorded (`kiosk har import` writes a `*` in it as %2A, for its rules' patterns).
            guard let url = URL(string: rule.urlPattern.replacingOccurrences(of: "%2A", with: "*")) else { continue }
            let recorded = index < archive.recorded.count ? archive.recorded[index] : HAR.Import.Recorded()
            var headers = HTTPHeaderFields(rule.headers.map { (name: $0.name, value: $0.value) })
            // A rule drops the answer's Date and Age (each replay says its own); a cache ages the answer by them.
            if let date = recorded.date { headers["Date"] = date }
            if let age = recorded.age { headers["Age"] = age }
            let response = HTTPResponse(status: rule.status, headers: headers, body: rule.body, url: url)
            // A URL whose secret a redacting export hid (`token=<redacted>`) is not the one any app asks.
            if url.absoluteString.contains("%3Credacted%3E") || url.absoluteString.contains(Redactor.placeholder) {
                hidden += 1
                continue
            }
            // The request as the proxy would have read it: its caching directives, a Range, a preflight's CORS fields.
            let asked = HTTPHeaderFields(recorded.caching.map { (name: $0.name, value: $0.value) })
            let request = HTTPRequest(method: rule.method, url: url, headers: asked, endpoint: "")
            let preflight = request.isCORSPreflight
            guard rule.method == "GET" || rule.method == "HEAD" || preflight else {
                notRead += 1
                continue
            }
            // What Kiosk's debugger made (a mock's answer, an edit) is not what the upstream said: replayed as its, a 500
            // edited into a 200 would be.
            if recorded.madeByDebugger {
                madeByDebugger += 1
                continue
            }
            guard ProxyCachingTransport.isKept(response, for: request) else {
                if ProxyCachingTransport.control(of: headers, shared: false).noStore
                    || ProxyCachingTransport.requestDirectives(asked).noStore { noStore += 1 } else { notCacheable += 1 }
                continue
            }
            let credentials: String
            var credentialFields: [String] = []
            if recorded.credentialValues.isEmpty {
                credentials = ProxyCacheAnswer.importedCredentials
            } else if recorded.credentialValues.contains(where: HAR.isHiddenCredential) {
                hidden += 1
                continue
            } else {
                // Keyed as the proxy keys a request sending them, so that the same identity asking finds it.
                var fields = HTTPHeaderFields()
                for value in recorded.authorization { fields.add(name: "Authorization", value: value) }
                for value in recorded.cookies { fields.add(name: "Cookie", value: value) }
                for field in recorded.identities { fields.add(name: field.name, value: field.value) }
                credentials = ProxyCachingTransport.Key(HTTPRequest(url: url, headers: fields, endpoint: "")).credentials
                credentialFields = ProxyCachingTransport.Key.credentialFields(fields)
            }
            // The very answer the proxy stored itself (this cache exported, then imported again) is not kept twice.
            // (A whole 206, a media element's `Range: bytes=0-`, is stored as its 200, as the proxy stores it.)
            let (status, storedFields) = ProxyCachingTransport.storedForm(response)
            let storedURL = ProxyCachingTransport.Key.normalized(url), storedBody = rule.method == "HEAD" ? Data() : rule.body
            if credentials == ProxyCacheAnswer.importedCredentials,
               try cache.holdsStored(method: rule.method, url: storedURL, status: status, body: storedBody) {
                alreadyHeld += 1
                continue
            }
            headers = storedFields
            // Kept by the variant its recorded request picked: a request that matches it gets it, any other the newest
            // (one recorded for an identity is that identity's one answer for the URL: a lookup under real credentials
            // matches variants strictly, as for what the proxy stores itself).
            let vary = credentials == ProxyCacheAnswer.importedCredentials
                ? ProxyCachingTransport.storedVary(HTTPResponse(status: status, headers: headers, body: Data(), url: url), preflight: preflight) : ""
            var picked = HTTPHeaderFields(recorded.varied.map { (name: $0.name, value: $0.value) })
            for field in recorded.caching where picked[field.name] == nil { picked.add(name: field.name, value: field.value) }
            let variant = ProxyCachingTransport.Key(HTTPRequest(url: url, headers: picked, endpoint: "")).variant(for: vary) ?? ""
            // Made and answered when the archive says (its entry's start), else now.
            let time = recorded.startedAt.map { min($0, now) } ?? now
            // An answer stored since (an import of a later archive, the proxy's own fetch) says more of now than this one.
            if try cache.holdsNewer(method: rule.method, url: storedURL, credentials: credentials, variant: variant, than: time) {
                newerHeld += 1
                continue
            }
            var answer = ProxyCacheAnswer(method: rule.method, url: storedURL,
                                          host: url.host(percentEncoded: false)?.lowercased() ?? "",
                                          credentials: credentials, vary: vary, variant: variant, status: status, headers: headers,
                                          body: storedBody, requestTime: time, responseTime: time)
            answer.credentialFields = credentialFields
            answers.append(answer)
            inUTF8Instead.append(recorded.inUTF8Instead)
        }
        // A hundred answers a transaction, as the proxy stores a burst: a large archive does not make one transaction
        // of its whole size, and a killed import leaves what it committed.
        var ids: [Int64?] = []
        for start in stride(from: 0, to: answers.count, by: 100) {
            ids += try cache.store(Array(answers[start..<min(start + 100, answers.count)]))
        }
        let stored = ids.compactMap { $0 }.count
        let tooLarge = ids.count - stored
        let pushedOut = try cache.missing(ids: ids.compactMap { $0 })
        let forCredentials = zip(answers, ids).filter { $0.1 != nil && $0.0.credentials != ProxyCacheAnswer.importedCredentials }.count
        return ProxyCacheImport(stored: stored, entries: archive.entries, notRead: notRead, noStore: noStore, notCacheable: notCacheable,
                                forCredentials: forCredentials, skippedDescription: archive.skippedDescription, hiddenCredentials: hidden,
                                tooLarge: tooLarge, pushedOut: pushedOut, maxBytes: cache.maxBytes, alreadyHeld: alreadyHeld,
                                newerHeld: newerHeld, madeByDebugger: madeByDebugger, inUTF8Instead: zip(inUTF8Instead, ids).count(where: { $0.0 && $0.1 != nil }))
    }

    /// The proxy cache's answers as a HAR archive, of one host when given, redacted as every export is (credentials,
    /// cookies, configured secrets), oldest first, read a few answers at a time: what `kiosk proxy cache export` writes.
    public func proxyCacheArchive(host: String? = nil) throws -> HAR.ArchiveStream {
        try ProxyCache.check(host: host)
        guard let cache = try openedProxyCache() else { return HAR.ArchiveStream { nil } }
        // The list has no bodies; each batch reads its answers' bodies.
        let listed = try cache.entries(host: host, limit: Int.max).sorted { ($0.requestTime, $0.id) < ($1.requestTime, $1.id) }
        var next = 0
        let redactor = redactor
        return HAR.ArchiveStream {
            guard next < listed.count else { return nil }
            let batch = listed[next..<min(next + 20, listed.count)]
            next += batch.count
            return try batch.compactMap { listed -> RequestRecord? in
                guard let (entry, credentialFields, varied) = try cache.exportedEntry(id: listed.id), let url = URL(string: entry.url) else {
                    return nil
                }
                let fields = redactor.redact(entry.shownHeaders ?? entry.headers).map { RequestRecord.HeaderField(name: $0.name, value: $0.value) }
                // The request as far as the key tells it: the fields its variant was picked by (so an import keeps the
                // variants apart), and, for an identity's answer, the fields its credentials came in, hidden — so an import
                // leaves it out rather than give it to anyone.
                var request = HTTPHeaderFields(varied)
                for name in credentialFields ?? [] where !request.contains(where: { HTTPHeaderFields.sameName($0.name, name) }) {
                    request.add(name: name, value: Redactor.placeholder)
                }
                let requestFields = redactor.redact(request).map { RequestRecord.HeaderField(name: $0.name, value: $0.value) }
                return RequestRecord(startedAt: entry.requestTime, source: nil, endpoint: entry.host, method: entry.method,
                                     url: redactor.redact(url), requestHeaders: requestFields, status: entry.status, responseHeaders: fields,
                                     responseBody: CapturedBody(redacted: redactor.redactBody(entry.shownBody ?? entry.body,
                                                                                              contentType: entry.headers["Content-Type"],
                                                                                              contentEncoding: entry.headers.combined("Content-Encoding")),
                                                                ofFirst: entry.body.count, size: entry.body.count, limit: .max),
                                     timings: RequestTimings(total: entry.responseTime.timeIntervalSince(entry.requestTime)),
                                     // What the entry is: the upstream's answer as the cache stored it, not a hit of now.
                                     decision: .network, cacheStatus: CacheStatus(.network, forward: .miss, forwardStatus: entry.status, stored: true))
            }
        }
    }
}
