// The web app's figures: server time for a cached list page over one keep-alive connection, throughput of
// that page against a trivial route (wrk), and the time from `kiosk serve` start to the first page served
// from an existing store. The first two run the web app in-process over the bench's demo upstream; the
// third runs the release `kiosk` binary, since start-up time is only meaningful for a real process.
import AsyncHTTPClient
import Foundation
import KioskProcess
import Hummingbird
import KioskApp
import KioskConsole
import KioskCore
import KioskDemoUpstream
import KioskWeb
import NIOCore
import NIOHTTP1
import UnixSignals

/// A benchmark step that could not produce its figure; printed, and the run goes on.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Prints the `[web]` figures. Failures are printed per figure rather than thrown, so a broken web figure
/// does not hide the memory line or the others.
func webBenchmarks(demo: DemoUpstream, quick: Bool) async {
    do {
        let kiosk = try await makeKiosk(demo, name: "web")
        do {
            try await withWebServer(kiosk: kiosk) { port in
                let base = "http://127.0.0.1:\(port)"
                await cachedListPage(base: base, quick: quick)
                await throughput(base: base, quick: quick)
            }
            await listenerGuard(quick: quick)
        } catch {
            print("[web] in-process server failed: \(error)")
        }
        await kiosk.shutdown()
    } catch {
        print("[web] cannot set up a Kiosk for the web figures: \(error)")
    }
    await serveStartToFirstPage()
}

// MARK: - In-process server

/// Runs the web app over `kiosk` on a free loopback port for the duration of `body`, then stops it.
func withWebServer<T>(kiosk: Kiosk, _ body: (Int) async throws -> T) async throws -> T {
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    let app = try buildApplication(kiosk: kiosk, configuration: WebConfiguration(host: "127.0.0.1", port: 0),
                                   features: { [Console($0)] }) { port in
        portContinuation.yield(port)
        portContinuation.finish()
    }
    // runService builds its own ServiceGroup, and graceful shutdown can only be triggered through it, by
    // a signal; cancelling the task instead makes the server log errors. So the server stops on SIGUSR2,
    // which the bench sends itself, and not on SIGINT/SIGTERM, so Ctrl-C still ends the whole benchmark
    // at once. Finishing the stream when the server stops means a failed bind ends the wait below
    // instead of hanging it.
    let server = Task {
        defer { portContinuation.finish() }
        try await app.runService(gracefulShutdownSignals: [.sigusr2])
    }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next() else {
        let reason: String
        switch await server.result {
        case .success: reason = "it stopped"
        case .failure(let error): reason = "\(error)"
        }
        throw BenchFailure("the web app did not start listening: \(reason)")
    }
    let result: Result<T, any Error>
    do { result = .success(try await body(port)) } catch { result = .failure(error) }
    kill(getpid(), SIGUSR2)
    _ = await server.result
    return try result.get()
}

/// GET `url` and read the whole body (the time to the last byte is what a reader waits for).
func get(_ url: String) async throws -> (status: UInt, bytes: Int) {
    let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
    let body = try await response.body.collect(upTo: 32 << 20)
    return (response.status.code, body.readableBytes)
}

@discardableResult
func getOK(_ url: String) async throws -> Int {
    let (status, bytes) = try await get(url)
    guard status == 200 else { throw BenchFailure("GET \(url): status \(status)") }
    return bytes
}

// MARK: - 1. Cached list page

func cachedListPage(base: String, quick: Bool) async {
    let url = base + "/rickandmorty"
    do {
        // The first request fetches page 1 from the demo upstream and stores it; the next ones are served
        // from the fresh stored snapshot, which is the case measured. The warm-up also opens the client's
        // connection, and since the requests are sequential the pool reuses that one keep-alive connection.
        let size = try await getOK(url)
        for _ in 0..<50 { try await getOK(url) }
        let samples = try await measure(quick ? 100 : 500) { try await getOK(url) }
        print("[web] cached list page /rickandmorty, sequential on one keep-alive connection: p50 \(ms(percentile(samples, 50))), p95 \(ms(percentile(samples, 95)))  (target p50 <= 5 ms)")
        print(String(format: "[web] list page size: %.1f KB of HTML  (target < 100 KB before images)", Double(size) / 1024))
    } catch {
        print("[web] cached list page failed: \(error)")
    }
}

