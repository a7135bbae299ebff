public import Foundation
import Synchronization
public import KioskCore
public import KioskDebugger
package import KioskNetwork
import KioskSources
package import KioskStore

/// The composition root and the one API the faces (CLI, web app) use: the catalog, images,
/// connectivity and the network debugger, wired from a configuration. The store, the network layer
/// and the request log stay behind it.
public final class Kiosk: Sendable {
    /// What it was built from.
    public let configuration: KioskConfiguration
    /// Pages, items, search, favorites, dogs, sync.
    public let catalog: CatalogService
    /// Images with memory and disk caches.
    public let images: ImagePipeline
    /// The network debugger: request log, breakpoints, mock rules, HAR, replay.
    public let debugger: Debugger
    /// What every record, page and error is cleaned with before it is shown or stored.
    public let redactor: Redactor
    /// Wall time, as injected (ages shown are computed from it).
    public let now: @Sendable () -> Date
    /// Things that work less well than configured (capture off because the log cannot open, a proxy cache that
    /// cannot store), for faces to show: those known at start, then any said since.
    public var warnings: [String] { startWarnings + lateWarnings.all }
    private let startWarnings: [String]
    private let lateWarnings = LateWarnings()
    /// `kiosk proxy`'s cache of apps' answers; nil when none is configured or its file could not be opened.
    package let proxyCache: ProxyCache?
    /// The proxy pipeline's cache layer, whose settings switch live.
    private let proxyCaching: ProxyCachingTransport?
    /// The store (for tests and benchmarks in this package).
    package let database: AppDatabase
    /// Online/offline, from real request outcomes.
    package let connectivity: ConnectivityMonitor
    /// Every upstream exchange and store answer, redacted, bounded and searchable; nil when capture is off.
    package let requestLog: RequestLog?
    private let httpTransport: UpstreamTransport?
    /// The wire of the apps' requests through `kiosk proxy` (its own pool, passing bytes through).
    private let proxyWire: UpstreamTransport?
    /// The pipeline an app's request takes through `kiosk proxy` (`forward(_:)`).
    private let proxyPipeline: BreakpointTransport
    /// Its capture layer (nil when capture is off), which also logs the requests apps gave up before they could go.
    private let proxyCapture: CapturingTransport?
    /// The exchanges the capture has begun and not yet ended, where `kiosk proxy` lists its open protocol switches too
    /// (nil when capture is off).
    public let exchangesInFlight: ExchangesInFlight?
    /// The one rule every outbound connection passes (also wrapped around both wires).
    private let outboundPolicy: OutboundPolicy
    /// What describes the `kiosk proxy` running in this process, once one is attached.
    private let proxy = Mutex<(@Sendable () -> ProxyOverview)?>(nil)

    /// Dependencies, each replaceable in tests.
    package struct Dependencies: Sendable {
        /// The bottom transport; nil builds the real one (`UpstreamTransport`) from the configuration.
        package var transport: (any HTTPTransport)?
        /// The bottom transport of proxied requests; nil builds a pass-through `UpstreamTransport`.
        package var proxyTransport: (any HTTPTransport)?
        /// Wall time.
        package var now: @Sendable () -> Date
        /// Paces retries and probes.
        package var clock: any Clock<Duration>
        /// The store; nil opens the configured file.
        package var database: AppDatabase?
        /// The request log; nil opens the configured file (when capture is on).
        package var requestLog: RequestLog?
        /// Resolves picture hosts for the outbound policy.
        package var resolver: any HostResolver
        /// Tells this process's debugger events from an earlier run's (see `DebugEvents.EventID`).
        package var eventEpoch: String

        package init(transport: (any HTTPTransport)? = nil, proxyTransport: (any HTTPTransport)? = nil,
                     now: @escaping @Sendable () -> Date = { Date() },
                    clock: any Clock<Duration> = ContinuousClock(), database: AppDatabase? = nil,
                    requestLog: RequestLog? = nil, resolver: any HostResolver = SystemHostResolver(),
                    eventEpoch: String = String(UInt64.random(in: 1...UInt64.max), radix: 36)) {
            self.transport = transport
            self.proxyTransport = proxyTransport
            self.now = now
            self.clock = clock
            self.database = database
            self.requestLog = requestLog
            self.resolver = resolver
            self.eventEpoch = eventEpoch
        }
    }

