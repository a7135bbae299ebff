import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#endif
import KioskCore
import KioskDemoUpstream
import KioskProcess
import KioskProxy
import KioskStore
import KioskTestSupport
import Testing

/// Runs the built `kiosk` executable (it sits next to the test bundle) with a private data folder.
extension ChildProcess {
    /// What the process printed on its piped standard output until it has printed every one of `markers` to the end of a
    /// line (or closed it): a server's lines saying where it listens, in whatever order they come.
    /// Read on a thread of its own: a server slow to start must not hold one of the threads every test's tasks run on.
    func printed(until markers: String...) async throws -> String {
        try await ChildProcess.offThePool { [self] in try printed(until: markers) }
    }

    /// `printed(until:)`, read on the calling thread.
    private func printed(until markers: [String]) throws -> String {
        // A plain error: this runs on a thread of its own, where no test is current to record an issue.
        guard let out = standardOutput else { throw CocoaError(.fileReadNoPermission) }
        var text = ""
        while !markers.allSatisfy({ marker in text.range(of: marker).map { text[$0.upperBound...].contains("\n") } ?? false }) {
            let chunk = out.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        return text
    }
}

struct CLI {
    /// The private data folder, made at once: commands that only read refuse a `--data-dir` that does not exist.
    let dataDirectory: URL

    init() {
        dataDirectory = TemporaryDirectory.url("kiosk-cli")
        try? FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
    }

