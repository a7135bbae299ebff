import Foundation
import KioskApp
import KioskCore
import KioskStore
import KioskTestSupport
import Testing

/// The image pipeline in-process: a scripted upstream, a real (in-memory) store, a manual clock.
@Suite("Image pipeline over a scripted upstream")
struct ImagePipelineTests {
    let url = URL(string: "https://i.annihil.test/u/prod/marvel/i/mg/1/portrait_xlarge.jpg")!
    let picture = ScriptedTransport.Step.respond(
        200, headers: ["Content-Type": "image/png", "ETag": "\"img-1\"", "Cache-Control": "max-age=60"], body: "png bytes")

    @Test("Concurrent requests for one uncached picture make one upstream fetch, then memory answers")
    func concurrentRequestsShareOneFetch() async throws {
        // Given an upstream that holds its one answer until released
        let upstream = ScriptedTransport([.held(picture)])
        let pipeline = ImagePipeline(transport: upstream, database: try AppDatabase.inMemory())

        // When twenty callers ask for the picture while the fetch is on the wire
        let bodies = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<20 { group.addTask { try await pipeline.image(for: url).data } }
            for _ in 0..<2_000 where upstream.callCount == 0 { try await Task.sleep(for: .milliseconds(1)) }
            try await Task.sleep(for: .milliseconds(20))
            upstream.release()
            return try await group.reduce(into: [Data]()) { $0.append($1) }
        }

        // Then the upstream was asked once and everyone got its bytes; the next request is a memory hit
        #expect(upstream.callCount == 1)
        #expect(bodies.count == 20 && bodies.allSatisfy { $0 == Data("png bytes".utf8) })
        #expect(try await pipeline.image(for: url).origin == .memory)
        #expect(await pipeline.networkFetches == 1)
    }

    @Test("A stored picture is served from disk while fresh, revalidated with its ETag when stale, and kept when the upstream fails")
    func diskRevalidationAndFailure() async throws {
        // Given a picture fetched once (fresh for 60 s) into the store
        let clock = ManualClock()
        let database = try AppDatabase.inMemory()
        let upstream = ScriptedTransport([picture, .respond(304, headers: ["Cache-Control": "max-age=60"]),
                                          .fail(.offline(host: "i.annihil.test"))])
        let first = ImagePipeline(transport: upstream, database: database, now: clock.dateSource)
        #expect(try await first.image(for: url).origin == .network)

        // When a new pipeline (an empty memory cache, as after a restart) asks within the 60 s
        // Then the disk answers without the upstream
        await clock.advance(by: .seconds(30))
        #expect(try await ImagePipeline(transport: upstream, database: database, now: clock.dateSource).image(for: url).origin == .disk)
        #expect(upstream.callCount == 1)

        // When it has gone stale
        await clock.advance(by: .seconds(60))
        let revalidated = try await ImagePipeline(transport: upstream, database: database, now: clock.dateSource).image(for: url)
        // Then it is asked for with its ETag, and the 304 keeps the stored bytes
        #expect(upstream.requests.last?.headers["If-None-Match"] == "\"img-1\"")
        #expect(revalidated.origin == .notModified && revalidated.data == Data("png bytes".utf8))

        // When it is stale again and the upstream is unreachable
        await clock.advance(by: .seconds(120))
        let offline = try await ImagePipeline(transport: upstream, database: database, now: clock.dateSource).image(for: url)
        // Then the stale stored copy is served, marked stale
        #expect(offline.origin == .disk && offline.isStale && offline.data == Data("png bytes".utf8))
        #expect(upstream.callCount == 3)
    }
}
