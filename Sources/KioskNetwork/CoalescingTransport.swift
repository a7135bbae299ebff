import Foundation
public import KioskCore
import Synchronization

/// Sends identical in-flight idempotent requests upstream once and gives every caller the same answer,
/// marked `isCollapsed` for each caller but the one whose request went upstream (a request the debugger acted
/// on, `HTTPRequest.touches`, always goes alone). An answer that `shares` refuses (one an app's cache may not
/// store, a body still streaming) is the leader's alone: each caller that joined sends its own request then, and
/// later requests like it go upstream at once instead of waiting on one in flight, until one of them gets an answer
/// `shares` takes (Varnish's "hit-for-miss"). A failure is shared only when it speaks of the upstream for every caller
/// (it cannot be reached, or did not answer in time: asking again would wait as long); any other — an answer cut
/// short, a connection reset — is the leader's alone, and each caller that joined sends its own (one bad exchange must
/// not become five). A cancelled caller stops waiting at once; when it was the leader, its request is cancelled and
/// each caller that joined it sends its own.
public final class CoalescingTransport: HTTPTransport {
    // A Mutex'd table rather than an actor, and the leader sends from its own task rather than a task of the flight's:
    // every proxied GET passes here, and the actor's hops and the flight's task cost a fifth of a proxy's throughput.

    /// Kiosk's own requests that differ only in per-request auth (Marvel's `ts` and `hash` change every second)
    /// ask for the same thing, so their key is the redacted URL; an app's (`byRedactedURL` false) keep their whole
    /// URL, since another key in it may be another identity's.
    private struct Key: Hashable {
        let method: String
        let url: String
        let headers: HTTPHeaderFields
        /// A request with a shorter wait of its own is not joined onto one without, nor the other way round.
        let timeout: Duration?
        /// A client on another machine (`.proxiedForNetwork`) never joins a local app's request: the outbound policy
        /// keeps it from this machine's own addresses, which the local app's may reach.
        let purpose: HTTPRequest.Purpose
    }

    private struct Flight {
        /// Distinguishes this flight from a later one for the same key, so a finishing flight never answers callers
        /// of a newer one.
        var id: UInt64
        /// The callers that joined it, each told in the end what to do.
        var waiters: [UInt64: CheckedContinuation<Turn, any Error>] = [:]
    }

    /// What a caller does: lead a flight (send, then answer those that joined), take the leader's answer, or send its own
    /// request (the answer of its kind may not be shared, or the leader gave up).
    private enum Turn {
        case lead(flight: UInt64)
        case joined(HTTPResponse)
        case alone
    }

    private struct State {
        var flights: [Key: Flight] = [:]
        /// The requests whose last answer, with callers waiting on it, could not be shared (by their keys' hashes: no
        /// request's fields are kept), each with when one was last sent (a count of such sends): they go upstream at once
        /// rather than wait on one in flight only to send their own after it. A hash shared by chance only keeps another
        /// request from being collapsed.
        var unshared: [Int: UInt64] = [:]
        var unsharedSends: UInt64 = 0
        var nextWaiter: UInt64 = 0
        var nextFlight: UInt64 = 0
        var upstreamSends = 0
    }

    /// The most requests remembered as unshared; past it the older half is forgotten (they wait on a flight once more).
    private static let unsharedCapacity = 1024

    private let base: any HTTPTransport
    private let byRedactedURL: Bool
    private let shares: @Sendable (HTTPResponse) -> Bool
    private let state = Mutex(State())

    /// Wraps `base`; requests are the same when their method, URL (redacted, unless `byRedactedURL` is false) and
    /// fields are; an answer is given to all of them when `shares` says so.
    public init(base: any HTTPTransport, byRedactedURL: Bool = true, shares: @escaping @Sendable (HTTPResponse) -> Bool = { _ in true }) {
        self.base = base
        self.byRedactedURL = byRedactedURL
        self.shares = shares
    }

    /// How many distinct requests are on the wire now.
    public var inFlightCount: Int { state.withLock { $0.flights.count } }

    /// How many callers wait on a request another sent.
    public var joinedCount: Int { state.withLock { $0.flights.values.reduce(0) { $0 + $1.waiters.count } } }

