public import Foundation
import GRDB
public import KioskCore
import Synchronization

// The network debugger's request log: its own SQLite file (`kiosk-log.sqlite`, next to the main
// database) with its own WAL `DatabasePool`, so that logging never waits for a catalog sync's
// write and a catalog read never waits for a log flush.
//
// The capture path calls `enqueue` on every upstream request. It only appends the record to a
// Mutex'd buffer; the first record of a burst queues one write on the log's writer, `batchingDelay`
// later, which stores the whole buffer in one transaction: a commit (and FTS5's work per statement)
// costs about as much as storing an 18 KB record, so a sync's exchanges are stored a few at a time
// rather than one by one. Every read stores what is waiting first, so the debugger never shows a
// list without the requests already made. A failed flush drops its records and counts them: the
// request being logged has already been answered and must never fail because of the log.
//
// Full-text indexing, the costliest part of storing a record (FTS5 hashing its words and their
// prefixes), is deferred too: a stored burst is indexed `indexingDelay` later in one pass of its own
// (at most `indexingBatch` records a transaction, so queued stores are not held up), by then mostly
// after the sync or page load that made it, instead of on the cores serving it. A search never
// misses a stored record: a read that matches text first indexes whatever still waits.
//
// Bounds: the log keeps the sum of its records' sizes and of their bodies, each stored body counted once however
// many records carry it (`sizeInBytes`), in a one-row table updated
// in the same transaction as every insert and delete, so deciding whether to evict is one row
// read per flush. Over `maxBytes`, the oldest records are deleted by one id range down to 90% of
// the limit, so that a full log evicts once per ~10% of the limit written rather than on every
// flush. Records older than `maxAge` are looked for at most once a minute (an index seek).
// RequestLog+Schema.swift explains the tables and why the file stays bounded.

/// The network debugger's request log: a size- and age-bounded SQLite file of `RequestRecord`s,
/// full-text searchable over URLs and bodies. Thread-safe; every method throws `KioskError.storage`.
public final class RequestLog: Sendable, StoreFile {
    /// The log's bounds and clock.
    public struct Configuration: Sendable {
        /// The most the stored records may add up to (their text, and each stored body once), in bytes.
        public var maxBytes: Int64
        /// Records that started longer ago than this are evicted.
        public var maxAge: TimeInterval
        /// The clock (injected by tests).
        public var now: @Sendable () -> Date
        /// How long, in seconds, an enqueued record waits for others to be stored with it in one
        /// transaction (`flush` stores it at once); 0 queues the write at once.
        public var batchingDelay: TimeInterval
        /// How long, in seconds, stored records wait before they are added to the full-text index, so
        /// that a burst is indexed in one pass after it (a text search indexes them at once); 0 indexes
        /// them in the transaction that stores them.
        public var indexingDelay: TimeInterval
        /// Runs work `delay` seconds from now: when a burst is stored and when it is indexed. The system's
        /// timer, unless a test moves time itself.
        public var schedule: @Sendable (_ delay: TimeInterval, _ work: @escaping @Sendable () -> Void) -> Void

        /// Creates a configuration; the defaults are 50 MB and 7 days on the system clock, records
        /// stored within 50 ms of being enqueued and indexed a second after they are stored, on the system's timer.
        public init(maxBytes: Int64 = 50 * 1024 * 1024, maxAge: TimeInterval = 7 * 86400,
                    now: @escaping @Sendable () -> Date = Date.init,
                    batchingDelay: TimeInterval = 0.05, indexingDelay: TimeInterval = 1,
                    schedule: @escaping @Sendable (_ delay: TimeInterval, _ work: @escaping @Sendable () -> Void) -> Void = systemTimer) {
            self.maxBytes = maxBytes
            self.maxAge = maxAge
            self.now = now
            self.batchingDelay = batchingDelay
            self.indexingDelay = indexingDelay
            self.schedule = schedule
        }

        /// The system's timer: `work` on a global queue once `delay` seconds have passed.
        public static let systemTimer: @Sendable (TimeInterval, @escaping @Sendable () -> Void) -> Void = { delay, work in
            DispatchQueue.global().asyncAfter(deadline: .now() + delay, execute: work)
        }
    }

