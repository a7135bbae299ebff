public import ArgumentParser
import Foundation
public import KioskApp
import KioskConsole
import KioskCore
import KioskDebugger
import KioskNetwork
import KioskProxy
import KioskWeb
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

struct ProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy",
        abstract: "Put an app behind Kiosk: an HTTP proxy whose every exchange the network debugger records, pauses and rewrites.",
        usage: """
            kiosk proxy [--port <port>] [--console-port <port>] [--host <host>] [--reverse <URL@PORT> ...] [--cache <mode>] ...
            kiosk proxy <subcommand>
            """,
        discussion: """
            `kiosk proxy` alone runs the proxy (8888) and its console (8081): `kiosk proxy run --help` lists its options — \
            --port, --console-port, --host, --reverse, --intercept, --ignore, --cache, --offline, --upstream-ca and more.
            """,
        subcommands: [ProxyRunCommand.self, ProxyCACommand.self, ProxyEnvCommand.self, ProxyPasswordCommand.self, ProxyCacheCommand.self],
        defaultSubcommand: ProxyRunCommand.self)
}

/// The data directory's proxy CA (made on first use) and the directory.
private func proxyAuthority(_ global: GlobalOptions) throws -> (authority: ProxyAuthority, directory: URL) {
    let directory = try Runtime.configuration(global).dataDirectory
    return (try ProxyAuthority.inDirectory(directory), directory)
}

