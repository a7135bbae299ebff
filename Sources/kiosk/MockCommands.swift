import ArgumentParser
import Foundation
import KioskApp
import KioskCore
import KioskDebugger

/// `kiosk mock`: the network debugger's "map local" rules.
struct MockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock", abstract: "Answer matching requests with a fixed response, without the upstream.",
        subcommands: [List.self, Add.self, Remove.self, Enable.self, Disable.self])

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
                    }, maxWidths: [5, 3, 6, 6, 6, 8, 100]))
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
        @Option(name: .customLong("header"), help: "A response header, \"Name: value\" (repeatable).") var headers: [String] = []
        @Option(name: .customLong("body-file"), help: "A file holding the response body.") var bodyFile: String?
        @Option(help: "The response body as text.") var body: String?

        func validate() throws {
            guard (100...599).contains(status) else { throw ValidationError("--status must be between 100 and 599.") }
            try refuseEmpty(["--body-file": bodyFile])
            guard body == nil || bodyFile == nil else { throw ValidationError("Give --body or --body-file, not both.") }
            for header in headers where !header.contains(":") {
                throw ValidationError("--header must look like \"Name: value\" (got \(header)).")
            }
        }

        func run() async throws {
            try await reportingErrors {
                var data = Data(body?.utf8 ?? "".utf8)
                if let bodyFile {
                    do { data = try Data(contentsOf: URL(fileURLWithPath: bodyFile)) } catch {
                        throw KioskError.invalidRequest("Cannot read \(bodyFile): \(KioskError.fileReason(error, path: bodyFile))")
                    }
                }
                let fields = headers.map { header -> RequestRecord.HeaderField in
                    let parts = header.split(separator: ":", maxSplits: 1)
                    return RequestRecord.HeaderField(name: parts[0].trimmingCharacters(in: .whitespaces),
                                                     value: parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
                }
                let rule = MockRule(method: method, urlPattern: url, status: status, headers: fields, body: data)
                let added = try await Runtime.offline(global, creating: true) { try $0.debugger.mocks.add([rule]) }
                Output.human("Added mock rule \(added[0].id): \(rule.method) \(rule.urlPattern) -> \(rule.status)")
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
