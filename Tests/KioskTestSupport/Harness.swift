import Foundation
public import KioskApp
import KioskCore
public import KioskDemoUpstream
import KioskNetwork
public import KioskStore

/// A real demo upstream on loopback plus a Kiosk wired to it over real HTTP, with a real SQLite file in a
/// scratch folder: what the integration tests and the web app's tests run against (the web tests put the web
/// app in front of it).
public struct Harness: Sendable {
    public let demo: DemoUpstream
    public let kiosk: Kiosk
    /// Kiosk's wall time: it moves only when a test advances it, so freshness and ages are exact.
    public let now: ManualClock
    public let directory: URL
    /// Whether `stop()` stops the demo upstream too: false when the test passed in one it keeps across restarts.
    let ownsUpstream: Bool

    public var catalog: CatalogService { kiosk.catalog }
    public var database: AppDatabase { kiosk.database }

    /// Starts a demo upstream on a free port, or, given `upstream`, wires Kiosk to that running one and leaves it
    /// running on `stop()`: a test that restarts Kiosk on the same data keeps one upstream, so stored URLs still
    /// reach it (restarting the upstream on the old port raced other tests for it).
    public static func start(faults: FaultSettings = .none, directory: URL? = nil, now: ManualClock = ManualClock(),
                             upstream: DemoUpstream? = nil,
                             configure: (inout KioskConfiguration) -> Void = { _ in }) async throws -> Harness {
        let demo: DemoUpstream
        if let upstream {
            demo = upstream
        } else {
            var demoConfiguration = DemoUpstreamConfiguration(port: 0)
            demoConfiguration.faults = faults
            demo = DemoUpstream(configuration: demoConfiguration)
            try await demo.start()
        }
        let folder = directory ?? TemporaryDirectory.url("kiosk-tests")
        var configuration = KioskConfiguration(dataDirectory: folder)
        configuration.use(await demo.endpoints, connecting: nil, to: nil)
        // Generous for a loopback upstream, because the suite's first seconds load 2 cores with a dozen tests at once:
        // a request timing out there read as "offline", and a test saw an empty page. Tests of timeouts set their own.
        configuration.transport = TransportConfiguration(connectTimeout: .seconds(5), requestTimeout: .seconds(10))
        configuration.retry = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(5), maxDelay: .milliseconds(20),
                                          maxRetryAfter: .seconds(2))
        configure(&configuration)
        let kiosk = try Kiosk(configuration: configuration, dependencies: .init(now: now.dateSource))
        return Harness(demo: demo, kiosk: kiosk, now: now, directory: folder, ownsUpstream: upstream == nil)
    }

    /// Changes the demo upstream's faults.
    public func setFaults(_ change: (inout FaultSettings) -> Void) async throws {
        var faults = await demo.faults
        change(&faults)
        try await demo.setFaults(faults)
    }

    /// Takes the demo upstream offline (its API port refuses connections) or back.
    public func setOffline(_ offline: Bool) async throws {
        try await setFaults { $0.offline = offline }
    }

    /// Stops Kiosk, and the demo upstream unless the test passed it in (the folder goes with the process's
    /// scratch folder).
    public func stop() async {
        await kiosk.shutdown()
        if ownsUpstream { await demo.stop() }
    }
}

/// Runs a test body with a started harness and always stops it.
public func withHarness(faults: FaultSettings = .none, _ body: (Harness) async throws -> Void) async throws {
    let harness = try await Harness.start(faults: faults)
    do {
        try await body(harness)
    } catch {
        await harness.stop()
        throw error
    }
    await harness.stop()
}
