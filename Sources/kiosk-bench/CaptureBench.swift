import AsyncHTTPClient
import Foundation
import KioskApp
import KioskCore
import KioskDebugger
import KioskDemoUpstream
import KioskNetwork
import KioskSources
import KioskStore
import NIOCore
import NIOHTTP1

/// The network debugger's cost on the request path: a full Rick and Morty sync (42 pages, every one a
/// 200 into a fresh store) with capture on and off, alternating so both see the same machine, in one run.
/// With `rulesPresent`, both modes run with rewrite rules that match none of the sync's requests (the
/// common case while debugging something else), one of them by URL pattern alone, the costliest to miss;
/// and the web app runs in both modes, with capture on two consoles following `/debug/events` over HTTP
/// (one unfiltered, one filtered), so the live feed's reads and renders count against capture too.
func captureBenchmarks(demo: DemoUpstream, quick: Bool, rulesPresent: Bool = false) async {
    let label = rulesPresent ? "[capture+rules]" : "[capture]"
    do {
        // A sync takes about a tenth of a second, so many alternating rounds smooth out the noise.
        let rounds = quick ? 4 : 40
        var on: [Double] = [], off: [Double] = [], indexing: [Double] = []
        for round in 0..<(rounds * 2) {
            // ABBA order (on, off, off, on, ...), so neither mode always runs right after the other.
            let capturing = [true, false, false, true][round % 4]
            var configuration = try await benchConfiguration(demo, name: "capture\(round)")
            configuration.capture.isEnabled = capturing
            let kiosk = try Kiosk(configuration: configuration)
            if rulesPresent { try addUnmatchedRules(kiosk) }
            // Timed until the log has stored every exchange, so that its batched writes count too. The
            // full-text indexing that follows a burst a second later is timed apart (below).
            let sync = { () async throws -> Duration in
                let started = ContinuousClock.now
                _ = try await kiosk.catalog.sync(.rickandmorty, concurrency: 6)
                try kiosk.requestLog?.flush()
                return ContinuousClock.now - started
            }
            let elapsed: Duration
            if rulesPresent {
                // The web app runs in both modes, so its presence is not counted as capture's cost; the
                // consoles follow it only with capture on (without a log there is no feed to follow).
                elapsed = try await withWebServer(kiosk: kiosk) { port in
                    try await withConsolesFollowing("http://127.0.0.1:\(port)", capturing ? ["", "?filter=status:5xx"] : [], sync)
                }
            } else {
                elapsed = try await sync()
            }
            let pagesPerSecond = 42 / elapsed.seconds
            if capturing { on.append(pagesPerSecond) } else { off.append(pagesPerSecond) }
            if let log = kiosk.requestLog {
                // Done here rather than in a later round, where its pass would land on either mode.
                let started = ContinuousClock.now
                try log.updateSearchIndex()
                indexing.append((ContinuousClock.now - started).seconds)
            }
            await kiosk.shutdown()
            try? FileManager.default.removeItem(at: configuration.dataDirectory)
        }
        // Throughput over all rounds: pages over the summed time of each mode.
        let onRate = Double(on.count * 42) / on.map { 42 / $0 }.reduce(0, +)
        let offRate = Double(off.count * 42) / off.map { 42 / $0 }.reduce(0, +)
        // The machine's speed drifts over seconds (other tenants, the disk), moving both modes of a
        // block alike, so the ratio is taken within each ABBA block (the i-th on and off rounds are
        // in the same block), and its median is the figure: one slow block cannot swing it.
        let pairedRatios = zip(on, off).map { $0 / $1 }
        let rules = rulesPresent ? " with 8 rewrite rules matching none of its requests (the web app up; capture on, 2 consoles on /debug/events)" : ""
        print(String(format: "%@ rickandmorty sync%@, 42 pages of 200s, capture off: %.0f pages/s (%d syncs, median %.0f)",
                     label, rules, offRate, off.count, percentile(off, 50)))
        print(String(format: "%@ same with capture on (each exchange logged with its 18 KB body, stored; its words indexed apart, below): %.0f pages/s (median %.0f)",
                     label, onRate, percentile(on, 50)))
        print(String(format: "%@ capture on / off throughput: %.0f%% (median of %d paired rounds; totals %.0f%%)  (target >= %d%%)",
                     label, percentile(pairedRatios, 50) * 100, pairedRatios.count, onRate / offRate * 100, rulesPresent ? 93 : 90))
        // What the deferred indexing would cost if it ran inside the sync instead of after it.
        let withIndexing = zip(on, zip(off, indexing)).map { on, offIndexing in
            (42 / offIndexing.0) / (42 / on + offIndexing.1)
        }
        print(String(format: "%@ the sync's 42 exchanges indexed a second later, apart: p50 %@; on / off counting it as if in the sync: %.0f%%",
                     label, ms(percentile(indexing, 50)), percentile(withIndexing, 50) * 100))
    } catch {
        print("\(label) failed: \(error)")
    }
}

