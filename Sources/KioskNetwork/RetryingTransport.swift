public import Foundation
public import KioskCore

/// When and how often a failed GET is tried again.
public struct RetryPolicy: Sendable, Hashable {
    /// Total attempts including the first.
    public var maxAttempts: Int
    /// Backoff before the second attempt; doubles each time.
    public var baseDelay: Duration
    /// No single wait is longer than this.
    public var maxDelay: Duration
    /// A Retry-After longer than this is not waited for: the 429 is returned to the caller instead.
    public var maxRetryAfter: Duration

    /// 3 attempts, 200 ms base, 5 s cap, Retry-After honoured up to 5 s: a reader waits for a refresh, and the
    /// stored page with "the catalog asks Kiosk to slow down for 30 s" at once serves better than a minute's wait.
    public init(maxAttempts: Int = 3, baseDelay: Duration = .milliseconds(200), maxDelay: Duration = .seconds(5),
                maxRetryAfter: Duration = .seconds(5)) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
    }

    /// No retries at all.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// The wait before attempt `attempt + 1` (attempt is 1-based): exponential with full jitter,
    /// so many clients recovering at once do not stampede the upstream.
    public func backoff(afterAttempt attempt: Int, unitRandom: Double) -> Duration {
        let exponential = baseDelay * (1 << min(attempt - 1, 16))
        let capped = min(exponential, maxDelay)
        return capped * max(0, min(1, unitRandom))
    }
}

/// Retries idempotent requests on 5xx, 429 and transient transport failures, with backoff and jitter,
/// honouring Retry-After. Never retries "offline" (that must fail fast), a timeout (the request had the whole time
/// the caller gives one: three would keep a reader waiting three times it, under an error that names one) or
/// non-idempotent requests.
public final class RetryingTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let policy: RetryPolicy
    private let clock: any Clock<Duration>
    private let random: @Sendable () -> Double
    private let now: @Sendable () -> Date

    /// Wraps `base`; `clock` paces the waits and `random` (0..<1) draws the jitter, both injectable for tests.
    public init(base: any HTTPTransport, policy: RetryPolicy = RetryPolicy(),
                clock: any Clock<Duration> = ContinuousClock(),
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.base = base
        self.policy = policy
        self.clock = clock
        self.random = random
        self.now = now
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard request.isIdempotent, policy.maxAttempts > 1 else { return try await base.send(request) }
        var attempt = 1
        while true {
            try Task.checkCancellation()
            let delay: Duration
            do {
                let response = try await base.send(request)
                guard attempt < policy.maxAttempts, let wait = retryDelay(for: response, attempt: attempt) else {
                    return response
                }
                delay = wait
            } catch let error as KioskError {
                guard attempt < policy.maxAttempts, error.isRetryable else { throw error }
                switch error {
                case .timeout, .stalledBody: throw error
                default: break
                }
                delay = policy.backoff(afterAttempt: attempt, unitRandom: random())
            }
            do {
                try await clock.sleep(for: delay)
            } catch {
                throw KioskError.cancelled
            }
            attempt += 1
        }
    }

    /// nil when the response should be returned as it is.
    private func retryDelay(for response: HTTPResponse, attempt: Int) -> Duration? {
        switch response.status {
        case 429, 503:
            if let retryAfter = RetryAfter.parse(response.headers["Retry-After"], now: now()) {
                return retryAfter <= policy.maxRetryAfter ? retryAfter : nil
            }
            return policy.backoff(afterAttempt: attempt, unitRandom: random())
        case 500...599:
            return policy.backoff(afterAttempt: attempt, unitRandom: random())
        default:
            return nil
        }
    }
}

/// Parses Retry-After: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
public enum RetryAfter {
    /// The wait the header asks for, or nil when absent or unreadable.
    public static func parse(_ value: String?, now: Date) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        // delay-seconds is 1*DIGIT: "-5" is no delay at all, not "at once".
        if let seconds = Int(value) { return seconds >= 0 ? .seconds(seconds) : nil }
        if let date = HTTPDate.parse(value) { return .seconds(max(0, Int(date.timeIntervalSince(now).rounded(.up)))) }
        return nil
    }
}
