import NIOCore

/// Runs a task's jobs on one NIO event loop: a proxied exchange started on its client connection's loop stays on
/// it — through the debugger's layers and the upstream transport (whose connection is then taken from the same loop's pool) —
/// instead of hopping to the global executor and back at every step, which costs a thread wake-up each way.
/// Nothing the exchange awaits may block: the loop serves every connection on it meanwhile.
final class EventLoopTaskExecutor: TaskExecutor {
    /// The loop the jobs run on.
    let loop: any EventLoop

    /// An executor for `loop`.
    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
