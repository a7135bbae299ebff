import Foundation

/// The process's limit of open files, which bounds its connections: the one place Kiosk reads and raises it. A process
/// that runs out does not merely refuse connections: Swift's libdispatch ends it (its worker monitor reads /proc and
/// takes a failed open for a dead thread), so listeners size what they accept from it (`ConnectionBudget`,
/// `WebConfiguration.maximumConnections`).
public enum OpenFileLimit {
    /// Past this, a higher limit buys nothing a proxy on one machine needs, and some code walks every descriptor up to it.
    public static let ceiling = 1 << 20

    /// The soft limit in force now (1024 if it cannot be read).
    public static var current: Int {
        var limit = rlimit()
        return getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int(clamping: limit.rlim_cur) : 1024
    }

    /// Raises the soft limit to the hard one (at most `ceiling`), never lowering it, as servers do at start (nginx's
    /// worker_rlimit_nofile, Go's runtime); the soft limit in force after.
    @discardableResult
    public static func raise() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return current }
        let wanted = min(limit.rlim_max, rlim_t(ceiling))
        if wanted > limit.rlim_cur {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }
}