    static var executable: URL {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // The test bundle may be a directory (…/kioskPackageTests.xctest) or a plain binary.
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("kiosk").path), folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent("kiosk")
    }

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        /// The run's own peak resident memory, in KiB.
        let peakResidentKiB: Int
    }

    /// Runs `kiosk arguments` to the end with its standard output on a pseudo-terminal (80 columns unless
    /// `COLUMNS` says otherwise), and returns what it printed there.
    func runOnTerminal(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> String {
        try await ChildProcess.offThePool { try runOnTerminalHere(arguments, environment: extra) }
    }

    /// `runOnTerminal`, on the calling thread (one of its own: failures are thrown, as no test is current there to
    /// record an issue).
    private func runOnTerminalHere(_ arguments: [String], environment extra: [String: String]) throws -> String {
        // The multiplexer's new terminal, unlocked, and its number (what posix_openpt, unlockpt and ptsname do).
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        guard master >= 0 else { throw POSIXError(.ENODEV) }
        defer { close(master) }
        // Linux's TIOCSPTLCK, _IOW('T', 0x31, int), and TIOCGPTN, _IOR('T', 0x30, unsigned int): macros Swift does not import.
        let setLock: UInt = 0x4004_5431, getNumber: UInt = 0x8004_5430
        var unlock: CInt = 0, number: CUnsignedInt = 0
        guard ioctl(master, setLock, &unlock) == 0, ioctl(master, getNumber, &number) == 0 else { throw POSIXError(.ENOTTY) }
        let slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw POSIXError(.ENODEV) }
        var size = winsize(ws_row: 40, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(slave, UInt(TIOCSWINSZ), &size)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = dataDirectory.appendingPathComponent("config").path
        environment["COLUMNS"] = nil
        environment["NO_COLOR"] = nil
        environment["TERM"] = "xterm"
        environment.merge(extra) { _, new in new }
        let child = try ChildProcess(Self.executable, arguments: arguments + ["--data-dir", dataDirectory.path],
                                     environment: environment, stdout: .descriptor(slave), stderr: .null)
        close(slave)
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        // Read until the child has closed its end (EIO on Linux once no process holds the terminal).
        while true {
            let count = read(master, &buffer, buffer.count)
            if count <= 0 { break }
            output.append(contentsOf: buffer[..<count])
        }
        child.waitUntilExit()
        // A terminal turns each line feed into CR LF.
        return String(decoding: output, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
    }

    /// Runs `kiosk arguments` to the end, with `extra` added to its environment; `input` becomes its standard
    /// input (else /dev/null), `output` its standard output (else a pipe, read into `stdout`).
    func run(_ arguments: [String], dataDir: Bool = true, input: FileHandle? = nil, output: FileHandle? = nil,
             environment extra: [String: String] = [:]) async throws -> Result {
        let result = try await ChildProcess.run(Self.executable, arguments: arguments + (dataDir ? ["--data-dir", dataDirectory.path] : []),
                                          environment: environment(extra), stdin: input.map { .descriptor($0.fileDescriptor) } ?? .null,
                                          stdout: output.map { .descriptor($0.fileDescriptor) } ?? .pipe)
        return Result(status: result.status, stdout: result.stdout, stderr: result.stderr, peakResidentKiB: result.peakResidentKiB)
    }

    /// Starts `kiosk arguments` on the private data folder without waiting for it (its output and errors to pipes), held
    /// until it reads a line from `gate`, a pipe's reading end: it first prints a line feed, once waiting, so that several
    /// are let go at one moment (one line each, written at once), as processes a script starts together.
    func start(_ arguments: [String], heldOn gate: CInt) throws -> ChildProcess {
        let script = #"echo; read -r _; exec "$0" "$@""#
        return try ChildProcess(URL(fileURLWithPath: "/bin/sh"),
                                arguments: ["-c", script, Self.executable.path] + arguments + ["--data-dir", dataDirectory.path],
                                environment: environment([:]), stdin: .descriptor(gate))
    }

    /// This process's environment without the upstreams and keys of a developer's shell, configuration in the data
    /// folder, `extra` added.
    private func environment(_ extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in ["KIOSK_NYT_BASE_URL", "KIOSK_MARVEL_BASE_URL", "KIOSK_RICKANDMORTY_BASE_URL", "KIOSK_DOGS_URL",
                    "NYT_API_KEY", "MARVEL_PUBLIC_KEY", "MARVEL_PRIVATE_KEY"] {
            environment[key] = nil
        }
        environment["XDG_CONFIG_HOME"] = dataDirectory.appendingPathComponent("config").path
        environment.merge(extra) { _, new in new }
        return environment
    }
}

@Suite("The kiosk command line", .serialized)
struct CLITests {
    @Test("list prints a table with the status line, then answers from the store; --json is machine-readable")
    func listTableAndJSON() async throws {
        let cli = CLI()
        let table = try await cli.run(["list", "rickandmorty"])
        #expect(table.status == 0)
        #expect(table.stdout.contains("Rick Sanchez"))
        #expect(table.stdout.contains("page 1 of 42"))

        let json = try await cli.run(["list", "rickandmorty", "--json"])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect((object["items"] as? [Any])?.count == 20)
        let status = try #require(object["status"] as? [String: Any])
        #expect(status["origin"] as? String == "store")
        #expect(status["stale"] as? Bool == false)

        let offline = try await cli.run(["list", "rickandmorty", "--offline", "--page", "2"])
        #expect(offline.status == 2)
        #expect(offline.stderr.hasPrefix("error: ") && offline.stderr.contains("kept once read online"), "\(offline.stderr)")

        // And a filtered list's next page is asked with the same filters and data folder
        let filtered = try await cli.run(["list", "rickandmorty", "--status", "alive", "--gender", "female"])
        #expect(filtered.stdout.contains("Next: kiosk list rickandmorty --gender female --status alive --data-dir "
                                         + cli.dataDirectory.path + " --page 2\n"), "\(filtered.stdout)")
    }

    @Test("Output that cannot be written (a full disk: /dev/full) is an error line and exit 1, never a crash nor a silent 0",
          arguments: [["list", "dogs"], ["list", "dogs", "--json"], ["har", "export", "-"], ["log", "--json"], ["proxy", "ca"], ["proxy", "ca", "--der"],
                      ["--help"], ["--version"], ["list", "--help"]])
    func unwritableOutput(arguments: [String]) async throws {
        let cli = CLI()
        // Given a stored page and a logged request
        #expect(try await cli.run(["list", "dogs"]).status == 0)
        // When a command's output goes to a device that is always full
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        defer { try? full.close() }
        let result = try await cli.run(arguments, output: full)
        // Then it says so in one line and fails, as a script needs to know
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("error: ") && result.stderr.contains("No space left on device"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }

    @Test("An error that cannot be written (standard error on a full disk) still ends with its exit status, never a crash")
    func unwritableErrors() async throws {
        let cli = CLI()
        // Given standard error on a device that is always full
        // When a command fails on bad input
        let result = try await ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), arguments: [
            "-c", #"exec "$0" "$@" 2>/dev/full"#, CLI.executable.path, "list", "nowhere", "--data-dir", cli.dataDirectory.path,
        ])
        // Then it exits 2 as it would have with the line said (a crash is 132)
        #expect(result.status == 2, "\(result.status)")
    }

    @Test("kiosk proxy ca --der refuses to write its binary bytes to a terminal, saying where to send them")
    func derNotToATerminal() async throws {
        // Given a terminal: `script` gives the command one
        let cli = CLI()
        let result = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/script"), arguments: [
            "-qec", "\(CLI.executable.path) proxy ca --der --data-dir \(cli.dataDirectory.path)", "/dev/null",
        ])
        // Then it is bad input, pointing to a file
        #expect(result.status == 2 && result.stdout.contains("> kiosk-ca.der"), "\(result.status) \(result.stdout)")
    }

    @Test("A list whose upstream answers 404 to its first page (a wrong base URL) is a failure of the world: exit 1, saying the status, not bad input")
    func firstPageNotFoundIsAnUpstreamFailure() async throws {
        // Given Rick and Morty's base URL set to a path its upstream does not have
        let upstream = DemoUpstream(configuration: DemoUpstreamConfiguration())
        try await upstream.start()
        defer { Task { await upstream.stop() } }
        let wrong = await upstream.rickAndMortyBaseURL.appendingPathComponent("wrong").absoluteString
        // When the list is asked for
        let result = try await CLI().run(["list", "rickandmorty", "--live"], environment: ["KIOSK_RICKANDMORTY_BASE_URL": wrong])
        // Then it fails as the upstream's failure, saying the 404 and where, with no pointer to the command's help
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("error: ") && result.stderr.contains("404") && result.stderr.contains("/wrong/"), "\(result.stderr)")
        #expect(!result.stderr.contains("--help"), "\(result.stderr)")
    }

    @Test("Ctrl-C or SIGTERM during a sync stops it between pages, says how far it got, keeps what was stored, and exits 128 + the signal",
          arguments: [SIGINT, SIGTERM])
    func syncInterrupted(signal: CInt) async throws {
        // Given an upstream answering each page in half a second
        // When a sync of its 42 pages of characters is interrupted once a few pages have been asked for
        let (cli, environment, status, said) = try await interruptedSync(latencyMilliseconds: 500, afterRequests: 3,
                                                                         waiting: .milliseconds(600), signal: signal)
        // Then it ends at once with the shell's status for the signal, saying where it stopped and what to do
        #expect(status == 128 + signal, "\(said)")
        #expect(said.hasPrefix("rickandmorty: interrupted after ") && said.contains("Run the same command again to finish."), "\(said)")
        // And the pages fetched before are stored and read offline (from the store of that upstream's data)
        let stored = try await cli.run(["list", "rickandmorty", "--offline"],
                                 environment: ["KIOSK_RICKANDMORTY_BASE_URL": environment["KIOSK_RICKANDMORTY_BASE_URL"] ?? ""])
        #expect(stored.status == 0 && stored.stdout.contains("Rick Sanchez"), "\(stored.stderr)")
    }

    /// Runs `kiosk sync rickandmorty` against a demo upstream answering each page in `latencyMilliseconds`, and sends it
    /// `signal` once it has asked for `afterRequests` pages and `waiting` more has passed: the CLI, the environment naming
    /// that upstream, the exit status and what the sync said on standard error.
    private func interruptedSync(latencyMilliseconds: Int, afterRequests: Int, waiting: Duration,
                                 signal: CInt) async throws -> (CLI, [String: String], Int32, String) {
        let upstream = DemoUpstream(configuration: DemoUpstreamConfiguration(faults: FaultSettings(latencyMilliseconds: latencyMilliseconds)))
        try await upstream.start()
        let cli = CLI()
        var environment = ProcessInfo.processInfo.environment
        environment["KIOSK_RICKANDMORTY_BASE_URL"] = await upstream.rickAndMortyBaseURL.absoluteString
        let child = try ChildProcess(CLI.executable, arguments: ["sync", "rickandmorty", "--data-dir", cli.dataDirectory.path],
                                     environment: environment)
        for _ in 0..<600 where await upstream.requestCount(pathPrefix: "/api/character") < afterRequests {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: waiting)
        child.signal(signal)
        let ended = await child.collected()
        await upstream.stop()
        return (cli, environment, ended.status, ended.stderr)
    }

    @Test("A sync interrupted while its first page is on its way says that nothing was stored, not a page done")
    func syncInterruptedBeforeFirstPage() async throws {
        // Given an upstream answering each page in 3 s
        // When a sync is interrupted while its first page is asked
        let (_, _, status, said) = try await interruptedSync(latencyMilliseconds: 3000, afterRequests: 1,
                                                             waiting: .milliseconds(200), signal: SIGINT)
        // Then it says nothing was stored ("after 1 page of 1" counted the page it cut short)
        #expect(status == 128 + SIGINT, "\(said)")
        #expect(said == "rickandmorty: interrupted before its first page came; nothing of it was stored. Run the same command again to sync it.\n",
                "\(said)")
    }

    @Test("A catalog's table fits an 80-column terminal: its text columns are cut, never its ids; a pipe gets whole lines")
    func tableFitsTheTerminal() async throws {
        let cli = CLI()
        // Given NYT's articles, whose titles and bylines are long
        #expect(try await cli.run(["list", "nyt"]).status == 0)
        // When the list is shown on an 80-column terminal
        let shown = try await cli.runOnTerminal(["list", "nyt", "--offline"]).split(separator: "\n")
        let table = shown.drop { !$0.hasPrefix("#") }.prefix { !$0.hasPrefix("Next") && !$0.isEmpty }
        // Then every row of the table fits, and each row still carries its whole id
        #expect(table.count > 10)
        #expect(table.allSatisfy { $0.count <= 80 }, "\(table.map(\.count))")
        #expect(table.dropFirst().allSatisfy { $0.split(separator: " ", omittingEmptySubsequences: true)[1].allSatisfy(\.isNumber) })
        // And piped, the rows are whole
        let piped = try await cli.run(["list", "nyt", "--offline"]).stdout
        #expect(piped.split(separator: "\n").contains { $0.count > 80 })
    }

    @Test("Bad input gets a one-line error and a non-zero exit",
          arguments: [
            (["list", "pokemon"], Int32(2)),
            (["list", "rickandmorty", "--page", "0"], Int32(2)),
            (["list", "rickandmorty", "--page", "43"], Int32(2)),
            (["show", "rickandmorty", "99999"], Int32(2)),
            (["show", "marvel", "not-a-number"], Int32(2)),
            (["list", "nyt", "--kind", "bogus"], Int32(2)),
            (["dogs", "delete", "no-such-dog"], Int32(2)),
            (["help", "nonexistent"], Int32(2)),
            (["help", "proxy", "nope"], Int32(2)),
            (["list", "rickandmorty", "--page", "-2"], Int32(2)),
            (["proxy", "--port", "-1"], Int32(2)),
          ])
    func badInput(arguments: [String], status: Int32) async throws {
        let result = try await CLI().run(arguments)
        #expect(result.status == status)
        let errorLines = result.stderr.split(separator: "\n").filter { $0.lowercased().hasPrefix("error") }
        #expect(errorLines.count == 1, "stderr: \(result.stderr)")
        #expect(result.stdout.isEmpty)
        // And the error names what was wrong, not a missing value that was given
        #expect(!result.stderr.contains("Missing value"), "stderr: \(result.stderr)")
    }

    @Test("Bad input is said for what it is: a wrong address, a port out of range, an empty endpoint, a huge id cut in the error",
          arguments: [(["proxy", "--host", "999.1.1.1"], "--host 999.1.1.1 is not an IPv4 address"),
                      (["serve", "--host", "[::1]"], "(::1 without them)"),
                      (["proxy", "--reverse", "http://127.0.0.1:1@99999"], "the port after @ must be between 0 and 65535 (got 99999)"),
                      (["breakpoint", "set", "", "--request", "pause"], "Give an endpoint's name"),
                      (["show", "rickandmorty", String(repeating: "7", count: 5_000)], "7777… (500")])
    func badInputSaid(arguments: [String], said: String) async throws {
        let result = try await CLI().run(arguments)
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("error: ") && result.stderr.contains(said), "\(result.stderr)")
        #expect(result.stderr.utf8.count < 1_000, "\(result.stderr.utf8.count) bytes")
    }

    @Test("log clear on a request log that cannot be read moves it aside whole and starts a new one, the catalogs untouched")
    func unreadableLogMovedAside() async throws {
        let cli = CLI()
        // Given a request log whose pages after the first were overwritten (a disk's fault), beside a stored catalog
        #expect(try await cli.run(["list", "dogs"]).status == 0)
        let log = cli.dataDirectory.appendingPathComponent("kiosk-demo-log.sqlite")
        try await DatabaseQueue(path: log.path).writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        var bytes = try Data(contentsOf: log)
        try #require(bytes.count > 8_192)
        bytes.replaceSubrange(4_096..<bytes.count, with: Data(repeating: 0x5A, count: bytes.count - 4_096))
        try bytes.write(to: log)
        let failed = try await cli.run(["log"])
        #expect(failed.status == 1)
        // And the failure says what sets it right
        #expect(failed.stderr.contains("`kiosk log clear` moves it aside and starts a new one."), "\(failed.stderr)")
        // When it is cleared
        let cleared = try await cli.run(["log", "clear"])
        // Then it was moved aside, not deleted, and said where; a new log answers, and the catalog is as it was
        #expect(cleared.status == 0 && cleared.stdout.contains("moved aside to \(log.path).unreadable-"), "\(cleared.stdout)\(cleared.stderr)")
        let aside = try FileManager.default.contentsOfDirectory(atPath: cli.dataDirectory.path).filter { $0.hasPrefix("kiosk-demo-log.sqlite.unreadable-") }
        #expect(aside.count == 1)
        #expect(try await cli.run(["log"]).status == 0)
        #expect(try await cli.run(["list", "dogs", "--offline"]).status == 0)
    }

    @Test("An argument starting with '-' (a negative id, a search for '-rick') is said to be read as an option, with how to pass it",
          arguments: [(["show", "rickandmorty", "-1"], "-1 was read as an option, so '<id>' is missing"),
                      (["search", "marvel", "-rick"], "-rick was read as an option, so '<text>' is missing")])
    func dashedArgument(arguments: [String], said: String) async throws {
        // When a command is given an argument that starts with '-'
        let result = try await CLI().run(arguments)
        // Then the one error line says what happened and how to write it, not only that the argument is missing
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("error: " + said) && result.stderr.contains("put -- before it"), "\(result.stderr)")
    }

    @Test("kiosk help names the command it does not know; a known one's help still exits 0")
    func helpTopics() async throws {
        let unknown = try await CLI().run(["help", "proxy", "nope"])
        #expect(unknown.stderr == "error: there is no command 'proxy nope'. See 'kiosk --help'.\n")
        let known = try await CLI().run(["help", "proxy", "cache"], dataDir: false)
        #expect(known.status == 0 && known.stdout.contains("USAGE: kiosk proxy cache"))
        // And a mistyped command is named, with the one meant, whatever options follow it
        for (typed, meant) in [(["serv", "--port", "0"], "serve"), (["lst", "dogs"], "list"), (["shwo", "rickandmorty", "1"], "show"),
                               (["prox"], "proxy"), (["frobnicate"], nil)] as [([String], String?)] {
            let mistyped = try await CLI().run(typed)
            let suggestion = meant.map { " Did you mean '\($0)'?" } ?? ""
            #expect(mistyped.status == 2 && mistyped.stderr == "error: there is no command '\(typed[0])'.\(suggestion) See 'kiosk --help'.\n",
                    "\(mistyped.stderr)")
        }
        // And so is a mistyped subcommand, whatever options follow it (they were blamed: "Unknown option '--data-dir'"), and
        // a command made of subcommands given only options
        for (typed, said) in [(["cache", "clearr", "--data-dir", "/tmp/x"], "there is no command 'cache clearr'. Did you mean 'cache clear'? See 'kiosk cache --help'."),
                              (["proxy", "cache", "lst"], "there is no command 'proxy cache lst'. Did you mean 'proxy cache list'? See 'kiosk proxy cache --help'."),
                              (["favorite", "zzz"], "there is no command 'favorite zzz'. See 'kiosk favorite --help'."),
                              (["cache", "--data-dir", "/tmp/x"], "'kiosk cache' needs one of its commands first: stats, clear. See 'kiosk cache --help'.")] {
            let mistyped = try await CLI().run(typed, dataDir: false)
            #expect(mistyped.status == 2 && mistyped.stderr == "error: \(said)\n", "\(mistyped.stderr)")
        }
        // And `kiosk log --help` says where the options of `kiosk log` alone are, which its errors point to
        let logHelp = try await CLI().run(["log", "--help"], dataDir: false)
        #expect(logHelp.stdout.contains("`kiosk log list --help`") && logHelp.stdout.contains("USAGE: kiosk log [--filter <filter>]"),
                "\(logHelp.stdout)")
        let negative = try await CLI().run(["list", "rickandmorty", "--page", "-2"])
        #expect(negative.stderr.hasPrefix("error: --page cannot be negative (got -2)."), "stderr: \(negative.stderr)")
    }

    @Test("show prints a character's places and every episode; sync --related adds episodes and locations")
    func rickAndMortyInDepth() async throws {
        let cli = CLI()
        // When Rick is shown
        let rick = try await cli.run(["show", "rickandmorty", "1"])
        // Then his places have type, dimension and residents, and his 51 episodes are listed in airing order
        #expect(rick.status == 0)
        #expect(rick.stdout.contains("Origin: Earth (C-137) — Planet · Dimension C-137 · "))
        #expect(rick.stdout.contains("Episodes (51):\n  S01E01 · Pilot · December 2, 2013\n  S01E02 · Lawnmower Dog"))
        // And a location shows its residents a page at a time
        let citadel = try await cli.run(["show", "rickandmorty", "location-3", "--page", "2"])
        #expect(citadel.status == 0)
        #expect(citadel.stdout.contains("Residents ("))
        #expect(citadel.stdout.contains(", page 2 of "))
        #expect(try await cli.run(["show", "rickandmorty", "location-3", "--page", "0"]).status != 0)
        // And sync --related fetches 42 + 3 + 7 pages, with progress
        let sync = try await cli.run(["sync", "rickandmorty", "--related"])
        #expect(sync.status == 0)
        #expect(sync.stdout.contains("rickandmorty: 52 pages (52 updated, 0 unchanged), 1003 items"))
        // And the store then finds an episode by name
        let search = try await cli.run(["search", "rickandmorty", "Rickmurai", "--offline"])
        #expect(search.stdout.contains("episode-51"))
    }

    @Test("An upstream search's results are paged: the first page says the command for the next, and --page reaches it")
    func searchPages() async throws {
        let cli = CLI()
        // Given a search with more results than a page
        let first = try await cli.run(["search", "rickandmorty", "rick"])
        #expect(first.status == 0 && first.stdout.contains(", page 1 of "), "\(first.stdout)")
        let next = try #require(first.stdout.split(separator: "\n").first { $0.hasPrefix("Next: kiosk search rickandmorty rick ") })
        #expect(next.hasSuffix(" --page 2"), "\(next)")
        // When the second page is asked for
        let second = try await cli.run(["search", "rickandmorty", "rick", "--page", "2"])
        // Then it is the upstream's second page, other characters
        #expect(second.status == 0 && second.stdout.contains(", page 2 of "), "\(second.stdout)")
        let ids = { (text: String) in Set(text.split(separator: "\n").dropFirst().compactMap { $0.split(separator: " ").first }) }
        #expect(ids(first.stdout).isDisjoint(with: ids(second.stdout).subtracting(["ID", "Next:"])), "\(second.stdout)")
        #expect(try await cli.run(["search", "rickandmorty", "rick", "--page", "0"]).status == 2)
    }

    @Test("serve refuses plain HTTP on an address other than loopback unless asked for explicitly")
    func plainHTTPOffLoopback() async throws {
        let cli = CLI()
        // When serve is asked to listen on every address without the explicit flag
        let refused = try await cli.run(["serve", "--host", "0.0.0.0", "--port", "0"])
        // Then it refuses at once, saying why and how to insist
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--host 0.0.0.0 would serve plain HTTP to the network"))
        #expect(refused.stderr.contains("--allow-plain-http"))
        #expect(refused.stdout.isEmpty)
    }

    @Test("In demo mode show prints no address that no browser can open (the demo upstream's demo.invalid)")
    func demoAddressesLeftOut() async throws {
        let cli = CLI()
        let list = try await cli.run(["list", "nyt", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])
        let first = try #require((object["items"] as? [[String: Any]])?.first?["itemID"] as? String)
        for arguments in [["show", "nyt", first], ["show", "rickandmorty", "1"]] {
            let shown = try await cli.run(arguments)
            #expect(shown.status == 0)
            #expect(!shown.stdout.contains("demo.invalid"), "\(arguments): \(shown.stdout)")
        }
    }

    @Test("sync without a terminal prints only its summary on standard output, one line a catalog, with one page as “1 page”")
    func syncPlainProgress() async throws {
        let cli = CLI()
        let result = try await cli.run(["sync", "dogs"])
        #expect(result.status == 0)
        #expect(result.stdout.split(separator: "\n").count == 1, "\(result.stdout)")
        #expect(result.stdout.hasPrefix("dogs: 1 page (1 updated, 0 unchanged), 5 items in "))
        #expect(!result.stdout.contains("1/1") && !result.stdout.contains("\r"))
    }

    @Test("A sync whose pages fail ends with one error line saying how many failed and why, after each page's own line")
    func syncFailureSaid() async throws {
        let cli = CLI()
        // Given a dogs list whose address nothing listens on
        let result = try await cli.run(["sync", "dogs"], environment: ["KIOSK_DOGS_URL": "http://127.0.0.1:1/dogs"])
        // Then the sync fails, and its last line of errors is the one that starts with "error: "
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("error: ") }.count == 1, "\(result.stderr)")
        #expect(lines.last?.hasPrefix("error: sync failed for 1 page of dogs: Cannot connect to 127.0.0.1:1") == true, "\(result.stderr)")
        #expect(lines.last?.hasSuffix("What was stored before stays readable offline.") == true)
    }

    @Test("JSON written to a pipe its reader closed ends Kiosk as it ends any tool, by SIGPIPE, with nothing on standard error")
    func closedPipe() async throws {
        let cli = CLI()
        // Given a pipe whose reading end is closed, as `| head -1` leaves it
        let pipe = Pipe()
        try pipe.fileHandleForReading.close()
        // When a list's JSON is written to it
        let result = try await cli.run(["list", "rickandmorty", "--json"], output: pipe.fileHandleForWriting)
        // Then the shell sees the status of SIGPIPE, and no error is said
        #expect(result.status == 128 + SIGPIPE, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    @Test("On a terminal, sync draws its progress bar and log colours its statuses; piped, neither has a control character")
    func terminalOnly() async throws {
        let cli = CLI()
        #expect(try await cli.run(["list", "rickandmorty"]).status == 0)
        // Given the same commands on a pseudo-terminal and piped
        let sync = try await cli.runOnTerminal(["sync", "dogs"])
        let log = try await cli.runOnTerminal(["log"])
        let piped = try await cli.run(["log"])
        // Then the terminal gets the bar and the colours, and the pipe plain text
        #expect(sync.contains("\r") && sync.contains("█"))
        #expect(log.contains("\u{1B}[32m200"))
        #expect(!piped.stdout.contains("\u{1B}"))
        #expect(try await cli.runOnTerminal(["log"], environment: ["NO_COLOR": "1"]).contains("\u{1B}") == false)
    }

    @Test("favorite list --json is /api/favorites' shape: an object whose items are the starred items")
    func favoritesJSONShape() async throws {
        // Given a starred item
        let cli = CLI()
        #expect(try await cli.run(["favorite", "add", "rickandmorty", "1"]).status == 0)
        // When the favorites are listed as JSON
        let listed = try await cli.run(["favorite", "list", "--json"])
        // Then it is {"items": [...]}, as the API answers, not a bare array
        let object = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any], "\(listed.stdout)")
        #expect(Set(object.keys) == ["items"])
        #expect(((object["items"] as? [[String: Any]])?.first?["itemID"] as? String) == "1")
    }

    @Test("A table piped on prints every id whole, as the next command takes it: a long dog's id from list reads with show and favorite")
    func idsAreNeverCut() async throws {
        // Given a dogs list (mocked) holding a dog whose id is longer than any column's limit
        let cli = CLI()
        let body = #"[{"dogName": "Sir Barksalot the Third of Windsor", "description": "Long", "age": 3}]"#
        let file = cli.dataDirectory.deletingLastPathComponent().appendingPathComponent("dogs-\(UUID().uuidString).json")
        try Data(body.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try await cli.run(["mock", "add", "--url", "http://demo.invalid/dogs.json", "--header", "Content-Type: application/json",
                             "--body-file", file.path]).status == 0)
        // When the list is printed to a pipe, and the id it shows is used
        let listed = try await cli.run(["list", "dogs"])
        let id = "sir-barksalot-the-third-of-windsor"
        // Then the id is whole, and show and favorite take it
        #expect(listed.stdout.contains("  \(id)  "), "\(listed.stdout)")
        #expect(try await cli.run(["show", "dogs", id]).status == 0)
        #expect(try await cli.run(["favorite", "add", "dogs", id]).status == 0)
        #expect(try await cli.run(["favorite", "list"]).stdout.contains("  \(id)  "))
    }

    @Test("mock add says the rule as kept, its key left out, and which rule it replaced; breakpoint set says its pattern as kept")
    func mockAddSaysWhatItKept() async throws {
        // Given a mock added on a URL holding an API key
        let cli = CLI()
        let first = try await cli.run(["mock", "add", "--url", "http://app.test/secretq?api_key=MOCKKEYSECRET&x=1", "--body", "sq"])
        // Then what is said has no key
        #expect(first.status == 0 && first.stdout == "Added mock rule 1: GET http://app.test/secretq?x=1 -> 200\n", "\(first.stdout)")
        // When the same URL is mocked again, its items in another order
        let again = try await cli.run(["mock", "add", "--url", "http://app.test/secretq?x=1&api_key=OTHER", "--status", "201"])
        // Then it says it replaced the first
        #expect(again.stdout == "Replaced mock rule 1 with mock rule 2: GET http://app.test/secretq?x=1 -> 201\n", "\(again.stdout)")
        // And a breakpoint on a URL with a token says and lists it without the token
        let set = try await cli.run(["breakpoint", "set", "http://app.test/pages?token=BPQSECRET&page=9", "--request", "pause"])
        #expect(set.status == 0 && !set.stdout.contains("BPQSECRET") && set.stdout.hasPrefix("http://app.test/pages?page=9: "), "\(set.stdout)")
        #expect(!(try await cli.run(["breakpoint", "list"])).stdout.contains("BPQSECRET"))
    }

    @Test("favorite remove takes an id as favorite add does: ' 01' is the character 1 starred as '01'")
    func favoriteRemoveCanonicalID() async throws {
        // Given character 1 starred as "01"
        let cli = CLI()
        #expect(try await cli.run(["favorite", "add", "rickandmorty", "01"]).status == 0)
        // When it is removed as " 01"
        let removed = try await cli.run(["favorite", "remove", "rickandmorty", " 01"])
        // Then it is removed, said under its own id, and no favorite is left
        #expect(removed.status == 0 && removed.stdout == "Removed rickandmorty/1 from favorites.\n", "\(removed.stderr)")
        #expect(try await cli.run(["favorite", "list"]).stdout.contains("No favorites yet"))
    }

    @Test("Once a command has ended, the store's own file holds its data: a copy of that file alone, without its write-ahead log, has the favorite")
    func storeFileHoldsItsData() async throws {
        // Given a favorite added by a command that has ended
        let cli = CLI()
        #expect(try await cli.run(["favorite", "add", "rickandmorty", "1"]).status == 0)
        // When the store's file alone is copied elsewhere, as a backup would be
        let copy = TemporaryDirectory.url("kiosk-store-copy")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: cli.dataDirectory.path).first { $0.hasSuffix(".sqlite") && !$0.contains("-log") && !$0.contains("-proxy-cache") })
        try FileManager.default.copyItem(at: cli.dataDirectory.appendingPathComponent(file), to: copy.appendingPathComponent("copy.sqlite"))
        // Then the copy holds the favorite (it held no table at all: everything was in the log beside the file)
        let database = try DatabaseQueue(path: copy.appendingPathComponent("copy.sqlite").path)
        let favorites = try await database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM favorite") }
        #expect(favorites == 1)
    }

    @Test("A data folder whose name is longer than the file system allows is said to be, the sentence's colon kept after the cut path")
    func overlongDataFolder() async throws {
        let cli = CLI()
        let folder = cli.dataDirectory.appendingPathComponent(String(repeating: "x", count: 300)).path
        let result = try await cli.run(["list", "dogs", "--data-dir", folder], dataDir: false)
        #expect(result.status == 1)
        #expect(result.stderr.contains(" characters): a name in it is longer than the file system allows (255 bytes a name"), "\(result.stderr)")
    }

    @Test("Favorites and dogs edits are kept by cache clear and read offline")
    func favoritesAndDogsSurviveClear() async throws {
        let cli = CLI()
        #expect(try await cli.run(["favorite", "add", "rickandmorty", "1"]).status == 0)
        #expect(try await cli.run(["list", "dogs"]).status == 0)
        #expect(try await cli.run(["dogs", "delete", "rex"]).status == 0)
        #expect(try await cli.run(["cache", "clear"]).status == 0)
        let favorites = try await cli.run(["favorite", "list"])
        #expect(favorites.stdout.contains("Rick Sanchez"))
        let dogs = try await cli.run(["list", "dogs"])
        #expect(!dogs.stdout.contains("Rex"))
        #expect(dogs.stdout.contains("Bella"))
    }
}

