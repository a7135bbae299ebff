import Foundation
public import KioskCore

/// Applies the rewrite rules: it sits above the mocks (so a mocked answer is rewritten too) and below the
/// secret scrubbing and the capture (so the log shows the answer as the app receives it, and a secret a
/// rule writes is scrubbed like one an upstream sends). For each request:
///
/// 1. No enabled rule matches: the request goes down and its answer comes back untouched.
/// 2. A matching rule fails requests: nothing is sent; its latency is waited (and, for a timeout, the request
///    timeout, as long as a real one takes), then its error thrown; a reset also asks that a proxied app's
///    connection be reset (the first such rule decides; the other rules do nothing).
/// 3. Otherwise the request is sent — without its validators when a rule patches the body, so that a
///    304 does not leave nothing to patch — and each matching rule, in list order, rewrites the answer
///    the one before left. A rule whose patch cannot apply leaves the answer as it was and says why.
/// 4. The rules' latencies, added up, are waited on the injected clock; then the answer goes up.
///
/// Every rule that matched leaves an `ExchangeTouch` on the exchange's record: applied and what it did,
/// or skipped and why.
public final class RewritingTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let rules: RewriteRules
    private let clock: any Clock<Duration>
    private let timeout: Duration
    private let decodeLimit: Int

    /// Rewrites answers from `base` with `rules`; latency is waited on `clock`; a `timeout` failure
    /// reports `timeout` (the configured request timeout) as the time waited. A compressed answer is patched as its
    /// content only when that decodes to at most `decodingAtMost` bytes (the proxy's buffer limit: what it holds whole).
    public init(base: any HTTPTransport, rules: RewriteRules, clock: any Clock<Duration> = ContinuousClock(),
                timeout: Duration = .seconds(15), decodingAtMost: Int = ContentCoding.maximumDecodedBytes) {
        self.base = base
        self.rules = rules
        self.clock = clock
        self.timeout = timeout
        decodeLimit = decodingAtMost
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let matched = rules.matching(request)
        guard !matched.isEmpty else { return try await base.send(request) }

        if let failing = matched.first(where: { $0.rule.actions.failure != nil }),
           let error = failing.error(for: request, timeout: timeout) {
            // A timeout takes as long as a real one: the app sees the wait its own timeout must cope with.
            let acted = failing.rule.actions.failure == .timeout ? timeout : .zero
            try await wait(failing.latency + acted)
            rules.countHits([failing.rule.id])
            if let failure = failing.rule.actions.failure {
                let milliseconds = (failing.rule.actions.latencyMilliseconds ?? 0) + Int(acted / .milliseconds(1))
                request.note(failing.touch(applied: true, .ruleFailed(failure, afterMilliseconds: milliseconds)))
            }
            // A proxied app's connection is reset as a real reset would: it sees the RST, not a proxy's 502.
            if failing.rule.actions.failure == .reset { request.appSide?.askReset() }
            throw error
        }

        var outgoing = request
        if matched.contains(where: { $0.rule.actions.patch != nil }) {
            // A 304 has no body: a rule that patches the body needs the whole answer to patch.
            outgoing.headers["If-None-Match"] = nil
            outgoing.headers["If-Modified-Since"] = nil
            // And the answer whole, however slowly it comes (see `HTTPRequest.holdsWholeAnswer`).
            outgoing.holdsWholeAnswer = true
        }
        let response: HTTPResponse
        do {
            response = try await base.send(outgoing)
        } catch {
            for rule in matched {
                request.note(rule.touch(applied: false, .ruleFoundNoAnswer))
            }
            throw error
        }
        var answer = response
        var latency = Duration.zero
        var applied: [Int] = []
        for rule in matched {
            switch rule.rewrite(answer, decodingAtMost: decodeLimit) {
            case .applied(let rewritten, let edits):
                answer = rewritten
                latency += rule.latency
                applied.append(rule.rule.id)
                let dropped = outgoing.headers != request.headers && rule.rule.actions.patch != nil
                request.note(rule.touch(applied: true, .ruleRewrote(edits, validatorsDropped: dropped)))
            case .skipped(let reason):
                request.note(rule.touch(applied: false, .ruleSkipped(reason)))
            }
        }
        rules.countHits(applied)
        try await wait(latency)
        // The app's first byte came that much later: the exchange's wait, as a slow server's would be (counted nowhere,
        // the capture above took it for time queued before the exchange).
        if latency > .zero, var timings = answer.timings {
            timings.firstByte = (timings.firstByte ?? 0) + latency.seconds
            timings.total += latency.seconds
            answer.timings = timings
        }
        return answer
    }

    private func wait(_ latency: Duration) async throws {
        guard latency > .zero else { return }
        try await clock.sleep(for: latency)
    }
}
