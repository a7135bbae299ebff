public import Foundation
import Hummingbird
public import KioskCore
import KioskListener

// The entirety of KioskDemoUpstream's public API. Everything else in the module is internal.

/// Where a demo upstream listens, which credentials it accepts and which faults it starts with.
public struct DemoUpstreamConfiguration: Sendable {
    /// The interface both listeners bind to.
    public var host: String
    /// The API listener's port; 0 picks a free port (read the result from `DemoUpstream.baseURL`).
    public var port: Int
    /// The control listener's port (faults, health, stats); 0 picks a free port. It stays up while the API is offline.
    public var controlPort: Int
    /// The NYT `api-key` the API accepts; defaults to a random key per configuration.
    public var nytAPIKey: String
    /// The Marvel public key (`apikey`) the API accepts; defaults to a random key per configuration.
    public var marvelPublicKey: String
    /// The Marvel private key the `hash` must be made with; defaults to a random key per configuration.
    public var marvelPrivateKey: String
    /// The faults in effect when the server starts.
    public var faults: FaultSettings
    /// Seed of the fault dice, so a sequence of requests meets the same faults on every run; the data never varies.
    public var seed: UInt64
    /// The origin written into answers (pictures, links, `next` pages) and into the four base URLs, when it
    /// is not the listener's own: Kiosk gives its embedded upstream one canonical origin and connects it
    /// to whichever port the listener has, so stored data never depends on a port. Nil: the listener's.
    public var publicBaseURL: URL?

    /// A configuration; keys left nil are random (32/32/40 hex digits), so no real key is ever needed or exposed.
    public init(host: String = "127.0.0.1", port: Int = 0, controlPort: Int = 0, nytAPIKey: String? = nil,
                marvelPublicKey: String? = nil, marvelPrivateKey: String? = nil, faults: FaultSettings = .none,
                seed: UInt64 = 42, publicBaseURL: URL? = nil) {
        self.host = host
        self.port = port
        self.controlPort = controlPort
        self.nytAPIKey = nytAPIKey ?? Hashing.randomKey(length: 32)
        self.marvelPublicKey = marvelPublicKey ?? Hashing.randomKey(length: 32)
        self.marvelPrivateKey = marvelPrivateKey ?? Hashing.randomKey(length: 40)
        self.faults = faults
        self.seed = seed
        self.publicBaseURL = publicBaseURL
    }
}

/// The credentials a demo upstream accepts.
public struct DemoUpstreamKeys: Sendable, Hashable {
    /// NYT `api-key`.
    public var nyt: String
    /// Marvel public key, sent as `apikey`.
    public var marvelPublic: String
    /// Marvel private key, used only to compute `hash = md5(ts + private + public)`.
    public var marvelPrivate: String

    /// Keys as given.
    public init(nyt: String, marvelPublic: String, marvelPrivate: String) {
        self.nyt = nyt
        self.marvelPublic = marvelPublic
        self.marvelPrivate = marvelPrivate
    }
}

/// Faults injected into API and image responses (never into the control listener).
///
/// Per request, one seeded draw picks at most one outcome, checked in this order: 500, 429,
/// truncated body, malformed body, bad item; so each rate is the fraction of requests that get it as
/// long as the rates add up to at most 1. Latency is added to every affected request. As JSON (control
/// listener `GET`/`PUT /faults`), fields have these names; a `PUT` may carry any subset of them.
public struct FaultSettings: Codable, Sendable, Hashable {
    /// Milliseconds slept before answering each affected request.
    public var latencyMilliseconds: Int
    /// Fraction (0...1) of requests answered `500` with the source's error body.
    public var failureRate: Double
    /// Fraction (0...1) of requests answered `429` with `Retry-After`.
    public var rateLimitRate: Double
    /// The `Retry-After` value, in seconds, of injected 429s.
    public var retryAfterSeconds: Int
    /// Fraction (0...1) of 200 responses whose body is cut in half while `Content-Length` claims the full size; the connection is then closed.
    public var truncateRate: Double
    /// Fraction (0...1) of 200 responses whose body is syntactically broken (JSON; images get a cut PNG) with a correct `Content-Length`.
    public var malformedRate: Double
    /// Fraction (0...1) of requests whose 200 list response (NYT `results`, Marvel `data.results`, Rick and Morty
    /// `results`, the dogs array) comes back as valid JSON with its own ETag, but with the second item's name field
    /// (`title`, `name`, `dogName`) set to `null`, as real APIs sometimes send one broken record in a good page.
    /// Detail responses, images and lists of fewer than two items are sent unaltered.
    public var badItemRate: Double
    /// When true the API listener is closed, so connections are refused; the control listener stays up. Applies to every source.
    public var offline: Bool
    /// A hostile upstream: every answer of an affected source echoes the request's credentials (`api-key`,
    /// `apikey`, `ts`, `hash`) in its ETag, in every name, title and message of its JSON body (as
    /// "Invalid ApiKey <key> ..."), and in an `X-Echo` header. The ETag stays revalidatable: a 304 comes
    /// back only when `If-None-Match` is an echoed ETag exactly as it was sent.
    public var echoCredentials: Bool
    /// The sources the rates and latency apply to; nil means all. Images count as their source's.
    public var sources: Set<SourceID>?

