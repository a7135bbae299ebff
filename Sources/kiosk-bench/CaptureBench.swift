import Foundation
import KioskApp
import KioskCore
import KioskDemoUpstream
import KioskSources

/// The network debugger's cost on the request path: a full Rick and Morty sync (42 pages, every one a
/// 200 into a fresh store) with capture on and off, alternating so both see the same machine, in one run.
func captureBenchmarks(demo: DemoUpstream, quick: Bool) async {
    do {
        let rounds = quick ? 2 : 5
        var on: [Double] = [], off: [Double] = []
        for round in 0..<(rounds * 2) {
            let capturing = round % 2 == 0
            var configuration = try await benchConfiguration(demo, name: "capture\(round)")
            configuration.capture.isEnabled = capturing
            let kiosk = try Kiosk(configuration: configuration)
            let report = try await kiosk.catalog.sync(.rickandmorty, concurrency: 6)
            try kiosk.requestLog?.flush()
            let pagesPerSecond = 42 / report.seconds
            if capturing { on.append(pagesPerSecond) } else { off.append(pagesPerSecond) }
            await kiosk.shutdown()
        }
        let onMedian = percentile(on, 50), offMedian = percentile(off, 50)
        print(String(format: "[capture] rickandmorty sync, 42 pages of 200s, capture off: median %.0f pages/s (%d runs)", offMedian, off.count))
        print(String(format: "[capture] same with capture on (each exchange logged with its 18 KB body): median %.0f pages/s", onMedian))
        print(String(format: "[capture] capture on / off throughput: %.0f%%  (target >= 90%%)", onMedian / offMedian * 100))
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
