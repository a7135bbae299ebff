import Foundation
import KioskApp
import KioskCore
import KioskStore
import KioskTestSupport
import Testing

@Suite("Network capture end to end")
struct CaptureTests {
    @Test("Every upstream exchange and store answer is logged with its cache decision, and no key reaches the log file")
    func capturesDecisions() async throws {
        try await withHarness { h in
            let log = try #require(h.kiosk.requestLog)
            // Given an empty store
            // When Rick and Morty is listed twice (network, then fresh from the store) and Marvel once
            _ = try await h.catalog.page(PageRequest(source: .rickandmorty))
            _ = try await h.catalog.page(PageRequest(source: .rickandmorty))
            _ = try await h.catalog.page(PageRequest(source: .marvel))
            try log.flush()
            // Then the log has the three answers, newest first, with their decisions
            // (on a loaded machine the first exchange may time out and be retried: one record per exchange)
            let records = try log.records(matching: RequestFilter(limit: 10))
            try #require(records.count >= 3)
            #expect(records[0].decision == .network && records[0].source == .marvel && records[0].status == 200)
            #expect(records[1].decision == .fresh && records[1].source == .rickandmorty && records[1].status == nil)
            #expect(records.dropFirst(2).allSatisfy { $0.decision == .network && $0.source == .rickandmorty })
            #expect(records.last?.status == 200 || records.dropFirst(2).contains { $0.status == 200 })
            // And Marvel's ts, apikey and hash are redacted in the URL
            #expect(records[0].url.contains("apikey=<redacted>") && records[0].url.contains("hash=<redacted>")
                    && records[0].url.contains("ts=<redacted>"))
            // And the full record has the response body
            let fetched = try #require(records.dropFirst(2).first { $0.status == 200 })
            let full = try #require(try log.record(id: fetched.id))
            #expect(full.responseBody.map { String(decoding: $0.data, as: UTF8.self).contains("Rick Sanchez") } == true)
            // And no configured key appears anywhere in the log's files
            let keys = try [#require(h.kiosk.configuration.sources.nytAPIKey), #require(h.kiosk.configuration.sources.marvelPublicKey),
                            #require(h.kiosk.configuration.sources.marvelPrivateKey)]
            _ = try await h.catalog.page(PageRequest(source: .nyt))
            try log.flush()
            let folder = h.kiosk.configuration.requestLogURL.deletingLastPathComponent()
            for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.contains("-log") {
                let bytes = try Data(contentsOf: folder.appendingPathComponent(file))
                for key in keys { #expect(bytes.range(of: Data(key.utf8)) == nil, "\(file) holds a key") }
            }
        }
    }

    @Test("A stale page served while revalidating, and one served offline, are logged as such")
    func capturesStaleDecisions() async throws {
        try await withHarness { h in
            let log = try #require(h.kiosk.requestLog)
            // Given a stored page gone stale
            _ = try await h.catalog.page(PageRequest(source: .dogs))
            await h.now.advance(by: .seconds(2 * 3600))
            // When it is requested (revalidated: 304) and then requested again offline after going stale again
            _ = try await h.catalog.page(PageRequest(source: .dogs))
            await h.now.advance(by: .seconds(2 * 3600))
            try await h.setFaults { $0.offline = true }
            _ = try await h.catalog.page(PageRequest(source: .dogs))
            try log.flush()
            // Then the log tells the story: network, stale-while-revalidate + revalidated, stale-while-revalidate + offline
            let decisions = try log.records(matching: RequestFilter(source: .dogs, limit: 20)).reversed().map(\.decision)
            #expect(decisions.first == .network)
            #expect(decisions.contains(.revalidated))
            #expect(decisions.filter { $0 == .staleWhileRevalidate }.count == 2)
            #expect(decisions.last == .offline)
            // And the failed exchange is logged with its error and no status
            let failed = try log.records(matching: RequestFilter(source: .dogs, statusClass: .error, limit: 5))
            #expect(failed.contains { $0.decision == .network && $0.error != nil })
        }
    }
}
