public import ArgumentParser
import Foundation
import KioskApp
public import KioskCore

/// `kiosk`: read four content APIs from the terminal, offline-first.
@main
struct KioskCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kiosk",
        abstract: "An offline-first reader for NYT, Marvel, Rick and Morty and dogs.",
        discussion: """
            Examples:
              kiosk serve                       the web app and its debugger, port 8080
              kiosk proxy                       an app's HTTP traffic through the debugger
              kiosk list rickandmorty --page 2  a page of a catalog (--offline: stored)
              kiosk show rickandmorty 1         one item in full
              kiosk search marvel spider        search a catalog, or what is stored
              kiosk sync all                    store every catalog to read offline
              kiosk log --filter status:5xx     the requests Kiosk made

            Sources: nyt, marvel, rickandmorty, dogs. Everything seen stays readable offline.
            With no keys or --live, Kiosk runs against its embedded demo upstream on loopback.

            Exit status: 0 success (and --help, --version); 1 a failure of the world (network, disk, \
            upstream); 2 bad input (an unknown command, source, option or id, an invalid value, a refused \
            archive). Every error is one line on standard error, starting with "error: " (a bad \
            `kiosk log --filter` adds the filter with carets under the mistake).

            Human output shows the control characters received from upstreams as visible escapes (ESC \
            as \\u{1B}), so they cannot drive the terminal; --json output is exact.
            """,
        version: "kiosk \(KioskVersion.current)",
        subcommands: [
            ServeCommand.self, ProxyCommand.self, ListCommand.self, ShowCommand.self, SearchCommand.self, SyncCommand.self, DogsCommand.self,
            FavoriteCommand.self, CacheCommand.self, LogCommand.self, HARCommand.self, MockCommand.self, RuleCommand.self,
            BreakpointCommand.self, DevicesCommand.self, DemoUpstreamCommand.self,
        ]
    )

    /// The documented exit statuses (see the discussion above): scripts tell bad input from failures.
    enum ExitStatus {
        /// A failure of the world: network, disk, upstream.
        static let failure = ExitCode(1)
        /// Bad input: what was asked cannot be done as asked, whatever the world does.
        static let badInput = ExitCode(2)
    }

    /// ArgumentParser's own `main`, with its errors reshaped: a usage error (its status 64, with several
    /// lines of usage) becomes one `error:` line with a pointer to the command's help and status 2; any
    /// other uncaught error one `error:` line and status 1. Help and `--version` keep ArgumentParser's
    /// output and status 0; an `ExitCode` thrown by a command (its message already printed) stays as is.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // ArgumentParser's `help` answers a name it does not know with the root's help and status 0: a typo would
        // read as success to a script.
        if arguments.first == "help", let unknown = unknownHelpTopic(Array(arguments.dropFirst())) {
            printErrorLine("there is no command '\(unknown)'. See 'kiosk --help'.")
            Foundation.exit(ExitStatus.badInput.rawValue)
        }
        // A mistyped command (`kiosk serv`, `kiosk cache clearr`) reads to ArgumentParser as the arguments of the command
        // before it, which takes none: it would blame the options after it ("Unknown option '--data-dir'") or list every
        // word as unexpected. So would a command made of subcommands given none before its options (`kiosk cache --data-dir D`).
        if arguments.first != "help", let missing = missingSubcommand(arguments) {
            let path = missing.path.isEmpty ? "" : missing.path + " "
            if let word = missing.word {
                let nearest = missing.nearest.map { " Did you mean '\(path)\($0)'?" } ?? ""
                printErrorLine("there is no command '\(path)\(word)'.\(nearest) See 'kiosk \(path)--help'.")
            } else {
                printErrorLine("'kiosk \(missing.path)' needs one of its commands first: \(missing.names.joined(separator: ", ")). "
                    + "See 'kiosk \(path)--help'.")
            }
            Foundation.exit(ExitStatus.badInput.rawValue)
        }
        do {
            var command = try await asyncParseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            checkStandardOutput()
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch {
            switch exitCode(for: error) {
            case .success:
                // Help and the version, checked as any output is: to a full disk they are a failure, not silence and 0.
                let text = fullMessage(for: error)
                if !text.isEmpty { print(text) }
                checkStandardOutput()
                Foundation.exit(ExitCode.success.rawValue)
            case .validationFailure:
                let reason = negativeValueReason(message(for: error), arguments) ?? dashedArgumentReason(message(for: error), arguments)
                    ?? mistypedSubcommandReason(message(for: error), arguments) ?? message(for: error)
                printErrorLine(endingSentence(reason) + " See '\(commandPath(arguments)) --help'.")
                Foundation.exit(ExitStatus.badInput.rawValue)
            default:
                printErrorLine(message(for: error))
                Foundation.exit(ExitStatus.failure.rawValue)
            }
        }
    }

    /// Exits with status 1 and says why when what the command printed could not all be written (a full disk, /dev/full;
    /// a pipe closed by its reader ends it by SIGPIPE): stdio's buffer is written at exit, where an error would be lost, and a script running
    /// `kiosk list --json > page.json && upload page.json` must not go on with an empty file.
    static func checkStandardOutput() {
        // Every stream (stdout is a global Swift 6 cannot read safely): only standard output has text waiting, and
        // after a failed write stdio keeps the text and tries it again here, so a lost write is an error here too.
        errno = 0
        guard fflush(nil) != 0 else { return }
        // A reader that stopped reading (`kiosk list --json | head -1`) is no failure to report: Kiosk ends as any tool
        // does when its pipe closes, by SIGPIPE (the shell's status 141), silently. (Something in the process ignores
        // SIGPIPE, so the write failed with EPIPE instead of ending it.)
        if errno == EPIPE {
            signal(SIGPIPE, SIG_DFL)
            raise(SIGPIPE)
        }
        let reason = errno == 0 ? "an I/O error" : String(cString: strerror(errno))
        printErrorLine("cannot write to standard output: \(reason).")
        Foundation.exit(ExitStatus.failure.rawValue)
    }

    /// ArgumentParser reads `--port -1` as `--port` followed by an unknown flag and says the value is missing: for an
    /// option given a negative number, the sentence that says so instead; nil for any other error.
    static func negativeValueReason(_ reason: String, _ arguments: [String]) -> String? {
        guard reason.hasPrefix("Missing value for '"), let name = reason.dropFirst(19).split(separator: " ").first,
              let index = arguments.firstIndex(of: String(name)), index + 1 < arguments.count else { return nil }
        let value = arguments[index + 1]
        guard value.hasPrefix("-"), Double(value) != nil else { return nil }
        return "\(name) cannot be negative (got \(value))"
    }

    /// ArgumentParser reads an argument starting with "-" (`kiosk show rickandmorty -1`, `kiosk search marvel -rick`) as an
    /// option, and then says the argument is missing: the sentence that says what happened and how to pass it; nil for
    /// any other error.
    static func dashedArgumentReason(_ reason: String, _ arguments: [String]) -> String? {
        guard reason.hasPrefix("Missing expected argument '"), !arguments.contains("--"),
              let dashed = arguments.first(where: { $0.count > 1 && $0.hasPrefix("-") && !$0.hasPrefix("--") && $0 != "-h" })
        else { return nil }
        let command = commandPath(arguments)
        let rest = arguments.dropFirst(command.split(separator: " ").count - 1).filter { $0 != dashed }
        let example = ([command] + rest + ["--", dashed]).joined(separator: " ")
        return "\(dashed) was read as an option, so \(reason.dropFirst(26).prefix { $0 != "." }) is missing; to give it as "
            + "an argument, put -- before it: \(example)"
    }

    /// A word a command's default subcommand does not take (`kiosk proxy cache lst`: its default, `stats`, takes none) that
    /// is near one of the command's subcommands: the sentence naming the one meant; nil for any other error.
    static func mistypedSubcommandReason(_ reason: String, _ arguments: [String]) -> String? {
        guard reason.hasPrefix("Unexpected argument '"), let word = reason.dropFirst(21).split(separator: "'").first.map(String.init) else {
            return nil
        }
        let (command, path) = namedCommand(arguments)
        guard let nearest = nearestCommand(to: word, among: command.configuration.subcommands.map { $0._commandName }) else { return nil }
        let named = path.map { $0 + " " }.joined()
        return "there is no command '\(named)\(word)'. Did you mean '\(named)\(nearest)'?"
    }

    /// The names after `kiosk help` (up to its first option) when one is not a subcommand of the names before it.
    static func unknownHelpTopic(_ arguments: [String]) -> String? {
        let names = arguments.prefix { !$0.hasPrefix("-") }
        var command: any ParsableCommand.Type = Self.self
        for (index, name) in names.enumerated() {
            guard let next = command.configuration.subcommands.first(where: { $0._commandName == name }) else {
                return names.prefix(index + 1).joined(separator: " ")
            }
            command = next
        }
        return nil
    }

    /// Where `arguments` leave a command made only of subcommands (no default one) without one: at a word naming none of
    /// them (`cache clearr`: its `word`, and the `nearest` name), or at an option or their end after it (`cache --data-dir D`);
    /// `path` is the commands before it (`cache`, "" for the root), `names` its subcommands'. Nil when the words name
    /// commands all the way to one that takes arguments.
    static func missingSubcommand(_ arguments: [String]) -> (path: String, word: String?, nearest: String?, names: [String])? {
        var command: any ParsableCommand.Type = Self.self
        var path: [String] = []
        for argument in arguments {
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty else { return nil }
            if let next = subcommands.first(where: { $0._commandName == argument }) {
                command = next
                path.append(argument)
                continue
            }
            // Words and options a default subcommand takes (`kiosk proxy --port 0`, `kiosk log --filter …`) are its own;
            // `--help`, `-h` and `--version` ArgumentParser's to answer at any command.
            if command.configuration.defaultSubcommand != nil || ["--help", "-h", "--version", "help"].contains(argument) { return nil }
            let names = subcommands.map { $0._commandName }
            if argument.hasPrefix("-") {
                return path.isEmpty ? nil : (path.joined(separator: " "), nil, nil, names)
            }
            return (path.joined(separator: " "), argument, nearestCommand(to: argument, among: names), names)
        }
        return nil
    }

    /// The name among `names` (the root's commands by default) nearest `typed`: two edits at most (a letter missing,
    /// added, changed or two swapped: `serv`, `lsit`), or the one it starts; nil when none is that near.
    static func nearestCommand(to typed: String, among names: [String] = configuration.subcommands.map { $0._commandName }) -> String? {
        let typed = typed.lowercased()
        let prefixed = names.filter { $0.hasPrefix(typed) }
        if typed.count >= 2, prefixed.count == 1 { return prefixed[0] }
        let scored = names.map { (name: $0, distance: editDistance(Array(typed), Array($0))) }.filter { $0.distance <= 2 }
        return scored.min { $0.distance < $1.distance }?.name
    }

    /// The optimal string alignment distance: insertions, deletions, substitutions and swaps of two neighbours.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }

    /// "kiosk har import" for `har import x.har`: the subcommands named at the start of `arguments`,
    /// for the help hint of a usage error.
    static func commandPath(_ arguments: [String]) -> String {
        ([configuration.commandName ?? "kiosk"] + namedCommand(arguments).path).joined(separator: " ")
    }

    /// The command the subcommand names at the start of `arguments` lead to, and those names (`har import x.har`:
    /// `kiosk har import`'s, `har import`).
    static func namedCommand(_ arguments: [String]) -> (command: any ParsableCommand.Type, path: [String]) {
        var command: any ParsableCommand.Type = Self.self
        var path: [String] = []
        for argument in arguments {
            guard let next = command.configuration.subcommands.first(where: { $0._commandName == argument }) else { break }
            command = next
            path.append(argument)
        }
        return (command, path)
    }
}