/// What the guard every request passes before routing costs (its Host and its peer read and checked against
/// the listener's policy), alone: a loopback listener's policy and the address a socket reports.
func listenerGuard(quick: Bool) async {
    let policy = ListenerPolicy.loopback(names: ["kiosk.example"], hint: "start it with --allowed-host NAME")
    let iterations = quick ? 20_000 : 200_000
    let answered = await measure(iterations) {
        precondition(policy.refusal(hosts: ["127.0.0.1:8080"], peer: IPAddress(literal: "127.0.0.1")) == nil)
    }
    let refused = await measure(iterations) {
        precondition(policy.refusal(hosts: ["rebound.example:8080"], peer: IPAddress(literal: "127.0.0.1"))?.status == 421)
    }
    print(String(format: "[web] listener guard before routing (Host and peer checked): p50 %.2f µs a request answered (its Host seen before), %.2f µs one refused",
                 percentile(answered, 50) * 1e6, percentile(refused, 50) * 1e6))
}

// MARK: - 2. Throughput with wrk

func throughput(base: String, quick: Bool) async {
    guard let wrk = executableOnPath("wrk") else {
        print("[web] wrk not installed (apt-get install wrk) — throughput skipped")
        return
    }
    let duration = quick ? 2 : 5
    let flags = ["-t2", "-c32", "-d\(duration)s"]
    do {
        // The stylesheet at the address the pages link (it carries the content's fingerprint).
        let stylesheet = try await stylesheetPath(base: base)
        // One after the other on the same server, so the ratio compares the routes and not two runs.
        let list = try await wrkRequestsPerSecond(wrk, flags, url: base + "/rickandmorty")
        let trivial = try await wrkRequestsPerSecond(wrk, flags, url: base + stylesheet)
        let shown = flags.joined(separator: " ")
        print(String(format: "[web] wrk %@, cached list page /rickandmorty: %.0f req/s%@", shown, list.rate, list.note))
        print(String(format: "[web] wrk %@, trivial route %@: %.0f req/s%@", shown, stylesheet, trivial.rate, trivial.note))
        print(String(format: "[web] list / trivial throughput: %.0f%%  (target >= 70%%)", 100 * list.rate / trivial.rate))
    } catch {
        print("[web] throughput failed: \(error)")
    }
}

/// The stylesheet's address as the home page links it (`href="/static/...css..."`).
func stylesheetPath(base: String) async throws -> String {
    let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + "/"), timeout: .seconds(30))
    let page = String(buffer: try await response.body.collect(upTo: 1 << 20))
    guard let start = page.range(of: "href=\"/static/"),
          let end = page[start.upperBound...].firstIndex(of: "\"") else { throw BenchFailure("the home page links no stylesheet") }
    return "/static/" + page[start.upperBound..<end]
}

/// Runs wrk against `url` and reads its "Requests/sec:" line; `note` flags non-2xx answers and socket
/// errors, which would make the rate meaningless.
func wrkRequestsPerSecond(_ wrk: URL, _ flags: [String], url: String) async throws -> (rate: Double, note: String) {
    let (status, output) = try await runToCompletion(wrk, flags + [url])
    let lines = output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    guard status == 0,
          let line = lines.first(where: { $0.hasPrefix("Requests/sec:") }),
          let rate = Double(line.dropFirst("Requests/sec:".count).trimmingCharacters(in: .whitespaces))
    else { throw BenchFailure("wrk \(url) (exit \(status)): \(output)") }
    let problems = lines.filter { $0.hasPrefix("Non-2xx") || $0.hasPrefix("Socket errors") }
    return (rate, problems.isEmpty ? "" : " (\(problems.joined(separator: "; ")))")
}

func executableOnPath(_ name: String) -> URL? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") {
        let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    return nil
}

/// Runs a process to its end and returns its exit status and combined output. The blocking read and
/// wait happen on a dispatch thread, not on the cooperative pool the in-process server's handlers use.
func runToCompletion(_ executable: URL, _ arguments: [String]) async throws -> (status: Int32, output: String) {
    let process = try ChildProcess(executable, arguments: arguments, stdin: .null, stdout: .pipe, stderr: .sameAsOutput)
    let output = process.standardOutput
    let data = await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: output?.readDataToEndOfFile() ?? Data()) }
    }
    // The output is at its end, so the process has exited or is about to; polling avoids a blocking wait.
    while process.isRunning { try await Task.sleep(for: .milliseconds(5)) }
    return (process.waitUntilExit(), String(decoding: data, as: UTF8.self))
}

// MARK: - 3. `kiosk serve` start to first page

