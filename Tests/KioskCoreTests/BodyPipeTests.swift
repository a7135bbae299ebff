import Foundation
import KioskCore
import Synchronization
import Testing

@Suite("BodyPipe: a streamed body's writer waits for its one reader")
struct BodyPipeTests {
    @Test("A writer offering a chunk nobody read yet is told to wait, and resumed once the chunk is read")
    func backpressure() async throws {
        // Given a pipe with no reader waiting
        let pipe = BodyPipe(onStop: {})
        let resumed = Mutex(0)
        // When the writer offers a chunk
        let mayGoOn = pipe.offer(Data("one".utf8)) { resumed.withLock { $0 += 1 } }
        // Then it must wait, and is resumed once, when the reader takes it
        #expect(!mayGoOn)
        #expect(resumed.withLock { $0 } == 0)
        let stream = pipe.stream
        #expect(try await stream.next() == Data("one".utf8))
        #expect(resumed.withLock { $0 } == 1)
        // And a chunk offered to a waiting reader goes straight to it
        async let next = stream.next()
        try await Task.sleep(for: .milliseconds(50))
        let straight = pipe.offer(Data("two".utf8)) { resumed.withLock { $0 += 1 } }
        #expect(try await next == Data("two".utf8))
        #expect(straight || resumed.withLock { $0 } == 2)
        // And the end reaches the reader after the last chunk
        pipe.finish()
        #expect(try await stream.next() == nil)
    }

    @Test("A writer that handed over several chunks before hearing to wait is resumed once all of them are read")
    func severalBeforeTheWait() async throws {
        // Given a writer (an app's connection) that hands over three parts one read brought, the first told to wait
        let pipe = BodyPipe(onStop: {})
        let resumed = Mutex(0)
        for part in ["a", "b", "c"] {
            _ = pipe.offer(Data(part.utf8)) { resumed.withLock { $0 += 1 } }
        }
        let stream = pipe.stream
        // When the reader takes the first two
        #expect(try await stream.next() == Data("a".utf8))
        #expect(try await stream.next() == Data("b".utf8))
        // Then the writer still waits: a part it handed over is unread
        #expect(resumed.withLock { $0 } == 0)
        // And once the last is read, it is resumed, once
        #expect(try await stream.next() == Data("c".utf8))
        #expect(resumed.withLock { $0 } == 1)
    }

    @Test("An error ends the body after the chunks before it; a reader that stops tells the writer's side once")
    func endings() async throws {
        struct Cut: Error {}
        let stops = Mutex(0)
        let pipe = BodyPipe(onStop: { stops.withLock { $0 += 1 } })
        _ = pipe.offer(Data("a".utf8)) {}
        pipe.finish(Cut())
        let stream = pipe.stream
        #expect(try await stream.next() == Data("a".utf8))
        await #expect(throws: Cut.self) { try await stream.next() }
        // A finished pipe stopped by its reader does not stop the (already finished) upstream
        stream.cancel()
        #expect(stops.withLock { $0 } == 0)

        let open = BodyPipe(onStop: { stops.withLock { $0 += 1 } })
        let observed = Mutex<[String]>([])
        let reader = open.stream.observed(chunk: { _ in }, end: { error in
            observed.withLock { $0.append(error is CancellationError ? "cancelled" : "other") }
        })
        reader.cancel()
        reader.cancel()
        #expect(stops.withLock { $0 } == 1)
        #expect(observed.withLock { $0 } == ["cancelled"])
        await #expect(throws: CancellationError.self) { try await reader.next() }
    }

    @Test("A pipe nobody reads to its end stops its writer's side when it goes away")
    func abandoned() {
        let stops = Mutex(0)
        do {
            let pipe = BodyPipe(onStop: { stops.withLock { $0 += 1 } })
            _ = pipe.offer(Data("x".utf8)) {}
        }
        #expect(stops.withLock { $0 } == 1)
    }
}
