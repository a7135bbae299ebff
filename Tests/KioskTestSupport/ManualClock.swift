import Foundation
import Synchronization

/// The tests' one clock: time moves only when `advance(by:)` is called, and sleepers wake in deadline order.
/// It is a `Clock` for code that sleeps (debounce, retry backoff, probes, timeouts) and, through `date` and
/// `dateSource`, the wall time for code that reads "now" (freshness, ages), both moving together, so
/// tests never wait and what they check is exact.
public final class ManualClock: Clock, Sendable {
    /// Where wall time starts unless a test says otherwise: 2027-01-15T08:00:00Z.
    public static let defaultStart = Date(timeIntervalSince1970: 1_800_000_000)

    public typealias Duration = Swift.Duration

    /// An instant on a manual clock: an offset from its start.
    public struct Instant: InstantProtocol, Sendable {
        public var offset: Swift.Duration
        public init(offset: Swift.Duration) { self.offset = offset }
        public func advanced(by duration: Swift.Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Swift.Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let id: UInt64
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Timer {
        let id: UInt64
        let deadline: Instant
        let work: @Sendable () -> Void
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var timers: [Timer] = []
    }

    private let state = Mutex(State())
    private let start: Date

    /// A clock at offset zero, whose wall time reads `start`.
    public init(start: Date = ManualClock.defaultStart) { self.start = start }

    public var now: Instant { state.withLock { $0.now } }

    /// The wall time: `start` plus however far the clock has been advanced.
    public var date: Date {
        let offset = now.offset.components
        return start.addingTimeInterval(Double(offset.seconds) + Double(offset.attoseconds) / 1e18)
    }

    /// `date` as the `now` closure Kiosk's services take.
    public var dateSource: @Sendable () -> Date { { self.date } }
    public var minimumResolution: Swift.Duration { .zero }

    /// How many tasks are currently sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until deadline: Instant, tolerance: Swift.Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Checked under the lock: a cancellation that lands before the sleeper is registered
                // would otherwise find nothing to cancel and leave the task asleep forever.
                let outcome = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    if deadline <= state.now { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                switch outcome {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: CancellationError())
                case nil: break
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Runs `work` once the clock has moved `delay` seconds on (at once when `advance` passes it): the timer
    /// of code that takes one (`RequestLog.Configuration.schedule`).
    public func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.nextID += 1
            state.timers.append(Timer(id: state.nextID, deadline: state.now.advanced(by: .seconds(delay)), work: work))
        }
    }

    /// `schedule(after:_:)` as the closure such code takes.
    public var scheduler: @Sendable (TimeInterval, @escaping @Sendable () -> Void) -> Void {
        { delay, work in self.schedule(after: delay, work) }
    }

    /// How many timers wait for the clock to reach them.
    public var timerCount: Int { state.withLock { $0.timers.count } }

    /// Moves time forward, waking every sleeper whose deadline has passed and running every timer due (in
    /// deadline order, those they schedule for now included), then lets the woken run.
    public func advance(by duration: Swift.Duration) async {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
        while let timer = state.withLock({ state -> Timer? in
            guard let index = state.timers.indices.filter({ state.timers[$0].deadline <= state.now })
                .min(by: { (state.timers[$0].deadline, state.timers[$0].id) < (state.timers[$1].deadline, state.timers[$1].id) })
            else { return nil }
            return state.timers.remove(at: index)
        }) {
            timer.work()
        }
        await Self.settle()
    }

    /// Waits until at least `count` tasks sleep on this clock, for up to 30 s of real time (bounded, so a broken test
    /// fails instead of hanging). Bounded by time rather than by a number of yields: with every suite running at once on
    /// two cores, the task to wait for may not run for thousands of them, and a test that then moved the clock before the
    /// sleeper came would leave it asleep for ever.
    public func waitForSleepers(_ count: Int = 1) async {
        let deadline = ContinuousClock.now + .seconds(30)
        while sleeperCount < count, ContinuousClock.now < deadline {
            await Task.yield()
            if sleeperCount < count { try? await Task.sleep(for: .milliseconds(1)) }
        }
    }

    /// Gives woken tasks a chance to run.
    public static func settle() async {
        for _ in 0..<50 { await Task.yield() }
    }
}
