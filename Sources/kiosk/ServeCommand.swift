import ArgumentParser
import Foundation
import Hummingbird
import KioskApp
import KioskConsole
import KioskCore
import KioskDemoUpstream
import KioskWeb
import NIOCore
import ServiceLifecycle
import UnixSignals
import KioskDebugger
#if canImport(Glibc)
import Glibc
#endif

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the web app: a mobile-first reader for the four catalogs, and the JSON API.",
        discussion: """
            --lan serves the machine's network over HTTPS, for a phone on the same Wi-Fi: it prints a URL per \
            address, the certificate's SHA-256 fingerprint and, on a terminal, a pairing code (valid 10 minutes, \
            for one browser; kiosk devices pair shows a new one). A browser on another machine enters the code \
            once (kiosk devices list|revoke manages them); loopback needs no pairing. Kiosk answers only the host \
            names it is served under (loopback's, the certificate's, the machine's, and --allowed-host), and off \
            loopback only peers of local networks (--allow-global-peers admits any). See docs/LAN.md and \
            docs/SECURITY.md.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Address to listen on. Loopback by default, every address with --lan; anything else exposes Kiosk to the network.")
    var host: String?
    @Option(help: "Port to listen on.") var port = 8080
    @Flag(help: "Serve this machine's network over HTTPS (a self-signed certificate kept in the data directory unless --tls-cert), to browsers that pair with a code (kiosk devices pair).")
    var lan = false
    @Option(help: "A PEM certificate chain to serve HTTPS with, instead of the self-signed one (with --tls-key).")
    var tlsCert: String?
    @Option(help: "The PEM private key of --tls-cert.")
    var tlsKey: String?
    @Flag(help: "Serve plain HTTP on an address other than loopback, where anyone on the network can read and change it.")
    var allowPlainHTTP = false
    @Option(name: .customLong("allowed-host"),
            help: ArgumentHelp("Also answer requests for this host name (repeatable; .example.com for a domain and its subdomains).",
                               valueName: "name"))
    var allowedHosts: [String] = []
    @Flag(help: "Off loopback, serve peers from any address, not only local networks and this machine's own networks.")
    var allowGlobalPeers = false

    /// HTTPS, with --lan or the user's own certificate.
    var usesTLS: Bool { lan || tlsCert != nil }

    /// The address bound: --host, else every address for --lan (dual stack where the machine has IPv6), else loopback.
    var listenHost: String {
        if let host { return host }
        return lan ? (Self.hasIPv6 ? "::" : "0.0.0.0") : "127.0.0.1"
    }

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535 (got \(port)); 0 picks a free one.") }
        guard host?.isEmpty != true else { throw ValidationError("--host must not be empty.") }
        if let host, let problem = ListenerPolicy.listeningProblem(host) {
            throw ValidationError("--host \(host) is \(problem): give an address of this machine (127.0.0.1, ::1, 0.0.0.0) or a name.")
        }
        try refuseEmpty(["--tls-cert": tlsCert, "--tls-key": tlsKey])
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together.") }
        // Pairing is for the network's devices, which a loopback listener never hears from: said, not served half.
        if lan, let host, IPAddress.isLoopback(host: host) {
            throw ValidationError("--lan serves the phones and computers of your network, which --host \(host) (this machine only) "
                                  + "does not reach: leave out --host, or give this machine's network address.")
        }
        guard !(usesTLS && allowPlainHTTP) else {
            throw ValidationError("--allow-plain-http cannot be combined with HTTPS (--lan or --tls-cert): Kiosk serves one or the other.")
        }
        // Plain HTTP off loopback sends pages, favorites and the CSRF cookie in clear to anyone on the network.
        guard usesTLS || WebConfiguration(host: listenHost, port: port).isLoopback || allowPlainHTTP else {
            throw ValidationError("--host \(listenHost) would serve plain HTTP to the network, where anyone can read and change "
                                  + "what Kiosk sends; use --lan for HTTPS with pairing, or pass --allow-plain-http to do it anyway.")
        }
        do {
            try webConfiguration(tls: nil, pairing: nil).validate()
        } catch let error as KioskError {
            throw ValidationError(error.description)
        }
    }

    /// The web app's configuration from the options and the environment (`KIOSK_DEBUG_TOKEN`).
    func webConfiguration(tls: TLSMaterial?, pairing: PairingConfiguration?) -> WebConfiguration {
        WebConfiguration(host: listenHost, port: port, debugToken: WebConfiguration.environmentDebugToken,
                         tls: tls, pairing: pairing, allowedHosts: allowedHosts, allowsGlobalPeers: allowGlobalPeers)
    }

    func run() async throws {
        try await reportingErrors {
            // The certificate first: a bad --tls-cert stops here, before any upstream starts.
            let tls = try tlsMaterial()
            OpenFileLimit.raise()
            // Only the web app has a console (/debug/paused) in which a paused request can be decided.
            let runtime = try await Runtime.start(global, pausesAtBreakpoints: true)
            let host = listenHost
            let loopback = WebConfiguration(host: host, port: port).isLoopback
            if !usesTLS && !loopback {
                printError("warning: listening on \(host) over plain HTTP: Kiosk is reachable from other machines, "
                           + "and anyone on the network can read and change what it sends")
            }
            if let demo = runtime.demo {
                let base = await demo.baseURL, control = await demo.controlURL
                Output.human("Demo upstream on \(base.absoluteString) (faults: \(control.absoluteString)/faults)")
            }
            // Browsers on other machines pair; a listener only loopback can reach has no one to ask.
            let pairing = usesTLS && !loopback ? PairingConfiguration(report: { line in
                Output.human(line)
                fflush(nil)
            }) : nil
            let configuration = webConfiguration(tls: tls, pairing: pairing)
            let kiosk = runtime.kiosk
            let pairCommand = pairCommand(dataDir: global.openedDataDir(kiosk))
            let allowGlobalPeers = allowGlobalPeers
            // The lines are printed once the port is bound, so a script can wait for them (and learn the port
            // the system picked for --port 0).
            let app = try buildApplication(kiosk: kiosk, configuration: configuration, features: { [Console($0)] }) { bound in
                var lines = Self.listeningLines(host: host, port: bound, tls: tls, allowsGlobalPeers: allowGlobalPeers)
                // Where the debugger is, and who may open it: a new user learns of it here, not in the docs.
                let console = Self.address(host: host, port: bound, tls: tls) + "debug"
                let debugger = configuration.debugToken != nil ? "Network debugger on \(console)  (locked: the token in KIOSK_DEBUG_TOKEN opens it)"
                    : configuration.isLoopback ? "Network debugger on \(console)  (open to this machine; KIOSK_DEBUG_TOKEN locks it)"
                    : "Network debugger: off on a listener other machines reach, unless KIOSK_DEBUG_TOKEN sets a token to open it"
                lines.insert(debugger, at: 1)
                if pairing != nil { lines.append(Self.pairingLine(kiosk: kiosk, onTerminal: Output.isTerminal, command: pairCommand)) }
                Output.human(lines.joined(separator: "\n"))
                fflush(nil)
            }
            // Ctrl-C or SIGTERM: pauses at breakpoints end unchanged at once (their pages answered, not held to their
            // deadline), requests in flight get 5 s, and then what is still open is cut (an upstream that never answers
            // would otherwise keep the server running): `kiosk proxy`'s grace (Runtime.stopGrace), on Hummingbird's own stop.
            var group = ServiceGroupConfiguration(
                services: [.init(service: app),
                           .init(service: StopAnnouncer(breakpoints: kiosk.debugger.breakpoints), successTerminationBehavior: .ignore)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: app.logger)
            group.maximumGracefulShutdownDuration = Runtime.stopGrace
            do {
                try await ServiceGroup(configuration: group).run()
            } catch {
                await runtime.stop()
                throw ListenFailure.error(error, listeners: [.init(option: "--port", host: host, port: port)])
            }
            await runtime.stop()
        }
    }

    /// Waits for the stop, then says so and ends every pause at a breakpoint unchanged.
    private struct StopAnnouncer: Service {
        let breakpoints: Breakpoints

        func run() async throws {
            // Thrown when the group is cancelled without a stop asked (the listener could not start): nothing to say.
            do { try await gracefulShutdown() } catch { return }
            Output.human("Stopping: requests in flight have \(Runtime.stopGrace.components.seconds) s to finish.")
            fflush(nil)
            breakpoints.releaseAll()
        }
    }

    /// `kiosk devices pair` with the options that reach this store, its data folder `dataDir` (absolute: run from anywhere).
    func pairCommand(dataDir: String?) -> String {
        "kiosk devices pair" + (dataDir.map { " --data-dir " + Output.shellQuoted($0) } ?? "") + (global.live ? " --live" : "")
    }

    /// The pairing line: on a terminal, a new code (the one place it is written); elsewhere — a service
    /// manager's journal, a container's log, a file — only how to get one, since such output is kept.
    static func pairingLine(kiosk: Kiosk, onTerminal: Bool, command: String) -> String {
        guard onTerminal else {
            return "Pairing: run `\(command)` for a code (it is not printed here: this output is not a terminal, and logs keep it)."
        }
        do {
            let window = try kiosk.devices.openPairingWindow()
            return "Pairing code: \(window.code.displayed)  (for one browser, until \(Self.time(window.expiresAt)); "
                + "`\(command)` shows a new one)"
        } catch {
            return "Pairing: no code could be opened (\(error)); run `\(command)` to try again."
        }
    }

    /// The user's certificate, the data directory's self-signed one (made or replaced when needed, which is
    /// said), or nil for plain HTTP.
    private func tlsMaterial() throws -> TLSMaterial? {
        if let tlsCert, let tlsKey {
            let material = try TLSMaterial.load(certificateFile: tlsCert, keyFile: tlsKey)
            Output.human("Using the certificate \(tlsCert) (valid until \(Self.day(material.notValidAfter))).")
            if let mode = SecretFile.othersCanRead(tlsKey) {
                printError("warning: the key \(tlsKey) can be read by others (mode \(String(mode, radix: 8))): anyone who copies "
                           + "it can pose as this Kiosk; chmod 600 it")
            }
            return material
        }
        guard lan else { return nil }
        let directory = try Runtime.configuration(global).dataDirectory
        let addresses = MachineAddresses.current().map(\.description)
        let (material, provenance) = try TLSMaterial.selfSigned(in: directory, names: MachineAddresses.names(),
                                                                addresses: addresses, now: Date())
        let file = directory.appendingPathComponent(TLSMaterial.certificateFileName).path
        let renewal = "Its fingerprint is new: browsers will ask you to accept it again."
        switch provenance {
        case .reused:
            Output.human("Using the self-signed certificate \(file) (valid until \(Self.day(material.notValidAfter))).")
        case .created:
            Output.human("Made a self-signed certificate for this machine: \(file) (its key, \(TLSMaterial.keyFileName), "
                         + "is readable by you only).")
        case .replacedUnreadable(let reason):
            Output.human("The certificate \(file) could not be used (\(reason)), so a new one was made. \(renewal)")
        case .replacedExpired(let date):
            Output.human("The certificate \(file) expired on \(Self.day(date)), so a new one was made. \(renewal)")
        }
        let unnamed = addresses.filter { !material.names.contains($0) }
        if !unnamed.isEmpty {
            Output.human("Note: the certificate does not name \(unnamed.joined(separator: ", ")) (it was made when the machine "
                         + "had other addresses); delete \(file) to make one that does.")
        }
        return material
    }

    /// The web app's address on this machine, `http(s)://host:port/` (localhost for a listener on every address).
    static func address(host: String, port: Int, tls: TLSMaterial?) -> String {
        let shownHost = host == "::" || host == "0.0.0.0" ? "localhost" : (host.contains(":") ? "[\(host)]" : host)
        return "\(tls == nil ? "http" : "https")://\(shownHost):\(port)/"
    }

    /// What `serve` prints once listening: where, and for HTTPS the network URLs (saying which are global
    /// addresses) and the fingerprint.
    static func listeningLines(host: String, port: Int, tls: TLSMaterial?, allowsGlobalPeers: Bool) -> [String] {
        let wildcard = host == "::" || host == "0.0.0.0"
        var lines = ["Kiosk on \(address(host: host, port: port, tls: tls))  (Ctrl-C to stop)"]
        guard let tls else { return lines }
        if wildcard {
            let addresses = MachineAddresses.current().filter { host == "::" || $0.bytes.count == 4 }
            if addresses.isEmpty {
                lines.append("No network address found: is this machine connected to a network?")
            } else {
                lines.append("On your network:")
                lines += addresses.map { "  " + MachineAddresses.url($0, port: port) }
                let global = MachineAddresses.global(addresses)
                if !global.isEmpty {
                    let listed = global.map(\.description).joined(separator: ", ")
                    let what = "Warning: \(listed) \(global.count == 1 ? "is a global address" : "are global addresses"), "
                        + "reachable from the internet unless a firewall stands in between"
                    lines.append(what + (allowsGlobalPeers
                        ? "; with --allow-global-peers any machine that reaches it can try to pair."
                        : "; Kiosk answers there only machines of this machine's own networks and local ranges."))
                }
            }
        }
        lines.append("Certificate SHA-256 fingerprint: \(tls.fingerprint)")
        return lines
    }

    /// Whether the machine can open an IPv6 socket, so `::` is a dual-stack listener rather than a failure.
    static var hasIPv6: Bool {
        let probe = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard probe >= 0 else { return false }
        close(probe)
        // And `::` must resolve as the listener binds it (NIO asks getaddrinfo with no hints, so AI_ADDRCONFIG): where
        // ::1 is the only IPv6 address (a container's network namespace), it does not, and binding it would fail.
        return (try? SocketAddress.makeAddressResolvingHost("::", port: 0)) != nil
    }

    private static func time(_ date: Date) -> String {
        date.formatted(date: .omitted, time: .shortened)
    }

    private static func day(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle().year().month().day())
    }
}
