// kiosk-bench --proxy: `kiosk proxy` side by side with the upstream asked directly and with mitmdump (capture on in
// both: Kiosk's request log, mitmdump's -w flow file), on a loopback upstream answering 2 KB and 18 KB JSON bodies.
// Throughput with wrk (forward proxy: the script asks for whole URLs; reverse: plain paths), added latency with one
// keep-alive client, what was logged against what was sent, the cost of minting a leaf, and memory.

import AsyncHTTPClient
import Foundation
import KioskApp
import KioskCore
import KioskDebugger
import Logging
import KioskDemoUpstream
import KioskNetwork
import KioskProcess
import KioskProxy
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization

func proxyBenchmarks(demo: DemoUpstream, quick: Bool) async {
    do {
        try await runProxyBenchmarks(demo: demo, quick: quick)
    } catch {
        print("[proxy] failed: \(error)")
    }
}

private func runProxyBenchmarks(demo: DemoUpstream, quick: Bool) async throws {
    let upstream = try await BenchUpstream.start()
    defer { Task { await upstream.stop() } }
    // The HTTPS upstream's certificate, of a CA of the bench's (a ProxyAuthority's leaf for 127.0.0.1), which Kiosk and
    // mitmdump are told to trust; and Kiosk's own CA, which the HTTPS load client trusts.
    let upstreamCAFolder = temporaryDirectory("bench-upstream-ca")
    let upstreamCA = try ProxyAuthority.inDirectory(upstreamCAFolder)
    let upstreamCAFile = upstreamCAFolder.appendingPathComponent(ProxyAuthority.certificateFileName).path
    let secureUpstream = try await BenchUpstream.start(tls: try upstreamCA.serverContext(for: "127.0.0.1"))
    defer { Task { await secureUpstream.stop() } }
    let kioskCA = try ProxyAuthority.inDirectory(temporaryDirectory("bench-kiosk-ca"))
    var configuration = try await benchConfiguration(demo, name: "proxy")
    // Room for every exchange of the run, so that what was logged can be counted against what was sent.
    configuration.capture.logMaxBytes = 8 << 30
    configuration.proxyTransport.additionalTrustRoots = [upstreamCAFile]
    // With the cache layer `kiosk proxy` has (its default mode, fallback): every answer stored, identical requests in
    // flight collapsed onto one.
    configuration.proxyCache = ProxyCacheConfiguration()
    let kiosk = try Kiosk(configuration: configuration)
    let (forward, forwardGroup, forwardRun) = try await startProxy(kiosk, configure: { $0.authority = kioskCA })
    let (reverse, reverseGroup, reverseRun) = try await startProxy(kiosk) { $0.reverseTo = URL(string: "http://127.0.0.1:\(upstream.port)/") }
    let rounds = quick ? 1 : 3
    // Every exchange the proxy carried in the run, for the memory figure at its end.
    var carried = 0
    let duration = quick ? "3s" : "5s"

    // Added latency at low load: one client, one keep-alive connection, one request after another.
    for size in ["2k", "18k"] {
        let count = quick ? 500 : 2000
        let direct = try await sequentialLatencies(port: upstream.port, target: "/\(size)", count: count)
        let through = try await sequentialLatencies(port: forward, target: "http://127.0.0.1:\(upstream.port)/\(size)", count: count)
        print(String(format: "[proxy] one client, %@ JSON, %d requests: direct p50 %@ p99 %@; through Kiosk p50 %@ p99 %@; added p50 %@, p99 %@  (goal: added p50 <= 0.3 ms)",
                     size, count, ms(percentile(direct, 50)), ms(percentile(direct, 99)), ms(percentile(through, 50)),
                     ms(percentile(through, 99)), ms(percentile(through, 50) - percentile(direct, 50)),
                     ms(percentile(through, 99) - percentile(direct, 99))))
    }

    try await streamingFigure(forward: forward, upstream: upstream.port, bytes: quick ? 256 << 20 : 1 << 30, upload: false)
    try await streamingFigure(forward: forward, upstream: upstream.port, bytes: quick ? 256 << 20 : 1 << 30, upload: true)

    // Throughput: wrk, the same load against each, rounds alternating, medians.
    guard let wrk = executableOnPath("wrk") else {
        print("[proxy] wrk not installed (apt-get install wrk) — throughput skipped")
        return
    }
    let mitm = try? await Mitmdump.start(trusting: upstreamCAFile)
    if mitm == nil { print("[proxy] mitmdump not found (pip install mitmproxy, or MITMDUMP=path) — its column is skipped") }
    // nginx as a plain reverse proxy (it captures nothing, logs nothing): what a proxy in C reaches on this machine.
    var nginx: Nginx?
    do {
        nginx = try await Nginx.start(upstream: upstream.port, caching: false)
        if nginx == nil { print("[proxy] nginx not installed (apt-get install nginx-light) — its column is skipped") }
    } catch {
        print("[proxy] nginx did not start (\(error)) — its column is skipped")
    }
    // And bare relays (BareRelay.swift): the least a proxy on SwiftNIO costs here, and with AsyncHTTPClient, capturing nothing.
    let relay = try await BareRelay.start(upstream: upstream.port, client: .nio)
    let relayAHC = try await BareRelay.start(upstream: upstream.port, client: .asyncHTTPClient)
    do {
        try await throughputFigures()
    } catch {
        // The peers are processes of their own: stopped whatever happened, so none outlives the bench holding its port.
        await mitm?.stop()
        await nginx?.stop()
        await relay.stop()
        await relayAHC.stop()
        throw error
    }
    await mitm?.stop()
    await nginx?.stop()
    await relay.stop()
    await relayAHC.stop()
    // The throughput lines, plain and HTTPS, with mitmdump and nginx beside Kiosk.
    func throughputFigures() async throws {
        for size in ["2k", "18k"] {
            var direct: [Double] = [], kioskForward: [Double] = [], kioskReverse: [Double] = [], mitmForward: [Double] = []
            var nginxReverse: [Double] = [], relayReverse: [Double] = [], relayAHCReverse: [Double] = []
            var kioskUncollapsed: [Double] = [], kioskUnrecorded: [Double] = []
            var sent = 0
            // Of the requests Kiosk's forward listener answered, those it sent upstream: the rest waited for an identical
            // request already in flight and got its answer (RFC 9211 `collapsed`), which nginx and mitmdump never do here.
            var forwardAnswered = 0, forwardSentUpstream = 0
            try kiosk.debugger.flush()
            let loggedBefore = try kiosk.debugger.count()
            let unloggedBefore = kiosk.debugger.unloggedCount
            for round in 0..<rounds {
                direct.append(try await wrkRate(wrk, duration, port: upstream.port, path: "/\(size)", host: nil).rate)
                // The default mode, and with the cache layer off (nothing collapses: every request goes upstream, as through
                // nginx and mitmdump), taking turns at going first: the proxy slows a little as its log grows.
                for off in round % 2 == 0 ? [false, true] : [true, false] {
                    try kiosk.switchProxyCache(mode: off ? .off : .fallback, offline: false)
                    let upstreamBefore = upstream.answered
                    let viaKiosk = try await wrkRate(wrk, duration, port: forward, path: "http://127.0.0.1:\(upstream.port)/\(size)",
                                                     host: "127.0.0.1:\(upstream.port)")
                    sent += viaKiosk.requests
                    if off {
                        kioskUncollapsed.append(viaKiosk.rate)
                    } else {
                        forwardSentUpstream += upstream.answered - upstreamBefore
                        forwardAnswered += viaKiosk.requests
                        kioskForward.append(viaKiosk.rate)
                    }
                }
                try kiosk.switchProxyCache(mode: .fallback, offline: false)
                // The default mode with the console's recording paused: every debugger layer still acts, nothing is logged
                // (what the log's writer costs beside the rest). Not counted in `sent`: none of it is to be found logged.
                kiosk.debugger.isRecording = false
                let unrecorded: Double
                do {
                    defer { kiosk.debugger.isRecording = true }
                    unrecorded = try await wrkRate(wrk, duration, port: forward, path: "http://127.0.0.1:\(upstream.port)/\(size)",
                                                   host: "127.0.0.1:\(upstream.port)").rate
                }
                kioskUnrecorded.append(unrecorded)
                let viaReverse = try await wrkRate(wrk, duration, port: reverse, path: "/\(size)", host: nil)
                kioskReverse.append(viaReverse.rate)
                sent += viaReverse.requests
                if let mitm {
                    mitmForward.append(try await wrkRate(wrk, duration, port: mitm.port, path: "http://127.0.0.1:\(upstream.port)/\(size)",
                                                         host: "127.0.0.1:\(upstream.port)").rate)
                }
                if let nginx { nginxReverse.append(try await wrkRate(wrk, duration, port: nginx.port, path: "/\(size)", host: nil).rate) }
                relayReverse.append(try await wrkRate(wrk, duration, port: relay.port, path: "/\(size)", host: nil).rate)
                relayAHCReverse.append(try await wrkRate(wrk, duration, port: relayAHC.port, path: "/\(size)", host: nil).rate)
            }
            try kiosk.debugger.flush()
            let logged = try kiosk.debugger.count() - loggedBefore
            let median = { (values: [Double]) in percentile(values, 50) }
            var line = String(format: "[proxy] wrk -t2 -c32 -d%@, %@ JSON (median of %d): direct %.0f req/s; Kiosk forward %.0f (%.0f%% of direct; "
                              + "%.0f%% of its answers collapsed onto another request's), with --cache off (none collapsed) %.0f (%.0f%%), "
                              + "with recording paused (nothing logged) %.0f (%.0f%%), reverse %.0f (%.0f%%)",
                              duration, size, rounds, median(direct), median(kioskForward), 100 * median(kioskForward) / median(direct),
                              100 * max(0, 1 - Double(forwardSentUpstream) / Double(max(1, forwardAnswered))),
                              median(kioskUncollapsed), 100 * median(kioskUncollapsed) / median(direct),
                              median(kioskUnrecorded), 100 * median(kioskUnrecorded) / median(direct),
                              median(kioskReverse), 100 * median(kioskReverse) / median(direct))
            if !mitmForward.isEmpty {
                line += String(format: "; mitmdump forward %.0f (Kiosk %.1fx, %.1fx with --cache off)", median(mitmForward),
                               median(kioskForward) / median(mitmForward), median(kioskUncollapsed) / median(mitmForward))
            }
            if !nginxReverse.isEmpty {
                line += String(format: "; %@ reverse, capturing nothing, %.0f (%.0f%% of direct)", nginx?.version ?? "nginx", median(nginxReverse),
                               100 * median(nginxReverse) / median(direct))
            }
            line += String(format: "; bare SwiftNIO relays, capturing nothing: NIO's client codec %.0f (%.0f%% of direct), "
                           + "AsyncHTTPClient %.0f (%.0f%%)", median(relayReverse), 100 * median(relayReverse) / median(direct),
                           median(relayAHCReverse), 100 * median(relayAHCReverse) / median(direct))
            print(line + "  (target: >= 40% of direct, >= 20x mitmdump)")
            carried += sent
            print("[proxy] \(size): \(sent) requests answered through Kiosk, \(logged) logged\(loggedNote(sent: sent, logged: logged, unlogged: kiosk.debugger.unloggedCount - unloggedBefore))")
        }

        // The log stores a body once however many exchanges carried it, and the bench's upstream gives one body per size:
        // misses (every request a URL of its own) whose answers are all the same body, against misses whose answers each
        // carry their URL, a body of its own to store. Rounds alternating, medians.
        do {
            var shared: [Double] = [], unique: [Double] = []
            for _ in 0..<rounds {
                let same = try await wrkRate(wrk, duration, port: forward, path: "http://127.0.0.1:\(upstream.port)/2k",
                                             host: "127.0.0.1:\(upstream.port)", distinct: true)
                let own = try await wrkRate(wrk, duration, port: forward, path: "http://127.0.0.1:\(upstream.port)/2k-unique",
                                            host: "127.0.0.1:\(upstream.port)", distinct: true)
                shared.append(same.rate)
                unique.append(own.rate)
                carried += same.requests + own.requests
            }
            let median = { (values: [Double]) in percentile(values, 50) }
            print(String(format: "[proxy] wrk -t2 -c32 -d%@, misses of 2k JSON (median of %d): every answer the same body (stored once) %.0f req/s; "
                         + "every answer a body of its own (each stored) %.0f (%.0f%% below)", duration, rounds, median(shared), median(unique),
                         100 * (1 - median(unique) / median(shared))))
        }

        // HTTPS, read by each proxy with its own CA: the same load client (CONNECT, TLS inside, keep-alive GETs) through each.
        for size in ["2k", "18k"] {
            var direct: [Double] = [], kioskRates: [Double] = [], mitmRates: [Double] = []
            var sent = 0, sentUpstream = 0
            try kiosk.debugger.flush()
            let loggedBefore = try kiosk.debugger.count()
            let unloggedBefore = kiosk.debugger.unloggedCount
            let seconds = quick ? 3 : 5
            for _ in 0..<rounds {
                direct.append(try await httpsLoadProcess(proxyPort: nil, targetPort: secureUpstream.port, path: "/\(size)",
                                                         caPEM: upstreamCA.certificatePEM, seconds: seconds).rate)
                let upstreamBefore = secureUpstream.answered
                let viaKiosk = try await httpsLoadProcess(proxyPort: forward, targetPort: secureUpstream.port, path: "/\(size)",
                                                          caPEM: kioskCA.certificatePEM, seconds: seconds)
                sentUpstream += secureUpstream.answered - upstreamBefore
                kioskRates.append(viaKiosk.rate)
                sent += viaKiosk.requests
                if let mitm, let mitmCA = try? String(contentsOf: mitm.certificate, encoding: .utf8) {
                    mitmRates.append(try await httpsLoadProcess(proxyPort: mitm.port, targetPort: secureUpstream.port, path: "/\(size)",
                                                                caPEM: mitmCA, seconds: seconds).rate)
                }
            }
            try kiosk.debugger.flush()
            let logged = try kiosk.debugger.count() - loggedBefore
            let median = { (values: [Double]) in percentile(values, 50) }
            var line = String(format: "[proxy] HTTPS intercepted, 32 keep-alive clients, %@ JSON (median of %d): direct %.0f req/s; Kiosk %.0f (%.0f%% of direct; "
                              + "%.0f%% of its answers collapsed onto another request's)",
                              size, rounds, median(direct), median(kioskRates), 100 * median(kioskRates) / median(direct),
                              100 * max(0, 1 - Double(sentUpstream) / Double(max(1, sent))))
            if !mitmRates.isEmpty {
                line += String(format: "; mitmdump %.0f (Kiosk %.1fx)", median(mitmRates), median(kioskRates) / median(mitmRates))
            }
            print(line + "  (target: >= 40% of direct, >= 20x mitmdump)")
            carried += sent
            print("[proxy] HTTPS \(size): \(sent) requests answered through Kiosk, \(logged) logged\(loggedNote(sent: sent, logged: logged, unlogged: kiosk.debugger.unloggedCount - unloggedBefore))")
        }
    }

    // Minting: a leaf for a host not seen yet (key signature and TLS context), then the same host from the cache.
    let authority = try ProxyAuthority.inDirectory(temporaryDirectory("proxy-ca"))
    let fresh = try await measure(quick ? 50 : 200) { _ = try authority.serverContext(for: "host-\(UUID().uuidString.prefix(8)).example.test") }
    _ = try authority.serverContext(for: "cached.example.test")
    let cached = try await measure(quick ? 500 : 2000) { _ = try authority.serverContext(for: "cached.example.test") }
    print("[proxy] leaf for a new host (mint + TLS context): p50 \(ms(percentile(fresh, 50))); a cached host's: p50 \(ms(percentile(cached, 50)))")
    // The same as an app meets it: CONNECT through Kiosk, then TLS with the leaf, to a host never seen and to it again.
    let handshakes = try await handshakeTimes(proxyPort: forward, caPEM: kioskCA.certificatePEM, count: quick ? 50 : 200)
    print("[proxy] CONNECT + TLS handshake through Kiosk, a new host (leaf minted): p50 \(ms(percentile(handshakes.fresh, 50))), "
          + "p99 \(ms(percentile(handshakes.fresh, 99))); the same host again (leaf cached): p50 \(ms(percentile(handshakes.cached, 50))), "
          + "p99 \(ms(percentile(handshakes.cached, 99)))")
    let unlogged = kiosk.debugger.unloggedCount
    print("[proxy] RSS after the proxy carried \(carried) exchanges (\(unlogged == 0 ? "all logged" : "\(unlogged) dropped by the log")): "
          + "\(residentMegabytes()) MB")

    try await proxyCacheFigures(demo: demo, upstream: upstream, wrk: wrk, rounds: rounds, duration: duration, quick: quick)

    await forwardGroup.triggerGracefulShutdown()
    await reverseGroup.triggerGracefulShutdown()
    _ = try? await forwardRun.value
    _ = try? await reverseRun.value
    await kiosk.shutdown()
}

