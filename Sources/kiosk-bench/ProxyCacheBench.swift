import Foundation
import KioskApp
import KioskCore
import KioskDemoUpstream
import KioskProcess
import KioskProxy
import KioskStore
import ServiceLifecycle
import Synchronization

/// `kiosk-bench --proxy-cache`: the cache's figures alone, against a proxy of their own without the cache layer.
func proxyCacheBenchmarks(demo: DemoUpstream, quick: Bool) async {
    do {
        guard let wrk = executableOnPath("wrk") else {
            print("[proxy cache] wrk not installed (apt-get install wrk) — skipped")
            return
        }
        let upstream = try await BenchUpstream.start()
        try await proxyCacheFigures(demo: demo, upstream: upstream, wrk: wrk, rounds: quick ? 1 : 3, duration: quick ? "3s" : "5s",
                                    quick: quick)
        await upstream.stop()
    } catch {
        print("[proxy cache] failed: \(error)")
    }
}

/// `kiosk-bench --proxy`'s cache figures (issue 26): what storing every answer costs on misses (fallback against
/// `--cache off`, and against a proxy without the cache layer), a hit answered offline from the cache against the
/// upstream asked directly (added latency at one client, throughput under wrk), and the store itself at 100,000 entries.
func proxyCacheFigures(demo: DemoUpstream, upstream: BenchUpstream, wrk: URL, rounds: Int, duration: String, quick: Bool) async throws {
    // A proxy of a Kiosk without the cache layer, its log as new as the cached one's.
    var plainConfiguration = try await benchConfiguration(demo, name: "proxy-uncached")
    plainConfiguration.capture.logMaxBytes = 8 << 30
    let plainKiosk = try Kiosk(configuration: plainConfiguration)
    let (uncached, plainGroup, plainRunning) = try await startProxy(plainKiosk) { _ in }
    var configuration = try await benchConfiguration(demo, name: "proxy-cache")
    configuration.capture.logMaxBytes = 8 << 30
    configuration.proxyCache = ProxyCacheConfiguration()
    let kiosk = try Kiosk(configuration: configuration)
    let (cached, group, running) = try await startProxy(kiosk) { _ in }
    let target = "http://127.0.0.1:\(upstream.port)/2k"
    let median = { (values: [Double]) in percentile(values, 50) }

    // Misses: every request a URL of its own, so none is stored yet or collapsed onto another: each goes upstream
    // and, in fallback, each answer is stored. (One URL asked again and again would measure the unchanged answer's
    // cheaper path — a confirmation written behind — and the collapsing of identical requests in flight.)
    // The target is against `--cache off` (the cache layer there, storing nothing: the same proxy switched live); a proxy
    // with no cache layer at all is measured too, for what the layer itself costs.
    // The proxy slows a little as its log grows, run after run: the modes take turns at going first, so that none is
    // always measured on the smallest log; and twice the rounds, the runs of one mode varying by a tenth here.
    var rates: [ProxyCacheMode: [Double]] = [:], plain: [Double] = []
    let modes = [ProxyCacheMode.off, .fallback, .http]
    for round in 0..<(2 * rounds) {
        plain.append(try await wrkRate(wrk, duration, port: uncached, path: target, host: "127.0.0.1:\(upstream.port)", distinct: true).rate)
        for mode in modes[(round % modes.count)...] + modes[..<(round % modes.count)] {
            try kiosk.switchProxyCache(mode: mode, offline: false)
            rates[mode, default: []].append(try await wrkRate(wrk, duration, port: cached, path: target,
                                                              host: "127.0.0.1:\(upstream.port)", distinct: true).rate)
        }
    }
    try kiosk.switchProxyCache(mode: .fallback, offline: false)
    await plainGroup.triggerGracefulShutdown()
    _ = try? await plainRunning.value
    await plainKiosk.shutdown()
    let off = median(rates[.off] ?? []), fallback = median(rates[.fallback] ?? []), http = median(rates[.http] ?? [])
    print(String(format: "[proxy cache] misses, wrk -t2 -c32 -d%@, 2k JSON (median of %d, modes in turn): --cache fallback (each answer stored) %.0f req/s, "
                 + "--cache http %.0f, --cache off %.0f: storing costs %.0f%% and %.0f%%  (target: <= 10%%); no cache layer %.0f (fallback %.0f%% "
                 + "below it)", duration, 2 * rounds, fallback, http, off, 100 * (1 - fallback / off), 100 * (1 - http / off), median(plain),
                 100 * (1 - fallback / median(plain))))

    // Hits: offline, the stored answer without the upstream (asked for once online, to store it).
    _ = try await sequentialLatencies(port: cached, target: target, count: 1)
    try kiosk.switchProxyCache(mode: .fallback, offline: true)
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

    // nginx's proxy_cache on the same hit, side by side (it logs nothing and sees nothing inside HTTPS).
    if let nginx = try await Nginx.start(upstream: upstream.port, caching: true) {
        _ = try await sequentialLatencies(port: nginx.port, target: "/2k", count: 10)
        let nginxHits = try await sequentialLatencies(port: nginx.port, target: "/2k", count: count)
        var nginxRates: [Double] = []
        for _ in 0..<rounds { nginxRates.append(try await wrkRate(wrk, duration, port: nginx.port, path: "/2k", host: nil).rate) }
        let status = nginx.lastCacheStatus()
        print(String(format: "[proxy cache] %@ proxy_cache (2 workers, no access log) on the same hit: added p50 %@; wrk %.0f req/s "
                     + "(%.0f%% of direct; Kiosk's hits %.0f%% of nginx's); its last answer was a %@", nginx.version, ms(percentile(nginxHits, 50) -
                     percentile(direct, 50)), median(nginxRates), 100 * median(nginxRates) / median(directRates),
                     100 * median(hitRates) / median(nginxRates), status))
        await nginx.stop()
    } else {
        print("[proxy cache] nginx not installed (apt-get install nginx-light) — its column is skipped")
    }

    try await storeFigures(entries: quick ? 20_000 : 100_000)
}