/// Options every data command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Folder for Kiosk's data: its stores, request log, rules and keys (default: $XDG_DATA_HOME/kiosk, else ~/.local/share/kiosk).")
    var dataDir: String?

    @Flag(name: .long, help: "Use the real APIs instead of the embedded demo upstream (needs keys).")
    var live = false

    func validate() throws {
        try refuseEmpty(["--data-dir": dataDir])
    }

    /// These options as typed, for a command line this one suggests next (quoted for a shell).
    var carried: [String] {
        (dataDir.map { ["--data-dir", Output.shellQuoted($0)] } ?? []) + (live ? ["--live"] : [])
    }

    /// `--data-dir`, when given, as the folder `kiosk` opened (absolute): for a line printed to be run from any folder (a
    /// relative one, run elsewhere, made another data folder, with another CA).
    func openedDataDir(_ kiosk: Kiosk) -> String? {
        dataDir.map { _ in kiosk.configuration.dataDirectory.path }
    }
}

/// Refuses an option given as an empty (or blank) value where emptiness means nothing: read as "not
/// given", `--kind ""` would silently become the default, and the user would never learn of the slip.
func refuseEmpty(_ options: KeyValuePairs<String, String?>) throws {
    for (name, value) in options where value?.trimmingCharacters(in: .whitespaces).isEmpty == true {
        throw ValidationError("\(name) must not be empty.")
    }
}

extension SourceID: ExpressibleByArgument {
    public init?(argument: String) { self.init(userInput: argument) }
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}
