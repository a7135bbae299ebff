import Foundation
import KioskApp
import KioskCore
import KioskDemoUpstream

/// A running Kiosk for one command: configuration loaded, the demo upstream started when needed.
struct Runtime {
    /// How long a server's requests in flight are given to finish once a stop is asked for (`serve`, `proxy`).
    static let stopGrace = Duration.seconds(5)

    let kiosk: Kiosk
    let demo: DemoUpstream?

    /// Loads the configuration and, unless `--live`, starts the embedded demo upstream for every source
    /// that has no explicit base URL.
    static func start(_ options: GlobalOptions, pausesAtBreakpoints: Bool = false,
                      configure: (inout KioskConfiguration) -> Void = { _ in }) async throws -> Runtime {
        var configuration = try configuration(options)
        configuration.breakpointsActive = pausesAtBreakpoints
        configure(&configuration)
        var demo: DemoUpstream?
        if configuration.usesDemoUpstream(live: options.live) {
            // Answers name one canonical origin, connected to this process's listener: what is stored never
            // depends on which process or port served it (another `kiosk` may hold the port right now).
            let upstream = DemoUpstream(configuration: DemoUpstreamConfiguration(publicBaseURL: DemoUpstream.canonicalBaseURL))
            try await upstream.start()
            configuration.use(await upstream.endpoints, connecting: Origin(DemoUpstream.canonicalBaseURL), to: Origin(await upstream.baseURL))
            demo = upstream
        }
        do {
            let kiosk = try Kiosk(configuration: configuration)
            for warning in kiosk.warnings { printError("warning: \(warning)") }
            return Runtime(kiosk: kiosk, demo: demo)
        } catch {
            await demo?.stop()
            throw error
        }
    }

    /// Runs `body` with Kiosk on the data of these options, without starting any upstream: for commands
    /// that only read or edit what is stored (favorites, stats, the request log, mock rules, breakpoints).
    /// Unless `creating` (the command adds something), an explicit `--data-dir` that does not exist is refused.
    static func offline<T>(_ options: GlobalOptions, creating: Bool = false,
                           _ body: (Kiosk) async throws -> T) async throws -> T {
        if !creating { try checkDataDirectory(options) }
        return try await using(try Kiosk(configuration: configuration(options)), stop: { await $0.shutdown() }, body)
    }

    /// Whether opening Kiosk on these options would make its data folder (it does not exist yet): a command that adds
    /// something checks what it adds first then, so that a refusal leaves no new folder with an empty store behind.
    static func makesDataDirectory(_ options: GlobalOptions) throws -> Bool {
        !FileManager.default.fileExists(atPath: try configuration(options).dataDirectory.path)
    }

    /// Refuses a `--data-dir` that does not exist, for a command that only reads or removes: opening the stores makes
    /// the folder, so a typo would become a new empty data directory, reported empty ("the proxy cache is empty")
    /// instead of the slip.
    static func checkDataDirectory(_ options: GlobalOptions) throws {
        if let directory = options.dataDir, !FileManager.default.fileExists(atPath: directory) {
            throw KioskError.invalidRequest("--data-dir \(directory): there is no such folder, so nothing is stored there.")
        }
    }

    /// The configuration for these options, with the database file chosen for demo or real data.
    static func configuration(_ options: GlobalOptions) throws -> KioskConfiguration {
        var configuration = try KioskConfiguration.load(dataDirectory: options.dataDir)
        configuration.useStore(live: options.live)
        return configuration
    }

    func stop() async {
        await kiosk.shutdown()
        await demo?.stop()
    }

    /// Runs `body` with a started runtime and always stops it.
    static func run<T>(_ options: GlobalOptions, _ body: (Runtime) async throws -> T) async throws -> T {
        try await using(try await start(options), stop: { await $0.stop() }, body)
    }

    /// A command's whole run: `body` with a started runtime, stopped after, errors reported as one line.
    static func command(_ options: GlobalOptions, _ body: (Runtime) async throws -> Void) async throws {
        try await reportingErrors { try await run(options, body) }
    }

    /// `body` with `resource`, then `stop` on it, whether `body` returned or threw.
    private static func using<R, T>(_ resource: R, stop: (R) async -> Void, _ body: (R) async throws -> T) async throws -> T {
        do {
            let value = try await body(resource)
            await stop(resource)
            return value
        } catch {
            await stop(resource)
            throw error
        }
    }
}
