import Foundation
import KioskCore
import KioskTestSupport
import Synchronization
import Testing

@Suite("The manual clock")
struct ManualClockTests {
    @Test("The manual clock wakes sleepers only when time is advanced past their deadline")
    func manualClock() async throws {
        // Given a task sleeping 2 s on the clock
        let clock = ManualClock()
        let task = Task { try await clock.sleep(for: .seconds(2)); return clock.now.offset }
        await clock.waitForSleepers()
        // When time moves 1 s, then 1 s more
        await clock.advance(by: .seconds(1))
        #expect(clock.sleeperCount == 1)
        await clock.advance(by: .seconds(1))
        // Then the sleeper woke at exactly 2 s
        #expect(try await task.value == .seconds(2))
    }

    @Test("A cancelled sleeper on the manual clock throws at once")
    func manualClockCancellation() async {
        let clock = ManualClock()
        let task = Task { try await clock.sleep(for: .seconds(60)) }
        await clock.waitForSleepers()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("Its wall time starts where it is told and moves exactly as far as the clock does")
    func wallTime() async {
        // Given a clock whose wall time starts at a known date
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let clock = ManualClock(start: start)
        let now = clock.dateSource
        #expect(clock.date == start && now() == start)
        // When it is advanced by a day and a half-second
        await clock.advance(by: .seconds(86_400) + .milliseconds(500))
        // Then the date, and the closure handed out before, read a day and a half-second later
        #expect(now() == start.addingTimeInterval(86_400.5))
        #expect(ManualClock().date == ManualClock.defaultStart)
    }
}

@Suite("The scripted transport")
struct ScriptedTransportTests {
    let url = URL(string: "http://127.0.0.1:9/api/character?page=1")!

    @Test("Steps answer in order, every request is recorded, and a call past the script fails loudly")
    func stepsInOrder() async throws {
        // Given a script of a 200, a failure and a JSON answer
        let upstream = ScriptedTransport([.respond(201, headers: ["ETag": "\"1\""], body: "one"),
                                          .fail(.offline(host: "127.0.0.1")), .json(#"{"a":1}"#)])
        let request = HTTPRequest(url: url, endpoint: "test")
        // When four requests are sent
        let first = try await upstream.send(request)
        await #expect(throws: KioskError.offline(host: "127.0.0.1")) { try await upstream.send(request) }
        let third = try await upstream.send(request)
        // Then each got its step, and the fourth, unexpected, is an error that says so
        #expect(first.status == 201 && first.headers["ETag"] == "\"1\"" && String(decoding: first.body, as: UTF8.self) == "one")
        #expect(third.headers["Content-Type"] == "application/json")
        do {
            _ = try await upstream.send(request)
            Issue.record("an exhausted script answered")
        } catch let KioskError.transport(_, message) {
            #expect(message.contains("exhausted"))
        }
        #expect(upstream.callCount == 4 && upstream.requests.allSatisfy { $0.url == url })
    }

    @Test("A script ending in a step for every further call answers them all the same")
    func always() async throws {
        let upstream = ScriptedTransport(always: .echoPath)
        for path in ["/a", "/b", "/c"] {
            let response = try await upstream.send(HTTPRequest(url: URL(string: "http://x.test\(path)")!, endpoint: "test"))
            #expect(String(decoding: response.body, as: UTF8.self) == path)
        }
        #expect(upstream.callCount == 3)
    }

    @Test("A held step answers only once released")
    func held() async throws {
        // Given a held answer
        let upstream = ScriptedTransport([.gate("late")])
        let answered = Flag()
        let pending = Task {
            let response = try await upstream.send(HTTPRequest(url: url, endpoint: "test"))
            answered.set()
            return response
        }
        while upstream.callCount == 0 { await Task.yield() }
        try await Task.sleep(for: .milliseconds(20))
        // Then it has not answered before the release, and answers after it
        #expect(!answered.isSet)
        upstream.release()
        #expect(String(decoding: try await pending.value.body, as: UTF8.self) == "late")
        #expect(answered.isSet)
    }
}

@Suite("Shared fixtures and oracles")
struct SharedFixtureTests {
    @Test("Every JSON fixture ships as a resource and parses",
          arguments: ["dogs-document.json", "marvel-characters.json", "nyt-mostviewed.json", "rickandmorty-characters.json"])
    func fixturesParse(name: String) throws {
        let document = try JSONSerialization.jsonObject(with: Fixture.data(name))
        #expect(document is [Any] || document is [String: Any])
    }

    @Test("The MD5 oracle gives Marvel's published example and md5sum's answer")
    func marvelSignature() {
        // Marvel's documentation: ts 1, private key abcd, public key 1234.
        #expect(MarvelSignature.hash(timestamp: "1", privateKey: "abcd", publicKey: "1234") == "ffd275c5130566a2916217b101f26150")
        // printf '1700000000marvel-private-keymarvel-public-key' | md5sum
        #expect(MarvelSignature.hash(timestamp: "1700000000", privateKey: "marvel-private-key", publicKey: "marvel-public-key")
            == "b34cb0758fbd0fac07352c27f0cd4356")
    }

    @Test("Temporary folders are new, distinct and empty")
    func temporaryFolders() throws {
        let one = try TemporaryDirectory.make("kiosk-support")
        let two = TemporaryDirectory.url("kiosk-support")
        defer { try? FileManager.default.removeItem(at: one) }
        #expect(one != two && !FileManager.default.fileExists(atPath: two.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: one.path).isEmpty)
    }
}

/// A yes/no that tasks can share.
final class Flag: Sendable {
    private let state = Mutex(false)
    var isSet: Bool { state.withLock { $0 } }
    func set() { state.withLock { $0 = true } }
}

@Suite("Where the test support may be used")
struct TestSupportBoundaryTests {
    @Test("No product and no production target depends on KioskTestSupport; it is not a product itself")
    func onlyTestsDependOnIt() throws {
        // Given the package manifest beside the Tests folder
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        // When it is cut into its products and its target declarations
        let products = try #require(manifest.range(of: "products: [").flatMap { start in
            manifest[start.upperBound...].range(of: "],").map { manifest[start.upperBound..<$0.lowerBound] }
        })
        let declarations = manifest.components(separatedBy: "\n        .").filter {
            $0.hasPrefix("target(") || $0.hasPrefix("executableTarget(")
        }
        // Then the support library is declared, and only test targets name it
        #expect(declarations.contains { $0.contains(#"name: "KioskTestSupport""#) })
        #expect(!products.contains("KioskTestSupport"))
        for declaration in declarations where !declaration.contains(#"name: "KioskTestSupport""#) {
            #expect(!declaration.contains("KioskTestSupport"), "\(declaration.prefix(80))")
        }
    }
}
