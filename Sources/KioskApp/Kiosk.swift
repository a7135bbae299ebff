import Foundation
import KioskCore
import KioskNetwork
import KioskSources
import KioskStore

/// The composition root: one value holding every service, wired from a configuration.
/// The CLI, the web app and the tests build one of these and use its parts.
public final class Kiosk: Sendable {
    /// What it was built from.
    public let configuration: KioskConfiguration
    /// The store.
    public let database: AppDatabase
    /// Pages, items, search, favorites, dogs, sync.
    public let catalog: CatalogService
    /// Images with memory and disk caches.
    public let images: ImagePipeline
    /// Online/offline, from real request outcomes.
    public let connectivity: ConnectivityMonitor
    /// Pages currently on someone's screen, revalidated when connectivity returns.
    public let shownPages: ShownPages
    /// Every upstream exchange and store answer, redacted, bounded and searchable; nil when capture is off.
    public let requestLog: RequestLog?
    /// What every record, page and error is cleaned with before it is shown or stored.
    public let redactor: Redactor
    /// Wall time, as injected (ages shown are computed from it).
    public let now: @Sendable () -> Date
    /// The network debugger's mock rules ("map local"), answered before the upstream.
    public let mocks: MockRules
    /// The network debugger's breakpoints: settings per endpoint and the exchanges paused now.
    public let breakpoints: Breakpoints
    /// Things that work less well than configured (capture off because the log cannot open), for faces to show.
    public let warnings: [String]
    private let httpTransport: AsyncHTTPTransport?
    private let reconnectWatcher: Task<Void, Never>

    /// Dependencies, each replaceable in tests.
    public struct Dependencies: Sendable {
        /// The bottom transport; nil builds the AsyncHTTPClient one from the configuration.
        public var transport: (any HTTPTransport)?
        /// Wall time.
        public var now: @Sendable () -> Date
        /// Paces retries and probes.
        public var clock: any Clock<Duration>
        /// The store; nil opens the configured file.
        public var database: AppDatabase?
        /// The request log; nil opens the configured file (when capture is on).
        public var requestLog: RequestLog?
        /// Resolves picture hosts for the outbound policy.
        public var resolver: any HostResolver

        public init(transport: (any HTTPTransport)? = nil, now: @escaping @Sendable () -> Date = { Date() },
                    clock: any Clock<Duration> = ContinuousClock(), database: AppDatabase? = nil,
                    requestLog: RequestLog? = nil, resolver: any HostResolver = SystemHostResolver()) {
            self.transport = transport
            self.now = now
            self.clock = clock
            self.database = database
            self.requestLog = requestLog
            self.resolver = resolver
        }
    }

