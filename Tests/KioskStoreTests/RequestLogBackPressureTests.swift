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

@Suite("Request log: what is logged around a pause of recording")
struct RequestLogRecordingGenerationTests {
    typealias Log = RequestLogTests

    /// A record of an exchange begun under `generation`.
    private func deferred(_ url: String, begunUnder generation: UInt64?) -> DeferredRecord {
        var record = DeferredRecord(Log.record(url))
        record.generation = generation
        return record
    }

    @Test("A record of an exchange begun while recording was paused, or before a pause and the resume after it, is not stored; one begun since the resume is")
    func onlyWhatBeganUnderThisRecording() throws {
        // Given a log, and the generation an exchange begins under while it records
        let log = try RequestLog.inMemory(configuration: Log.configuration())
        let before = log.recordingGeneration
        // When recording is paused, an exchange begins, and recording resumes
        log.isRecording = false
        let paused = log.recordingGeneration
        log.isRecording = true
        let after = log.recordingGeneration
        // (turning it on again changes nothing)
        log.isRecording = true
        #expect(Set([before, paused, after]).count == 3 && log.recordingGeneration == after)
        // And each exchange's record comes now
        log.enqueue(deferred("https://a.test/straddled", begunUnder: before))
        log.enqueue(deferred("https://a.test/while-paused", begunUnder: paused))
        log.enqueue(deferred("https://a.test/since", begunUnder: after))
        log.enqueue(deferred("https://a.test/untold", begunUnder: nil))
        try log.flush()
        // Then only the one begun since the resume, and one that told no generation, are stored; none is counted dropped
        #expect(Set(try log.records(matching: RequestFilter()).map(\.url)) == ["https://a.test/since", "https://a.test/untold"])
        #expect(log.droppedCount == 0)
    }
}
