import ArgumentParser
import Foundation
import KioskApp
import KioskConsole
import KioskCore
import KioskProxy
import KioskWeb
import Logging
import ServiceLifecycle
import UnixSignals
import Synchronization

struct ProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy",
        abstract: "Put an app behind Kiosk: an HTTP proxy whose every exchange the network debugger records, pauses and rewrites.",
        discussion: """
            The proxy listens on --port; the web app with the network debugger's console on --console-port. Point the \
            app's HTTP proxy at the proxy (HTTP_PROXY, curl -x, a phone's Wi-Fi proxy setting): each request it sends \
            for an http:// URL goes through Kiosk's debugger — logged (redacted) and shown live in the console, paused \
            at a breakpoint on its host, answered by a mock or changed by a rewrite rule matching its URL — to its \
            upstream. Port 0 picks a free port; each listener's address is printed once it listens. Ctrl-C (or \
            SIGTERM) stops accepting, lets requests in flight finish, and flushes the log.

            Examples:
              kiosk proxy
              curl -x http://127.0.0.1:8888 http://example.test/api/items
              HTTP_PROXY=http://127.0.0.1:8888 my-app
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Address the proxy and the console listen on (loopback only, in this version).")
    var host = "127.0.0.1"
    @Option(help: "Port of the proxy.") var port = 8888
    @Option(help: "Port of the web app with the network debugger's console.") var consolePort = 8081

    func validate() throws {
        for (name, value) in [("--port", port), ("--console-port", consolePort)] where !(0...65_535).contains(value) {
            throw ValidationError("\(name) must be between 0 and 65535 (got \(value)); 0 picks a free one.")
        }
        guard port == 0 || port != consolePort else { throw ValidationError("--port and --console-port must differ.") }
        // Anyone who can reach a proxy can make requests from this machine, to its own loopback services too.
        guard IPAddress.isLoopback(host: host) else {
            throw ValidationError("--host \(host) would let other machines send requests from this one through the proxy; "
                                  + "this version listens on loopback only (127.0.0.1, ::1, localhost).")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let runtime = try await Runtime.start(global, pausesAtBreakpoints: true)
            let kiosk = runtime.kiosk
            let host = host
            let shownHost = host.contains(":") ? "[\(host)]" : host
            let consolePorts = ConsolePorts()
            let console = try buildApplication(kiosk: kiosk, configuration: WebConfiguration(host: host, port: consolePort),
                                               features: { [Console($0)] }) { bound in
                consolePorts.add(bound)
                Output.human("Console on http://\(shownHost):\(bound)/debug")
                fflush(nil)
            }
            let proxy = ProxyServer(
                configuration: ProxyConfiguration(host: host, port: port, ownPorts: { consolePorts.all }),
                forward: { try await kiosk.forward($0) }, onTunnel: { kiosk.recordTunnel($0) }) { bound in
                    Output.human("Kiosk proxy on http://\(shownHost):\(bound)/  (HTTP_PROXY=http://\(shownHost):\(bound); Ctrl-C to stop)")
                    fflush(nil)
                }
            var logger = Logger(label: "kiosk.proxy")
            logger.logLevel = .notice
            let group = ServiceGroup(services: [console, proxy], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            do {
                try await group.run()
            } catch {
                await runtime.stop()
                throw KioskError.transport(url: "http://\(shownHost):\(port)/", message: "cannot serve the proxy: \(error)")
            }
            await runtime.stop()
        }
    }
}

/// The console's port, known once it listens, for the proxy's loop check.
private final class ConsolePorts: Sendable {
    private let ports = Mutex<Set<Int>>([])
    func add(_ port: Int) { ports.withLock { _ = $0.insert(port) } }
    var all: Set<Int> { ports.withLock { $0 } }
}