    /// Opens the store and wires the services.
    public convenience init(configuration: KioskConfiguration) throws {
        try self.init(configuration: configuration, dependencies: Dependencies())
    }

    /// Opens the store and wires the services, with dependencies replaced (tests, benchmarks).
    package init(configuration: KioskConfiguration, dependencies: Dependencies) throws {
        self.configuration = configuration
        let database = try dependencies.database ?? AppDatabase.open(at: configuration.databaseURL.path, now: dependencies.now)
        self.database = database

        let redactor = configuration.redactor
        self.redactor = redactor
        self.now = dependencies.now
        let requestLog: RequestLog?
        var warnings: [String] = []
        var logProblem: String?
        if let injected = dependencies.requestLog {
            requestLog = injected
        } else if configuration.capture.isEnabled || FileManager.default.fileExists(atPath: configuration.requestLogURL.path) {
            // The log is a debugging aid: when it cannot open (a full disk, a read-only folder) Kiosk
            // still reads and writes its store, without capture, and says so.
            do {
                requestLog = try RequestLog.open(
                    at: configuration.requestLogURL.path,
                    configuration: .init(maxBytes: configuration.capture.logMaxBytes, maxAge: configuration.capture.logMaxAge,
                                         now: dependencies.now))
            } catch {
                requestLog = nil
                // The storage error's own words, without its "Storage error: ": a read of the log says that part itself.
                let reason = if case .storage(let message) = error as? KioskError { message }
                    else { (error as? KioskError)?.description ?? String(describing: error) }
                // A log that cannot be read is set aside by `log clear`, which a reader of this needs to be told.
                let problem = "The request log cannot be opened, so requests are not captured: " + redactor.scrub(reason)
                    + (reason.contains("corrupt") ? " `kiosk log clear` moves it aside and starts a new one." : "")
                warnings.append(problem)
                if configuration.capture.isEnabled { logProblem = problem }
            }
        } else {
            requestLog = nil
        }
        self.requestLog = requestLog
        var proxyCache: ProxyCache?
        if let cacheConfiguration = configuration.proxyCache {
            // Like the log, a help rather than a need: without it the proxy still proxies, and says why it keeps nothing.
            do {
                proxyCache = try ProxyCache.open(at: configuration.proxyCacheURL.path, maxBytes: cacheConfiguration.maxBytes)
            } catch {
                warnings.append("The proxy cache cannot be opened, so apps' answers are not kept for offline use: "
                                + redactor.scrub((error as? KioskError)?.description ?? String(describing: error)))
            }
        }
        self.proxyCache = proxyCache
        self.startWarnings = warnings
        // With capture off, an existing log is still readable (`kiosk log`), but nothing new is captured.
        let captureLog = configuration.capture.isEnabled ? requestLog : nil

        let (raw, httpTransport) = Self.wire(dependencies.transport, configuration.transport, dependencies.resolver)
        self.httpTransport = httpTransport
        var sourceConfiguration = configuration.sources
        sourceConfiguration.now = dependencies.now
        let sources = Sources.make(sourceConfiguration)
        // Every request Kiosk sends, the probe's included, passes the outbound policy on each hop.
        let policy = OutboundPolicy(sourceOrigins: Set(sources.values.flatMap(\.origins)), resolver: dependencies.resolver)
        let wire = PolicyTransport(base: raw, policy: policy)
        outboundPolicy = policy
        // Mock rules answer before the wire; rewrite rules change whichever answer came (a mock's or the
        // upstream's); secrets echoed by an upstream, a mock or a rule are scrubbed above all three; capture
        // wraps all of it, so every exchange (each retry too, mocked or rewritten or not) is one clean record
        // of what the app received. The probe goes around them: probing is Kiosk's own housekeeping.
        // What goes wrong after the start is said on stderr and kept for the faces: a rules file an edit by hand broke
        // (the running process goes on with the rules read before), a proxy cache that cannot store.
        let lateWarnings = lateWarnings
        let warnLate: @Sendable (String) -> Void = { warning in
            lateWarnings.add(warning)
            // (A standard error that cannot be written loses it: the faces still show it, from `lateWarnings`.)
            try? FileHandle.standardError.write(contentsOf: Data("warning: \(warning)\n".utf8))
        }
        // A log that cannot store what it captured (a full disk) drops and counts it: said once, until it stores again.
        requestLog?.onStoreFailure { reason in
            warnLate("The request log cannot store exchanges (\(redactor.scrub(reason))); they go unlogged, counted as "
                     + "dropped on the console's list, until it can again.")
        }
        let mocks = MockRules(fileURL: configuration.mockRulesURL, redactor: redactor, report: warnLate)
        let rules = RewriteRules(fileURL: configuration.rewriteRulesURL, redactor: redactor,
                                 endpoints: Set(Debugger.endpoints(of: sources).map(\.name)), now: dependencies.now, report: warnLate)
        let rewriting = RewritingTransport(base: MockingTransport(base: wire, rules: mocks), rules: rules,
                                           clock: dependencies.clock, timeout: configuration.transport.requestTimeout)
        let scrubbing = SecretScrubbingTransport(base: rewriting, redactor: redactor)
        // Every exchange the capture has begun and not yet ended, Kiosk's own and apps', for the console to list as it goes.
        let generation: (@Sendable () -> UInt64)? = captureLog.map { log in { @Sendable in log.recordingGeneration } }
        let inFlight = ExchangesInFlight(redactor: redactor, generation: generation)
        exchangesInFlight = captureLog == nil ? nil : inFlight
        let bottom: any HTTPTransport = captureLog.map { log in
            CapturingTransport(base: scrubbing, redactor: redactor, bodyLimit: configuration.capture.bodyLimit,
                               decodingAtMost: configuration.proxyTransport.maximumBodyBytes,
                               now: dependencies.now, room: { await log.waitForRoom() }, inFlight: inFlight) { log.enqueue($0) }
        } ?? scrubbing
        // The probe is given at init so that a failure right at start-up already starts probing.
        let probeTransport = wire
        let connectivity = ConnectivityMonitor(clock: dependencies.clock, now: dependencies.now) { origin in
            // Any HTTP answer, even a 404, proves the host is reachable again.
            (try? await probeTransport.send(HTTPRequest(method: "GET", url: origin, endpoint: "probe"))) != nil
        }
        self.connectivity = connectivity
        let retrying = RetryingTransport(base: bottom, policy: configuration.retry, clock: dependencies.clock,
                                         now: dependencies.now)
        // Breakpoints sit above retries (an error pauses once, after the last attempt) and below coalescing
        // (identical requests in flight pause once).
        let breakpoints = Breakpoints(fileURL: configuration.breakpointsURL, timeout: configuration.breakpointTimeout,
                                      clock: dependencies.clock, now: dependencies.now, redactor: redactor, report: warnLate)
        breakpoints.isActive = configuration.breakpointsActive
        var recordEdit: (@Sendable (RequestRecord) -> Void)?
        if let requestLog = captureLog { recordEdit = { @Sendable record in requestLog.enqueue(record) } }
        let pausing = BreakpointTransport(base: retrying, breakpoints: breakpoints, redactor: redactor, record: recordEdit)
        // The gate above the connectivity monitor: an origin that asked Kiosk to wait is not asked meanwhile, nor its
        // stand-in answer taken for a sign of the network's state.
        // What an earlier process was asked to wait for still holds (a script running the CLI in a loop).
        let pauses = (try? database.originPauses(at: dependencies.now())) ?? []
        let closedBefore = Dictionary(pauses.compactMap { pause in
            URL(string: pause.origin).flatMap(Origin.init).map { ($0, (until: pause.until, status: pause.status)) }
        }, uniquingKeysWith: { first, _ in first })
        let transport = CoalescingTransport(base: RateLimitGate(base: MonitoredTransport(base: pausing, monitor: connectivity),
                                                                longerThan: configuration.retry.maxRetryAfter, now: dependencies.now,
                                                                closedBefore: closedBefore, onClose: { origin, until, status in
            try? database.setOriginPause(origin.description, until: until, status: status)
        }))

        let now = dependencies.now
        var recordAnswer: (@Sendable (HTTPRequest, CacheStatus, KioskError?) -> Void)?
        if let requestLog = captureLog {
            recordAnswer = { @Sendable (request: HTTPRequest, status: CacheStatus, error: KioskError?) in
                let record = RequestRecord(startedAt: now(), source: request.source, endpoint: request.endpoint,
                                           method: request.method, url: redactor.redact(request.url),
                                           error: error.map { redactor.scrub($0.description) },
                                           timings: RequestTimings(total: 0), decision: status.decision, cacheStatus: status)
                requestLog.enqueue(record)
            }
        }
        let catalog = CatalogService(sources: sources, database: database, transport: transport, now: dependencies.now,
                                     linkedItemsPatience: configuration.linkedItemsPatience, recordAnswer: recordAnswer, warn: warnLate)
        self.catalog = catalog
        images = ImagePipeline(
            configuration: .init(memoryCostLimit: configuration.imageMemoryLimit, diskSizeLimit: configuration.imageDiskLimit,
                                 allowedOrigins: Set(sources.values.flatMap(\.origins)),
                                 allowedHosts: Set(sources.values.flatMap(\.imageHosts).map { $0.lowercased() })),
            transport: transport, database: database, now: dependencies.now)
        // An app's request through `kiosk proxy` takes the same debugger layers as Kiosk's own, in the same order —
        // the outbound policy, mocks, rewrite rules, capture, breakpoints — but none of the catalogs' own: no
        // retry (an app's POST must not be sent twice), no coalescing (not yet by HTTP's caching rules), no
        // connectivity verdict (an app's hosts are not the catalogs'), and no scrubbing of the answer (the app gets
        // what its upstream sent; the capture still redacts what it records).
        let (proxyBottom, proxyWire) = Self.wire(dependencies.proxyTransport, configuration.proxyTransport, dependencies.resolver)
        self.proxyWire = proxyWire
        let proxyPolicy = PolicyTransport(base: proxyBottom, policy: policy)
        // What the cache sends behind an answer already given (a revalidation within stale-while-revalidate, a request
        // sent again after a stored answer stood in for a slow upstream) is logged as every exchange is.
        let captureBehind: @Sendable (any HTTPTransport) -> any HTTPTransport = { behind in
            captureLog.map { log in
                CapturingTransport(base: behind, redactor: redactor, bodyLimit: configuration.capture.bodyLimit,
                                   decodingAtMost: configuration.proxyTransport.maximumBodyBytes,
                                   now: dependencies.now, room: { await log.waitForRoom() }, inFlight: inFlight) { log.enqueue($0) }
            } ?? behind
        }
        let proxyCaching = configuration.proxyCache.map { cacheConfiguration in
            ProxyCachingTransport(base: proxyPolicy, captureBehind: captureBehind, cache: proxyCache, settings: cacheConfiguration.settings,
                                  patience: cacheConfiguration.fallbackAfter, redactor: redactor,
                                  bufferLimit: configuration.proxyTransport.maximumBodyBytes,
                                  heldBodies: configuration.proxyTransport.heldBodies,
                                  verifiesUpstream: configuration.proxyTransport.verifiesCertificates, now: dependencies.now, warn: warnLate)
        }
        self.proxyCaching = proxyCaching
        let proxyRewriting = RewritingTransport(base: MockingTransport(base: proxyCaching ?? proxyPolicy, rules: mocks),
                                                rules: rules, clock: dependencies.clock,
                                                timeout: configuration.proxyTransport.requestTimeout,
                                                decodingAtMost: configuration.proxyTransport.maximumBodyBytes)
        let proxyCapture = captureLog.map { log in
            CapturingTransport(base: proxyRewriting, redactor: redactor, bodyLimit: configuration.capture.bodyLimit,
                               decodingAtMost: configuration.proxyTransport.maximumBodyBytes,
                               now: dependencies.now, room: { await log.waitForRoom() }, inFlight: inFlight) { log.enqueue($0) }
        }
        self.proxyCapture = proxyCapture
        let proxyPipeline = BreakpointTransport(base: proxyCapture ?? proxyRewriting, breakpoints: breakpoints, redactor: redactor,
                                                record: recordEdit)
        self.proxyPipeline = proxyPipeline
        debugger = Debugger(breakpoints: breakpoints, mocks: mocks, rules: rules, log: requestLog, logProblem: logProblem, sources: sources,
                            epoch: dependencies.eventEpoch, inFlight: inFlight, send: { try await transport.send($0) },
                            sendProxied: { try await proxyPipeline.send($0) })
    }

