import Foundation
import KioskApp
import KioskDebugger
import KioskCore
import KioskDemoUpstream
import KioskStore
import KioskTestSupport
import Testing

/// Data that must survive races, broken upstream pages and a log that cannot open.
@Suite("Nothing lost", .serialized)
struct NothingLostTests {
    @Test("a 304 that arrives after another process cleared the page stores the page again instead of failing")
    func notModifiedAfterClear() async throws {
        try await withHarness { h in
            // Given a stored Rick and Morty page that has gone stale
            let request = PageRequest(source: .rickandmorty, page: 2)
            let first = try await h.catalog.page(request)
            await h.now.advance(by: .seconds(2 * 86400))
            try await h.setFaults { $0.latencyMilliseconds = 400 }
            let asked = await h.demo.requestCount(pathPrefix: "/api/character?page=2")

            // When its revalidation is in flight (the upstream has the request and takes its time)
            // while `kiosk cache clear` runs elsewhere
            let revalidation = Task { try await h.catalog.page(request) }
            while await h.demo.requestCount(pathPrefix: "/api/character?page=2") == asked {
                try await Task.sleep(for: .milliseconds(5))
            }
            try h.database.clearCache()
            #expect(try h.database.snapshot(forKey: request.cacheKey) == nil)
            let update = try await revalidation.value

            // Then the 304 is answered and the page is stored again, whole
            #expect(update.origin == .notModified)
            let stored = try #require(try h.database.snapshot(forKey: request.cacheKey))
            #expect(stored.page.items.map(\.itemID) == first.page.items.map(\.itemID))
        }
    }

    @Test("items of one page sharing an id are all kept, shown the same offline as online, and reachable")
    func duplicateIDsKept() async throws {
        try await withHarness { h in
            // Given an upstream page in which three different characters say `"id": 0`
            let request = PageRequest(source: .rickandmorty)
            _ = try await h.catalog.page(request)
            let log = try #require(h.kiosk.requestLog)
            try log.flush()
            let captured = try #require(try log.fullRecords(matching: RequestFilter(source: .rickandmorty)).first)
            let body = try #require(captured.responseBody?.data)
            var document = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            var results = try #require(document["results"] as? [[String: Any]])
            for index in 0..<3 { results[index]["id"] = 0 }
            document["results"] = results
            _ = try h.kiosk.debugger.mocks.add([MockRule(urlPattern: captured.url, body: try JSONSerialization.data(withJSONObject: document))])

            // When the page is fetched
            let online = try await h.catalog.page(request, policy: .force)

            // Then all three are there under ids of their own, in order
            #expect(online.page.items.count == 20)
            #expect(Array(online.page.items.prefix(3).map(\.itemID)) == ["0", "0-2", "0-3"])
            #expect(Set(online.page.items.map(\.itemID)).count == 20)
            // And offline shows exactly the same
            let offline = try await h.catalog.page(request, policy: .offline)
            #expect(offline.page.items == online.page.items)
            // And each opens, even asked to refresh (the upstream cannot be asked about `0-2`)
            let second = try await h.catalog.item(source: .rickandmorty, itemID: "0-2", policy: .force)
            #expect(second.item.title == online.page.items[1].title)
        }
    }

    @Test("when the request log cannot open, Kiosk still reads and writes its store, without capture, and says so")
    func logThatCannotOpen() async throws {
        // Given a data folder where the request log's file cannot be created (a folder sits at its path)
        let folder = TemporaryDirectory.url("kiosk-nolog")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("kiosk-log.sqlite/blocked"),
                                                withIntermediateDirectories: true)
        let demo = DemoUpstream()
        try await demo.start()
        var configuration = KioskConfiguration(dataDirectory: folder)
        configuration.sources.dogsURL = await demo.dogsURL

        // When Kiosk starts
        let kiosk = try Kiosk(configuration: configuration)

        // Then it works without capture and says why
        #expect(kiosk.requestLog == nil)
        #expect(kiosk.warnings.first?.contains("request log cannot be opened") == true)
        let dogs = try await kiosk.catalog.page(PageRequest(source: .dogs))
        #expect(!dogs.page.items.isEmpty)
        await kiosk.shutdown()
        await demo.stop()
    }
}
