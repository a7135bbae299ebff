import ArgumentParser
import Foundation
import KioskApp
import KioskCore
import KioskDebugger

/// `kiosk har`: the request log as an HTTP Archive.
struct HARCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "har", abstract: "Export the request log as an HTTP Archive (HAR 1.2), redacted.",
        subcommands: [Export.self, Import.self])

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn an archive (from Kiosk, Chrome, Firefox or mitmproxy) into mock rules, to replay it offline.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The .har file (`-` for standard input), at most 256 MiB.") var file: String

        func validate() throws {
            guard !file.isEmpty else { throw ValidationError("Give the .har file to import (or - for standard input).") }
        }

        func run() async throws {
            try await reportingErrors {
                let name = file == "-" ? "standard input" : file
                let rules: [MockRule]
                do {
                    let data = try HAR.readArchive(atPath: file)
                    let origin = file == "-" ? name : URL(fileURLWithPath: file).lastPathComponent
                    rules = try HAR.mockRules(fromArchive: data, origin: "har: " + origin)
                } catch let error as HAR.ImportError {
                    throw KioskError.invalidRequest("\(name): \(error.message) Nothing was imported.")
                }
                let added = try await Runtime.offline(global) { try $0.debugger.mocks.add(rules) }
                Output.human("Imported \(added.count) mock rule\(added.count == 1 ? "" : "s") from \(name); `kiosk mock list` shows them.")
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the whole log, or the requests matching the filters, to a .har file.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The file to write (replaced if it exists; `-` for standard output).") var file: String
        @Option(help: "Only this source.") var source: SourceID?
        @Option(help: "Full-text search over URLs and bodies.") var search: String?
        @Option(help: "Only this status class: 2xx, 3xx, 4xx, 5xx, or error.") var status: String?
        @Option(help: "Only this cache decision.") var decision: String?
        @Option(help: "At most this many requests, newest first.") var limit = 100_000

        func validate() throws {
            guard !file.isEmpty else { throw ValidationError("Give a file name to write the archive to.") }
            try refuseEmpty(["--search": search])
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
                let filter = RequestFilter(text: search, source: source, statusClass: status.flatMap(StatusClass.init),
                                           decision: decision.flatMap(CacheDecision.init(rawValue:)))
                let (data, count) = try await Runtime.offline(global) { try $0.debugger.exportHAR(matching: filter, maximum: limit) }
                if file == "-" {
                    FileHandle.standardOutput.write(data)
                    return
                }
                do {
                    // Atomic: a failure (a full disk) leaves any previous file as it was.
                    try data.write(to: URL(fileURLWithPath: file), options: .atomic)
                } catch {
                    throw KioskError.storage("cannot write \(file): \((error as NSError).localizedDescription)")
                }
                printError("Wrote \(count) request\(count == 1 ? "" : "s") to \(file).")
            }
        }
    }
}
