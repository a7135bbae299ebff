public import Foundation
import Synchronization

/// The part of a body that passes on as it arrives instead of being held whole: a response's event stream or one
/// larger than the buffer limit, which a proxy passes to its app as it comes; an app's upload larger than the limit,
/// which it sends to the upstream as the app sends it. Read once, by one reader, with `next()`; the writer is held
/// back while what it handed over waits unread, so a fast sender and a slow receiver hold little in memory (a part, or the
/// parts one read of an app's connection brought).
public final class BodyStream: Sendable {
    private let pull: @Sendable () async throws -> Data?
    private let stop: @Sendable (any Error) -> Void

    /// A stream whose chunks come from `pull` (nil at the end) and which `stop` ends early (the reader went away).
    public init(pull: @escaping @Sendable () async throws -> Data?, stop: @escaping @Sendable () -> Void) {
        self.pull = pull
        self.stop = { _ in stop() }
    }

    /// A stream whose `stop` is told why it ends early.
    private init(pull: @escaping @Sendable () async throws -> Data?, stopping: @escaping @Sendable (any Error) -> Void) {
        self.pull = pull
        self.stop = stopping
    }

    /// A body held whole, read back `size` bytes at a time: written to a slow reader a slice after another, so that
    /// no second whole copy of it waits in the connection. The stream keeps the body until it is done with.
    public static func slices(of body: Data, size: Int) -> BodyStream {
        let offset = Mutex(body.startIndex)
        return BodyStream(pull: {
            offset.withLock { start -> Data? in
                guard start < body.endIndex else { return nil }
                let end = min(start + max(size, 1), body.endIndex)
                defer { start = end }
                return body[start..<end]
            }
        }, stop: {})
    }

    /// The next chunk, nil once the body ended; throws what cut it short (the upstream closed or timed out).
    public func next() async throws -> Data? { try await pull() }

    /// Ends the stream early and stops the upstream's side: the reader will read no more.
    public func cancel() { stop(CancellationError()) }

    /// `cancel()`, saying why: `observed`'s `end` is told `reason` (`KioskStopping` when the process stops, not the reader).
    public func cancel(because reason: any Error) { stop(reason) }

    /// The same stream, telling `chunk` every chunk as it is read and `end` once how it ended: nil after the last
    /// chunk, the error that cut it short, or `CancellationError` (or the reason given to `cancel(because:)`) when the
    /// reader stopped it.
    public func observed(chunk: @escaping @Sendable (Data) -> Void,
                         end: @escaping @Sendable ((any Error)?) -> Void) -> BodyStream {
        let ended = Mutex(false)
        let finish: @Sendable ((any Error)?) -> Void = { error in
            if ended.withLock({ done in defer { done = true }; return !done }) { end(error) }
        }
        return BodyStream(pull: { [pull] in
            do {
                guard let data = try await pull() else {
                    finish(nil)
                    return nil
                }
                chunk(data)
                return data
            } catch {
                finish(error)
                throw error
            }
        }, stopping: { [stop] reason in
            stop(reason)
            finish(reason)
        })
    }
}

/// Why a stream was cut short when the process stopped with it in flight: neither the app's doing nor the upstream's.
public struct KioskStopping: Error, Sendable, Hashable, CustomStringConvertible {
    public init() {}
    public var description: String { "Kiosk stopped" }
}

/// The meeting point of the side writing a streamed body and the one reader of its `BodyStream`: a writer told to
/// wait (its chunk was not taken at once) is resumed once every chunk it handed over has been read.
public final class BodyPipe: Sendable {
    private struct State {
        var waiting: [Data] = []
        var reader: CheckedContinuation<Data?, any Error>?
        var writer: (@Sendable () -> Void)?
        var end: Result<Void, any Error>?
        var onStop: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    /// A pipe; `onStop` is called once if the reader stops it before its end (to cancel the upstream request).
    public init(onStop: @escaping @Sendable () -> Void) {
        state.withLock { $0.onStop = onStop }
    }

    deinit {
        // Nobody will read what is left: the upstream's request must not wait on it.
        let stop = state.withLock { state in
            defer { state.onStop = nil }
            return state.end == nil ? state.onStop : nil
        }
        stop?()
    }

    /// The reader's side.
    public var stream: BodyStream {
        BodyStream(pull: { [self] in try await read() }, stop: { [self] in stop() })
    }

    /// Hands `chunk` on. True when the writer may write more at once; false when it must wait for `resume`, called
    /// once the chunk was read (or the pipe stopped).
    public func offer(_ chunk: Data, resume: @escaping @Sendable () -> Void) -> Bool {
        enum Outcome { case handed(CheckedContinuation<Data?, any Error>), dropped, waits }
        let outcome: Outcome = state.withLock { state in
            guard state.end == nil else { return .dropped }
            if let reader = state.reader {
                state.reader = nil
                return .handed(reader)
            }
            state.waiting.append(chunk)
            state.writer = resume
            return .waits
        }
        switch outcome {
        case .handed(let reader):
            reader.resume(returning: chunk)
            return true
        case .dropped:
            return true
        case .waits:
            return false
        }
    }

    /// Ends the body: cleanly (nil) or with the error that cut it short.
    public func finish(_ error: (any Error)? = nil) {
        let reader: CheckedContinuation<Data?, any Error>? = state.withLock { state in
            guard state.end == nil else { return nil }
            state.end = error.map { .failure($0) } ?? .success(())
            state.onStop = nil
            guard state.waiting.isEmpty, let reader = state.reader else { return nil }
            state.reader = nil
            return reader
        }
        guard let reader else { return }
        if let error { reader.resume(throwing: error) } else { reader.resume(returning: nil) }
    }

    private func read() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                enum Next { case chunk(Data, (@Sendable () -> Void)?), end(Result<Void, any Error>), wait }
                let next: Next = state.withLock { state in
                    if !state.waiting.isEmpty {
                        let chunk = state.waiting.removeFirst()
                        // The writer goes on once all it handed over is taken (it may hand over several parts before it
                        // hears to wait: those an app's connection had read already).
                        guard state.waiting.isEmpty else { return .chunk(chunk, nil) }
                        defer { state.writer = nil }
                        return .chunk(chunk, state.writer)
                    }
                    if let end = state.end { return .end(end) }
                    state.reader = continuation
                    return .wait
                }
                switch next {
                case .chunk(let chunk, let writer):
                    writer?()
                    continuation.resume(returning: chunk)
                case .end(.success):
                    continuation.resume(returning: nil)
                case .end(.failure(let error)):
                    continuation.resume(throwing: error)
                case .wait:
                    break
                }
            }
        } onCancel: {
            stop()
        }
    }

    private func stop() {
        let (reader, writer, onStop) = state.withLock { state in
            defer {
                state.reader = nil
                state.writer = nil
                state.onStop = nil
                state.waiting = []
            }
            if state.end == nil { state.end = .failure(CancellationError()) }
            return (state.reader, state.writer, state.onStop)
        }
        reader?.resume(throwing: CancellationError())
        writer?()
        onStop?()
    }
}
