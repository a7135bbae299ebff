import Foundation
import Testing

/// Runs the built `kiosk` executable (it sits next to the test bundle) with a private data folder.
struct CLI {
    let dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-cli-\(UUID().uuidString)")

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
    }

    func run(_ arguments: [String], dataDir: Bool = true) throws -> Result {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments + (dataDir ? ["--data-dir", dataDirectory.path] : [])
        var environment = ProcessInfo.processInfo.environment
        for key in ["KIOSK_NYT_BASE_URL", "KIOSK_MARVEL_BASE_URL", "KIOSK_RICKANDMORTY_BASE_URL", "KIOSK_DOGS_URL",
                    "NYT_API_KEY", "MARVEL_PUBLIC_KEY", "MARVEL_PRIVATE_KEY"] {
            environment[key] = nil
        }
        environment["XDG_CONFIG_HOME"] = dataDirectory.appendingPathComponent("config").path
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }
}

@Suite("The kiosk command line", .serialized)
struct CLITests {
    @Test("list prints a table with the status line, then answers from the store; --json is machine-readable")
    func listTableAndJSON() throws {
        let cli = CLI()
        let table = try cli.run(["list", "rickandmorty"])
        #expect(table.status == 0)
        #expect(table.stdout.contains("Rick Sanchez"))
        #expect(table.stdout.contains("page 1 of 42"))

        let json = try cli.run(["list", "rickandmorty", "--json"])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect((object["items"] as? [Any])?.count == 20)
        let status = try #require(object["status"] as? [String: Any])
        #expect(status["origin"] as? String == "store")
        #expect(status["stale"] as? Bool == false)

        let offline = try cli.run(["list", "rickandmorty", "--offline", "--page", "2"])
        #expect(offline.status == 2)
        #expect(offline.stderr.hasPrefix("error: "))
    }

    @Test("Bad input gets a one-line error and a non-zero exit",
          arguments: [
            (["list", "pokemon"], Int32(64)),
            (["list", "rickandmorty", "--page", "0"], Int32(64)),
            (["list", "rickandmorty", "--page", "43"], Int32(2)),
            (["show", "rickandmorty", "99999"], Int32(2)),
            (["show", "marvel", "not-a-number"], Int32(2)),
            (["list", "nyt", "--kind", "bogus"], Int32(2)),
            (["dogs", "delete", "no-such-dog"], Int32(2)),
          ])
    func badInput(arguments: [String], status: Int32) throws {
        let result = try CLI().run(arguments)
        #expect(result.status == status)
        let errorLines = result.stderr.split(separator: "\n").filter { $0.lowercased().hasPrefix("error") }
        #expect(errorLines.count == 1, "stderr: \(result.stderr)")
        #expect(result.stdout.isEmpty || status == 64)
    }

    @Test("sync without a terminal prints plain progress lines and a summary")
    func syncPlainProgress() throws {
        let cli = CLI()
        let result = try cli.run(["sync", "dogs"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("dogs: 1/1 pages, 5 items"))
        #expect(result.stdout.contains("1 pages (1 updated, 0 unchanged)"))
        #expect(!result.stdout.contains("\r"))
    }

    @Test("Favorites and dogs edits are kept by cache clear and read offline")
    func favoritesAndDogsSurviveClear() throws {
        let cli = CLI()
        #expect(try cli.run(["favorite", "add", "rickandmorty", "1"]).status == 0)
        #expect(try cli.run(["list", "dogs"]).status == 0)
        #expect(try cli.run(["dogs", "delete", "rex"]).status == 0)
        #expect(try cli.run(["cache", "clear"]).status == 0)
        let favorites = try cli.run(["favorite", "list"])
        #expect(favorites.stdout.contains("Rick Sanchez"))
        let dogs = try cli.run(["list", "dogs"])
        #expect(!dogs.stdout.contains("Rex"))
        #expect(dogs.stdout.contains("Bella"))
    }
}