    /// The bottom of a transport stack: the injected one, or a real one to shut down at the end, looking names up with the
    /// outbound policy's `resolver`.
    private static func wire(_ injected: (any HTTPTransport)?, _ configuration: TransportConfiguration,
                             _ resolver: any HostResolver) -> (any HTTPTransport, UpstreamTransport?) {
        if let injected { return (injected, nil) }
        let real = UpstreamTransport(configuration: configuration, resolver: resolver)
        return (real, real)
    }

    /// Logs a CONNECT tunnel `kiosk proxy` passed through unread, once closed: one exchange under its host, with the
    /// bytes each way and how long it was open (or why it could not open). Nothing when capture is off.
    public func recordTunnel(_ tunnel: TunnelSummary) {
        guard configuration.capture.isEnabled, let requestLog else { return }
        if let upgrade = tunnel.upgrade { return recordUpgrade(tunnel, upgrade, in: requestLog) }
        let (endpoint, url) = TunnelSummary.connectName(host: tunnel.host, port: tunnel.port)
        let detail = "\(tunnel.sent) bytes sent, \(tunnel.received) received, in \(String(format: "%.3f", tunnel.duration)) s"
            + (tunnel.cutByStop ? Self.cutByStop : "") + (tunnel.note.map { "; " + $0 } ?? "")
        enqueue(RequestRecord(
            startedAt: now().addingTimeInterval(-tunnel.duration), source: nil, endpoint: endpoint, method: "CONNECT", url: url,
            status: tunnel.error == nil ? 200 : tunnel.refusedOffline ? 504 : nil, error: tunnel.error.map { redactor.scrub($0) },
            timings: RequestTimings(total: tunnel.duration), decision: tunnel.cacheStatus?.decision ?? .network, cacheStatus: tunnel.cacheStatus,
            touchedBy: tunnel.wasToBeRead ? [] : [ExchangeTouch(kind: .tunnel, id: 0, name: endpoint, detail: detail)],
            responseSize: tunnel.wasToBeRead ? nil : tunnel.received), of: tunnel, in: requestLog)
    }

