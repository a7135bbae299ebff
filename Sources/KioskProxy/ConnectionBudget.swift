import Foundation
import KioskCore
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
        /// Each listener's "look again": on its own loop, it accepts or not by whether the budget is spent then.
        var listeners: [ObjectIdentifier: @Sendable () -> Void] = [:]
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
        ConnectionBudget(maximum: maximum(forOpenFileLimit: OpenFileLimit.current), onFull: onFull)
    }

    /// Connections open now.
    public var open: Int { state.withLock { $0.open } }

    var isSpent: Bool { state.withLock { $0.open >= maximum } }

    /// Counts a connection accepted; `closeFuture` gives it back.
    func opened(_ closeFuture: EventLoopFuture<Void>) {
        let (spentNow, first, listeners) = state.withLock { state in
            state.open += 1
            let spentNow = state.open == maximum
            let first = state.open >= maximum && !state.saidFull
            if first { state.saidFull = true }
            return (spentNow, first, spentNow ? Array(state.listeners.values) : [])
        }
        if first { onFull(maximum) }
        if spentNow { for lookAgain in listeners { lookAgain() } }
        closeFuture.whenComplete { _ in self.closed() }
    }

    private func closed() {
        let listeners = state.withLock { state in
            state.open -= 1
            return state.open == maximum - 1 ? Array(state.listeners.values) : []
        }
        for lookAgain in listeners { lookAgain() }
    }

    /// Has `lookAgain` called whenever the budget becomes spent or has room again, until `forget(_:)`.
    func listen(_ listener: ObjectIdentifier, _ lookAgain: @escaping @Sendable () -> Void) {
        state.withLock { $0.listeners[listener] = lookAgain }
    }

    /// Stops telling `listener` (its handler is gone with its listener).
    func forget(_ listener: ObjectIdentifier) {
        _ = state.withLock { $0.listeners.removeValue(forKey: listener) }
    }
}

/// On a listener's server channel: counts each accepted connection against the budget, and keeps the listener's
/// reading (accepting) on only while the budget has room — switched off as soon as any listener of the process spends
/// it, even one that accepted nothing, and on again once a connection anywhere closes; new connections wait in the
/// kernel's queue meanwhile. (Hummingbird's `AvailableConnectionsChannelHandler`, which the console uses, counts one
/// listener's own connections and holds its reads only after its own next accept: with a budget shared by several
/// listeners, an idle one would still accept while the others spent it.) Another listener's spending reaches this one
/// by a turn of its event loop, which handles the sockets it found ready before such a task: a connection accepted in
/// that moment waits here, unread, until the budget has room.
final class AcceptGate: ChannelInboundHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    private let budget: ConnectionBudget
    /// Connections accepted while the budget was spent, oldest first, let in as it has room.
    private var waiting: [any Channel] = []

    init(budget: ConnectionBudget) { self.budget = budget }

    func handlerAdded(context: ChannelHandlerContext) {
        // Held by the budget until the handler goes (`forget`).
        let bound = NIOLoopBound((gate: self, context: context), eventLoop: context.eventLoop)
        let loop = context.eventLoop
        // Evaluated on the listener's loop when it runs, not when told: two notices crossing each other still end on
        // the budget's state at the last one.
        budget.listen(ObjectIdentifier(self)) {
            loop.execute { bound.value.gate.lookAgain(bound.value.context) }
        }
        if budget.isSpent { try? context.channel.syncOptions?.setOption(.autoRead, value: false) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        budget.forget(ObjectIdentifier(self))
        for channel in waiting { channel.close(promise: nil) }
        waiting = []
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let channel = unwrapInboundIn(data)
        guard waiting.isEmpty, !budget.isSpent else {
            waiting.append(channel)
            try? context.channel.syncOptions?.setOption(.autoRead, value: false)
            return
        }
        admit(channel, context)
    }

    private func lookAgain(_ context: ChannelHandlerContext) {
        while !waiting.isEmpty, !budget.isSpent { admit(waiting.removeFirst(), context) }
        try? context.channel.syncOptions?.setOption(.autoRead, value: waiting.isEmpty && !budget.isSpent)
    }

    private func admit(_ channel: any Channel, _ context: ChannelHandlerContext) {
        budget.opened(channel.closeFuture)
        context.fireChannelRead(wrapInboundOut(channel))
    }
}
