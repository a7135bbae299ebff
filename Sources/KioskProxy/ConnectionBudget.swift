import Foundation
import NIOCore
import Synchronization

/// How many apps' connections a process's proxy listeners hold open at once (every listener of one `kiosk proxy`
/// shares one budget). Each costs two open files — the app's connection and the upstream's — and a process that runs
/// out of them does not merely refuse more: Swift's libdispatch ends it (its worker monitor reads /proc and treats a
/// failed open as a dead thread). So, as HAProxy sizes its maxconn from `ulimit -n`, the listeners stop accepting at
/// half the open-file limit less a reserve, and new connections wait in the kernel's queue until others close.
public final class ConnectionBudget: Sendable {
    /// Files kept for everything but apps' connections: the databases and their journals, the CA, the event loops'
    /// own descriptors, the console's connections, and libdispatch's reads of /proc.
    public static let reserve = 128

    /// The most connections at once.
    public let maximum: Int
    private let state = Mutex(State())
    /// Told once, the first time the budget is spent (`kiosk proxy` says so on stderr).
    private let onFull: @Sendable (Int) -> Void

    private struct State {
        var open = 0
        var saidFull = false
        /// Listeners that stopped accepting, each resumed (on its own loop) once a connection closes.
        var waiting: [@Sendable () -> Void] = []
    }

    /// A budget of `maximum` connections (at least 1); `onFull` hears the maximum the first time it is reached.
    public init(maximum: Int, onFull: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.maximum = max(maximum, 1)
        self.onFull = onFull
    }

    /// The budget for a process whose open-file limit is `openFileLimit`: half of what the reserve leaves.
    public static func maximum(forOpenFileLimit openFileLimit: Int) -> Int {
        max((openFileLimit - reserve) / 2, 8)
    }

    /// The budget for this process's open-file limit now (raise the limit first: see `kiosk proxy`).
    public static func forThisProcess(onFull: @escaping @Sendable (Int) -> Void = { _ in }) -> ConnectionBudget {
        var limit = rlimit()
        let files = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int(clamping: limit.rlim_cur) : 1024
        return ConnectionBudget(maximum: maximum(forOpenFileLimit: files), onFull: onFull)
    }

    /// Connections open now.
    public var open: Int { state.withLock { $0.open } }

    var isSpent: Bool { state.withLock { $0.open >= maximum } }

    /// Counts a connection accepted; `closeFuture` gives it back.
    func opened(_ closeFuture: EventLoopFuture<Void>) {
        let first = state.withLock { state -> Bool in
            state.open += 1
            guard state.open >= maximum, !state.saidFull else { return false }
            state.saidFull = true
            return true
        }
        if first { onFull(maximum) }
        closeFuture.whenComplete { _ in self.closed() }
    }

    /// Has `resume` called once there is room again.
    func wait(_ resume: @escaping @Sendable () -> Void) {
        let room = state.withLock { state -> Bool in
            guard state.open >= maximum else { return true }
            state.waiting.append(resume)
            return false
        }
        if room { resume() }
    }

    private func closed() {
        let resumed = state.withLock { state -> [@Sendable () -> Void] in
            state.open -= 1
            guard state.open < maximum else { return [] }
            defer { state.waiting = [] }
            return state.waiting
        }
        for resume in resumed { resume() }
    }
}

/// On a listener's server channel: counts each accepted connection against the budget and, while the budget is spent,
/// holds the listener's reads (no accept), to read again once a connection anywhere in the process closes.
/// (Hummingbird's `AvailableConnectionsChannelHandler`, which the console uses, counts one listener's connections and
/// wakes it only when one of its own closes: a listener held by the others' would wait for ever.)
final class AcceptGate: ChannelDuplexHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel
    typealias OutboundIn = Never

    private let budget: ConnectionBudget
    private var holdsRead = false

    init(budget: ConnectionBudget) { self.budget = budget }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        budget.opened(unwrapInboundIn(data).closeFuture)
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        guard budget.isSpent else {
            context.read()
            return
        }
        guard !holdsRead else { return }
        holdsRead = true
        let resume = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let loop = context.eventLoop
        budget.wait {
            loop.execute {
                let (gate, context) = resume.value
                gate.holdsRead = false
                gate.read(context: context)
            }
        }
    }
}
