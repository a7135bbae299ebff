import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KioskProcess
import KioskTestSupport
import Testing

/// A running `kiosk serve` process with its own data folder, stopped by `stop()`.
final class ServeProcess: Sendable {
    let process: ChildProcess
    let port: Int
    /// What it printed until it was ready.
    let output: String

    /// Starts `kiosk serve --port 0` with `arguments`, and waits for the whole line that starts with `readyLine`
    /// (by default the one that comes once the port is bound).
    init(dataDirectory: URL, arguments: [String] = [], readyLine: String = "Kiosk on http://127.0.0.1:",
         environment extra: [String: String] = [:]) async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = dataDirectory.appendingPathComponent("config").path
        environment.merge(extra) { _, new in new }
        process = try ChildProcess(CLI.executable, arguments: ["serve", "--port", "0", "--data-dir", dataDirectory.path] + arguments,
                                   environment: environment, stdout: .pipe, stderr: .null)
        let text = try await process.printed(until: readyLine)
        // "Kiosk on http://127.0.0.1:PORT/" (or https://localhost:PORT/) names the port bound.
        let url = text.range(of: "Kiosk on ").map { text[$0.upperBound...].prefix { !$0.isWhitespace } }
        guard text.contains(readyLine), let port = url.flatMap({ URL(string: String($0))?.port }) else {
            process.signal()
            await process.exited()
            throw CocoaError(.fileReadUnknown)
        }
        self.port = port
        output = text
    }

    /// Stops it and waits for its end (a moment: serve stops at once with nothing in flight), so it can run in a `defer`.
    func stop() {
        process.signal()
        process.waitUntilExit()
    }
}