struct ProxyRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the proxy and the console (what `kiosk proxy` does).",
        discussion: """
            The proxy listens on --port; the web app with the network debugger's console on --console-port. Point the \
            app's HTTP proxy at the proxy (HTTP_PROXY and HTTPS_PROXY, curl -x, a phone's Wi-Fi proxy setting): each \
            request goes through Kiosk's debugger — logged (redacted) and shown live in the console, paused at a \
            breakpoint on its host, answered by a mock or changed by a rewrite rule matching its URL — to its upstream. \
            HTTPS is read with Kiosk's own CA (kiosk proxy ca prints it; the app must trust it), for every host, or only \
            those --intercept names; --ignore hosts are tunnelled unread. Port 0 picks a free port; each listener's \
            address is printed once it listens. Ctrl-C (or SIGTERM) stops accepting, gives requests in flight 5 seconds \
            to finish (then closes what is still open: a stream, an upstream that does not answer), and flushes the log.

            Examples:
              kiosk proxy
              eval "$(kiosk proxy env)"; my-app
              curl -x http://127.0.0.1:8888 --cacert "$(kiosk proxy ca --path)" https://example.test/api/items
              kiosk proxy --intercept '*.example.test' --ignore pinned.example.test
              kiosk proxy --host 0.0.0.0 --proxy-auth      (a phone on the Wi-Fi: Proxy-Authorization required)
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Address the proxy listens on. Loopback unless --proxy-auth: then any (0.0.0.0 for every network); "
                               + "the console and reverse listeners stay on loopback."))
    var host = "127.0.0.1"
    @Flag(help: ArgumentHelp("Ask every client for a password (Proxy-Authorization, user kiosk), made and printed once (on a terminal); other "
                             + "machines' requests may not reach this machine's loopback or private addresses."))
    var proxyAuth = false
    @Option(help: "Port of the proxy.") var port = 8888
    @Option(help: "Port of the web app with the network debugger's console.") var consolePort = 8081
    @Option(name: .customLong("intercept"),
            help: ArgumentHelp("Read HTTPS of these hosts only (repeatable; *.example.com for its subdomains, * for all). Default: every host.",
                               valueName: "pattern"))
    var interceptedHosts: [String] = []
    @Option(name: .customLong("ignore"),
            help: ArgumentHelp("Tunnel these hosts' HTTPS unread (repeatable; pinned apps refuse any other CA).", valueName: "pattern"))
    var ignoredHosts: [String] = []
    @Option(name: .customLong("reverse"),
            help: ArgumentHelp("Also listen on PORT as a reverse proxy to URL (repeatable): an app whose base URL is "
                               + "http://127.0.0.1:PORT needs no proxy setting and no CA. Host, Origin and Referer are said "
                               + "for URL, and Location, Content-Location, Refresh, Link and cookies for the listener; bodies are "
                               + "passed as they are.", valueName: "URL@PORT"))
    var reverse: [String] = []
    @Option(name: .customLong("upstream-ca"),
            help: ArgumentHelp("Also trust this PEM CA for upstream HTTPS (repeatable: a company CA, a local server's).",
                               valueName: "file"))
    var upstreamCAs: [String] = []
    @Flag(help: ArgumentHelp("Do not check upstream HTTPS certificates (a test server's self-signed one). Anyone between "
                             + "Kiosk and the upstream could then read and change the exchanges; said on start and noted on each."))
    var insecureUpstream = false
    @Option(help: ArgumentHelp("What the proxy keeps of apps' answers: fallback (every request goes upstream; when the "
                               + "upstream fails — unreachable, a timeout, a 5xx — the stored answer is given, however old), http "
                               + "(an RFC 9111 cache: fresh answers given without asking, stale ones revalidated) or off.",
                               valueName: "mode"))
    var cache: ProxyCacheMode = .fallback
    @Flag(help: ArgumentHelp("Ask no upstream at all (not even DNS): stored answers are given, anything else is a 504. "
                             + "Browse once online, then replay with no network."))
    var offline = false
    @Option(help: ArgumentHelp("The most the stored answers may take, in MB; the least recently used go first.", valueName: "MB"))
    var cacheSize = 500
    @Option(help: ArgumentHelp("How long the upstream may take, when a stored answer could stand in for its failure, before it "
                               + "does (the request is then sent again behind, and what it brings is stored): 0.1 to 60, under the app's "
                               + "own timeout (OkHttp's is 10 s).", valueName: "seconds"))
    var fallbackAfter: Double = 8

    func validate() throws {
        guard (1...1_000_000).contains(cacheSize) else { throw ValidationError("--cache-size must be between 1 and 1000000 MB (got \(cacheSize)).") }
        // Past the proxy's own upstream timeout (a minute) it would never come first.
        guard fallbackAfter >= 0.1 && fallbackAfter <= 60 else {
            throw ValidationError("--fallback-after must be between 0.1 and 60 seconds, the proxy's upstream timeout (got \(fallbackAfter)).")
        }
        if offline && cache == .off {
            throw ValidationError("--offline answers from the cache, which --cache off turns off: drop one of them.")
        }
        for (name, value) in [("--port", port), ("--console-port", consolePort)] where !(0...65_535).contains(value) {
            throw ValidationError("\(name) must be between 0 and 65535 (got \(value)); 0 picks a free one.")
        }
        guard port == 0 || port != consolePort else { throw ValidationError("--port and --console-port must differ.") }
        if let problem = ListenerPolicy.listeningProblem(host) {
            throw ValidationError("--host \(host.isEmpty ? "\"\"" : host) is \(problem): give an address of this machine (127.0.0.1, ::1, "
                                  + "0.0.0.0) or a name.")
        }
        // Anyone who can reach a proxy can make requests from this machine, to its own loopback services too.
        guard IPAddress.isLoopback(host: host) || proxyAuth else {
            throw ValidationError("--host \(host) would let other machines send requests from this one through the proxy; add "
                                  + "--proxy-auth to ask them for a password, or keep loopback (127.0.0.1, ::1, localhost).")
        }
        // A `*` only as the whole pattern or its first label of a name, or a name, or an address (IPv6 bracketed or not):
        // anything else (a space, a port, a `*` further in, `*.` before an address) would match nothing, silently.
        for pattern in interceptedHosts + ignoredHosts where pattern != "*" {
            let wildcard = pattern.hasPrefix("*.")
            let host = wildcard ? String(pattern.dropFirst(2)) : pattern
            let isAddress = IPAddress(literal: host) != nil && (!host.contains(":") || !host.contains("%"))
            guard !host.isEmpty, !host.hasPrefix("."),
                  wildcard ? ListenerPolicy.isValidName(host) && !isAddress : ListenerPolicy.isValidName(host) || isAddress else {
                throw ValidationError("\(pattern.isEmpty ? "An empty pattern" : pattern) is not a host pattern (example.com, *.example.com, *).")
            }
        }
        if ignoredHosts.contains("*"), !interceptedHosts.isEmpty {
            throw ValidationError("--ignore '*' tunnels every host unread, so --intercept \(interceptedHosts[0]) would read none: "
                                  + "leave out one or the other.")
        }
        for file in upstreamCAs {
            if let problem = TransportConfiguration.trustRootProblem(atPath: file) { throw ValidationError("--upstream-ca \(problem).") }
        }
        let ports = try reverseRoutes().map(\.port)
        for port in ports where port != 0 && (ports.filter { $0 == port }.count > 1 || port == self.port || port == consolePort) {
            throw ValidationError("--reverse port \(port) is used twice.")
        }
    }

    /// The `--reverse URL@PORT` routes; throws saying what is wrong with one.
    func reverseRoutes() throws -> [(url: URL, port: Int)] {
        try reverse.map { written in
            // Named in every refusal without a user's name and password (`user:password@` before the host), which may hold a
            // secret: the route's last @ ends its URL, and one before it, in the authority, ends the user information.
            var text = written
            if let scheme = text.range(of: "://"), let last = text.lastIndex(of: "@"), last > scheme.upperBound {
                let authorityEnd = text[scheme.upperBound..<last].firstIndex(of: "/") ?? last
                if let userEnd = text[scheme.upperBound..<authorityEnd].lastIndex(of: "@") {
                    text.removeSubrange(scheme.upperBound...userEnd)
                }
            }
            if let at = text.lastIndex(of: "@"), let port = Int(text[text.index(after: at)...]), !(0...65_535).contains(port) {
                throw ValidationError("--reverse \(text): the port after @ must be between 0 and 65535 (got \(port)); 0 picks a free one.")
            }
            guard let at = text.lastIndex(of: "@"), let port = Int(text[text.index(after: at)...]), (0...65_535).contains(port),
                  let url = URL(string: String(written[..<(written.lastIndex(of: "@") ?? written.endIndex)])), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  url.host?.isEmpty == false, url.query == nil, url.fragment == nil else {
                throw ValidationError("--reverse \(text) is not URL@PORT (http://localhost:3000/api@9000: the upstream, then the "
                                      + "local port to listen on).")
            }
            // A password here would be printed at start and shown on the console's proxy page; the app's own Authorization
            // field reaches the upstream anyway. The URL is named without its user information, which may hold a secret.
            guard url.user(percentEncoded: true) == nil, url.password(percentEncoded: true) == nil else {
                let shown = URLComponents(url: url, resolvingAgainstBaseURL: false).map { components in
                    var bare = components
                    bare.user = nil
                    bare.password = nil
                    return bare.string ?? ""
                } ?? ""
                throw ValidationError("--reverse \(shown)@\(port) carries a user name or password in its URL (user:password@host), "
                                      + "which Kiosk would print; give the URL without them (the app's own Authorization field "
                                      + "reaches the upstream).")
            }
            // Its own port on this machine: every request would come back to it.
            let upstreamPort = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
            if port != 0, upstreamPort == port, IPAddress.isLoopback(host: url.host(percentEncoded: false) ?? "") {
                throw ValidationError("--reverse \(text): the upstream is the listener itself (port \(port) on this machine), so every "
                                      + "request would come back to it; give the app's own address before the @.")
            }
            return (url, port)
        }
    }

    func run() async throws {
        try await reportingErrors {
            // A port another program holds is said before anything starts: the console would otherwise say it listens,
            // then stop again noisily when the proxy's own listener cannot bind.
            let localHost = IPAddress.isLoopback(host: host) ? host : "127.0.0.1"
            try ListenFailure.refuseTaken([.init(option: "--port", host: host, port: port),
                                           .init(option: "--console-port", host: localHost, port: consolePort)]
                                          + reverseRoutes().map { .init(option: "--reverse", host: localHost, port: $0.port) })
            let (authority, directory) = try proxyAuthority(global)
            var credentials: ProxyCredentials?
            if proxyAuth {
                let (made, newPassword) = try ProxyCredentials.inDirectory(directory)
                credentials = made
                // Printed on a terminal only, as serve's pairing code: a service manager's journal or a container's log
                // would keep a password that does not expire.
                if let newPassword, Output.isTerminal {
                    Output.human("Proxy password, shown this once (user \(ProxyCredentials.user)): \(newPassword)\n"
                                 + "  Clients: http://\(ProxyCredentials.user):\(newPassword)@HOST:PORT as their proxy; "
                                 + "`kiosk proxy password` makes a new one.")
                } else if newPassword != nil {
                    Output.human("Proxy password: made, and not printed (this output is not a terminal, and a log would keep it). "
                                 + "Run `kiosk proxy password` in a terminal for one, then start the proxy again.")
                }
            }
            let roots = upstreamCAs.map { URL(fileURLWithPath: $0).path }
            let verifies = !insecureUpstream
            if !verifies {
                printError("warning: --insecure-upstream: upstream HTTPS certificates are NOT checked. Anyone between Kiosk and an "
                               + "upstream can read and change the exchanges; each one is marked in the log, and no HTTPS answer is kept for offline. Use --upstream-ca FILE "
                               + "to trust a test server's CA instead.")
            }
            let runtime = try await Runtime.start(global, pausesAtBreakpoints: true) {
                $0.proxyTransport.additionalTrustRoots = roots
                $0.proxyTransport.verifiesCertificates = verifies
                var cacheConfiguration = ProxyCacheConfiguration()
                cacheConfiguration.settings = ProxyCacheSettings(mode: cache, offline: offline)
                cacheConfiguration.maxBytes = cacheSize * 1_000_000
                cacheConfiguration.fallbackAfter = .milliseconds(Int(fallbackAfter * 1000))
                $0.proxyCache = cacheConfiguration
            }
            // How the cache answers, said once: a mode chosen days ago in a script is easy to forget.
            // (A cache that could not be opened, said in the warning above, answers nothing this run: said so, not the mode.)
            let cacheOpen = runtime.kiosk.isProxyCacheOpen
            if offline {
                Output.human(cacheOpen ? "Offline: no upstream is asked; stored answers are given, anything else is a 504."
                             : "Offline: no upstream is asked, and with no cache open this run, every request is a 504.")
            } else if !cacheOpen && cache != .off {
                Output.human("Cache: none this run — it could not be opened (above): nothing is stored or given from it.")
            } else {
                let mode = switch cache {
                case .fallback: "Cache: fallback — every request goes upstream; a stored answer stands in when the upstream fails."
                case .http: "Cache: http — fresh stored answers are given without asking the upstream (RFC 9111), stale ones revalidated."
                case .off: "Cache: off — nothing is stored or given from the cache."
                }
                Output.human(mode)
            }
            // Each app's connection costs two open files; the budget keeps the process from running out (see ConnectionBudget).
            let fileLimit = OpenFileLimit.raise()
            let connections = ConnectionBudget(maximum: ConnectionBudget.maximum(forOpenFileLimit: fileLimit)) { most in
                printError("note: the proxy holds its most connections at once, \(most) (from its open-file limit, \(fileLimit)); "
                           + "more wait until some close. Raise the hard limit (ulimit -Hn) to carry more.")
            }
            // A limit this low (a container's, an old system's) is worth a line at start: it caps the app's connections.
            if fileLimit < 4096 {
                Output.human("Open-file limit \(fileLimit) (ulimit -n, its hard limit too): the proxy holds \(connections.maximum) connections "
                             + "at once, more wait. Raise the hard limit (ulimit -Hn, LimitNOFILE in a systemd unit) to carry more.")
            }
            let kiosk = runtime.kiosk
            let heldBodies = kiosk.configuration.proxyTransport.heldBodies
            heldBodies?.onSpent { capacity in
                printError("note: the proxy holds \(capacity >> 20) MB of bodies in memory, its most; until some are freed, more "
                           + "stream on without being held (not stored in the cache, logged with their first MB).")
            }
            let host = host
            let shownHost = host.contains(":") ? "[\(host)]" : host
            // Only the proxy itself faces other machines (behind its password); the console and reverse listeners,
            // which ask for none, stay on this machine (`localHost`).
            let shownLocalHost = localHost.contains(":") ? "[\(localHost)]" : localHost
            let consolePorts = ListenerPorts()
            // The console's few browser tabs need few connections; the files are the proxy's budget (its reserve covers these).
            // KIOSK_DEBUG_TOKEN locks this console as it locks serve's: on a shared machine the apps' traffic is no
            // one else's to read.
            var consoleConfiguration = WebConfiguration(host: localHost, port: consolePort, debugToken: WebConfiguration.environmentDebugToken)
            consoleConfiguration.maximumConnections = 64
            let console = try buildApplication(kiosk: kiosk, configuration: consoleConfiguration,
                                               features: { [Console($0)] }) { bound in
                consolePorts.add(bound)
                Output.human("Console on http://\(shownLocalHost):\(bound)/debug")
                fflush(nil)
            }
            let meter = ProxyMeter()
            let listeners = Mutex<[ProxyOverview.Listener]>([])
            var configuration = ProxyConfiguration(host: host, port: port, ownPorts: { consolePorts.all })
            configuration.meter = meter
            configuration.connections = connections
            configuration.heldBodies = heldBodies
            configuration.exchangesInFlight = kiosk.exchangesInFlight
            configuration.holdSwitch = { await kiosk.holdSwitch($0) }
            // Ctrl-C gives exchanges in flight 5 s, then every listener closes what is still open at once: an endless
            // event stream, or an upstream that never answers, would otherwise keep the proxy from ever stopping.
            // Pauses at breakpoints end unchanged at once: their apps are answered within the 5 s, not cut off after them.
            let breakpoints = kiosk.debugger.breakpoints
            let stop = StopDeadline(grace: Runtime.stopGrace) { breakpoints.releaseAll() }
            configuration.stop = stop
            configuration.authority = authority
            configuration.interceptedHosts = interceptedHosts
            configuration.ignoredHosts = ignoredHosts
            configuration.upstreamTrustRoots = roots
            configuration.verifiesUpstream = verifies
            configuration.connectTimeout = kiosk.configuration.proxyTransport.connectTimeout
            configuration.credentials = credentials
            let printsEnvLine = credentials == nil
            let dataDir = global.openedDataDir(kiosk)
            Output.human("HTTPS is read with Kiosk's CA (SHA-256 \(authority.fingerprint.prefix(23))…); `kiosk proxy ca` prints it "
                         + "for the app to trust.")
            // Its leaves end with it: said while there is time to make a new one and trust it.
            let left = authority.expires.timeIntervalSinceNow
            if left < 30 * 86_400 {
                let day = authority.expires.formatted(Date.ISO8601FormatStyle().year().month().day())
                printError("warning: Kiosk's CA expires on \(day) (in \(max(0, Int(left / 86_400))) days): apps will refuse its certificates then. "
                               + "Delete \(ProxyAuthority.certificateFileName) and \(ProxyAuthority.keyFileName) in the data folder to make a new one, "
                               + "and trust that instead.")
            }
            // A shell that ran `eval "$(kiosk proxy env)"` points these at the proxy itself: apps' requests never take them.
            let environment = ProcessInfo.processInfo.environment
            if let name = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"].first(where: { !(environment[$0] ?? "").isEmpty }) {
                Output.human("Note: \(name) is set; apps' requests go to their upstreams directly, not through it (it is for Kiosk's own catalogs).")
            }
            let proxy = ProxyServer(configuration: configuration, forward: { try await kiosk.forward($0) }, vet: { try await kiosk.vetProxied($0, forNetwork: $1) },
                                    onTunnel: { kiosk.recordTunnel($0) },
                                    onCutShort: { kiosk.recordCutShort($0, error: $1, after: $2) }) { bound in
                consolePorts.add(bound)
                listeners.withLock { $0.insert(ProxyOverview.Listener(kind: "forward", address: "\(shownHost):\(bound)"), at: 0) }
                Output.human("Kiosk proxy on http://\(shownHost):\(bound)/  (HTTP_PROXY=http://\(shownHost):\(bound); Ctrl-C to stop)")
                // (Not for a proxy that asks for its password, which HTTP_PROXY as proxy env writes it does not carry: the
                // line would give 407s.)
                if printsEnvLine { Output.human("A shell's programs through it: " + envCommand(port: bound, dataDir: dataDir)) }
                fflush(nil)
            }
            let reverseServers: [any Service] = try reverseRoutes().map { route in
                // Its own port (the loop guard's) and the forward listener's and console's are Kiosk itself; another reverse
                // listener is an app's upstream like any other (a chain of them is followed; a cycle is caught by its Via).
                var reverse = ProxyConfiguration(host: localHost, port: route.port, ownPorts: { consolePorts.all })
                reverse.reverseTo = route.url
                reverse.exchangesInFlight = kiosk.exchangesInFlight
                reverse.holdSwitch = { await kiosk.holdSwitch($0) }
                reverse.upstreamTrustRoots = roots
                reverse.verifiesUpstream = verifies
                reverse.connectTimeout = kiosk.configuration.proxyTransport.connectTimeout
                reverse.meter = meter
                reverse.connections = connections
                reverse.heldBodies = heldBodies
                reverse.stop = stop
                // Its WebSocket and other protocol switches are logged as the forward listener's are.
                return ProxyServer(configuration: reverse, forward: { try await kiosk.forward($0) }, vet: { try await kiosk.vetProxied($0, forNetwork: $1) },
                                   onTunnel: { kiosk.recordTunnel($0) }, onCutShort: { kiosk.recordCutShort($0, error: $1, after: $2) },
                                   onBound: { bound in
                    listeners.withLock { $0.append(ProxyOverview.Listener(kind: "reverse", address: "\(shownLocalHost):\(bound)",
                                                                           upstream: route.url.absoluteString)) }
                    Output.human("Reverse proxy on http://\(shownLocalHost):\(bound)/ → \(route.url.absoluteString)")
                    fflush(nil)
                })
            }
            let startedAt = kiosk.now()
            let dataDirectoryArgument = dataDir.map(Output.shellQuoted)
            let intercepted = interceptedHosts, ignored = ignoredHosts, asksPassword = credentials != nil
            kiosk.attachProxy {
                var overview = ProxyOverview(listeners: listeners.withLock { $0 }, startedAt: startedAt, certificatePEM: authority.certificatePEM,
                                             fingerprint: authority.fingerprint, interceptedHosts: intercepted, ignoredHosts: ignored,
                                             asksPassword: asksPassword, counts: meter.snapshot)
                overview.verifiesUpstream = verifies
                overview.dataDirectoryArgument = dataDirectoryArgument
                return overview
            }
            var logger = Logger(label: "kiosk.proxy")
            logger.logLevel = .notice
            let group = ServiceGroup(services: [console, proxy] + reverseServers, gracefulShutdownSignals: [.sigterm, .sigint],
                                     logger: logger)
            do {
                try await group.run()
            } catch {
                await runtime.stop()
                let reverse = (try? reverseRoutes()) ?? []
                throw ListenFailure.error(error, listeners: [.init(option: "--port", host: host, port: port),
                                                             .init(option: "--console-port", host: localHost, port: consolePort)]
                                                             + reverse.map { .init(option: "--reverse", host: localHost, port: $0.port) })
            }
            await runtime.stop()
        }
    }
}

/// The ports of the process's listeners, known once each listens, for the proxies' loop check.
private final class ListenerPorts: Sendable {
    private let ports = Mutex<Set<Int>>([])
    func add(_ port: Int) { ports.withLock { _ = $0.insert(port) } }
    var all: Set<Int> { ports.withLock { $0 } }
}

struct ProxyPasswordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "password",
        abstract: "Make a new password for `kiosk proxy --proxy-auth` and print it once (the old one stops working).",
        discussion: """
            The password is 32 random bytes; the data directory keeps only a salted digest of it (kiosk-proxy-auth, \
            mode 0600), so it cannot be shown again. A running proxy keeps the password it started with until it is \
            restarted.
            """)

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await reportingErrors {
            let directory = try Runtime.configuration(global).dataDirectory
            let (_, password) = try ProxyCredentials.inDirectory(directory, renew: true)
            Output.human("Proxy password (user \(ProxyCredentials.user)): \(password ?? "")")
        }
    }
}

struct ProxyCACommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "Print the proxy's CA certificate (PEM), for the app to trust; made on first use, one per data directory.",
        discussion: """
            The certificate only: its key stays in the data directory, readable by you alone. Install the certificate \
            where the app looks for roots: curl --cacert, SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS (kiosk \
            proxy env sets them), a browser's or a phone's certificate settings.
            """)

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print it in DER (binary), as Android and Windows import it.") var der = false
    @Flag(help: "Print the certificate file's path instead.") var path = false

    func validate() throws {
        guard !(der && path) else { throw ValidationError("--der and --path cannot be combined.") }
    }

    func run() async throws {
        try await reportingErrors {
            let (authority, directory) = try proxyAuthority(global)
            if path {
                Output.human(directory.appendingPathComponent(ProxyAuthority.certificateFileName).path)
            } else if der {
                // Bytes, not text: on a terminal they would only scramble it (curl refuses the same).
                guard isatty(STDOUT_FILENO) == 0 else {
                    throw KioskError.invalidRequest("--der writes the certificate's binary DER bytes, not text: send them to a file "
                        + "(kiosk proxy ca --der > kiosk-ca.der) or a pipe")
                }
                try Output.writeBytes(authority.certificateDER)
            } else {
                try Output.writeBytes(Data(authority.certificatePEM.utf8))
            }
        }
    }
}

extension ProxyRunCommand {
    /// The `kiosk proxy env` line for this proxy as it listens on `port`: the options that differ from env's defaults (a
    /// port of 0 or another, another address, another data folder, `dataDir`, whose CA it trusts), so that the line works
    /// as printed.
    func envCommand(port: Int, dataDir: String?) -> String {
        var arguments = ["kiosk", "proxy", "env"]
        if let dataDir { arguments += ["--data-dir", Output.shellQuoted(dataDir)] }
        if host != "127.0.0.1" { arguments += ["--host", Output.shellQuoted(host)] }
        if port != 8888 { arguments += ["--port", String(port)] }
        return "eval \"$(" + arguments.joined(separator: " ") + ")\""
    }
}

struct ProxyEnvCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "env",
        abstract: "Print shell lines that send a program's HTTP(S) through the proxy and trust its CA: eval \"$(kiosk proxy env)\".",
        discussion: """
            Sets HTTP_PROXY and HTTPS_PROXY (both spellings); NO_PROXY (both spellings) to --no-proxy, loopback by \
            default, so that the console and local servers are reached directly (put a local server behind Kiosk with \
            `kiosk proxy --reverse`, or pass --no-proxy '' to send everything through the proxy); and the CA for \
            OpenSSL programs (SSL_CERT_FILE), curl (CURL_CA_BUNDLE) and Python requests (REQUESTS_CA_BUNDLE) — a bundle \
            of the system's roots and Kiosk's CA, written to the data directory, since those variables replace the \
            roots rather than add to them — and for Node (NODE_EXTRA_CA_CERTS, which adds). Java reads none of those: \
            JAVA_TOOL_OPTIONS gives it the proxy (http.proxyHost and the rest, http.nonProxyHosts from --no-proxy) and a \
            trust store of the same roots (kiosk-proxy-truststore.p12, PKCS #12 with no password), before any options \
            it had. wget built with GnuTLS (Debian's) reads no variable for its roots: the last line, a comment, says \
            what to pass it.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Host the proxy listens on.") var host = "127.0.0.1"
    @Option(help: "Port the proxy listens on.") var port = 8888
    @Option(name: .customLong("no-proxy"), help: "Hosts reached directly, not through the proxy (NO_PROXY): comma-separated; '' for none.")
    var noProxy = "localhost,127.0.0.1,::1"

    mutating func validate() throws {
        guard (1...65_535).contains(port) else { throw ValidationError("--port must be between 1 and 65535 (got \(port)).") }
        // `[::1]`, as a URL writes it, is the address ::1: bracketed again below where a URL needs it.
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        // A proxy listening on every address (`--host 0.0.0.0`) is reached on this machine at loopback: 0.0.0.0 is no
        // address a program can send to everywhere.
        if host == "0.0.0.0" { host = "127.0.0.1" } else if host == "::" { host = "::1" }
        if let problem = ListenerPolicy.listeningProblem(host) {
            throw ValidationError("--host \(host.isEmpty ? "\"\"" : host) is \(problem): give the address or name the proxy listens on "
                                  + "(127.0.0.1, ::1, a name).")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let (authority, directory) = try proxyAuthority(global)
            let certificate = directory.appendingPathComponent(ProxyAuthority.certificateFileName).path
            let bundle = directory.appendingPathComponent("kiosk-proxy-bundle.pem")
            let systemRoots = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"]
                .lazy.compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }.first ?? ""
            let separator = systemRoots.isEmpty || systemRoots.hasSuffix("\n") ? "" : "\n"
            // The roots every program pointed at it trusts: never writable by anyone else, whatever the umask.
            let roots = systemRoots + separator + authority.certificatePEM
            try SecretFile.write(roots, to: bundle, mode: 0o644)
            let trustStore = directory.appendingPathComponent(JavaTrustStore.fileName)
            try SecretFile.write(Data(try JavaTrustStore.pkcs12(pem: roots)), to: trustStore, mode: 0o644)
            let proxy = "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
            let lines = [("HTTP_PROXY", proxy), ("HTTPS_PROXY", proxy), ("http_proxy", proxy), ("https_proxy", proxy),
                         ("NO_PROXY", noProxy), ("no_proxy", noProxy), ("SSL_CERT_FILE", bundle.path), ("CURL_CA_BUNDLE", bundle.path), ("REQUESTS_CA_BUNDLE", bundle.path),
                         ("NODE_EXTRA_CA_CERTS", certificate)]
            // Java's options go before any the shell had, which come after and so win where they say otherwise.
            let java = "export JAVA_TOOL_OPTIONS=" + Output.shellQuoted(javaOptions(trustStore: trustStore.path))
                + #""${JAVA_TOOL_OPTIONS:+ $JAVA_TOOL_OPTIONS}""#
            let wget = "# wget built with GnuTLS reads none of these for its roots: wget --ca-certificate=" + Output.shellQuoted(bundle.path)
            Output.human((lines.map { "export \($0.0)=\(Output.shellQuoted($0.1))" } + [java, wget]).joined(separator: "\n"))
        }
    }
}

