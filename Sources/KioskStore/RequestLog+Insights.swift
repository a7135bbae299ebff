import Foundation
public import KioskCore
import GRDB

extension RequestLog {
    /// The log's insights over every record kept (see `LogInsights`). Three grouped reads; the
    /// durations of upstream exchanges are read sorted by endpoint and duration, so percentiles are
    /// picked, not sorted, in Swift. Traffic of no catalog is told by host (an app's, through `kiosk proxy`), but for
    /// Kiosk's own `ownEndpoints` (images of no catalog, probes) and hosts past the `hosts` with the most bytes, which
    /// are counted together as other traffic.
    public func insights(ownEndpoints: Set<String> = [], hosts: Int = 20) throws -> LogInsights {
        storeWaitingRecords()
        return try read("summarize the request log") { db in
            var endpoints: [LogInsights.Endpoint] = []
            var current: (name: String, durations: [Double])?
            func close() {
                guard let current, let maximum = current.durations.last else { return }
                endpoints.append(LogInsights.Endpoint(endpoint: current.name, count: current.durations.count,
                                                      p50: LogInsights.percentile(current.durations, 0.5),
                                                      p95: LogInsights.percentile(current.durations, 0.95), maximum: maximum))
            }
            // Exchanges that got an answer from the other side: store answers and failures are not latencies, nor is
            // the time a request was held at its request breakpoint, which times the developer (the app waited through
            // it, so its record's total and `queued` keep it). An answer held at the response breakpoint is logged when
            // the upstream answered: its time is the upstream's.
            let rows = try Row.fetchCursor(db, sql: """
                SELECT endpoint, duration FROM logEntry
                WHERE status IS NOT NULL AND decision IN ('network', 'revalidated', 'mocked')
                    AND (touchedBy IS NULL OR touchedBy NOT LIKE '%"kind":"breakpoint"%'
                         OR (touchedBy NOT LIKE '%"requestHeld"%' AND touchedBy NOT LIKE '%"requestEdited"%'))
                ORDER BY endpoint, duration
                """)
            while let row = try rows.next() {
                let name: String = row[0]
                if current?.name != name {
                    close()
                    current = (name, [])
                }
                current?.durations.append(row[1])
            }
            close()
            endpoints.sort { ($0.p95, $0.p50, $1.endpoint) > ($1.p95, $1.p50, $0.endpoint) }

            // A proxied exchange's endpoint is its host.
            var groups = try Row.fetchAll(db, sql: """
                SELECT source, CASE WHEN source IS NULL THEN endpoint END AS host, COUNT(*), COALESCE(SUM(responseBodySize), 0)
                FROM logEntry GROUP BY source, host
                """).map { row in
                let host: String? = row[1]
                return LogInsights.Source(source: (row[0] as String?).flatMap(SourceID.init(rawValue:)), requests: row[2], responseBytes: row[3],
                                          host: host.flatMap { ownEndpoints.contains($0) ? nil : $0 })
            }.sorted { ($0.responseBytes, $0.requests) > ($1.responseBytes, $1.requests) }
            // Kiosk's own traffic of no catalog, and the hosts past the first ones, make one row of other traffic.
            var other = LogInsights.Source(source: nil, requests: 0, responseBytes: 0)
            var shownHosts = 0
            groups.removeAll { group in
                guard group.source == nil else { return false }
                if group.host != nil, shownHosts < hosts {
                    shownHosts += 1
                    return false
                }
                other.requests += group.requests
                other.responseBytes += group.responseBytes
                return true
            }
            if other.requests > 0 {
                let index = groups.firstIndex { ($0.responseBytes, $0.requests) < (other.responseBytes, other.requests) } ?? groups.endIndex
                groups.insert(other, at: index)
            }
            let sources = groups

            var counts: [CacheDecision: Int] = [:]
            var total = 0
            for row in try Row.fetchAll(db, sql: "SELECT decision, COUNT(*) FROM logEntry GROUP BY decision") {
                let count: Int = row[1]
                total += count
                if let decision = CacheDecision(rawValue: row[0]) { counts[decision, default: 0] += count }
            }
            return LogInsights(requests: total, endpoints: endpoints, sources: sources, decisions: LogInsights.Decisions(counts: counts))
        }
    }
}

