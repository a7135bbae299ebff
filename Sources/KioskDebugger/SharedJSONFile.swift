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
    /// `url`'s path, made once: URL's `path` parses again each time, and `stamp()` runs on every exchange.
    private let path: String?
    /// The file's folder, held open so that `stamp()` looks up the file's name alone in it (`fstatat`) rather than
    /// walking its whole path, the most of a stat(2)'s cost; -1 when it could not be opened (the path is used then).
    private let folder: Int32
    /// The file's name in `folder`.
    private let fileName: String
    private let empty: Value
    private let name: String
    private let state: Mutex<State>
    private let pendingSave = Mutex<PendingSave>(PendingSave())
    /// Whether the state holds an unsettled version, read without the lock: an exchange's look at the file reads its
    /// bytes first, outside the lock, only then.
    private let hasUnsettled = Atomic<Bool>(false)
    private let now: @Sendable () -> Date

    private struct State {
        var value: Value
        /// The value as last read from the file or written to it: what `modify`'s changes since are counted from.
        var loaded: Value
        var stamp: Stamp?
        /// The version of the file last found unreadable, and why: it is not read again until it changes.
        var unreadable: (stamp: Stamp, reason: KioskError)?
        /// The version last read or written, with its bytes, while its stamp cannot be trusted yet: the file system
        /// keeps times to its clock's tick (a few milliseconds), so a write made in place within the tick of this one,
        /// of the same size, leaves the stamp as it was (git's "racily clean" index entries). Until the tick has
        /// passed, a look that finds this stamp compares the bytes.
        var unsettled: (stamp: Stamp, bytes: Data)?
    }

    /// Carries changes made with `modify` and not saved yet (hit counts) into a version of the file another process
    /// wrote meanwhile: given the value as it was read and as it is in memory, changes the newly read one. Without it
    /// such changes are dropped when the file is read again.
    private let carry: (@Sendable (_ loaded: Value, _ memory: Value, _ read: inout Value) -> Void)?

    /// Told, once per version of the file, that the file cannot be read while exchanges use it (`modify`): they go on
    /// with the value read before, and a running `kiosk serve` or `kiosk proxy` says so rather than ignore the edit.
    private let report: (@Sendable (String) -> Void)?

    /// What tells one version of the file from another: its inode (an atomic write replaces the file), its
    /// modification time to the nanosecond and its size.
    private struct Stamp: Equatable {
        var device: UInt64
        var inode: UInt64
        var seconds: Int
        var nanoseconds: Int
        var size: Int64

        /// When a write after this one is sure to change the modification time: a tick of the kernel's coarse clock
        /// is at most 10 ms; a file system that keeps whole seconds (no nanoseconds) ticks once a second.
        var settledAt: Date { modified.addingTimeInterval(nanoseconds == 0 ? 2 : 0.05) }

        /// The modification time.
        var modified: Date { Date(timeIntervalSince1970: TimeInterval(seconds) + TimeInterval(nanoseconds) / 1e9) }

        /// `bytes`, the content of the version stamped `self`, kept for comparison when the stamp was seen at `time`
        /// within the tick of its modification. A time set ahead by hand (`touch -d`, a server's clock ahead) is not:
        /// a write made now would stamp now, another time.
        func unsettled(_ bytes: Data, at time: Date) -> (stamp: Stamp, bytes: Data)? {
            time < settledAt && modified.timeIntervalSince(time) < settledAt.timeIntervalSince(modified) ? (self, bytes) : nil
        }
    }

    /// What one look at the file found: its stamp, the time just before it was taken, and, when the version last read or
    /// written has that stamp but is not settled, the file's bytes (nil when they could not be read).
    private struct Look {
        var stamp: Stamp?
        var time: Date
        var bytes: Data?
    }

    /// Changes made with `modify` (counters) not yet written.
    private struct PendingSave {
        var isDirty = false
        var lastSave = Date.distantPast
        /// Whether a save is waiting for its second to come (so that the last changes of a burst are written too).
        var isScheduled = false
    }

    /// A file at `url` holding `empty` until first written; `name` ("the mock rules") words errors; `report` is told when
    /// a version of the file that exchanges would use cannot be read.
    /// `now` tells when a version was seen, against the file system's times: the real clock but in tests.
    init(url: URL?, empty: Value, name: String, report: (@Sendable (String) -> Void)? = nil,
         carry: (@Sendable (_ loaded: Value, _ memory: Value, _ read: inout Value) -> Void)? = nil,
         now: @escaping @Sendable () -> Date = { Date() }) {
        self.report = report
        self.carry = carry
        self.url = url
        path = url?.path
        folder = url.map { open($0.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) } ?? -1
        fileName = url?.lastPathComponent ?? ""
        self.empty = empty
        self.name = name
        self.now = now
        state = Mutex(State(value: empty, loaded: empty, stamp: nil, unreadable: nil, unsettled: nil))
    }

    deinit {
        if folder >= 0 { close(folder) }
    }

    /// The current value, read again first when the file changed since it was last read or written.
    func read() throws -> Value {
        // The file is looked at before the lock is taken: every exchange asks, from both event loops at once, and a
        // stat(2) made holding the lock kept the other loop waiting on it (futex calls in a profile).
        let current = look()
        return try state.withLock { state throws(KioskError) -> Value in
            try reloadIfChanged(&state, current)
            return state.value
        }
    }

    /// Changes the value in memory only (counters saved later with `save()`), after reading the file
    /// again if it changed; a file that cannot be read leaves the value as it was.
    func modify<Result: Sendable>(_ change: (inout Value) -> Result) -> Result {
        let current = look()
        var problem: KioskError?
        let result = state.withLock { state in
            let known = state.unreadable?.stamp
            do throws(KioskError) {
                try reloadIfChanged(&state, current)
            } catch {
                if state.unreadable?.stamp != known { problem = error }
            }
            return change(&state.value)
        }
        if let problem {
            report?("\(problem.description); what was read from it before stays in use until it is fixed")
        }
        return result
    }

    /// Reads the file again if it changed, applies `change` and saves; `change` throwing saves nothing. Holds the file's
    /// lock meanwhile, so that an edit made at the same moment by another process is read first, not overwritten.
    func update<Result: Sendable>(_ change: (inout Value) throws(KioskError) -> Result) throws(KioskError) -> Result {
        try state.withLock { state throws(KioskError) -> Result in
            try withFileLock { () throws(KioskError) -> Result in
                try reloadIfChanged(&state, look(holding: state))
                var value = state.value
                let result = try change(&value)
                let bytes = try write(value)
                state.value = value
                state.loaded = value
                record(&state, written: bytes)
                return result
            }
        }
    }

    /// Runs `body` holding the lock of the file (`flock(2)` on `NAME.lock` beside it), which every process of the data
    /// folder takes to change the file: two edits at once (two `kiosk rule add`, a CLI edit beside a running proxy)
    /// each read the other's write before making their own, where the second's atomic write erased the first's.
    /// Readers take no lock: each write replaces the file whole.
    private func withFileLock<Result>(_ body: () throws(KioskError) -> Result) throws(KioskError) -> Result {
        guard let url, let path else { return try body() }
        try? SecretFile.makeFolder(url.deletingLastPathComponent())
        return try SecretFile.withLock(path + ".lock", failure: { KioskError.storage("cannot lock \(name) in \(path) for a change: \($0)") },
                                       body)
    }

    /// Writes the in-memory value, unless another process changed the file since it was read: then its
    /// change wins, and is read, over counters not yet written (a second of hits is worth less than a rule
    /// the user just added from the command line).
    func save() throws(KioskError) {
        try state.withLock { state throws(KioskError) in
            try withFileLock { () throws(KioskError) in
                let current = look(holding: state)
                guard current.stamp == state.stamp, current.bytes.map({ $0 == state.unsettled?.bytes }) ?? true else {
                    // Another process wrote the file meanwhile: its version is read first. What this one counted since
                    // is carried into it and written; without a way to carry it, it is dropped rather than written
                    // over that process's edit (a rule the user just added from the command line).
                    try reloadIfChanged(&state, current)
                    guard carry != nil else { return }
                    let bytes = try write(state.value)
                    state.loaded = state.value
                    record(&state, written: bytes)
                    return
                }
                let bytes = try write(state.value)
                state.loaded = state.value
                record(&state, written: bytes)
            }
        }
    }

    /// Marks the in-memory value changed by `modify` (a hit count), to be written by `saveIfDue`.
    func noteUnsavedChange() { pendingSave.withLock { $0.isDirty = true } }

    /// Writes changes noted since the last save, at most once a second unless `force`d: an offline replay
    /// answers dozens of requests a second, and counters need not be exact to the moment on disk. Changes made within
    /// the second of a save are written when it has passed (else the last hits of a burst would wait for the next hit,
    /// and `kiosk mock list` in another process would show counts behind the log's).
    func saveIfDue(force: Bool = false) {
        let now = Date()
        // nil: nothing to write now; 0: write now; more: write in that many seconds.
        let wait = pendingSave.withLock { pending -> TimeInterval? in
            guard pending.isDirty else { return nil }
            let wait = 1 - now.timeIntervalSince(pending.lastSave)
            guard force || wait <= 0 else {
                if pending.isScheduled { return nil }
                pending.isScheduled = true
                return wait
            }
            pending.isDirty = false
            pending.lastSave = now
            return 0
        }
        guard let wait else { return }
        guard wait > 0 else { try? save(); return }
        Task { [weak self] in
            try? await Task.sleep(for: .seconds(wait))
            self?.pendingSave.withLock { $0.isScheduled = false }
            self?.saveIfDue()
        }
    }

    /// The file's stamp, nil when it does not exist. One fstatat(2) call: every upstream request asks
    /// whether the mock and rewrite rules changed, so this must cost next to nothing (FileManager's
    /// attributes also look up the owner's and group's names).
    private func stamp() -> Stamp? {
        guard let path else { return nil }
        guard let status = FileStatus(folder: folder, name: fileName, path: path) else { return nil }
        return Stamp(device: status.device, inode: status.inode, seconds: status.modifiedSeconds,
                     nanoseconds: status.modifiedNanoseconds, size: status.size)
    }

    /// The file's stamp, taken before the lock; its bytes too when the version last read or written has that stamp but
    /// is not settled (read outside the lock, as the stamp is: every exchange looks).
    private func look() -> Look {
        look { current in hasUnsettled.load(ordering: .acquiring) && state.withLock { $0.unsettled?.stamp == current } }
    }

    /// `look()`, taken holding the lock (`state` at hand).
    private func look(holding state: State) -> Look {
        look { current in state.unsettled?.stamp == current }
    }

    /// The time, then the stamp, then the bytes when `isUnsettled` says the stamp found is that of an unsettled version.
    private func look(isUnsettled: (Stamp) -> Bool) -> Look {
        let time = now()
        let current = stamp()
        guard let current, isUnsettled(current) else { return Look(stamp: current, time: time) }
        return Look(stamp: current, time: time, bytes: url.flatMap { try? Data(contentsOf: $0) })
    }

    /// Notes the stamp of the version this process just wrote, `bytes`.
    private func record(_ state: inout State, written bytes: Data) {
        let time = now()
        let current = stamp()
        state.stamp = current
        state.unsettled = current?.unsettled(bytes, at: time)
        hasUnsettled.store(state.unsettled != nil, ordering: .releasing)
    }

    /// Reads the file again when the stamp `current` found (nil: no file) is not the one last read or written, or when it
    /// is but that version is not settled and the bytes differ. A stamp taken before the lock may be older than a write
    /// made meanwhile: the file is then read again, and once more at the next look, which finds the newer stamp.
    private func reloadIfChanged(_ state: inout State, _ current: Look) throws(KioskError) {
        guard let url else { return }
        defer { hasUnsettled.store(state.unsettled != nil, ordering: .releasing) }
        var fresh: Data?
        if let unsettled = state.unsettled, let stamp = current.stamp, unsettled.stamp == stamp {
            // The bytes are compared (read before the lock, or now if the look found another version unsettled); when they
            // cannot be read, nothing is changed: the version known stays until a look that can.
            guard let bytes = current.bytes ?? (try? Data(contentsOf: url)) else { return }
            if bytes == unsettled.bytes {
                if current.time >= stamp.settledAt { state.unsettled = nil }
                if let unreadable = state.unreadable, unreadable.stamp == stamp { throw unreadable.reason }
                return
            }
            // Written over in place within the tick: read as a new version, under the same stamp.
            state.unsettled = nil
            fresh = bytes
        } else {
            guard current.stamp != state.stamp else { return }
            guard let stamp = current.stamp else {
                state = State(value: empty, loaded: empty, stamp: nil, unreadable: nil, unsettled: nil)
                return
            }
            // A version already found unreadable is not parsed again on every exchange.
            if let unreadable = state.unreadable, unreadable.stamp == stamp { throw unreadable.reason }
        }
        guard let stamp = current.stamp else { return }
        let data: Data
        do {
            data = try fresh ?? Data(contentsOf: url)
        } catch {
            let reason = KioskError.storage("cannot read \(name) in \(url.path): \(KioskError.fileReason(error))")
            state.unreadable = (stamp, reason)
            throw reason
        }
        state.unsettled = stamp.unsettled(data, at: current.time)
        do {
            let read = try JSONDecoder().decode(Value.self, from: data)
            var value = read
            carry?(state.loaded, state.value, &value)
            state.value = value
            state.loaded = read
            state.stamp = stamp
            state.unreadable = nil
        } catch {
            let why = (error as? DecodingError)?.readableDescription(root: "the file") ?? String(describing: error)
            let reason = KioskError.storage("cannot read \(name) in \(url.path): \(why)")
            state.unreadable = (stamp, reason)
            throw reason
        }
    }

    /// Writes `value` to the file atomically and returns the bytes written.
    private func write(_ value: Value) throws(KioskError) -> Data {
        guard let url else { return Data() }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            // Its owner's only, as every file of the data folder: rules and mocks hold recorded answers and the fields
            // an app sent.
            try SecretFile.makeFolder(url.deletingLastPathComponent())
            let bytes = try encoder.encode(value)
            try SecretFile.write(bytes, to: url)
            return bytes
        } catch let error as KioskError {
            // The folder refused (others may write to it): said in its own words.
            throw error
        } catch {
            throw KioskError.storage("cannot save \(name) to \(url.path): \(KioskError.fileReason(error))")
        }
    }
}

/// A rule whose uses are counted in memory and saved now and then (`SharedJSONFile.modify`, `saveIfDue`).
protocol CountedRule {
    var id: Int { get }
    var hits: Int { get set }
}

extension CountedRule {
    /// Adds to each rule of `read` (a version of the file another process wrote) the hits `memory` counted since
    /// `loaded` was read, by id: a rule that process removed loses them, a count it reset starts from them.
    static func carryHits(loaded: [Self], memory: [Self], into read: inout [Self]) {
        let before = Dictionary(loaded.map { ($0.id, $0.hits) }, uniquingKeysWith: { first, _ in first })
        var counted: [Int: Int] = [:]
        for rule in memory {
            let delta = rule.hits - (before[rule.id] ?? rule.hits)
            if delta > 0 { counted[rule.id, default: 0] += delta }
        }
        guard !counted.isEmpty else { return }
        for index in read.indices { read[index].hits += counted[read[index].id] ?? 0 }
    }
}

extension MockRule: CountedRule {}
extension RewriteRule: CountedRule {}