func serveStartToFirstPage() async {
    guard let kiosk = Bundle.main.executableURL?.deletingLastPathComponent().appendingPathComponent("kiosk"),
          FileManager.default.isExecutableFile(atPath: kiosk.path)
    else {
        print("[web] no kiosk binary next to kiosk-bench; build it with `swift build -c release --scratch-path .build-release --product kiosk` — serve start-up skipped")
        return
    }
    let dataDirectory = temporaryDirectory("serve")
    defer { try? FileManager.default.removeItem(at: dataDirectory) }
    do {
        // One run on an empty data dir syncs page 1 from the demo upstream into kiosk-demo.sqlite, so the
        // measured runs start from an existing store.
        let cold = try await timeServeToFirstPage(kiosk: kiosk, dataDirectory: dataDirectory)
        var samples: [Double] = []
        for _ in 0..<5 { samples.append(try await timeServeToFirstPage(kiosk: kiosk, dataDirectory: dataDirectory)) }
        print(String(format: "[web] kiosk serve start to first /rickandmorty from an existing store (5 runs): median %.0f ms, max %.0f ms  (target <= 1 s; %.0f ms with an empty store)",
                     percentile(samples, 50) * 1000, samples.max()! * 1000, cold * 1000))
    } catch {
        print("[web] kiosk serve start-up failed: \(error)")
    }
}

/// Starts `kiosk serve --port 0`, waits for its "Kiosk on http://HOST:PORT/" line (printed once the port
/// is bound), GETs /rickandmorty, and returns the time from its start to the end of that 200 response. The
/// process is then stopped with SIGINT (a clean close of the store for the next run) and, whatever
/// happens, killed before returning.
func timeServeToFirstPage(kiosk: URL, dataDirectory: URL) async throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    let process = try ChildProcess(kiosk, arguments: ["serve", "--port", "0", "--data-dir", dataDirectory.path],
                                   stdin: .null, stdout: .pipe, stderr: .pipe)
    let pid = process.pid
    defer {
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
    }
    guard let stdout = process.standardOutput, let stderr = process.standardError else { throw BenchFailure("no pipes") }
    let lines = lineStream(stdout)
    // stderr is drained (a full pipe would block the server) and its tail kept for error messages.
    let errorTail = Task {
        var tail: [String] = []
        for await line in lineStream(stderr) {
            tail.append(line)
            if tail.count > 20 { tail.removeFirst() }
        }
        return tail.joined(separator: "\n")
    }
    // A server that never prints its line or never answers must not hang the benchmark; killing it ends
    // its stdout, which ends the wait below.
    let watchdog = Task {
        try await Task.sleep(for: .seconds(30))
        kill(pid, SIGKILL)
    }
    defer { watchdog.cancel() }

    do {
        var port: Int?
        for await line in lines {
            if let bound = listeningPort(line) { port = bound; break }
        }
        guard let port else { throw BenchFailure("kiosk serve exited (or took over 30 s) before listening") }
        let (status, _) = try await get("http://127.0.0.1:\(port)/rickandmorty")
        let elapsed = seconds(clock.now - start)
        guard status == 200 else { throw BenchFailure("GET /rickandmorty: status \(status)") }
        kill(pid, SIGINT)
        let deadline = clock.now + .seconds(10)
        while process.isRunning {
            guard clock.now < deadline else { throw BenchFailure("kiosk serve did not stop within 10 s of SIGINT") }
            try await Task.sleep(for: .milliseconds(5))
        }
        return elapsed
    } catch {
        kill(pid, SIGKILL)
        let said = await errorTail.value
        throw BenchFailure("\(error)" + (said.isEmpty ? "" : "; kiosk serve's stderr:\n\(said)"))
    }
}

/// The port in serve's "Kiosk on http://127.0.0.1:PORT/  (Ctrl-C to stop)" line, if this is that line.
func listeningPort(_ line: String) -> Int? {
    guard let range = line.range(of: "Kiosk on http://") else { return nil }
    let authority = line[range.upperBound...].prefix { $0 != "/" }
    guard let colon = authority.lastIndex(of: ":") else { return nil }
    return Int(authority[authority.index(after: colon)...])
}

/// The lines a file handle yields until its end, read on a dispatch thread; reading goes on to the end
/// even when nobody consumes the stream any more, so the writer never blocks on a full pipe.
func lineStream(_ handle: FileHandle) -> AsyncStream<String> {
    let (stream, continuation) = AsyncStream.makeStream(of: String.self)
    DispatchQueue.global().async {
        var pending = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        // POSIX read returns what the pipe holds now; FileHandle.read(upToCount:) waits for the full count
        // or the end, which would hold the "Kiosk on" line back until the server exits.
        while true {
            let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            pending.append(contentsOf: buffer[..<count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                continuation.yield(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                pending.removeSubrange(pending.startIndex...newline)
            }
        }
        if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
        continuation.finish()
    }
    return stream
}