/// What became of the exchanges answered that the log does not hold: dropped by the log (its queue full: the writer
/// could not keep up; or a write failed), as the console's banner counts them, or otherwise missing.
private func loggedNote(sent: Int, logged: Int, unlogged: Int) -> String {
    if logged >= sent { return " (none dropped)" }
    let missing = sent - logged - unlogged
    return " (\(unlogged) dropped by the log: more came than its writer could store" + (missing > 0 ? "; \(missing) otherwise missing)" : ")")
}

/// `kiosk-bench --serve-upstream`: only the bench's upstream (`/2k`, `/18k`, `/2k-unique`, `/stream?bytes=N`, `/upload`), on a free
/// loopback port it prints, until the process is stopped — for profiling a `kiosk proxy` process on its own.
/// The proxy benchmark's upstreams alone, plain and HTTPS (its certificate's CA in a folder whose path is printed, for
/// `kiosk proxy --upstream-ca`), until the process is killed: for measuring and profiling a `kiosk proxy` of its own.
func serveBenchUpstream() async throws {
    let upstream = try await BenchUpstream.start()
    let caFolder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-bench-upstream-ca-\(getpid())")
    let authority = try ProxyAuthority.inDirectory(caFolder)
    let secure = try await BenchUpstream.start(tls: try authority.serverContext(for: "127.0.0.1"))
    print("bench upstream on http://127.0.0.1:\(upstream.port)/ and https://127.0.0.1:\(secure.port)/ "
          + "(its CA: \(caFolder.appendingPathComponent(ProxyAuthority.certificateFileName).path))")
    // Written at once, for a script reading the ports from a file or a pipe.
    fflush(nil)
    while true { try await Task.sleep(for: .seconds(3600)) }
}