/// Runs `body` while consoles follow `base`'s live feed, one per query in `queries`, each reading its
/// stream to the end; every console saw its first event before `body` starts.
func withConsolesFollowing<T: Sendable>(_ base: String, _ queries: [String], _ body: () async throws -> T) async throws -> T {
    let http = HTTPClient(eventLoopGroupProvider: .singleton)
    var readers: [Task<Int, any Error>] = []
    do {
        for query in queries {
            var request = HTTPClientRequest(url: base + "/debug/events" + query)
            request.headers.add(name: "Accept", value: "text/event-stream")
            let response = try await http.execute(request, timeout: .seconds(30))
            guard response.status == .ok else { throw BenchFailure("/debug/events\(query): \(response.status)") }
            readers.append(Task {
                var bytes = 0
                for try await chunk in response.body { bytes += chunk.readableBytes }
                return bytes
            })
        }
        let result = try await body()
        readers.forEach { $0.cancel() }
        for reader in readers { _ = try? await reader.value }
        try await http.shutdown()
        return result
    } catch {
        readers.forEach { $0.cancel() }
        try? await http.shutdown()
        throw error
    }
}

/// Rules a user might have while debugging other endpoints: none matches a Rick and Morty characters page.
func addUnmatchedRules(_ kiosk: Kiosk) throws {
    let rules = kiosk.debugger.rules
    let patch = #"[{"op": "replace", "path": "/results/0/name", "value": "Bench"}]"#
    for endpoint in ["marvel.characters", "marvel.character", "nyt.mostpopular", "dogs.list", "image"] {
        try rules.add(RewriteRule(match: RewriteRule.Match(endpoint: endpoint), actions: RewriteRule.Actions(status: 503, patch: nil)))
    }
    // Same endpoint, another method; and one by URL pattern alone, which every request is checked against.
    try rules.add(RewriteRule(match: RewriteRule.Match(endpoint: "rickandmorty.characters", method: "POST"),
                              actions: RewriteRule.Actions(patch: patch)))
    try rules.add(RewriteRule(match: RewriteRule.Match(urlPattern: "https://rickandmortyapi.com/api/episode*"),
                              actions: RewriteRule.Actions(latencyMilliseconds: 100)))
    var disabled = RewriteRule(match: RewriteRule.Match(endpoint: "rickandmorty.characters"), actions: RewriteRule.Actions(patch: patch))
    disabled.isEnabled = false
    try rules.add(disabled)
}

/// What the rewriting layer costs a request no rule matches, alone: the rules of `addUnmatchedRules` in
/// front of a transport that answers at once, against that transport bare.
func ruleMissBenchmark(demo: DemoUpstream, quick: Bool) async {
    do {
        let kiosk = try await makeKiosk(demo, name: "rule-miss")
        try addUnmatchedRules(kiosk)
        struct Instant: HTTPTransport {
            func send(_ request: HTTPRequest) async throws -> HTTPResponse { HTTPResponse(status: 200, url: request.url) }
        }
        let rewriting = RewritingTransport(base: Instant(), rules: kiosk.debugger.rules)
        let request = HTTPRequest(url: URL(string: "https://rickandmortyapi.com/api/character?page=2")!, source: .rickandmorty,
                                  endpoint: "rickandmorty.characters")
        let iterations = quick ? 20_000 : 200_000
        for _ in 0..<1000 { _ = try await rewriting.send(request) }
        let bare = try await measure(iterations) { _ = try await Instant().send(request) }
        let ruled = try await measure(iterations) { _ = try await rewriting.send(request) }
        print(String(format: "[rules] a request no rule matches, 8 rules present: p50 %.2f µs through the rules vs %.2f µs without (one stat, a few string comparisons)",
                     percentile(ruled, 50) * 1e6, percentile(bare, 50) * 1e6))
        await kiosk.shutdown()
    } catch {
        print("[rules] failed: \(error)")
    }
}

/// The configuration `makeKiosk` uses, for benchmarks that change a setting before building Kiosk.
func benchConfiguration(_ demo: DemoUpstream, name: String) async throws -> KioskConfiguration {
    var configuration = KioskConfiguration(dataDirectory: temporaryDirectory(name))
    configuration.use(await demo.endpoints, connecting: nil, to: nil)
    return configuration
}
