import Foundation
import KioskCore
import Testing
@testable import KioskStore

/// A proxy under more load than the log's writer stores waits for it rather than dropping records (`waitForRoom`).
@Suite("Request log: an exchange waits for room rather than losing its record")
struct RequestLogBackPressureTests {
    typealias Log = RequestLogTests

    /// A log whose writer stores only when flushed, with just over half of what may wait for it waiting.
    private func crowdedLog() throws -> RequestLog {
        var configuration = Log.configuration()
        configuration.schedule = { _, _ in }
        let log = try RequestLog.inMemory(configuration: configuration)
        for index in 0...(RequestLog.maxPendingRecords / 2) { log.enqueue(Log.record("https://a.test/\(index)")) }
        return log
    }

    @Test("While the records waiting for the writer fill half the queue, an exchange waits (at most its bound); once stored, none waits")
    func waitsForRoom() async throws {
        // Given a log whose writer stores only when flushed, with just over half of what may wait already waiting
        let log = try crowdedLog()
        let clock = ContinuousClock()

        // When an exchange asks for room, bounded at 100 ms
        let crowded = await clock.measure { await log.waitForRoom(maximumWait: .milliseconds(100)) }
        // Then it waited the whole bound (the writer never came)
        #expect(crowded >= .milliseconds(100))

        // And once the writer stored what waited, the next asks and goes on at once, nothing having been dropped
        try log.flush()
        let roomy = await clock.measure { await log.waitForRoom(maximumWait: .seconds(10)) }
        #expect(roomy < .seconds(1))
        #expect(log.droppedCount == 0)
    }

    @Test("A log not recording never holds an exchange back, however full its queue")
    func pausedNeverWaits() async throws {
        // Given a crowded log whose recording is then paused
        let log = try crowdedLog()
        log.isRecording = false
        // When an exchange asks for room with a long bound
        let waited = await ContinuousClock().measure { await log.waitForRoom(maximumWait: .seconds(10)) }
        // Then it goes on at once
        #expect(waited < .seconds(1))
    }
}
