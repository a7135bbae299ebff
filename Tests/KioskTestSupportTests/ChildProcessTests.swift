import Foundation
import KioskProcess
import Synchronization
import Testing
import KioskTestSupport

@Suite("Child processes for tests")
struct ChildProcessTests {
    @Test("A run collects standard output, error and the exit status, reading both pipes so neither fills")
    func collects() throws {
        // Given a shell that writes 1 MB to each stream and exits with 3
        // When it is run to its end
        let result = try ChildProcess.run(URL(fileURLWithPath: "/bin/sh"),
                                          arguments: ["-c", "head -c 1048576 /dev/zero; head -c 1048576 /dev/zero >&2; echo done; exit 3"])
        // Then everything written is there, and the status
        #expect(result.status == 3)
        #expect(result.stdout.utf8.count == 1_048_576 + 5 && result.stdout.hasSuffix("done\n"))
        #expect(result.stderr.utf8.count == 1_048_576)
    }

    @Test("The child inherits no descriptor of the parent's beyond its three standard streams")
    func closesInheritedDescriptors() throws {
        // Given a file the parent holds open without close-on-exec
        let path = TemporaryDirectory.url("child-fd").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let held = open(path, O_RDONLY)
        defer { close(held); unlink(path) }
        #expect(held > 2)
        // When a shell lists its own descriptors
        let result = try ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "ls /proc/$$/fd"])
        // Then it has 0, 1 and 2 only
        #expect(result.status == 0)
        #expect(result.stdout.split(separator: "\n") == ["0", "1", "2"])
    }

    @Test("A signalled child is reported ended by the signal, as a shell reports it")
    func signalled() throws {
        // Given a child that would sleep a minute
        let child = try ChildProcess(URL(fileURLWithPath: "/bin/sleep"), arguments: ["60"], stdout: .null, stderr: .null)
        #expect(child.isRunning)
        // When it is interrupted
        child.signal(SIGINT)
        // Then it ends with 128 + SIGINT, and is no longer running
        #expect(child.waitUntilExit() == 128 + SIGINT)
        #expect(!child.isRunning)
    }

    @Test("A child awaited from one task can be signalled from another meanwhile: the wait holds no lock that signal needs")
    func signalledWhileAwaited() async throws {
        // Given a child that would sleep a minute, awaited by a task
        let child = try ChildProcess(URL(fileURLWithPath: "/bin/sleep"), arguments: ["60"], stdout: .null, stderr: .null)
        let ended = Task { await child.exited() }
        try await Task.sleep(for: .milliseconds(300))
        // When it is interrupted from a thread of its own (so that a signal that waits for the lock is seen as such)
        let sent = Mutex(false)
        Thread.detachNewThread {
            child.signal(SIGINT)
            sent.withLock { $0 = true }
        }
        for _ in 0..<100 where !sent.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(50)) }
        // Then the signal went at once, and the awaiting task hears the child ended by it
        #expect(sent.withLock { $0 }, "signal waited on the lock the exit's wait held")
        #expect(await ended.value == 128 + SIGINT)
    }
}
