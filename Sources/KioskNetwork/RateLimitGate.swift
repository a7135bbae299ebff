public import Foundation
public import KioskCore
import Synchronization

/// Keeps Kiosk's own requests away from an origin that answered 429 or 503 with a `Retry-After` longer than the retry
/// layer waits (RFC 9110 §10.2.3: the time the client "ought to wait" before its next request): until then a request
/// to that origin is answered here, with the same status and the `Retry-After` left, as the upstream would answer it —
/// the reader shows its stored copy, saying how long — instead of spending the quota the upstream asked it to spare.
/// A request the user made themselves (a resend from the debugger, which carries touches) goes through.
public final class RateLimitGate: HTTPTransport {
    private let base: any HTTPTransport
    private let now: @Sendable () -> Date
    /// Waits up to this long are the retry layer's to make (`RetryPolicy.maxRetryAfter`); only longer ones close the gate.
    private let longerThan: Duration
    /// The longest a gate stays closed, whatever the upstream asks: a hostile or broken `Retry-After` (a year) must not
    /// keep a catalog from ever being asked again while the process runs.
    private let longest: Duration
    /// Each closed origin: until when, and the status it answered.
    private let closed: Mutex<[Origin: (until: Date, status: Int)]>
    /// Told of each origin it closes, to keep it for the next process (`closedBefore`).
    private let onClose: (@Sendable (Origin, Date, Int) -> Void)?

    /// Wraps `base`, closing an origin for the `Retry-After` it asks past `longerThan`, at most `longest`, on `now`'s clock;
    /// `closedBefore` are the origins an earlier process closed, and `onClose` hears of each this one closes.
    public init(base: any HTTPTransport, longerThan: Duration = RetryPolicy().maxRetryAfter, longest: Duration = .seconds(3600),
                now: @escaping @Sendable () -> Date = { Date() }, closedBefore: [Origin: (until: Date, status: Int)] = [:],
                onClose: (@Sendable (Origin, Date, Int) -> Void)? = nil) {
        self.base = base
        self.longerThan = longerThan
        self.longest = longest
        self.now = now
        // (An earlier process's wait is bounded as this one's would be: a clock set back must not hold it longer.)
        let bound = now().addingTimeInterval(longest.seconds)
        closed = Mutex(closedBefore.mapValues { (until: min($0.until, bound), status: $0.status) })
        self.onClose = onClose
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        // (A URL with no origin, which the outbound policy refuses below, is no origin's to close.)
        guard let origin = Origin(request.url) else { return try await base.send(request) }
        let at = now()
        if request.touches.isEmpty, let gate = closed.withLock({ $0[origin] }) {
            let left = gate.until.timeIntervalSince(at)
            if left > 0 {
                return HTTPResponse(status: gate.status, headers: ["Retry-After": String(Int(left.rounded(.up)))], url: request.url,
                                    timings: RequestTimings(total: 0))
            }
            closed.withLock { if $0[origin]?.until == gate.until { $0[origin] = nil } }
        }
        let response = try await base.send(request)
        if response.status == 429 || response.status == 503,
           let wait = RetryAfter.parse(response.headers["Retry-After"], now: at), wait > longerThan {
            let until = at.addingTimeInterval(min(wait, longest).seconds)
            closed.withLock { $0[origin] = (until, response.status) }
            onClose?(origin, until, response.status)
        }
        return response
    }
}
