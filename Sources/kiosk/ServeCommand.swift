import ArgumentParser
import Foundation
import Hummingbird
import KioskApp
import KioskCore
import KioskDemoUpstream
import KioskWeb

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the web app: a mobile-first reader for the four catalogs, and the JSON API.")

    @OptionGroup var global: GlobalOptions
    @Option(help: "Address to listen on. Loopback by default; anything else exposes Kiosk to the network.")
    var host = "127.0.0.1"
    @Option(help: "Port to listen on.") var port = 8080
    @Flag(help: "Serve plain HTTP on an address other than loopback, where anyone on the network can read and change it.")
    var allowPlainHTTP = false

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535 (got \(port)); 0 picks a free one.") }
        guard !host.isEmpty else { throw ValidationError("--host must not be empty.") }
        // Plain HTTP off loopback sends pages, favorites and the CSRF cookie in clear to anyone on the network.
        guard WebConfiguration(host: host, port: port).isLoopback || allowPlainHTTP else {
            throw ValidationError("--host \(host) would serve plain HTTP to the network, where anyone can read and change "
                                  + "what Kiosk sends; pass --allow-plain-http to do it anyway.")
        }
    }

    func run() async throws {
        try await reportingErrors {
            // Only the web app has a console (/debug/paused) in which a paused request can be decided.
            let runtime = try await Runtime.start(global, pausesAtBreakpoints: true)
            if !WebConfiguration(host: host, port: port).isLoopback {
                printError("warning: listening on \(host) over plain HTTP: Kiosk is reachable from other machines, "
                           + "and anyone on the network can read and change what it sends")
            }
            if let demo = runtime.demo {
                let base = await demo.baseURL, control = await demo.controlURL
                Output.human("Demo upstream on \(base.absoluteString) (faults: \(control.absoluteString)/faults)")
            }
            let shownHost = host == "::1" ? "[::1]" : host
            // The line is printed once the port is bound, so a script can wait for it (and learn the port
            // the system picked for --port 0).
            let app = buildApplication(kiosk: runtime.kiosk, configuration: WebConfiguration(
                host: host, port: port, debugToken: ProcessInfo.processInfo.environment["KIOSK_DEBUG_TOKEN"])) { bound in
                Output.human("Kiosk on http://\(shownHost):\(bound)/  (Ctrl-C to stop)")
                fflush(nil)
            }
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
