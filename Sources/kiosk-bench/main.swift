// kiosk-bench: prints the figures the README quotes. Run in release:
//   swift run -c release kiosk-bench
// Everything runs in-process against the embedded demo upstream on loopback and a real SQLite file.
import Foundation
import KioskApp
import KioskCore
import KioskDemoUpstream
import KioskNetwork
import KioskSources
import KioskStore

let arguments = Set(CommandLine.arguments.dropFirst())
let quick = arguments.contains("--quick")

/// What each flag of kiosk-bench runs; with none, everything runs (about an hour).
let benchUsage = """
    usage: kiosk-bench [--quick] [PART...]   (no PART: every benchmark, about an hour)
      --proxy          kiosk proxy against the direct upstream, mitmdump, nginx and bare relays
      --proxy-cache    the proxy's offline cache: hits, storing on misses, the store at 100,000 entries
      --capture-only   capture on against off on a sync, with and without rules
      --log-only       the request log: inserts, searches
      --web-only       the web app's pages under load
      --console-only   the debugger console
      --har            HAR import and export, memory included
      --serve-upstream the proxy benchmark's upstreams alone, plain and HTTPS, until killed (for profiling a kiosk proxy)
      --https-load PROXY-PORT TARGET-PORT CA-FILE PATH SECONDS
                       the HTTPS load client alone: CONNECT through a kiosk proxy, TLS inside, keep-alive GETs
      --quick          fewer rounds, for iterating
    """
let benchFlags: Set<String> = [
    "--quick", "--proxy", "--proxy-cache", "--capture-only", "--log-only", "--web-only", "--console-only", "--har",
    "--serve-upstream",
]
if arguments.contains("--help") || arguments.contains("-h") {
    print(benchUsage)
    exit(0)
}
if CommandLine.arguments.dropFirst().first == "--https-load" {
    do {
        try await runHTTPSLoad(CommandLine.arguments.dropFirst(2))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("kiosk-bench: \(error)\n".utf8))
        exit(1)
    }
}
// A flag misspelled must not start the hour-long run of everything.
if CommandLine.arguments.dropFirst().first != "--har-child", let unknown = arguments.subtracting(benchFlags).sorted().first {
    FileHandle.standardError.write(Data("kiosk-bench: unknown argument \(unknown)\n\(benchUsage)\n".utf8))
    exit(2)
}

// A child of `--har`: one import, measured from outside.
if CommandLine.arguments.count == 5, CommandLine.arguments[1] == "--har-child" {
    harImportChild(mode: CommandLine.arguments[2], file: CommandLine.arguments[3], directory: CommandLine.arguments[4])
}

func seconds(_ duration: Duration) -> Double { duration.seconds }

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let index = min(sorted.count - 1, max(0, Int((p / 100 * Double(sorted.count - 1)).rounded())))
    return sorted[index]
}

func ms(_ value: Double) -> String { String(format: "%.3f ms", value * 1000) }

func measure(_ iterations: Int, _ body: () async throws -> Void) async rethrows -> [Double] {
    let clock = ContinuousClock()
    var samples: [Double] = []
    samples.reserveCapacity(iterations)
    for _ in 0..<iterations {
        let start = clock.now
        try await body()
        samples.append(seconds(clock.now - start))
    }
    return samples
}

func peakRSSKilobytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }
    return -1
}

/// This run's scratch folder: every store and log a benchmark makes is under it, and it is removed
/// when the run ends (a full run writes gigabytes over its rounds).
let scratchFolder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-bench-\(UUID().uuidString)")

/// A new folder path under the run's scratch folder; nothing is created there.
func temporaryDirectory(_ name: String) -> URL {
    scratchFolder.appendingPathComponent("\(name)-\(UUID().uuidString)")
}

/// A Kiosk wired to a demo upstream (see `benchConfiguration` in CaptureBench.swift).
func makeKiosk(_ demo: DemoUpstream, name: String) async throws -> Kiosk {
    try Kiosk(configuration: await benchConfiguration(demo, name: name))
}

#if DEBUG
let buildKind = "DEBUG build (figures are not representative; use -c release)"
#else
let buildKind = "release build"
#endif
print("kiosk-bench — \(ProcessInfo.processInfo.activeProcessorCount) cores, \(buildKind)")
print("")

if arguments.contains("--serve-upstream") {
    try await serveBenchUpstream()
}

let demo = DemoUpstream()
try await demo.start()

