import ArgumentParser
import Foundation
import KioskApp
import KioskCore
import KioskDebugger

/// `kiosk log`: the network debugger's request log, read without starting any upstream.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log", abstract: "The request log: every upstream exchange and cache decision, redacted.",
        usage: """
            kiosk log [--filter <filter>] [--source <source>] [--search <search>] [--status <status>] [--limit <limit>] [--json] ...
            kiosk log <subcommand>
            """,
        discussion: """
            `kiosk log` alone lists recent requests, newest first: `kiosk log list --help` lists its options — --filter (the \
            debugger's filter language), --source, --search, --status, --method, --decision, --min-ms, --limit, --json.
            """,
        subcommands: [List.self, Show.self, Clear.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "Recent requests, newest first.",
            discussion: """
                --filter takes the debugger's filter language: key:value terms and words, such as \
                'status:5xx source:nyt cache:stale method:GET slow:>500ms has:error spider'. Keys: \
                \(FilterKey.allCases.map(\.example).joined(separator: ", ")). Several values of a key are \
                separated by commas (status:4xx,5xx); a minus negates a term (-source:nyt); other words search \
                URLs and bodies, and quotes make a word with a colon or a leading minus literal. A filter that \
                does not parse is refused with a pointer to the mistake (exit status 2).
                """)
        @OptionGroup var global: GlobalOptions
        // Taken whatever it starts with: a negated term (`-source:nyt`) is a filter, not an option.
        @Option(name: .customLong("filter"), parsing: .unconditionalSingleValue, help: "A filter in the debugger's language (see below). Given again, both apply.") var filters: [String] = []
        /// The --filter options as one filter: each term of each applies, as terms of one filter do.
        var filter: String? { filters.isEmpty ? nil : filters.joined(separator: " ") }
        @Option(help: "Only this source.") var source: SourceID?
        @Option(help: "Full-text search over URLs and bodies.") var search: String?
        @Option(help: "Only this status class: 1xx, 2xx, 3xx, 4xx, 5xx, error (no response), or store (answered from the store).") var status: String?
        @Option(help: "Only this method (GET, HEAD...).") var method: String?
        @Option(help: "Only this cache decision: \(CacheDecision.allCases.map(\.rawValue).joined(separator: ", ")).")
        var decision: String?
        @Option(name: .customLong("min-ms"), help: "Only requests that took at least this many milliseconds.") var minMs: Double?
        @Option(help: "At most this many requests.") var limit = 50
        @Flag(help: "Print JSON instead of a table.") var json = false

        func validate() throws {
            try refuseEmpty(["--search": search, "--method": method, "--filter": filter])
            guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 10000.") }
            if let status, StatusClass(status) == nil {
                throw ValidationError("--status must be 1xx, 2xx, 3xx, 4xx, 5xx, error or store (got \(status)).")
            }
            if let decision, CacheDecision(rawValue: decision) == nil {
                throw ValidationError("--decision must be one of \(CacheDecision.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            // (NaN and infinity compare false with everything: no record would ever match, and the filter would say none did.)
            if let minMs, !(minMs >= 0 && minMs.isFinite) { throw ValidationError("--min-ms must be a number of milliseconds, 0 or more (got \(minMs)).") }
        }

        func run() async throws {
            try await reportingErrors {
                let filter = try combinedFilter()
                let records = try await Runtime.offline(global) { try $0.debugger.records(matching: filter) }
                if json {
                    print(try Output.json(records.map { RequestJSON($0) }))
                    return
                }
                guard !records.isEmpty else {
                    Output.human("No requests logged\(filter == RequestFilter(limit: limit) ? " yet" : " match").")
                    return
                }
                Output.printPrepared(LogCommand.table(records, width: Output.width, colour: Output.usesColour))
            }
        }

        /// The options' filter with --filter's added (`LogCommand.adding`).
        func combinedFilter() throws -> RequestFilter {
            try LogCommand.adding(filter, to: RequestFilter(text: search, source: source, statusClass: status.flatMap(StatusClass.init),
                                                            method: method?.uppercased(), decision: decision.flatMap(CacheDecision.init(rawValue:)),
                                                            minimumDuration: minMs.map { $0 / 1000 }, limit: limit))
        }
    }

    /// `options` with a --filter in the debugger's language added (`kiosk log`, `kiosk har export`). A --filter that does
    /// not parse is printed with the mistake marked under it (after the one `error:` line), and so is a key given twice.
    static func adding(_ filter: String?, to options: RequestFilter) throws -> RequestFilter {
        guard let filter else { return options }
        let parsed: RequestFilter
        do throws(FilterSyntaxError) {
            parsed = try RequestFilter(parsing: filter, limit: options.limit)
        } catch {
            printErrorLine("--filter: \(error.message).")
            printError(error.pointer.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n"))
            throw KioskCommand.ExitStatus.badInput
        }
        if let key = options.sharedKey(with: parsed) {
            printErrorLine("\(key.rawValue) is given both in --filter and as its own option; give it once.")
            throw KioskCommand.ExitStatus.badInput
        }
        return options.adding(parsed)
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One request in full: headers, timings, bodies.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The request's id, as `kiosk log` prints it.") var id: Int64
        @Flag(help: "Print JSON.") var json = false
        @Flag(help: "Print the request as a curl command (redacted).") var curl = false

        func run() async throws {
            try await reportingErrors {
                let found = try await Runtime.offline(global) { try $0.debugger.record(id: id) }
                guard let record = found else {
                    throw KioskError.notFound("request \(id) in the log (it may have been evicted)")
                }
                if curl {
                    guard !record.isTunnel else {
                        throw KioskError.invalidRequest("Request \(id) is a tunnel (a CONNECT, or a WebSocket's switch): its bytes were "
                                                        + "passed on unread, so there is no request for curl to send again.")
                    }
                    Output.human(HAR.curl(record))
                } else {
                    try Output.emit(RequestJSON(record), json: json) { LogCommand.detail(record, pretty: Output.isTerminal) }
                }
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Empty the request log.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await reportingErrors {
                // Not through a Kiosk, which would hold the log open: on a full disk its files may have to go.
                try Runtime.checkDataDirectory(global)
                let cleared = try Kiosk.clearRequestLog(try Runtime.configuration(global))
                if let aside = cleared.movedAside {
                    Output.human("The request log could not be read, so it was moved aside to \(aside); a new one starts empty.")
                } else {
                    Output.human("Cleared \(cleared.count) request\(cleared.count == 1 ? "" : "s").")
                }
            }
        }
    }

    /// The log as a table: status ("store" for an answer from the store, "failed" for an exchange without a
    /// response), the request (method and URL) and, when any failed, why, in a column of its own. Fitted to
    /// `width` (a terminal's) by shortening the URLs first, the failures last; whole lines without a width.
    /// Cells are terminal-safe; with `colour`, statuses and failures are coloured.
    /// A record's time is its time of day when it is of `now`'s day, else with its date ("Dec 5, 4:52:11 AM"): the log
    /// keeps a week.
    static func table(_ records: [RequestRecord], width: Int?, colour: Bool, now: Date = Date()) -> String {
        let today = Date.FormatStyle(date: .omitted, time: .standard)
        let earlier = Date.FormatStyle(date: .abbreviated, time: .standard)
        let calendar = Calendar.current
        let time = { (date: Date) in calendar.isDate(date, inSameDayAs: now) ? date.formatted(today) : date.formatted(earlier) }
        let failures = records.contains { $0.error != nil }
        var headers = ["ID", "TIME", "STATUS", "CACHE", "TOOK", "REQUEST"]
        if failures { headers.append("FAILURE") }
        let rows: [(cells: [String], status: Output.Colour?)] = records.map { record in
            let status: (String, Output.Colour?)
            if let code = record.status {
                status = (String(code), code >= 400 ? .red : code < 300 ? .green : nil)
            } else if record.isAnsweredFromStore {
                status = ("store", .dim)
            } else {
                status = ("failed", .red)
            }
            var cells = [String(record.id), time(record.startedAt), status.0, record.cacheStatus.label,
                         String(format: "%.0f ms", record.timings.total * 1000), "\(record.method) \(record.url)"]
            if failures { cells.append(record.error ?? "") }
            return (cells.map { Output.terminalSafe(Output.oneLine($0)) }, status.1)
        }
        var widths = headers.map(\.count)
        for row in rows { for (index, cell) in row.cells.enumerated() { widths[index] = max(widths[index], cell.count) } }
        if let width {
            // What does not fit comes off the URLs first, then the failures, each kept at least this wide.
            var excess = widths.reduce(0, +) + 2 * (widths.count - 1) - width
            for (column, minimum) in [(5, 16), (6, 24)] where column < widths.count && excess > 0 {
                let cut = min(excess, max(0, widths[column] - minimum))
                widths[column] -= cut
                excess -= cut
            }
        }
        func line(_ cells: [String], status: Output.Colour?, coloured: Bool) -> String {
            cells.enumerated().map { index, cell in
                let clipped = Output.clip(cell, to: widths[index])
                let padded = index == cells.count - 1 ? clipped : clipped.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                let colourOfCell: Output.Colour? = index == 2 ? status : index == 6 ? .red : nil
                return Output.coloured(padded, colourOfCell, when: coloured)
            }.joined(separator: "  ")
        }
        return ([line(headers, status: nil, coloured: false)] + rows.map { line($0.cells, status: $0.status, coloured: colour) })
            .joined(separator: "\n")
    }

    /// One request in full; with `pretty` (a terminal), a JSON body indented rather than as received.
    static func detail(_ record: RequestRecord, pretty: Bool = false) -> String {
        var lines = [
            "#\(record.id)  \(record.method) \(record.url)",
            "Started:   \(record.startedAt.formatted(.iso8601))",
            "Source:    \(record.source?.rawValue ?? "—")  endpoint \(record.endpoint)",
            "Status:    \(record.status.map(String.init) ?? (record.isAnsweredFromStore ? "answered from the store, no upstream request" : "failed"))"
                + (record.error.map { "  error: \($0)" } ?? "")
                + (record.httpVersion.map { "  over \($0)" } ?? ""),
            "Decision:  \(record.decision.rawValue)",
            "Cache-Status: \(record.cacheStatus.headerValue)",
            "Timings:   " + timings(record.timings),
        ]
        for touch in record.touchedBy {
            lines.append("Touched:   \(touch.kind.rawValue) #\(touch.id) \(touch.name) — "
                         + (touch.applied ? "applied: " : "did not apply: ") + touch.detail)
        }
        func headers(_ title: String, _ fields: [RequestRecord.HeaderField]) {
            guard !fields.isEmpty else { return }
            lines.append("")
            lines.append(title)
            lines += fields.map { "  \($0.name): \($0.value)" }
        }
        func body(_ title: String, _ sent: CapturedBody?, headers: [RequestRecord.HeaderField]) {
            guard let sent else { return }
            // Shown as its content when it came coded (gzip, br), as the console shows it.
            let (body, coding) = sent.decoded(contentEncoding: RequestRecord.HeaderField.combined("Content-Encoding", in: headers))
            lines.append("")
            let decoded = coding.map { ", decoded from \($0): \(Render.bytes(sent.originalSize)) as sent" } ?? ""
            if sent.isWithheld {
                let coding = ContentCoding.single(RequestRecord.HeaderField.combined("Content-Encoding", in: headers))
                lines.append("\(title) (\(Render.bytes(sent.originalSize)), not kept: "
                             + (coding.map { "coded as \($0), and it could not be kept whole with its secrets hidden: cut by the capture "
                                 + "limit, corrupt, or brotli holding a secret)" }
                                ?? "the capture limit is 0)"))
                return
            }
            lines.append("\(title) (\(Render.bytes(body.originalSize))\(decoded)\(body.isTruncated ? ", truncated to \(Render.bytes(body.data.count))" : ""))")
            let indented = pretty && !body.isTruncated ? (try? OrderedJSON.parse(body.data))?.rendered() : nil
            let type = headers.first { HTTPHeaderFields.sameName($0.name, "Content-Type") }?.value
            lines.append(indented ?? BodyJSON(body, contentType: type).text ?? "(binary, \(body.data.count) bytes)")
        }
        headers("Request headers", record.requestHeaders)
        body("Request body", record.requestBody, headers: record.requestHeaders)
        headers("Response headers", record.responseHeaders)
        body("Response body", record.responseBody, headers: record.responseHeaders)
        return lines.joined(separator: "\n")
    }

    static func timings(_ timings: RequestTimings) -> String {
        // The connection's DNS lookup and TLS handshake are parts of its connect: said within it.
        let within = [("DNS", timings.dns), ("TLS", timings.tls)].compactMap { name, value in
            value.map { String(format: "%@ %.1f ms", name, $0 * 1000) }
        }
        let parts: [(String, TimeInterval?)] = [("queued", timings.queued), ("connect", timings.connect),
                                                ("first byte", timings.firstByte), ("download", timings.download)]
        let shown = parts.compactMap { name, value in
            value.map { String(format: "%@ %.1f ms", name, $0 * 1000) + (name == "connect" && !within.isEmpty ? " (\(within.joined(separator: ", ")))" : "") }
        }
        return (shown + [String(format: "total %.1f ms", timings.total * 1000)]).joined(separator: " · ")
    }
}
