import ArgumentParser
import Foundation
import KioskApp
import KioskCore
import KioskDebugger

/// Text and JSON rendering shared by the commands.
enum Output {
    /// Whether standard output is a terminal (progress bars and colour only there).
    static var isTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// The width a table fits: `COLUMNS` when it is a positive number, else the terminal's own; nil when standard
    /// output is not a terminal (a pipe or a file gets whole lines).
    static var width: Int? {
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap({ Int($0) }), columns > 0 { return columns }
        guard isTerminal else { return nil }
        var size = winsize()
        return ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : nil
    }

    /// Whether to colour: on a terminal only, and not with `NO_COLOR` set (no-color.org) or on a dumb terminal.
    static var usesColour: Bool {
        let environment = ProcessInfo.processInfo.environment
        return isTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    }

    /// The few colours the tables use.
    enum Colour: String {
        case green = "32", red = "31", dim = "2"
    }

    /// `text`, already terminal-safe, in `colour` when `enabled`.
    static func coloured(_ text: String, _ colour: Colour?, when enabled: Bool) -> String {
        guard enabled, let colour, !text.isEmpty else { return text }
        return "\u{1B}[\(colour.rawValue)m\(text)\u{1B}[0m"
    }

    /// Writes `data` (bytes, not text: a DER certificate) to standard output after what was printed before it; throws
    /// when it cannot be written (a full disk), and ends the process by SIGPIPE, silently, when its reader went away, as
    /// `KioskCommand.checkStandardOutput` does for text.
    static func writeBytes(_ data: Data) throws {
        fflush(nil)
        do {
            try FileHandle.standardOutput.write(contentsOf: data)
        } catch {
            if errno == EPIPE || (error as NSError).code == Int(EPIPE) {
                signal(SIGPIPE, SIG_DFL)
                raise(SIGPIPE)
            }
            throw KioskError.storage("cannot write to standard output: \(String(cString: strerror(errno == 0 ? EIO : errno))).")
        }
    }

    /// Prints text whose every received part was made terminal-safe already (`terminalSafe`), so that its only
    /// control sequences are `coloured`'s.
    static func printPrepared(_ text: String) {
        print(text)
    }