/// `--https-load PROXY-PORT TARGET-PORT CA-FILE PATH SECONDS`: the HTTPS load client alone, through the forward proxy on
/// PROXY-PORT (0: none, straight to the target) whose CA is CA-FILE, to the bench upstream's HTTPS port; prints the answers
/// per second and in all.
func runHTTPSLoad(_ values: ArraySlice<String>) async throws {
    let values = Array(values)
    guard values.count == 5, let proxy = Int(values[0]), let target = Int(values[1]), let seconds = Int(values[4]) else {
        throw BenchFailure("usage: kiosk-bench --https-load PROXY-PORT TARGET-PORT CA-FILE PATH SECONDS")
    }
    let caPEM = try String(contentsOfFile: values[2], encoding: .utf8)
    let result = try await httpsLoad(proxyPort: proxy == 0 ? nil : proxy, targetPort: target, path: values[3], caPEM: caPEM,
                                     duration: .seconds(seconds))
    print(String(format: "%.0f req/s, %d answers", result.rate, result.requests))
}

/// The HTTPS load client in a process of its own (this binary, `--https-load`), as wrk is for plain HTTP: in the bench's
/// process it would share the proxy's allocator and runtime, and load the proxy's own process with its work.
func httpsLoadProcess(proxyPort: Int?, targetPort: Int, path: String, caPEM: String, seconds: Int) async throws -> (rate: Double, requests: Int) {
    let caFile = temporaryDirectory("https-load-ca")
    try FileManager.default.createDirectory(at: caFile, withIntermediateDirectories: true)
    let pem = caFile.appendingPathComponent("ca.pem")
    try Data(caPEM.utf8).write(to: pem)
    let me = URL(fileURLWithPath: CommandLine.arguments[0])
    let (status, output) = try await runToCompletion(me, ["--https-load", String(proxyPort ?? 0), String(targetPort), pem.path, path,
                                                          String(seconds)])
    let words = output.split(whereSeparator: \.isWhitespace)
    guard status == 0, let index = words.firstIndex(of: "req/s,"), index > 0, let rate = Double(words[index - 1]),
          index + 1 < words.count, let requests = Int(words[index + 1])
    else { throw BenchFailure("the HTTPS load client failed: \(output.suffix(500))") }
    return (rate, requests)
}

