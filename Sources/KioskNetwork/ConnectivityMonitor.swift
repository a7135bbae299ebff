public import Foundation
public import KioskCore

/// Tracks connectivity from the outcomes of real requests. When a request fails to connect it goes
/// offline and probes with exponential backoff; the first success (probe or real request) brings it
/// back online, which `/api/connectivity` reports to the web page (it then refreshes a stale page).
public actor ConnectivityMonitor {
    /// Checks whether the upstream at an origin answers; true when it does.
    public typealias Probe = @Sendable (URL) async -> Bool

    private let clock: any Clock<Duration>
    private let now: @Sendable () -> Date
    private let initialProbeDelay: Duration
    private let maxProbeDelay: Duration
    private var probe: Probe?
    private var probing: Task<Void, Never>?
    private var isStopped = false

    /// The current status.
    public private(set) var status: ConnectivityStatus = .online

    /// `clock` paces the probes (1 s, 2 s, 4 s ... up to `maxProbeDelay`).
    public init(clock: any Clock<Duration> = ContinuousClock(), now: @escaping @Sendable () -> Date = { Date() },
                initialProbeDelay: Duration = .seconds(1), maxProbeDelay: Duration = .seconds(30), probe: Probe? = nil) {
        self.probe = probe
        self.clock = clock
        self.now = now
        self.initialProbeDelay = initialProbeDelay
        self.maxProbeDelay = maxProbeDelay
    }

    /// Sets how to probe while offline (usually a cheap GET to the failing upstream).
    public func setProbe(_ probe: @escaping Probe) { self.probe = probe }

    /// Records that a request got an answer (any HTTP status counts: the host is reachable).
    public func recordReachable() {
        guard status.isOffline else { return }
        probing?.cancel()
        probing = nil
        set(.online)
    }

    /// Records that a request to `url` could not connect.
    public func recordUnreachable(_ url: URL) {
        guard !status.isOffline else { return }
        var components = URLComponents()
        components.scheme = url.scheme
        components.host = url.host
        components.port = url.port
        components.path = "/"
        let origin = components.url ?? url
        set(.offline(since: now(), origin: origin))
        startProbing(origin)
    }

    private func startProbing(_ origin: URL) {
        guard let probe, probing == nil, !isStopped else { return }
        let clock = self.clock
        var delay = initialProbeDelay
        let maxDelay = maxProbeDelay
        probing = Task {
            while !Task.isCancelled {
                do { try await clock.sleep(for: delay) } catch { return }
                if await probe(origin) {
                    self.probeSucceeded()
                    return
                }
                delay = min(delay * 2, maxDelay)
            }
        }
    }

    private func probeSucceeded() {
        // A probe that finished after `stop()` or after a real request already ended offline is stale.
        guard !isStopped, status.isOffline else { return }
        probing = nil
        set(.online)
    }

    /// Stops probing; the monitor is not used afterwards.
    public func stop() {
        isStopped = true
        probing?.cancel()
        probing = nil
    }

    private func set(_ newStatus: ConnectivityStatus) { status = newStatus }
}

/// Reports every request's outcome to a `ConnectivityMonitor`.
public final class MonitoredTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let monitor: ConnectivityMonitor

    /// Wraps `base`, reporting to `monitor`.
    public init(base: any HTTPTransport, monitor: ConnectivityMonitor) {
        self.base = base
        self.monitor = monitor
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        do {
            let response = try await base.send(request)
            await monitor.recordReachable()
            return response
        } catch let error as KioskError {
            if case .offline = error { await monitor.recordUnreachable(request.url) }
            throw error
        }
    }
}