    /// `text` as one word of a POSIX shell: as it is when it has only safe characters, else in single quotes
    /// (a quote inside written `'\''`), so a printed command can be pasted as it is.
    static func shellQuoted(_ text: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@%")
        guard text.isEmpty || !text.allSatisfy(safe.contains) else { return text }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    static func json<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try KioskJSON.encoder().encode(value), as: UTF8.self)
    }

    /// Prints `value` as JSON when `json` is set (`--json`), else the human `text`.
    static func emit<T: Encodable>(_ value: T, json: Bool, text: () throws -> String) throws {
        if json { print(try Output.json(value)) } else { human(try text()) }
    }

    /// Writes an export to `file`, or to standard output for `-`; returns whether it went to a file. Atomic: a failure
    /// (a full disk) leaves any previous file as it was, and is a storage error naming the file.
    static func writeExport(_ archive: HAR.ArchiveStream, to file: String) throws -> Bool {
        if file == "-" {
            fflush(nil)  // what was printed first goes first
            do {
                while let part = try archive.next() { try FileHandle.standardOutput.write(contentsOf: part) }
            } catch let error as KioskError {
                throw error
            } catch {
                throw KioskError.storage("cannot write the archive to standard output: \(KioskError.fileReason(error))")
            }
            return false
        }
        // A device, a pipe or a terminal (/dev/null, a FIFO, /dev/stdout, a process substitution's /dev/fd/N) is written
        // to as it is: renaming a file over it would replace it, as root a device too.
        var status = stat()
        if stat(file, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            guard status.st_mode & S_IFMT != S_IFDIR else { throw KioskError.invalidRequest("\(file) is a folder: give a file name.") }
            do {
                guard let handle = FileHandle(forWritingAtPath: file) else {
                    throw NSError(domain: NSPOSIXErrorDomain, code: Int(errno))
                }
                defer { try? handle.close() }
                while let part = try archive.next() { try handle.write(contentsOf: part) }
            } catch {
                throw error as? KioskError ?? KioskError.storage("cannot write \(file): \(KioskError.fileReason(error, path: file))")
            }
            return true
        }
        // Written beside the file and renamed over it once whole: a failed export (a full disk) leaves the old file as it
        // was, and a part is in memory at a time however large the archive. A symbolic link is followed: the file it
        // names is replaced, the link kept.
        let target = URL(fileURLWithPath: file).resolvingSymlinksInPath()
        let partial = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).\(getpid()).partial")
        func failed(_ error: any Error) -> KioskError {
            try? FileManager.default.removeItem(at: partial)
            return error as? KioskError ?? KioskError.storage("cannot write \(file): \(KioskError.fileReason(error, path: file))")
        }
        guard FileManager.default.createFile(atPath: partial.path, contents: nil) else {
            throw KioskError.storage("cannot write \(file): cannot create a file in \(target.deletingLastPathComponent().path)")
        }
        do {
            let handle = try FileHandle(forWritingTo: partial)
            defer { try? handle.close() }
            while let part = try archive.next() { try handle.write(contentsOf: part) }
            try handle.synchronize()
        } catch {
            throw failed(error)
        }
        guard rename(partial.path, target.path) == 0 else {
            throw failed(NSError(domain: NSPOSIXErrorDomain, code: Int(errno)))
        }
        return true
    }

    /// Prints human-readable text to standard output. Every human rendering (`list`, `show`, `search`,
    /// tables, `log`, messages) reaches the terminal through here, so upstream data can never drive it:
    /// see `terminalSafe`. JSON output does not come here: it stays exact.
    static func human(_ text: String, terminator: String = "\n") {
        print(terminalSafe(text), terminator: terminator)
    }

    /// `text` with every character a terminal would obey rather than show — C0 controls (U+0000–U+001F)
    /// but the line feed and the tab, DEL (U+007F) and C1 controls (U+0080–U+009F): the ESC of colour and
    /// cursor sequences, BEL, CR, backspace, CSI...; and the bidi overrides, embeddings and isolates
    /// (U+202A–U+202E, U+2066–U+2069), which reverse what follows on a terminal that lays out right-to-left text —
    /// written as a visible escape in Swift's notation, `\u{1B}`, so nothing received can recolour, retitle,
    /// rewrite, reorder or ring the terminal.
    static func terminalSafe(_ text: String) -> String {
        func isControl(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x09, 0x0A: false
            case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: true
            default: false
            }
        }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        // Built in one growing string: the scalar view's append of another string's scalars copied the whole result each
        // time (a body of 400 KB of NULs took 39 s).
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\u{"
                if hex.count < 2 { result += "0" }
                result += hex
                result += "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A plain table: columns padded to their widest cell, long cells cut with an ellipsis. Cells are
    /// made one line and terminal-safe before they are measured, so escapes cannot break the columns. An id, or a URL
    /// where no terminal's width asks, is never cut: it is what a person or a script copies into the next command.
    static func table(_ headers: [String], _ rows: [[String]], maxWidths: [Int], width: Int? = Output.width) -> String {
        let whole = headers.indices.filter { headers[$0] == "ID" || (width == nil && ["URL", "ENDPOINT"].contains(headers[$0])) }
        var clipped = rows.map { row in
            row.enumerated().map { index, cell in
                let safe = terminalSafe(oneLine(cell))
                return whole.contains(index) ? safe : clip(safe, to: maxWidths[safe: index] ?? 40)
            }
        }
        var widths = headers.map(TerminalColumns.of)
        for row in clipped { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], TerminalColumns.of(cell)) } }
        // On a terminal (or with COLUMNS), what does not fit comes off the text columns from the right, each kept at least
        // 16 wide; ids are never cut, as they are what a person copies into the next command.
        if let width {
            var excess = widths.reduce(0, +) + 2 * (widths.count - 1) - width
            for index in widths.indices.reversed() where excess > 0 && headers[index] != "ID" && widths[index] > 16 {
                let cut = min(excess, widths[index] - 16)
                widths[index] -= cut
                excess -= cut
            }
            clipped = clipped.map { row in row.enumerated().map { index, cell in clip(cell, to: widths[index]) } }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : TerminalColumns.padded(cell, to: widths[index])
            }.joined(separator: "  ")
        }
        return ([line(headers)] + clipped.map(line)).joined(separator: "\n")
    }

    /// `text` on one line: line breaks (CR, LF, NEL, U+2028...) and tabs become single spaces.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: { $0.isNewline || $0 == "\t" }).joined(separator: " ")
    }

    /// `text` within `width` terminal columns, an ellipsis ending what was cut.
    static func clip(_ text: String, to width: Int) -> String {
        TerminalColumns.clipped(text, to: width)
    }

    /// "fresh, fetched just now" / "stale, updated 3 h ago — offline: ..." for a page status line.
    static func status(_ update: CatalogUpdate) -> String {
        let age = Age(update.age).english
        var text: String
        switch update.origin {
        case .network: text = "fresh from \(update.page.request.source.displayName), fetched \(age)"
        case .notModified: text = "fresh (confirmed unchanged), updated \(age)"
        case .store: text = update.isStale ? "stale, updated \(age)" : "fresh from the store, updated \(age)"
        }
        if let error = update.error {
            text += update.isOffline ? " — offline, showing saved data (\(error))" : " — could not refresh: \(error)"
        }
        return text
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}