/// A download of `bytes` (chunked, so past the buffer it streams) through the forward proxy by curl, or with `upload` an
/// upload of as many (curl reading a pipe: chunked), with this process's resident set sampled while it runs: how much the
/// proxy's memory rose, and the rate.
private func streamingFigure(forward: Int, upstream: Int, bytes: Int, upload: Bool) async throws {
    guard let curl = executableOnPath("curl"), let shell = executableOnPath("sh") else {
        print("[proxy] curl not installed — the streaming figure is skipped")
        return
    }
    let before = residentMegabytes()
    let peak = Mutex(before)
    let sampler = Task {
        while !Task.isCancelled {
            let now = residentMegabytes()
            peak.withLock { $0 = max($0, now) }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
    let start = ContinuousClock.now
    let (status, output) = upload
        ? try await runToCompletion(shell, ["-c", "head -c \(bytes) /dev/zero | \(curl.path) -sS -T - -x http://127.0.0.1:\(forward) "
                                                + "http://127.0.0.1:\(upstream)/upload"])
        : try await runToCompletion(curl, ["-sS", "-o", "/dev/null", "-w", "%{size_download}", "-x", "http://127.0.0.1:\(forward)",
                                           "http://127.0.0.1:\(upstream)/stream?bytes=\(bytes)"])
    let elapsed = (ContinuousClock.now - start).seconds
    sampler.cancel()
    _ = await sampler.value
    // A download's size as curl counted it; an upload's as the upstream did.
    guard status == 0, Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) == bytes else {
        throw BenchFailure("curl's streamed \(upload ? "upload" : "download") through the proxy (exit \(status)): \(output)")
    }
    let rise = peak.withLock { $0 } - before
    print(String(format: "[proxy] %d MB %@ through Kiosk (chunked, past the 16 MB buffer) by curl in %.1f s (%.0f MB/s): RSS %d MB before, peak +%d MB  (target: <= +50 MB)",
                 bytes >> 20, upload ? "uploaded" : "streamed", elapsed, Double(bytes >> 20) / elapsed, before, rise))
}

/// A proxy of `kiosk` on a free loopback port, running in a service group of its own.
func startProxy(_ kiosk: Kiosk, configure: (inout ProxyConfiguration) -> Void) async throws
    -> (port: Int, group: ServiceGroup, running: Task<Void, any Error>) {
    var configuration = ProxyConfiguration(port: 0)
    configuration.connectTimeout = kiosk.configuration.proxyTransport.connectTimeout
    configure(&configuration)
    let (bound, continuation) = AsyncStream<Int>.makeStream()
    let proxy = ProxyServer(configuration: configuration, forward: { try await kiosk.forward($0) }, vet: { try await kiosk.vetProxied($0, forNetwork: $1) },
                            onTunnel: { kiosk.recordTunnel($0) }, onBound: { continuation.yield($0); continuation.finish() })
    let group = ServiceGroup(services: [proxy], logger: .init(label: "kiosk-bench.proxy"))
    let running = Task { try await group.run() }
    var iterator = bound.makeAsyncIterator()
    guard let port = await iterator.next() else { throw BenchFailure("the proxy did not start") }
    return (port, group, running)
}

/// wrk against `port`, asking for `path` (a whole URL through a forward proxy, with `host` as Host) — with `distinct`,
/// each request for a URL of its own; its rate and how many requests it completed.
func wrkRate(_ wrk: URL, _ duration: String, port: Int, path: String, host: String?, distinct: Bool = false) async throws
    -> (rate: Double, requests: Int) {
    let script = temporaryDirectory("wrk") .appendingPathExtension("lua")
    try FileManager.default.createDirectory(at: script.deletingLastPathComponent(), withIntermediateDirectories: true)
    var lua = "wrk.path = \"\(path)\"\n"
    if let host { lua += "wrk.headers[\"Host\"] = \"\(host)\"\n" }
    if distinct {
        // Each request a URL of its own (this run's nonce, wrk's thread, a count), so that none is ever stored already
        // or collapsed onto another in flight: every answer is a miss.
        lua += """
            local threads = 0
            function setup(thread) threads = threads + 1; thread:set("thread_id", threads) end
            local count = 0
            function request()
              count = count + 1
              return wrk.format(nil, wrk.path .. "?miss=\(UUID().uuidString)-" .. thread_id .. "-" .. count)
            end

            """
    }
    try lua.write(to: script, atomically: true, encoding: .utf8)
    let (status, output) = try await runToCompletion(wrk, ["-t2", "-c32", "-d\(duration)", "-s", script.path, "http://127.0.0.1:\(port)"])
    let lines = output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    guard status == 0, let rateLine = lines.first(where: { $0.hasPrefix("Requests/sec:") }),
          let rate = Double(rateLine.dropFirst("Requests/sec:".count).trimmingCharacters(in: .whitespaces)),
          let totalLine = lines.first(where: { $0.contains(" requests in ") }),
          let requests = Int(totalLine.split(separator: " ").first ?? "")
    else { throw BenchFailure("wrk through port \(port) (exit \(status)): \(output)") }
    if let problem = lines.first(where: { $0.hasPrefix("Non-2xx") || $0.hasPrefix("Socket errors") }) {
        throw BenchFailure("wrk through port \(port): \(problem)")
    }
    return (rate, requests)
}

/// Seconds per request for `count` requests, one after another on one keep-alive connection to `port`.
func sequentialLatencies(port: Int, target: String, count: Int) async throws -> [Double] {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .channelOption(.socketOption(.tcp_nodelay), value: 1)
        .connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHTTPClientHandlers()
                return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
            }
        }
    return try await channel.executeThenClose { inbound, outbound in
        var iterator = inbound.makeAsyncIterator()
        var samples: [Double] = []
        samples.reserveCapacity(count)
        let clock = ContinuousClock()
        for index in 0..<(count + 50) {
            let start = clock.now
            try await outbound.write(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: target,
                                                           headers: ["Host": "127.0.0.1"])))
            try await outbound.write(.end(nil))
            // A connection closed before its answer ended would time nothing: that is a failed measurement.
            answer: while true {
                guard let part = try await iterator.next() else {
                    throw BenchFailure("port \(port) closed the connection after \(index) requests")
                }
                if case .end = part { break answer }
            }
            // The first requests warm the connection and the pools up.
            if index >= 50 { samples.append((clock.now - start).seconds) }
        }
        return samples
    }
}

