import ArgumentParser
import Foundation
import KioskApp
import KioskCore
import KioskDebugger

/// `kiosk har`: the request log as an HTTP Archive.
struct HARCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "har", abstract: "Export the request log as an HTTP Archive (HAR 1.2), redacted, or import one as mock rules.",
        subcommands: [Export.self, Import.self])

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn an archive (from Kiosk, a browser, mitmproxy, Charles, Fiddler, Playwright...) into mock rules, to replay it offline.",
            discussion: """
                Every entry answering an http(s) request becomes a rule (Playwright's content._file bodies are \
                read from the archive's folder); when a method and URL come again the last answer wins (a 304 or a \
                429/5xx does not replace a full one). The summary counts the entries \
                skipped and why. A malformed archive is refused, naming the JSON path of the problem, and \
                imports nothing.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The .har file (`-` for standard input), at most 256 MiB.") var file: String
        @Flag(help: "Print the summary as JSON.") var json = false

        func validate() throws {
            guard !file.isEmpty else { throw ValidationError("Give the .har file to import (or - for standard input).") }
        }

        func run() async throws {
            try await reportingErrors {
                let name = file == "-" ? "standard input" : file
                let result: HAR.Import
                do {
                    // On a data folder not made yet, the archive is read first: one refused leaves no new folder behind.
                    if try Runtime.makesDataDirectory(global) { try Kiosk.checkArchive(atPath: file) }
                    result = try await Runtime.offline(global, creating: true) { try $0.debugger.importHAR(atPath: file) }
                } catch let error as HAR.ImportError {
                    throw KioskError.invalidRequest("\(name): \(error.message) Nothing was imported.")
                }
                try Output.emit(HARImportJSON(file: name, result), json: json) { Self.summary(result, from: name) }
            }
        }

        /// "Imported 12 mock rules from s.har; skipped 3 of its 15 entries: 2 without a response, 1 data: URL."
        static func summary(_ result: HAR.Import, from name: String) -> String {
            let count = result.rules.count
            var text = "Imported \(count) mock rule\(count == 1 ? "" : "s") from \(name)"
            if result.entries == 0 {
                text += ": it has no entries."
            } else if result.skippedCount > 0 {
                text += "; skipped \(result.skippedCount) of its \(result.entries) entries: \(result.skippedDescription)."
            } else {
                text += "."
            }
            if let note = HAR.Import.inUTF8InsteadDescription(result.inUTF8Instead) { text += " " + note }
            if let note = HAR.Import.credentialedDescription(result.credentialed) { text += " " + note }
            return count > 0 ? text + " `kiosk mock list` shows them." : text
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the whole log, or the requests matching the filters, to a .har file.",
            discussion: "--filter takes the debugger's filter language, as `kiosk log --filter` and the console's box do "
                + "(`kiosk help log list` says it whole): 'status:5xx host:api.example.test slow:>1s'.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The file to write (replaced if it exists; `-` for standard output).") var file: String
        // Taken whatever it starts with: a negated term (`-source:nyt`) is a filter, not an option.
        @Option(name: .customLong("filter"), parsing: .unconditionalSingleValue, help: "A filter in the debugger's language, as kiosk log's. Given again, both apply.") var filters: [String] = []
        /// The --filter options as one filter: each term of each applies, as terms of one filter do.
        var filter: String? { filters.isEmpty ? nil : filters.joined(separator: " ") }
        @Option(help: "Only this source.") var source: SourceID?
        @Option(help: "Full-text search over URLs and bodies.") var search: String?
        @Option(help: "Only this status class: 2xx, 3xx, 4xx, 5xx, or error (no response).") var status: String?
        @Option(help: "Only this cache decision.") var decision: String?
        @Option(help: "At most this many requests, newest first.") var limit = 100_000

        func validate() throws {
            guard !file.isEmpty else { throw ValidationError("Give a file name to write the archive to.") }
            try refuseEmpty(["--search": search, "--filter": filter])
            guard limit >= 1 else { throw ValidationError("--limit must be 1 or more.") }
            if let status, StatusClass(status) == nil {
                throw ValidationError("--status must be 2xx, 3xx, 4xx, 5xx or error (got \(status)).")
            }
            if let decision, CacheDecision(rawValue: decision) == nil {
                throw ValidationError("--decision must be one of \(CacheDecision.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
        }

        func run() async throws {
            try await reportingErrors {
                let filter = try LogCommand.adding(filter, to: RequestFilter(text: search, source: source, statusClass: status.flatMap(StatusClass.init),
                                                                             decision: decision.flatMap(CacheDecision.init(rawValue:))))
                let (toFile, count, leftOut) = try await Runtime.offline(global) { kiosk in
                    let archive = try kiosk.debugger.harArchive(matching: filter, maximum: limit)
                    return (try Output.writeExport(archive, to: file), archive.count, archive.leftOut)
                }
                let leftOutSaid = leftOut == 0 ? "" : "\(Render.count(leftOut, "answer")) Kiosk gave from its store, with no exchange, left out."
                // On standard output the archive is the output: what it leaves out is said on standard error alone, and only
                // then (an archive emptier than the records counted would otherwise be a mystery).
                guard toFile else {
                    if !leftOutSaid.isEmpty { printError("The archive holds \(Render.count(count, "request")); " + leftOutSaid) }
                    return
                }
                printError("Wrote \(count) request\(count == 1 ? "" : "s") to \(file)." + (leftOutSaid.isEmpty ? "" : " " + leftOutSaid))
            }
        }
    }
}

/// `kiosk har import --json`: what was imported, and how many entries were skipped, by reason.
struct HARImportJSON: Encodable {
    let file: String
    let entries: Int
    let imported: Int
    let ruleIDs: [Int]
    let skipped: [String: Int]
    /// How many imported answers' text is replayed in UTF-8, labelled so, where its label named another charset.
    let inUTF8Instead: Int
    /// How many imported rules answer what was recorded for a request with credentials (they answer whoever asks).
    let credentialed: Int

    init(file: String, _ result: HAR.Import) {
        self.file = file
        entries = result.entries
        imported = result.rules.count
        ruleIDs = result.rules.map(\.id)
        skipped = Dictionary(uniqueKeysWithValues: result.skipped.map { ($0.key.rawValue, $0.value) })
        inUTF8Instead = result.inUTF8Instead
        credentialed = result.credentialed
    }
}
