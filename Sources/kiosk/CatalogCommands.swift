import ArgumentParser
import Foundation
import KioskApp
import KioskCore
import Synchronization

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List one page of a catalog, from the store when fresh.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "nyt, marvel, rickandmorty or dogs.") var source: SourceID
    @Option(help: "1-based page number.") var page = 1
    @Option(help: "NYT ranking: emailed, viewed or shared.") var kind: String?
    @Option(help: "NYT period in days: 1, 7 or 30.") var period: String?
    @Option(help: "Rick and Morty status: alive, dead or unknown.") var status: String?
    @Option(help: "Rick and Morty gender: female, male, genderless or unknown.") var gender: String?
    @Flag(help: "Revalidate with the upstream even when the stored page is fresh.") var refresh = false
    @Flag(help: "Never use the network; show what is stored.") var offline = false
    @Flag(help: "Print JSON instead of a table.") var json = false

    func validate() throws {
        try refuseEmpty(["--kind": kind, "--period": period, "--status": status, "--gender": gender])
        guard page >= 1 else { throw ValidationError("--page must be 1 or more (got \(page)).") }
        if refresh && offline { throw ValidationError("--refresh and --offline cannot be combined.") }
    }

    func run() async throws {
        var filters: [String: String] = [:]
        if let kind { filters["kind"] = kind }
        if let period { filters["period"] = period }
        if let status { filters["status"] = status }
        if let gender { filters["gender"] = gender }
        let policy: RefreshPolicy = offline ? .offline : (refresh ? .force : .automatic)
        try await reportingErrors {
            // Checked before the store opens: a bad filter value on a new --data-dir leaves no empty store behind.
            let request = try Kiosk.checked(PageRequest(source: source, page: page, filters: filters))
            try await Runtime.run(global) { runtime in
                let catalog = runtime.kiosk.catalog
                let update = try await catalog.page(request, policy: policy)
                let favorites = try catalog.favoriteIDs(source: source)
                try Output.emit(PageJSON(update, favorites: favorites), json: json) {
                    Render.page(update, of: try catalog.source(source), favorites: favorites,
                                carried: global.carried + (offline ? ["--offline"] : []))
                }
            }
        }
    }
}

struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one item in full.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var item: ItemArguments
    @Flag(help: "Fetch the item again from the upstream.") var refresh = false
    @Option(help: "The page of a long linked list to show (a location's residents, 20 a page).") var page = 1
    @Flag(help: "Print JSON instead of text.") var json = false

    func validate() throws {
        guard page >= 1 else { throw ValidationError("--page must be 1 or more (got \(page)).") }
    }

    func run() async throws {
        try await Runtime.command(global) { runtime in
            let result = try await runtime.kiosk.catalog.item(source: item.source, itemID: item.id,
                                                             policy: refresh ? .force : .automatic, linkedPage: page)
            try Output.emit(ItemJSON(result), json: json) { Render.item(result) }
        }
    }
}

struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search a catalog: upstream for Marvel and Rick and Morty (3+ characters), else the store.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "nyt, marvel, rickandmorty or dogs.") var source: SourceID
    @Argument(help: "What to look for.") var text: String
    @Option(help: "1-based page of an upstream search's results.") var page = 1
    @Flag(help: "Search only what is stored.") var offline = false
    @Flag(help: "Print JSON instead of a table.") var json = false

    func validate() throws {
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { throw ValidationError("Search text is empty.") }
        guard page >= 1 else { throw ValidationError("--page must be 1 or more (got \(page)).") }
    }

    func run() async throws {
        try await Runtime.command(global) { runtime in
            let result = try await runtime.kiosk.catalog.search(source: source, text: text, page: page,
                                                               policy: offline ? .offline : .automatic)
            if result.isPastTheEnd, let total = result.totalPages {
                throw KioskError.notFound("there is no page \(page) of the results for “\(result.query)”; "
                                          + (total <= 1 ? "they are one page" : "they are \(total) pages"))
            }
            try Output.emit(SearchJSON(result), json: json) {
                Render.search(result, source: source, carried: global.carried + (offline ? ["--offline"] : []))
            }
        }
    }
}

