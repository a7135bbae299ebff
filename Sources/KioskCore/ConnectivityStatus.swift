public import Foundation

/// Whether the upstreams can be reached, as far as Kiosk can tell.
public enum ConnectivityStatus: Sendable, Hashable {
    case online
    /// Unreachable since the date; `origin` (scheme, host and port) is the one that failed first.
    case offline(since: Date, origin: URL)

    /// Whether requests currently fail to connect.
    public var isOffline: Bool {
        if case .offline = self { return true }
        return false
    }
}