    /// What the writer and the capture path share.
    struct State {
        /// Records enqueued and not yet stored, oldest first, each made by the writer when it stores them.
        var pending: [DeferredRecord] = []
        /// Whether a queued write will store `pending` (so that a burst queues only one).
        var isFlushScheduled = false
        /// Whether an indexing pass is queued (so that a burst queues only one).
        var isIndexingScheduled = false
        /// Records enqueued and neither committed nor dropped yet, including those a write has taken
        /// from `pending` and not committed: a read waits for them, so it sees every request made.
        var unstored = 0
        /// Told about every committed change (the debugger's live console).
        var observer: (@Sendable (Change) -> Void)?
        /// Records that could not be stored.
        var dropped = 0
        /// Whether the latest write of records failed (a full disk): the first failure of a run of them is told.
        var isFailing = false
        /// Told why, when a write of records fails after one that did not (`onStoreFailure`).
        var failureReport: (@Sendable (String) -> Void)?
        /// When records older than `maxAge` were last looked for; nil before the first write.
        var lastAgeCheck: Date?
        /// Whether enqueued records are kept (false while the console's recording is paused).
        var isRecording = true
        /// Counts the changes of `isRecording` (`recordingGeneration`).
        var generation: UInt64 = 0
        /// What the records in `pending` hold, roughly (`DeferredRecord.size`).
        var pendingBytes = 0
    }

    /// The connection (a WAL `DatabasePool` on disk, a `DatabaseQueue` in memory).
    let writer: any DatabaseWriter
    /// The log file, or nil for an in-memory log.
    public let path: String?
    /// The bounds and clock this log was opened with.
    public let configuration: Configuration
    let state = Mutex(State())

    /// How many enqueued records may wait for the writer before new ones are dropped (and counted):
    /// the buffer must not grow without bound if the disk stalls.
    static let maxPendingRecords = 10_000

    /// How many bytes of bodies and text the waiting records may hold before new ones are dropped (and counted): with
    /// bodies captured up to a megabyte each, the count alone would let the buffer hold gigabytes.
    static let maxPendingBytes = 64 << 20

    /// How many records one background indexing transaction adds at most: a long backlog (a log
    /// written by a process that stopped before indexing it) is indexed without holding up the
    /// stores queued behind it.
    static let indexingBatch = 2_000

    init(writer: any DatabaseWriter, path: String?, configuration: Configuration) throws {
        self.writer = writer
        self.path = path
        self.configuration = configuration
        // A log a newer Kiosk has written may keep its records in a way this build does not know (since v5, which
        // records are indexed): `migrate` refuses it.
        try AppDatabase.migrate(Self.migrator, writer, what: "the request log", path: path)
        // Records an earlier process stored and did not index yet.
        if (try? writer.read(Self.hasUnindexedRecords)) == true { scheduleIndexing() }
    }

    /// Opens (creating it and its parent folders if needed) and migrates the log file at `path`;
    /// throws `KioskError.storage` saying why when the file cannot be used.
    public static func open(at path: String, configuration: Configuration = Configuration()) throws -> RequestLog {
        // Readable by its owner only: it holds apps' exchanges, redacted but whole.
        try AppDatabase.prepareOwnerOnlyFile(at: path, what: "the request log")
        let pool = try AppDatabase.openPool(at: path, configuration: makeDatabaseConfiguration(), what: "the request log")
        return try RequestLog(writer: pool, path: path, configuration: configuration)
    }

