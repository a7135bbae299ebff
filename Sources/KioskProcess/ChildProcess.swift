public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for the tests and the benchmark that run the `kiosk` binary.
///
/// Why not Foundation's `Process`: on Linux its `run()` finds the descriptors to close in the child by
/// copying each `/proc/self/fd` entry's whole 256-byte `d_name`, which reads past glibc's buffer and
/// crashes the calling process now and then (swift-corelibs-foundation #5472, not in Swift 6.3.1); a
/// test process with many descriptors open hit it in CI. This one closes them with glibc's
/// `posix_spawn_file_actions_addclosefrom_np`, as swift-subprocess does; that library's scoped async API
/// does not fit a server started in one place and stopped in another, which these tests need.
public final class ChildProcess: @unchecked Sendable {
    /// Where a standard stream of the child goes.
    public enum Stream: Sendable {
        /// The parent's own.
        case inherit
        /// /dev/null.
        case null
        /// A new pipe, whose other end the parent reads (or writes, for standard input).
        case pipe
        /// Standard error only: wherever standard output goes.
        case sameAsOutput
        /// A file descriptor of the parent's (kept open by the caller).
        case descriptor(CInt)
    }

    /// What a collected run printed and how it ended.
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        /// The child's peak resident memory, in KiB: its `ru_maxrss`, not that of every child of this process. Linux
        /// starts it at the spawning process's high-water mark (carried over at exec), so it is never below that.
        public var peakResidentKiB: Int
    }

    public let pid: pid_t
    /// The parent's end of the child's standard input, output and error, for `.pipe` streams.
    public let standardInput: FileHandle?
    public let standardOutput: FileHandle?
    public let standardError: FileHandle?
    private let exit = NSLock()
    private var exitStatus: Int32?
    private var peak = 0

    /// Starts `executable` with `arguments` and `environment` (nil: this process's); throws the spawn's errno.
    public init(_ executable: URL, arguments: [String], environment: [String: String]? = nil,
                stdin: Stream = .null, stdout: Stream = .pipe, stderr: Stream = .pipe) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [CInt] = []
        var childEnds: [CInt] = []
        func wire(_ stream: Stream, to target: CInt, childReads: Bool) throws -> FileHandle? {
            switch stream {
            case .inherit:
                return nil
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", childReads ? O_RDONLY : O_WRONLY, 0)
                return nil
            case .sameAsOutput:
                posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, target)
                return nil
            case .descriptor(let fd):
                posix_spawn_file_actions_adddup2(&actions, fd, target)
                return nil
            case .pipe:
                var ends: [CInt] = [0, 0]
                guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                // (Close-on-exec, for children spawned elsewhere; ours close every descriptor above 2 anyway.)
                ends.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
                let (child, parent) = childReads ? (ends[0], ends[1]) : (ends[1], ends[0])
                posix_spawn_file_actions_adddup2(&actions, child, target)
                childEnds.append(child)
                parentEnds.append(parent)
                return FileHandle(fileDescriptor: parent, closeOnDealloc: true)
            }
        }
        standardInput = try wire(stdin, to: STDIN_FILENO, childReads: true)
        standardOutput = try wire(stdout, to: STDOUT_FILENO, childReads: false)
        standardError = try wire(stderr, to: STDERR_FILENO, childReads: false)
        // Nothing else of the parent's (databases, sockets, other children's pipes) leaks into the child.
        Self.closeFrom(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, as Foundation's Process does, so a terminal's ^C reaches the test runner only;
        // and signals as a new program expects them: none blocked (the spawning thread's mask would be
        // inherited) and none ignored (SIGPIPE is, in the test runner).
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            variables.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable.path, &actions, &attributes, argv, variables)
        childEnds.forEach { close($0) }
        guard result == 0 else {
            parentEnds.forEach { close($0) }
            throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO)
        }
        self.pid = pid
    }

    /// Runs `executable` to its end, collecting standard output (unless `stdout` sends it elsewhere) and error, read
    /// together so neither pipe fills.
    public static func run(_ executable: URL, arguments: [String], environment: [String: String]? = nil,
                           stdin: Stream = .null, stdout: Stream = .pipe) throws -> Result {
        try ChildProcess(executable, arguments: arguments, environment: environment, stdin: stdin, stdout: stdout).collect()
    }

    /// Waits for the child's end, collecting what is left of its piped standard output and error, read together so
    /// neither pipe fills.
    public func collect() -> Result {
        let errors = Collected()
        let reader = Thread { [standardError] in
            errors.set(standardError?.readDataToEndOfFile() ?? Data())
        }
        reader.start()
        let output = standardOutput?.readDataToEndOfFile() ?? Data()
        let status = waitUntilExit()
        return Result(status: status, stdout: String(decoding: output, as: UTF8.self),
                      stderr: String(decoding: errors.wait(), as: UTF8.self), peakResidentKiB: peakResidentKiB)
    }

    /// `collect`, waited for on a thread of its own (see the asynchronous `run`).
    public func collected() async -> Result {
        await Self.offThePool { self.collect() }
    }

    /// `run`, waited for on a thread of its own: a task that awaits it does not hold one of the few threads every task
    /// of the process runs on (as many as cores) while the child runs, which on 2 cores stalled every other task.
    public static func run(_ executable: URL, arguments: [String], environment: [String: String]? = nil,
                           stdin: Stream = .null, stdout: Stream = .pipe) async throws -> Result {
        try await offThePool { try run(executable, arguments: arguments, environment: environment, stdin: stdin, stdout: stdout) }
    }

    /// `waitUntilExit`, waited for on a thread of its own (see the asynchronous `run`).
    @discardableResult
    public func exited() async -> Int32 {
        await Self.offThePool { self.waitUntilExit() }
    }

    /// `body`'s result, computed on a new thread while the calling task waits without holding its own.
    public static func offThePool<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Swift.Result { try body() }) }
        }
    }

    /// `body`'s result, computed on a new thread while the calling task waits without holding its own.
    public static func offThePool<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }

    /// Sends `signal` (SIGINT by default: the servers under test stop gracefully on it).
    public func signal(_ signal: CInt = SIGINT) {
        exit.lock()
        defer { exit.unlock() }
        if exitStatus == nil { kill(pid, signal) }
    }

    /// Waits for the child to end; its exit status, or 128 + the signal that ended it, as a shell says.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        // Waited for without reaping it and without the lock, so that `signal` can be sent meanwhile (from another task
        // awaiting `exited()`); it is reaped holding the lock, so that no signal goes to its pid once another may have it.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
        exit.lock()
        defer { exit.unlock() }
        if let exitStatus { return exitStatus }
        var status: CInt = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) == -1 && errno == EINTR {}
        let ended = Self.shellStatus(status)
        exitStatus = ended
        peak = usage.ru_maxrss
        return ended
    }

    /// The child's own peak resident memory in KiB, once it has ended and been waited for (0 before).
    public var peakResidentKiB: Int {
        exit.lock()
        defer { exit.unlock() }
        return peak
    }

    /// Whether the child has not ended yet (it is reaped when it has).
    public var isRunning: Bool {
        exit.lock()
        defer { exit.unlock() }
        guard exitStatus == nil else { return false }
        var status: CInt = 0
        var usage = rusage()
        guard wait4(pid, &status, WNOHANG, &usage) == pid else { return true }
        exitStatus = Self.shellStatus(status)
        peak = usage.ru_maxrss
        return false
    }

    /// A `waitpid` status as a shell reports it: the exit status, or 128 + the signal that ended it.
    private static func shellStatus(_ status: CInt) -> Int32 {
        (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34 and later), looked up at run time as Swift's
    /// Glibc module does not declare it; without it, each descriptor up to the soft limit is closed.
    private static func closeFrom(_ actions: inout posix_spawn_file_actions_t, _ first: CInt) {
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, CInt) -> CInt
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, first)
            return
        }
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        for fd in first..<CInt(clamping: min(limit.rlim_cur, 65_536)) where fcntl(fd, F_GETFD) != -1 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
    }
}

/// Data handed from a reading thread to the thread that waits for it.
private final class Collected: @unchecked Sendable {
    private let condition = NSCondition()
    private var data: Data?

    func set(_ value: Data) {
        condition.lock()
        data = value
        condition.broadcast()
        condition.unlock()
    }

    func wait() -> Data {
        condition.lock()
        defer { condition.unlock() }
        while data == nil { condition.wait() }
        return data ?? Data()
    }
}