/// Prints to standard error, terminal-safe like `Output.human` (errors quote upstream words too). A standard error that
/// cannot be written (a full disk) loses the line: there is nowhere else to say it, and the exit status still tells.
func printError(_ text: String) {
    try? FileHandle.standardError.write(contentsOf: Data((Output.terminalSafe(text) + "\n").utf8))
}

/// Prints `error: <message>` as one line on standard error, whatever the message holds: a word of it longer than a
/// screen's few lines (an id of 5,000 digits, a 100 KB value echoed back) is cut, saying how long it was.
func printErrorLine(_ message: String) {
    let words = Output.oneLine(message).split(separator: " ", omittingEmptySubsequences: false).map { word in
        // The punctuation that ends it is the sentence's, kept after the cut ("…/kiosk.sqlite: why" keeps its colon).
        guard word.count > 300 else { return String(word) }
        let ending = word.last.map { ":;,.".contains($0) } == true ? String(word.last!) : ""
        return "\(word.prefix(120))… (\(word.count) characters)" + ending
    }
    printError("error: " + words.joined(separator: " "))
}

/// `text` ending a sentence, for a pointer to the help to follow it: a full stop added unless it ends with one (or a
/// question or exclamation mark), inside a closing parenthesis too ("(there is nothing here)." but "(see above.)").
func endingSentence(_ text: String) -> String {
    let end = text.last == ")" ? text.dropLast().last : text.last
    return end.map { ".?!".contains($0) } == true ? text : text + "."
}

/// Runs a command body, turning Kiosk's errors into a one-line message and exit status 2 for bad input
/// or 1 for a failure of the world (see `KioskCommand.ExitStatus`).
func reportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as KioskError {
        // Bad input points at the help, as a usage error does.
        let arguments = Array(CommandLine.arguments.dropFirst())
        let pointer = error.isUserError ? " See '\(KioskCommand.commandPath(arguments)) --help'." : ""
        printErrorLine((pointer.isEmpty ? error.description : endingSentence(error.description)) + pointer)
        throw error.isUserError ? KioskCommand.ExitStatus.badInput : KioskCommand.ExitStatus.failure
    }
}

extension KioskError {
    /// Bad input (unknown id, bad page...) rather than a failure of the world.
    var isUserError: Bool {
        switch self {
        case .invalidRequest, .notFound: true
        default: false
        }
    }
}