extension RequestLog {
    /// The id of the latest answer (a record with a status) before `id` to the same method and URL (a GET's, not the CORS
    /// preflight its browser sent first), nil when there is none: what "compare with the previous answer" opens.
    public func previousAnswer(before id: Int64, method: String, url: String) throws -> Int64? {
        storeWaitingRecords()
        return try read("find the previous answer in the request log") { db in
            // No index is needed: the walk goes back by id and stops at the first match.
            try Int64.fetchOne(db, sql: """
                SELECT id FROM logEntry WHERE id < ? AND url = ? AND method = ? AND status IS NOT NULL ORDER BY id DESC LIMIT 1
                """, arguments: [id, url, method])
        }
    }
}

extension RequestLog {
    /// Every endpoint of records without a catalog source, but for `excluded` ones (pictures), with their counts and
    /// latest start, most recently seen first, at most `limit`: the hosts apps reached through `kiosk proxy`.
    /// Each with its paths (`pathsPerHost` at most, the most recent).
    public func endpointsWithoutSource(excluding excluded: Set<String>, limit: Int = 500, pathsPerHost: Int = 20) throws -> [SeenEndpoint] {
        storeWaitingRecords()
        return try read("list the hosts in the request log") { db in
            let hosts = try Row.fetchAll(db, sql: """
                SELECT endpoint, COUNT(*), MAX(startedAt) FROM logEntry WHERE source IS NULL
                GROUP BY endpoint ORDER BY MAX(startedAt) DESC
                """).lazy.compactMap { row -> SeenEndpoint? in
                let name: String = row[0]
                guard !excluded.contains(name) else { return nil }
                return SeenEndpoint(endpoint: name, exchanges: row[1], lastSeen: Date(timeIntervalSinceReferenceDate: row[2]))
            }.prefix(limit).map { $0 }
            // The URL up to its query is the path's key; one pass over the records without a source, grouped.
            var paths: [String: (shown: [SeenPath], more: Int)] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT endpoint, CASE WHEN instr(url, '?') > 0 THEN substr(url, 1, instr(url, '?') - 1) ELSE url END AS path,
                       COUNT(*), MAX(startedAt)
                FROM logEntry WHERE source IS NULL GROUP BY endpoint, path ORDER BY MAX(startedAt) DESC
                """) {
                let name: String = row[0]
                if paths[name, default: ([], 0)].shown.count < pathsPerHost {
                    paths[name, default: ([], 0)].shown.append(SeenPath(url: row[1], exchanges: row[2],
                                                                        lastSeen: Date(timeIntervalSinceReferenceDate: row[3])))
                } else {
                    paths[name, default: ([], 0)].more += 1
                }
            }
            return hosts.map { host in
                var host = host
                host.paths = paths[host.endpoint]?.shown ?? []
                host.morePaths = paths[host.endpoint]?.more ?? 0
                return host
            }
        }
    }

    /// Whether any record kept is a catalog's (has a source): what a proxy's console asks before offering the reader's filters.
    public func holdsSourceTraffic() throws -> Bool {
        storeWaitingRecords()
        return try read("look for the catalogs' requests in the request log") { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM logEntry WHERE source IS NOT NULL)") ?? false
        }
    }

    /// The endpoints of the newest `scanning` records without a catalog source, but for `excluded` ones, most recently
    /// seen first, at most `limit`: the hosts apps reached lately through `kiosk proxy`. Bounded by the records it reads
    /// (a few milliseconds), where grouping the whole log takes tens at 100,000 records: the console's request list
    /// asks on every load, and again as a filter is typed.
    public func recentEndpointsWithoutSource(excluding excluded: Set<String>, limit: Int = 50, scanning: Int = 5000) throws -> [String] {
        storeWaitingRecords()
        return try read("list the recent hosts in the request log") { db in
            try String.fetchAll(db, sql: """
                SELECT endpoint FROM (SELECT endpoint, startedAt FROM logEntry WHERE source IS NULL ORDER BY id DESC LIMIT ?)
                GROUP BY endpoint ORDER BY MAX(startedAt) DESC
                """, arguments: [scanning]).lazy.filter { !excluded.contains($0) }.prefix(limit).map { $0 }
        }
    }
}
