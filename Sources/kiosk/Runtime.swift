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
    static func start(_ options: GlobalOptions) async throws -> Runtime {
        var configuration = try KioskConfiguration.load(dataDirectory: options.dataDir)
        var demo: DemoUpstream?
        let needsDemo = !options.live && configuration.explicitlyConfigured.count < SourceID.allCases.count
        if needsDemo {
            let upstream = DemoUpstream()
            try await upstream.start()
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
            return Runtime(kiosk: try Kiosk(configuration: configuration), demo: demo)
        } catch {
            await demo?.stop()
            throw error
        }
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
