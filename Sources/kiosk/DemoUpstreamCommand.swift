import ArgumentParser
import Dispatch
import Foundation
import KioskCore
import KioskDemoUpstream
import Synchronization

struct DemoUpstreamCommand: AsyncParsableCommand {
    /// A data folder for Kiosk pointed at a demo upstream, beside the user's own (`$XDG_DATA_HOME`, else ~/.local/share):
    /// theirs, unlike a fixed name in the shared /tmp another user could make first.
    static var ownDataFolder: String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share").path
        return (base as NSString).appendingPathComponent("kiosk-on-demo-upstream")
    }

    static let configuration = CommandConfiguration(
        commandName: "demo-upstream",
        abstract: "Run the embedded demo upstream alone (the four APIs, images and fault injection).")

    @Option(help: "API port (0 = any free port).") var port = 8090
    @Option(help: "Control port for fault injection (0 = any free port).") var controlPort = 0
    @Option(help: "Added latency per response, in milliseconds.") var latency = 0
    @Option(help: "Fraction (0-1) of requests answered with HTTP 500.") var failureRate = 0.0
    @Option(help: "Fraction (0-1) of requests answered with HTTP 429 and Retry-After.") var rateLimitRate = 0.0
    @Option(help: "Seconds in Retry-After for injected 429s.") var retryAfter = 1
    @Option(help: "Fraction (0-1) of responses cut short.") var truncateRate = 0.0
    @Option(help: "Fraction (0-1) of responses with broken JSON.") var malformedRate = 0.0
    @Option(help: "Fraction (0-1) of list responses with one malformed item (its name is null).") var badItemRate = 0.0
    @Flag(help: "Start offline: the API port refuses connections until turned back on.") var offline = false
    @Flag(help: "Play a careless upstream: echo each request's credentials in ETags, names and messages.")
    var echoCredentials = false

    func validate() throws {
        for (name, rate) in [("--failure-rate", failureRate), ("--rate-limit-rate", rateLimitRate),
                             ("--truncate-rate", truncateRate), ("--malformed-rate", malformedRate),
                             ("--bad-item-rate", badItemRate)]
        where !(0...1).contains(rate) {
            throw ValidationError("\(name) must be between 0 and 1 (got \(rate)).")
        }
        guard (0...65535).contains(port), (0...65535).contains(controlPort) else {
            throw ValidationError("Ports must be between 0 and 65535.")
        }
        guard (0...600_000).contains(latency) else {
            throw ValidationError("--latency must be between 0 and 600000 milliseconds (got \(latency)).")
        }
    }

    func run() async throws {
        var configuration = DemoUpstreamConfiguration()
        configuration.port = port
        configuration.controlPort = controlPort
        var faults = FaultSettings.none
        faults.latencyMilliseconds = latency
        faults.failureRate = failureRate
        faults.rateLimitRate = rateLimitRate
        faults.retryAfterSeconds = retryAfter
        faults.truncateRate = truncateRate
        faults.malformedRate = malformedRate
        faults.badItemRate = badItemRate
        faults.offline = offline
        faults.echoCredentials = echoCredentials
        configuration.faults = faults
        // Demo keys only (KIOSK_DEMO_*), never the real NYT_API_KEY/MARVEL_* keys: the banner prints them.
        let environment = ProcessInfo.processInfo.environment
        if let key = environment["KIOSK_DEMO_NYT_API_KEY"] { configuration.nytAPIKey = key }
        if let key = environment["KIOSK_DEMO_MARVEL_PUBLIC_KEY"] { configuration.marvelPublicKey = key }
        if let key = environment["KIOSK_DEMO_MARVEL_PRIVATE_KEY"] { configuration.marvelPrivateKey = key }

        let upstream = DemoUpstream(configuration: configuration)
        let listeners: [ListenFailure.Listener] = [.init(option: "--port", host: configuration.host, port: port),
                                                   .init(option: "--control-port", host: configuration.host, port: controlPort)]
        do {
            // A taken port is bad input (status 2), worded as serve's and proxy's are.
            try ListenFailure.refuseTaken(listeners)
            try await upstream.start()
        } catch {
            let failure = (error as? KioskError) ?? ListenFailure.error(error, listeners: listeners)
            printErrorLine(failure.description + " See 'kiosk demo-upstream --help'.")
            throw KioskCommand.ExitStatus.badInput
        }
        let keys = await upstream.keys
        Output.human("""
            Demo upstream on \(await upstream.baseURL.absoluteString)
            Fault control on \(await upstream.controlURL.appendingPathComponent("faults").absoluteString)  (GET, or PUT JSON)

            Point Kiosk at it from another shell:
              export KIOSK_NYT_BASE_URL=\(await upstream.nytBaseURL.absoluteString)
              export KIOSK_MARVEL_BASE_URL=\(await upstream.marvelBaseURL.absoluteString)
              export KIOSK_RICKANDMORTY_BASE_URL=\(await upstream.rickAndMortyBaseURL.absoluteString)
              export KIOSK_DOGS_URL=\(await upstream.dogsURL.absoluteString)
              export NYT_API_KEY=\(keys.nyt) MARVEL_PUBLIC_KEY=\(keys.marvelPublic) MARVEL_PRIVATE_KEY=\(keys.marvelPrivate)
              kiosk list rickandmorty --data-dir \(Output.shellQuoted(Self.ownDataFolder))
            (A data folder of its own: Kiosk keeps what it reads with these settings as the real APIs' data, in kiosk.sqlite.)
            Press Ctrl-C to stop.
            """)
        fflush(nil)
        await waitForTerminationSignal()
        await upstream.stop()
    }
}

/// Suspends until SIGINT or SIGTERM.
func waitForTerminationSignal() async {
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    let queue = DispatchQueue(label: "kiosk.signals")
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let resumed = Resumed()
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                if resumed.claim() { continuation.resume() }
            }
            source.resume()
            sources.append(source)
        }
        SignalSources.keep(sources)
    }
}

/// Runs work that SIGINT and SIGTERM cancel rather than end the process with (so the command can say where it stopped
/// and flush what it printed); `received` says which came. Outside `run` a signal ends the process as its default
/// action would (status 128 + its number).
final class Interruption: Sendable {
    private let caught = Mutex<Int32?>(nil)
    /// Cancels the work running now, if any.
    private let cancelCurrent = Mutex<(@Sendable () -> Void)?>(nil)

    init() {
        // Linux's libdispatch takes a signal once per process: a source made for it again after one was cancelled
        // never fires. So the sources are made once and live as long as the process.
        let queue = DispatchQueue(label: "kiosk.interruption")
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [self] in
                guard let cancel = cancelCurrent.withLock({ $0 }) else { Foundation.exit(128 + number) }
                caught.withLock { $0 = $0 ?? number }
                cancel()
            }
            source.resume()
            return source
        }
        SignalSources.keep(sources)
    }

    /// The first SIGINT or SIGTERM received while work ran, if any.
    var received: Int32? { caught.withLock { $0 } }

    /// Runs `work` as a task that the signals cancel.
    func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await work() }
        cancelCurrent.withLock { $0 = { task.cancel() } }
        defer { cancelCurrent.withLock { $0 = nil } }
        return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }
}

/// Ensures a continuation resumes once.
final class Resumed: Sendable {
    private let done = Mutex(false)
    func claim() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}

/// Keeps signal sources alive for the life of the process.
enum SignalSources {
    nonisolated(unsafe) private static var retained: [any DispatchSourceSignal] = []
    static func keep(_ sources: [any DispatchSourceSignal]) { retained.append(contentsOf: sources) }
}