    /// No faults at all.
    public static let none = FaultSettings()

    /// Settings; anything not given is off.
    public init(latencyMilliseconds: Int = 0, failureRate: Double = 0, rateLimitRate: Double = 0,
                retryAfterSeconds: Int = 1, truncateRate: Double = 0, malformedRate: Double = 0,
                badItemRate: Double = 0, offline: Bool = false, echoCredentials: Bool = false,
                sources: Set<SourceID>? = nil) {
        self.latencyMilliseconds = latencyMilliseconds
        self.failureRate = failureRate
        self.rateLimitRate = rateLimitRate
        self.retryAfterSeconds = retryAfterSeconds
        self.truncateRate = truncateRate
        self.malformedRate = malformedRate
        self.badItemRate = badItemRate
        self.offline = offline
        self.echoCredentials = echoCredentials
        self.sources = sources
    }

    /// Whether `source` is subject to the rates and latency.
    public func applies(to source: SourceID) -> Bool { sources?.contains(source) ?? true }

    /// Throws `KioskError.invalidRequest` naming the first out-of-range field (rates outside 0...1, negative durations).
    public func validate() throws {
        let rates = [("failureRate", failureRate), ("rateLimitRate", rateLimitRate),
                     ("truncateRate", truncateRate), ("malformedRate", malformedRate), ("badItemRate", badItemRate)]
        for (name, rate) in rates where !(rate.isFinite && (0...1).contains(rate)) {
            throw KioskError.invalidRequest("\(name) must be between 0 and 1, got \(rate)")
        }
        guard (0...600_000).contains(latencyMilliseconds) else {
            throw KioskError.invalidRequest("latencyMilliseconds must be between 0 and 600000, got \(latencyMilliseconds)")
        }
        guard retryAfterSeconds >= 0 else {
            throw KioskError.invalidRequest("retryAfterSeconds must not be negative, got \(retryAfterSeconds)")
        }
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case latencyMilliseconds, failureRate, rateLimitRate, retryAfterSeconds, truncateRate, malformedRate,
             badItemRate, offline, echoCredentials, sources
    }

    /// Decodes a full or partial object; missing fields keep the values of `.none`.
    public init(from decoder: any Decoder) throws {
        self = try FaultPatch(from: decoder).applied(to: .none)
    }

    /// Encodes every field; `sources` as a sorted array, or `null` for all sources.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(latencyMilliseconds, forKey: .latencyMilliseconds)
        try container.encode(failureRate, forKey: .failureRate)
        try container.encode(rateLimitRate, forKey: .rateLimitRate)
        try container.encode(retryAfterSeconds, forKey: .retryAfterSeconds)
        try container.encode(truncateRate, forKey: .truncateRate)
        try container.encode(malformedRate, forKey: .malformedRate)
        try container.encode(badItemRate, forKey: .badItemRate)
        try container.encode(offline, forKey: .offline)
        try container.encode(echoCredentials, forKey: .echoCredentials)
        if let sources {
            try container.encode(sources.sorted().map(\.rawValue), forKey: .sources)
        } else {
            try container.encodeNil(forKey: .sources)
        }
    }
}