    /// Logs a tunnel's record, if recording has stayed as it was since the tunnel opened.
    private func enqueue(_ record: RequestRecord, of tunnel: TunnelSummary, in requestLog: RequestLog) {
        var deferred = DeferredRecord(record)
        deferred.generation = tunnel.generation
        requestLog.enqueue(deferred)
    }

    /// What a tunnel's note adds when Kiosk's stop closed it: neither end ended it, which its length alone would hide.
    private static let cutByStop = "; cut when Kiosk stopped with it open"

    /// Header fields as the log keeps them: credentials and configured secrets redacted (by `redactor`, the app's own
    /// credentials added where they may be echoed).
    private static func redacted(_ fields: [RequestRecord.HeaderField], by redactor: Redactor) -> [RequestRecord.HeaderField] {
        redactor.redact(HTTPHeaderFields(fields.map { (name: $0.name, value: $0.value) })).map { .init(name: $0.name, value: $0.value) }
    }

    /// A protocol switch (WebSocket) as one exchange: the request that asked, the upstream's status (101), the bytes
    /// each way in a tunnel touch, since the frames after the switch are passed on unread.
    private func recordUpgrade(_ tunnel: TunnelSummary, _ upgrade: TunnelSummary.Upgrade, in requestLog: RequestLog) {
        let name = tunnel.host.contains(":") ? "[\(tunnel.host)]" : tunnel.host
        let standard = upgrade.url.scheme?.lowercased() == "https" ? 443 : 80
        let endpoint = tunnel.port == standard ? name : "\(name):\(tunnel.port)"
        let detail = "\(upgrade.protocolName): \(tunnel.sent) bytes sent, \(tunnel.received) received, in "
            + String(format: "%.3f", tunnel.duration) + " s" + (tunnel.cutByStop ? Self.cutByStop : "")
        // The handshake's answer may echo what the app sent (its token, its cookie), as any answer may: hidden the same way.
        let sent = HTTPHeaderFields(upgrade.requestHeaders.map { (name: $0.name, value: $0.value) })
        let redactor = redactor.hiding(redactor.credentials(in: sent, url: upgrade.url))
        // A WebSocket is logged at the address the app opened (ws:, wss:), as browsers' and mitmproxy's archives name it.
        var url = redactor.redact(upgrade.url)
        if upgrade.protocolName == "websocket", url.hasPrefix("http") { url = "ws" + url.dropFirst("http".count) }
        var touches = [ExchangeTouch(kind: .tunnel, id: 0, name: endpoint, detail: detail)] + tunnel.touches
        // A switch over TLS to an upstream whose certificate is not checked is marked as every such exchange is.
        if upgrade.url.scheme?.lowercased() == "https", !configuration.proxyTransport.verifiesCertificates {
            touches.append(UpstreamTransport.insecureNote(endpoint))
        }
        enqueue(RequestRecord(
            startedAt: now().addingTimeInterval(-tunnel.duration), source: nil, endpoint: endpoint, method: upgrade.method,
            url: url, requestHeaders: Self.redacted(upgrade.requestHeaders, by: redactor),
            status: tunnel.error == nil ? upgrade.status : tunnel.refusedOffline ? 504 : nil,
            responseHeaders: Self.redacted(upgrade.responseHeaders, by: redactor),
            error: tunnel.error.map { redactor.scrub($0) }, timings: RequestTimings(total: tunnel.duration),
            decision: tunnel.cacheStatus?.decision ?? .network, cacheStatus: tunnel.cacheStatus,
            touchedBy: touches, responseSize: tunnel.received), of: tunnel, in: requestLog)
    }

