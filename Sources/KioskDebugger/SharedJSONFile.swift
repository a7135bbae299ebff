import Foundation
import KioskCore
import Synchronization

/// A small JSON file shared by every Kiosk process of a data folder (a running `kiosk serve` and the CLI
/// commands that edit it): read again whenever its modification time changes, written atomically so a
/// reader sees the old file or the new one, and read as `empty` when missing (a deleted file means
/// nothing is configured). The debugger's breakpoints and mock rules are kept this way.
final class SharedJSONFile<Value: Codable & Sendable>: Sendable {
    /// The file; nil keeps the value in memory only.
    let url: URL?
    private let empty: Value
    private let name: String
    private let state: Mutex<State>

    private struct State {
        var value: Value
        var stamp: Date?
    }

    /// A file at `url` holding `empty` until first written; `name` ("the mock rules") words errors.
    init(url: URL?, empty: Value, name: String) {
        self.url = url
        self.empty = empty
        self.name = name
        state = Mutex(State(value: empty, stamp: nil))
    }

    /// The current value, read again first when the file changed since it was last read or written.
    func read() throws -> Value {
        try state.withLock { state throws(KioskError) -> Value in
            try reloadIfChanged(&state)
            return state.value
        }
    }

    /// Changes the value in memory only (counters saved later with `save()`), after reading the file
    /// again if it changed; a file that cannot be read leaves the value as it was.
    func modify<Result: Sendable>(_ change: (inout Value) -> Result) -> Result {
        state.withLock { state in
            try? reloadIfChanged(&state)
            return change(&state.value)
        }
    }

    /// Reads the file again if it changed, applies `change` and saves; `change` throwing saves nothing.
    func update<Result: Sendable>(_ change: (inout Value) throws(KioskError) -> Result) throws(KioskError) -> Result {
        try state.withLock { state throws(KioskError) -> Result in
            try reloadIfChanged(&state)
            var value = state.value
            let result = try change(&value)
            try write(value)
            state.value = value
            state.stamp = stamp()
            return result
        }
    }

    /// Writes the in-memory value.
    func save() throws(KioskError) {
        try state.withLock { state throws(KioskError) in
            try write(state.value)
            state.stamp = stamp()
        }
    }

    private func stamp() -> Date? {
        guard let url else { return nil }
        return (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date
    }

    private func reloadIfChanged(_ state: inout State) throws(KioskError) {
        guard let url else { return }
        let current = stamp()
        guard current != state.stamp else { return }
        guard let current else {
            state = State(value: empty, stamp: nil)
            return
        }
        do {
            state = State(value: try JSONDecoder().decode(Value.self, from: Data(contentsOf: url)), stamp: current)
        } catch {
            throw KioskError.storage("cannot read \(name) in \(url.path): \(error.localizedDescription)")
        }
    }

    private func write(_ value: Value) throws(KioskError) {
        guard let url else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try encoder.encode(value).write(to: url, options: .atomic)
        } catch {
            throw KioskError.storage("cannot save \(name) to \(url.path): \(error.localizedDescription)")
        }
    }
}