/// Sizes of the demo data, for tests and UIs that want to check what they received.
public enum DemoData {
    /// Rick and Morty characters (826, as upstream).
    public static let rickAndMortyCount = RickAndMortyCatalog.count
    /// Rick and Morty pages of 20 (42, as upstream).
    public static let rickAndMortyPageCount = RickAndMortyCatalog.pageCount
    /// Marvel characters (at least 150).
    public static var marvelCount: Int { DemoCatalog.shared.marvel.characters.count }
    /// Dogs in the dogs document.
    public static var dogsCount: Int { DemoCatalog.shared.dogs.dogs.count }
}

/// The embedded demo upstream: a loopback HTTP server speaking the NYT, Marvel, Rick and Morty and dogs
/// APIs at their real paths, with generated images and injectable faults, plus a control listener.
///
/// URL layout (API listener): `/svc/mostpopular/v2/...` (NYT), `/v1/public/characters...` (Marvel),
/// `/api/character...` (Rick and Morty), `/dogs.json`, images under `/images/{nyt,marvel,dogs}/...` and
/// `/api/character/avatar/{id}.jpeg`, stand-in web pages under `/web/...`. Control listener:
/// `GET /health`, `GET|PUT|DELETE /faults`, `GET|DELETE /stats`.
public actor DemoUpstream {
    /// The configuration it was created with (ports as requested; the bound ones are in `baseURL`/`controlURL`).
    public nonisolated let configuration: DemoUpstreamConfiguration
    nonisolated let core: UpstreamCore
    private var apiListener: RunningListener?
    /// The API port, held while the API is offline (see `PortReservation`).
    private var offlinePort: PortReservation?
    private var controlListener: RunningListener?
    private var isStarted = false
    // start, stop and setFaults open and close listeners across awaits; this queue keeps them from interleaving.
    private var isBusy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// A stopped server; nothing listens until `start()`.
    public init(configuration: DemoUpstreamConfiguration = .init()) {
        self.configuration = configuration
        self.core = UpstreamCore(configuration: configuration)
    }

    /// Binds both listeners and returns once they accept connections (the API one stays closed if the faults say offline); throws if a port cannot be bound or the faults are invalid.
    public func start() async throws {
        try configuration.faults.validate()
        await lock()
        defer { unlock() }
        guard !isStarted else { return }
        // Build the shared catalogs now rather than inside the first request, which benchmarks time.
        _ = DemoCatalog.shared
        core.prepareForStart()
        let api = try await openAPIListener(port: core.state.apiPort == 0 ? configuration.port : core.state.apiPort)
        do {
            controlListener = try await RunningListener.launch(
                responder: ControlRouter.build(upstream: self).buildResponder(), policy: controlPolicy,
                host: configuration.host, port: configuration.controlPort
            ) { [core] port in core.state.setControlPort(port) }
        } catch {
            await api.stop()
            apiListener = nil
            core.state.setAPIListening(false)
            throw error
        }
        isStarted = true
        try await reconcileAPIListener()
    }

    /// Closes both listeners and waits until they are closed; `start()` may be called again (the API port is kept).
    public func stop() async {
        await lock()
        defer { unlock() }
        isStarted = false
        if let apiListener {
            self.apiListener = nil
            core.state.setAPIListening(false)
            await apiListener.stop()
        }
        offlinePort = nil
        if let controlListener {
            self.controlListener = nil
            await controlListener.stop()
        }
    }

    /// The origin Kiosk's embedded upstream writes into every answer, whatever port it listens on; it
    /// never resolves (`.invalid`), so only a transport told where to connect it can reach it.
    public static let canonicalBaseURL = URL(string: "http://demo.invalid")!

    /// `http://host:port` of the API listener; the port is fixed once started and survives offline/online (port 0 before `start()`).
    public var baseURL: URL { core.state.baseURL }
    /// The origin answers name: `configuration.publicBaseURL`, else `baseURL`.
    public var publicBaseURL: URL { configuration.publicBaseURL ?? baseURL }
    /// `http://host:port` of the control listener (port 0 before `start()`).
    public var controlURL: URL { core.state.controlURL }
    /// The NYT Most Popular base, `baseURL/svc/mostpopular/v2`.
    public var nytBaseURL: URL { publicBaseURL.appendingPathComponent("svc/mostpopular/v2") }
    /// The Marvel base, `baseURL/v1/public`.
    public var marvelBaseURL: URL { publicBaseURL.appendingPathComponent("v1/public") }
    /// The Rick and Morty base, `baseURL/api`.
    public var rickAndMortyBaseURL: URL { publicBaseURL.appendingPathComponent("api") }
    /// The dogs document, `baseURL/dogs.json` (a bare JSON array).
    public var dogsURL: URL { publicBaseURL.appendingPathComponent("dogs.json") }
    /// The four APIs' addresses (under `publicBaseURL`) and the keys they accept, for `KioskConfiguration.use`.
    public var endpoints: UpstreamEndpoints {
        UpstreamEndpoints(nytBaseURL: nytBaseURL, nytAPIKey: configuration.nytAPIKey, marvelBaseURL: marvelBaseURL,
                          marvelPublicKey: configuration.marvelPublicKey, marvelPrivateKey: configuration.marvelPrivateKey,
                          rickAndMortyBaseURL: rickAndMortyBaseURL, dogsURL: dogsURL)
    }

    /// The credentials the API accepts.
    public var keys: DemoUpstreamKeys {
        DemoUpstreamKeys(nyt: configuration.nytAPIKey, marvelPublic: configuration.marvelPublicKey,
                         marvelPrivate: configuration.marvelPrivateKey)
    }

    /// Replaces the faults; going offline closes the API listener (refusing connections), coming back rebinds the same port. Throws on invalid settings or if the port cannot be rebound.
    public func setFaults(_ faults: FaultSettings) async throws {
        _ = try await updateFaults { _ in faults }
    }

    /// The faults in effect.
    public var faults: FaultSettings { core.state.faults }

    /// Requests received by the API listener whose `path?query` starts with `pathPrefix` (auth parameters `api-key`, `apikey`, `ts`, `hash` removed from the query first).
    public func requestCount(pathPrefix: String) -> Int { core.state.requestCount(pathPrefix: pathPrefix) }

    /// Forgets all request counts.
    public func resetRequestCounts() { core.state.resetRequestCounts() }

    // MARK: - Listener management

    /// Who the control listener answers: loopback names and addresses, from this machine when it listens on
    /// loopback (a web page reaching it through a rebound DNS name could switch faults on).
    nonisolated var controlPolicy: ListenerPolicy {
        ListenerPolicy(names: [], peers: IPAddress.isLoopback(host: configuration.host) ? .loopback : .localNetworks(also: NeighbourNetworks([])))
    }

    /// The API listener answers the same, and the host its answers name when that is not its own
    /// (`demo.invalid` when Kiosk embeds it).
    nonisolated var apiPolicy: ListenerPolicy {
        ListenerPolicy(names: configuration.publicBaseURL?.host().map { [$0] } ?? [], peers: controlPolicy.peers)
    }

    /// Replaces the faults with `change(current)` in one step of the queue, so concurrent partial
    /// updates (two `PUT /faults`) cannot lose each other's fields. Returns the new settings.
    func updateFaults(_ change: @Sendable (FaultSettings) -> FaultSettings) async throws -> FaultSettings {
        await lock()
        defer { unlock() }
        let updated = change(core.state.faults)
        try updated.validate()
        core.state.setFaults(updated)
        if isStarted { try await reconcileAPIListener() }
        return updated
    }

    private func openAPIListener(port: Int) async throws -> RunningListener {
        offlinePort = nil // released just before the listener binds the port again
        let listener = try await RunningListener.launch(
            responder: APIResponder(core: core), policy: apiPolicy, host: configuration.host, port: port
        ) { [core] port in
            // Runs before the first connection is accepted, so every response sees the final base URL.
            core.state.setAPIPort(port)
            core.state.setAPIListening(true)
        }
        apiListener = listener
        return listener
    }

    /// Opens or closes the API listener to match `faults.offline`.
    private func reconcileAPIListener() async throws {
        let wantsOnline = isStarted && !core.state.faults.offline
        if wantsOnline, apiListener == nil {
            _ = try await openAPIListener(port: core.state.apiPort)
        } else if !wantsOnline, let listener = apiListener {
            apiListener = nil
            core.state.setAPIListening(false)
            await listener.stop()
            if isStarted { offlinePort = PortReservation(host: configuration.host, port: core.state.apiPort) }
        }
    }

    private func lock() async {
        if !isBusy {
            isBusy = true
            return
        }
        // Ownership passes directly to the resumed waiter; isBusy stays true.
        await withCheckedContinuation { waiters.append($0) }
    }

    private func unlock() {
        if waiters.isEmpty {
            isBusy = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}
