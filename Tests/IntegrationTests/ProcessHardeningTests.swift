import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// A running `kiosk serve` process with its own data folder, stopped by `stop()`.
final class ServeProcess: @unchecked Sendable {
    let process = Process()
    let port: Int

    init(dataDirectory: URL) throws {
        process.executableURL = CLI.executable
        process.arguments = ["serve", "--port", "0", "--data-dir", dataDirectory.path]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = dataDirectory.appendingPathComponent("config").path
        process.environment = environment
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The line "Kiosk on http://127.0.0.1:PORT/" comes once the port is bound.
        var text = ""
        var found: Int?
        while found == nil {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let range = text.range(of: "Kiosk on http://127.0.0.1:") {
                found = Int(text[range.upperBound...].prefix { $0.isNumber })
            }
        }
        guard let found else { throw CocoaError(.fileReadUnknown) }
        port = found
    }

    func stop() {
        process.interrupt()
        process.waitUntilExit()
    }
}

@Suite("Processes that share a data folder", .serialized)
struct ProcessHardeningTests {
    @Test("demo data stored by another process stays valid after it exits: its pictures are served by kiosk serve")
    func demoDataIndependentOfPort() async throws {
        // Given `kiosk serve` running on a data folder
        let cli = CLI()
        try FileManager.default.createDirectory(at: cli.dataDirectory, withIntermediateDirectories: true)
        let serve = try ServeProcess(dataDirectory: cli.dataDirectory)
        defer { serve.stop() }

        // When `kiosk list --refresh` in another terminal stores a page (with its own demo upstream) and exits
        let listed = try cli.run(["list", "rickandmorty", "--refresh", "--json"])
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
    func fullDisk() throws {
        // Given a data folder on a 3 MB file system, with a favorite dog
        let cli = CLI()
        let folder = cli.dataDirectory
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        func shell(_ command: String) throws -> Int32 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command]
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        try #require(try shell("mount -t tmpfs -o size=3m kiosk-full '\(folder.path)'") == 0)
        defer { _ = try? shell("umount '\(folder.path)'") }
        #expect(try cli.run(["list", "dogs"]).status == 0)
        #expect(try cli.run(["favorite", "add", "dogs", "rex"]).status == 0)

        // When a sync fills the disk
        let sync = try cli.run(["sync", "all"])
        #expect(sync.status != 0)
        #expect((sync.stdout + sync.stderr).contains("disk is full"))

        // Then the offline list still answers from the store
        let offline = try cli.run(["list", "dogs", "--offline"])
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(offline.stdout.contains("Rex"))

        // And clearing works, frees the space and keeps the favorite
        let clear = try cli.run(["cache", "clear"])
        #expect(clear.status == 0, "\(clear.stderr)")
        let attributes = try FileManager.default.attributesOfFileSystem(forPath: folder.path)
        let free = (attributes[.systemFreeSize] as? NSNumber)?.intValue ?? 0
        #expect(free > 1_000_000)
        #expect(try cli.run(["favorite", "list"]).stdout.contains("Rex"))
    }
}