@Suite("kiosk log", .serialized)
struct LogCLITests {
    @Test("log fits COLUMNS by shortening the requests before the failure, says failed in its own column, and prints whole lines when piped")
    func logWidth() async throws {
        let cli = CLI()
        // Given a request that fails (a rule makes the dogs' upstream unreachable) and Marvel's long signed URL
        #expect(try await cli.run(["rule", "add", "--endpoint", "dogs.list", "--fail", "offline"]).status == 0)
        _ = try await cli.run(["list", "dogs"])
        #expect(try await cli.run(["list", "marvel"]).status == 0)
        // When the log is printed for a 110-column terminal, and piped
        let narrow = try await cli.run(["log"], environment: ["COLUMNS": "110"])
        let whole = try await cli.run(["log"])
        // Then no line is wider than 110, and the failure is said whole, in its column, with the status failed
        let lines = narrow.stdout.split(separator: "\n")
        #expect(lines.allSatisfy { $0.count <= 110 }, "\(narrow.stdout)")
        #expect(lines.first?.hasSuffix("FAILURE") == true)
        let failed = try #require(lines.first { $0.contains(" failed ") })
        #expect(failed.hasSuffix("Offline: cannot connect to demo.invalid"))
        // And piped, the lines are whole: Marvel's URL to its last parameter
        #expect(whole.stdout.contains("&hash=<redacted>"))
        #expect(!narrow.stdout.contains("&hash=<redacted>"))
    }