/// The cache file with `entries` answers of 2 KB: how long filling it took, a lookup's p50 and p95, its size on disk
/// and what the process's memory grew by.
private func storeFigures(entries: Int) async throws {
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
        try cache.store([ProxyCacheAnswer(method: "GET", url: "http://host-\(index % 50).test/items/\(index)?page=1",
                                          host: "host-\(index % 50).test", credentials: "", vary: "", variant: "", status: 200,
                                          headers: headers, body: body, requestTime: now, responseTime: now)])
    }
    let filled = (clock.now - filling).seconds
    var lookups: [Double] = []
    for _ in 0..<2000 {
        let index = Int.random(in: 0..<entries)
        let start = clock.now
        _ = try await cache.lookup(method: "GET", url: "http://host-\(index % 50).test/items/\(index)?page=1", credentials: "",
                             variant: { _ in "" }, using: false, at: now)
        lookups.append((clock.now - start).seconds)
    }
    let bytes = ["", "-wal"].compactMap { try? FileManager.default.attributesOfItem(atPath: path + $0)[.size] as? Int }.reduce(0, +)
    print(String(format: "[proxy cache] the store at %d answers of 2 KB: filled in %.1f s (one transaction each, %.0f/s); lookup p50 %@, p95 %@; "
                 + "%d MB on disk; RSS +%d MB", entries, filled, Double(entries) / filled, ms(percentile(lookups, 50)),
                 ms(percentile(lookups, 95)), bytes >> 20, residentMegabytes() - before))

    // `kiosk proxy cache clear` on that store: its time, and the most the process's memory rose meanwhile (sampled every
    // millisecond on a thread of its own).
    let beforeClear = residentMegabytes()
    let peak = PeakMemory()
    let clearing = clock.now
    let removed = try cache.clear()
    let cleared = (clock.now - clearing).seconds
    print(String(format: "[proxy cache] clear of those %d answers: %.2f s; RSS peak +%d MB during it", removed, cleared,
                 peak.stop() - beforeClear))
}

/// The most resident memory the process had from its creation until `stop`, read every millisecond on a thread of its own.
private final class PeakMemory: Sendable {
    private let state = Mutex((peak: 0, running: true))

    init() {
        Thread { [self] in
            while state.withLock({ state in
                state.peak = max(state.peak, residentMegabytes())
                return state.running
            }) { usleep(1000) }
        }.start()
    }

    /// Stops the sampling; returns the peak, in megabytes.
    func stop() -> Int {
        state.withLock { state in
            state.running = false
            return max(state.peak, residentMegabytes())
        }
    }
}
