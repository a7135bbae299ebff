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
            kiosk.proxyCacheSettings = ProxyCacheSettings(mode: mode)
            rates[mode, default: []].append(try await wrkRate(wrk, duration, port: cached, path: target,
                                                              host: "127.0.0.1:\(upstream.port)", distinct: true).rate)
        }
    }
    kiosk.proxyCacheSettings = ProxyCacheSettings()
    let off = median(rates[.off] ?? []), fallback = median(rates[.fallback] ?? []), http = median(rates[.http] ?? [])
    print(String(format: "[proxy cache] misses, wrk -t2 -c32 -d%@, 2k JSON (median of %d, modes in turn): --cache fallback (each answer stored) %.0f req/s, "
                 + "--cache http %.0f, --cache off %.0f: storing costs %.0f%% and %.0f%%  (target: <= 10%%); no cache layer %.0f (fallback %.0f%% "
                 + "below it)", duration, 2 * rounds, fallback, http, off, 100 * (1 - fallback / off), 100 * (1 - http / off), median(plain),
                 100 * (1 - fallback / median(plain))))

    // Hits: offline, the stored answer without the upstream (asked for once online, to store it).
    _ = try await sequentialLatencies(port: cached, target: target, count: 1)
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

    // nginx's proxy_cache on the same hit, side by side (it logs nothing and sees nothing inside HTTPS).
    if let nginx = try await NginxCache.start(upstream: upstream.port) {
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

/// nginx as a caching reverse proxy in front of the bench upstream, for a hit to compare: a config of its own in a
/// scratch folder, every answer kept for 10 minutes whatever its fields say.
private struct NginxCache {
    let process: ChildProcess
    let port: Int
    let folder: URL
    let version: String

    /// nil when nginx is not installed.
    static func start(upstream: Int) async throws -> NginxCache? {
        guard let nginx = [URL(fileURLWithPath: "/usr/sbin/nginx")].first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
                ?? executableOnPath("nginx") else { return nil }
        let folder = temporaryDirectory("nginx")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("cache"), withIntermediateDirectories: true)
        // Its workers may run as another user: they must be able to write the cache, and to pass through the bench's
        // scratch folder to it (Kiosk makes the folders of its files its owner's only, 0700).
        try FileManager.default.setAttributes([.posixPermissions: 0o711], ofItemAtPath: scratchFolder.path)
        for path in [folder, folder.appendingPathComponent("cache")] {
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: path.path)
        }
        let port = try freePort()
        let dir = folder.path
        let config = """
            worker_processes 2;
            daemon off;
            master_process on;
            pid \(dir)/nginx.pid;
            error_log \(dir)/error.log warn;
            events { worker_connections 1024; }
            http {
                access_log off;
                keepalive_requests 1000000;
                client_body_temp_path \(dir)/body; proxy_temp_path \(dir)/proxy; fastcgi_temp_path \(dir)/fastcgi;
                uwsgi_temp_path \(dir)/uwsgi; scgi_temp_path \(dir)/scgi;
                proxy_cache_path \(dir)/cache levels=1:2 keys_zone=bench:10m max_size=500m inactive=1d use_temp_path=off;
                upstream app { server 127.0.0.1:\(upstream); keepalive 32; }
                server {
                    listen 127.0.0.1:\(port);
                    location / {
                        proxy_pass http://app;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        proxy_cache bench;
                        proxy_cache_valid 200 10m;
                        proxy_ignore_headers Cache-Control Expires Set-Cookie;
                        proxy_cache_use_stale error timeout updating http_500 http_502 http_503 http_504;
                        add_header X-Cache-Status $upstream_cache_status;
                    }
                }
            }
            """
        let file = folder.appendingPathComponent("nginx.conf")
        try Data(config.utf8).write(to: file)
        let version = (try? ChildProcess.run(nginx, arguments: ["-v"]))
            .map { ($0.stderr + $0.stdout).trimmingCharacters(in: .whitespacesAndNewlines) }?
            .components(separatedBy: "/").last ?? "?"
        let process = try ChildProcess(nginx, arguments: ["-e", folder.appendingPathComponent("error.log").path, "-p", dir, "-c", file.path],
                                       stdin: .null, stdout: .null, stderr: .null)
        guard await waitUntilListening(port) else {
            process.signal(SIGTERM)
            let log = (try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            throw BenchFailure("nginx did not start listening: \(log.suffix(400))")
        }
        return NginxCache(process: process, port: port, folder: folder, version: "nginx " + version)
    }

    /// What nginx said of one more request for the bench's answer (X-Cache-Status: HIT when it came from its cache).
    func lastCacheStatus() -> String {
        guard let curl = executableOnPath("curl"),
              let result = try? ChildProcess.run(curl, arguments: ["-s", "-o", "/dev/null", "-D", "-", "http://127.0.0.1:\(port)/2k"]) else {
            return "?"
        }
        return result.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("x-cache-status:") }
            .map { String($0.split(separator: ":").last ?? "").trimmingCharacters(in: .whitespaces) } ?? "?"
    }

    func stop() async {
        process.signal(SIGQUIT)
        for _ in 0..<500 where process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
        if process.isRunning { process.signal(SIGKILL) }
    }
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
