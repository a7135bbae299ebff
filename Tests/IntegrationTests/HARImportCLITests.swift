import Foundation
import Testing

/// Issue 14, section 5: `kiosk har import` says what it imported and what it skipped and why, in a
/// sentence or as JSON, and reads Playwright's body files beside the archive.
@Suite("kiosk har import", .serialized)
struct HARImportCLITests {
    @Test("A log exported by kiosk imports back into as many rules as it has answers")
    func exportImportsBack() async throws {
        // Given a real run against the demo upstream, exported as HAR
        let cli = CLI()
        #expect(try await cli.run(["list", "rickandmorty"]).status == 0)
        #expect(try await cli.run(["list", "dogs"]).status == 0)
        let har = cli.dataDirectory.appendingPathComponent("session.har")
        #expect(try await cli.run(["har", "export", har.path]).status == 0)
        // When it is imported again
        let result = try await cli.run(["har", "import", har.path])
        // Then each answer is a rule, and the summary says so
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "Imported 2 mock rules from \(har.path). `kiosk mock list` shows them.\n")
        await #expect(try BadInputTests.mockRuleCount(cli) == 2)
    }

    @Test("The summary counts the skipped entries by reason and the answers replayed in UTF-8, --json gives the same as JSON, and a body file is read beside the archive")
    func summary() async throws {
        // Given an archive whose first entry's body is a file beside it, then a failure, a data: URL and no response
        let cli = CLI()
        let folder = cli.dataDirectory.appendingPathComponent("recording")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("Hello, world".utf8).write(to: folder.appendingPathComponent("main.txt"))
        let har = folder.appendingPathComponent("recording.har")
        try Data(#"""
        {"log": {"version": "1.2", "creator": {"name": "Playwright", "version": "1.23.0"}, "entries": [
          {"request": {"method": "GET", "url": "http://localhost:8080/"},
           "response": {"status": 200, "headers": [], "content": {"size": 12, "mimeType": "text/plain", "_file": "main.txt"}}},
          {"request": {"method": "GET", "url": "http://localhost:8080/gone"}, "response": {"status": -1, "content": {}}},
          {"request": {"method": "GET", "url": "data:text/plain,hi"}, "response": {"status": 200, "content": {"text": "hi"}}},
          {"request": {"method": "GET", "url": "http://localhost:8080/pending"}},
          {"request": {"method": "GET", "url": "http://localhost:8080/label"}, "response": {"status": 200,
           "headers": [{"name": "Content-Type", "value": "text/html; charset=x-user-defined"}], "content": {"mimeType": "text/html", "text": "café"}}}
        ]}}
        """#.utf8).write(to: har)
        // When it is imported, then imported again with --json
        let text = try await cli.run(["har", "import", har.path])
        // Then the sentence names every reason, and the rule answers with the file's bytes
        #expect(text.status == 0 && text.stdout == "Imported 2 mock rules from \(har.path); skipped 3 of its 5 entries: "
                + "1 without a response, 1 failed (status 0 or below), 1 data: URL. 1 answer's text is replayed in UTF-8, and labelled so: "
                + "the charset its Content-Type named cannot hold it, or Kiosk cannot write it. `kiosk mock list` shows them.\n", "\(text.stdout)")
        let first = try #require(try JSONSerialization.jsonObject(with: Data(try await cli.run(["mock", "list", "--json"]).stdout.utf8)) as? [[String: Any]])
        #expect(first.count == 2 && (first.first?["body"] as? [String: Any])?["text"] as? String == "Hello, world")
        // And --json holds the same counts, and the id of the rule that replaced the first import's
        let json = try await cli.run(["har", "import", har.path, "--json"])
        let rules = try #require(try JSONSerialization.jsonObject(with: Data(try await cli.run(["mock", "list", "--json"]).stdout.utf8)) as? [[String: Any]])
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(summary["file"] as? String == har.path && summary["entries"] as? Int == 5 && summary["imported"] as? Int == 2)
        #expect(summary["skipped"] as? [String: Int] == ["noResponse": 1, "failed": 1, "unsupportedScheme": 1])
        #expect(summary["inUTF8Instead"] as? Int == 1)
        #expect(summary["ruleIDs"] as? [Int] == [3, 4] && (rules.first?["id"] as? Int) == 3)
        await #expect(try BadInputTests.mockRuleCount(cli) == 2)
    }

    @Test("From standard input an archive naming a body file is refused, since there is no folder to read it from")
    func standardInputHasNoFolder() async throws {
        // Given an archive naming a body file, given on standard input
        let cli = CLI()
        try FileManager.default.createDirectory(at: cli.dataDirectory, withIntermediateDirectories: true)
        let har = cli.dataDirectory.appendingPathComponent("attached.har")
        try Data((#"{"log": {"entries": [{"request": {"method": "GET", "url": "http://localhost/"}, "#
                 + #""response": {"status": 200, "content": {"_file": "x.txt"}}}]}}"#).utf8).write(to: har)
        // When it is imported
        let result = try await cli.run(["har", "import", "-"], input: try FileHandle(forReadingFrom: har))
        // Then it is refused in one line saying why, and nothing is imported
        #expect(result.status == 2)
        #expect(result.stderr.contains("log.entries[0].response.content._file names a body file beside the archive")
                && result.stderr.contains("Nothing was imported"), "\(result.stderr)")
        await #expect(try BadInputTests.mockRuleCount(cli) == 0)
    }
}
