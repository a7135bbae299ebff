// The network debugger's request log: insert throughput, search over 100,000 logged requests,
// file size and bounds, memory. Called from main.swift; prints `[log] ...` lines.
import Foundation
import KioskCore
import KioskDebugger
import KioskStore

/// Runs the request log benchmarks (20,000 records instead of 100,000 with `quick`).
func runLogBenchmarks(quick: Bool) throws {
    let total = quick ? 20_000 : 100_000
    let folder = temporaryDirectory("log")
    defer { try? FileManager.default.removeItem(at: folder) }
    print("[log] peak RSS before: \(peakRSSKilobytes() / 1024) MB, current \(logCurrentRSSKilobytes() / 1024) MB")

    // 1. Insert throughput through the capture path (enqueue), flushed every 1,000 records, with
    //    a bound high enough to keep every record for the search figures below.
    let path = folder.appendingPathComponent("kiosk-log.sqlite").path
    let log = try RequestLog.open(at: path, configuration: RequestLog.Configuration(maxBytes: 4 << 30, maxAge: 30 * 86400))
    var generator = LogRecordGenerator()
    var enqueueSamples: [Double] = []
    enqueueSamples.reserveCapacity(total)
    let clock = ContinuousClock()
    let insertStart = clock.now
    for index in 0..<total {
        let record = generator.next()
        let start = clock.now
        log.enqueue(record)
        enqueueSamples.append(seconds(clock.now - start))
        if index % 1000 == 999 { try log.flush() }
    }
    try log.flush()
    // Until every record is searchable: the indexing passes that ran meanwhile and the rest.
    try log.updateSearchIndex()
    let insertSeconds = seconds(clock.now - insertStart)
    print(String(format: "[log] insert via enqueue+flush, then indexed: %d records in %.2f s = %.0f records/s, %d dropped",
                 total, insertSeconds, Double(total) / insertSeconds, log.droppedCount))
    print("[log] enqueue call (the capture path's cost): p50 \(logMicroseconds(percentile(enqueueSamples, 50))), "
        + "p99 \(logMicroseconds(percentile(enqueueSamples, 99)))")
    enqueueSamples = []

    // 2. Search over the whole log: the list view's first page (100 records, newest first).
    let queries: [(String, RequestFilter)] = [
        ("URL word 'character'", RequestFilter(text: "character")),
        ("body word 'squanchy'", RequestFilter(text: "squanchy")),
        ("2-letter prefix 'ci'", RequestFilter(text: "ci")),
        ("2 words 'morty cit'", RequestFilter(text: "morty cit")),
        // Words joined by a symbol are found together in a URL; a URL holding them apart is no match.
        ("joined words 'page=7'", RequestFilter(text: "page=7")),
        ("joined, apart in every URL 'character/?page=43'", RequestFilter(text: "character/?page=43")),
        ("rare number '4821'", RequestFilter(text: "4821")),
        ("no match 'zzqxv'", RequestFilter(text: "zzqxv")),
        ("hostile 'NEAR(\" *'", RequestFilter(text: "NEAR(\" *")),
        ("text + 5xx", RequestFilter(text: "api", statusClass: .serverError)),
        ("status 5xx only", RequestFilter(statusClass: .serverError)),
        ("decision offline", RequestFilter(decision: .offline)),
        (">= 1 s", RequestFilter(minimumDuration: 1)),
        ("page 2 of 'json'", RequestFilter(text: "json", beforeID: Int64(total / 2))),
        // The filter language's criteria (RequestFilter+Language.swift): decision groups, Cache-Status
        // prefixes (every exchange here is conditional, so nothing is `fwd=miss`: a walk of every row),
        // exact codes, negations, and the issue's example.
        ("cache:stale (3 decisions)", try RequestFilter(parsing: "cache:stale")),
        ("cache:hit (Cache-Status prefix)", try RequestFilter(parsing: "cache:hit")),
        ("cache:miss (no match)", try RequestFilter(parsing: "cache:miss")),
        ("status:304,503 (codes)", try RequestFilter(parsing: "status:304,503")),
        ("-source:rickandmorty", try RequestFilter(parsing: "-source:rickandmorty")),
        ("has:error", try RequestFilter(parsing: "has:error")),
        ("endpoint:image slow:>300ms", try RequestFilter(parsing: "endpoint:image slow:>300ms")),
        ("the issue's example", try RequestFilter(parsing: "status:5xx source:nyt cache:stale method:GET slow:>500ms has:error")),
    ]
    let iterations = quick ? 60 : 200
    var worstP95 = 0.0
    var allSamples: [Double] = []
    for (name, filter) in queries {
        _ = try log.records(matching: filter)
        var found = 0
        let samples = try logTimings(iterations) { found = try log.records(matching: filter).count }
        worstP95 = max(worstP95, percentile(samples, 95))
        allSamples += samples
        print("[log] search \(name) over \(total): p50 \(ms(percentile(samples, 50))), p95 \(ms(percentile(samples, 95))), \(found) shown")
    }
    print("[log] search, all queries: p95 \(ms(percentile(allSamples, 95))), worst query p95 \(ms(worstP95))  (target p95 <= 20 ms)")
    var detailID: Int64 = 1
    let details = try logTimings(iterations) {
        _ = try log.record(id: detailID)
        detailID = detailID % Int64(total) + 7919
    }
    print("[log] detail with bodies: p50 \(ms(percentile(details, 50))), p95 \(ms(percentile(details, 95)))")

    // 3. Size on disk, unbounded, then the same records under a small bound.
    let unboundedFile = logFileBytes(path)
    print(String(format: "[log] %d records: %.1f MB stored (sizeInBytes), %.1f MB on disk with index and WAL (%.2fx)",
                 total, megabytes(try log.sizeInBytes()), megabytes(unboundedFile),
                 Double(unboundedFile) / Double(max(1, try log.sizeInBytes()))))

    let limit: Int64 = quick ? 5 << 20 : 50 << 20
    let boundedPath = folder.appendingPathComponent("kiosk-log-bounded.sqlite").path
    let bounded = try RequestLog.open(at: boundedPath, configuration: RequestLog.Configuration(maxBytes: limit))
    generator = LogRecordGenerator()
    var rssSamples: [Int] = []
    // Timed from the record that fills the log: from then on every record stored evicts one, as in a busy proxy's log.
    var steadyStart: (clock: ContinuousClock.Instant, cpu: Double, index: Int)?
    for index in 0..<total {
        bounded.enqueue(generator.next())
        if index % 1000 == 999 {
            try bounded.flush()
            if steadyStart == nil, try bounded.sizeInBytes() > limit - limit / 5 {
                steadyStart = (clock.now, processCPUSeconds(), index + 1)
            }
        }
        if index % (total / 4) == total / 4 - 1 { rssSamples.append(logCurrentRSSKilobytes() / 1024) }
    }
    try bounded.flush()
    try bounded.updateSearchIndex()
    if let steadyStart {
        let records = total - steadyStart.index
        let elapsed = seconds(clock.now - steadyStart.clock)
        let cpu = processCPUSeconds() - steadyStart.cpu
        print(String(format: "[log] full log (each record stored evicts one, indexed): %d records at %.0f records/s, %.0f µs of CPU each",
                     records, Double(records) / elapsed, cpu / Double(records) * 1e6))
    }
    let boundedFile = logFileBytes(boundedPath)
    let boundedWAL = logSingleFileBytes(boundedPath + "-wal")
    // On disk: the records, their index (which keeps deletion markers until FTS5 merges its
    // segments), pages freed by eviction awaiting reuse, and the WAL (cut to 4 MB at checkpoints).
    print(String(format: "[log] with maxBytes %.0f MB: %d records kept, %.1f MB stored (within limit: %@), %.1f MB on disk (WAL %.1f MB)",
                 megabytes(limit), try bounded.count(), megabytes(try bounded.sizeInBytes()),
                 try bounded.sizeInBytes() <= limit ? "yes" : "NO", megabytes(boundedFile), megabytes(boundedWAL)))
    print("[log] current RSS at 25/50/75/100% of the bounded run: \(rssSamples.map { "\($0) MB" }.joined(separator: ", "))")
    print("[log] peak RSS after: \(peakRSSKilobytes() / 1024) MB")
}

