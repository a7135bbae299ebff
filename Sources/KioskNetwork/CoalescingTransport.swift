import Foundation
public import KioskCore

/// Sends identical in-flight idempotent requests upstream once and gives every caller the same answer,
/// marked `isCollapsed` for each caller but the one whose request went upstream (a request the debugger acted
/// on, `HTTPRequest.touches`, always goes alone). An answer that `shares` refuses (one an app's cache may not
/// store, a body still streaming) is the leader's alone: each caller that joined sends its own request then.
/// A cancelled caller stops waiting at once; the upstream request is cancelled only when nobody waits.
public actor CoalescingTransport: HTTPTransport {
    /// Kiosk's own requests that differ only in per-request auth (Marvel's `ts` and `hash` change every second)
    /// ask for the same thing, so their key is the redacted URL; an app's (`byRedactedURL` false) keep their whole
    /// URL, since another key in it may be another identity's.
    private struct Key: Hashable {
        let method: String
        let url: String
        let headers: HTTPHeaderFields
    }

    private struct Flight {
        /// Distinguishes this flight from a later one for the same key, so a finishing (possibly
        /// cancelled) flight never answers callers of a newer one.
        var id: UInt64
        /// The caller whose request started the flight; every other waiter joined it.
        var leader: UInt64
        var task: Task<Void, Never>?
        var waiters: [UInt64: CheckedContinuation<HTTPResponse, any Error>] = [:]
        /// Each waiter's own request, sent alone when the answer may not be shared.
        var requests: [UInt64: HTTPRequest] = [:]
    }

    private let base: any HTTPTransport
    private let byRedactedURL: Bool
    private let shares: @Sendable (HTTPResponse) -> Bool
    private var flights: [Key: Flight] = [:]
    private var nextWaiter: UInt64 = 0
    private var nextFlight: UInt64 = 0
    private var upstreamSends = 0

    /// Wraps `base`; requests are the same when their method, URL (redacted, unless `byRedactedURL` is false) and
    /// fields are; an answer is given to all of them when `shares` says so.
    public init(base: any HTTPTransport, byRedactedURL: Bool = true, shares: @escaping @Sendable (HTTPResponse) -> Bool = { _ in true }) {
        self.base = base
        self.byRedactedURL = byRedactedURL
        self.shares = shares
    }

    /// How many distinct requests are on the wire now.
    public var inFlightCount: Int { flights.count }

    /// How many requests were passed to the wrapped transport so far.
    public var sentCount: Int { upstreamSends }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        // A request something of the debugger's acted on (a resend, an edit) is the user's own exchange: joined
        // onto another, it would leave no record of its own (and, leading, would tag another's).
        guard request.isIdempotent, request.body == nil, request.touches.isEmpty else {
            upstreamSends += 1
            return try await base.send(request)
        }
        let key = Key(method: request.method, url: byRedactedURL ? request.url.redactedString : request.url.absoluteString,
                      headers: request.headers)
        nextWaiter += 1
        let waiter = nextWaiter
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                join(key, waiter: waiter, continuation: continuation, request: request)
            }
        } onCancel: {
            Task { await self.abandon(key, waiter: waiter) }
        }
    }

    private func join(_ key: Key, waiter: UInt64, continuation: CheckedContinuation<HTTPResponse, any Error>,
                      request: HTTPRequest) {
        if flights[key] != nil {
            flights[key]?.waiters[waiter] = continuation
            flights[key]?.requests[waiter] = request
            return
        }
        nextFlight += 1
        let id = nextFlight
        var flight = Flight(id: id, leader: waiter)
        flight.waiters[waiter] = continuation
        upstreamSends += 1
        let base = self.base
        flight.task = Task {
            let result: Result<HTTPResponse, any Error>
            do { result = .success(try await base.send(request)) } catch { result = .failure(error) }
            self.finish(key, flight: id, with: result)
        }
        flights[key] = flight
    }

    private func finish(_ key: Key, flight id: UInt64, with result: Result<HTTPResponse, any Error>) {
        guard flights[key]?.id == id, let flight = flights.removeValue(forKey: key) else { return }
        if case .success(let response) = result, !shares(response) {
            for (waiter, continuation) in flight.waiters {
                guard waiter != flight.leader else {
                    continuation.resume(with: result)
                    continue
                }
                guard let request = flight.requests[waiter] else { continue }
                upstreamSends += 1
                let base = self.base
                Task {
                    do { continuation.resume(returning: try await base.send(request)) } catch { continuation.resume(throwing: error) }
                }
            }
            return
        }
        let collapsed = result.map { response in
            var joined = response
            joined.isCollapsed = true
            return joined
        }
        for (waiter, continuation) in flight.waiters {
            continuation.resume(with: waiter == flight.leader ? result : collapsed)
        }
    }

    private func abandon(_ key: Key, waiter: UInt64) {
        guard let continuation = flights[key]?.waiters.removeValue(forKey: waiter) else { return }
        flights[key]?.requests[waiter] = nil
        continuation.resume(throwing: KioskError.cancelled)
        if flights[key]?.waiters.isEmpty == true {
            flights[key]?.task?.cancel()
            flights[key] = nil
        }
    }
}