    /// A fresh, empty log that lives in memory only (for tests and throwaway runs).
    public static func inMemory(configuration: Configuration = Configuration()) throws -> RequestLog {
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(configuration: makeDatabaseConfiguration())
        } catch {
            throw AppDatabase.storageError(error, while: "create an in-memory request log", path: nil)
        }
        return try RequestLog(writer: queue, path: nil, configuration: configuration)
    }

    // MARK: - Writing

    /// Stores `record` now (after any enqueued records, keeping the log in order) and returns its id.
    @discardableResult
    public func append(_ record: RequestRecord) throws -> Int64 {
        var taken: ClosedRange<Int64>?
        // The queued records taken here are committed (or lost) with this transaction.
        defer { settle(taken?.count ?? 0) }
        let id = try write("store a request in the request log") { db in
            // A failure of the queued records is theirs (counted as dropped), not this record's.
            taken = try? storePending(db)
            let id = try Self.insert([record], db)
            try evictIfNeeded(db)
            try indexIfImmediate(db)
            return id
        }
        // A record stored: the next failure is a new one, told again.
        state.withLock { $0.isFailing = false }
        scheduleIndexing()
        // Consecutive: this transaction stored the queued records, then this one.
        announce(.stored((taken?.lowerBound ?? id)...id))
        return id
    }

    /// Queues `record` to be stored with the others of its burst, without waiting for a commit;
    /// never throws: a record that cannot be stored is counted in `droppedCount`.
    public func enqueue(_ record: RequestRecord) {
        enqueue(DeferredRecord(record))
    }

    /// Queues a record the writer makes when it stores it with the others of its burst (the capture's: its redaction
    /// then runs off the request's path, and not at all for a record dropped); never throws: a record that cannot be
    /// stored is counted in `droppedCount`.
    public func enqueue(_ record: DeferredRecord) {
        let shouldSchedule = state.withLock { state in
            // An exchange begun before a pause or a resume since is not logged: one begun while paused is not a "new
            // request" of the recording resumed, and one begun before a pause and ended after the resume straddles a gap.
            guard state.isRecording, record.generation.map({ $0 == state.generation }) ?? true else { return false }
            let size = record.size
            // One record is always taken into an empty buffer, however large: the cap bounds what waits, not what fits.
            guard state.pending.count < Self.maxPendingRecords,
                  state.pending.isEmpty || state.pendingBytes + size <= Self.maxPendingBytes else {
                state.dropped += 1
                return false
            }
            state.pending.append(record)
            state.pendingBytes += size
            state.unstored += 1
            defer { state.isFlushScheduled = true }
            return !state.isFlushScheduled
        }
        guard shouldSchedule else { return }
        let store: @Sendable () -> Void = { [self] in
            writer.asyncWriteWithoutTransaction { [self] db in
                // Errors are counted by storePending; nothing may escape into the request path.
                _ = try? storePending(db)
            }
        }
        // On the configured timer, not the `now` clock: this is how soon the work happens, not what it
        // decides, and `flush` stores whatever is still waiting.
        if configuration.batchingDelay > 0 {
            configuration.schedule(configuration.batchingDelay, store)
        } else {
            store()
        }
    }

    /// Waits until every record enqueued before this call is stored (or counted as dropped);
    /// throws when the records it stores itself cannot be stored.
    public func flush() throws {
        // The writer runs accesses one at a time in the order they were queued, so this write runs
        // after any queued flush, and stores whatever was enqueued since.
        do {
            _ = try writer.writeWithoutTransaction { db in try storePending(db) }
        } catch {
            throw AppDatabase.storageError(error, while: "store the queued requests in the request log", path: path)
        }
    }

    /// What the write-ahead log holds copied into the log's file (before the process ends): see `foldWriteAheadLog`.
    public func foldWriteAheadLog() {
        if path != nil { writer.foldWriteAheadLog() }
    }

    /// Closes the log's connections, so that its files hold no space once removed; every later use
    /// of this log fails.
    public func close() throws {
        do {
            try writer.close()
        } catch {
            throw AppDatabase.storageError(error, while: "close the request log", path: path)
        }
    }

    /// Whether `enqueue` keeps records: false while recording is paused, when exchanges go unlogged (and
    /// uncounted); this process only, and on again at the next start.
    public var isRecording: Bool {
        get { state.withLock { $0.isRecording } }
        set {
            state.withLock { state in
                if state.isRecording != newValue { state.generation += 1 }
                state.isRecording = newValue
            }
        }
    }

    /// A number that changes each time recording is paused or resumed: what an exchange begins under, for its record
    /// (`DeferredRecord.generation`) to be logged only if recording has stayed as it was.
    public var recordingGeneration: UInt64 { state.withLock { $0.generation } }

    /// Waits, at most `maximumWait`, while the records waiting for the writer fill more than half of what may wait: an
    /// exchange whose record would be dropped once the queue is full is held back instead, so a proxy under more load than
    /// the writer stores goes at the writer's pace and its log loses nothing. Past the wait (a disk that stalled) it goes
    /// on, its record dropped and counted if there is still no room: proxying never stops for the log. Returns at once
    /// when there is room, or the task is cancelled.
    public func waitForRoom(maximumWait: Duration = .seconds(1)) async {
        guard isCrowded else { return }
        let deadline = ContinuousClock.now + maximumWait
        while isCrowded, ContinuousClock.now < deadline {
            do { try await Task.sleep(for: .milliseconds(1)) } catch { return }
        }
    }

    /// Whether the records waiting for the writer fill more than half of what may wait (see `waitForRoom`).
    private var isCrowded: Bool {
        state.withLock { state in
            state.isRecording && (state.pending.count > Self.maxPendingRecords / 2 || state.pendingBytes > Self.maxPendingBytes / 2)
        }
    }

    /// How many enqueued records could not be stored (a failed write, or too many waiting), in this process.
    public var droppedCount: Int {
        state.withLock { $0.dropped }
    }

    // MARK: - Reading

    /// The records matching `filter`, newest first, at most `filter.limit`, without their bodies
    /// (`requestBody` and `responseBody` are nil: use `record(id:)` for those).
    public func records(matching filter: RequestFilter) throws -> [RequestRecord] {
        guard filter.limit > 0 else { return [] }
        storeWaitingRecords()
        indexWaitingRecords(for: filter)
        return try read("search the request log") { db in try Self.fetchRecords(matching: filter, db) }
    }

    /// The records among `ids` matching `filter`, newest first, without bodies: what a live console shows of
    /// records just committed (their row's type is the answer's `Content-Type`). Those ids are stored already, so unlike `records(matching:)`
    /// this neither stores the queued records nor waits for the writer (which would break its batches up),
    /// unless `filter` matches text: the records are then indexed first.
    public func committedRecords(_ ids: ClosedRange<Int64>, matching filter: RequestFilter) throws -> [RequestRecord] {
        indexWaitingRecords(for: filter)
        var range = filter
        range.afterID = ids.lowerBound - 1
        range.beforeID = ids.upperBound + 1
        range.limit = ids.count
        return try read("read the new requests") { db in try Self.fetchRecords(matching: range, db) }
    }

    /// The records matching `filter` with their bodies, newest first, at most `maximum` (the filter's own
    /// limit does not apply).
    public func fullRecords(matching filter: RequestFilter, maximum: Int = 100_000) throws -> [RequestRecord] {
        let batches = try fullRecordBatches(matching: filter, maximum: maximum)
        var oldestFirst: [RequestRecord] = []
        while let batch = try batches() { oldestFirst += batch }
        return oldestFirst.reversed()
    }

    /// The newest `maximum` records matching `filter` (its own limit does not apply) with their bodies, handed out oldest
    /// first, `size` at a time, then nil: what an export reads, holding one batch of bodies at a time. The records'
    /// ids are read first, without bodies; one evicted meanwhile is left out.
    public func fullRecordBatches(matching filter: RequestFilter, maximum: Int = 100_000,
                                  size: Int = 50) throws -> () throws -> [RequestRecord]? {
        storeWaitingRecords()
        indexWaitingRecords(for: filter)
        var ids: [Int64] = []
        var page = filter
        while ids.count < maximum {
            page.limit = min(1000, maximum - ids.count)
            let batch = try read("export the request log") { db in
                try Self.fetchRecords(matching: page, includingHeaders: false, db)
            }
            ids += batch.map(\.id)
            guard batch.count == page.limit, let last = batch.last else { break }
            page.beforeID = last.id
        }
        ids.reverse()
        var next = 0
        return { [self] in
            guard next < ids.count else { return nil }
            let chunk = ids[next..<min(next + size, ids.count)]
            next += chunk.count
            // The same filter over the chunk's span of ids matches exactly the chunk's records.
            var span = filter
            span.afterID = chunk[chunk.startIndex] - 1
            span.beforeID = chunk[chunk.endIndex - 1] + 1
            span.limit = chunk.count
            return try read("export the request log") { db in try Self.fetchRecords(matching: span, includingBodies: true, db) }.reversed()
        }
    }

    /// The whole record with its bodies, or nil when there is none with this id (or it was evicted).
    public func record(id: Int64) throws -> RequestRecord? {
        storeWaitingRecords()
        return try read("read a request from the request log") { db in try Self.fetchRecord(id: id, db) }
    }

    /// The newest record's id in the file, whichever process stored it (0 for none); records this process has not
    /// stored yet are not counted.
    public func newestID() throws -> Int64 {
        try newest(keeping: 0).id
    }

    /// The newest record's id in the file (0 for none), and whether the record `id` is still there (true for 0).
    public func newest(keeping id: Int64) throws -> (id: Int64, kept: Bool) {
        try read("read the request log's newest id") { db in
            let row = try Row.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0), ? = 0 OR EXISTS (SELECT 1 FROM logEntry WHERE id = ?) FROM logEntry",
                                       arguments: [id, id])
            return (row?[0] ?? 0, row?[1] ?? true)
        }
    }

    /// How many records the log holds.
    public func count() throws -> Int {
        storeWaitingRecords()
        return try read("count the request log") { db in try Self.fetchCount(db) }
    }

    /// How many records the log holds, and the newest one's id (0 for none), read at one moment: a live console counts
    /// on from there, each record once.
    public func countAndNewestID() throws -> (count: Int, newest: Int64) {
        storeWaitingRecords()
        return try read("count the request log") { db in
            (try Self.fetchCount(db), try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM logEntry") ?? 0)
        }
    }

    /// The sum of the stored records' sizes (bodies plus text) in bytes: what `maxBytes` bounds.
    public func sizeInBytes() throws -> Int64 {
        storeWaitingRecords()
        return try read("measure the request log") { db in try Self.storedBytes(db) }
    }

    // MARK: - Maintenance

    /// Deletes every record (including those still queued) and gives the space back to the disk.
    public func clear() throws {
        state.withLock { state in
            state.unstored -= state.pending.count
            state.pending.removeAll()
            state.pendingBytes = 0
        }
        try write("clear the request log") { db in try Self.deleteAll(db) }
        announce(.cleared)
        // As in AppDatabase.clearCache: the file shrinks only at a truncating checkpoint, which a
        // reader may prevent; the WAL is then reused rather than grown, so ignoring that is safe.
        if path != nil {
            _ = try? writer.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        }
    }

    /// Removes the records older than `maxAge`, then the oldest records until the stored size is
    /// under `maxBytes` (to 90% of it, so that the next records fit without another eviction).
    public func evict() throws {
        var taken: ClosedRange<Int64>?
        defer { settle(taken?.count ?? 0) }
        try write("evict old requests from the request log") { db in
            taken = try? storePending(db)
            try evictExpired(db)
            try evictOversized(db)
            try indexIfImmediate(db)
        }
        if taken != nil { state.withLock { $0.isFailing = false } }
        guard let taken else { return }
        scheduleIndexing()
        announce(.stored(taken))
    }

    /// Adds every stored record not indexed yet to the full-text index now (they are otherwise indexed
    /// `indexingDelay` after they are stored, or before a text search); returns whether any waited.
    @discardableResult
    public func updateSearchIndex() throws -> Bool {
        guard try read("look for requests to index", Self.hasUnindexedRecords) else { return false }
        // A transaction per batch: stores queued meanwhile (the writer runs accesses in order) are not
        // held up by a long backlog.
        while try write("index the request log", { db in try Self.indexStoredRecords(maximum: Self.indexingBatch, maxBytes: configuration.maxBytes, db) }) {}
        return true
    }

    /// Before a read that matches text: indexes the records still waiting, so that none is missed.
    /// When that cannot be written (a full disk, another process holding the file), the search still
    /// runs over what is indexed, as every read keeps working then.
    private func indexWaitingRecords(for filter: RequestFilter) {
        guard let text = filter.text, text.contains(where: { !$0.isWhitespace }) else { return }
        _ = try? updateSearchIndex()
    }

    /// With no indexing delay, indexes what the caller's transaction stored, in it.
    private func indexIfImmediate(_ db: Database) throws {
        guard configuration.indexingDelay <= 0 else { return }
        _ = try Self.indexStoredRecords(maximum: nil, maxBytes: configuration.maxBytes, db)
    }

    /// Queues one indexing pass `indexingDelay` from now, unless one is queued already; a pass that
    /// leaves records waiting (more than `indexingBatch`) queues the next at once, and a failed pass
    /// (a full disk, the file locked by another process) tries again after the delay.
    func scheduleIndexing(after delay: TimeInterval? = nil) {
        let delay = delay ?? configuration.indexingDelay
        guard configuration.indexingDelay > 0 else { return }
        let shouldSchedule = state.withLock { state in
            defer { state.isIndexingScheduled = true }
            return !state.isIndexingScheduled
        }
        guard shouldSchedule else { return }
        configuration.schedule(delay) { [self] in
            writer.asyncWriteWithoutTransaction { [self] db in
                state.withLock { $0.isIndexingScheduled = false }
                var more = false
                do {
                    try db.inTransaction {
                        more = try Self.indexStoredRecords(maximum: Self.indexingBatch, maxBytes: configuration.maxBytes, db)
                        return .commit
                    }
                    if more { scheduleIndexing(after: 0) }
                } catch {
                    scheduleIndexing()
                }
            }
        }
    }

    /// Stores the enqueued records before a read, so that it sees every request already made.
    /// A failure is counted by `storePending` and leaves the read to what is stored.
    func storeWaitingRecords() {
        // Not only `pending`: a write may have taken records and not committed them yet, and a read
        // (another connection) would not see them. The writer runs accesses one at a time, so this
        // one runs after that write has committed.
        guard state.withLock({ $0.unstored > 0 }) else { return }
        _ = try? writer.writeWithoutTransaction { db in try storePending(db) }
    }

    // MARK: - Observing

    /// What changed in the log, told after the change is committed (a reader then sees it).
    public enum Change: Sendable, Hashable {
        /// Records with these ids were stored (some may already be evicted again).
        case stored(ClosedRange<Int64>)
        /// Every record was deleted.
        case cleared
    }

    /// Calls `report` with the reason (a full disk) when storing records fails after a write that did not, on the
    /// writer's thread: the records are dropped and counted, and the first failure of a run of them is told. Replaces
    /// any earlier one.
    public func onStoreFailure(_ report: @escaping @Sendable (String) -> Void) {
        state.withLock { $0.failureReport = report }
    }

    /// Calls `observer` after every committed change, on the thread that made it (the log's writer
    /// or the caller of `append`, `evict` or `clear`); it must return quickly. Replaces any earlier one.
    public func observe(_ observer: @escaping @Sendable (Change) -> Void) {
        state.withLock { $0.observer = observer }
    }

    func announce(_ change: Change) {
        state.withLock { $0.observer }?(change)
    }

    /// Stores the enqueued records, returning the ids they got (nil when none waited), so that a
    /// failure drops (and counts) only them; must run on the writer. Outside a transaction it commits
    /// them in one of their own and announces them; inside the caller's (append, evict) the caller
    /// commits them, then calls `settle` and `announce`.
    @discardableResult
    func storePending(_ db: Database) throws -> ClosedRange<Int64>? {
        let records = state.withLock { state in
            state.isFlushScheduled = false
            defer {
                state.pending.removeAll()
                state.pendingBytes = 0
            }
            return state.pending
        }.map { $0.make() }
        guard !records.isEmpty else { return nil }
        let isCallersTransaction = db.isInsideTransaction
        var lastID: Int64 = 0
        do {
            if isCallersTransaction {
                // A savepoint keeps a failure from undoing the caller's work.
                try db.inSavepoint {
                    lastID = try Self.insert(records, db)
                    return .commit
                }
            } else {
                defer { settle(records.count) }
                try db.inTransaction {
                    lastID = try Self.insert(records, db)
                    try evictIfNeeded(db)
                    try indexIfImmediate(db)
                    return .commit
                }
                scheduleIndexing()
            }
        } catch {
            let report = state.withLock { state in
                state.dropped += records.count
                defer { state.isFailing = true }
                return state.isFailing ? nil : state.failureReport
            }
            if let report {
                let reason = if case .storage(let message) = AppDatabase.storageError(error, while: "store requests in the request log",
                                                                                    path: path) { message } else { "\(error)" }
                report(reason)
            }
            // Dropped, so no read waits for them (the caller, told by the error, settles nothing).
            if isCallersTransaction { settle(records.count) }
            throw error
        }
        // Committed (in the caller's transaction the caller commits, and says so: `append`, `evict`).
        if !isCallersTransaction { state.withLock { $0.isFailing = false } }
        // The ids of one insert are consecutive (this is the only writer).
        let ids = (lastID - Int64(records.count) + 1)...lastID
        if !isCallersTransaction { announce(.stored(ids)) }
        return ids
    }

    /// Records `count` taken records as committed or dropped: reads no longer wait for them.
    func settle(_ count: Int) {
        guard count > 0 else { return }
        state.withLock { $0.unstored -= count }
    }

    /// The amortized eviction run after each write: a size check is one row read, and the age
    /// check an index seek at most once a minute.
    func evictIfNeeded(_ db: Database) throws {
        let now = configuration.now()
        let isAgeCheckDue = state.withLock { state in
            if let last = state.lastAgeCheck, abs(now.timeIntervalSince(last)) < Self.ageCheckInterval { return false }
            state.lastAgeCheck = now
            return true
        }
        if isAgeCheckDue { try evictExpired(db) }
        if try Self.storedBytes(db) > configuration.maxBytes { try evictOversized(db) }
    }

    /// How often, by the injected clock, automatic eviction looks for expired records.
    static let ageCheckInterval: TimeInterval = 60
}