// `--capture-only` / `--log-only` / `--web-only` / `--console-only` / `--proxy` / `--proxy-cache` / `--har`: just those figures, for
// iterating on them.
if arguments.contains("--capture-only") || arguments.contains("--log-only") || arguments.contains("--web-only")
    || arguments.contains("--console-only") || arguments.contains("--proxy") || arguments.contains("--proxy-cache")
    || arguments.contains("--har") {
    if arguments.contains("--har") { harBenchmarks() }
    if arguments.contains("--proxy-cache") { await proxyCacheBenchmarks(demo: demo, quick: quick) }
    if arguments.contains("--web-only") { await webBenchmarks(demo: demo, quick: quick) }
    if arguments.contains("--proxy") { await proxyBenchmarks(demo: demo, quick: quick) }
    if arguments.contains("--console-only") { await debuggerBenchmarks(demo: demo, quick: quick) }
    if arguments.contains("--capture-only") {
        await captureBenchmarks(demo: demo, quick: quick)
        await captureBenchmarks(demo: demo, quick: quick, rulesPresent: true)
        await ruleMissBenchmark(demo: demo, quick: quick)
    }
    if arguments.contains("--log-only") {
        do { try runLogBenchmarks(quick: quick) } catch { print("[log] failed: \(error)") }
    }
    await demo.stop()
    try? FileManager.default.removeItem(at: scratchFolder)
    exit(0)
}

// 1. A 20-item list page from a warm store.
do {
    let kiosk = try await makeKiosk(demo, name: "list")
    let request = PageRequest(source: .rickandmorty, page: 1)
    _ = try await kiosk.catalog.page(request)
    for _ in 0..<200 { _ = try await kiosk.catalog.page(request) }
    let service = try await measure(quick ? 500 : 3000) { _ = try await kiosk.catalog.page(request) }
    let raw = try await measure(quick ? 500 : 3000) { _ = try kiosk.database.snapshot(forKey: request.cacheKey) }
    print("[list] warm-store page of 20 via CatalogService: p50 \(ms(percentile(service, 50))), p95 \(ms(percentile(service, 95)))  (target p50 <= 1 ms)")
    print("[list] warm-store page of 20, store read alone:  p50 \(ms(percentile(raw, 50))), p95 \(ms(percentile(raw, 95)))")
    await kiosk.shutdown()
}

// 2. Full Rick and Morty sync with 50 ms injected latency: sequential vs concurrent.
do {
    var faults = FaultSettings.none
    faults.latencyMilliseconds = 50
    faults.sources = [.rickandmorty]
    try await demo.setFaults(faults)
    let concurrency = 6
    var results: [(Int, Double, Int)] = []
    for width in [1, concurrency] {
        let kiosk = try await makeKiosk(demo, name: "sync\(width)")
        let report = try await kiosk.catalog.sync(.rickandmorty, concurrency: width)
        results.append((width, report.seconds, report.items))
        if !report.failures.isEmpty { print("[sync] failures: \(report.failures)") }
        await kiosk.shutdown()
    }
    let pages = 42.0
    for (width, time, items) in results {
        // The latency bound: page 1 alone, then the other 41 pages in rounds of `width`.
        let bound = 0.050 * (1 + (pages - 1) / Double(width)).rounded(.up)
        print(String(format: "[sync] rickandmorty 42 pages, concurrency %d: %.3f s, %d items; latency bound %.3f s; ratio %.2fx (target <= 1.5x)",
                     width, time, items, bound, time / bound))
    }
    print(String(format: "[sync] sequential / concurrent speed-up: %.2fx", results[0].1 / results[1].1))
    try await demo.setFaults(.none)
    print("[sync] peak RSS so far: \(peakRSSKilobytes() / 1024) MB")
}

// 3. Full-text search over 100,000 stored items vs a LIKE scan.
do {
    let database = try AppDatabase.open(at: temporaryDirectory("fts").appendingPathComponent("kiosk.sqlite").path)
    let words = ["portal", "gun", "citadel", "council", "ricks", "squanch", "plumbus", "gazorpazorp", "meeseeks", "cromulon",
                 "unity", "birdperson", "tammy", "evil", "morty", "summer", "jerry", "beth", "cronenberg", "froopyland",
                 "anatomy", "park", "pickle", "szechuan", "sauce", "glootie", "krombopulos", "michael", "noob", "noob"]
    var generator = SystemRandomNumberGenerator()
    var seed: UInt64 = 12345
    func next() -> Int { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Int(seed >> 33) }
    let total = quick ? 20_000 : 100_000
    var batch: [CatalogItem] = []
    for index in 0..<total {
        let title = (0..<3).map { _ in words[next() % words.count] }.joined(separator: " ") + " \(index)"
        let summary = (0..<12).map { _ in words[next() % words.count] }.joined(separator: " ")
        batch.append(CatalogItem(source: .rickandmorty, itemID: String(100_000 + index), title: title.capitalized,
                                 subtitle: "Alive · Human", summary: summary, imageURL: nil,
                                 detail: .dog(Dog(name: title, description: summary, age: 3, image: nil))))
        if batch.count == 5000 { try database.saveItems(batch); batch.removeAll(keepingCapacity: true) }
    }
    if !batch.isEmpty { try database.saveItems(batch) }
    _ = generator.next()
    let queries = (0..<200).map { i -> String in
        let word = words[next() % words.count]
        return i % 2 == 0 ? word : String(word.prefix(4)) + " " + words[next() % words.count]
    }
    var queryIterator = 0
    let fts = try await measure(queries.count) {
        _ = try database.search(queries[queryIterator % queries.count], source: nil, limit: 50)
        queryIterator += 1
    }
    queryIterator = 0
    let like = try await measure(quick ? 20 : 60) {
        _ = try database.searchByLike(queries[queryIterator % queries.count], source: nil, limit: 50)
        queryIterator += 1
    }
    print("[search] FTS5 over \(try database.itemCount(source: nil)) items: p50 \(ms(percentile(fts, 50))), p95 \(ms(percentile(fts, 95)))  (target p95 <= 10 ms)")
    print("[search] LIKE scan, same queries:        p50 \(ms(percentile(like, 50))), p95 \(ms(percentile(like, 95)))")
    print(String(format: "[search] LIKE / FTS5 p95 ratio: %.1fx", percentile(like, 95) / percentile(fts, 95)))
}