/// Plausible debugger traffic, deterministic: catalog API pages with JSON bodies, images with
/// binary bodies, 304 revalidations, and failures.
struct LogRecordGenerator {
    private var seed: UInt64 = 0x5EED
    private var index = 0
    private static let words = ["Rick", "Morty", "Summer", "Beth", "Jerry", "Squanchy", "Birdperson", "Citadel",
                                "Gazorpazorp", "Cronenberg", "Meeseeks", "Plumbus", "Unity", "Tammy", "Alive",
                                "Dead", "unknown", "Human", "Alien", "Humanoid", "Earth", "Anatomy", "Park",
                                "Froopyland", "Pickle", "Szechuan", "Krombopulos", "Michael", "Noob", "Glootie"]

    private mutating func random(_ bound: Int) -> Int {
        seed = seed &* 6364136223846793005 &+ 1442695040888963407
        return Int(seed >> 33) % bound
    }

    private mutating func word() -> String { Self.words[random(Self.words.count)] }

    mutating func next() -> RequestRecord {
        index += 1
        let started = Date().addingTimeInterval(-Double(100_000 - index % 100_000) * 0.5)
        let headers = [RequestRecord.HeaderField(name: "Accept", value: "application/json"),
                       .init(name: "User-Agent", value: "Kiosk/1.0"), .init(name: "If-None-Match", value: "\"v\(index)\"")]
        let responseHeaders = [RequestRecord.HeaderField(name: "Content-Type", value: "application/json; charset=utf-8"),
                               .init(name: "Cache-Control", value: "max-age=300"), .init(name: "ETag", value: "\"v\(index + 1)\""),
                               .init(name: "Date", value: "Mon, 02 Jun 2025 10:00:00 GMT")]
        let kind = random(100)
        if kind < 50 {
            // A catalog page: a JSON answer of a few characters.
            let page = random(42) + 1
            let (source, url): (SourceID, String) = switch random(3) {
            case 0: (.rickandmorty, "https://rickandmortyapi.com/api/character/?page=\(page)&name=\(word().lowercased())")
            case 1: (.nyt, "https://api.nytimes.com/svc/topstories/v2/\(["world", "arts", "science"][random(3)]).json?api-key=REDACTED")
            default: (.marvel, "https://gateway.marvel.com/v1/public/characters?offset=\(page * 20)&apikey=REDACTED&ts=\(index)&hash=REDACTED")
            }
            var body = "{\"info\":{\"count\":826,\"pages\":42,\"next\":\"\(url)\"},\"results\":["
            for item in 0..<(3 + random(4)) {
                body += "{\"id\":\(random(9000) + item),\"name\":\"\(word()) \(word())\",\"status\":\"\(word())\","
                    + "\"species\":\"\(word())\",\"origin\":{\"name\":\"\(word()) (C-\(random(999)))\"},"
                    + "\"created\":\"2017-11-04T18:48:46.250Z\"},"
            }
            body += "{}]}"
            let status = random(50) == 0 ? 500 + random(4) : 200
            return RequestRecord(startedAt: started, source: source, endpoint: "\(source.rawValue).list", method: "GET",
                                 url: url, requestHeaders: headers, status: status, responseHeaders: responseHeaders,
                                 responseBody: CapturedBody(data: Data(body.utf8), originalSize: body.utf8.count),
                                 timings: RequestTimings(queued: 0.0001, connect: 0.01, firstByte: 0.05 + Double(random(100)) / 1000,
                                                         download: 0.002, total: 0.07 + Double(random(2000)) / 1000),
                                 decision: random(3) == 0 ? .staleWhileRevalidate : .network)
        } else if kind < 80 {
            // An image: a binary body (the captured prefix).
            var bytes = [UInt8](repeating: 0, count: 1024 + random(1024))
            bytes[0] = 0xFF; bytes[1] = 0xD8
            for offset in stride(from: 2, to: bytes.count, by: 7) { bytes[offset] = UInt8(truncatingIfNeeded: random(256)) }
            return RequestRecord(startedAt: started, source: .rickandmorty, endpoint: "image", method: "GET",
                                 url: "https://rickandmortyapi.com/api/character/avatar/\(random(826)).jpeg",
                                 requestHeaders: headers, status: 200, responseHeaders: responseHeaders,
                                 responseBody: CapturedBody(data: Data(bytes), originalSize: 40_000 + random(20_000)),
                                 timings: RequestTimings(total: 0.02 + Double(random(300)) / 1000), decision: .network)
        } else if kind < 95 {
            // A revalidation: 304, no body.
            return RequestRecord(startedAt: started, source: .nyt, endpoint: "nyt.topstories", method: "GET",
                                 url: "https://api.nytimes.com/svc/topstories/v2/home.json?api-key=REDACTED",
                                 requestHeaders: headers, status: 304, responseHeaders: responseHeaders,
                                 timings: RequestTimings(total: 0.04), decision: .revalidated)
        } else {
            // A failure: no response.
            return RequestRecord(startedAt: started, source: .dogs, endpoint: "dogs.list", method: "GET",
                                 url: "https://dogs.example.com/dogs.json", requestHeaders: headers,
                                 error: "The upstream could not be reached (connection refused)",
                                 timings: RequestTimings(total: 5), decision: .offline)
        }
    }
}

/// Times `body` `iterations` times (synchronously: the log's API is synchronous).
private func logTimings(_ iterations: Int, _ body: () throws -> Void) rethrows -> [Double] {
    let clock = ContinuousClock()
    var samples: [Double] = []
    samples.reserveCapacity(iterations)
    for _ in 0..<iterations {
        let start = clock.now
        try body()
        samples.append(seconds(clock.now - start))
    }
    return samples
}

private func logMicroseconds(_ value: Double) -> String { String(format: "%.1f µs", value * 1e6) }

private func megabytes(_ bytes: Int64) -> Double { Double(bytes) / 1_048_576 }

/// The database file plus its WAL.
/// The CPU time this process has used, user and system, in seconds.
private func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

private func logFileBytes(_ path: String) -> Int64 {
    logSingleFileBytes(path) + logSingleFileBytes(path + "-wal")
}

/// One file's size, 0 when it does not exist.
private func logSingleFileBytes(_ path: String) -> Int64 {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
}

/// The resident set size now (peakRSSKilobytes is the high-water mark, which cannot show that
/// memory stays flat after an earlier peak).
private func logCurrentRSSKilobytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }
    return -1
}
