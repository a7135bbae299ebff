import Foundation
import KioskApp
import KioskCore
import KioskDemoUpstream
import KioskSources
import KioskStore

/// The network debugger's cost on the request path: a full Rick and Morty sync (42 pages, every one a
/// 200 into a fresh store) with capture on and off, alternating so both see the same machine, in one run.
func captureBenchmarks(demo: DemoUpstream, quick: Bool) async {
    do {
        // A sync takes about a tenth of a second, so many alternating rounds smooth out the noise.
        let rounds = quick ? 4 : 40
        var on: [Double] = [], off: [Double] = []
        for round in 0..<(rounds * 2) {
            // ABBA order (on, off, off, on, ...), so neither mode always runs right after the other.
            let capturing = [true, false, false, true][round % 4]
            var configuration = try await benchConfiguration(demo, name: "capture\(round)")
            configuration.capture.isEnabled = capturing
            let kiosk = try Kiosk(configuration: configuration)
            // Timed until the log has stored and indexed every exchange, so that capture's deferred
            // work counts too.
            let started = ContinuousClock.now
            _ = try await kiosk.catalog.sync(.rickandmorty, concurrency: 6)
            try kiosk.requestLog?.flush()
            let elapsed = ContinuousClock.now - started
            let pagesPerSecond = 42 / elapsed.seconds
            if capturing { on.append(pagesPerSecond) } else { off.append(pagesPerSecond) }
            await kiosk.shutdown()
        }
        // Throughput over all rounds: pages over the summed time of each mode.
        let onRate = Double(on.count * 42) / on.map { 42 / $0 }.reduce(0, +)
        let offRate = Double(off.count * 42) / off.map { 42 / $0 }.reduce(0, +)
        // The machine's speed drifts over seconds (other tenants, the disk), moving both modes of a
        // block alike, so the ratio is taken within each ABBA block (the i-th on and off rounds are
        // in the same block), and its median is the figure: one slow block cannot swing it.
        let pairedRatios = zip(on, off).map { $0 / $1 }
        print(String(format: "[capture] rickandmorty sync, 42 pages of 200s, capture off: %.0f pages/s (%d syncs, median %.0f)",
                     offRate, off.count, percentile(off, 50)))
        print(String(format: "[capture] same with capture on (each exchange logged with its 18 KB body, stored and indexed): %.0f pages/s (median %.0f)",
                     onRate, percentile(on, 50)))
        print(String(format: "[capture] capture on / off throughput: %.0f%% (median of %d paired rounds; totals %.0f%%)  (target >= 90%%)",
                     percentile(pairedRatios, 50) * 100, pairedRatios.count, onRate / offRate * 100))
    } catch {
        print("[capture] failed: \(error)")
    }
}

/// The configuration `makeKiosk` uses, for benchmarks that change a setting before building Kiosk.
func benchConfiguration(_ demo: DemoUpstream, name: String) async throws -> KioskConfiguration {
    let keys = await demo.keys
    var sources = SourceConfiguration.live
    sources.nytBaseURL = await demo.nytBaseURL
    sources.marvelBaseURL = await demo.marvelBaseURL
    sources.rickAndMortyBaseURL = await demo.rickAndMortyBaseURL
    sources.dogsURL = await demo.dogsURL
    sources.nytAPIKey = keys.nyt
    sources.marvelPublicKey = keys.marvelPublic
    sources.marvelPrivateKey = keys.marvelPrivate
    return KioskConfiguration(dataDirectory: temporaryDirectory(name), sources: sources)
}
