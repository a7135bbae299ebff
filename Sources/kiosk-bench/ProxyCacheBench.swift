import Foundation
import KioskApp
import KioskCore
import KioskDemoUpstream
import KioskProxy
import KioskStore
import ServiceLifecycle

/// `kiosk-bench --proxy-cache`: the cache's figures alone, against a proxy of their own without the cache layer.
func proxyCacheBenchmarks(demo: DemoUpstream, quick: Bool) async {
    do {
        guard let wrk = executableOnPath("wrk") else {
            print("[proxy cache] wrk not installed (apt-get install wrk) — skipped")
            return
        }
        let upstream = try await BenchUpstream.start()
        var configuration = try await benchConfiguration(demo, name: "proxy-uncached")
        configuration.capture.logMaxBytes = 8 << 30
        let kiosk = try Kiosk(configuration: configuration)
        let (uncached, group, running) = try await startProxy(kiosk) { _ in }
        try await proxyCacheFigures(demo: demo, upstream: upstream, uncached: uncached, wrk: wrk, rounds: quick ? 1 : 3,
                                    duration: quick ? "3s" : "5s", quick: quick)
        await group.triggerGracefulShutdown()
        _ = try? await running.value
        await kiosk.shutdown()
        await upstream.stop()
    } catch {
        print("[proxy cache] failed: \(error)")
    }
}

/// `kiosk-bench --proxy`'s cache figures (issue 26): what storing every answer costs on misses (fallback against a
/// proxy without the cache layer), a hit answered offline from the cache against the upstream asked directly (added
/// latency at one client, throughput under wrk), and the store itself at 100,000 entries.
func proxyCacheFigures(demo: DemoUpstream, upstream: BenchUpstream, uncached: Int, wrk: URL, rounds: Int, duration: String,
                       quick: Bool) async throws {
    var configuration = try await benchConfiguration(demo, name: "proxy-cache")
    configuration.capture.logMaxBytes = 8 << 30
    configuration.proxyCache = ProxyCacheConfiguration()
    let kiosk = try Kiosk(configuration: configuration)
    let (cached, group, running) = try await startProxy(kiosk) { _ in }
    let target = "http://127.0.0.1:\(upstream.port)/2k"
    let median = { (values: [Double]) in percentile(values, 50) }

    // Misses: every request goes upstream; in fallback each answer is stored (the one URL's entry replaced each time).
    var stored: [Double] = [], plain: [Double] = []
    for _ in 0..<rounds {
        plain.append(try await wrkRate(wrk, duration, port: uncached, path: target, host: "127.0.0.1:\(upstream.port)").rate)
        stored.append(try await wrkRate(wrk, duration, port: cached, path: target, host: "127.0.0.1:\(upstream.port)").rate)
    }
    print(String(format: "[proxy cache] misses, wrk -t2 -c32 -d%@, 2k JSON (median of %d): --cache fallback (each answer stored) %.0f req/s; "
                 + "no cache layer %.0f; storing costs %.0f%%  (target: <= 10%%)",
                 duration, rounds, median(stored), median(plain), 100 * (1 - median(stored) / median(plain))))

    // Hits: offline, the stored answer without the upstream.
    kiosk.proxyCacheSettings = ProxyCacheSettings(mode: .fallback, offline: true)
    let count = quick ? 500 : 2000
    let direct = try await sequentialLatencies(port: upstream.port, target: "/2k", count: count)
    let hits = try await sequentialLatencies(port: cached, target: target, count: count)
    print(String(format: "[proxy cache] one client, a hit (offline, 2k JSON), %d requests: direct p50 %@; hit through Kiosk p50 %@ p99 %@; "
                 + "added p50 %@  (target: <= 0.2 ms)", count, ms(percentile(direct, 50)), ms(percentile(hits, 50)), ms(percentile(hits, 99)),
                 ms(percentile(hits, 50) - percentile(direct, 50))))
    var directRates: [Double] = [], hitRates: [Double] = []
    for _ in 0..<rounds {
        directRates.append(try await wrkRate(wrk, duration, port: upstream.port, path: "/2k", host: nil).rate)
        hitRates.append(try await wrkRate(wrk, duration, port: cached, path: target, host: "127.0.0.1:\(upstream.port)").rate)
    }
    print(String(format: "[proxy cache] hits, wrk -t2 -c32 -d%@, 2k JSON (median of %d): direct %.0f req/s; hits through Kiosk %.0f (%.0f%% of direct)"
                 + "  (target: >= direct)", duration, rounds, median(directRates), median(hitRates), 100 * median(hitRates) / median(directRates)))

    await group.triggerGracefulShutdown()
    _ = try? await running.value
    await kiosk.shutdown()

    try storeFigures(entries: quick ? 20_000 : 100_000)
}

/// The cache file with `entries` answers of 2 KB: how long filling it took, a lookup's p50 and p95, its size on disk
/// and what the process's memory grew by.
private func storeFigures(entries: Int) throws {
    let folder = temporaryDirectory("proxy-cache-store")
    let path = folder.appendingPathComponent("kiosk-proxy-cache.sqlite").path
    let before = residentMegabytes()
    let cache = try ProxyCache.open(at: path, maxBytes: 2_000_000_000)
    let body = Data(String(repeating: "{\"k\":\"v\"},", count: 205).utf8)
    let headers: HTTPHeaderFields = ["Content-Type": "application/json", "ETag": "\"e\"", "Cache-Control": "max-age=60"]
    let clock = ContinuousClock()
    let filling = clock.now
    let now = Date()
    for index in 0..<entries {
        try cache.store(method: "GET", url: "http://host-\(index % 50).test/items/\(index)?page=1", host: "host-\(index % 50).test",
                        credentials: "", vary: "", variant: "", status: 200, headers: headers, body: body, requestTime: now, responseTime: now)
    }
    let filled = (clock.now - filling).seconds
    var lookups: [Double] = []
    for _ in 0..<2000 {
        let index = Int.random(in: 0..<entries)
        let start = clock.now
        _ = try cache.lookup(method: "GET", url: "http://host-\(index % 50).test/items/\(index)?page=1", credentials: "",
                             variant: { _ in "" }, using: false, at: now)
        lookups.append((clock.now - start).seconds)
    }
    let bytes = ["", "-wal"].compactMap { try? FileManager.default.attributesOfItem(atPath: path + $0)[.size] as? Int }.reduce(0, +)
    print(String(format: "[proxy cache] the store at %d answers of 2 KB: filled in %.1f s (one transaction each, %.0f/s); lookup p50 %@, p95 %@; "
                 + "%d MB on disk; RSS +%d MB", entries, filled, Double(entries) / filled, ms(percentile(lookups, 50)),
                 ms(percentile(lookups, 95)), bytes >> 20, residentMegabytes() - before))
}