    /// How many requests were passed to the wrapped transport so far.
    public var sentCount: Int { state.withLock { $0.upstreamSends } }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        // A request something of the debugger's acted on (a resend, an edit) is the user's own exchange: joined
        // onto another, it would leave no record of its own (and, leading, would tag another's).
        // One with a body (a GET's search query, streamed or whole) asks for what its body says: never joined by URL.
        guard request.isIdempotent, request.body == nil, request.bodyStream == nil, request.touches.isEmpty else {
            state.withLock { $0.upstreamSends += 1 }
            return try await base.send(request)
        }
        let key = Key(method: request.method, url: byRedactedURL ? request.url.redactedString : request.url.absoluteString,
                      headers: request.headers, timeout: request.timeout, purpose: request.purpose)
        let waiter = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let hash = key.hashValue
        // Joins the flight in the air, or starts one, or — for a request whose answer was last not to be shared — goes alone.
        let turn = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Turn, any Error>) in
                let turn = state.withLock { state -> Turn? in
                    if state.unshared[hash] != nil {
                        state.unsharedSends += 1
                        state.unshared[hash] = state.unsharedSends
                        return .alone
                    }
                    if state.flights[key] != nil {
                        state.flights[key]?.waiters[waiter] = continuation
                        return nil
                    }
                    state.nextFlight += 1
                    state.upstreamSends += 1
                    state.flights[key] = Flight(id: state.nextFlight)
                    return .lead(flight: state.nextFlight)
                }
                if let turn {
                    continuation.resume(returning: turn)
                } else if Task.isCancelled {
                    // Cancelled before it joined (the handler then found nothing to abandon): it stops waiting now.
                    abandon(key, waiter: waiter)
                }
            }
        } onCancel: {
            abandon(key, waiter: waiter)
        }
        switch turn {
        case .joined(let response):
            return response
        case .alone:
            // Sent from the caller's own task (on its own executor), as any request is; not when it was cancelled waiting.
            if Task.isCancelled { throw KioskError.cancelled }
            state.withLock { $0.upstreamSends += 1 }
            let response = try await base.send(request)
            if shares(response) { state.withLock { _ = $0.unshared.removeValue(forKey: hash) } }
            return response
        case .lead(let flight):
            let result: Result<HTTPResponse, any Error>
            do { result = .success(try await base.send(request)) } catch { result = .failure(error) }
            finish(key, flight: flight, with: result)
            return try result.get()
        }
    }

    /// Ends the flight with its leader's result: the callers that joined get it (collapsed), or — when it may not be
    /// shared, or the leader was cancelled — each sends its own request.
    private func finish(_ key: Key, flight id: UInt64, with result: Result<HTTPResponse, any Error>) {
        let waiters = state.withLock { state -> [UInt64: CheckedContinuation<Turn, any Error>] in
            guard state.flights[key]?.id == id, let flight = state.flights.removeValue(forKey: key) else { return [:] }
            return flight.waiters
        }
        // Asked only when someone waits: `shares` reads the answer's fields (its dates), on every request that leads.
        guard !waiters.isEmpty else { return }
        let shared: Bool = switch result {
        case .success(let response): shares(response)
        case .failure(let error): !Task.isCancelled && Self.sharesFailure(error)
        }
        guard shared else {
            if case .success = result {
                state.withLock { state in
                    state.unsharedSends += 1
                    state.unshared[key.hashValue] = state.unsharedSends
                    // Bounded: the requests sent alone longest ago are forgotten first, half at a time.
                    if state.unshared.count > Self.unsharedCapacity {
                        let cutoff = state.unshared.values.sorted()[state.unshared.count / 2]
                        state.unshared = state.unshared.filter { $0.value >= cutoff }
                    }
                }
            }
            for (_, continuation) in waiters { continuation.resume(returning: .alone) }
            return
        }
        let collapsed = result.map { response -> Turn in
            var joined = response
            joined.isCollapsed = true
            return .joined(joined)
        }
        for (_, continuation) in waiters { continuation.resume(with: collapsed) }
    }

    /// Whether a failure is every caller's: the upstream unreachable or out of time. Not an exchange that broke (a cut
    /// answer, a reset), which the next connection may not repeat.
    static func sharesFailure(_ error: any Error) -> Bool {
        switch error.kioskError {
        case .offline?, .timeout?, .stalledBody?: true
        default: false
        }
    }

    /// A caller that joined a flight and was cancelled stops waiting at once.
    private func abandon(_ key: Key, waiter: UInt64) {
        let continuation = state.withLock { state in state.flights[key]?.waiters.removeValue(forKey: waiter) }
        continuation?.resume(throwing: KioskError.cancelled)
    }
}
