public import ArgumentParser
import Foundation
import KioskApp
import KioskCore
public import KioskDebugger

/// `kiosk breakpoint`: the debugger's switches per endpoint. Requests pause only in `kiosk serve`, whose
/// console (/debug/paused) decides them; other commands ignore the switches.
struct BreakpointCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "breakpoint", abstract: "Pause an endpoint's requests, responses or errors in kiosk serve's debugger.",
        subcommands: [List.self, Set.self, Remove.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every endpoint and its three switches.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON: [{endpoint, request, response, error}], each switch pause or ignore.") var json = false

        func run() async throws {
            try await reportingErrors {
                let (settings, names) = try await Runtime.offline(global) { kiosk in
                    (try kiosk.debugger.breakpoints.settings(), kiosk.debugger.endpoints.map(\.name))
                }
                // The catalogs' endpoints, then the apps' hosts and URL patterns that have a switch on.
                let others = settings.keys.filter { !names.contains($0) }.sorted()
                let rows = (names + others).map { BreakpointJSON(endpoint: $0, setting: settings[$0] ?? BreakpointSetting()) }
                if json {
                    print(try Output.json(rows))
                    return
                }
                Output.human(Output.table(["ENDPOINT", "REQUEST", "RESPONSE", "ERROR"], rows.map { row in
                    [row.endpoint, row.request.rawValue, row.response.rawValue, row.error.rawValue]
                }, maxWidths: [60, 8, 8, 8]))
            }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set an endpoint's switches (the ones not given stay as they are).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp("The endpoint, as `kiosk breakpoint list` names it; an app's host through kiosk proxy "
                                     + "(localhost:3000); or a URL pattern of its requests, `*` matching anything, the query "
                                     + "ignored unless the pattern has one (http://localhost:3000/api/users, https://*.example.com/v1/*).",
                                     valueName: "endpoint|host|url-pattern")) var endpoint: String
        @Option(help: "pause or ignore, before the request is sent.") var request: BreakpointMode?
        @Option(help: "pause or ignore, when the response arrives.") var response: BreakpointMode?
        @Option(help: "pause or ignore, when the request fails.") var error: BreakpointMode?

        func validate() throws {
            guard !endpoint.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("Give an endpoint's name (kiosk breakpoint list shows them), an app's host or a URL pattern.")
            }
            guard request != nil || response != nil || error != nil else {
                throw ValidationError("Give at least one of --request, --response, --error (pause or ignore).")
            }
        }

        func run() async throws {
            try await reportingErrors {
                let (setting, key) = try await Runtime.offline(global, creating: true) { kiosk in
                    guard kiosk.debugger.acceptsBreakpoints(on: endpoint) else {
                        if let problem = kiosk.debugger.breakpointPatternProblem(on: endpoint) {
                            throw KioskError.invalidRequest(problem.english)
                        }
                        let names = kiosk.debugger.endpoints.map(\.name)
                        // (Named without a query: what is no http(s) pattern has its key items left in by `keptKey`.)
                        let named = kiosk.debugger.breakpoints.keptKey(endpoint)
                        let shown = Breakpoints.isURLPattern(named) ? named : String(named.prefix { $0 != "?" && $0 != "#" })
                        throw KioskError.invalidRequest("There is no endpoint named \(shown); "
                                                        + "known: \(names.joined(separator: ", ")), "
                                                        + "or an app's host through kiosk proxy (api.example.com, localhost:3000), "
                                                        + "or a URL pattern (http://localhost:3000/api/*).")
                    }
                    var setting = kiosk.debugger.breakpoints.setting(for: endpoint)
                    if let request { setting.request = request }
                    if let response { setting.response = response }
                    if let error { setting.error = error }
                    try kiosk.debugger.breakpoints.set(setting, for: endpoint)
                    return (setting, kiosk.debugger.breakpoints.keptKey(endpoint))
                }
                Output.human("\(key): request \(setting.request.rawValue), response \(setting.response.rawValue), error \(setting.error.rawValue)")
            }
        }
    }
}

extension BreakpointCommand {
    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn every switch of an endpoint, host or URL pattern off (set --request --response --error ignore at once).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp("As `kiosk breakpoint set` takes it; `kiosk breakpoint list` shows those with a switch on.",
                                     valueName: "endpoint|host|url-pattern")) var endpoint: String

        func validate() throws {
            guard !endpoint.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("Give the endpoint, host or URL pattern whose breakpoints to remove (kiosk breakpoint list shows them).")
            }
        }

        func run() async throws {
            try await reportingErrors {
                let (had, key) = try await Runtime.offline(global) { kiosk in
                    let had = kiosk.debugger.breakpoints.setting(for: endpoint)
                    if !had.isOff { try kiosk.debugger.breakpoints.set(BreakpointSetting(), for: endpoint) }
                    return (had, kiosk.debugger.breakpoints.keptKey(endpoint))
                }
                // Nothing set there is no failure (the wanted state holds), but said, for a name mistyped.
                Output.human(had.isOff ? "\(key) had no breakpoint on; kiosk breakpoint list shows those that do."
                                       : "\(key): every breakpoint off.")
            }
        }
    }
}

extension BreakpointMode: ExpressibleByArgument {}

/// One row of `kiosk breakpoint list --json`: an endpoint, host or URL pattern and its three switches.
struct BreakpointJSON: Encodable {
    let endpoint: String
    let request: BreakpointMode
    let response: BreakpointMode
    let error: BreakpointMode

    init(endpoint: String, setting: BreakpointSetting) {
        self.endpoint = endpoint
        request = setting.request
        response = setting.response
        error = setting.error
    }
}
