import Synchronization

// The live console's feed. The request log announces what it committed and the breakpoints what
// paused or went on; this hub numbers those changes and keeps the latest ones in a bounded ring, so a
// console that lost its connection (a laptop asleep, a server restarted) resumes from the last event
// it saw without a gap, or, when that event is no longer kept (or came from another process), is told
// to reload its list. Events name what changed (a range of record ids), never the records: each
// subscriber reads the rows it wants, through its own filter, from the log — so the capture path
// only pays for a few `yield`s, and filtering has one home, the log's query.

/// The numbered changes the debugger's live consoles follow, with a bounded replay for reconnections.
public final class DebugEvents: Sendable {
    /// An event's id: the process's epoch (so an id from an earlier run is never mistaken for one of
    /// this run) and its place in the sequence. Written `epoch-sequence`, as SSE's `id:` field.
    public struct EventID: Sendable, Hashable, LosslessStringConvertible {
        /// Tells this process's events from an earlier run's.
        public let epoch: String
        /// 1 for the first event of the process, then one more for each.
        public let sequence: UInt64

        /// An id from its parts.
        public init(epoch: String, sequence: UInt64) {
            self.epoch = epoch
            self.sequence = sequence
        }

        /// Parses `epoch-sequence` (the text a browser sends back as `Last-Event-ID`); nil otherwise.
        public init?(_ description: String) {
            guard let dash = description.lastIndex(of: "-"), let sequence = UInt64(description[description.index(after: dash)...]),
                  dash > description.startIndex else { return nil }
            self.init(epoch: String(description[..<dash]), sequence: sequence)
        }

        public var description: String { "\(epoch)-\(sequence)" }
    }

    /// What changed.
    public enum Change: Sendable, Hashable {
        /// The log stored the records with these ids.
        case stored(ClosedRange<Int64>)
        /// The log was emptied.
        case cleared
        /// The exchanges paused at breakpoints changed; this many are paused now.
        case paused(count: Int)
        /// Recording was paused (false) or resumed (true) from a console.
        case recording(Bool)
    }

    /// One numbered change.
    public struct Event: Sendable, Hashable {
        /// Its id, for `Last-Event-ID`.
        public let id: EventID
        /// What changed.
        public let change: Change
    }

    /// What a subscriber receives.
    public enum Delivery: Sendable, Hashable {
        /// The next change.
        case event(Event)
        /// Changes were missed that cannot be replayed: reload the list, then follow the events.
        case reset
    }

    private struct State {
        var ring: [Event] = []
        var nextSequence: UInt64 = 1
        var subscribers: [UInt64: AsyncStream<Delivery>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
    }

    /// This process's epoch.
    public let epoch: String
    /// How many of the latest events are kept for reconnecting subscribers.
    public let capacity: Int
    /// How many deliveries may wait for a slow subscriber before it is cut off (it then reconnects
    /// and catches up from the ring, or reloads).
    public let backlog: Int
    private let state = Mutex(State())

    /// A hub numbering its events under `epoch` (unique per process: injected so tests are
    /// deterministic), keeping the latest `capacity`.
    public init(epoch: String, capacity: Int = 4096, backlog: Int = 1024) {
        self.epoch = epoch
        self.capacity = max(1, capacity)
        self.backlog = max(1, backlog)
    }

    /// The id of the latest event (sequence 0 before the first): subscribing after it misses nothing
    /// published from now on.
    public var latestID: EventID {
        state.withLock { EventID(epoch: epoch, sequence: $0.nextSequence - 1) }
    }

    /// Numbers `change`, keeps it for reconnections and hands it to every subscriber. A subscriber
    /// whose backlog is full is finished, so a stuck console never holds memory.
    public func publish(_ change: Change) {
        let (event, subscribers) = state.withLock { state in
            let event = Event(id: EventID(epoch: epoch, sequence: state.nextSequence), change: change)
            state.nextSequence += 1
            state.ring.append(event)
            if state.ring.count > capacity { state.ring.removeFirst(state.ring.count - capacity) }
            return (event, state.subscribers)
        }
        for (_, continuation) in subscribers {
            if case .dropped = continuation.yield(.event(event)) { continuation.finish() }
        }
    }

    /// The changes after `lastEventID` (kept ones replayed first; `.reset` first when some cannot be:
    /// too old, or from another process), then every new one, until the stream is dropped or
    /// `finishAll` is called. Without `lastEventID`, only new changes.
    public func subscribe(after lastEventID: EventID?) -> AsyncStream<Delivery> {
        let (stream, continuation) = AsyncStream.makeStream(of: Delivery.self, bufferingPolicy: .bufferingOldest(backlog + capacity))
        let key = state.withLock { state -> UInt64 in
            if let lastEventID {
                let kept = state.ring.first?.id.sequence ?? state.nextSequence
                if lastEventID.epoch != epoch || lastEventID.sequence + 1 < kept || lastEventID.sequence >= state.nextSequence {
                    continuation.yield(.reset)
                } else {
                    for event in state.ring where event.id.sequence > lastEventID.sequence { continuation.yield(.event(event)) }
                }
            }
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: key) }
        }
        return stream
    }

    /// How many subscribers are connected.
    public var subscriberCount: Int {
        state.withLock { $0.subscribers.count }
    }

    /// Ends every subscription (the server is stopping: open event streams must not hold it up).
    public func finishAll() {
        let subscribers = state.withLock { state in
            defer { state.subscribers.removeAll() }
            return state.subscribers
        }
        for (_, continuation) in subscribers { continuation.finish() }
    }
}
