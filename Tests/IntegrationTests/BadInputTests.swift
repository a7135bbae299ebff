import Foundation
@testable import KioskApp
import KioskDebugger
import KioskDemoUpstream
import KioskCore
import Testing

/// Issue 10, section 4: bad input everywhere, and `kiosk --version`.
@Suite("Bad input everywhere", .serialized)
struct BadInputTests {
    // MARK: HAR import: RFC 9110 methods and fields

    /// An archive of two 200 entries with bodies: a well-formed one, then one with `method`, a Date header
    /// followed by `headers` (so the second header has index 1), and `mimeType`.
    static func archive(method: String = "GET", headers: String = #"{"name": "Content-Type", "value": "application/json"}"#,
                        mimeType: String = "application/json") -> String {
        #"""
        {"log": {"entries": [
          {"request": {"method": "GET", "url": "https://example.com/ok"},
           "response": {"status": 200, "headers": [], "content": {"mimeType": "application/json", "text": "{}"}}},
          {"request": {"method": "\#(method)", "url": "https://example.com/evil"},
           "response": {"status": 200, "headers": [{"name": "Date", "value": "Mon, 01 Jan 2024 00:00:00 GMT"}, \#(headers)],
                        "content": {"mimeType": "\#(mimeType)", "text": "{}"}}}
        ]}}
        """#
    }

    @Test("HAR import refuses a method or a response header breaking RFC 9110, naming the entry's JSON path")
    func harRefusesBadMethodsAndFields() throws {
        let cases: [(String, String)] = [
            (Self.archive(method: #"GET\r\nX-Evil: 1"#), "log.entries[1].request.method"),
            (Self.archive(method: "GET /x"), "log.entries[1].request.method"),
            (Self.archive(method: ""), "log.entries[1].request.method"),
            (Self.archive(headers: #"{"name": "X-Note", "value": "a\r\nSet-Cookie: session=stolen"}"#), "log.entries[1].response.headers[1].value"),
            (Self.archive(headers: #"{"name": "X-Note", "value": "nul\u0000here"}"#), "log.entries[1].response.headers[1].value"),
            (Self.archive(headers: #"{"name": "X-Bad Name", "value": "1"}"#), "log.entries[1].response.headers[1].name"),
            (Self.archive(headers: #"{"name": "X-Evil\nInjected", "value": "1"}"#), "log.entries[1].response.headers[1].name"),
            (Self.archive(headers: #"{"name": "X-Émoji", "value": "1"}"#), "log.entries[1].response.headers[1].name"),
            (Self.archive(mimeType: #"text/html\r\nX-Evil: 1"#), "log.entries[1].response.content.mimeType"),
        ]
        for (text, path) in cases {
            // Given an archive with one well-formed entry and one with a bad method or field
            // When it is turned into mock rules
            // Then nothing comes back: the import fails, naming the bad spot
            do {
                let rules = try HAR.importArchive(Data(text.utf8), origin: "test", folder: nil, ignoringQueryItems: []).rules
                Issue.record("imported \(rules.map(\.method)) from \(path)")
            } catch let error as HAR.ImportError {
                #expect(error.message.hasPrefix(path + " "), "\(error.message)")
            }
        }
        // And valid tokens, tabs and UTF-8 in values, and HTTP/2 pseudo-headers still import
        let good = Self.archive(method: "PATCH", headers: #"{"name": ":status", "value": "200"}, {"name": "X-Note", "value": "café\tau lait ☕"}"#)
        let rules = try HAR.importArchive(Data(good.utf8), origin: "test", folder: nil, ignoringQueryItems: []).rules
        #expect(rules.map(\.method) == ["GET", "PATCH"])
        #expect(rules[1].headers.contains { $0.name == "X-Note" && $0.value == "café\tau lait ☕" })
    }

    @Test("kiosk har import of a method with CR/LF fails with exit 2, the entry's path, and imports nothing")
    func harImportCommandImportsNothing() async throws {
        let cli = CLI()
        try FileManager.default.createDirectory(at: cli.dataDirectory, withIntermediateDirectories: true)
        for (name, text, path) in [
            ("method.har", Self.archive(method: #"GET\r\nX-Evil: 1"#), "log.entries[1].request.method"),
            ("header.har", Self.archive(headers: #"{"name": "X-Note", "value": "a\r\nX-Evil: 1"}"#), "log.entries[1].response.headers[1].value"),
        ] {
            // Given an archive whose second entry carries CR/LF in its method or a header value
            let file = cli.dataDirectory.appendingPathComponent(name)
            try Data(text.utf8).write(to: file)
            // When it is imported
            let result = try await cli.run(["har", "import", file.path])
            // Then the command refuses it in one line naming the path, and no rule exists, not even the good entry's
            #expect(result.status == 2)
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.contains(path) && result.stderr.contains("Nothing was imported"), "\(result.stderr)")
            await #expect(try Self.mockRuleCount(cli) == 0)
        }
        // And kiosk mock add refuses the same, by hand
        let method = try await cli.run(["mock", "add", "--url", "https://example.com/x", "--method", "GET\r\nX-Evil: 1"])
        let header = try await cli.run(["mock", "add", "--url", "https://example.com/x", "--header", "X-Note: a\rb"])
        #expect(method.status == 2 && header.status == 2)
        await #expect(try Self.mockRuleCount(cli) == 0)
    }

    @Test("kiosk mock edit gives a rule another answer, keeping what is not given; a bad status, a field no header can carry, nothing to change or an unknown id is refused")
    func mockEdit() async throws {
        // Given a rule added by hand
        let cli = CLI()
        let added = try await cli.run(["mock", "add", "--url", "https://example.com/x", "--header", "Content-Type: text/plain", "--body", "old"])
        #expect(added.status == 0, "\(added.stderr)")
        // When its status and body are changed
        let edited = try await cli.run(["mock", "edit", "1", "--status", "503", "--body", "new"])
        // Then it says what the rule answers now, and lists it so, its header kept
        #expect(edited.status == 0 && edited.stdout.contains("Mock rule 1 now answers GET https://example.com/x with 503, 1 header"), "\(edited.stdout)\(edited.stderr)")
        let listed = try await cli.run(["mock", "list", "--json"])
        #expect(listed.stdout.contains("\"status\" : 503") && listed.stdout.contains("new") && listed.stdout.contains("text/plain"), "\(listed.stdout)")
        // And what cannot be kept is refused, each with one line and exit 2, the rule as it was
        for arguments in [["1", "--status", "42"], ["1", "--header", "X-Note: a\rb"], ["1"], ["7", "--status", "200"]] {
            let refused = try await cli.run(["mock", "edit"] + arguments)
            #expect(refused.status == 2 && refused.stderr.split(separator: "\n").count == 1, "\(arguments): \(refused.stderr)")
        }
        #expect(try await cli.run(["mock", "list", "--json"]).stdout == listed.stdout)
    }

    @Test("A page past the end is refused (a catalog's, a location's residents), the error a sentence ended before the pointer to the help")
    func errorEndsItsSentence() async throws {
        // Given a catalog of 42 pages on the demo upstream
        let cli = CLI()
        // When a page past its end is asked
        let result = try await cli.run(["list", "rickandmorty", "--page", "43"])
        // Then the reason's parenthesis is followed by a full stop, then the help
        #expect(result.status == 2)
        #expect(result.stderr.hasSuffix("(there is nothing here). See 'kiosk list --help'.\n"), "\(result.stderr)")
        // And a page past a location's residents is refused as a catalog's is, not its last page shown again
        let residents = try await cli.run(["show", "rickandmorty", "location-3", "--page", "3"])
        #expect(residents.status == 2 && residents.stderr.contains("(35 in 2 pages)"), "\(residents.stderr)")
        // And a page past a search's results is refused as /api refuses it (404), not printed as "0 results" with exit 0
        #expect(try await cli.run(["list", "nyt"]).status == 0)
        let search = try await cli.run(["search", "nyt", "the", "--page", "2"])
        #expect(search.status == 2 && search.stdout.isEmpty, "\(search.stdout)")
        #expect(search.stderr.contains("there is no page 2 of the results for “the”; they are one page."), "\(search.stderr)")
    }

    @Test("A base URL in the config file that is no http(s) URL with a host is refused, naming the setting, as the environment's is")
    func configFileBaseURL() async throws {
        // Given config files whose dogs URL is another scheme, or a script
        for url in ["ftp://x", "javascript:alert(1)"] {
            let cli = CLI()
            let file = cli.dataDirectory.deletingLastPathComponent().appendingPathComponent("config-\(UUID().uuidString).json")
            try Data(#"{"dogsURL": "\#(url)"}"#.utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            // When a command is run with it
            let result = try await cli.run(["list", "dogs"], environment: ["KIOSK_CONFIG": file.path])
            // Then it is refused before anything is fetched, in one line naming the setting
            #expect(result.status == 2, "\(url): \(result.stderr)")
            #expect(result.stderr.contains("The config file's dogsURL must be an http(s) URL"), "\(url): \(result.stderr)")
        }
    }

    @Test("kiosk proxy refuses a host pattern that would match nothing, --ignore '*' beside --intercept, and an --upstream-ca that holds no certificate, naming each")
    func proxyRefusesPatternsAndRootsItCannotUse() async throws {
        let cli = CLI()
        let garbage = cli.dataDirectory.appendingPathComponent("not-a-ca.pem")
        try FileManager.default.createDirectory(at: cli.dataDirectory, withIntermediateDirectories: true)
        try Data("garbage\n".utf8).write(to: garbage)
        // (and a CA certificate in DER, as `kiosk proxy ca --der` and browsers' exports write it: Kiosk's own, converted)
        let pem = try await cli.run(["proxy", "ca"]).stdout
        let base64 = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = cli.dataDirectory.appendingPathComponent("ca.der")
        try #require(Data(base64Encoded: base64)).write(to: der)
        let cases: [([String], String)] = [
            (["--upstream-ca", der.path], "--upstream-ca \(der.path) holds a DER certificate, not PEM: convert it with `openssl x509 -inform der"),
            (["--intercept", "foo.*.com"], "foo.*.com is not a host pattern"),
            (["--ignore", "*example.com"], "*example.com is not a host pattern"),
            (["--intercept", "a.test/x"], "a.test/x is not a host pattern"),
            (["--intercept", "exa mple.com"], "exa mple.com is not a host pattern"),
            (["--ignore", "*."], "*. is not a host pattern"),
            (["--ignore", "*.127.0.0.1"], "*.127.0.0.1 is not a host pattern"),
            (["--ignore", "[::1]:443"], "[::1]:443 is not a host pattern"),
            (["--ignore", "*", "--intercept", "*"], "--ignore '*' tunnels every host unread"),
            (["--upstream-ca", garbage.path], "--upstream-ca \(garbage.path) holds no PEM certificate"),
            (["--upstream-ca", "/nonexistent/ca.pem"], "--upstream-ca /nonexistent/ca.pem cannot be read"),
        ]
        for (arguments, message) in cases {
            let result = try await cli.run(["proxy", "--port", "0", "--console-port", "0"] + arguments)
            #expect(result.status == 2 && result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }

    @Test("kiosk proxy refuses a --reverse URL carrying a user name or password, with exit 2, never printing the password")
    func proxyRefusesCredentialsInReverseURL() async throws {
        let cli = CLI()
        // (A port held without listening: a proxy that took the URL would stop at once, saying the port is in use.)
        let held = try #require(PortReservation(host: "127.0.0.1", port: 0))
        // (the second and fourth wrong besides: a port that is none, a port that is not a number)
        for route in ["http://user:pw-s3cret@127.0.0.1:18001@0", "http://user:pw-s3cret@127.0.0.1:18001@99999", "http://user@127.0.0.1:18001/api@0",
                      "http://user:pw-s3cret@127.0.0.1:18001/api@bad"] {
            // When the proxy is started with a reverse route whose URL carries user information
            let result = try await cli.run(["proxy", "--port", String(held.port), "--console-port", "0", "--reverse", route])
            // Then it does not start, says why in one line naming the URL without it, and prints no password anywhere
            #expect(result.status == 2, "\(route): \(result.stderr)")
            #expect(result.stderr.contains("--reverse http://127.0.0.1:18001"), "\(result.stderr)")
            #expect(!(result.stdout + result.stderr).contains("pw-s3cret") && !result.stderr.contains("user@"), "\(result.stdout)\(result.stderr)")
        }
    }

    @Test("kiosk proxy cache import of an archive it refuses, or of a folder, exits 2 with one line naming the file and saying nothing was stored")
    func proxyCacheImportRefusals() async throws {
        let cli = CLI()
        try FileManager.default.createDirectory(at: cli.dataDirectory, withIntermediateDirectories: true)
        // Given a malformed archive, and a folder given in an archive's place
        let broken = cli.dataDirectory.appendingPathComponent("broken.har")
        try Data(#"{"log": {"entries": [{"request": "#.utf8).write(to: broken)
        let folder = cli.dataDirectory.appendingPathComponent("archives.har")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (file, says) in [(broken, "broken.har: "), (folder, "It is a folder, not an archive")] {
            // When each is imported into the proxy cache
            let result = try await cli.run(["proxy", "cache", "import", file.path])
            // Then the command refuses it in one line that names it and says nothing was stored
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.contains(file.lastPathComponent) && result.stderr.contains(says)
                    && result.stderr.contains("Nothing was stored"), "\(result.stderr)")
        }
    }

    @Test("A command that only reads or removes refuses a --data-dir that does not exist, with exit 2, and makes no folder",
          arguments: [["proxy", "cache", "stats"], ["proxy", "cache", "list"], ["proxy", "cache", "clear"],
                      ["proxy", "cache", "export", "-"], ["log"], ["mock", "list"], ["favorite", "list"]])
    func missingDataDirectory(command: [String]) async throws {
        // Given a data folder name with a slip in it, no such folder existing
        let cli = CLI()
        let typo = cli.dataDirectory.appendingPathComponent("kiosk-dta").path
        // When a command that only reads or removes is run on it
        let result = try await cli.run(command + ["--data-dir", typo], dataDir: false)
        // Then it refuses in one line naming the folder, and the folder is not made
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("kiosk-dta")
                && result.stderr.contains("no such folder"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: typo))
    }

    @Test("A list with a filter or page its catalog refuses exits 2 before any store opens, so a new --data-dir is not made",
          arguments: [["list", "rickandmorty", "--status", "bogus"], ["list", "nyt", "--period", "3"],
                      ["list", "marvel", "--status", "alive"], ["list", "nyt", "--page", "2"]])
    func refusedListMakesNoDataDirectory(command: [String]) async throws {
        // Given a data folder not made yet
        let cli = CLI()
        let fresh = cli.dataDirectory.appendingPathComponent("fresh").path
        // When a list is asked for with a flag value its catalog refuses
        let result = try await cli.run(command + ["--data-dir", fresh], dataDir: false)
        // Then it is refused in one line, and no folder with an empty store is left behind
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: fresh))
    }

    @Test("An archive refused by har import or proxy cache import leaves no --data-dir it would have made, and a folder that was there stays",
          arguments: [["har", "import"], ["proxy", "cache", "import"]])
    func refusedArchiveMakesNoDataDirectory(command: [String]) async throws {
        // Given a truncated archive, a data folder not made yet, and one holding a store already
        let cli = CLI()
        try FileManager.default.createDirectory(at: cli.dataDirectory, withIntermediateDirectories: true)
        let broken = cli.dataDirectory.appendingPathComponent("broken.har")
        try Data(#"{"log": {"entries": ["#.utf8).write(to: broken)
        let fresh = cli.dataDirectory.appendingPathComponent("fresh").path
        // When it is imported into the new folder
        let refused = try await cli.run(command + [broken.path, "--data-dir", fresh], dataDir: false)
        // Then it is refused, and no folder is left with an empty store in it
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: fresh))
        // And into a folder that exists, it is refused the same, the folder and its store kept
        #expect(try await cli.run(["favorite", "list"]).status == 0)
        let existing = try FileManager.default.contentsOfDirectory(atPath: cli.dataDirectory.path).filter { $0.hasSuffix(".sqlite") }
        #expect(!existing.isEmpty)
        #expect(try await cli.run(command + [broken.path]).status == 2)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: cli.dataDirectory.path)).isSuperset(of: existing))
    }

    @Test("A command that adds something, such as a HAR import into the proxy cache, makes a --data-dir that does not exist")
    func addingMakesDataDirectory() async throws {
        // Given an archive of one storable answer and a data folder not made yet
        let cli = CLI()
        let archive = cli.dataDirectory.appendingPathComponent("one.har")
        try Data(Self.archive().utf8).write(to: archive)
        let fresh = cli.dataDirectory.appendingPathComponent("fresh").path
        // When it is imported into the proxy cache there
        let result = try await cli.run(["proxy", "cache", "import", archive.path, "--data-dir", fresh], dataDir: false)
        // Then the folder is made and the answer stored
        #expect(result.status == 0, "\(result.stderr)")
        let stats = try await cli.run(["proxy", "cache", "stats", "--data-dir", fresh], dataDir: false)
        #expect(stats.status == 0 && !stats.stdout.contains("empty"), "\(stats.stdout)\(stats.stderr)")
    }

    @Test("An export to a named pipe is written into it and leaves it a pipe; one to a symbolic link replaces the file it names, keeping the link")
    func exportWritesThroughPipesAndLinks() async throws {
        // Given a stored answer, a named pipe with a reader, and a link to an old archive
        let cli = CLI()
        let archive = cli.dataDirectory.appendingPathComponent("one.har")
        try Data(Self.archive().utf8).write(to: archive)
        #expect(try await cli.run(["proxy", "cache", "import", archive.path]).status == 0)
        let pipe = cli.dataDirectory.appendingPathComponent("pipe").path
        try #require(mkfifo(pipe, 0o600) == 0)
        // Held open both ways and read without waiting: the export's open never blocks, and a pipe it replaced reads empty
        // instead of hanging the test. (One answer's archive fits the pipe's buffer.)
        let reader = open(pipe, O_RDWR | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }
        // When the cache is exported into the pipe
        let toPipe = try await cli.run(["proxy", "cache", "export", pipe])
        // Then the reader got the archive, and the pipe is still a pipe
        #expect(toPipe.status == 0, "\(toPipe.stderr)")
        var received = [UInt8](repeating: 0, count: 1 << 16)
        let count = read(reader, &received, received.count)
        #expect(count > 0 && String(decoding: received[..<max(count, 0)], as: UTF8.self).contains("https://example.com/ok"))
        var status = stat()
        #expect(stat(pipe, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
        // When it is exported to a link whose file holds an old archive
        let old = cli.dataDirectory.appendingPathComponent("old.har")
        try Data("old".utf8).write(to: old)
        let link = cli.dataDirectory.appendingPathComponent("latest.har")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: old)
        #expect(try await cli.run(["proxy", "cache", "export", link.path]).status == 0)
        // Then the link is kept and the file it names holds the new archive
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == old.path)
        #expect(try String(contentsOf: old, encoding: .utf8).contains("https://example.com/ok"))
    }

    /// How many mock rules `kiosk mock list --json` lists.
    static func mockRuleCount(_ cli: CLI) async throws -> Int {
        let list = try await cli.run(["mock", "list", "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [Any]).count
    }

    // MARK: HAR import: a size cap

    @Test("kiosk har import refuses a 1 GiB file from its size, quickly and without reading it, from a path or standard input")
    func harImportRefusesHugeFiles() async throws {
        // Given a sparse 1 GiB file (no disk blocks, no RAM)
        let cli = CLI()
        try FileManager.default.createDirectory(at: cli.dataDirectory, withIntermediateDirectories: true)
        let big = cli.dataDirectory.appendingPathComponent("big.har")
        #expect(FileManager.default.createFile(atPath: big.path, contents: nil))
        let handle = try FileHandle(forWritingTo: big)
        try handle.truncate(atOffset: 1 << 30)
        try handle.close()
        // When it is imported by path, then through standard input
        let started = ContinuousClock.now
        let byPath = try await cli.run(["har", "import", big.path])
        let byInput = try await cli.run(["har", "import", "-"], input: try FileHandle(forReadingFrom: big))
        let elapsed = ContinuousClock.now - started
        // Then both are refused in one line naming the limit and the file's size, at once
        for result in [byPath, byInput] {
            #expect(result.status == 2)
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.contains("1024 MiB (1073741824 bytes)") && result.stderr.contains("at most 256 MiB"),
                    "\(result.stderr)")
        }
        #expect(elapsed < .seconds(20))
        // And neither run held the file in memory (the old import peaked above 2 GB). Linux carries the spawning
        // process's high-water mark into a posix_spawn'ed child's ru_maxrss at exec, so a child's figure is at least
        // this (large) test process's own; what the run itself added must stay far below the file's 1 GiB.
        var own = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &own)
        for result in [byPath, byInput] {
            #expect(result.peakResidentKiB > 0 && result.peakResidentKiB < own.ru_maxrss + 256 * 1024,
                     "the run's peak \(result.peakResidentKiB) KiB, this process's \(own.ru_maxrss) KiB")
        }
        await #expect(try Self.mockRuleCount(cli) == 0)
    }

    @Test("Reading an archive of unknown size stops as soon as it passes the limit")
    func harReadStopsAtTheLimit() throws {
        // Given an endless stream (not a regular file: no size to check first)
        // When it is read with a 1 MiB limit
        // Then reading stops with the limit in the reason, instead of running out of memory
        do {
            _ = try HAR.readArchive(atPath: "/dev/zero", limit: 1 << 20)
            Issue.record("read an endless stream")
        } catch let error as HAR.ImportError {
            #expect(error.message == "Too large: over 1 MiB; an import reads at most 1 MiB.")
        }
    }

    // MARK: Terminal control characters

    static let evilName = "Evil \u{1B}[31mRed\u{07} Rick\u{9B}2J\u{7F} \u{202E}kcir"
    static let escapedName = #"Evil \u{1B}[31mRed\u{07} Rick\u{9B}2J\u{7F} \u{202E}kcir"#

    @Test("Control characters and bidi overrides from upstream data are shown escaped by list, show, search and favorite list, exact in --json")
    func controlCharactersAreEscaped() async throws {
        // Given a Rick and Morty upstream (mocked) whose character's name holds ESC[31m, BEL, C1 CSI and DEL
        let cli = CLI()
        try FileManager.default.createDirectory(at: cli.dataDirectory, withIntermediateDirectories: true)
        let character: [String: Any] = [
            "id": 1, "name": Self.evilName, "status": "Alive", "species": "Human\u{1B}]0;pwned\u{07}", "type": "",
            "gender": "Male", "origin": ["name": "Earth", "url": ""], "location": ["name": "Earth", "url": ""],
            "image": NSNull(), "episode": [String](), "created": "2017-11-04T18:48:46.250Z",
        ]
        let list: [String: Any] = ["info": ["count": 1, "pages": 1], "results": [character]]
        for (name, body, url) in [("list.json", list, "*/api/character?*"), ("item.json", character, "*/api/character/1")] {
            let file = cli.dataDirectory.appendingPathComponent(name)
            try JSONSerialization.data(withJSONObject: body).write(to: file)
            let added = try await cli.run(["mock", "add", "--url", url, "--body-file", file.path, "--header", "Content-Type: application/json"])
            #expect(added.status == 0, "\(added.stderr)")
        }
        // When the catalog is shown to a person
        let outputs = [
            try await cli.run(["list", "rickandmorty"]),
            try await cli.run(["show", "rickandmorty", "1"]),
            try await cli.run(["search", "rickandmorty", "evil"]),
            try await cli.run(["favorite", "add", "rickandmorty", "1"]),
            try await cli.run(["favorite", "list"]),
        ]
        // Then no control character reaches the terminal; each shows as a visible escape
        for output in outputs {
            #expect(output.status == 0, "\(output.stderr)")
            #expect(output.stdout.contains(Self.escapedName), "\(output.stdout)")
            let controls = output.stdout.unicodeScalars.filter { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value)
                || (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) }
            #expect(controls.isEmpty, "\(output.stdout.debugDescription)")
        }
        #expect(outputs[1].stdout.contains(#"Species: Human\u{1B}]0;pwned\u{07}"#))
        // And --json keeps the name exactly as received
        let json = try await cli.run(["list", "rickandmorty", "--json"])
        let page = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let items = try #require(page["items"] as? [[String: Any]])
        #expect(items.first?["title"] as? String == Self.evilName)
        let item = try await cli.run(["show", "rickandmorty", "1", "--json"])
        #expect(item.stdout.contains(#"\u001b[31mRed\u0007"#), "\(item.stdout)")
    }

    // MARK: Exit codes

    @Test("Bad arguments exit 2 with exactly one error line on stderr and a pointer to the command's help",
          arguments: [
            (["list", "rickandmorty", "--page", "0"], "--page must be 1 or more", "kiosk list --help"),
            (["list", "nosuch"], "nosuch", "kiosk list --help"),
            (["list", "nyt", "--kind", ""], "--kind must not be empty", "kiosk list --help"),
            (["log", "list", "--status", "7xx"], "--status", "kiosk log list --help"),
            (["list"], "<source>", "kiosk list --help"),
            (["frobnicate"], "frobnicate", "kiosk --help"),
            (["list", "rickandmorty", "--data-dir", ""], "--data-dir must not be empty", "kiosk list --help"),
            (["dogs", "delete", ""], "<id> must not be empty", "kiosk dogs delete --help"),
          ])
    func argumentErrors(arguments: [String], reason: String, hint: String) async throws {
        // Given a command line that cannot be run as written
        // When it is run
        // (No --data-dir is added: each fails before any data is touched.)
        let result = try await CLI().run(arguments, dataDir: false)
        // Then it exits 2 with one line on stderr, the reason and the help hint in it, and prints nothing else
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 1, "stderr: \(result.stderr)")
        #expect(result.stderr.hasPrefix("error: ") && result.stderr.contains(reason) && result.stderr.contains(hint),
                "stderr: \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test("--help still prints the full help, with the exit statuses, and exits 0")
    func helpExitsZero() async throws {
        // Given the root and a subcommand's help
        // When they are asked for
        let root = try await CLI().run(["--help"], dataDir: false)
        let list = try await CLI().run(["list", "--help"], dataDir: false)
        // Then both print in full on stdout and exit 0, and the root documents the exit statuses
        #expect(root.status == 0 && list.status == 0)
        #expect(root.stdout.contains("SUBCOMMANDS") && root.stdout.contains("2 bad input"))
        #expect(list.stdout.contains("USAGE: kiosk list") && list.stdout.contains("--kind"))
        #expect(root.stderr.isEmpty && list.stderr.isEmpty)
    }

    @Test("kiosk --version prints the version on one line and exits 0")
    func version() async throws {
        // Given nothing but the flag
        // When it is run
        let result = try await CLI().run(["--version"], dataDir: false)
        // Then it prints "kiosk <version>" alone
        #expect(result.status == 0)
        #expect(result.stdout == "kiosk \(KioskVersion.current)\n")
        #expect(result.stderr.isEmpty)
    }
}
