import Synchronization

/// The store's change token for the page cache, read once for many concurrent requests.
///
/// `AppDatabase.changeToken()` is a blocking SQLite read on one serial connection. With many requests at
/// once, each used to block a thread of the (small) cooperative pool while it waited its turn, leaving a core
/// idle. Here a request that arrives while a read runs waits — suspended, not blocking — for the next read,
/// which starts after it arrived, so it still sees every commit that finished before it; and that one read
/// answers everyone who waited for it. A single request reads at once, as before.
final class ChangeTokenReader: Sendable {
    private typealias Waiter = UnsafeContinuation<Turn, Never>

    /// What a waiting request is told: read for the others, or here is a read that began after you arrived.
    private enum Turn: Sendable {
        case read(for: [Waiter])
        case result(Result<Int64?, any Error>)
    }

    private struct State {
        var reading = false
        /// Requests that arrived while the current read ran: they need the next one.
        var waiting: [Waiter] = []
    }

    private let read: @Sendable () throws -> Int64?
    private let state = Mutex(State())

    /// A reader of `read`, which must be safe to call from any thread.
    init(_ read: @escaping @Sendable () throws -> Int64?) { self.read = read }

    /// The change token, as of a moment after this call began.
    func token() async throws -> Int64? {
        // Alone (the usual case), read at once, without suspending.
        let readsNow = state.withLock { state -> Bool in
            guard !state.reading else { return false }
            state.reading = true
            return true
        }
        let turn: Turn
        if readsNow {
            turn = .read(for: [])
        } else {
            // The continuation is resumed exactly once: by the reader that takes it from `waiting`, or here.
            turn = await withUnsafeContinuation { (continuation: Waiter) in
                let readsNow = state.withLock { state -> Bool in
                    guard !state.reading else {
                        state.waiting.append(continuation)
                        return false
                    }
                    state.reading = true
                    return true
                }
                if readsNow { continuation.resume(returning: .read(for: [])) }
            }
        }
        switch turn {
        case .result(let result):
            return try result.get()
        case .read(let others):
            let result = Result { try read() }
            for waiter in others { waiter.resume(returning: .result(result)) }
            // Whoever came during this read needs a newer one: the first of them reads it, for all of them.
            let next = state.withLock { state -> [Waiter] in
                let next = state.waiting
                state.waiting = []
                if next.isEmpty { state.reading = false }
                return next
            }
            if let first = next.first { first.resume(returning: .read(for: Array(next.dropFirst()))) }
            return try result.get()
        }
    }
}