    @Test("log lists requests newest first with their decisions, log show prints one in full, bad input is refused")
    func logCommands() async throws {
        let cli = CLI()
        // Given two lists of Rick and Morty (the network, then the store) and one of Marvel
        #expect(try await cli.run(["list", "rickandmorty"]).status == 0)
        #expect(try await cli.run(["list", "rickandmorty"]).status == 0)
        #expect(try await cli.run(["list", "marvel"]).status == 0)
        // When the log is listed
        let table = try await cli.run(["log"])
        // Then it shows the three answers, newest first, with Marvel's secrets redacted
        #expect(table.status == 0)
        let lines = table.stdout.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[1].contains("network") && lines[1].contains("ts=<redacted>"))
        #expect(lines[2].contains("fresh"))
        #expect(lines[3].contains("network") && lines[3].contains("/api/character"))
        // And filters and JSON work
        let json = try await cli.run(["log", "--source", "rickandmorty", "--decision", "fresh", "--json"])
        let records = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(records.count == 1)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(try await cli.run(["log", "--json", "--limit", "1"]).stdout.utf8))
            as? [[String: Any]])
        let newest = try #require(first.first?["id"] as? Int)
        // And show prints headers, timings and the body
        let show = try await cli.run(["log", "show", String(newest)])
        #expect(show.status == 0)
        #expect(show.stdout.contains("Decision:  network"))
        #expect(show.stdout.contains("Response body"))
        #expect(show.stdout.contains("\"attributionText\""))
        // And bad input gets one clear line and a non-zero exit, changing nothing
        // And log show indents a JSON body on a terminal (as received when piped)
        let shown = try await cli.runOnTerminal(["log", "show", String(newest)])
        #expect(shown.contains("\n  \"attributionText\""))
        let unknown = try await cli.run(["log", "show", "999999"])
        #expect(unknown.status == 2 && unknown.stderr.contains("999999"))
        let badStatus = try await cli.run(["log", "--status", "7xx"])
        #expect(badStatus.status == 2 && badStatus.stderr.contains("--status"))
        #expect(try await cli.run(["log"]).stdout.split(separator: "\n").count == 4)
        // And the log exports as HAR to a file, and show --curl prints a redacted command
        let har = cli.dataDirectory.appendingPathComponent("out.har")
        let export = try await cli.run(["har", "export", har.path])
        // (the answer from the store, no exchange, left out: HAR would take it for a failure)
        #expect(export.status == 0 && export.stderr.contains("Wrote 2 requests")
                && export.stderr.contains("1 answer Kiosk gave from its store, with no exchange, left out."), "\(export.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: har)) as? [String: Any])
        #expect(((document["log"] as? [String: Any])?["entries"] as? [Any])?.count == 2)
        // (and to standard output, what is left out is said on standard error alone, the archive unchanged on stdout)
        let piped = try await cli.run(["har", "export", "-"])
        #expect(piped.stderr.contains("The archive holds 2 requests; 1 answer Kiosk gave from its store, with no exchange, left out."),
                "\(piped.stderr)")
        #expect(piped.stdout.hasPrefix("{") && !piped.stdout.contains("left out"))
        // And an export takes the debugger's filter language, as kiosk log does: the Marvel exchange alone, none of Rick and Morty's
        let filtered = try await cli.run(["har", "export", "-", "--filter", "source:marvel -has:error"])
        let marvel = try #require(try JSONSerialization.jsonObject(with: Data(filtered.stdout.utf8)) as? [String: Any])
        let urls = (((marvel["log"] as? [String: Any])?["entries"] as? [[String: Any]]) ?? []).compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
        #expect(filtered.status == 0 && urls.count == 1 && urls.allSatisfy { $0.contains("/v1/public/characters") }, "\(urls) \(filtered.stderr)")
        #expect(try await cli.run(["har", "export", "-", "--filter", "status:6xx"]).status == 2)
        let curl = try await cli.run(["log", "show", String(newest), "--curl"])
        #expect(curl.stdout.hasPrefix("curl '") && curl.stdout.contains("hash=<redacted>"))
        // And an export to a folder that does not exist fails clearly and writes nothing
        let bad = try await cli.run(["har", "export", "/nonexistent-folder/out.har"])
        #expect(bad.status == 1 && bad.stderr.contains("cannot write /nonexistent-folder/out.har"))
        // And clear empties it
        #expect(try await cli.run(["log", "clear"]).stdout.contains("Cleared 3 requests."))
        #expect(try await cli.run(["log"]).stdout.contains("No requests logged yet."))
    }

    @Test("log show prints a request's body as well as its answer's, each under its size")
    func logShowRequestBody() async throws {
        // Given a logged POST (an app's, through the proxy) with a form body and a JSON answer
        let cli = CLI()
        let log = try RequestLog.open(at: cli.dataDirectory.appendingPathComponent("kiosk-demo-log.sqlite").path)
        let id = try log.append(RequestRecord(
            startedAt: Date(), source: nil, endpoint: "app.test", method: "POST", url: "http://app.test/orders",
            requestBody: CapturedBody(data: Data("side=effect".utf8), originalSize: 11), status: 201,
            responseBody: CapturedBody(data: Data(#"{"ok":true}"#.utf8), originalSize: 11), timings: RequestTimings(total: 0.01), decision: .network))
        // When it is shown
        let show = try await cli.run(["log", "show", String(id)])
        // Then both bodies are printed, the request's first
        #expect(show.status == 0, "\(show.stderr)")
        let output = show.stdout
        let request = try #require(output.firstRange(of: "Request body (11 bytes)\nside=effect"), "\(output)")
        let response = try #require(output.firstRange(of: "Response body (11 bytes)\n{\"ok\":true}"), "\(output)")
        #expect(request.lowerBound < response.lowerBound)
    }

    @Test("log --filter reads the debugger's filter language; a mistake is printed with a pointer under it and exit status 2")
    func logFilter() async throws {
        let cli = CLI()
        // Given Rick and Morty listed twice (a miss, then a hit) and dogs once
        #expect(try await cli.run(["list", "rickandmorty"]).status == 0)
        #expect(try await cli.run(["list", "rickandmorty"]).status == 0)
        #expect(try await cli.run(["list", "dogs"]).status == 0)
        // When the log is filtered in the language
        let hits = try await cli.run(["log", "--filter", "cache:hit source:rickandmorty", "--json"])
        let misses = try await cli.run(["log", "--filter", "cache:fwd=miss -source:dogs"])
        // Then the JSON has the one hit with its Cache-Status, and the table the one miss with its label
        #expect(hits.status == 0)
        let records = try #require(try JSONSerialization.jsonObject(with: Data(hits.stdout.utf8)) as? [[String: Any]])
        #expect(records.count == 1)
        #expect((records.first?["cacheStatus"] as? String)?.hasPrefix("Kiosk;hit;ttl=") == true)
        #expect((records.first?["cacheStatus"] as? String)?.hasSuffix(";detail=fresh") == true)
        let lines = misses.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].contains("CACHE") && lines[1].contains("fwd=miss network") && lines[1].contains("/api/character"))
        // And a filter of one negated term, as the help writes it, is the filter, not an option
        let negated = try await cli.run(["log", "--filter", "-source:rickandmorty"])
        #expect(negated.status == 0 && negated.stdout.split(separator: "\n").count == 2 && negated.stdout.contains("/dogs"), "\(negated.stderr)")
        // And the flags combine with it
        #expect(try await cli.run(["log", "--source", "dogs", "--filter", "cache:fwd"]).stdout.split(separator: "\n").count == 2)
        // And --filter given twice applies both, not the last alone
        let both = try await cli.run(["log", "--filter", "cache:fwd=miss", "--filter", "-source:dogs"])
        #expect(both.status == 0 && both.stdout.split(separator: "\n").count == 2 && both.stdout.contains("/api/character"), "\(both.stdout)\(both.stderr)")
        // And log show prints the record's Cache-Status
        let id = try #require(records.first?["id"] as? Int)
        #expect(try await cli.run(["log", "show", String(id)]).stdout.contains("Cache-Status: Kiosk;hit;ttl="))
        // And a mistake is one error line, then the filter with carets under the mistake
        let bad = try await cli.run(["log", "--filter", "source:rickandmorty status:6xx"])
        #expect(bad.status == 2)
        #expect(bad.stdout.isEmpty)
        #expect(bad.stderr == "error: --filter: status must be 1xx, 2xx, 3xx, 4xx, 5xx, error (no response), store (answered from Kiosk's store) or a code from 100 to 599.\n"
                + "  source:rickandmorty status:6xx\n" + String(repeating: " ", count: 2 + 27) + "^^^\n")
        // And a key given both as an option and in the filter is refused
        let twice = try await cli.run(["log", "--source", "nyt", "--filter", "source:dogs"])
        #expect(twice.status == 2 && twice.stderr.contains("source is given both in --filter and as its own option"))
    }

    @Test("kiosk proxy refuses a host other machines reach without --proxy-auth; kiosk proxy password prints a new password once")
    func proxyHostNeedsAPassword() async throws {
        let cli = CLI()
        // Given a proxy asked to listen on every network without a password
        let open = try await cli.run(["proxy", "--host", "0.0.0.0", "--port", "0", "--console-port", "0"])
        // Then it does not start, and says what to add
        #expect(open.status == 2)
        #expect(open.stderr.contains("--proxy-auth"), "\(open.stderr)")
        // When a password is made
        let first = try await cli.run(["proxy", "password"])
        let second = try await cli.run(["proxy", "password"])
        // Then each run prints a new one, and the data directory keeps neither in the clear
        #expect(first.status == 0 && second.status == 0)
        let password = try #require(first.stdout.split(separator: " ").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) })
        #expect(password.count >= 40 && !second.stdout.contains(password))
        let stored = try String(contentsOf: cli.dataDirectory.appendingPathComponent("kiosk-proxy-auth"), encoding: .utf8)
        #expect(!stored.contains(password))
    }

    @Test("kiosk proxy --proxy-auth run with no terminal does not print the password it made, and says how to get one")
    func proxyPasswordNotInALog() async throws {
        let cli = CLI()
        // Given a proxy started for other machines, its output a pipe (a service manager's journal, a container's log)
        let child = try ChildProcess(CLI.executable, arguments: ["proxy", "--proxy-auth", "--port", "0", "--console-port", "0",
                                                                  "--data-dir", cli.dataDirectory.path])
        // When it has made its password (the digest file is written just before the password would be said), and stops
        let digest = cli.dataDirectory.appendingPathComponent("kiosk-proxy-auth")
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: digest.path), Date() < deadline { try await Task.sleep(for: .milliseconds(100)) }
        try await Task.sleep(for: .seconds(1))
        child.signal(SIGINT)
        let output = await child.collected().stdout
        // Then the output says a password was made and not printed, and holds no password nor a URL carrying one
        #expect(output.contains("Proxy password: made, and not printed"), "\(output)")
        #expect(!output.contains("shown this once") && !output.contains("http://kiosk:"), "\(output)")
    }

    @Test("kiosk proxy started with HTTPS_PROXY set says apps' requests do not take it (a shell that ran kiosk proxy env points it at the proxy)")
    func proxySaysItIgnoresTheProxyVariables() async throws {
        let cli = CLI()
        var environment = ProcessInfo.processInfo.environment
        environment["HTTPS_PROXY"] = "http://127.0.0.1:9"
        let child = try ChildProcess(CLI.executable, arguments: ["proxy", "--port", "0", "--console-port", "0", "--data-dir", cli.dataDirectory.path],
                                     environment: environment, stdout: .pipe, stderr: .null)
        var output = try await child.printed(until: "Console on", "Kiosk proxy on")
        child.signal(SIGINT)
        output += await child.collected().stdout
        #expect(output.contains("Note: HTTPS_PROXY is set; apps' requests go to their upstreams directly, not through it"), "\(output)")
    }

    @Test("kiosk proxy says on start that its CA expires within 30 days, and what to do")
    func proxySaysItsAuthorityEndsSoon() async throws {
        let cli = CLI()
        // Given a data folder whose CA was made ten years less five days ago
        let made = Date().addingTimeInterval(-(10 * 365 - 5) * 86_400)
        _ = try ProxyAuthority.inDirectory(cli.dataDirectory, now: { made })
        // When the proxy starts on it
        let child = try ChildProcess(CLI.executable, arguments: ["proxy", "--port", "0", "--console-port", "0", "--data-dir", cli.dataDirectory.path])
        _ = try await child.printed(until: "Console on", "Kiosk proxy on")
        child.signal(SIGINT)
        let said = await child.collected().stderr
        // Then it warns, with the day and the files to delete
        #expect(said.contains("warning: Kiosk's CA expires on") && (said.contains("(in 4 days)") || said.contains("(in 5 days)")), "\(said)")
        #expect(said.contains("Delete kiosk-proxy-ca.pem and kiosk-proxy-ca-key.pem"), "\(said)")
    }

    @Test("kiosk proxy refuses cache settings out of range, naming the flag: --cache-size, --fallback-after")
    func proxyCacheFlagsOutOfRange() async throws {
        let cli = CLI()
        for (arguments, says) in [(["--cache-size", "0"], "--cache-size must be between 1 and 1000000 MB (got 0)."),
                                  (["--fallback-after", "0"], "--fallback-after must be between 0.1 and 60 seconds, the proxy's upstream timeout (got 0.0)."),
                                  (["--fallback-after", "61"], "--fallback-after must be between 0.1 and 60 seconds, the proxy's upstream timeout (got 61.0).")] {
            // When the proxy is started with the value
            let run = try await cli.run(["proxy", "--port", "0", "--console-port", "0"] + arguments)
            // Then it does not start, and says which flag and why
            #expect(run.status == 2 && run.stderr.contains(says), "\(run.stderr)")
        }
    }

    @Test("Ten kiosk proxy ca started at once on a fresh data folder print one CA, the one the next start finds beside its key")
    func proxyCAStartedAtOnce() async throws {
        // (Three folders: ten processes let go together do not meet in the same instant every time.)
        for _ in 0..<3 {
            let cli = CLI()
            // Given ten `kiosk proxy ca` on a data folder that does not exist yet, each held at its start
            var gate: [CInt] = [0, 0]
            try #require(pipe(&gate) == 0)
            defer { gate.forEach { close($0) } }
            let children = try (0..<10).map { _ in try cli.start(["proxy", "ca"], heldOn: gate[0]) }
            for child in children { _ = child.standardOutput?.readData(ofLength: 1) }
            // When all are let go at the same moment
            #expect(write(gate[1], String(repeating: "\n", count: children.count), children.count) == children.count)
            var runs: [(status: Int32, printed: String, errors: String)] = []
            for child in children {
                let ended = await child.collected()
                runs.append((status: ended.status, printed: ended.stdout, errors: ended.stderr))
            }
            // Then each printed a certificate, and all the same one
            #expect(runs.allSatisfy { $0.status == 0 && $0.printed.hasPrefix("-----BEGIN CERTIFICATE-----") }, "\(runs.map(\.errors))")
            #expect(Set(runs.map(\.printed)).count == 1)
            // And the next start prints it again: the key on disk is that certificate's (a mismatched pair is refused)
            let again = try await cli.run(["proxy", "ca"])
            #expect(again.status == 0 && again.stdout == runs.first?.printed, "\(again.stderr)")
        }
    }

    @Test("kiosk proxy env prints exports a shell reads: the proxy both spellings, NO_PROXY loopback unless told, the CA bundle, Java's options and trust store")
    func proxyEnvironment() async throws {
        let cli = CLI()
        // When the block for a proxy on port 9999 is printed, and once more with every host through the proxy
        let block = try await cli.run(["proxy", "env", "--port", "9999"])
        let everything = try await cli.run(["proxy", "env", "--port", "9999", "--no-proxy", ""])
        #expect(block.status == 0 && everything.status == 0, "\(block.stderr)\(everything.stderr)")
        #expect(block.stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("export ") || $0.hasPrefix("# ") }, "\(block.stdout)")
        // Then a shell that evaluates it has the proxy in both spellings, loopback reached directly by default
        let read = { (block: String) async throws -> [String] in
            let shell = try await ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", block + """

                printf '%s\\n' "$HTTP_PROXY" "$https_proxy" "$NO_PROXY" "$no_proxy" "$CURL_CA_BUNDLE" "$NODE_EXTRA_CA_CERTS" "$JAVA_TOOL_OPTIONS"
                """], environment: ["JAVA_TOOL_OPTIONS": "-Xmx64m"])
            // A line each: Java's list of hosts is written with | between them.
            return shell.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        let values = try await read(block.stdout)
        #expect(Array(values.prefix(4)) == ["http://127.0.0.1:9999", "http://127.0.0.1:9999", "localhost,127.0.0.1,::1", "localhost,127.0.0.1,::1"])
        #expect(try await read(everything.stdout)[2] == "")
        // And the bundle it names holds Kiosk's CA, which NODE_EXTRA_CA_CERTS names alone
        let ca = try String(contentsOf: cli.dataDirectory.appendingPathComponent("kiosk-proxy-ca.pem"), encoding: .utf8)
        #expect(values.count > 5 && values[5] == cli.dataDirectory.appendingPathComponent("kiosk-proxy-ca.pem").path)
        #expect(try String(contentsOfFile: values[4], encoding: .utf8).contains(ca.trimmingCharacters(in: .whitespacesAndNewlines)))
        // And Java gets the proxy, the hosts it reaches directly in its spelling (none given is none, not Java's own
        // list), and a trust store of the same roots, before the options it had
        let store = cli.dataDirectory.appendingPathComponent("kiosk-proxy-truststore.p12").path
        #expect(values.count > 6 && values[6] == "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=9999 -Dhttps.proxyHost=127.0.0.1 "
                + "-Dhttps.proxyPort=9999 -Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1] -Djavax.net.ssl.trustStore=\(store) "
                + "-Djavax.net.ssl.trustStoreType=PKCS12 -Xmx64m", "\(values)")
        #expect(try await read(everything.stdout)[6].contains("-Dhttp.nonProxyHosts= -D"))
        // And an IPv6 host given as a URL writes it ([::1]) is bracketed once; a host that is no host is refused
        let six = try await cli.run(["proxy", "env", "--port", "9999", "--host", "[::1]"])
        #expect(try await read(six.stdout)[0] == "http://[::1]:9999", "\(six.stdout)\(six.stderr)")
        // (a proxy listening on every address is reached here at loopback, not at 0.0.0.0 or ::)
        #expect(try await read(try await cli.run(["proxy", "env", "--port", "9999", "--host", "0.0.0.0"]).stdout)[0] == "http://127.0.0.1:9999")
        #expect(try await read(try await cli.run(["proxy", "env", "--port", "9999", "--host", "::"]).stdout)[0] == "http://[::1]:9999")
        let spaced = try await cli.run(["proxy", "env", "--host", "a b"])
        #expect(spaced.status != 0 && spaced.stdout.isEmpty && spaced.stderr.contains("--host a b is neither an IP address nor a host name"),
                "\(spaced.stderr)")
        // And keytool reads the store as trusted entries, one for each root of the bundle and one for Kiosk's CA
        // (scripts/test.sh installs Java where it is missing.)
        let keytool = try #require(["/usr/bin/keytool", "/usr/lib/jvm/default-java/bin/keytool"].first(where: FileManager.default.isExecutableFile))
        let listed = try await ChildProcess.run(URL(fileURLWithPath: keytool), arguments: ["-list", "-keystore", store, "-storetype", "PKCS12", "-storepass", ""])
        let roots = try String(contentsOfFile: values[4], encoding: .utf8).components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1
        #expect(listed.stdout.components(separatedBy: "trustedCertEntry").count - 1 == roots, "\(listed.stdout.prefix(500))\(listed.stderr)")
        #expect(listed.stdout.contains("kiosk-proxy-ca, "), "\(listed.stdout.prefix(500))")
    }

    @Test("kiosk proxy env for a data folder whose name holds quotes gives Java options the JVM reads: the trust store's path whole")
    func proxyEnvironmentForAQuotedFolder() async throws {
        // Given a data folder named with a single quote and a double one
        let cli = CLI()
        let folder = cli.dataDirectory.appendingPathComponent("q'uo\"te")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let block = try await cli.run(["proxy", "env", "--port", "9999", "--data-dir", folder.path], dataDir: false)
        #expect(block.status == 0, "\(block.stderr)")
        // When a shell evaluates the block and starts Java (scripts/test.sh installs it where it is missing)
        let java = try #require(["/usr/bin/java", "/usr/lib/jvm/default-java/bin/java"].first(where: FileManager.default.isExecutableFile))
        let shell = try await ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", block.stdout + "\n\"$0\" -XshowSettings:properties -version 2>&1", java])
        // Then the JVM starts, reading the trust store's path whole
        #expect(shell.status == 0, "\(shell.stdout)")
        #expect(shell.stdout.contains("javax.net.ssl.trustStore = \(folder.path)/kiosk-proxy-truststore.p12"), "\(shell.stdout)")
    }

    @Test("kiosk proxy on a port of its choosing prints the proxy env line for that port and data folder, which a shell evaluates as printed, from any folder")
    func proxyPrintsItsEnvLine() async throws {
        // Given a proxy started on port 0 in a data folder of its own (a space in its name), named relative to where it ran
        let cli = CLI()
        let folder = cli.dataDirectory.appendingPathComponent("my proxy")
        try FileManager.default.createDirectory(at: cli.dataDirectory, withIntermediateDirectories: true)
        let process = try ChildProcess(URL(fileURLWithPath: "/bin/sh"), arguments: [
            "-c", "cd \"$1\" && exec \"$2\" proxy --port 0 --console-port 0 --data-dir 'my proxy'", "sh", cli.dataDirectory.path, CLI.executable.path,
        ], stdout: .pipe, stderr: .null)
        let text = try await process.printed(until: "proxy env")
        defer { process.signal(); _ = process.waitUntilExit() }
        // (It said how its cache answers, the default: fallback)
        #expect(text.contains("Cache: fallback — every request goes upstream"), "\(text)")
        // When the line it printed is evaluated by a shell whose kiosk is this one
        let address = try #require(text.firstMatch(of: /Kiosk proxy on (http:\/\/127\.0\.0\.1:\d+)\//)?.1)
        let line = try #require(text.split(separator: "\n").first { $0.contains("proxy env") }?.firstMatch(of: /eval .*/)?.0, "\(text)")
        let shell = try await ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", line + "\nprintf '%s\\n' \"$HTTP_PROXY\" \"$NODE_EXTRA_CA_CERTS\""],
                                         environment: ["PATH": CLI.executable.deletingLastPathComponent().path + ":/usr/bin:/bin"])
        // Then the shell's programs are sent to that proxy, trusting that folder's CA
        #expect(shell.stdout == "\(address)\n\(folder.appendingPathComponent("kiosk-proxy-ca.pem").path)\n", "\(line)\n\(shell.stderr)")

        // And a proxy that asks for its password prints no such line (HTTP_PROXY as env writes it carries none: 407s)
        // (its lines are written at once, the env line with the address line when there is one)
        let (guarded, said) = try await Self.startedProxy(["--proxy-auth", "--data-dir", cli.dataDirectory.appendingPathComponent("guarded").path],
                                                    printingUpTo: "Kiosk proxy on")
        defer { guarded.signal(); _ = guarded.waitUntilExit() }
        #expect(said.contains("Kiosk proxy on") && !said.contains("proxy env"), "\(said)")
    }

    @Test("kiosk proxy whose cache file cannot be opened says, after the warning, that nothing is cached this run, not its mode")
    func proxyWithoutItsCacheSaysSo() async throws {
        // Given a data folder whose proxy cache file is not a database
        let cli = CLI()
        try FileManager.default.createDirectory(at: cli.dataDirectory, withIntermediateDirectories: true)
        try Data(String(repeating: "not a database ", count: 20).utf8).write(to: cli.dataDirectory.appendingPathComponent("kiosk-demo-proxy-cache.sqlite"))
        // When the proxy starts there
        let process = try ChildProcess(CLI.executable, arguments: ["proxy", "--port", "0", "--console-port", "0", "--data-dir", cli.dataDirectory.path],
                                       stdout: .pipe, stderr: .null)
        let text = try await process.printed(until: "Kiosk proxy on")
        defer { process.signal(); _ = process.waitUntilExit() }
        // Then it says the cache gives nothing this run, and not that a stored answer stands in when the upstream fails
        #expect(text.contains("Cache: none this run"), "\(text)")
        #expect(!text.contains("Cache: fallback"), "\(text)")
    }

    @Test("A request the forward listener sends to one of the process's reverse listeners goes on to that listener's upstream: no loop")
    func forwardToReverse() async throws {
        let cli = CLI()
        // Given the demo upstream, and kiosk proxy with a reverse listener in front of it
        let upstream = try ChildProcess(CLI.executable, arguments: ["demo-upstream", "--port", "0"], stdout: .pipe, stderr: .null)
        defer { upstream.signal(); upstream.waitUntilExit() }
        let text = try await upstream.printed(until: "Fault control on")
        let base = try #require(text.firstMatch(of: /Demo upstream on (http:\/\/127\.0\.0\.1:\d+)/)?.1)
        let proxy = try ChildProcess(CLI.executable, arguments: ["proxy", "--port", "0", "--console-port", "0", "--reverse", "\(base)@0",
                                                                 "--data-dir", cli.dataDirectory.path], stdout: .pipe, stderr: .null)
        defer { proxy.signal(); _ = proxy.waitUntilExit() }
        // (The listeners start side by side: either may say so first.)
        let said = try await proxy.printed(until: "Reverse proxy on", "Kiosk proxy on")
        let forward = try #require(said.firstMatch(of: /Kiosk proxy on (http:\/\/127\.0\.0\.1:\d+)\//)?.1)
        let reverse = try #require(said.firstMatch(of: /Reverse proxy on (http:\/\/127\.0\.0\.1:\d+)\//)?.1)
        // When a client of the forward listener asks the reverse listener for a dogs list
        let curl = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                        arguments: ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-x", String(forward), "\(reverse)/dogs.json"])
        // Then the upstream's answer comes back, not a 508
        #expect(curl.stdout == "200", "\(curl.stdout) \(curl.stderr)")
    }

    @Test("A reverse listener in front of another of the same process goes on through it to the upstream (a chain, no loop); one in front of itself is refused at start")
    func reverseChain() async throws {
        let cli = CLI()
        // Given the demo upstream, a reverse listener in front of it on a known port, and another in front of that one
        let upstream = try ChildProcess(CLI.executable, arguments: ["demo-upstream", "--port", "0"], stdout: .pipe, stderr: .null)
        defer { upstream.signal(); upstream.waitUntilExit() }
        let text = try await upstream.printed(until: "Fault control on")
        let base = try #require(text.firstMatch(of: /Demo upstream on (http:\/\/127\.0\.0\.1:\d+)/)?.1)
        let (descriptor, inner) = try PortTakenTests.occupy()
        close(descriptor)
        let proxy = try ChildProcess(CLI.executable, arguments: ["proxy", "--port", "0", "--console-port", "0", "--reverse", "\(base)@\(inner)",
                                                                 "--reverse", "http://localhost:\(inner)@0", "--data-dir", cli.dataDirectory.path],
                                     stdout: .pipe, stderr: .null)
        defer { proxy.signal(); _ = proxy.waitUntilExit() }
        let said = try await proxy.printed(until: "→ \(base)", "→ http://localhost:\(inner)")
        let outer = try #require(said.firstMatch(of: /Reverse proxy on (http:\/\/127\.0\.0\.1:\d+)\/ → http:\/\/localhost/)?.1, "\(said)")
        // When an app asks the outer listener for the dogs list
        let curl = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                        arguments: ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "\(outer)/dogs.json"])
        // Then the upstream's answer comes back through both, not a 508
        #expect(curl.stdout == "200", "\(curl.stdout) \(curl.stderr)")
        // And a listener whose upstream is itself is refused before anything starts
        let itself = try await cli.run(["proxy", "--port", "0", "--console-port", "0", "--reverse", "http://127.0.0.1:47311@47311"])
        #expect(itself.status == 2 && itself.stderr.contains("the upstream is the listener itself"), "\(itself.stderr)")
    }

    /// Starts `kiosk proxy` on ports 0 with `arguments`, and what it printed up to the end of the line holding `marker`.
    private static func startedProxy(_ arguments: [String], printingUpTo marker: String) async throws -> (process: ChildProcess, printed: String) {
        let process = try ChildProcess(CLI.executable, arguments: ["proxy", "--port", "0", "--console-port", "0"] + arguments,
                                       stdout: .pipe, stderr: .null)
        return await (process, try process.printed(until: marker))
    }

    @Test("kiosk breakpoint set takes an app's host through kiosk proxy as well as a catalog's endpoint, and still refuses a typo")
    func breakpointOnAProxiedHost() async throws {
        let cli = CLI()
        // Given the name an app's exchanges through the proxy are paused under (its host and port)
        let set = try await cli.run(["breakpoint", "set", "localhost:3000", "--response", "pause"])
        // Then the breakpoint is set
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains("localhost:3000: request ignore, response pause"))
        #expect(try await cli.run(["breakpoint", "set", "api.example.com", "--request", "pause"]).status == 0)
        // And a script reads every switch from breakpoint list --json: the catalogs' endpoints, then the hosts set
        let listed = try await cli.run(["breakpoint", "list", "--json"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: String]], "\(listed.stdout)")
        #expect(rows.first(where: { $0["endpoint"] == "localhost:3000" })
                == ["endpoint": "localhost:3000", "request": "ignore", "response": "pause", "error": "ignore"])
        #expect(rows.first(where: { $0["endpoint"] == "api.example.com" })?["request"] == "pause")
        #expect(rows.contains { $0["endpoint"] == "rickandmorty.characters" && $0["request"] == "ignore" })
        // And a misspelt catalog endpoint, or what is no host, is refused with the names it could be
        for wrong in ["rickandmorty.charactrs", "Not A Host", "localhost:port", "API.EXAMPLE.COM", "localhost:99999", "localhost:0"] {
            let refused = try await cli.run(["breakpoint", "set", wrong, "--response", "pause"])
            #expect(refused.status == 2, "\(wrong)")
            #expect(refused.stderr.contains("rickandmorty.characters") && refused.stderr.contains("kiosk proxy"), "\(refused.stderr)")
        }
        // And a URL pattern on a port no URL can have is refused, as mocks and rules refuse it
        for command in [["breakpoint", "set", "http://x.test:99999/a", "--request", "pause"], ["mock", "add", "--url", "http://x.test:99999/a"],
                        ["rule", "add", "--url", "http://x.test:0/a", "--status", "500"]] {
            let refused = try await cli.run(command)
            #expect(refused.status != 0, "\(command): \(refused.stdout)")
        }
        #expect(try await cli.run(["mock", "add", "--url", "http://x.test:99999/a"]).stderr.contains("port 99999 is no port: ports go from 1 to 65535"))
        // (and what is no http(s) pattern is named without its query, a key in it not echoed)
        let ftp = try await cli.run(["breakpoint", "set", "ftp://x.test/?token=FTPSECRET1", "--request", "pause"])
        #expect(ftp.status == 2 && !ftp.stderr.contains("FTPSECRET1") && ftp.stderr.contains("ftp://x.test/"), "\(ftp.stderr)")
        // (a breakpoint's refusal says so too, not that no endpoint has that name)
        let badPort = try await cli.run(["breakpoint", "set", "http://x.test:99999/a", "--request", "pause"]).stderr
        #expect(badPort.contains("port 99999 is no port: ports go from 1 to 65535") && !badPort.contains("no endpoint named"), "\(badPort)")
        // And remove turns a host's every switch off, and says so of one that had none on
        let removed = try await cli.run(["breakpoint", "remove", "localhost:3000"])
        #expect(removed.status == 0 && removed.stdout.contains("localhost:3000: every breakpoint off."), "\(removed.stderr)")
        #expect(!(try await cli.run(["breakpoint", "list"]).stdout.contains("localhost:3000")))
        #expect(try await cli.run(["breakpoint", "remove", "localhost:3000"]).stdout.contains("had no breakpoint on"))
    }
}

@Suite("A listener's port already taken")
struct PortTakenTests {
    /// A socket listening on a free loopback port, as another program would; its port.
    static func occupy() throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")),
                                  sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && listen(descriptor, 1) == 0
                && getsockname(descriptor, $0, &length) == 0 }
        }
        try #require(bound)
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    @Test("kiosk proxy and kiosk serve name the listener whose port is taken and the option to change, and stop")
    func namesTheTakenPort() async throws {
        // Given a port another program listens on
        let (descriptor, port) = try Self.occupy()
        defer { close(descriptor) }
        let cli = CLI()
        // When the proxy is asked to listen there, then its console, then kiosk serve
        for (arguments, option) in [(["proxy", "--port", "\(port)", "--console-port", "0"], "--port"),
                                    (["proxy", "--port", "0", "--console-port", "\(port)"], "--console-port"),
                                    (["serve", "--port", "\(port)"], "--port")] {
            let result = try await cli.run(arguments)
            // Then each stops with an error that says which address is taken and how to choose another
            #expect(result.status != 0)
            #expect(result.stderr.contains("Cannot listen on 127.0.0.1:\(port) (\(option)): already in use"), "\(result.stderr)")
            #expect(result.stderr.contains("Choose another port with \(option), or 0 for a free one."), "\(result.stderr)")
            #expect(!result.stderr.contains("bind(descriptor"), "\(result.stderr)")
            // And says nothing else: no listener announced that then stops, no server's log lines
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(!result.stdout.contains("Console on") && !result.stdout.contains("Kiosk proxy on"), "\(result.stdout)")
        }
        // And the demo upstream alike, as bad input
        let demo = try await cli.run(["demo-upstream", "--port", "\(port)"], dataDir: false)
        #expect(demo.status == 2 && demo.stderr.contains("Cannot listen on 127.0.0.1:\(port) (--port): already in use"), "\(demo.stderr)")
    }
}

@Suite("kiosk proxy and the open-file limit")
struct OpenFileLimitTests {
    /// The hard limit of open files of this process (what a child may raise its soft limit to).
    static var hardLimit: Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(clamping: limit.rlim_max)
    }

    /// Starts `kiosk proxy` from a shell that first runs `ulimit`; its pid and what it printed up to its address line.
    private static func proxy(after ulimit: String, cli: CLI) async throws -> (process: ChildProcess, output: String) {
        let command = "\(ulimit) && exec '\(CLI.executable.path)' proxy --port 0 --console-port 0 --data-dir '\(cli.dataDirectory.path)'"
        let process = try ChildProcess(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", command], stdout: .pipe, stderr: .null)
        return await (process, try process.printed(until: "Kiosk proxy on"))
    }

    /// The soft limit of open files of process `pid`, from /proc.
    private static func softLimit(of pid: pid_t) throws -> Int? {
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let line = limits.split(separator: "\n").first { $0.hasPrefix("Max open files") }
        return line?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first.flatMap { Int($0) }
    }

    @Test("Started with a low soft limit, kiosk proxy raises it to the hard one (each app's connection costs two files)",
          .enabled(if: hardLimit >= 2048, "the hard limit is too low to tell a raise"))
    func raisesTheSoftLimit() async throws {
        // Given a shell whose soft limit is 256, below its hard limit
        let cli = CLI()
        let (process, output) = try await Self.proxy(after: "ulimit -Sn 256", cli: cli)
        defer { process.signal(); _ = process.waitUntilExit() }
        #expect(output.contains("Kiosk proxy on"), "\(output)")
        // Then the running proxy's soft limit is the hard one (at most 2^20), and it says nothing about it
        #expect(try Self.softLimit(of: process.pid) == min(Self.hardLimit, 1 << 20))
        #expect(!output.contains("Open-file limit"))
    }

    @Test("Started with a hard limit of 200, kiosk proxy says how many connections it holds at once and how to carry more")
    func saysWhenTheLimitIsLow() async throws {
        // Given a shell whose hard limit is 200
        let cli = CLI()
        let (process, output) = try await Self.proxy(after: "ulimit -n 200", cli: cli)
        defer { process.signal(); _ = process.waitUntilExit() }
        // Then the proxy starts, and says what the limit allows: 36 connections, (200 - 128) / 2
        #expect(output.contains("Kiosk proxy on"), "\(output)")
        #expect(output.contains("Open-file limit 200") && output.contains("holds 36 connections at once"), "\(output)")
        #expect(output.contains("Raise the hard limit"))
    }
}