/// The resident set of this process, in MB.
func residentMegabytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kilobytes / 1024
}

/// mitmdump from PyPI (MITMDUMP, the browser tests' virtualenv, or PATH), recording every flow to a file as Kiosk's
/// capture logs every exchange.
private struct Mitmdump {
    let process: ChildProcess
    let port: Int

    /// Where mitmdump keeps its CA's certificate (made on its first start), for clients to trust.
    var certificate: URL { folder.appendingPathComponent("mitmproxy-ca-cert.pem") }
    let folder: URL

    /// mitmdump, trusting `upstreamCA` (a PEM file) for the upstreams' HTTPS as well as the system's roots.
    static func start(trusting upstreamCA: String) async throws -> Mitmdump {
        let candidates = [ProcessInfo.processInfo.environment["MITMDUMP"], ".venv-browser/bin/mitmdump"].compactMap { $0 }
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }).map(URL.init(fileURLWithPath:))
                ?? executableOnPath("mitmdump") else { throw BenchFailure("no mitmdump") }
        let folder = temporaryDirectory("mitmdump")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let port = try freePort()
        let process = try ChildProcess(path, arguments: ["-q", "--listen-host", "127.0.0.1", "-p", String(port),
                                                          "--set", "confdir=\(folder.path)", "--set", "ssl_verify_upstream_trusted_ca=\(upstreamCA)",
                                                          "-w", folder.appendingPathComponent("flows").path],
                                       stdin: .null, stdout: .null, stderr: .null)
        if await waitUntilListening(port) { return Mitmdump(process: process, port: port, folder: folder) }
        process.signal(SIGTERM)
        throw BenchFailure("mitmdump did not start listening")
    }

    func stop() async {
        process.signal(SIGTERM)
        while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
    }

}

