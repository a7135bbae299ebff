import Foundation
import HummingbirdTesting
import KioskApp
import KioskCore
import KioskDebugger
import Testing
@testable import KioskWeb

@Suite("Debugger diff")
struct WebDiffTests {
    @Test("a request's page compares it in one click with the previous answer of its URL (not another URL of its endpoint), path by path")
    func previousAnswer() async throws {
        try await withWeb { harness, client in
            // Given Rick and Morty's first page read twice from the upstream, the second time with a changed name
            _ = try await client.get("/api/rickandmorty")
            let first = try #require(try harness.kiosk.debugger.records(matching: RequestFilter(source: .rickandmorty)).first)
            let body = try #require(try harness.kiosk.debugger.record(id: first.id)?.responseBody?.data)
            let renamed = Data(String(decoding: body, as: UTF8.self).replacingOccurrences(of: "Rick Sanchez", with: "Rick Prime").utf8)
            try harness.kiosk.debugger.mocks.add([MockRule(method: "GET", urlPattern: first.url, status: 200,
                                                          headers: [.init(name: "Content-Type", value: "application/json")],
                                                          body: renamed, origin: "test")])
            // (and page 2 read in between: the same endpoint, another URL)
            _ = try await client.get("/api/rickandmorty?page=2")
            _ = try await client.get("/api/rickandmorty?refresh=1")
            let logged = try harness.kiosk.debugger.records(matching: RequestFilter(source: .rickandmorty, statusClass: .success))
                .filter { $0.endpoint == "rickandmorty.characters" }
            let newer = try #require(logged.first), older = try #require(logged.dropFirst().first { $0.url == newer.url })
            let otherPage = try #require(logged.first { $0.url != newer.url })
            #expect(otherPage.id > older.id)

            // When the newer request's page is opened, and its comparison link followed
            let page = try await client.get("/debug/requests/\(newer.id)")
            let link = "/debug/diff?a=\(older.id)&amp;b=\(newer.id)"
            #expect(page.body.contains(link))
            #expect(!page.body.contains("/debug/diff?a=\(otherPage.id)"))
            let diff = try await client.get("/debug/diff?a=\(older.id)&b=\(newer.id)")

            // Then the name's change is listed by its path with old → new
            #expect(diff.status == .ok)
            #expect(diff.body.contains("<code>$.results[0].name</code>"))
            #expect(diff.body.contains("<del>&quot;Rick Sanchez&quot;</del> → <ins>&quot;Rick Prime&quot;</ins>"))
            // And the times read as the request pages say them (in the page's language), not as ISO 8601
            let spanish = try await client.get("/debug/diff?a=\(older.id)&b=\(newer.id)", headers: [.acceptLanguage: "es"])
            #expect(spanish.body.contains(#"data-local="datetime""#), "\(spanish.body)")
            let started = try #require(try harness.kiosk.debugger.record(id: older.id)).startedAt
            #expect(!spanish.body.contains("<td>" + started.formatted(.iso8601)))
        }
    }

    @Test("the diff refuses missing or unknown ids clearly")
    func badIDs() async throws {
        try await withWeb { _, client in
            let missing = try await client.get("/debug/diff?a=1")
            let garbled = try await client.get("/debug/diff?a=x&b=2")
            let unknown = try await client.get("/debug/diff?a=998&b=999")
            #expect(missing.status == .badRequest)
            #expect(garbled.status == .badRequest)
            #expect(unknown.status == .notFound)
        }
    }
}
