import Hummingbird
import KioskCore
import KioskListener
import Logging

/// One bound Hummingbird listener, running in its own task until `stop()`.
///
/// Stopping cancels the task: Hummingbird then closes the listening socket (new connections are
/// refused) and the input of every open connection (kept-alive ones included), which is what
/// "offline" must look like to a client. A graceful shutdown would need ServiceLifecycle, which the
/// module does not depend on.
struct RunningListener: Sendable {
    /// The port actually bound.
    let port: Int
    private let task: Task<Void, Never>

    private struct StoppedBeforeBinding: Error, CustomStringConvertible {
        var description: String { "the listener stopped before it was bound" }
    }

    /// Binds `host:port` (0 = any free port) and returns once connections are accepted; every request
    /// passes `policy` before `responder` sees it. `onBound` runs with the bound port before the first
    /// connection is accepted.
    static func launch<Responder: HTTPResponder>(
        responder: Responder, policy: ListenerPolicy, host: String, port: Int, onBound: @escaping @Sendable (Int) -> Void
    ) async throws -> RunningListener where Responder.Context == PeerRequestContext {
        let (events, continuation) = AsyncStream<Result<Int, any Error>>.makeStream()
        var application = Application(
            responder: GuardedResponder(policy: policy, base: responder),
            server: .http1(configuration: .init(additionalChannelHandlers: [AbsoluteFormHostInstaller()])),
            // A deep backlog: benchmarks open many connections at once.
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), backlog: 1024),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                onBound(bound)
                continuation.yield(.success(bound))
            }
        )
        // Stopping by cancellation makes Hummingbird log "Waiting on child channel: CancellationError"
        // at error level, and "Server started" at info, on every offline/online switch; both would
        // drown test and CLI output. Request failures are answered to the client, not logged, anyway.
        application.logger.logLevel = .critical
        let configured = application
        let task = Task {
            do {
                try await configured.run()
                continuation.yield(.failure(StoppedBeforeBinding()))
            } catch {
                continuation.yield(.failure(error))
            }
            continuation.finish()
        }
        for await event in events {
            switch event {
            case .success(let bound): return RunningListener(port: bound, task: task)
            case .failure(let error):
                task.cancel()
                throw error
            }
        }
        throw StoppedBeforeBinding()
    }

    /// Closes the listener and its connections and waits until that is done.
    func stop() async {
        task.cancel()
        await task.value
    }
}
