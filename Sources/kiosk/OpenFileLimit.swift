import Foundation

/// The process's limit of open files, which bounds its connections: a proxied request holds two (the app's and the
/// upstream's), so the soft limit many systems start a shell with, 1024, stops a proxy at about 500 at once — past it,
/// new connections wait unaccepted and requests fail with "too many open files". Servers raise it to the hard limit
/// the administrator allows (nginx's worker_rlimit_nofile, Go's runtime at start); so do `kiosk serve` and `kiosk proxy`.
enum OpenFileLimit {
    /// Past this, a higher limit buys nothing a proxy on one machine needs, and some code walks every descriptor up to it.
    static let ceiling: rlim_t = 1 << 20

    /// Below this (after raising), `kiosk proxy` says how many connections it holds.
    static let comfortable = 4096

    /// Raises the soft limit to the hard one (at most `ceiling`), never lowering it; the soft limit in force after.
    @discardableResult
    static func raise() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        let wanted = min(limit.rlim_max, ceiling)
        if wanted > limit.rlim_cur {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// What `kiosk proxy` says at start when `limit` is low: how many connections it holds at once, and what to do.
    static func note(limit: Int, connections: Int) -> String? {
        guard limit < comfortable else { return nil }
        return "Open-file limit \(limit) (ulimit -n, its hard limit too): the proxy holds \(connections) connections at once, "
            + "more wait. Raise the hard limit (ulimit -Hn, LimitNOFILE in a systemd unit) to carry more."
    }
}
