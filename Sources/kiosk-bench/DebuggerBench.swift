// The network debugger's console figures: the console's first screen over a log of 100,000 exchanges,
// the live feed's delivery time at 100 exchanges a second, and the diff of two 1 MB JSON answers.
import AsyncHTTPClient
import Foundation
import KioskApp
import KioskCore
import KioskDebugger
import KioskDemoUpstream
import KioskStore
import NIOCore
import NIOHTTP1
import Synchronization

/// Prints the `[console]` figures; a failure is printed and the run goes on.
func debuggerBenchmarks(demo: DemoUpstream, quick: Bool) async {
    diffBenchmark(quick: quick)
    do {
        try await consoleBenchmarks(demo: demo, quick: quick)
    } catch {
        print("[console] failed: \(error)")
    }
}

// MARK: - Diff

/// Two ~1 MB JSON answers (5,000 characters), 1% of whose names differ, one item more in the newer.
func diffBenchmark(quick: Bool) {
    func body(_ count: Int, renamed: Bool) -> Data {
        let items = (0..<count).map { index in
            let name = renamed && index % 100 == 7 ? "Renamed \(index)" : "Character \(index)"
            return #"{"id":\#(index),"name":"\#(name)","status":"Alive","species":"Human","type":"","gender":"Female","#
                + #""origin":{"name":"Earth (C-137)","url":"https://rickandmortyapi.com/api/location/1"},"#
                + #""image":"https://rickandmortyapi.com/api/character/avatar/\#(index).jpeg","episode":["e1","e2"]}"#
        }
        return Data((#"{"info":{"count":\#(count)},"results":["# + items.joined(separator: ",") + "]}").utf8)
    }
    func record(_ id: Int64, _ data: Data) -> RequestRecord {
        RequestRecord(id: id, startedAt: Date(), source: .rickandmorty, endpoint: "rickandmorty.characters", method: "GET",
                      url: "https://bench.test/api/character", status: 200,
                      responseBody: CapturedBody(data: data, originalSize: data.count), timings: RequestTimings(total: 0.1), decision: .network)
    }
    let old = record(1, body(5000, renamed: false)), new = record(2, body(5001, renamed: true))
    var changes = 0
    let samples = (0..<(quick ? 5 : 15)).map { _ in
        let clock = ContinuousClock()
        let start = clock.now
        if case .json(let found, _) = ExchangeDiff(before: old, after: new).body { changes = found.count }
        return seconds(clock.now - start)
    }
    print(String(format: "[console] diff of two JSON answers of %.2f and %.2f MB (parse both + compare): p50 %@, p95 %@, %d changes  (target <= 200 ms)",
                 Double(old.responseBody!.data.count) / 1_048_576, Double(new.responseBody!.data.count) / 1_048_576,
                 ms(percentile(samples, 50)), ms(percentile(samples, 95)), changes))
}

// MARK: - First screen and live delivery

func consoleBenchmarks(demo: DemoUpstream, quick: Bool) async throws {
    let total = quick ? 20_000 : 100_000
    let configuration = try await benchConfiguration(demo, name: "console")
    let log = try RequestLog.open(at: configuration.requestLogURL.path,
                                  configuration: RequestLog.Configuration(maxBytes: 4 << 30, maxAge: 30 * 86400))
    var generator = LogRecordGenerator()
    for index in 0..<total {
        log.enqueue(generator.next())
        if index % 1000 == 999 { try log.flush() }
    }
    try log.flush()
    // The figures below are of reading: the fill's indexing is done first (LogBench times it).
    try log.updateSearchIndex()
    let kiosk = try Kiosk(configuration: configuration, dependencies: .init(requestLog: log))
    defer { try? FileManager.default.removeItem(at: configuration.dataDirectory) }
    do {
        try await withWebServer(kiosk: kiosk) { port in
            let base = "http://127.0.0.1:\(port)"
            // 1. The console's first screen: newest 100 rows, the count, the live feed's place, rendered.
            for _ in 0..<20 { _ = try await getOK(base + "/debug") }
            let firstScreen = try await measure(quick ? 60 : 200) { _ = try await getOK(base + "/debug") }
            print("[console] first screen /debug over \(total) logged exchanges, sequential over one keep-alive connection: "
                + "p50 \(ms(percentile(firstScreen, 50))), p95 \(ms(percentile(firstScreen, 95)))  (target p95 <= 50 ms)")
            let filtered = try await measure(quick ? 60 : 200) { _ = try await getOK(base + "/debug?status=5xx&q=character") }
            print("[console] first screen filtered (5xx + text) over \(total): p50 \(ms(percentile(filtered, 50))), p95 \(ms(percentile(filtered, 95)))")

            // 2. Delivery over the live feed at 100 exchanges a second: from the capture path's enqueue to
            //    the row read by a console's open stream (includes the log's 50 ms batching on purpose).
            try await liveDelivery(base: base, log: log, seconds: quick ? 3 : 10)
        }
    } catch {
        await kiosk.shutdown()
        throw error
    }
    await kiosk.shutdown()
}

private func liveDelivery(base: String, log: RequestLog, seconds duration: Int) async throws {
    let http = HTTPClient(eventLoopGroupProvider: .singleton)
    var request = HTTPClientRequest(url: base + "/debug/events")
    request.headers.add(name: "Accept", value: "text/event-stream")
    let response: HTTPClientResponse
    do {
        response = try await http.execute(request, timeout: .seconds(30))
    } catch {
        try? await http.shutdown()
        throw error
    }
    let clock = ContinuousClock()
    let sent = Mutex<[Int: ContinuousClock.Instant]>([:])
    let count = duration * 100
    let reader = Task { () -> [Double] in
        var delays: [Double] = []
        var buffer = ""
        for try await chunk in response.body {
            buffer += String(buffer: chunk)
            while let range = buffer.range(of: "\n\n") {
                let frame = buffer[..<range.lowerBound]
                buffer.removeSubrange(..<range.upperBound)
                let now = clock.now
                // Rows carry their URL: `https://bench.test/sse/<n>`.
                for match in frame.matches(of: /bench\.test\/sse\/(\d+)/) {
                    if let index = Int(match.1), let start = sent.withLock({ $0.removeValue(forKey: index) }) {
                        delays.append(seconds(now - start))
                    }
                }
            }
            if delays.count >= count { break }
        }
        return delays
    }
    // Paced by the clock, not by sleeps adding up: the n-th exchange is captured n × 10 ms after the start.
    let start = clock.now
    for index in 0..<count {
        try await clock.sleep(until: start + .milliseconds(10 * index))
        let record = RequestRecord(startedAt: Date(), source: .rickandmorty, endpoint: "rickandmorty.characters", method: "GET",
                                   url: "https://bench.test/sse/\(index)", status: 200, timings: RequestTimings(total: 0.01), decision: .network)
        sent.withLock { $0[index] = clock.now }
        log.enqueue(record)
    }
    let waited = Task {
        try await Task.sleep(for: .seconds(5))
        reader.cancel()
    }
    let delays = (try? await reader.value) ?? []
    waited.cancel()
    try await http.shutdown()
    print("[console] live feed delivery at 100 exchanges/s over \(duration) s: \(delays.count) of \(count) delivered, "
        + "p50 \(ms(percentile(delays, 50))), p95 \(ms(percentile(delays, 95)))  (target p95 <= 100 ms)")
}