extension ProxyEnvCommand {
    /// The JVM's options for the proxy: `http(s).proxyHost` and `Port`, `http.nonProxyHosts` (which HTTPS reads too) from
    /// --no-proxy in Java's spelling (`|` between hosts, `*.example.com` for `.example.com`, an IPv6 address bracketed),
    /// and the trust store. A value with whitespace or a quote is quoted as the JVM reads JAVA_TOOL_OPTIONS: in double
    /// quotes, a double quote in it as `"'"'"` (the JVM joins quoted runs that touch, and either quote holds the other).
    func javaOptions(trustStore: String) -> String {
        let quoted = { (value: String) in
            value.contains(where: { $0.isWhitespace || $0 == "'" || $0 == "\"" })
                ? "\"" + value.replacingOccurrences(of: "\"", with: "\"'\"'\"") + "\"" : value
        }
        let hosts = noProxy.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map { host in
            host.hasPrefix(".") ? "*" + host : host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        }
        var options = ["-Dhttp.proxyHost=\(host)", "-Dhttp.proxyPort=\(port)", "-Dhttps.proxyHost=\(host)", "-Dhttps.proxyPort=\(port)"]
        // Given even when empty: without it, Java leaves out localhost and 127.* by a default of its own.
        options.append("-Dhttp.nonProxyHosts=" + hosts.joined(separator: "|"))
        options += ["-Djavax.net.ssl.trustStore=" + quoted(trustStore), "-Djavax.net.ssl.trustStoreType=PKCS12"]
        return options.joined(separator: " ")
    }
}

