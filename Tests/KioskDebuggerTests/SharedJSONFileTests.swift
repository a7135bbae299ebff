import Foundation
import KioskCore
@testable import KioskDebugger
import KioskTestSupport
import Synchronization
import Testing

/// The debugger's JSON files (breakpoints, mock rules, rewrite rules) live in one `SharedJSONFile` and so behave
/// alike: another process's write is seen, a deleted file means nothing configured, a corrupt one is a
/// clear error that changes nothing.
@Suite("The debugger's shared JSON files")
struct SharedJSONFileTests {
    @Test("A breakpoints file and a mock rules file deleted by the user both read as nothing configured")
    func deletedFilesReadEmpty() throws {
        // Given a breakpoint and a mock rule saved to their files
        let folder = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: folder) }
        let breakpoints = Breakpoints(fileURL: folder.appendingPathComponent("breakpoints.json"), redactor: .standard)
        let mocks = MockRules(fileURL: folder.appendingPathComponent("mocks.json"), redactor: .standard)
        try breakpoints.set(BreakpointSetting(request: .pause), for: "dogs.list")
        try mocks.add([MockRule(urlPattern: "https://example.test/a")])
        #expect(try breakpoints.settings().count == 1)
        #expect(try mocks.all().count == 1)

        // When the user deletes both files
        try FileManager.default.removeItem(at: folder.appendingPathComponent("breakpoints.json"))
        try FileManager.default.removeItem(at: folder.appendingPathComponent("mocks.json"))

        // Then both read as empty, at once, and a request matches neither
        #expect(try breakpoints.settings().isEmpty)
        #expect(breakpoints.setting(for: "dogs.list").isOff)
        #expect(try mocks.all().isEmpty)
        #expect(mocks.match(HTTPRequest(method: "GET", url: URL(string: "https://example.test/a")!, endpoint: "x")) == nil)
    }

    @Test("Edits made at the same moment through two instances of one file, as two processes make them, are all kept, each with its own id")
    func concurrentEditsAllKept() throws {
        // Given two instances over one file, as two `kiosk mock add` commands running at once are
        let url = try TemporaryDirectory.make().appendingPathComponent("mocks.json")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let instances = [MockRules(fileURL: url, redactor: .standard), MockRules(fileURL: url, redactor: .standard)]
        // When each adds rules from several threads at once
        DispatchQueue.concurrentPerform(iterations: 40) { index in
            _ = try? instances[index % 2].add([MockRule(urlPattern: "https://example.test/\(index)")])
        }
        // Then the file holds all forty, with forty distinct ids
        let rules = try MockRules(fileURL: url, redactor: .standard).all()
        #expect(rules.count == 40)
        #expect(Set(rules.map(\.id)).count == 40)
    }

    @Test("A change written by another process is read before the next use")
    func anotherWriterIsSeen() throws {
        // Given two instances over one file, as a running server and a CLI command are
        let url = try TemporaryDirectory.make().appendingPathComponent("mocks.json")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let server = MockRules(fileURL: url, redactor: .standard)
        let command = MockRules(fileURL: url, redactor: .standard)
        #expect(try server.all().isEmpty)

        // When the command adds a rule
        try command.add([MockRule(urlPattern: "https://example.test/b", status: 418)])

        // Then the server answers with it
        let response = server.match(HTTPRequest(method: "GET", url: URL(string: "https://example.test/b")!, endpoint: "x"))
        #expect(response?.status == 418)
    }

    @Test("An edit saved in place, as an editor may save it, is read before the next use")
    func inPlaceEditIsSeen() throws {
        // Given a server that read a rules file another process wrote
        let folder = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("mocks.json")
        let server = MockRules(fileURL: url, redactor: .standard)
        try MockRules(fileURL: url, redactor: .standard).add([MockRule(urlPattern: "https://example.test/a", status: 201)])
        let request = HTTPRequest(method: "GET", url: URL(string: "https://example.test/a")!, endpoint: "x")
        #expect(server.match(request)?.status == 201)
        // And the same rule with another status, as the file's new text
        let elsewhere = folder.appendingPathComponent("draft").appendingPathComponent("mocks.json")
        try MockRules(fileURL: elsewhere, redactor: .standard).add([MockRule(urlPattern: "https://example.test/a", status: 418)])
        let edited = try Data(contentsOf: elsewhere)

        // When the file is written over in place (the same file, truncated, written, closed), not replaced
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: edited)
        try handle.close()

        // Then the server's next request gets the new rule
        #expect(server.match(request)?.status == 418)
    }

    @Test("An edit saved in place within the file system's clock tick of the last read, its size and time the same, is read before the next use")
    func inPlaceEditWithinTheTickIsSeen() throws {
        // Given a file read at a moment within the tick of its modification time (as a read just after a write is; the
        // file's time pinned and the clock stopped, so the tick cannot pass whatever the machine's load)
        let folder = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("names.json")
        let pinned = timespec(tv_sec: time(nil), tv_nsec: 123_456_789)
        let seen = Date(timeIntervalSince1970: TimeInterval(pinned.tv_sec) + 0.133)
        func writeInPlace(_ text: String) throws {
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: Data(text.utf8))
            try handle.close()
            var times = [pinned, pinned]
            #expect(utimensat(AT_FDCWD, url.path, &times, 0) == 0)
        }
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        try writeInPlace(#"["first"]"#)
        let file = SharedJSONFile(url: url, empty: [String](), name: "the names", now: { seen })
        #expect(try file.read() == ["first"])
        let before = try #require(FileStatus(name: url.lastPathComponent, path: url.path))

        // When it is written over in place with text of the same size, its time the same
        try writeInPlace(#"["other"]"#)
        #expect(FileStatus(name: url.lastPathComponent, path: url.path) == before, "the stamp must not tell the versions apart")

        // Then the next read has the new text all the same, and a change this process saves is not written over it
        #expect(try file.read() == ["other"])
        try writeInPlace(#"["third"]"#)
        try file.save()
        #expect(try String(contentsOf: url, encoding: .utf8) == #"["third"]"#)
        #expect(try file.read() == ["third"])
    }

    @Test("A file whose folder was removed and made again is still followed")
    func recreatedFolderIsFollowed() throws {
        // Given a server that read its rules file, and the folder then removed with it
        let parent = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: parent) }
        let url = parent.appendingPathComponent("data").appendingPathComponent("mocks.json")
        let server = MockRules(fileURL: url, redactor: .standard)
        try MockRules(fileURL: url, redactor: .standard).add([MockRule(urlPattern: "https://example.test/a", status: 201)])
        let request = HTTPRequest(method: "GET", url: URL(string: "https://example.test/a")!, endpoint: "x")
        #expect(server.match(request)?.status == 201)
        try FileManager.default.removeItem(at: url.deletingLastPathComponent())
        #expect(server.match(request) == nil)

        // When the folder is made again and another process writes the file there
        try MockRules(fileURL: url, redactor: .standard).add([MockRule(urlPattern: "https://example.test/a", status: 418)])

        // Then the server's next request gets it, and so does the one after a change made after that
        #expect(server.match(request)?.status == 418)
        try MockRules(fileURL: url, redactor: .standard).add([MockRule(urlPattern: "https://example.test/b", status: 202)])
        #expect(server.match(HTTPRequest(method: "GET", url: URL(string: "https://example.test/b")!, endpoint: "x"))?.status == 202)
    }

    @Test("Hit counts not yet written are carried into a change another process made to the file, never written over it")
    func countersNeverOverwriteAnotherWriter() throws {
        // Given a server that counted hits, the last of them not yet written (saves are at most once a second)
        let url = try TemporaryDirectory.make().appendingPathComponent("mocks.json")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let server = MockRules(fileURL: url, redactor: .standard)
        try server.add([MockRule(urlPattern: "https://example.test/a")])
        let request = HTTPRequest(method: "GET", url: URL(string: "https://example.test/a")!, endpoint: "x")
        _ = server.match(request)
        server.saveHits()
        _ = server.match(request)
        server.saveHits()

        // When a command adds a rule, and then the server shuts down, writing its counts
        try MockRules(fileURL: url, redactor: .standard).add([MockRule(urlPattern: "https://example.test/b")])
        server.saveHits(force: true)

        // Then the command's rule is still there, and every hit the server counted too
        let rules = try MockRules(fileURL: url, redactor: .standard).all()
        #expect(rules.map(\.urlPattern) == ["https://example.test/a", "https://example.test/b"])
        #expect(rules.first?.hits == 2)

        // And a hit counted after reading the command's edit is added to them, not lost with the reading
        _ = server.match(request)
        _ = server.match(request)
        try MockRules(fileURL: url, redactor: .standard).add([MockRule(urlPattern: "https://example.test/c")])
        _ = server.match(request)
        server.saveHits(force: true)
        let later = try MockRules(fileURL: url, redactor: .standard).all()
        #expect(later.map(\.urlPattern) == ["https://example.test/a", "https://example.test/b", "https://example.test/c"])
        #expect(later.first?.hits == 5, "\(later.map(\.hits))")
    }

    @Test("The last hits of a burst are written once their second has passed, with no hit after them to write them")
    func lastHitsOfABurstWritten() async throws {
        // Given a server that counted a hit (written at once) and two more within the same second
        let url = try TemporaryDirectory.make().appendingPathComponent("mocks.json")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let server = MockRules(fileURL: url, redactor: .standard)
        try server.add([MockRule(urlPattern: "https://example.test/a")])
        let request = HTTPRequest(method: "GET", url: URL(string: "https://example.test/a")!, endpoint: "x")
        for _ in 0..<3 {
            _ = server.match(request)
            server.saveHits()
        }
        #expect(try MockRules(fileURL: url, redactor: .standard).all().first?.hits == 1)
        // When no request comes after them, then another process reads all three once that second has passed
        var hits = 0
        for _ in 0..<40 where hits < 3 {
            try await Task.sleep(for: .milliseconds(100))
            hits = try MockRules(fileURL: url, redactor: .standard).all().first?.hits ?? 0
        }
        #expect(hits == 3)
    }

    @Test("A corrupt file is a storage error naming the file, and saving nothing over it")
    func corruptFileIsAClearError() throws {
        // Given a breakpoints file that is not JSON
        let url = try TemporaryDirectory.make().appendingPathComponent("breakpoints.json")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try Data("{not json".utf8).write(to: url)
        let breakpoints = Breakpoints(fileURL: url, redactor: .standard)

        // When it is read, and a change is attempted
        // Then both fail with a storage error that names the file, and the file is left as it was
        #expect { try breakpoints.settings() } throws: { error in
            guard case KioskError.storage(let message) = error else { return false }
            return message.contains(url.path) && message.contains("breakpoints")
        }
        #expect(throws: KioskError.self) { try breakpoints.set(BreakpointSetting(response: .pause), for: "dogs.list") }
        #expect(try Data(contentsOf: url) == Data("{not json".utf8))
    }

    @Test("A file broken by hand while exchanges use it keeps the rules read before, is reported once in words, and is read again once fixed")
    func brokenWhileInUse() throws {
        // Given mock rules in use by a running process, told of problems
        let url = try TemporaryDirectory.make().appendingPathComponent("mocks.json")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let reports = Mutex<[String]>([])
        let mocks = MockRules(fileURL: url, redactor: .standard) { problem in reports.withLock { $0.append(problem) } }
        try mocks.add([MockRule(urlPattern: "https://example.test/a", status: 201)])
        let request = HTTPRequest(method: "GET", url: URL(string: "https://example.test/a")!, endpoint: "app")
        #expect(mocks.match(request)?.status == 201)

        let written = try String(contentsOf: url, encoding: .utf8)
        // When the file is replaced by one with a mistake in it, and exchanges go on
        try Data(written.replacingOccurrences(of: #""https:\/\/example.test\/a""#, with: "5")
            .replacingOccurrences(of: #""https://example.test/a""#, with: "5").utf8).write(to: url)
        for _ in 0..<3 { #expect(mocks.match(request)?.status == 201) }

        // Then the rule read before still answers, and the problem was said once, naming the file and the mistake
        let said = reports.withLock { $0 }
        #expect(said.count == 1)
        #expect(said.first?.contains(url.path) == true && said.first?.contains("rules[0].urlPattern must be a string") == true, "\(said)")
        #expect(said.first?.contains("correct format") == false)

        // And when it is fixed, the new rules are read
        try Data(written.replacingOccurrences(of: "201", with: "418").utf8).write(to: url)
        #expect(mocks.match(request)?.status == 418)
    }
}
