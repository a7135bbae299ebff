import Foundation
import KioskApp
import KioskCore
import KioskDemoUpstream
import KioskNetwork
import KioskSources
import KioskStore
import KioskTestSupport

/// A real demo upstream on loopback plus a Kiosk wired to it over real HTTP, with a real SQLite file.
struct Harness {
    let demo: DemoUpstream
    let kiosk: Kiosk
    /// Kiosk's wall time: it moves only when a test advances it, so freshness and ages are exact.
    let now: ManualClock
    let directory: URL

    var catalog: CatalogService { kiosk.catalog }
    var database: AppDatabase { kiosk.database }

    /// `port` 0 lets the demo upstream pick a free one; a test that restarts Kiosk on the same data passes the
    /// first harness's, so stored URLs still reach an upstream.
    static func start(faults: FaultSettings = .none, directory: URL? = nil, now: ManualClock = ManualClock(),
                      port: Int = 0) async throws -> Harness {
        var demoConfiguration = DemoUpstreamConfiguration(port: port)
        demoConfiguration.faults = faults
        let demo = DemoUpstream(configuration: demoConfiguration)
        try await demo.start()
        let folder = directory ?? TemporaryDirectory.url("kiosk-tests")
        let keys = await demo.keys
        var sources = SourceConfiguration.live
        sources.nytBaseURL = await demo.nytBaseURL
        sources.marvelBaseURL = await demo.marvelBaseURL
        sources.rickAndMortyBaseURL = await demo.rickAndMortyBaseURL
        sources.dogsURL = await demo.dogsURL
        sources.nytAPIKey = keys.nyt
        sources.marvelPublicKey = keys.marvelPublic
        sources.marvelPrivateKey = keys.marvelPrivate
        var configuration = KioskConfiguration(dataDirectory: folder, sources: sources)
        configuration.transport = TransportConfiguration(connectTimeout: .seconds(2), requestTimeout: .seconds(3))
        configuration.retry = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(5), maxDelay: .milliseconds(20),
                                          maxRetryAfter: .seconds(2))
        let kiosk = try Kiosk(configuration: configuration, dependencies: .init(now: now.dateSource))
        return Harness(demo: demo, kiosk: kiosk, now: now, directory: folder)
    }

    func setFaults(_ change: (inout FaultSettings) -> Void) async throws {
        var faults = await demo.faults
        change(&faults)
        try await demo.setFaults(faults)
    }

    func stop() async {
        await kiosk.shutdown()
        await demo.stop()
    }
}

/// Runs a test body with a started harness and always stops it.
func withHarness(faults: FaultSettings = .none, _ body: (Harness) async throws -> Void) async throws {
    let harness = try await Harness.start(faults: faults)
    do {
        try await body(harness)
    } catch {
        await harness.stop()
        throw error
    }
    await harness.stop()
}
