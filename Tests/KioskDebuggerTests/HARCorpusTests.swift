import Foundation
import KioskCore
@testable import KioskDebugger
import Testing

/// Issue 14, section 5: every archive of the shared corpus of real third-party HAR files (written by
/// Chrome, Firefox, Safari, IE, Charles, Fiddler, Insomnia, Playwright, Polly.JS, mitmproxy... and the
/// fixtures of other HAR parsers; /work/shared/corpus/PROVENANCE.md says what each exercises) imports
/// as expected: so many rules, so many entries skipped for each reason, or a refusal naming the JSON
/// path of the problem. The files are read where they are, never copied into the project.
@Suite("HAR import of the real-world corpus")
struct HARCorpusTests {
    /// `../shared/corpus` from the repository's root (this file is `Tests/KioskDebuggerTests/…`).
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("../shared/corpus").standardizedFileURL

    static var corpusExists: Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: corpus.appendingPathComponent("har").path, isDirectory: &isFolder)
            && isFolder.boolValue
    }

    /// What importing a file must give.
    enum Outcome: Sendable, CustomStringConvertible {
        /// So many rules, and so many entries skipped for each reason (absent reasons: none).
        case imports(rules: Int, skipped: [HAR.SkipReason: Int] = [:])
        /// A refusal whose message starts with this (the JSON path first, when the problem has one).
        case refused(String)

        var description: String {
            switch self {
            case .imports(let rules, let skipped):
                "\(rules) rules, skipped \(skipped.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key): \($0.value)" })"
            case .refused(let reason): "refused: \(reason)"
            }
        }
    }

    /// Every archive of the corpus (path under it) and what it must give. Rules + skipped = entries.
    static let expectations: [String: Outcome] = [
        // Browsers. A body the browser did not keep (no text, a size above 0) is skipped, never replayed empty;
        // a 304 whose request was answered in full earlier keeps that answer.
        "har/brave-chromium-devtools.har": .imports(rules: 15, skipped: [.bodyNotRecorded: 3]),
        "har/browsertime-chrome49_no-bodies.har": .imports(rules: 1, skipped: [.bodyNotRecorded: 9]),
        "har/chrome-devtools_mitmproxy-suite.har": .imports(rules: 2, skipped: [.failed: 1]),
        "har/chrome-devtools_timed-out-status0.har": .imports(rules: 12, skipped: [.failed: 21]),
        "har/chrome51-devtools_status0-badssl.har": .imports(rules: 0, skipped: [.failed: 3, .bodyNotRecorded: 1]),
        "har/firebug-1.7_from-cache-304.har": .imports(rules: 1),
        "har/firebug-1.8_redirects-relative-location.har": .imports(rules: 9, skipped: [.bodyNotRecorded: 7]),
        "har/firefox-45_har-1.1_no-bodies.har": .imports(rules: 1, skipped: [.bodyNotRecorded: 2]),
        "har/firefox-47_status0-badssl.har": .imports(rules: 1, skipped: [.failed: 2]),
        "har/firefox-72_httpbin-binary-postdata-json.har": .imports(rules: 1, skipped: [.answeredAgain: 1]),
        "har/firefox-devtools-111_mitmproxy-suite.har": .imports(rules: 9, skipped: [.bodyNotRecorded: 5]),
        "har/ie11-network-inspector.har": .imports(rules: 8, skipped: [.bodyNotRecorded: 2, .answeredAgain: 1, .keptEarlierAnswer: 14]),
        "har/safari-605_example.com.har": .imports(rules: 1),
        "har/safari-web-inspector_mitmproxy-suite.har": .imports(rules: 17, skipped: [.answeredAgain: 2]),
        // Proxies and clients.
        "har/charles-proxy-4.6.3.har": .imports(rules: 1),
        "har/fiddler-2.3.3.5_bodies-omitted.har": .imports(rules: 64, skipped: [.bodyNotRecorded: 23]),
        "har/fiddler-4.6.2.2_ie11.har": .imports(rules: 7, skipped: [.keptEarlierAnswer: 4]),
        "har/fiddler-4.6_swapi-json-bom.har": .imports(rules: 1),
        "har/insomnia-2022.1.1.har": .imports(rules: 1),
        "har/mitmproxy-export_br-gzip-protobuf.har": .imports(rules: 5),
        "har/mitmproxy-export_error-status0-empty-content.har": .imports(rules: 1, skipped: [.failed: 1]),
        "har/mitmproxy-export_event-stream.har": .imports(rules: 2),
        "har/mitmproxy-export_incomplete-status0.har": .imports(rules: 0, skipped: [.failed: 4]),
        "har/mitmproxy-export_successful-json.har": .imports(rules: 2),
        "har/mitmproxy-export_websocket-101.har": .imports(rules: 0, skipped: [.interim: 3]),
        "har/swifthar-0.1.0_urlsession-recording.har": .imports(rules: 1),
        // Recorders: Playwright's body file beside the archive, Polly.JS's hex bodies (still gzip: skipped).
        "har/playwright-1.23_fulfill.har": .imports(rules: 5),
        "har/playwright-1.23_redirect-chain-h2.har": .imports(rules: 3),
        "har/playwright-1.23_sha1-external-body-file.har": .imports(rules: 1),
        "har/playwright-1.32_unstable-network-status-minus1.har": .imports(rules: 1, skipped: [.failed: 1]),
        "har/pollyjs-2.0.0_204-size-without-text.har": .imports(rules: 1),
        "har/pollyjs-2.0.0_binary-hex-text.har": .imports(rules: 1),
        "har/pollyjs-2.0.0_compressed-hex-chunks.har": .imports(rules: 0, skipped: [.compressedBody: 1]),
        "har/pollyjs-2.0.0_request-order-same-url.har": .imports(rules: 3, skipped: [.answeredAgain: 2]),
        "har/pollyjs-5.1.1_github-api-json-hexgzip.har": .imports(rules: 0, skipped: [.compressedBody: 1]),
        // Other parsers' fixtures: request-only archives, odd but readable ones, and the malformed.
        "har-suites/har-to-k6_entry-request-only.har": .imports(rules: 0, skipped: [.noResponse: 1]),
        "har-suites/har-to-k6_pages-only.har": .refused(#"Not a HAR file: "log.entries" is missing"#),
        "har-suites/har-to-k6_postdata-conflict.har": .imports(rules: 0, skipped: [.noResponse: 1]),
        "har-suites/har-to-k6_pseudo-headers.har": .imports(rules: 0, skipped: [.noResponse: 1]),
        "har-suites/har-validator_invalid-creator.har": .refused("log.creator.version is not a string"),
        "har-suites/har-validator_invalid-date.har": .refused("log.pages[0].startedDateTime is not an ISO 8601 date and time with a time zone"),
        "har-suites/har-validator_invalid-version.har": .refused("log.version is not a string"),
        "har-suites/har-validator_valid.har": .imports(rules: 1),
        "har-suites/harsharp_sample-bom-encoding-utf8.har": .imports(rules: 14, skipped: [.failed: 3, .bodyNotRecorded: 43]),
        "har-suites/harviewer_data-url-status1.har": .imports(rules: 0, skipped: [.unsupportedScheme: 1]),
        "har-suites/harviewer_empty-response-headers.har": .imports(rules: 1),
        "har-suites/harviewer_get-empty-post-data.har": .imports(rules: 1),
        "har-suites/harviewer_json-body-replaced.har": .imports(rules: 1),
        "har-suites/harviewer_jsonp-wrapped.harp": .imports(rules: 1),
        "har-suites/harviewer_missing-content-mimetype.har": .imports(rules: 1),
        "har-suites/harviewer_no-entries.har": .refused(#"Not a HAR file: "log.entries" is missing"#),
        "har-suites/harviewer_not-json.har": .refused("Not a HAR file: it is not JSON (Invalid JSON at $.log (byte 110)"),
        "har-suites/harviewer_status420-no-pagetimings.har": .imports(rules: 2),
        "har-suites/mitmproxy_broken_headers.json": .refused(#"Not a HAR file: there is no "log" object"#),
        "har-suites/mitmproxy_brokenfile.har": .refused("Not a HAR file: it is not JSON (Invalid JSON at $ (byte 22)"),
        "har-suites/mitmproxy_corrupted-gzip-body.har": .imports(rules: 0, skipped: [.compressedBody: 1]),
        "har-suites/mitmproxy_head-content-length.har": .imports(rules: 1),
        "har-suites/mitmproxy_postdata.har": .imports(rules: 1),
        "har-suites/mitmproxy_with-bom.har": .imports(rules: 1),
        "har-suites/playwright_url-matcher-glob-regex-urls.har": .refused("log.entries[4].request.url is not a valid http(s) URL"),
        "har-suites/zap_local-private-about-blank.har": .imports(rules: 0, skipped: [.unsupportedScheme: 1]),
        "har-suites/zap_noresponse-firefox126.har": .imports(rules: 0, skipped: [.failed: 1]),
        "har-suites/zap_one-null-message.har": .imports(rules: 0, skipped: [.failed: 1]),
        "har-suites/zap_response-base64-invalid.har": .refused("log.entries[0].response.content.text is marked base64 but is not"),
        "har-suites/zap_response-base64.har": .imports(rules: 1),
        "har-suites/zap_set-cookie-with-lf.har": .imports(rules: 1),
        "har-suites/zap_template-httpversion-placeholder.har": .imports(rules: 1),
    ]

    /// The archives of the corpus (`.har`, `.harp`, `.json`; the Playwright body file is not one).
    static func archives() throws -> [String] {
        try ["har", "har-suites"].flatMap { folder in
            try FileManager.default.contentsOfDirectory(atPath: corpus.appendingPathComponent(folder).path)
                .filter { name in [".har", ".harp", ".json"].contains { name.hasSuffix($0) } }
                .map { folder + "/" + $0 }
        }.sorted()
    }

    static func outcome(_ name: String) -> (Outcome, HAR.Import?) {
        let file = corpus.appendingPathComponent(name)
        do {
            let data = try HAR.readArchive(atPath: file.path)
            let result = try HAR.importArchive(data, origin: "har: " + file.lastPathComponent, folder: file.deletingLastPathComponent(),
                                               ignoringQueryItems: Redactor.standard.queryItems)
            return (.imports(rules: result.rules.count, skipped: result.skipped), result)
        } catch let error as HAR.ImportError {
            return (.refused(error.message), nil)
        } catch {
            return (.refused("unexpected \(error)"), nil)
        }
    }

    @Test("Every archive of the corpus has an expected outcome, and every expectation names a file of it",
          .enabled(if: corpusExists, skipMessage))
    func tableMatchesTheCorpus() throws {
        // Given the corpus as it is on disk
        // When its archives are listed
        // Then each has a line in the table and each line a file, so a new file cannot go untested
        let archives = Set(try Self.archives())
        #expect(archives.subtracting(Self.expectations.keys).isEmpty, "no expectation for \(archives.subtracting(Self.expectations.keys).sorted())")
        #expect(Set(Self.expectations.keys).subtracting(archives).isEmpty, "not in the corpus: \(Set(Self.expectations.keys).subtracting(archives).sorted())")
    }

    @Test("Each archive imports as many rules and skips as many entries for each reason as expected, or is refused with its reason",
          .enabled(if: corpusExists, skipMessage), arguments: expectations.keys.sorted())
    func importsAsExpected(_ name: String) throws {
        // Given an archive of the corpus, read where it lies (its body files beside it)
        let expected = try #require(Self.expectations[name])
        // When it is imported
        let (actual, result) = Self.outcome(name)
        // Then the outcome is the expected one
        switch (expected, actual) {
        case (.imports(let rules, let skipped), .imports(let actualRules, let actualSkipped)):
            #expect(actualRules == rules && actualSkipped == skipped, "\(name): \(actual), expected \(expected)")
        case (.refused(let reason), .refused(let message)):
            #expect(message.hasPrefix(reason), "\(name): \(message)")
        default:
            Issue.record("\(name): \(actual), expected \(expected)")
        }
        // And every entry is accounted for, and every rule is one the rules file accepts and answers with
        guard let result else { return }
        #expect(result.rules.count + result.skippedCount == result.entries, "\(name)")
        for rule in result.rules {
            #expect(rule.syntaxProblem == nil && (200...599).contains(rule.status), "\(name): \(rule.method) \(rule.urlPattern)")
            // (No coding, length or cookie but a HEAD's Content-Length, which is its GET's body's.)
            #expect(rule.headers.allSatisfy { MockRule.keepsRecorded($0, method: rule.method) }, "\(name): \(rule.headers)")
        }
        let mocks = MockRules(fileURL: nil, redactor: .standard)
        #expect(try mocks.add(result.rules).count == result.rules.count)
    }

    static let skipMessage: Comment = "the HAR corpus is not at ../shared/corpus beside the repository, so the corpus tests are skipped"

    /// The one import of `name` whose rules are returned, or a failure.
    static func rules(_ name: String) throws -> [MockRule] {
        try #require(outcome(name).1).rules
    }

    @Test("Bodies come back as the producing tool meant them: a Playwright body file, Polly.JS hex, base64, JSONP, a BOM",
          .enabled(if: corpusExists, skipMessage))
    func bodies() throws {
        // Given archives keeping bodies in their less usual ways
        // When they are imported
        // Then Playwright's content._file is read from beside the archive
        let attached = try Self.rules("har/playwright-1.23_sha1-external-body-file.har")
        #expect(attached.map(\.body) == [Data("Hello, world".utf8)])
        // And Polly.JS's hex string is the PNG's bytes, not hex text
        let png = try #require(try Self.rules("har/pollyjs-2.0.0_binary-hex-text.har").first)
        #expect(png.body.count == 373 && png.body.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        // And base64 is decoded, ZAP's minimal entry included
        #expect(try Self.rules("har-suites/zap_response-base64.har").map(\.body) == [Data("1234".utf8)])
        // And HAR Viewer's JSONP file and a file starting with a BOM read like plain JSON
        #expect(try Self.rules("har-suites/harviewer_jsonp-wrapped.harp").first?.body.isEmpty == false)
        #expect(try Self.rules("har-suites/mitmproxy_with-bom.har") == Self.rules("har-suites/mitmproxy_postdata.har").map {
            var rule = $0
            rule.origin = "har: mitmproxy_with-bom.har"
            return rule
        })
        // And a Set-Cookie joined with a line feed (Firebug) is dropped, not a reason to refuse
        let cookie = try #require(try Self.rules("har-suites/zap_set-cookie-with-lf.har").first)
        #expect(!cookie.body.isEmpty && !cookie.headers.contains { $0.name.lowercased() == "set-cookie" })
    }

    @Test("204s, 304s, HEADs, redirects and empty bodies become rules answering with an empty body",
          .enabled(if: corpusExists, skipMessage))
    func emptyBodies() throws {
        // Given a Polly.JS 204 that claims a size but has no text, a browser 304 that carries its cached body,
        // a HEAD whose Content-Length is large, and redirects whose body was not kept
        let noContent = try #require(try Self.rules("har/pollyjs-2.0.0_204-size-without-text.har").first)
        let notModified = try #require(try Self.rules("har/chrome-devtools_mitmproxy-suite.har").first { $0.status == 304 })
        let head = try #require(try Self.rules("har-suites/mitmproxy_head-content-length.har").first)
        let redirects = try Self.rules("har/playwright-1.23_redirect-chain-h2.har").filter { $0.status == 301 }
        // Then each answers with its status and no body at all
        #expect(noContent.status == 204 && noContent.body.isEmpty)
        #expect(notModified.body.isEmpty)
        #expect(head.method == "HEAD" && head.body.isEmpty)
        // (the HEAD saying the length its GET's body has, as recorded)
        #expect(head.headers.filter { $0.name.lowercased() == "content-length" }.map(\.value) == ["78258"], "\(head.headers)")
        #expect(redirects.count == 2 && redirects.allSatisfy { $0.body.isEmpty && $0.headers.contains { $0.name.lowercased() == "location" } })
    }

    @Test("When a method and URL come again the last answer is replayed, but neither a failed request nor a 304 replaces an answer",
          .enabled(if: corpusExists, skipMessage))
    func repeatedRequests() throws {
        // Given Playwright's GET that failed (status -1) and then succeeded, Polly.JS's five requests on one
        // URL (GET 404, POST 200, GET 200, DELETE 200, GET 404), and IE's four 200s each revalidated by a 304
        let unstable = try Self.rules("har/playwright-1.32_unstable-network-status-minus1.har")
        let ordered = try Self.rules("har/pollyjs-2.0.0_request-order-same-url.har")
        let revalidated = try Self.rules("har/fiddler-4.6.2.2_ie11.har")
        // When they are imported
        // Then the success is replayed, each method replays its last answer (in order of first request),
        // and the 200s stay with their bodies
        #expect(unstable.map(\.status) == [200] && unstable.first?.body == Data("hello, world!".utf8))
        #expect(ordered.map { "\($0.method) \($0.status)" } == ["GET 404", "POST 200", "DELETE 200"])
        #expect(revalidated.count == 7 && revalidated.allSatisfy { $0.status == 200 })
    }
}
