import ArgumentParser
import Foundation
import Hummingbird
import KioskApp
import KioskCore
import KioskWeb

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the web app: a mobile-first reader for the four catalogs, and the JSON API.")

    @OptionGroup var global: GlobalOptions
    @Option(help: "Address to listen on. Loopback by default; anything else exposes Kiosk to the network.")
    var host = "127.0.0.1"
    @Option(help: "Port to listen on.") var port = 8080

    func validate() throws {
        guard (1...65535).contains(port) else { throw ValidationError("--port must be between 1 and 65535 (got \(port)).") }
        guard !host.isEmpty else { throw ValidationError("--host must not be empty.") }
    }

    func run() async throws {
        try await reportingErrors {
            let runtime = try await Runtime.start(global)
            if !["127.0.0.1", "localhost", "::1"].contains(host) {
                printError("warning: listening on \(host): Kiosk will be reachable from other machines")
            }
            let app = buildApplication(kiosk: runtime.kiosk, configuration: WebConfiguration(host: host, port: port))
            print("Kiosk on http://\(host == "::1" ? "[::1]" : host):\(port)/  (Ctrl-C to stop)")
            fflush(nil)
            do {
                try await app.runService()
            } catch {
                await runtime.stop()
                throw KioskError.transport(url: "http://\(host):\(port)/", message: "cannot serve: \(error)")
            }
            await runtime.stop()
        }
    }
}