    /// Opens the store and wires the services.
    public init(configuration: KioskConfiguration, dependencies: Dependencies = Dependencies()) throws {
        self.configuration = configuration
        let database = try dependencies.database ?? AppDatabase.open(at: configuration.databaseURL.path)
        self.database = database

        let redactor = configuration.redactor
        self.redactor = redactor
        self.now = dependencies.now
        let requestLog: RequestLog?
        var warnings: [String] = []
        if let injected = dependencies.requestLog {
            requestLog = injected
        } else if configuration.capture.isEnabled {
            // The log is a debugging aid: when it cannot open (a full disk, a read-only folder) Kiosk
            // still reads and writes its store, without capture, and says so.
            do {
                requestLog = try RequestLog.open(
                    at: configuration.requestLogURL.path,
                    configuration: .init(maxBytes: configuration.capture.logMaxBytes, maxAge: configuration.capture.logMaxAge,
                                         now: dependencies.now))
            } catch {
                requestLog = nil
                warnings.append("The request log cannot be opened, so requests are not captured: "
                                + redactor.scrub((error as? KioskError)?.description ?? String(describing: error)))
            }
        } else {
            requestLog = nil
        }
        self.requestLog = requestLog
        self.warnings = warnings

        let raw: any HTTPTransport
        if let injected = dependencies.transport {
            raw = injected
            httpTransport = nil
        } else {
            let real = AsyncHTTPTransport(configuration: configuration.transport)
            raw = real
            httpTransport = real
        }
        var sourceConfiguration = configuration.sources
        sourceConfiguration.now = dependencies.now
        let sources = Sources.make(sourceConfiguration)
        // Every request Kiosk sends, the probe's included, passes the outbound policy on each hop.
        let policy = OutboundPolicy(sourceOrigins: Set(sources.values.flatMap(\.origins)), resolver: dependencies.resolver)
        let wire = PolicyTransport(base: raw, policy: policy)
        // Mock rules answer before the wire; secrets echoed by an upstream (or a mock) are scrubbed above
        // both; capture wraps all of it, so every exchange (each retry too, mocked or not) is one clean
        // record. The probe goes around them: probing is Kiosk's own housekeeping.
        let mocks = MockRules(fileURL: configuration.mockRulesURL, redactor: redactor)
        self.mocks = mocks
        let scrubbing = SecretScrubbingTransport(base: MockingTransport(base: wire, rules: mocks), redactor: redactor)
        let bottom: any HTTPTransport = requestLog.map { log in
            CapturingTransport(base: scrubbing, redactor: redactor, bodyLimit: configuration.capture.bodyLimit,
                               now: dependencies.now) { log.enqueue($0) }
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
                                      clock: dependencies.clock, now: dependencies.now, redactor: redactor)
        breakpoints.isActive = configuration.breakpointsActive
        self.breakpoints = breakpoints
        var recordEdit: (@Sendable (RequestRecord) -> Void)?
        if let requestLog { recordEdit = { @Sendable record in requestLog.enqueue(record) } }
        let pausing = BreakpointTransport(base: retrying, breakpoints: breakpoints, redactor: redactor, record: recordEdit)
        let transport = CoalescingTransport(base: MonitoredTransport(base: pausing, monitor: connectivity))

        let now = dependencies.now
        var recordAnswer: (@Sendable (HTTPRequest, CacheDecision, KioskError?) -> Void)?
        if let requestLog {
            recordAnswer = { @Sendable (request: HTTPRequest, decision: CacheDecision, error: KioskError?) in
                let record = RequestRecord(startedAt: now(), source: request.source, endpoint: request.endpoint,
                                           method: request.method, url: redactor.redact(request.url),
                                           error: error.map { redactor.scrub($0.description) },
                                           timings: RequestTimings(total: 0), decision: decision)
                requestLog.enqueue(record)
            }
        }
        let catalog = CatalogService(sources: sources, database: database, transport: transport, now: dependencies.now,
                                     recordAnswer: recordAnswer)
        self.catalog = catalog
        images = ImagePipeline(
            configuration: .init(memoryCostLimit: configuration.imageMemoryLimit, diskSizeLimit: configuration.imageDiskLimit,
                                 allowedOrigins: Set(sources.values.flatMap(\.origins)),
                                 allowedHosts: Set(sources.values.flatMap(\.imageHosts).map { $0.lowercased() })),
            transport: transport, database: database, now: dependencies.now)
        let shown = ShownPages()
        shownPages = shown

        reconnectWatcher = Task {
            var wasOffline = false
            for await status in await connectivity.updates() {
                if status.isOffline {
                    wasOffline = true
                } else if wasOffline {
                    wasOffline = false
                    await shown.revalidateStale(using: catalog)
                }
            }
        }
    }

    /// Stops background work and closes connections.
    public func shutdown() async {
        reconnectWatcher.cancel()
        // Records still queued and mock hit counts are written before the process ends.
        try? requestLog?.flush()
        mocks.saveHits(force: true)
        await connectivity.stop()
        await httpTransport?.shutdown()
    }
}

/// The pages on screen now; when connectivity returns, the stale ones are revalidated and the fresh
/// updates are broadcast so views can swap them in.
public actor ShownPages {
    private var counts: [PageRequest: Int] = [:]
    private var observers: [UInt64: AsyncStream<CatalogUpdate>.Continuation] = [:]
    private var nextObserver: UInt64 = 0

    public init() {}

    /// A view started showing `request`.
    public func show(_ request: PageRequest) { counts[request, default: 0] += 1 }

    /// A view stopped showing `request`.
    public func hide(_ request: PageRequest) {
        guard let count = counts[request] else { return }
        counts[request] = count > 1 ? count - 1 : nil
    }

    /// The requests on screen.
    public var requests: [PageRequest] { Array(counts.keys) }

    /// Fresh updates produced by reconnect revalidations.
    public func revalidations() -> AsyncStream<CatalogUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: CatalogUpdate.self, bufferingPolicy: .bufferingNewest(32))
        nextObserver += 1
        let id = nextObserver
        observers[id] = continuation
        continuation.onTermination = { _ in Task { await self.removeObserver(id) } }
        return stream
    }

    /// Revalidates every shown page whose stored snapshot is stale (or missing) and broadcasts the results.
    public func revalidateStale(using catalog: CatalogService) async {
        for request in counts.keys {
            guard let update = try? await catalog.page(request, policy: .automatic), update.error == nil else { continue }
            for continuation in observers.values { continuation.yield(update) }
        }
    }

    private func removeObserver(_ id: UInt64) { observers[id] = nil }
}
