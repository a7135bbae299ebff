import Foundation
import KioskApp
import KioskDebugger
import KioskCore
import KioskNetwork
import KioskSources
import KioskStore
import KioskTestSupport
import Synchronization
import Testing

@Suite("HAR export")
struct HARTests {
    @Test("The export has every field HAR 1.2 requires, Kiosk's cache decisions, and no secret")
    func export() async throws {
        try await withHarness { h in
            let log = try #require(h.kiosk.requestLog)
            // Given traffic to every source, a store answer and a failed exchange
            for source in SourceID.allCases { _ = try await h.catalog.page(PageRequest(source: source)) }
            _ = try await h.catalog.page(PageRequest(source: .dogs))
            try await h.setFaults { $0.offline = true }
            _ = try? await h.catalog.page(PageRequest(source: .rickandmorty, page: 2))
            try log.flush()
            // When the log is exported
            let records = try log.fullRecords(matching: RequestFilter())
            let data = try HAR.export(records)
            // Then the document has the required structure, entry by entry
            let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let harLog = try #require(root["log"] as? [String: Any])
            #expect(harLog["version"] as? String == "1.2")
            let creator = try #require(harLog["creator"] as? [String: Any])
            #expect(creator["name"] as? String == "Kiosk" && creator["version"] is String)
            let entries = try #require(harLog["entries"] as? [[String: Any]])
            // (but the answers from the store, which made no exchange: HAR would take them for failures)
            let exchanges = records.filter { $0.statusClass != .store }
            #expect(records.count > exchanges.count && entries.count == exchanges.count && entries.count >= 5)
            for entry in entries {
                for key in ["startedDateTime", "time", "request", "response", "cache", "timings"] {
                    #expect(entry[key] != nil, "entry lacks \(key)")
                }
                let started = try #require(entry["startedDateTime"] as? String)
                #expect(try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(started) > Date.distantPast)
                let request = try #require(entry["request"] as? [String: Any])
                for key in ["method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"] {
                    #expect(request[key] != nil, "request lacks \(key)")
                }
                let response = try #require(entry["response"] as? [String: Any])
                for key in ["status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize", "bodySize"] {
                    #expect(response[key] != nil, "response lacks \(key)")
                }
                let content = try #require(response["content"] as? [String: Any])
                #expect(content["size"] is Int && content["mimeType"] is String)
                let timings = try #require(entry["timings"] as? [String: Double])
                for key in ["send", "wait", "receive"] { #expect((timings[key] ?? -1) >= 0, "timings.\(key)") }
                // HAR 1.2: the entry's time is the sum of the phases that are not -1
                let time = try #require(entry["time"] as? Double)
                #expect(abs(time - timings.values.filter { $0 >= 0 }.reduce(0, +)) < 0.000_001, "time \(time), timings \(timings)")
                #expect(entry["_kioskDecision"] is String)
                #expect(entry["pageref"] as? String == (harLog["pages"] as? [[String: Any]])?.first?["id"] as? String)
            }
            // And the decisions and the failure are there
            let decisions = Set(entries.compactMap { $0["_kioskDecision"] as? String })
            #expect(decisions.contains("network") && !decisions.contains("fresh"))
            #expect(entries.contains { ($0["response"] as? [String: Any])?["status"] as? Int == 0 && $0["_kioskError"] is String })
            // And a failure says why where Chrome and mitmproxy do, in response._error
            #expect(entries.allSatisfy { entry in
                let response = entry["response"] as? [String: Any]
                return (response?["status"] as? Int == 0) == (response?["_error"] is String)
            })
            // And entries are oldest first
            let times = entries.compactMap { $0["startedDateTime"] as? String }
            #expect(times == times.sorted())
            // And no key appears anywhere in the archive
            let text = String(decoding: data, as: UTF8.self)
            let keys = try [#require(h.kiosk.configuration.sources.nytAPIKey), #require(h.kiosk.configuration.sources.marvelPublicKey),
                            #require(h.kiosk.configuration.sources.marvelPrivateKey)]
            for key in keys { #expect(!text.contains(key)) }
            #expect(text.contains("apikey=<redacted>") || text.contains("apikey=%3Credacted%3E"))
        }
    }

    @Test("cURL commands are redacted and quoted so the shell interprets nothing")
    func curl() async throws {
        // Given a Marvel search signed with real keys, sent with credential headers, a key echoed in a header,
        // and a header a shell would run
        let (publicKey, privateKey, nytKey) = ("marvel-public-0123456789", "marvel-private-0123456789", "nyt-key-0123456789")
        var sources = SourceConfiguration.live
        sources.marvelPublicKey = publicKey
        sources.marvelPrivateKey = privateKey
        sources.nytAPIKey = nytKey
        let configuration = KioskConfiguration(dataDirectory: TemporaryDirectory.url("kiosk-curl"), sources: sources)
        var request = try #require(Sources.make(sources)[.marvel]).listRequest(for: PageRequest(source: .marvel, query: "spider"))
        request.headers["Authorization"] = "Bearer \(nytKey)"
        request.headers["Cookie"] = "session=\(privateKey)"
        request.headers["X-Echo"] = "key=\(nytKey)"
        request.headers["X-Note"] = "it's $(rm -rf ~) `x`"
        let signature = (URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? [])
            .filter { ["ts", "hash"].contains($0.name) }.compactMap(\.value)
        try #require(signature.count == 2)

        // When it is captured as the request log captures it, and turned into a cURL command
        let records = Mutex<[RequestRecord]>([])
        let capture = CapturingTransport(base: ScriptedTransport([.json("{}")]), redactor: configuration.redactor,
                                         sink: { record in records.withLock { $0.append(record.make()) } })
        _ = try await capture.send(request)
        let command = HAR.curl(try #require(records.withLock { $0.first }))

        // Then no key and no signature value survives, each replaced by the marker
        for secret in [publicKey, privateKey, nytKey] + signature {
            #expect(!command.contains(secret), "\(secret) survives in \(command)")
        }
        #expect(command.hasPrefix("curl 'https://gateway.marvel.com/v1/public/characters?"))
        for item in ["ts=<redacted>", "apikey=<redacted>", "hash=<redacted>", "nameStartsWith=spider"] {
            #expect(command.contains(item), "\(item) missing from \(command)")
        }
        #expect(command.contains("-H 'Authorization: <redacted>'") && command.contains("-H 'Cookie: <redacted>'"))
        #expect(command.contains("-H 'X-Echo: key=<redacted>'"))
        // And the shell interprets nothing: every part is single-quoted, a quote closed, escaped and reopened
        #expect(command.contains(#"-H 'X-Note: it'\''s $(rm -rf ~) `x`'"#))
    }
}
