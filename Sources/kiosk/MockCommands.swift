import ArgumentParser
import Foundation
import KioskApp
import KioskCore
import KioskDebugger

/// `kiosk mock`: the network debugger's "map local" rules.
struct MockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock", abstract: "Answer matching requests with a fixed response, without the upstream.",
        subcommands: [List.self, Add.self, Edit.self, Remove.self, Enable.self, Disable.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The rules, in the order they are tried.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON (bodies as text when UTF-8).") var json = false

        func run() async throws {
            try await reportingErrors {
                let rules = try await Runtime.offline(global) { try $0.debugger.mocks.all() }
                if json {
                    print(try Output.json(rules.map(MockJSON.init)))
                } else if rules.isEmpty {
                    Output.human("No mock rules. Add one with `kiosk mock add` or import an archive with `kiosk har import`.")
                } else {
                    Output.human(Output.table(["ID", "ON", "METHOD", "STATUS", "HITS", "BODY", "URL"], rules.map { rule in
                        [String(rule.id), rule.isEnabled ? "yes" : "no", rule.method, String(rule.status), String(rule.hits),
                         Render.bytes(rule.body.count), rule.urlPattern]
                    }, maxWidths: [5, 3, 12, 6, 6, 10, 100]))
                }
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a rule (it replaces one with the same method and URL).")
        @OptionGroup var global: GlobalOptions
        @Option(help: "The URL, exact (secret query items ignored) or with * wildcards.") var url: String
        @Option(help: "The method to match, or * for any.") var method = "GET"
        @Option(help: "The status to answer.") var status = 200
        @OptionGroup var answer: MockAnswerOptions

        func validate() throws {
            guard HTTPSyntax.finalStatuses.contains(status) else { throw ValidationError(MockRule.statusProblem(status)) }
        }

        func run() async throws {
            try await reportingErrors {
                let rule = MockRule(method: method, urlPattern: url, status: status, headers: answer.fields, body: try answer.bodyData() ?? Data())
                let (replaced, added) = try await Runtime.offline(global, creating: true) { kiosk in
                    (try kiosk.debugger.mocks.replaced(by: rule), try kiosk.debugger.mocks.add([rule])[0])
                }
                // As kept: without the secret query items the URL was given with.
                let said = "\(added.id): \(added.method) \(added.urlPattern) -> \(added.status)"
                Output.human(replaced.map { "Replaced mock rule \($0.id) with mock rule \(said)" } ?? "Added mock rule \(said)")
            }
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give a rule another answer: what is not given stays (--header given replaces all its headers).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The rule's id, as `kiosk mock list` prints it.") var id: Int
        @Option(help: "The status to answer.") var status: Int?
        @OptionGroup var answer: MockAnswerOptions

        func validate() throws {
            if let status, !HTTPSyntax.finalStatuses.contains(status) { throw ValidationError(MockRule.statusProblem(status)) }
            guard status != nil || !answer.headers.isEmpty || answer.body != nil || answer.bodyFile != nil else {
                throw ValidationError("Say what to change: --status, --header, --body or --body-file.")
            }
        }

        func run() async throws {
            try await reportingErrors {
                let body = try answer.bodyData()
                let rule = try await Runtime.offline(global) { kiosk in
                    let mocks = kiosk.debugger.mocks
                    let rule = try mocks.rule(id: id)
                    return try mocks.update(id: id, status: status ?? rule.status, headers: answer.headers.isEmpty ? rule.headers : answer.fields,
                                            body: body ?? rule.body)
                }
                Output.human("Mock rule \(rule.id) now answers \(rule.method) \(rule.urlPattern) with \(rule.status), "
                             + "\(rule.headers.count) header\(rule.headers.count == 1 ? "" : "s") and \(Render.bytes(rule.body.count)).")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a rule.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The rule's id, as `kiosk mock list` prints it.") var id: Int

        func run() async throws {
            try await reportingErrors {
                try await Runtime.offline(global) { try $0.debugger.mocks.remove(id: id) }
                Output.human("Removed mock rule \(id).")
            }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn a rule on.")
        @OptionGroup var global: GlobalOptions
        @Argument var id: Int

        func run() async throws { try await MockCommand.setEnabled(true, id: id, global) }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn a rule off (kept, not tried).")
        @OptionGroup var global: GlobalOptions
        @Argument var id: Int

        func run() async throws { try await MockCommand.setEnabled(false, id: id, global) }
    }

    /// `mock enable` and `mock disable`.
    static func setEnabled(_ enabled: Bool, id: Int, _ global: GlobalOptions) async throws {
        try await reportingErrors {
            try await Runtime.offline(global) { try $0.debugger.mocks.setEnabled(enabled, id: id) }
            Output.human("Mock rule \(id) is \(enabled ? "on" : "off").")
        }
    }
}

/// A rule in `kiosk mock list --json`.
struct MockJSON: Encodable {
    let id: Int
    let method: String
    let url: String
    let status: Int
    let enabled: Bool
    let hits: Int
    let origin: String
    let headers: [RequestRecord.HeaderField]
    let body: BodyJSON

    init(_ rule: MockRule) {
        id = rule.id
        method = rule.method
        url = rule.urlPattern
        status = rule.status
        enabled = rule.isEnabled
        hits = rule.hits
        origin = rule.origin
        headers = rule.headers
        body = BodyJSON(CapturedBody(data: rule.body, originalSize: rule.body.count))
    }
}

/// A mock rule's answer as `mock add` and `mock edit` take it: its headers and its body, as text or from a file.
struct MockAnswerOptions: ParsableArguments {
    @Option(name: .customLong("header"), help: "A response header, \"Name: value\" (repeatable).") var headers: [String] = []
    @Option(name: .customLong("body-file"), help: "A file holding the response body.") var bodyFile: String?
    @Option(help: "The response body as text.") var body: String?

    func validate() throws {
        try refuseEmpty(["--body-file": bodyFile])
        guard body == nil || bodyFile == nil else { throw ValidationError("Give --body or --body-file, not both.") }
        for header in headers where !header.contains(":") {
            throw ValidationError("--header must look like \"Name: value\" (got \(header)).")
        }
    }

    /// The headers given, as fields.
    var fields: [RequestRecord.HeaderField] {
        headers.map { header in
            let parts = header.split(separator: ":", maxSplits: 1)
            return RequestRecord.HeaderField(name: parts[0].trimmingCharacters(in: .whitespaces),
                                             value: parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        }
    }

    /// The body given (the file's bytes, or the text in UTF-8); nil when neither was.
    func bodyData() throws -> Data? {
        if let bodyFile {
            do { return try Data(contentsOf: URL(fileURLWithPath: bodyFile)) } catch {
                throw KioskError.invalidRequest("Cannot read \(bodyFile): \(KioskError.fileReason(error, path: bodyFile))")
            }
        }
        return body.map { Data($0.utf8) }
    }
}