    /// Holds an app's protocol switch (a WebSocket's handshake) received by `kiosk proxy` at its request breakpoint, if
    /// one is set for it, before it goes upstream: what the console decided (see `SwitchHold`).
    public func holdSwitch(_ request: HTTPRequest) async -> SwitchHold {
        var request = request
        if !request.purpose.isProxied { request.purpose = .proxied }
        return await proxyPipeline.holdSwitch(request)
    }

    /// Sends an app's request, received by `kiosk proxy`, through the debugger (capture, breakpoints, mocks, rewrite
    /// rules) to its upstream, as a `.proxied` request unless it says `.proxiedForNetwork` (a client on another machine). Throws what the upstream's failure
    /// was (`offline`, `timeout`, `transport`, `refused`) for the proxy to answer as a 502 or 504.
    public func forward(_ request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        if !request.purpose.isProxied { request.purpose = .proxied }
        return try await proxyPipeline.send(request)
    }

    /// Logs an app's request that `kiosk proxy` never forwarded because the app went away before the end of its body:
    /// what came of it, and `error` saying so, `elapsed` after its head came. Nothing when capture is off.
    public func recordCutShort(_ request: HTTPRequest, error: KioskError, after elapsed: Duration) {
        proxyCapture?.recordUnsent(request, error: error, elapsed: elapsed)
    }

