/// The error a rewrite rule fails a request with, as Kiosk's transport would report the real thing.
public enum RuleFailure: String, Sendable, Hashable, Codable, CaseIterable {
    /// No complete answer in time (`KioskError.timeout`), after the request timeout as a real one; retried like one.
    case timeout
    /// The upstream cannot be reached: connection refused, no route (`KioskError.offline`); the app
    /// shows its offline banner until a probe gets through.
    case offline
    /// The connection closed before the answer was complete (`KioskError.transport`); retried. A proxied app's
    /// connection is reset (TCP RST).
    case reset

    /// What the choice does, for forms and help.
    public var summary: String {
        switch self {
        case .timeout: "time out"
        case .offline: "cannot connect (offline)"
        case .reset: "connection reset"
        }
    }
}