/// `all` or one source.
enum SyncTarget: ExpressibleByArgument {
    case all
    case one(SourceID)
    init?(argument: String) {
        if argument.lowercased() == "all" { self = .all; return }
        guard let source = SourceID(userInput: argument) else { return nil }
        self = .one(source)
    }
    static var allValueStrings: [String] { ["all"] + SourceID.allCases.map(\.rawValue) }
    var sources: [SourceID] {
        switch self {
        case .all: SourceID.allCases
        case .one(let source): [source]
        }
    }
}

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Fetch every page of a catalog (or all) so it reads offline.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "all, nyt, marvel, rickandmorty or dogs.") var target: SyncTarget
    @Option(help: "Pages fetched at once.") var concurrency: Int?
    @Flag(help: "Also fetch the lists a catalog links to: every Rick and Morty episode and location.") var related = false
    @Flag(help: "Print a JSON report.") var json = false

    func validate() throws {
        if let concurrency, !(1...32).contains(concurrency) {
            throw ValidationError("--concurrency must be between 1 and 32 (got \(concurrency)).")
        }
    }

    func run() async throws {
        try await Runtime.command(global) { runtime in
            var reports: [SyncReport] = []
            let width = concurrency ?? runtime.kiosk.configuration.syncConcurrency
            let terminal = Output.isTerminal && !json
            // Ctrl-C or SIGTERM stops the sync between pages, as a person expects of a long command: what was stored
            // stays, the catalogs finished are said, and the one under way says how far it got.
            let interruption = Interruption()
            for source in target.sources {
                let bar = ProgressPrinter(source: source, terminal: terminal, quiet: json)
                let report: SyncReport
                do {
                    let synced = try await interruption.run {
                        try await runtime.kiosk.catalog.sync(source, includingRelated: related, concurrency: width) { bar.update($0) }
                    }
                    if interruption.received != nil { throw CancellationError() }
                    report = synced
                } catch let error as KioskError where target.sources.count > 1 && interruption.received == nil {
                    // One catalog failing (say, missing keys) must not stop the others.
                    report = .failed(source, because: error)
                } catch where interruption.received != nil {
                    bar.interrupted()
                    if json { print(try Output.json(reports)) }
                    throw ExitCode(128 + (interruption.received ?? SIGINT))
                }
                bar.finish(report)
                reports.append(report)
            }
            if json { print(try Output.json(reports)) }
            if let summary = SyncReport.failureSummary(reports) {
                printErrorLine(summary)
                throw KioskCommand.ExitStatus.failure
            }
        }
    }
}

extension SyncReport {
    /// The one line that says a sync failed (each failed page has its own line above it): how many pages of which
    /// catalogs, the first one's reason, and that nothing stored was lost; nil when nothing failed.
    static func failureSummary(_ reports: [SyncReport]) -> String? {
        let failed = reports.filter { !$0.failures.isEmpty }
        guard let first = failed.first?.failures.first else { return nil }
        // A catalog that could not be synced at all (its keys missing) has one failure named after itself, and no pages.
        let parts = failed.map { report in
            report.pages == 0 && report.failures.count == 1 && report.failures[0].page == report.source.rawValue
                ? report.source.rawValue : "\(Render.count(report.failures.count, "page")) of \(report.source.rawValue)"
        }
        let count = failed.map(\.failures.count).reduce(0, +)
        return "sync failed for " + parts.joined(separator: ", ") + (count > 1 ? ", the first: " : ": ")
            + endingSentence(first.message) + " What was stored before stays readable offline."
    }
}

/// A progress bar on a terminal, nothing otherwise; then one line for each catalog synced.
final class ProgressPrinter: Sendable {
    let source: SourceID
    let terminal: Bool
    let quiet: Bool
    /// How far the sync got, for a line saying so if it is interrupted.
    private let lastProgress = Mutex<SyncProgress?>(nil)

    init(source: SourceID, terminal: Bool, quiet: Bool) {
        self.source = source
        self.terminal = terminal
        self.quiet = quiet
    }

    func update(_ progress: SyncProgress) {
        lastProgress.withLock { $0 = progress }
        guard !quiet else { return }
        let total = max(progress.totalPages, progress.completedPages)
        if terminal {
            let name = source.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)
            let counts = "\(progress.completedPages)/\(total) pages, \(progress.items) items"
            // The line stays within the terminal's width (one that wrapped would leave a line behind at every redraw):
            // the bar gives way first, down to 5 cells, then the counts are cut.
            let columns = Output.width ?? 80
            let width = min(30, max(5, columns - 1 - name.count - counts.count - 2))
            let filled = total == 0 ? 0 : width * progress.completedPages / total
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            // The carriage return and the erase to the line's end are the bar's own, to redraw its line: not text to escape.
            print("\r\u{1B}[K", terminator: "")
            Output.human(Output.clip("\(name) \(bar) \(counts)", to: max(columns - 1, 1)), terminator: "")
            fflush(nil)
        }
        // Not on a terminal, standard output is for the result: the lines below, not each page's progress.
    }

    /// Says where a catalog's sync stopped when it was interrupted, on standard error (standard output keeps the
    /// finished catalogs' lines).
    func interrupted() {
        if terminal { Output.human("") }
        guard let last = lastProgress.withLock({ $0 }), last.completedPages > 0 else {
            printError("\(source.rawValue): interrupted before its first page came; nothing of it was stored. Run the same command again to sync it.")
            return
        }
        printError("\(source.rawValue): interrupted after \(Render.count(last.completedPages, "page")) of "
                   + "\(max(last.totalPages, last.completedPages)), \(Render.count(last.items, "item")); what was fetched is stored. "
                   + "Run the same command again to finish.")
    }

    func finish(_ report: SyncReport) {
        guard !quiet else { return }
        if terminal { Output.human("") }
        // Failed pages counted beside the others: "9 pages (0 updated, 0 unchanged)" read as a success when none was stored.
        let failed = report.failures.isEmpty ? "" : ", \(report.failures.count) failed"
        Output.human("\(source.rawValue): \(Render.count(report.pages, "page")) (\(report.updatedPages) updated, \(report.unchangedPages) unchanged"
                     + "\(failed)), \(Render.count(report.items, "item")) in \(String(format: "%.2f", report.seconds)) s")
        for failure in report.failures { printError("  failed \(failure.page): \(failure.message)") }
    }
}

/// The `<source> <id>` pair that names one item.
struct ItemArguments: ParsableArguments {
    @Argument(help: "nyt, marvel, rickandmorty or dogs.") var source: SourceID
    @Argument(help: "The item's id, as `list` prints it.") var id: String
}