// 4. Images: 100 concurrent requests for one uncached image; cached hit latency.
do {
    let kiosk = try await makeKiosk(demo, name: "images")
    let character = try await kiosk.catalog.item(source: .rickandmorty, itemID: "42")
    guard let url = character.item.imageURL else { fatalError("character 42 has no image") }
    await demo.resetRequestCounts()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<100 { group.addTask { _ = try await kiosk.images.image(for: url) } }
        try await group.waitForAll()
    }
    let fetches = await demo.requestCount(pathPrefix: url.path)
    let hits = try await measure(quick ? 2000 : 10000) { _ = try await kiosk.images.image(for: url) }
    print("[images] 100 concurrent requests for one uncached image: \(fetches) upstream fetch(es)  (target exactly 1)")
    print("[images] cached hit: p50 \(ms(percentile(hits, 50))), p95 \(ms(percentile(hits, 95)))  (target p50 <= 0.5 ms)")
    await kiosk.shutdown()
}

// 5. Decode + map + store throughput against decoding alone.
do {
    let kiosk = try await makeKiosk(demo, name: "decode")
    guard let source = kiosk.catalog.sources[.rickandmorty] else { fatalError("no source") }
    let transport = UpstreamTransport()
    var bodies: [(PageRequest, HTTPResponse)] = []
    for page in 1...42 {
        let request = PageRequest(source: .rickandmorty, page: page)
        bodies.append((request, try await transport.send(try source.listRequest(for: request))))
    }
    await transport.shutdown()
    let rounds = quick ? 3 : 10
    let clock = ContinuousClock()
    var start = clock.now
    for _ in 0..<rounds { for (_, response) in bodies { _ = try JSONSerialization.jsonObject(with: response.body) } }
    let parseOnly = seconds(clock.now - start)
    start = clock.now
    for _ in 0..<rounds { for (request, response) in bodies { _ = try source.decodeList(response, for: request) } }
    let decodeMap = seconds(clock.now - start)
    start = clock.now
    let now = Date()
    for _ in 0..<rounds {
        for (request, response) in bodies {
            let page = try source.decodeList(response, for: request)
            try kiosk.database.saveSnapshot(Snapshot(page: page, metadata: SnapshotMetadata(fetchedAt: now, freshUntil: now)))
        }
    }
    let decodeMapStore = seconds(clock.now - start)
    let pages = Double(rounds * bodies.count)
    print(String(format: "[decode] parse only (JSONSerialization): %.0f pages/s", pages / parseOnly))
    print(String(format: "[decode] decode+map (typed DTOs, tolerant): %.0f pages/s", pages / decodeMap))
    print(String(format: "[decode] decode+map+store (SQLite, one transaction per page): %.0f pages/s", pages / decodeMapStore))
    print(String(format: "[decode] decode+map+store / decode+map throughput: %.2f; / parse only: %.2f",
                 decodeMap / decodeMapStore, parseOnly / decodeMapStore))
    await kiosk.shutdown()
}

// 6. The web app: cached list page over HTTP, throughput with wrk, `kiosk serve` start-up (WebBench.swift).
await webBenchmarks(demo: demo, quick: quick)

// 7. The network debugger: capture's cost on catalog requests (CaptureBench.swift), and the request
// log's insert rate, search over 100,000 logged requests and bounded size (LogBench.swift); the same with
// rewrite rules present that match nothing, and what such a rule miss costs alone.
await captureBenchmarks(demo: demo, quick: quick)
await captureBenchmarks(demo: demo, quick: quick, rulesPresent: true)
await ruleMissBenchmark(demo: demo, quick: quick)
do {
    try runLogBenchmarks(quick: quick)
} catch {
    print("[log] failed: \(error)")
}

// 8. The debugger's console: first screen over 100,000 logged exchanges, live delivery, diff (DebuggerBench.swift).
await debuggerBenchmarks(demo: demo, quick: quick)

// 9. Reading a 60 MB HAR archive, valid and malformed: peak memory of each import, in a process of its own (HARBench.swift).
harBenchmarks()

print("[memory] peak RSS of the whole run (includes the 100,000-item load): \(peakRSSKilobytes() / 1024) MB")
await demo.stop()
try? FileManager.default.removeItem(at: scratchFolder)