@Suite("Processes that share a data folder", .serialized)
struct ProcessHardeningTests {
    @Test("kiosk serve says where its network debugger is and who may open it, on the line after its address")
    func saysWhereTheDebuggerIs() async throws {
        // Given serve started on loopback without a token, and with one
        let cli = CLI()
        let open = try await ServeProcess(dataDirectory: cli.dataDirectory, readyLine: "Network debugger")
        defer { open.stop() }
        let locked = try await ServeProcess(dataDirectory: CLI().dataDirectory, readyLine: "Network debugger",
                                      environment: ["KIOSK_DEBUG_TOKEN": "3f9a1c07d2b84e6f5a0c9e1d7b2f4a86"])
        defer { locked.stop() }
        // Then each names the console's address, and who may open it
        #expect(open.output.contains("\nNetwork debugger on http://127.0.0.1:\(open.port)/debug  (open to this machine; KIOSK_DEBUG_TOKEN locks it)"),
                "\(open.output)")
        #expect(locked.output.contains("\nNetwork debugger on http://127.0.0.1:\(locked.port)/debug  (locked: the token in KIOSK_DEBUG_TOKEN opens it)"),
                "\(locked.output)")
    }

    @Test("Ctrl-C stops kiosk serve at once though a request waits at a breakpoint: the pause ends unchanged, its page answered, and it says it is stopping")
    func stopsWithAPauseOpen() async throws {
        // Given serve with a response breakpoint on the dogs list, and a request for the list waiting at it
        let cli = CLI()
        #expect(try await cli.run(["breakpoint", "set", "dogs.list", "--response", "pause"]).status == 0)
        let serve = try await ServeProcess(dataDirectory: cli.dataDirectory)
        defer { serve.stop() }
        let answer = Task { try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(serve.port)/api/dogs?refresh=1")!) }
        let paused = URL(string: "http://127.0.0.1:\(serve.port)/debug/api/paused")!
        var waiting = false
        for _ in 0..<300 where !waiting {
            let (data, _) = try await URLSession.shared.data(from: paused)
            waiting = ((try JSONSerialization.jsonObject(with: data) as? [Any])?.count ?? 0) > 0
            if !waiting { try await Task.sleep(for: .milliseconds(50)) }
        }
        try #require(waiting)
        // When Ctrl-C is pressed
        let clock = ContinuousClock(), pressed = clock.now
        serve.process.signal(SIGINT)
        let status = await serve.process.exited()
        let took = clock.now - pressed
        // Then it exits within the stop's grace, not at the pause's 5 minutes, and the page got the upstream's list
        #expect(status == 0 && took < .seconds(5), "exit \(status) after \(took)")
        let (_, response) = try await answer.value
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        // And it said it was stopping
        let said = String(decoding: serve.process.standardOutput?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        #expect(said.contains("Stopping: requests in flight have 5 s to finish."), "\(said)")
    }

    @Test("demo data stored by another process stays valid after it exits: its pictures are served by kiosk serve")
    func demoDataIndependentOfPort() async throws {
        // Given `kiosk serve` running on a data folder
        let cli = CLI()
        try FileManager.default.createDirectory(at: cli.dataDirectory, withIntermediateDirectories: true)
        let serve = try await ServeProcess(dataDirectory: cli.dataDirectory)
        defer { serve.stop() }

        // When `kiosk list --refresh` in another terminal stores a page (with its own demo upstream) and exits
        let listed = try await cli.run(["list", "rickandmorty", "--refresh", "--json"])
        #expect(listed.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        let items = try #require(object["items"] as? [[String: Any]])
        let picture = try #require(items.first?["imageURL"] as? String)

        // Then the stored picture names no port of either process, and the web app serves it
        #expect(picture.hasPrefix("http://demo.invalid/"))
        var components = URLComponents(string: "http://127.0.0.1:\(serve.port)/image")!
        components.queryItems = [URLQueryItem(name: "url", value: picture)]
        let (data, response) = try await URLSession.shared.data(from: components.url!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(data.starts(with: [0xFF, 0xD8]) || data.starts(with: [0x89, 0x50]))
    }

    @Test("on a full disk the offline list still reads the store, and cache clear frees the space, keeping favorites",
          .enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func fullDisk() async throws {
        // Given a data folder on a 3 MB file system, with a favorite dog
        let cli = CLI()
        try await Self.onSmallDisk(cli) { folder, _ in
            #expect(try await cli.run(["list", "dogs"]).status == 0)
            #expect(try await cli.run(["favorite", "add", "dogs", "rex"]).status == 0)

            // When a sync fills the disk
            let sync = try await cli.run(["sync", "all"])
            #expect(sync.status != 0)
            #expect((sync.stdout + sync.stderr).contains("disk is full"))

            // Then the offline list still answers from the store
            let offline = try await cli.run(["list", "dogs", "--offline"])
            #expect(offline.status == 0, "\(offline.stderr)")
            #expect(offline.stdout.contains("Rex"))

            // And clearing works, frees the space and keeps the favorite
            let clear = try await cli.run(["cache", "clear"])
            #expect(clear.status == 0, "\(clear.stderr)")
            let attributes = try FileManager.default.attributesOfFileSystem(forPath: folder.path)
            let free = (attributes[.systemFreeSize] as? NSNumber)?.intValue ?? 0
            #expect(free > 1_000_000)
            #expect(try await cli.run(["favorite", "list"]).stdout.contains("Rex"))
        }
    }

    @Test("on a full disk, deleting or moving a dog whose list could not be stored says the disk is full, not that the dog is not in it; a page fetched says it was not stored",
          .enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func dogEditsOnAFullDisk() async throws {
        // Given a data folder on a 3 MB file system where the dogs list was never stored, filled up
        let cli = CLI()
        try await Self.onSmallDisk(cli) { folder, shell in
            #expect(try await cli.run(["list", "rickandmorty"]).status == 0)
            _ = try await shell("dd if=/dev/zero of='\(folder.path)/filler' bs=64k 2>/dev/null")
            // When a dog is deleted, and one moved
            for arguments in [["dogs", "delete", "rex"], ["dogs", "move", "rex", "2"]] {
                let run = try await cli.run(arguments)
                // Then each fails as storage's failure (exit 1), saying the disk is full, and not that rex is not in the list
                #expect(run.status == 1 && run.stderr.contains("disk is full") && !run.stderr.contains("not in the Dogs list"),
                        "\(arguments): \(run.status) \(run.stderr)")
            }
            // And a page fetched then, shown as JSON, says it was not stored, and why
            let listed = try await cli.run(["list", "rickandmorty", "--page", "2", "--json"])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
            let status = try #require(object["status"] as? [String: Any])
            #expect(status["origin"] as? String == "network" && (status["notStored"] as? String)?.contains("disk is full") == true, "\(status)")
        }
    }

    /// Mounts a 3 MB tmpfs on `cli`'s data folder for `body`, given the folder and a shell to run commands in, and
    /// unmounts it after. Its owner's only: a tmpfs's root is otherwise 1777, which Kiosk refuses (anyone could put files
    /// there).
    static func onSmallDisk(_ cli: CLI, _ body: (URL, @Sendable (String) async throws -> Int32) async throws -> Void) async throws {
        let folder = cli.dataDirectory
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        @Sendable func shell(_ command: String) async throws -> Int32 {
            try await ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", command]).status
        }
        try #require(try await shell("mount -t tmpfs -o size=3m,mode=0700 kiosk-full '\(folder.path)'") == 0)
        do {
            try await body(folder, shell)
        } catch {
            _ = try? await shell("umount '\(folder.path)'")
            throw error
        }
        _ = try? await shell("umount '\(folder.path)'")
    }
}

extension ProcessHardeningTests {
    @Test("on a full disk, kiosk proxy cache clear and kiosk log clear give the space back, as the proxy's warning tells the user to",
          .enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func clearsFreeAFullDisk() async throws {
        // Given a data folder on a 3 MB file system, a request log, and a proxy cache seeded until the disk filled
        let cli = CLI()
        try await Self.onSmallDisk(cli) { folder, shell in
            #expect(try await cli.run(["list", "dogs"]).status == 0)
            let body = String(repeating: "0123456789abcdef", count: 20_000)
            let entries = (0..<12).map { index in
                #"{"startedDateTime": "2026-01-01T00:00:00Z", "request": {"method": "GET", "url": "http://app.test/\#(index)"}, "#
                    + #""response": {"status": 200, "headers": [{"name": "Cache-Control", "value": "max-age=60"}], "#
                    + #""content": {"mimeType": "text/plain", "text": "\#(body)"}}}"#
            }
            // (an archive each: an import is one transaction, all of it stored or none)
            let archives = TemporaryDirectory.url("kiosk-full-har")
            try FileManager.default.createDirectory(at: archives, withIntermediateDirectories: true)
            for (index, entry) in entries.enumerated() {
                let archive = archives.appendingPathComponent("\(index).har")
                try Data(#"{"log": {"entries": [\#(entry)]}}"#.utf8).write(to: archive)
                _ = try await cli.run(["proxy", "cache", "import", archive.path])
            }
            // (what space is left, taken by a file of its own: the disk is full)
            _ = try await shell("dd if=/dev/zero of='\(folder.path)/filler' bs=16k 2>/dev/null")
            let free = { ((try FileManager.default.attributesOfFileSystem(forPath: folder.path))[.systemFreeSize] as? NSNumber)?.intValue ?? 0 }
            let before = try free()
            #expect(before < 100_000)

            // When the cache is cleared, then it says how many answers went, and the space they held is free again
            let cleared = try await cli.run(["proxy", "cache", "clear"])
            #expect(cleared.status == 0 && cleared.stdout.hasPrefix("Removed "), "\(cleared.stderr)")
            #expect(!cleared.stdout.hasPrefix("Removed 0 "), "\(cleared.stdout)")
            #expect(try free() > before + 300_000)
            #expect(try await cli.run(["proxy", "cache", "stats"]).stdout.contains("empty"))
            // And the request log clears too, where it said the disk was full
            _ = try await shell("dd if=/dev/zero of='\(folder.path)/filler2' bs=16k 2>/dev/null")
            let log = try await cli.run(["log", "clear"])
            #expect(log.status == 0 && log.stdout.hasPrefix("Cleared "), "\(log.stderr)")
        }
    }
}

@Suite("Secrets echoed to the command line and the web app", .serialized)
struct EchoedSecretsProcessTests {
    /// Runs `kiosk` with `environment` added; stdout and stderr together.
    private func kiosk(_ arguments: [String], _ environment: [String: String]) async throws -> String {
        let process = try ChildProcess(CLI.executable, arguments: arguments,
                                       environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                       stdout: .pipe, stderr: .sameAsOutput)
        return await process.collected().stdout
    }

    @Test("against an upstream that echoes credentials, no key or signature reaches CLI output, HAR, cURL, pages, /api or a file")
    func cliAndPagesClean() async throws {
        // Given `kiosk demo-upstream --echo-credentials` with known keys, and Kiosk pointed at it
        let folder = TemporaryDirectory.url("kiosk-echo")
        let keys = ["KIOSK_DEMO_NYT_API_KEY": "nytkey0123456789abcdef", "KIOSK_DEMO_MARVEL_PUBLIC_KEY": "marvelpub0123456789",
                    "KIOSK_DEMO_MARVEL_PRIVATE_KEY": "marvelpriv0123456789"]
        let upstream = try ChildProcess(CLI.executable, arguments: ["demo-upstream", "--port", "0", "--echo-credentials"],
                                        environment: ProcessInfo.processInfo.environment.merging(keys) { $1 },
                                        stdout: .pipe, stderr: .inherit)
        defer { upstream.signal(); upstream.waitUntilExit() }
        let text = try await upstream.printed(until: "KIOSK_DOGS_URL=")
        func exported(_ name: String) -> String {
            guard let rest = text.components(separatedBy: "export \(name)=").dropFirst().first else { return "" }
            return String(rest.prefix { !$0.isWhitespace })
        }
        let environment = ["KIOSK_NYT_BASE_URL": exported("KIOSK_NYT_BASE_URL"), "KIOSK_MARVEL_BASE_URL": exported("KIOSK_MARVEL_BASE_URL"),
                           "KIOSK_RICKANDMORTY_BASE_URL": exported("KIOSK_RICKANDMORTY_BASE_URL"), "KIOSK_DOGS_URL": exported("KIOSK_DOGS_URL"),
                           "NYT_API_KEY": keys["KIOSK_DEMO_NYT_API_KEY"]!, "MARVEL_PUBLIC_KEY": keys["KIOSK_DEMO_MARVEL_PUBLIC_KEY"]!,
                           "MARVEL_PRIVATE_KEY": keys["KIOSK_DEMO_MARVEL_PRIVATE_KEY"]!,
                           "XDG_CONFIG_HOME": folder.appendingPathComponent("config").path]
        let data = ["--data-dir", folder.path]

        // When the command line reads, shows, searches, logs and exports
        var outputs: [String] = []
        for command in [["list", "marvel"], ["list", "marvel", "--json"], ["list", "nyt"], ["show", "marvel", "1011334"],
                        ["list", "marvel", "--refresh"], ["search", "marvel", "spider"], ["log"], ["log", "show", "1", "--curl"],
                        ["log", "show", "2", "--json"], ["har", "export", "-"]] {
            await outputs.append(try kiosk(command + data, environment))
        }
        // And the web app renders the same data
        let serve = try ChildProcess(CLI.executable, arguments: ["serve", "--port", "0"] + data,
                                     environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                     stdout: .pipe, stderr: .inherit)
        let line = try await serve.printed(until: "Kiosk on http://127.0.0.1:")
        let port = line.components(separatedBy: "Kiosk on http://127.0.0.1:").last?.prefix { $0.isNumber } ?? ""
        for path in ["/marvel", "/marvel/1011334", "/api/marvel", "/nyt", "/debug/api/requests", "/debug"] {
            let (body, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)\(path)")!)
            outputs.append(String(decoding: body, as: UTF8.self))
        }
        serve.signal()
        await serve.exited()

        // Then the echoes are there, redacted, and no key is anywhere
        #expect(outputs[0].contains("Invalid ApiKey <redacted>"))
        let leaked = try NSRegularExpression(pattern: "Invalid ApiKey (?!<redacted>|&lt;redacted&gt;|&#60;redacted&#62;)\\S+")
        var files = Data()
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            files += (try? Data(contentsOf: folder.appendingPathComponent(name))) ?? Data()
        }
        for (index, output) in outputs.enumerated() {
            let range = NSRange(output.startIndex..., in: output)
            #expect(leaked.firstMatch(in: output, range: range) == nil, "output \(index) shows an echoed credential: \(leaked.firstMatch(in: output, range: range).map { (output as NSString).substring(with: $0.range) } ?? "")")
            for key in keys.values { #expect(!output.contains(key), "output \(index) shows \(key)") }
        }
        for key in keys.values { #expect(files.range(of: Data(key.utf8)) == nil, "\(key) is in a file") }
    }
}