    /// The addresses `kiosk proxy` is to dial for an app's connection to `url` (a CONNECT tunnel's or a protocol switch's
    /// target, which go round the HTTP pipeline but not round the policy), looked up for the connection and checked:
    /// throws the outbound policy's refusal (`KioskError.refused`) when it may not connect there. `forNetwork`: for a
    /// client on another machine (`.proxiedForNetwork`), whose connections reach public addresses only — these, not the
    /// answer the policy's check had (DialAddresses.swift).
    package func vetProxied(_ url: URL, forNetwork: Bool) async throws -> CheckedAddresses {
        if proxyCacheSettings?.offline == true {
            // Marked as the cache's offline miss: the app gets the 504 any request not stored gets offline.
            throw CacheMarkedFailure(KioskError.refused(url: redactor.redact(url), reason: "the proxy is offline (kiosk proxy --offline, "
                                                        + "or the console's switch): it opens no connection to an upstream"),
                                     cacheStatus: CacheStatus(.offline, forward: .miss))
        }
        let publicOnly = try await outboundPolicy.check(url, purpose: forNetwork ? .proxiedForNetwork : .proxied)
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        // Within the 10 s a tunnel has to connect (ProxyHandler's dial), as NIO's own lookup was.
        return CheckedAddresses(try await DialAddresses.look(up: url.host(percentEncoded: false) ?? "", port: port, publicOnly: publicOnly,
                                                             resolver: outboundPolicy.resolver, within: .seconds(10),
                                                             url: { redactor.redact(url) }))
    }

    /// Whether `kiosk proxy`'s cache file is open: false when it could not be (a read-only folder; a start warning says
    /// why), so that nothing is stored or given from it this run, whatever its mode.
    public var isProxyCacheOpen: Bool { proxyCache != nil }

    /// How `kiosk proxy`'s cache answers now (nil when this process has no proxy cache layer).
    public var proxyCacheSettings: ProxyCacheSettings? {
        proxyCaching?.settings.withLock { $0 }
    }

