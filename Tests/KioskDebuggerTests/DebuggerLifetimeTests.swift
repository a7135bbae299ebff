import Foundation
import KioskCore
import KioskDebugger
import KioskSources
import KioskStore
import Testing

/// What a debugger holds while it lives, and lets go of when it is dropped.
@Suite("Debugger lifetime")
struct DebuggerLifetimeTests {
    @Test("A debugger dropped without stop() stops following its log's file and lets go of the log")
    func droppedDebuggerLetsGoOfItsLog() async throws {
        // Given a request log on a real file and a debugger over it, as a CLI command makes one
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-debugger-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        weak var weakLog: RequestLog?
        do {
            let log = try RequestLog.open(at: folder.appendingPathComponent("log.sqlite").path)
            weakLog = log
            let debugger = Debugger(breakpoints: Breakpoints(fileURL: nil, redactor: .standard),
                                    mocks: MockRules(fileURL: nil, redactor: .standard),
                                    rules: RewriteRules(fileURL: nil, redactor: .standard), log: log,
                                    sources: Sources.make(.live), epoch: "test",
                                    send: { HTTPResponse(status: 200, body: Data(), url: $0.url) },
                                    sendProxied: { HTTPResponse(status: 200, body: Data(), url: $0.url) })
            // When it is dropped without being stopped
            _ = debugger
        }

        // Then its watch of the log's file ends, and nothing holds the log any more (within five seconds)
        for _ in 0..<50 where weakLog != nil { try await Task.sleep(for: .milliseconds(100)) }
        #expect(weakLog == nil)
    }
}
