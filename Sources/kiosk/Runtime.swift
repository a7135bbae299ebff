import Foundation
import KioskApp
import KioskCore
import KioskDemoUpstream

/// A running Kiosk for one command: configuration loaded, the demo upstream started when needed.
struct Runtime {
    let kiosk: Kiosk
    let demo: DemoUpstream?

    /// Loads the configuration and, unless `--live`, starts the embedded demo upstream for every source
    /// that has no explicit base URL.
    static func start(_ options: GlobalOptions, pausesAtBreakpoints: Bool = false) async throws -> Runtime {
        var configuration = try configuration(options)
        configuration.breakpointsActive = pausesAtBreakpoints
        var demo: DemoUpstream?
        if configuration.usesDemoUpstream(live: options.live) {
            // Answers name one canonical origin, connected to this process's listener: what is stored never
            // depends on which process or port served it (another `kiosk` may hold the port right now).
            let upstream = DemoUpstream(configuration: DemoUpstreamConfiguration(publicBaseURL: DemoUpstream.canonicalBaseURL))
            try await upstream.start()
            if let canonical = Origin(DemoUpstream.canonicalBaseURL), let listener = Origin(await upstream.baseURL) {
                configuration.transport.connectOverrides[canonical] = listener
            }
            let keys = await upstream.keys
            if !configuration.explicitlyConfigured.contains(.nyt) {
                configuration.sources.nytBaseURL = await upstream.nytBaseURL
                configuration.sources.nytAPIKey = keys.nyt
            }
            if !configuration.explicitlyConfigured.contains(.marvel) {
                configuration.sources.marvelBaseURL = await upstream.marvelBaseURL
                configuration.sources.marvelPublicKey = keys.marvelPublic
                configuration.sources.marvelPrivateKey = keys.marvelPrivate
            }
            if !configuration.explicitlyConfigured.contains(.rickandmorty) {
                configuration.sources.rickAndMortyBaseURL = await upstream.rickAndMortyBaseURL
            }
            if !configuration.explicitlyConfigured.contains(.dogs) {
                configuration.sources.dogsURL = await upstream.dogsURL
            }
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

    /// The configuration for these options, with the database file chosen for demo or real data.
    static func configuration(_ options: GlobalOptions) throws -> KioskConfiguration {
        var configuration = try KioskConfiguration.load(dataDirectory: options.dataDir)
        if configuration.usesDemoUpstream(live: options.live) { configuration.databaseName = "kiosk-demo.sqlite" }
        return configuration
    }

    func stop() async {
        await kiosk.shutdown()
        await demo?.stop()
    }

    /// Runs `body` with a started runtime and always stops it; KioskErrors become one-line failures.
    static func run<T>(_ options: GlobalOptions, _ body: (Runtime) async throws -> T) async throws -> T {
        let runtime = try await start(options)
        do {
            let value = try await body(runtime)
            await runtime.stop()
            return value
        } catch {
            await runtime.stop()
            throw error
        }
    }
}