/// A loopback port nothing listens on now, for a child process to listen on.
func freePort() throws -> Int {
    let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
    defer { try? channel.close().wait() }
    return channel.localAddress?.port ?? 0
}

/// Waits until something accepts connections on `port` (at most 10 s).
func waitUntilListening(_ port: Int) async -> Bool {
    for _ in 0..<200 {
        if (try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get())
            .map({ $0.close(promise: nil) }) != nil {
            return true
        }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return false
}

/// The app's upstream on loopback: `/2k` and `/18k` answer JSON bodies of about that size, keep-alive; `/2k-unique...` the
/// 2k body with the request's URI in it, a body of its own for every URL.
final class BenchUpstream: Sendable {
    private let channel: any Channel
    let port: Int
    /// The requests it has answered: what a proxy in front of it sent on (fewer than it answered when it collapsed some).
    var answered: Int { counter.count.load(ordering: .relaxed) }
    private let counter: Counter

    private final class Counter: Sendable {
        let count = Atomic<Int>(0)
    }

    private init(channel: any Channel, counter: Counter) {
        self.channel = channel
        self.counter = counter
        port = channel.localAddress?.port ?? 0
    }

    /// The upstreams' own event loops, as if they ran in a process of their own (an app's upstream does): on the proxy's
    /// loops, an upstream would answer the proxy's request on the thread that sent it, sparing the proxy the wake-ups
    /// a real upstream costs it.
    private static let loops = MultiThreadedEventLoopGroup(numberOfThreads: 2)

    /// Plain HTTP, or HTTPS with `tls`.
    static func start(tls: NIOSSLContext? = nil) async throws -> BenchUpstream {
        let small = body(bytes: 2 * 1024), large = body(bytes: 18 * 1024)
        let counter = Counter()
        let channel = try await ServerBootstrap(group: loops)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(small: small, large: large, counter: counter))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return BenchUpstream(channel: channel, counter: counter)
    }

    func stop() async { try? await channel.close() }

    /// A JSON array of objects, `bytes` long or a little more.
    private static func body(bytes: Int) -> ByteBuffer {
        var text = "["
        var index = 0
        while text.utf8.count < bytes {
            text += (index == 0 ? "" : ",") + #"{"id":\#(index),"name":"Character \#(index)","status":"Alive","species":"Human"}"#
            index += 1
        }
        return ByteBuffer(string: text + "]")
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        private let small: ByteBuffer, large: ByteBuffer
        private var uri = ""
        /// Bytes of a `/stream?bytes=N` answer still to write; written while the connection takes them.
        private var remaining = 0
        /// Body bytes of the request being read (an `/upload`).
        private var uploaded = 0
        private let part = ByteBuffer(repeating: 0x61, count: 64 << 10)
        private let counter: Counter

        init(small: ByteBuffer, large: ByteBuffer, counter: Counter) {
            self.small = small
            self.large = large
            self.counter = counter
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                uri = head.uri
                uploaded = 0
                counter.count.add(1, ordering: .relaxed)
            case .body(let part):
                uploaded += part.readableBytes
            case .end where uri.hasPrefix("/upload"):
                // How many body bytes arrived, as the answer.
                let count = ByteBuffer(string: String(uploaded))
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok,
                                                                     headers: ["Content-Length": String(count.readableBytes)]))),
                              promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(count))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            case .end where uri.hasPrefix("/stream"):
                // A body of the asked size, chunked (no size declared), written only as fast as the reader takes it.
                remaining = Int(uri.split(separator: "=").last ?? "") ?? 0
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok,
                                                                     headers: ["Content-Type": "application/octet-stream"]))),
                              promise: nil)
                pump(context)
            case .end where uri.hasPrefix("/2k-unique"):
                // The 2k body with the request's own URI in it: every answer a body of its own, which the request log
                // cannot share with another record.
                var body = ByteBuffer(string: #"{"uri":""# + uri.filter { $0 != "\"" && $0 != "\\" } + #"","items":"#)
                body.writeImmutableBuffer(small)
                body.writeString("}")
                respond(body, context)
            case .end:
                respond(uri.hasSuffix("/18k") ? large : small, context)
            }
        }

        private func respond(_ body: ByteBuffer, _ context: ChannelHandlerContext) {
            let head = HTTPResponseHead(version: .http1_1, status: .ok,
                                        headers: ["Content-Type": "application/json", "Content-Length": String(body.readableBytes)])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            if remaining > 0, context.channel.isWritable { pump(context) }
            context.fireChannelWritabilityChanged()
        }

        private func pump(_ context: ChannelHandlerContext) {
            while remaining > 0, context.channel.isWritable {
                let count = min(part.readableBytes, remaining)
                context.write(wrapOutboundOut(.body(.byteBuffer(part.getSlice(at: part.readerIndex, length: count)!))), promise: nil)
                remaining -= count
            }
            if remaining == 0 { context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil) } else { context.flush() }
        }
    }
}
