import Foundation
@testable import KioskApp
@testable import KioskDebugger
import KioskCore
import KioskStore
import Testing
import KioskTestSupport

@Suite("Mock rules and HAR replay")
struct MockReplayTests {
    @Test("A session exported as HAR and imported into a fresh Kiosk replays fully offline, logged as mocked")
    func roundTrip() async throws {
        try await withHarness { h in
            // Given a session against the demo upstream, exported as HAR (redacted: Marvel's keys are gone)
            for source in [SourceID.rickandmorty, .marvel, .dogs] { _ = try await h.catalog.page(PageRequest(source: source)) }
            let sessionLog = try #require(h.kiosk.requestLog)
            try sessionLog.flush()
            let archive = try HAR.export(try sessionLog.fullRecords(matching: RequestFilter()))
            // When a fresh Kiosk (its own empty store, the same upstream) imports it and the upstream goes offline
            var configuration = h.kiosk.configuration
            configuration.dataDirectory = h.directory.appendingPathComponent("fresh")
            let fresh = try Kiosk(configuration: configuration, dependencies: .init(now: h.now.dateSource))
            defer { Task { await fresh.shutdown() } }
            let imported = try fresh.debugger.importHAR(archive, origin: "har: session.har")
            #expect(imported.rules.count == 3 && imported.entries == 3 && imported.skipped.isEmpty)
            try await h.setFaults { $0.offline = true }
            // Then every page of the session reads, new real keys in Marvel's URL still matching
            let rick = try await fresh.catalog.page(PageRequest(source: .rickandmorty))
            #expect(rick.page.items.first?.title == "Rick Sanchez" && rick.error == nil)
            let marvel = try await fresh.catalog.page(PageRequest(source: .marvel))
            #expect(marvel.page.items.count == 20 && marvel.error == nil)
            let dogs = try await fresh.catalog.page(PageRequest(source: .dogs))
            #expect(dogs.page.items.count == 5)
            // And a page the session never saw still fails as offline
            await #expect(throws: KioskError.self) { try await fresh.catalog.page(PageRequest(source: .rickandmorty, page: 5)) }
            // And the log says which answers were mocked, and the rules count their hits
            let log = try #require(fresh.requestLog)
            try log.flush()
            let mocked = try log.records(matching: RequestFilter(decision: .mocked))
            #expect(mocked.count == 3)
            #expect(try fresh.debugger.mocks.all().allSatisfy { $0.hits == 1 })
        }
    }

    @Test("A malformed archive is refused with its reason and changes nothing")
    func malformedArchives() async throws {
        let cases: [(String, String)] = [
            ("not json at all", "not JSON"),
            (#"{"entries": []}"#, "no \"log\" object"),
            (#"{"log": {"entries": 3}}"#, "\"log.entries\" is missing or not an array"),
            (#"{"log": {"entries": [{"request": {}}]}}"#, "log.entries[0].request.method is missing or not a string"),
            (#"{"log": {"entries": [{"request": {"method": "GET", "url": "/y"}, "response": {"status": 200}}]}}"#, "log.entries[0].request.url is not an absolute URL"),
            (#"{"log": {"entries": [{"request": {"method": "GET", "url": "https://x/y"}, "response": {"status": "200"}}]}}"#, "log.entries[0].response.status is missing or not a whole number"),
            (#"{"log": {"entries": [{"request": {"method": "GET", "url": "https://x/y"}, "response": {"status": 200, "content": {"text": "%%%", "encoding": "base64"}}}]}}"#, "marked base64"),
        ]
        for (text, reason) in cases {
            do {
                _ = try HAR.importArchive(Data(text.utf8), origin: "test", folder: nil, ignoringQueryItems: [])
                Issue.record("imported \(text)")
            } catch let error as HAR.ImportError {
                #expect(error.message.contains(reason), "\(text): \(error.message)")
            }
        }
    }

    @Test("Rules match whatever the secret query items and their order, by wildcard, by method, and persist")
    func matching() throws {
        let folder = TemporaryDirectory.url("kiosk-mocks")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("mocks.json")
        let rules = MockRules(fileURL: file, redactor: .standard)
        try rules.add([
            MockRule(urlPattern: "https://gateway.marvel.com/v1/public/characters?limit=20&offset=0&apikey=<redacted>&ts=<redacted>&hash=<redacted>",
                     body: Data("marvel".utf8)),
            MockRule(method: "*", urlPattern: "https://rickandmortyapi.com/api/character/*", status: 404),
        ])
        func request(_ url: String, method: String = "GET") -> HTTPRequest {
            HTTPRequest(method: method, url: URL(string: url)!, endpoint: "test")
        }
        #expect(rules.match(request("https://gateway.marvel.com/v1/public/characters?ts=17&offset=0&apikey=real&limit=20&hash=abc"))?.id == 1)
        #expect(rules.match(request("https://gateway.marvel.com/v1/public/characters?limit=20&offset=20&ts=1&apikey=k&hash=h")) == nil)
        #expect(rules.match(request("https://rickandmortyapi.com/api/character/42", method: "HEAD"))?.status == 404)
        #expect(rules.match(request("https://rickandmortyapi.com/api/location/1")) == nil)
        // And a disabled rule is skipped, and the rules and hit counts survive a reload from the file
        try rules.setEnabled(false, id: 2)
        #expect(rules.match(request("https://rickandmortyapi.com/api/character/42")) == nil)
        rules.saveHits(force: true)
        let reopened = MockRules(fileURL: file, redactor: .standard)
        let all = try reopened.all()
        #expect(all.map(\.id) == [1, 2] && all[0].hits == 1 && !all[1].isEnabled)
        // And unknown ids are a clear notFound
        #expect(throws: KioskError.self) { try reopened.remove(id: 99) }
        #expect(URLPattern.wildcard("a*c*e", "abcde") && !URLPattern.wildcard("a*c*e", "abcd") && URLPattern.wildcard("*", "x"))
    }
}