extension ProxyCacheMode: ExpressibleByArgument {}

struct ProxyCacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "What `kiosk proxy` keeps of apps' answers, to give them when the upstream fails or the proxy is offline.",
        discussion: """
            The proxy stores each answer HTTP lets a cache store (a GET's or a HEAD's, without no-store) in kiosk-proxy-cache.sqlite \
            (kiosk-demo-proxy-cache.sqlite on the demo data) in the data directory (readable by you alone: it holds the \
            bodies as they came), keyed by URL, the request's credentials and the headers its Vary names, at most \
            --cache-size MB, the least recently used going first; after an app's successful POST, PUT, DELETE or PATCH, \
            what is stored for its URL is given only once the upstream confirms it, or when the upstream cannot answer \
            (fallback, --offline); `list` says "changed since" of it. These commands work beside a running proxy.
            """,
        subcommands: [Stats.self, List.self, Clear.self, Import.self, Export.self],
        defaultSubcommand: Stats.self)

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "What is stored, per host: answers, size, hits, ages.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            try await reportingErrors {
                let (stats, bound) = try await Runtime.offline(global) { try ($0.proxyCacheStats(), $0.proxyCacheBound()) }
                if json {
                    print(try Output.json(stats))
                    return
                }
                guard !stats.isEmpty else {
                    Output.human("The proxy cache is empty.")
                    return
                }
                let now = Date()
                var lines = [Output.table(["HOST", "ANSWERS", "SIZE", "HITS", "NEWEST"], stats.map { host in
                    [host.host, String(host.entries), Render.bytes(host.bytes), String(host.hits), Age(now.timeIntervalSince(host.newest)).english]
                }, maxWidths: [60, 10, 10, 10, 20])]
                let total = stats.reduce(0) { $0 + $1.bytes }
                lines.append("\(Render.count(stats.reduce(0) { $0 + $1.entries }, "answer")), \(Render.bytes(total)) in all"
                             + (bound.map { " of at most \(Render.bytes($0)) (--cache-size)" } ?? ""))
                Output.human(lines.joined(separator: "\n"))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The stored answers, most recently used first.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Only this host's answers; with a port (localhost:3000), that port's alone.") var host: String?
        @Option(help: "At most this many.") var limit = 100
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard (1...100_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 100000.") }
            if host?.isEmpty == true { throw ValidationError("--host must not be empty.") }
        }

        func run() async throws {
            try await reportingErrors {
                let entries = try await Runtime.offline(global) { try $0.proxyCacheEntries(host: host, limit: limit) }
                if json {
                    print(try Output.json(entries.map(ProxyCacheEntryJSON.init)))
                    return
                }
                guard !entries.isEmpty else {
                    Output.human(host.map { "Nothing is stored for \($0)." } ?? "The proxy cache is empty.")
                    return
                }
                let now = Date()
                let toTellApart = entries.idsToTellApart
                // STORED: when the upstream gave the answer; "changed since": a request that changed it succeeded after.
                // Answers to one URL that vary (preflights from two origins) say what they were asked with, else alike.
                Output.human(Output.table(["ID", "STATUS", "SIZE", "HITS", "STORED", "REQUEST"], entries.map { entry in
                    [String(entry.id), String(entry.status), Render.bytes(entry.size), String(entry.hits),
                     Age(now.timeIntervalSince(entry.responseTime)).english + (entry.changedAt == nil ? "" : ", changed since"),
                     "\(entry.method) \(entry.url)" + (toTellApart.contains(entry.id) && !entry.varied.isEmpty
                        ? " (" + entry.varied.map { field in field.value.map { "\(field.name): \($0)" } ?? "no \(field.name)" }
                            .joined(separator: "; ") + ")" : "")]
                }, maxWidths: [10, 6, 10, 8, 30, 300]))
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every stored answer, or one host's.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Only this host's answers; with a port (localhost:3000), that port's alone.") var host: String?

        func validate() throws {
            if host?.isEmpty == true { throw ValidationError("--host must not be empty.") }
        }

        func run() async throws {
            try await reportingErrors {
                let removed = try await Runtime.offline(global) { try $0.clearProxyCache(host: host) }
                Output.human("Removed \(Render.count(removed, "stored answer"))\(host.map { " of \($0)" } ?? "").")
            }
        }
    }
}

