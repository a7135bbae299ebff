import Foundation
import HummingbirdTesting
import KioskApp
import KioskCore
@testable import KioskDebugger
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

    @Test("the diff compares every phase either exchange went through, a new connection's lookup and handshake against a reused one's none")
    func phases() async throws {
        try await withWeb { harness, client in
            // Given an app's request that opened a connection (lookup and TLS handshake timed), then the same on a reused one
            let log = try #require(harness.kiosk.debugger.log)
            let url = "https://api.example.test/v1/items"
            let opened = try log.append(RequestRecord(startedAt: harness.kiosk.now(), source: nil, endpoint: "api.example.test", method: "GET",
                                                      url: url, status: 200,
                                                      timings: RequestTimings(connect: 0.040, dns: 0.012, tls: 0.021, firstByte: 0.050,
                                                                              download: 0.003, total: 0.095),
                                                      decision: .network))
            let reused = try log.append(RequestRecord(startedAt: harness.kiosk.now(), source: nil, endpoint: "api.example.test", method: "GET",
                                                      url: url, status: 200, timings: RequestTimings(firstByte: 0.045, download: 0.002, total: 0.048),
                                                      decision: .network))

            // When the two are compared
            let diff = try await client.get("/debug/diff?a=\(opened)&b=\(reused)")
            #expect(diff.status == .ok)
            let rows = diff.body.components(separatedBy: "<tr").dropFirst().map { String($0) }
            func row(_ name: String) -> String? { rows.first { $0.contains("<th scope=\"row\">\(name)</th>") } }

            // Then the connection's phases are rows, the reused one's side a dash, and each marked as differing
            for (name, value) in [("Connect", "40"), ("of which DNS lookup", "12"), ("of which TLS handshake", "21")] {
                let line = try #require(row(name), "no \(name) row in \(diff.body)")
                #expect(line.contains("<td>\(value)") && line.contains("<td>—</td>") && line.contains("differs"), "\(line)")
            }
            // And the phases both went through are compared as before, in the order they happen
            let firstByte = try #require(row("Time to first byte"))
            #expect(firstByte.contains("<td>50") && firstByte.contains("<td>45"))
            let order = ["Connect", "of which DNS lookup", "of which TLS handshake", "Time to first byte", "Download", "Total"]
                .compactMap { diff.body.range(of: "<th scope=\"row\">\($0)</th>")?.lowerBound }
            #expect(order.count == 6 && order == order.sorted())
            // And a phase neither went through (waiting for a connection) is no row
            #expect(row("Queued") == nil)
        }
    }

    @Test("a 304 compared with the answer it confirmed says it has no body, not that every line of the other was removed")
    func notModified() async throws {
        try await withWeb { harness, client in
            // Given an answer with a body, then a 304 revalidating it
            let log = try #require(harness.kiosk.debugger.log)
            let url = "https://api.example.test/v1/items"
            let body = #"{"items":[1,2,3]}"#
            let full = try log.append(RequestRecord(startedAt: harness.kiosk.now(), source: nil, endpoint: "api.example.test", method: "GET",
                                                    url: url, status: 200,
                                                    responseBody: CapturedBody(data: Data(body.utf8), originalSize: body.utf8.count),
                                                    timings: RequestTimings(total: 0.01), decision: .network))
            let confirmed = try log.append(RequestRecord(startedAt: harness.kiosk.now(), source: nil, endpoint: "api.example.test", method: "GET",
                                                         url: url, status: 304, timings: RequestTimings(total: 0.01), decision: .revalidated))
            // When they are compared
            let diff = try await client.get("/debug/diff?a=\(full)&b=\(confirmed)")
            // Then the body's section says the 304 has none, and lists no removed line
            #expect(diff.body.contains("#\(confirmed) is a 304: the upstream confirmed the answer Kiosk held"), "\(diff.body)")
            #expect(!diff.body.contains("<del>- "))
        }
    }

    @Test("a JSON answer compared with one cut at capture says the cut one is no whole JSON, not that neither side is JSON")
    func cutAtCapture() async throws {
        try await withWeb { harness, client in
            // Given a whole JSON answer, then one whose body the capture cut
            let log = try #require(harness.kiosk.debugger.log)
            let url = "https://api.example.test/v1/items"
            let whole = #"{"items":[1,2,3]}"#, kept = #"{"items":[1,2,3,4,"#
            let first = try log.append(RequestRecord(startedAt: harness.kiosk.now(), source: nil, endpoint: "api.example.test", method: "GET",
                                                     url: url, status: 200,
                                                     responseBody: CapturedBody(data: Data(whole.utf8), originalSize: whole.utf8.count),
                                                     timings: RequestTimings(total: 0.01), decision: .network))
            let cut = try log.append(RequestRecord(startedAt: harness.kiosk.now(), source: nil, endpoint: "api.example.test", method: "GET",
                                                   url: url, status: 200,
                                                   responseBody: CapturedBody(data: Data(kept.utf8), originalSize: 2_000_000),
                                                   timings: RequestTimings(total: 0.01), decision: .network))
            // When they are compared
            let diff = try await client.get("/debug/diff?a=\(first)&b=\(cut)")
            // Then the body's section names the cut one, and does not say neither side is JSON
            #expect(diff.body.contains("The body of #\(cut) was cut at capture"), "\(diff.body)")
            #expect(!diff.body.contains("Not JSON on both sides"))
        }
    }

    @Test("the diff refuses missing or unknown ids clearly, naming the one it has not; asked with none, it is the form that picks two")
    func badIDs() async throws {
        try await withWeb { _, client in
            let missing = try await client.get("/debug/diff?a=1")
            let garbled = try await client.get("/debug/diff?a=x&b=2")
            let unknown = try await client.get("/debug/diff?a=998&b=999")
            #expect(missing.status == .badRequest)
            #expect(garbled.status == .badRequest)
            #expect(unknown.status == .notFound)
            // One there and one not: the missing one is named
            _ = try await client.get("/api/dogs")
            let list = try await client.get("/debug/api/requests?limit=1")
            let records = try #require(try JSONSerialization.jsonObject(with: Data(list.bytes)) as? [[String: Any]])
            let id = try #require(records.first?["id"] as? Int)
            let one = try await client.get("/debug/diff?a=\(id)&b=999")
            #expect(one.status == .notFound && one.body.contains("999") && !one.body.contains("\(id) or"), "\(one.body.prefix(600))")
            // And with nothing asked, the form to pick the two
            let form = try await client.get("/debug/diff")
            #expect(form.status == .ok && form.body.contains(#"name="a""#) && form.body.contains(#"name="b""#))
        }
    }
}
