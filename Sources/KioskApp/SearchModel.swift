import Foundation
import KioskCore

/// Debounced search as the original apps had it: under 3 characters it filters what is shown, at once;
/// 3 or more it waits for typing to pause (500 ms by default, 1 s for Marvel) and then searches the source.
/// A newer query cancels an older one, so only the latest answer is ever shown.
public actor SearchModel {
    /// Queries shorter than this only filter what is shown.
    public static let minimumRemoteLength = 3

    /// What the search shows.
    public struct State: Sendable, Hashable {
        /// The query the items answer.
        public var query: String
        /// The items to show.
        public var items: [CatalogItem]
        /// Whether a search for a newer query is pending.
        public var isSearching: Bool
        /// Where the items came from; nil for the local filter.
        public var origin: SearchResult.Origin?
        /// A failure to show next to the items.
        public var error: KioskError?
    }

    /// Performs a 3+ character search.
    public typealias Search = @Sendable (String) async throws -> SearchResult

    private let debounce: Duration
    /// Fixes a deadline `duration` from now and returns a wait until it, on the injected clock.
    private let deadlineSleeper: @Sendable (Duration) -> @Sendable () async throws -> Void
    private let search: Search
    private var shown: [CatalogItem] = []
    private var pending: Task<Void, Never>?
    private var generation = 0
    private var continuations: [UInt64: AsyncStream<State>.Continuation] = [:]
    private var nextObserver: UInt64 = 0

    /// The latest state.
    public private(set) var state = State(query: "", items: [], isSearching: false, origin: nil, error: nil)

    /// The debounce interval for a source: Marvel's rate limits call for 1 s, the rest 500 ms.
    public static func debounceInterval(for source: SourceID) -> Duration {
        source == .marvel ? .seconds(1) : .milliseconds(500)
    }

    /// `clock` times the debounce (a ManualClock in tests); `search` runs the 3+ character queries.
    public init<C: Clock<Duration>>(debounce: Duration = .milliseconds(500), clock: C, search: @escaping Search) {
        self.debounce = debounce
        self.deadlineSleeper = { duration in
            let deadline = clock.now.advanced(by: duration)
            return { try await clock.sleep(until: deadline, tolerance: nil) }
        }
        self.search = search
    }

    /// A model on the real clock.
    public init(debounce: Duration = .milliseconds(500), search: @escaping Search) {
        self.init(debounce: debounce, clock: ContinuousClock(), search: search)
    }

    /// Sets the unfiltered items the short-query filter works on.
    public func setShownItems(_ items: [CatalogItem]) {
        shown = items
        if state.query.isEmpty { publish(State(query: "", items: items, isSearching: false, origin: nil, error: nil)) }
    }

    /// A stream of states, starting with the current one.
    public func states() -> AsyncStream<State> {
        let (stream, continuation) = AsyncStream.makeStream(of: State.self, bufferingPolicy: .bufferingNewest(16))
        nextObserver += 1
        let id = nextObserver
        continuations[id] = continuation
        continuation.yield(state)
        continuation.onTermination = { _ in Task { await self.removeObserver(id) } }
        return stream
    }

    /// The user typed: cancels whatever is pending and starts over with `text`.
    public func queryChanged(_ text: String) {
        let query = text.trimmingCharacters(in: .whitespacesAndNewlines)
        pending?.cancel()
        pending = nil
        generation += 1
        let current = generation
        guard query.count >= Self.minimumRemoteLength else {
            publish(State(query: query, items: Self.filter(shown, by: query), isSearching: false, origin: nil, error: nil))
            return
        }
        publish(State(query: query, items: state.items, isSearching: true, origin: state.origin, error: nil))
        // The deadline is fixed now, when the user typed, not when the task first runs.
        let wait = deadlineSleeper(debounce)
        let search = self.search
        pending = Task {
            do {
                try await wait()
            } catch {
                return
            }
            let outcome: Result<SearchResult, any Error>
            do { outcome = .success(try await search(query)) } catch { outcome = .failure(error) }
            self.finish(outcome, query: query, generation: current)
        }
    }

    /// Waits for the pending search, if any (for callers that need the settled state).
    public func settle() async { await pending?.value }

    private func finish(_ outcome: Result<SearchResult, any Error>, query: String, generation finished: Int) {
        // A result for anything but the latest query is dropped: the user has moved on.
        guard finished == generation else { return }
        pending = nil
        switch outcome {
        case .success(let result):
            publish(State(query: query, items: result.items, isSearching: false, origin: result.origin, error: result.error))
        case .failure(let error):
            let kioskError = (error as? KioskError) ?? .transport(url: "", message: "\(error)")
            if kioskError == .cancelled { return }
            publish(State(query: query, items: [], isSearching: false, origin: nil, error: kioskError))
        }
    }

    private func publish(_ newState: State) {
        state = newState
        for continuation in continuations.values { continuation.yield(newState) }
    }

    private func removeObserver(_ id: UInt64) { continuations[id] = nil }

    /// Case- and diacritic-insensitive match on title and subtitle.
    static func filter(_ items: [CatalogItem], by query: String) -> [CatalogItem] {
        guard !query.isEmpty else { return items }
        return items.filter {
            $0.title.range(of: query, options: [.caseInsensitive, .diacriticInsensitive]) != nil
                || $0.subtitle.range(of: query, options: [.caseInsensitive, .diacriticInsensitive]) != nil
        }
    }
}