extension ProxyCacheCommand {
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Seed the cache from a HAR archive, so a session recorded elsewhere replays through the proxy, offline too.",
            discussion: """
                Reads what `kiosk har import` reads (Chrome, Firefox, Safari, mitmproxy, Charles, Playwright, Kiosk...). Each GET \
                or HEAD answer HTTP lets a cache store is kept by its method and URL, as old as the archive says. One recorded \
                without credentials answers an app's request whatever cookie or token it sends (unless one of its own answers \
                is stored); one recorded with Authorization or Cookie answers those only, and one whose credentials the \
                archive hides (redacted) is left out. Variants of a URL (its Vary) are kept apart: a request that matches \
                one gets it, any other the newest. The cache's bound (the proxy's --cache-size) holds. A malformed archive \
                stores nothing and says where it is wrong.

                Example: kiosk proxy cache import session.har && kiosk proxy --offline
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The archive (`-` for standard input).") var file: String

        func validate() throws {
            guard !file.isEmpty else { throw ValidationError("Give the archive to import.") }
        }

        func run() async throws {
            try await reportingErrors {
                let name = file == "-" ? "standard input" : file
                let result: ProxyCacheImport
                do {
                    // On a data folder not made yet, the archive is read first: one refused leaves no new folder behind.
                    if try Runtime.makesDataDirectory(global) { try Kiosk.checkArchive(atPath: file) }
                    result = try await Runtime.offline(global, creating: true) { try $0.importIntoProxyCache(atPath: file) }
                } catch let error as HAR.ImportError {
                    throw KioskError.invalidRequest("\(name): \(error.message) Nothing was stored.")
                }
                var notes: [String] = []
                if result.notRead > 0 { notes.append("\(result.notRead) not a GET, a HEAD or a CORS preflight") }
                if result.madeByDebugger > 0 {
                    notes.append("\(result.madeByDebugger) made by Kiosk's debugger (a mock's answer or an edit), not the upstream")
                }
                if result.noStore > 0 { notes.append("\(result.noStore) whose answer or request says no-store") }
                if result.notCacheable > 0 {
                    notes.append("\(result.notCacheable) whose answer a cache may not keep (a status such as 500 or 302 with no lifetime given, or Vary: *)")
                }
                if result.tooLarge > 0 {
                    notes.append("\(result.tooLarge) each larger than a tenth of the cache (\(Render.bytes(result.maxBytes)), its --cache-size)")
                }
                if result.alreadyHeld > 0 { notes.append("\(result.alreadyHeld) the cache holds already, as the proxy stored them") }
                if result.newerHeld > 0 { notes.append("\(result.newerHeld) older than the answer stored for the same request, which stays") }
                if result.hiddenCredentials > 0 {
                    notes.append("\(result.hiddenCredentials) made with credentials the archive hides (whose answers they were cannot be told)")
                }
                if !result.skippedDescription.isEmpty { notes.append(result.skippedDescription) }
                Output.human("Stored \(Render.count(result.stored, "answer")) of \(result.entries) entr\(result.entries == 1 ? "y" : "ies")"
                             + (notes.isEmpty ? "." : "; left out: " + notes.joined(separator: ", ") + ".")
                             + (result.forCredentials > 0 ? " \(result.forCredentials) of them answer only a request sending the credentials "
                                + "(Authorization, Cookie) recorded with them." : "")
                             + (result.pushedOut > 0 ? " \(result.pushedOut) of them no longer fit: the cache keeps \(Render.bytes(result.maxBytes)) "
                                + "(the proxy's --cache-size), the least recently used going first." : "")
                             + (HAR.Import.inUTF8InsteadDescription(result.inUTF8Instead).map { " " + $0 } ?? ""))
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the stored answers to a HAR archive, redacted as every export is (credentials, cookies, keys).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The file to write (replaced if it exists; `-` for standard output).") var file: String
        @Option(help: "Only this host's answers; with a port (localhost:3000), that port's alone.") var host: String?

        func validate() throws {
            guard !file.isEmpty else { throw ValidationError("Give a file name to write the archive to.") }
            if host?.isEmpty == true { throw ValidationError("--host must not be empty.") }
        }

        func run() async throws {
            try await reportingErrors {
                let (toFile, count) = try await Runtime.offline(global) { kiosk in
                    let archive = try kiosk.proxyCacheArchive(host: host)
                    return (try Output.writeExport(archive, to: file), archive.count)
                }
                guard toFile else { return }
                printError("Wrote \(Render.count(count, "stored answer"))\(host.map { " of \($0)" } ?? "") to \(file).")
            }
        }
    }
}

/// A stored answer as `kiosk proxy cache list --json` prints it (without its body).
private struct ProxyCacheEntryJSON: Encodable {
    let id: Int64
    let method: String
    let url: String
    /// The host, with its port when the URL names one (as `proxy cache stats` says it).
    let host: String
    let status: Int
    let size: Int
    let hits: Int
    let storedAt: Date
    let lastUsed: Date
    /// When a request that changed the URL succeeded after the answer was stored (absent: none did).
    let changedAt: Date?
    /// The request fields the answer varies on, with the values it was asked with (a null value: without the field).
    let varied: [ProxyCacheEntry.VariedField]

    init(_ entry: ProxyCacheEntry) {
        id = entry.id
        method = entry.method
        url = entry.url
        host = entry.authority
        status = entry.status
        size = entry.size
        hits = entry.hits
        storedAt = entry.responseTime
        lastUsed = entry.lastUsed
        changedAt = entry.changedAt
        varied = entry.varied
    }
}
