public import ArgumentParser
import Foundation
import KioskApp
public import KioskCore
import KioskDebugger

/// `kiosk rule`: the network debugger's rewrite rules, which change answers without pausing.
struct RuleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rule", abstract: "Rewrite matching answers (status, headers, JSON Patch, latency) or fail them.",
        discussion: """
            Rules apply after a mock or the upstream answers, in list order, each seeing the one before's \
            result; the log records every rule that matched a request, and why one did not apply. A rule \
            that fails requests fails them before anything is sent.
            """,
        subcommands: [List.self, Show.self, Add.self, Edit.self, Enable.self, Disable.self, Remove.self, ResetHits.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The rules, in the order they apply.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            try await reportingErrors {
                let rules = try await Runtime.offline(global) { try $0.debugger.rules.all() }
                if json {
                    print(try Output.json(rules.map(RuleJSON.init)))
                } else if rules.isEmpty {
                    Output.human("No rewrite rules. Add one with `kiosk rule add`.")
                } else {
                    Output.human(Output.table(["ID", "ON", "HITS", "NAME", "MATCHES", "DOES"], rules.map { rule in
                        [String(rule.id), rule.isEnabled ? "yes" : "no", String(rule.hits), rule.displayName, rule.match.summary,
                         rule.actions.summary]
                    }, maxWidths: [5, 3, 6, 40, 60, 60]))
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One rule in full.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The rule's id, as `kiosk rule list` prints it.") var id: Int
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            try await reportingErrors {
                let rule = try await Runtime.offline(global) { try $0.debugger.rules.rule(id: id) }
                try Output.emit(RuleJSON(rule), json: json) { RuleCommand.detail(rule) }
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a rule at the end of the list.",
            discussion: """
                Example: kiosk rule add --endpoint rickandmorty.characters --status 503 --latency 800ms
                """)
        @OptionGroup var global: GlobalOptions
        @Option(help: "Start from a logged request: its endpoint, method and status.") var fromRequest: Int64?
        @OptionGroup var definition: RuleOptions
        @Flag(help: "Add it switched off.") var disabled = false

        func validate() throws { try definition.check() }

        func run() async throws {
            try await reportingErrors {
                let added = try await Runtime.offline(global, creating: true) { kiosk in
                    var rule = RewriteRule(match: RewriteRule.Match(), actions: RewriteRule.Actions())
                    if let fromRequest {
                        guard let record = try kiosk.debugger.record(id: fromRequest) else {
                            throw KioskError.notFound("request \(fromRequest) in the log (it may have been evicted)")
                        }
                        rule = kiosk.debugger.ruleDraft(from: record)
                    }
                    try definition.apply(to: &rule)
                    rule.isEnabled = !disabled
                    return try kiosk.debugger.rules.add(rule)
                }
                Output.human("Added rewrite rule \(added.id): \(added.displayName)")
            }
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a rule: the options given replace what the rule had; --clear removes a part.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The rule's id.") var id: Int
        @OptionGroup var definition: RuleOptions
        @Option(help: ArgumentHelp("A part to remove (repeatable).", valueName: RuleOptions.Part.allValueStrings.joined(separator: "|")))
        var clear: [RuleOptions.Part] = []

        func validate() throws {
            try definition.check()
            // Both would leave one of them unsaid: the part set was kept, and the --clear silently ignored.
            if let both = clear.first(where: definition.gives) {
                throw ValidationError("--clear \(both.rawValue) and the option that sets it were both given: give one.")
            }
        }

        func run() async throws {
            try await reportingErrors {
                let saved = try await Runtime.offline(global) { kiosk in
                    var rule = try kiosk.debugger.rules.rule(id: id)
                    for part in clear { part.clear(in: &rule) }
                    try definition.apply(to: &rule)
                    return try kiosk.debugger.rules.update(id: id, to: rule)
                }
                Output.human("Saved rewrite rule \(saved.id): \(saved.displayName)")
            }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn a rule on.")
        @OptionGroup var global: GlobalOptions
        @Argument var id: Int

        func run() async throws { try await RuleCommand.setEnabled(true, id: id, global) }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn a rule off (kept, not applied).")
        @OptionGroup var global: GlobalOptions
        @Argument var id: Int

        func run() async throws { try await RuleCommand.setEnabled(false, id: id, global) }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a rule.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The rule's id.") var id: Int

        func run() async throws {
            try await reportingErrors {
                try await Runtime.offline(global) { try $0.debugger.rules.remove(id: id) }
                Output.human("Removed rewrite rule \(id).")
            }
        }
    }

    struct ResetHits: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "reset-hits", abstract: "Set hit counts back to zero.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The rule's id; every rule when left out.") var id: Int?

        func run() async throws {
            try await reportingErrors {
                try await Runtime.offline(global) { try $0.debugger.rules.resetHits(id: id) }
                Output.human(id.map { "Rewrite rule \($0) has no hits." } ?? "Every rewrite rule has no hits.")
            }
        }
    }

    /// `rule enable` and `rule disable`.
    static func setEnabled(_ enabled: Bool, id: Int, _ global: GlobalOptions) async throws {
        try await reportingErrors {
            try await Runtime.offline(global) { try $0.debugger.rules.setEnabled(enabled, id: id) }
            Output.human("Rewrite rule \(id) is \(enabled ? "on" : "off").")
        }
    }

    /// `rule show`'s text.
    static func detail(_ rule: RewriteRule) -> String {
        var lines = [
            "#\(rule.id)  \(rule.displayName)  (\(rule.isEnabled ? "on" : "off"), \(rule.hits) hit\(rule.hits == 1 ? "" : "s"))",
            "Origin:    \(rule.origin); created \(rule.createdAt.formatted(.iso8601)), changed \(rule.updatedAt.formatted(.iso8601))",
            "Matches:   \(rule.match.summary)",
        ]
        let actions = rule.actions
        if let status = actions.status { lines.append("Status:    \(status)") }
        for header in actions.setHeaders { lines.append("Set:       \(header.name): \(header.value)") }
        for name in actions.removeHeaders { lines.append("Remove:    \(name)") }
        if let latency = actions.latencyMilliseconds { lines.append("Latency:   \(latency) ms") }
        if let failure = actions.failure { lines.append("Fails:     \(failure.rawValue) (\(failure.summary))") }
        if let patch = actions.patch { lines += ["JSON Patch:", patch] }
        return lines.joined(separator: "\n")
    }
}

/// The options that describe a rule, shared by `rule add` and `rule edit`: each one given replaces that
/// part of the rule.
struct RuleOptions: ParsableArguments {
    @Option(help: "A name for the rule.") var name: String?
    @Option(help: "The endpoint to match, as `kiosk breakpoint list` names it.") var endpoint: String?
    @Option(name: [.customLong("url-pattern"), .customLong("url")],
            help: "The URL to match: exact (secret query items ignored) or with * wildcards.") var urlPattern: String?
    @Option(help: "The method to match, or * for any.") var method: String?
    @Option(help: "The status to answer with.") var status: Int?
    @Option(name: .customLong("set-header"), help: "A header to set, \"Name: value\" (repeatable).") var setHeaders: [String] = []
    @Option(name: .customLong("remove-header"), help: "A header to remove (repeatable).") var removeHeaders: [String] = []
    @Option(help: "A file holding an RFC 6902 JSON Patch for the body, or - for standard input.") var patch: String?
    @Option(help: "An RFC 6902 JSON Patch for the body, as text.") var patchJSON: String?
    @Option(help: "Latency to add: 800ms, 1.5s or a number of milliseconds.") var latency: String?
    @Option(help: "Fail the request instead: timeout (after the request timeout, as a real one), offline, or reset (a proxied app's connection is reset).") var fail: RuleFailure?

    /// The parts `rule edit --clear` removes.
    enum Part: String, CaseIterable, ExpressibleByArgument {
        case endpoint, urlPattern = "url-pattern", status, setHeaders = "set-headers", removeHeaders = "remove-headers", patch,
             latency, fail

        /// Removes the part from `rule`.
        func clear(in rule: inout RewriteRule) {
            switch self {
            case .endpoint: rule.match.endpoint = nil
            case .urlPattern: rule.match.urlPattern = nil
            case .status: rule.actions.status = nil
            case .setHeaders: rule.actions.setHeaders = []
            case .removeHeaders: rule.actions.removeHeaders = []
            case .patch: rule.actions.patch = nil
            case .latency: rule.actions.latencyMilliseconds = nil
            case .fail: rule.actions.failure = nil
            }
        }
    }

    /// Whether an option setting `part` was given.
    func gives(_ part: Part) -> Bool {
        switch part {
        case .endpoint: endpoint != nil
        case .urlPattern: urlPattern != nil
        case .status: status != nil
        case .setHeaders: !setHeaders.isEmpty
        case .removeHeaders: !removeHeaders.isEmpty
        case .patch: patch != nil || patchJSON != nil
        case .latency: latency != nil
        case .fail: fail != nil
        }
    }

    /// The usage mistakes the parser can see; the rules check the rest when the rule is saved.
    func check() throws {
        try refuseEmpty(["--endpoint": endpoint, "--url-pattern": urlPattern, "--method": method, "--patch": patch])
        guard patch == nil || patchJSON == nil else { throw ValidationError("Give --patch or --patch-json, not both.") }
        for header in setHeaders where !header.contains(":") {
            throw ValidationError("--set-header must look like \"Name: value\" (got \(header)).")
        }
        if let latency, Self.milliseconds(latency) == nil {
            throw ValidationError("--latency must be like 800ms, 1.5s or 800 (milliseconds); got \(latency).")
        }
    }

    /// Writes the options given into `rule`.
    func apply(to rule: inout RewriteRule) throws {
        if let name { rule.name = name }
        if let endpoint { rule.match.endpoint = endpoint }
        if let urlPattern { rule.match.urlPattern = urlPattern }
        if let method { rule.match.method = method.uppercased() }
        if let status { rule.actions.status = status }
        if !setHeaders.isEmpty {
            rule.actions.setHeaders = setHeaders.map { header in
                let parts = header.split(separator: ":", maxSplits: 1)
                return RequestRecord.HeaderField(name: parts[0].trimmingCharacters(in: .whitespaces),
                                                 value: parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
            }
        }
        if !removeHeaders.isEmpty { rule.actions.removeHeaders = removeHeaders }
        if let patchJSON { rule.actions.patch = patchJSON }
        if let patch { rule.actions.patch = try Self.read(patch) }
        if let latency { rule.actions.latencyMilliseconds = Self.milliseconds(latency) }
        if let fail { rule.actions.failure = fail }
    }

    /// "800ms", "1.5s", "2 s" or "800" as milliseconds; nil for anything else.
    static func milliseconds(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        func number(_ text: Substring) -> Double? {
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value >= 0, value.isFinite else { return nil }
            return value
        }
        // A number too large for an Int is as far out of range as any past the limit, and said so (not a trap).
        func whole(_ value: Double) -> Int { Int(exactly: value.rounded()) ?? Int.max }
        if trimmed.hasSuffix("ms") { return number(trimmed.dropLast(2)).map(whole) }
        if trimmed.hasSuffix("s") { return number(trimmed.dropLast()).map { whole($0 * 1000) } }
        return number(Substring(trimmed)).map(whole)
    }

    /// The text of a patch file, or of standard input for `-`.
    private static func read(_ path: String) throws -> String {
        if path == "-" { return String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) }
        do {
            return String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        } catch {
            throw KioskError.invalidRequest("Cannot read \(path): \(KioskError.fileReason(error, path: path))")
        }
    }
}

extension RuleFailure: ExpressibleByArgument {}