    /// Switches how `kiosk proxy`'s cache answers, from the next request: `mode`, `offline`, or both (nil keeps one as it
    /// is). Returns the settings now; nil when this process has no proxy cache layer. Offline with mode off is refused
    /// (`KioskError.invalidRequest`), as `kiosk proxy --offline --cache off` is: offline answers from the cache, which off
    /// turns off. Checked and set at once, so two switches made together cannot reach it either.
    @discardableResult
    public func switchProxyCache(mode: ProxyCacheMode? = nil, offline: Bool? = nil) throws -> ProxyCacheSettings? {
        guard let proxyCaching else { return nil }
        return try proxyCaching.settings.withLock { settings in
            var next = settings
            if let mode { next.mode = mode }
            if let offline { next.offline = offline }
            if next.offline && next.mode == .off {
                throw KioskError.invalidRequest(mode == nil
                    ? "Offline answers from the cache, which mode off turns off: choose fallback or http first."
                    : "Mode off stores and gives nothing, which offline answers from: go online first.")
            }
            settings = next
            return next
        }
    }

    /// Why `kiosk proxy`'s cache could not store the latest answer it could not store (a full disk), while its latest
    /// write of answers failed; nil once one succeeds again (space freed), and while every answer was kept.
    public var proxyCacheFailure: String? {
        guard proxyCache?.isFailing == true else { return nil }
        return proxyCaching?.failure.withLock { $0 }
    }

    /// Makes `overview` the description of this process's `kiosk proxy` (its listeners, CA and live counts) that the
    /// console shows.
    public func attachProxy(_ overview: @escaping @Sendable () -> ProxyOverview) {
        proxy.withLock { $0 = overview }
    }

    /// This process's proxy as it is now; nil when none runs here (`kiosk serve`).
    public func proxyOverview() -> ProxyOverview? {
        proxy.withLock { $0 }?()
    }

    /// The origins this process reaches at another listener than their host's (the embedded demo upstream's
    /// `demo.invalid`, at its loopback port), as curl's `--connect-to` does: for a copied cURL to reach them too.
    public var connectOverrides: [Origin: Origin] { configuration.transport.connectOverrides }

    /// Whether the upstreams answer, as far as the latest requests and probes tell.
    public func connectivityStatus() async -> ConnectivityStatus { await connectivity.status }

    /// Stops background work and closes connections.
    public func shutdown() async {
        // Records still queued and mock hit counts are written before the process ends.
        try? requestLog?.flush()
        proxyCache?.flush()
        debugger.stop()
        debugger.mocks.saveHits(force: true)
        debugger.rules.saveHits(force: true)
        await connectivity.stop()
        await httpTransport?.shutdown()
        await proxyWire?.shutdown()
        // Each file holds its data once the process has ended, not only its write-ahead log beside it.
        database.foldWriteAheadLog()
        requestLog?.foldWriteAheadLog()
        proxyCache?.foldWriteAheadLog()
    }

    /// Reads and checks the HAR archive at `path` as the imports do, storing nothing and opening no store, so that a command
    /// can refuse it before making a data folder; throws `HAR.ImportError`. Standard input (`-`), which can be read once,
    /// is not read here.
    public static func checkArchive(atPath path: String) throws {
        guard path != "-" else { return }
        _ = try HAR.importArchive(HAR.readArchive(atPath: path), origin: "har",
                                  folder: URL(fileURLWithPath: path).deletingLastPathComponent(), ignoringQueryItems: [])
    }

    /// The catalogs as unconfigured sources, for their rules for requests alone (`checked`).
    private static let requestRules = Sources.make(.live)

    /// `request` checked and normalised as its catalog does (its filters, its pages), before any store is opened, so a
    /// command with a bad flag refuses it without making a data folder; throws `KioskError` as `CatalogService.normalize`.
    /// A source's rules for requests read none of its configuration (keys, base URLs), so unconfigured sources say them.
    public static func checked(_ request: PageRequest) throws -> PageRequest {
        guard request.page >= 1 else {
            throw KioskError.invalidRequest("Page must be 1 or more, got \(request.page)")
        }
        guard let source = requestRules[request.source] else {
            throw KioskError.invalidRequest("Source \(request.source.rawValue) is not configured")
        }
        return try source.normalize(request)
    }
}

/// Warnings said after the start (a proxy cache that cannot store), kept for the faces that show them.
private final class LateWarnings: Sendable {
    private let list = Mutex<[String]>([])
    var all: [String] { list.withLock { $0 } }
    /// Keeps `warning` unless it is already kept: a disk that fills again and again says the same thing each time.
    func add(_ warning: String) { list.withLock { if !$0.contains(warning) { $0.append(warning) } } }
}
