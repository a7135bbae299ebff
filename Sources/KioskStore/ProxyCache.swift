public import Foundation
import GRDB
public import KioskCore
import Synchronization

// `kiosk proxy`'s cache of the answers apps received (`kiosk-proxy-cache.sqlite`, beside the other files):
// what lets an app behind the proxy read what it saw last when its upstream is gone. Its own file, like the
// request log, so that neither the catalogs' store nor the log waits for it, and clearing one leaves the others.
//
// - `cacheEntry`: one row per stored answer. Its key is the method, the full URL, a digest of the request's
//   credentials (one identity's answer is never given to a request made with another) and the variant: the
//   request's values of the headers the answer's `Vary` names, so one URL keeps an answer per language, say.
//   The exact status, headers and body are kept, since they are replayed as the upstream sent them; the
//   request and response times make the answer's age (RFC 9111 §4.2.3).
// - `cacheStats`: one row holding the sum of the entries' sizes, so a size check never sums the table: every write
//   that adds or removes entries adds or takes off their sizes itself, once a statement, in its own transaction
//   (`insert`, `delete`), a trigger moves it when an entry's size changes, and it is summed again from an index now
//   and then (`sumSizes`). (Triggers on every insert and delete, a
//   statement of their own for each row, were a fifth of an insert's cost and a third of an eviction's.)
// - Bounded: past `maxBytes`, the least recently used entries go first, down to 90% of the limit (an
//   eviction per ~10% written, not per answer).
// - Stored behind the answer: an app gets its answer at once, and the answers given within a tenth of a second are
//   stored together in one transaction (a commit per answer, or per burst of a few, cost the proxy a third of its
//   throughput on misses). A lookup of a URL whose answer waits for its write waits for it (and has it written at
//   once), so the process always reads what it stored; another process sees it a tenth of a second later. A failed
//   write is told to whoever stored the answer. WAL: a killed process leaves the file as it was before a transaction
//   or after it, every answer whole or absent; what waited for its write is not stored, as if it came a moment later.
// - The file and its WAL are readable by their owner only (0600): they hold the app's bodies as they were.

/// What a lookup found for a request.
public enum ProxyCacheLookup: Sendable, Hashable {
    /// An answer stored for this request.
    case found(ProxyCacheEntry)
    /// Answers are stored for the URL, but their `Vary` headers do not match this request's (RFC 9211 `vary-miss`):
    /// `varyBy`, the names those answers vary by, lowercased and sorted.
    case varyMiss(varyBy: [String])
    /// Nothing stored for the URL and these credentials (RFC 9211 `uri-miss`).
    case uriMiss
}

/// An answer to store in the proxy cache, under its key (method, URL, credentials' digest, variant).
public struct ProxyCacheAnswer: Sendable {
    /// The request's method (GET).
    public var method: String
    /// The full URL asked for.
    public var url: String
    /// The URL's host, lowercased: what the cache is listed and cleared by.
    public var host: String
    /// A digest of the request's credentials, "" for none, `importedCredentials` for an archive's answer; for a client on
    /// another machine `networkCredentials`, with ":" and the digest after it when there is one.
    public var credentials: String
    /// What an answer seeded from a HAR archive is stored under instead of a digest: an archive's credentials are not
    /// read, so its answers belong to no identity, and answer a request made with any, or none, that nothing stored
    /// for its own credentials answers. (No digest is this word: digests are 64 hex digits.)
    public static let importedCredentials = "imported"
    /// What the key's credentials start with for a request of a client on another machine (`kiosk proxy --proxy-auth`):
    /// its answers were fetched under the outbound policy, from public addresses only, and it is given no answer but
    /// those — never one a local app stored from this machine's own or private addresses.
    public static let networkCredentials = "network"

    /// Whether an entry stored under `credentials` answered a request that carried credentials of its own.
    public static func isCredentialed(_ credentials: String) -> Bool {
        !(credentials.isEmpty || credentials == importedCredentials || credentials == networkCredentials)
    }
    /// The header names the answer's `Vary` names, as the key's variant is made of.
    public var vary: String
    /// The request's values of those headers.
    public var variant: String
    /// The answer's status.
    public var status: Int
    /// The answer's header fields, as they are to be replayed.
    public var headers: HTTPHeaderFields
    /// The answer's body, whole.
    public var body: Data
    /// When the request was sent.
    public var requestTime: Date
    /// When the answer came.
    public var responseTime: Date
    /// The names of the request's fields its credentials came in (Authorization, Cookie, X-Api-Key…), which an export
    /// names with their values hidden; empty for an answer to no identity.
    public var credentialFields: [String] = []
    /// The fields and the body with the app's own credentials hidden, when the answer echoes them (a page and an export
    /// show these; the cache replays the answer exactly); nil when it does not.
    public var shownHeaders: HTTPHeaderFields?
    public var shownBody: Data?

    /// An answer to store; every field as its property says.
    public init(method: String, url: String, host: String, credentials: String, vary: String, variant: String, status: Int,
                headers: HTTPHeaderFields, body: Data, requestTime: Date, responseTime: Date) {
        self.method = method
        self.url = url
        self.host = host
        self.credentials = credentials
        self.vary = vary
        self.variant = variant
        self.status = status
        self.headers = headers
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
    }
}

/// `kiosk proxy`'s bounded SQLite cache of the answers apps got. Thread-safe; every method throws `KioskError.storage`.
public final class ProxyCache: Sendable, StoreFile {
    let writer: any DatabaseWriter
    /// Uses not written yet (entry id: when last used, how many times): a hit must not wait for a commit, so uses are
    /// written by one queued write per burst, and before anything that reads or evicts by them.
    private let pendingUses = Mutex<Pending>(Pending())

    /// What waits to be written behind: uses, and answers confirmed unchanged.
    private struct Pending {
        var uses: [Int64: (last: Date, count: Int)] = [:]
        var confirmed: [Int64: (requestTime: Date, responseTime: Date, date: String?, age: String?)] = [:]
        var isEmpty: Bool { uses.isEmpty && confirmed.isEmpty }
    }
    /// Answers given to `store(_:failed:)` and not written yet, with the lookups waiting for them.
    private let queue = Mutex(WriteQueue())
    /// The cache file.
    public let path: String?
    /// The lookup's own connections (ProxyCache+Lookup.swift).
    private let lookups: ProxyCacheLookups
    /// The rows lookups read, kept until the next commit (ProxyCache+Lookup.swift).
    private let recentLookups: RecentLookups
    /// The connection that notices other connections' commits and reads the keys they added (ProxyCache+Keys.swift);
    /// opened by the first lookup.
    private let watcher = Mutex<ProxyCacheKeyWatcher?>(nil)
    /// The most the entries may add up to, in bytes.
    public let maxBytes: Int
    /// The bound of a file no proxy has set one for: 500 MB.
    public static let defaultMaxBytes = 500 * 1_000_000

    private init(writer: any DatabaseWriter, path: String, maxBytes: Int?) throws {
        try AppDatabase.migrate(Self.migrator, writer, what: "the proxy cache", path: path)
        do {
            // The bound is the file's, set by the proxy that opened it last: a command beside it (an import) keeps to it
            // rather than to a default that would have the proxy evict most of what it stored.
            if let maxBytes {
                try writer.write { db in
                    try db.execute(sql: "UPDATE cacheStats SET maxBytes = ?", arguments: [maxBytes])
                    try Self.sumSizes(db)
                }
                self.maxBytes = maxBytes
            } else {
                self.maxBytes = try writer.read { db in try Int.fetchOne(db, sql: "SELECT maxBytes FROM cacheStats") } ?? Self.defaultMaxBytes
            }
        } catch {
            throw AppDatabase.storageError(error, while: "prepare the proxy cache's schema", path: path)
        }
        self.writer = writer
        self.path = path
        lookups = ProxyCacheLookups(path: path)
        recentLookups = RecentLookups(path: path)
    }

    /// Opens (creating it, readable by its owner only, and its folders if needed) the cache file at `path`, bounded to
    /// `maxBytes`, which becomes the file's bound — nil: the bound the file has (the running proxy's), else the default;
    /// throws `KioskError.storage` saying why when the file cannot be used.
    public static func open(at path: String, maxBytes: Int?) throws -> ProxyCache {
        try AppDatabase.prepareOwnerOnlyFile(at: path, what: "the proxy cache")
        let pool = try AppDatabase.openPool(at: path, configuration: makeDatabaseConfiguration(), what: "the proxy cache")
        return try ProxyCache(writer: pool, path: path, maxBytes: maxBytes)
    }

    // MARK: - Answers

    /// What is stored for `method` and `url` asked with `credentials` (a digest, "" for none): the entry whose
    /// variant matches the request's, as `variant(names)` gives it for the header names the entry varies on (the newest
    /// of them when several do).
    /// A found entry counts as used now (`at`) when `using` (it is about to be given to an app). With `orNewest`, when
    /// no variant matches, the newest answer stored stands (an archive's, whose recorded request fields seldom match).
    /// An answer of this process still waiting for its write is waited for (and written at once), so a lookup sees it.
    public func lookup(method: String, url: String, credentials: String, variant: (_ varyNames: String) -> String?,
                       orNewest: Bool = false, using: Bool, at now: Date) async throws -> ProxyCacheLookup {
        let key = Self.queueKey(method: method, credentials: credentials, url: url)
        do {
            guard try mayHold(key) else { return .uriMiss }
        } catch {
            throw AppDatabase.storageError(error, while: "look up the proxy cache", path: path)
        }
        await awaitQueued(key)
        // One read: the URL's entries for these credentials (nearly always one), whole.
        let rows: [ProxyCacheLookups.StoredRow]
        do {
            rows = try recentLookups.rows(key: key) { try lookups.rows(method: method, url: url, credentials: credentials) }
        } catch {
            throw AppDatabase.storageError(error, while: "look up the proxy cache", path: path)
        }
        guard !rows.isEmpty else { return .uriMiss }
        // Of the answers that match, the newest (RFC 9111 §4.1): one stored without `Vary` matches every request, and must
        // not hide a variant stored after it (a server that adds `Vary: Origin` to its CORS answers only).
        // (Stored in the same instant, the one stored last.)
        let newest = { (rows: [ProxyCacheLookups.StoredRow]) in
            rows.max(by: { ($0.entry.responseTime, $0.entry.id) < ($1.entry.responseTime, $1.entry.id) })
        }
        guard let row = newest(rows.filter { row in variant(row.vary).map { $0 == row.variant } ?? false })
                ?? (orNewest ? newest(rows) : nil) else {
            return .varyMiss(varyBy: Set(rows.flatMap { $0.vary.split(separator: ",").map(String.init) }).sorted())
        }
        var entry = row.entry
        if using {
            noteUse(id: entry.id, at: now)
            entry.hits += 1
            entry.lastUsed = now
        }
        return .found(entry)
    }

    /// Counts a use of the entry (it was given to an app) and makes it the most recently used; written behind, with
    /// the other uses of the burst.
    public func noteUse(id: Int64, at now: Date) {
        noteBehind { pending in
            let noted = pending.uses[id]
            pending.uses[id] = (max(noted?.last ?? now, now), (noted?.count ?? 0) + 1)
        }
    }

    /// Notes that the upstream sent the entry's answer again, unchanged (its status, fields but `Date` and `Age`, and
    /// body): only its times move, with the new answer's `date` and `age` fields (nil: none), which its age is reckoned
    /// from (RFC 9111 §4.2.3); written behind like uses, so an answer that does not change costs no write of its own.
    /// The app asked for it, so it is recently used too (not a hit): in `fallback` every answer online is one such, and
    /// the answers an app asks for most must be the last to go.
    public func noteConfirmed(id: Int64, requestTime: Date, responseTime: Date, date: String?, age: String?) {
        noteBehind { pending in pending.confirmed[id] = (requestTime, responseTime, date, age) }
    }

    /// Notes something to write behind, and queues the write when it is the first of its burst: a tenth of a second
    /// later, so that a busy proxy writes its hits ten times a second rather than once a hit or two.
    private func noteBehind(_ note: (inout Pending) -> Void) {
        let isFirst = pendingUses.withLock { pending in
            let wasEmpty = pending.isEmpty
            note(&pending)
            return wasEmpty
        }
        guard isFirst else { return }
        // A failed write only leaves the order of use a little stale: not worth failing an answer for.
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.writeBehindDelay) { [self] in
            writer.asyncWriteWithoutTransaction { [self] db in
                _ = try? db.inTransaction {
                    try writePendingUses(db)
                    return .commit
                }
            }
        }
    }

    /// How long what is written behind (answers, uses, confirmations) waits, to be written with what comes meanwhile.
    static let writeBehindDelay = DispatchTimeInterval.milliseconds(100)


    /// Writes the uses and confirmations noted and not written yet; must run in a write.
    private func writePendingUses(_ db: Database) throws {
        let pending = pendingUses.withLock { pending in
            defer { pending = Pending() }
            return pending
        }
        guard !pending.isEmpty else { return }
        let update = try db.cachedStatement(sql: "UPDATE cacheEntry SET lastUsed = MAX(lastUsed, ?), hits = hits + ? WHERE id = ?")
        for (id, use) in pending.uses { try update.execute(arguments: [use.last, use.count, id]) }
        let stored = try db.cachedStatement(sql: "SELECT headers FROM cacheEntry WHERE id = ? AND responseTime < ?")
        let confirm = try db.cachedStatement(sql: """
            UPDATE cacheEntry SET changedAt = \(Self.changedAfter("?1")), requestTime = ?1, responseTime = ?2, headers = ?3,
                size = size - length(headers) + ?4, lastUsed = MAX(lastUsed, ?2) WHERE id = ?5
            """)
        for (id, confirmed) in pending.confirmed {
            // An older confirmation than the stored answer moves nothing back.
            guard let data = try Data.fetchOne(stored, arguments: [id, confirmed.responseTime]) else { continue }
            var headers = Self.decode(data)
            headers["Date"] = confirmed.date
            headers["Age"] = confirmed.age
            let encoded = Self.encode(headers)
            try confirm.execute(arguments: [confirmed.requestTime, confirmed.responseTime, encoded, encoded.count, id])
        }
    }

    /// What the write-ahead log holds copied into the cache's file (before the process ends): see `foldWriteAheadLog`.
    public func foldWriteAheadLog() {
        if path != nil { writer.foldWriteAheadLog() }
    }

    /// Writes what waits to be written behind (answers, uses, confirmations): before what reads them (lists, counts) or
    /// removes entries, and before the process ends. An answer that cannot be stored is said to its `failed`.
    public func flush() {
        // A write behind already taking answers (`writingKeys`) is waited for too: this write is queued after it.
        guard queue.withLock({ !$0.answers.isEmpty || !$0.writingKeys.isEmpty }) || pendingUses.withLock({ !$0.isEmpty }) else { return }
        // A failed write of uses only leaves the order of use a little stale; answers' failures are told by writeQueued.
        _ = try? writer.writeWithoutTransaction { db in
            writeQueued(db)
            try db.inTransaction {
                try writePendingUses(db)
                return .commit
            }
        }
    }

    /// Queues `answer` to be stored under its key (replacing the one stored there before) by the next write behind, which
    /// stores every answer queued meanwhile in one transaction and evicts the least recently used entries when the cache
    /// is past its size. Returns at once whether the answer is to be stored as far as is known: false, storing nothing,
    /// when it alone is larger than a tenth of the cache (it would push out everything else) or the answers waiting
    /// already fill the queue's bound; false too while the last write failed (a full disk), though the answer is queued
    /// all the same, so that storing resumes once writes succeed. A lookup of the answer's URL waits for its write, so this
    /// process reads what it stored. `failed` is told why when the write fails.
    public func store(_ answer: ProxyCacheAnswer, failed: @escaping @Sendable (KioskError) -> Void) -> Bool {
        let answer = Encoded(answer)
        guard answer.size <= maxBytes / 10 else { return false }
        let key = Self.queueKey(method: answer.answer.method, credentials: answer.answer.credentials, url: answer.answer.url)
        let hash = proxyCacheKeyHash(key)
        let queued = queue.withLock { queue -> (schedule: Bool, failing: Bool)? in
            guard queue.answers.isEmpty || queue.bytes + answer.size <= Self.maxQueuedBytes else { return nil }
            queue.answers.append((answer, failed))
            queue.bytes += answer.size
            queue.queuedKeys.insert(key)
            queue.known.hashes.insert(hash)
            defer { queue.isScheduled = true }
            return (!queue.isScheduled, queue.isFailing)
        }
        guard let (schedule, failing) = queued else { return false }
        // The first answer of a burst schedules the write; those given before it runs are taken with it.
        if schedule {
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.writeBehindDelay) { [self] in
                writer.asyncWriteWithoutTransaction { [self] db in writeQueued(db) }
            }
        }
        return !failing
    }

    /// Returns once no answer for this method, URL and credentials is waiting to be written, asking for the write at
    /// once rather than at its scheduled time.
    private func awaitQueued(_ key: String) async {
        guard queue.withLock({ $0.holds(key) }) else { return }
        while true {
            let waited = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let (waits, writeNow) = queue.withLock { queue -> (Bool, Bool) in
                    guard queue.holds(key) else { return (false, false) }
                    queue.waiters.append(continuation)
                    let writeNow = queue.queuedKeys.contains(key) && !queue.isWriteAsked
                    if writeNow { queue.isWriteAsked = true }
                    return (true, writeNow)
                }
                if !waits { continuation.resume(returning: false) }
                if writeNow { writer.asyncWriteWithoutTransaction { [self] db in writeQueued(db) } }
            }
            // Woken by a write that may have been another's: look again.
            if !waited { return }
        }
    }

    /// Stores the answers queued (a write behind, `flush`), each caller told when its answer could not be, then wakes the
    /// lookups waiting for them; must run outside a transaction, on the writer.
    private func writeQueued(_ db: Database) {
        let taken = queue.withLock { queue in
            defer {
                queue.writingKeys.formUnion(queue.queuedKeys)
                queue.queuedKeys.removeAll()
                queue.answers.removeAll()
                queue.bytes = 0
                queue.isScheduled = false
                queue.isWriteAsked = false
            }
            return queue.answers
        }
        var failing: Bool?
        if !taken.isEmpty {
            do {
                var before: Int64 = 0
                var advanced = false
                var evicted = false
                do {
                    try db.inTransaction {
                        before = try Self.lastID(db)
                        let last = try Self.insert(taken.map(\.answer), db).max() ?? 0
                        if queue.withLock({ queue in queue.writes += 1; return queue.writes % Self.writesPerSum == 0 }) { try Self.sumSizes(db) }
                        evicted = try evictIfNeeded(db)
                        // The rows past `before` are this write's, whose keys the set holds: no lookup need read them back,
                        // not even one made while the commit checkpoints (the new WAL-index header is written by then).
                        advanced = queue.withLock { queue in
                            guard queue.known.syncedID >= before, last > queue.known.syncedID else { return false }
                            queue.known.syncedID = last
                            return true
                        }
                        return .commit
                    }
                } catch {
                    // Rolled back: those ids may be given again, by another process too, and must be read when they are.
                    // A lookup reading meanwhile may have seen the mark past them: its read is dropped (a new generation)
                    // and made again.
                    if advanced {
                        queue.withLock { queue in
                            queue.known.syncedID = min(queue.known.syncedID, before)
                            queue.known.generation += 1
                            queue.known.mustSync = true
                        }
                    }
                    throw error
                }
                failing = false
                if evicted { try? remakeKnownKeys(db) }
            } catch {
                let failure = AppDatabase.storageError(error, while: "store an answer in the proxy cache", path: path)
                for item in taken { item.failed(failure) }
                failing = true
            }
        }
        let waiters = queue.withLock { queue in
            if let failing { queue.isFailing = failing }
            defer {
                queue.writingKeys.removeAll()
                queue.waiters.removeAll()
            }
            return queue.waiters
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Whether the latest write of answers behind failed (a full disk): true until one succeeds.
    public var isFailing: Bool { queue.withLock { $0.isFailing } }

    /// The most the answers waiting for their write may add up to: past it an answer goes unstored rather than the
    /// process growing while the disk is slow.
    static let maxQueuedBytes = 64 * 1_000_000

    /// The answers waiting to be written behind, and who waits for them.
    private struct WriteQueue {
        var answers: [(answer: Encoded, failed: @Sendable (KioskError) -> Void)] = []
        var bytes = 0
        /// The keys (method, URL, credentials) of the answers queued, and of those being written.
        var queuedKeys: Set<String> = []
        var writingKeys: Set<String> = []
        /// Lookups waiting for a write of their URL, woken after the next write.
        var waiters: [CheckedContinuation<Bool, Never>] = []
        /// Whether a write is scheduled after the delay, and whether one was asked for at once.
        var isScheduled = false
        var isWriteAsked = false
        /// Whether the last write of answers failed.
        var isFailing = false
        /// How many writes of answers were made (`writesPerSum`).
        var writes = 0
        /// The keys the file may hold, these queued included.
        var known = KnownKeys()

        func holds(_ key: String) -> Bool { queuedKeys.contains(key) || writingKeys.contains(key) }
    }

    /// The key an answer is queued, waited for and known by: its method, credentials and URL.
    static func queueKey(method: String, credentials: String, url: String) -> String { method + " " + credentials + " " + url }

    /// Whether the file may hold an answer under `key`: false only when it holds none (see ProxyCache+Keys.swift). The
    /// rows other connections added since the last look are read first.
    func mayHold(_ key: String) throws -> Bool {
        try watcher.withLock { watcher in
            if watcher == nil { watcher = try ProxyCacheKeyWatcher(path: path ?? "") }
            guard let watcher else { return }
            // Read at the first lookup, not at open: the CLI's listings and counts never look up.
            if !queue.withLock({ $0.known.isLoaded }) {
                let all = try read("read the proxy cache's keys") { db in try Self.allKeys(db) }
                queue.withLock { queue in
                    guard !queue.known.isLoaded else { return }
                    // With the keys of answers queued before.
                    queue.known.hashes.formUnion(all.hashes)
                    queue.known.syncedID = all.maxID
                    queue.known.isLoaded = true
                }
            }
            let (mustSync, syncedID, generation) = queue.withLock { ($0.known.mustSync, $0.known.syncedID, $0.known.generation) }
            guard try watcher.changed() || mustSync else { return }
            let added: (hashes: [Int], maxID: Int64)
            do {
                added = try watcher.keys(after: syncedID)
            } catch {
                // The change is noticed once: it must still be read, by the next lookup.
                queue.withLock { $0.known.mustSync = true }
                throw error
            }
            queue.withLock { queue in
                // Made again meanwhile: it asked for a read of its own, from where it stands.
                guard queue.known.generation == generation else { return }
                queue.known.hashes.formUnion(added.hashes)
                queue.known.syncedID = max(queue.known.syncedID, added.maxID)
                queue.known.mustSync = false
            }
        }
        let hash = proxyCacheKeyHash(key)
        return queue.withLock { $0.known.hashes.contains(hash) }
    }

    /// Makes the set of known keys again from the file (after entries went), keeping those still waiting for their
    /// write; must run on the writer, outside a transaction. The rows other connections add after its read are read by
    /// the next lookup.
    private func remakeKnownKeys(_ db: Database) throws {
        var all: (hashes: Set<Int>, maxID: Int64) = ([], 0)
        try db.inTransaction(.deferred) {
            all = try Self.allKeys(db)
            return .commit
        }
        queue.withLock { queue in
            var hashes = all.hashes
            for key in queue.queuedKeys.union(queue.writingKeys) { hashes.insert(proxyCacheKeyHash(key)) }
            queue.known.hashes = hashes
            queue.known.syncedID = all.maxID
            queue.known.isLoaded = true
            queue.known.generation += 1
            queue.known.mustSync = true
        }
    }

    /// The largest id given so far (AUTOINCREMENT's sequence), 0 before the first.
    private static func lastID(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'cacheEntry'") ?? 0
    }

    /// Stores `answers` (an archive's) in one transaction, as `store(_:)` stores one; returns each one's id, nil for one
    /// too large to keep.
    @discardableResult
    public func store(_ answers: [ProxyCacheAnswer]) throws -> [Int64?] {
        // Known before they are written, as the answers stored behind are.
        let hashes = answers.map { proxyCacheKeyHash(Self.queueKey(method: $0.method, credentials: $0.credentials, url: $0.url)) }
        queue.withLock { queue in queue.known.hashes.formUnion(hashes) }
        var evicted = false
        let ids = try write("store answers in the proxy cache") { db in
            let encoded = answers.map(Encoded.init)
            let kept = encoded.filter { $0.size <= maxBytes / 10 }
            var inserted = try Self.insert(kept, db).makeIterator()
            let ids = encoded.map { answer in answer.size <= maxBytes / 10 ? inserted.next() : nil }
            evicted = try evictIfNeeded(db)
            return ids
        }
        if evicted { remakeKnownKeysBehind() }
        return ids
    }

    /// Whether the cache holds this very answer (`status` and `body`) for `method` and `url`, stored by the proxy itself
    /// (not from an archive): an archive of this cache imported again would hold each answer twice.
    public func holdsStored(method: String, url: String, status: Int, body: Data) throws -> Bool {
        try read("look up the proxy cache") { db in
            try Bool.fetchOne(db, sql: """
                SELECT EXISTS (SELECT 1 FROM cacheEntry WHERE method = ? AND url = ? AND credentials <> ? AND status = ?
                               AND length(body) = ? AND body = ?)
                """, arguments: [method, url, ProxyCacheAnswer.importedCredentials, status, body.count, body]) ?? false
        }
    }

    /// Whether the cache holds an answer to `method` and `url` for the variant `variant` whose response came after `time`:
    /// stored under `credentials`, or, for an archive's answer (`importedCredentials`), one the proxy stored for an app that
    /// sent none, which such a request is given first. An import leaves such an answer, as within one archive the newest wins.
    public func holdsNewer(method: String, url: String, credentials: String, variant: String, than time: Date) throws -> Bool {
        let own = credentials == ProxyCacheAnswer.importedCredentials ? "" : credentials
        return try read("look up the proxy cache") { db in
            try Bool.fetchOne(db, sql: """
                SELECT EXISTS (SELECT 1 FROM cacheEntry WHERE method = ? AND url = ? AND variant = ? AND credentials IN (?, ?)
                               AND responseTime > ?)
                """, arguments: [method, url, variant, credentials, own, time]) ?? false
        }
    }

    /// How many of the entries `ids` name are no longer stored (pushed out by the bound, removed).
    public func missing(ids: [Int64]) throws -> Int {
        let unique = Array(Set(ids))
        return try read("count stored answers") { db in
            var present = 0
            // A few hundred at a time: SQLite bounds how many values a statement may bind.
            for start in stride(from: 0, to: unique.count, by: 500) {
                let chunk = Array(unique[start..<min(start + 500, unique.count)])
                present += try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM cacheEntry WHERE id IN (\(chunk.map { _ in "?" }.joined(separator: ",")))",
                                            arguments: StatementArguments(chunk)) ?? 0
            }
            return unique.count - present
        }
    }

    /// Makes the set of known keys again on the writer (after a write that removed entries outside the write behind).
    func remakeKnownKeysBehind() {
        _ = try? writer.writeWithoutTransaction { db in try remakeKnownKeys(db) }
    }

    /// An answer to write, and the size it counts for: its body, its URL and its header fields as `encode` writes them
    /// (exact but for escapes, which the writer counts when it encodes them, off the request's path).
    struct Encoded: Sendable {
        var answer: ProxyCacheAnswer
        var size: Int

        init(_ answer: ProxyCacheAnswer) {
            self.answer = answer
            // `[["name","value"],…]`: seven bytes around each pair, a comma between pairs, two brackets around all.
            var fields = 2
            for field in answer.headers { fields += field.name.utf8.count + field.value.utf8.count + 8 }
            size = answer.body.count + answer.url.utf8.count + max(2, fields - 1)
            if let shown = answer.shownHeaders { size += ProxyCache.encode(shown).count }
            size += answer.shownBody?.count ?? 0
        }
    }

    /// Inserts each answer, or replaces the one stored under its key, within the caller's transaction, and adds the new
    /// entries' sizes to the total; returns their ids, in order.
    private static func insert(_ answers: [Encoded], _ db: Database) throws -> [Int64] {
        let before = try lastID(db)
        var added = 0
        var new: Set<Int64> = []
        let ids = try answers.map { answer in
            let (id, size) = try insert(answer, db)
            // A new entry's id is past every id given before this write (AUTOINCREMENT). One replaced (an answer stored
            // again, by this write too) had its size's change made by the `cacheEntryChanged` trigger.
            if id > before, new.insert(id).inserted { added += size }
            return id
        }
        if added != 0 { try db.execute(sql: "UPDATE cacheStats SET bytes = bytes + ?", arguments: [added]) }
        return ids
    }

    /// Inserts or replaces `encoded`'s answer within the caller's transaction; returns its entry's id and the size it
    /// counts for. The total is the caller's to move (`insert(_:_:)` for a batch).
    private static func insert(_ encoded: Encoded, _ db: Database) throws -> (id: Int64, size: Int) {
        let answer = encoded.answer
        let headers = encode(answer.headers)
        let shownHeaders = answer.shownHeaders.map(encode)
        let size = answer.body.count + headers.count + answer.url.utf8.count + (shownHeaders?.count ?? 0) + (answer.shownBody?.count ?? 0)
        let id = try db.executeRaw(db.cachedStatement(sql: insertSQL)) { values in
            values.bind(answer.method)
            values.bind(answer.url)
            values.bind(answer.host)
            values.bind(answer.credentials)
            values.bind(answer.vary)
            values.bind(answer.variant)
            values.bind(answer.status)
            values.bind(headers)
            values.bind(answer.body)
            values.bind(answer.requestTime)
            values.bind(answer.responseTime)
            values.bind(answer.responseTime)
            values.bind(size)
            values.bind(shownHeaders)
            values.bind(answer.shownBody)
            values.bind(answer.credentialFields.joined(separator: "\n"))
        }
        guard let id else { throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "the stored answer's id did not come back") }
        return (id, size)
    }

    /// Sets the total to the entries' sum, within the caller's transaction: a scan of the `cacheEntryByUse` index, which
    /// holds each entry's size (~1 ms for 25,000 entries). Made when a proxy opens the file and every `writesPerSum`
    /// writes behind, so that a total another writer left wrong — a proxy of a version before schema v4 still running
    /// beside this one, whose statements no longer move it — comes right within seconds, not never.
    private static func sumSizes(_ db: Database) throws {
        try db.execute(sql: "UPDATE cacheStats SET bytes = (SELECT COALESCE(SUM(size), 0) FROM cacheEntry INDEXED BY cacheEntryByUse)")
    }

    /// How many writes behind (ten a second at the most) pass between two `sumSizes`.
    static let writesPerSum = 100

    /// Runs `statement`, a DELETE of entries ending in `RETURNING size`, within the caller's transaction, and takes what
    /// the entries it removed held off the total; returns how many went.
    private static func delete(_ statement: Statement, _ arguments: StatementArguments = StatementArguments(), _ db: Database) throws -> Int {
        let sizes = try Int.fetchAll(statement, arguments: arguments)
        let freed = sizes.reduce(0, +)
        if freed != 0 { try db.execute(sql: "UPDATE cacheStats SET bytes = bytes - ?", arguments: [freed]) }
        return sizes.count
    }

    /// Inserts an answer or replaces the one stored under its key, returning its entry's id.
    private static let insertSQL = """
            INSERT INTO cacheEntry (method, url, host, credentials, vary, variant, status, headers, body, requestTime,
                                    responseTime, lastUsed, hits, size, shownHeaders, shownBody, credentialFields)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)
            ON CONFLICT (method, url, credentials, variant) DO UPDATE SET
                host = excluded.host, vary = excluded.vary, status = excluded.status, headers = excluded.headers,
                body = excluded.body, requestTime = excluded.requestTime, responseTime = excluded.responseTime,
                lastUsed = excluded.lastUsed, size = excluded.size, shownHeaders = excluded.shownHeaders,
                shownBody = excluded.shownBody, credentialFields = excluded.credentialFields,
                changedAt = \(changedAfter("excluded.requestTime"))
            RETURNING id
            """


    /// Refreshes a stored answer with the header fields of a 304 that confirmed it (RFC 9111 §4.3.4; `renewed(_:with:)`);
    /// the body stays, and its times become the 304's. Only while the entry still holds the representation the 304 speaks
    /// of — `validators`, its ETag and Last-Modified when it was revalidated: an answer stored under the key meanwhile (the
    /// upsert keeps the id) is another, and is left. `hiding` makes the fields as a page may show them (nil when they
    /// hide nothing), as when the answer was stored. The entry becomes recently used (an app asked for it). Returns whether
    /// the entry was refreshed (false: it is gone or changed).
    @discardableResult
    public func refresh(id: Int64, validators: HTTPHeaderFields, with notModified: HTTPHeaderFields, requestTime: Date, responseTime: Date,
                        hiding: @Sendable (HTTPHeaderFields) -> HTTPHeaderFields? = { _ in nil }) throws -> Bool {
        try write("refresh an answer in the proxy cache") { db in
            guard let data = try Data.fetchOne(db, sql: "SELECT headers FROM cacheEntry WHERE id = ?", arguments: [id]) else { return false }
            let stored = Self.decode(data)
            guard stored["ETag"] == validators["ETag"], stored["Last-Modified"] == validators["Last-Modified"] else { return false }
            let headers = Self.renewed(stored, with: notModified)
            let encoded = Self.encode(headers)
            let shown = hiding(headers).map(Self.encode)
            try db.execute(sql: """
                UPDATE cacheEntry SET headers = ?1, shownHeaders = ?2, changedAt = \(Self.changedAfter("?3")), requestTime = ?3,
                    responseTime = ?4, size = size - length(headers) - COALESCE(length(shownHeaders), 0) + ?5,
                    lastUsed = MAX(lastUsed, ?4)
                WHERE id = ?6
                """, arguments: [encoded, shown, requestTime, responseTime, encoded.count + (shown?.count ?? 0), id])
            return true
        }
    }

    /// A stored answer's fields renewed by a 304's (RFC 9111 §4.3.4): each field the 304 carries replaces the stored ones of
    /// its name, but Content-Length, which describes the 304's own empty body; the stored Age and Date go when the 304
    /// has none, since the answer's age is reckoned from the 304 from then on.
    public static func renewed(_ stored: HTTPHeaderFields, with notModified: HTTPHeaderFields) -> HTTPHeaderFields {
        var headers = stored
        // Each field by the name as the 304 spells it (ETag, not etag), once however many lines it has.
        var seen = Set<String>()
        for field in notModified where field.name.lowercased() != "content-length" && seen.insert(field.name.lowercased()).inserted {
            headers.removeAll(named: field.name)
            for value in notModified.values(for: field.name) { headers.add(name: field.name, value: value) }
        }
        for name in ["Age", "Date"] where notModified[name] == nil { headers.removeAll(named: name) }
        return headers
    }

    /// Whether any answer to `method` `url` is stored or waits to be, whatever its credentials and variant (a look at the
    /// queue, then one read of the key's index).
    public func holdsAnswers(method: String, url: String) throws -> Bool {
        let (prefix, suffix) = (method + " ", " " + url)
        let waiting = { (key: String) in key.hasPrefix(prefix) && key.hasSuffix(suffix) }
        if queue.withLock({ $0.queuedKeys.contains(where: waiting) || $0.writingKeys.contains(where: waiting) }) { return true }
        return try read("look for stored answers") { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM cacheEntry WHERE method = ? AND url = ?)", arguments: [method, url]) ?? false
        }
    }

    /// The entry with this id, nil when there is none.
    public func entry(id: Int64) throws -> ProxyCacheEntry? {
        flush()
        return try read("read an answer of the proxy cache") { db in
            try Row.fetchOne(db, sql: "SELECT * FROM cacheEntry WHERE id = ?", arguments: [id]).map(Self.entry)
        }
    }

    /// The entry `id` with what its key says of the request it answers, as an export writes it: the names of the fields
    /// that request carried credentials in (an identity's answer, not an imported one's; nil for none — for an entry
    /// stored before the names were kept, `Authorization`), and the fields its `Vary` named with their values (a field
    /// the request lacked left out); nil when there is no such entry.
    public func exportedEntry(id: Int64) throws -> (entry: ProxyCacheEntry, credentialFields: [String]?, variedFields: [(name: String, value: String)])? {
        flush()
        return try read("read an answer of the proxy cache") { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM cacheEntry WHERE id = ?", arguments: [id]) else { return nil }
            let credentials: String = row["credentials"]
            let names: String = row["credentialFields"] ?? ""
            let credentialFields = ProxyCacheAnswer.isCredentialed(credentials)
                ? (names.isEmpty ? ["Authorization"] : names.split(separator: "\n").map(String.init)) : nil
            let entry = Self.entry(row)
            return (entry, credentialFields, entry.varied.compactMap { field in field.value.map { (field.name, $0) } })
        }
    }

    /// The entries, most recently used first, at most `limit`, of one host when `host` is given; without their bodies.
    public func entries(host: String? = nil, limit: Int = 1000) throws -> [ProxyCacheEntry] {
        let hostArguments = try host.map(Self.hostArguments)
        flush()
        return try read("list the proxy cache") { db in
            let columns = "id, method, url, host, status, headers, X'' AS body, requestTime, responseTime, lastUsed, hits, size, shownHeaders, changedAt, variant"
            let rows = if let hostArguments {
                try Row.fetchAll(db, sql: "SELECT \(columns) FROM cacheEntry WHERE \(Self.hostCondition) ORDER BY lastUsed DESC LIMIT ?",
                                 arguments: StatementArguments(hostArguments + [limit]))
            } else {
                try Row.fetchAll(db, sql: "SELECT \(columns) FROM cacheEntry ORDER BY lastUsed DESC LIMIT ?", arguments: [limit])
            }
            return rows.map(Self.entry)
        }
    }

    /// The condition on an entry of `hostArguments(host)`: its host, and when a port is given, its URL's origin too.
    static let hostCondition = "host = ? AND (? = '' OR substr(url, 1, length(?)) = ? OR substr(url, 1, length(?)) = ?)"

    /// The values of `hostCondition` for `host` as a user writes it: a name or address (`api.example.com`, `::1`),
    /// alone for every port, or with one (`localhost:3000`, `[::1]:8443`) for that port's answers alone — the scheme's
    /// own port being the one a URL leaves out (`example.com:443` is `https://example.com/`). Anything else is refused:
    /// read loosely, `localhost:30OO` would be every port of localhost, and a clear would remove them all.
    static func hostArguments(_ host: String) throws -> [any DatabaseValueConvertible] {
        let (name, port) = try hostAndPort(host)
        guard let port else { return [name, "", "", "", "", ""] }
        let authority = name.contains(":") ? "[\(name)]" : name
        let origin = { (scheme: String) in port == (scheme == "https" ? 443 : 80) ? "\(scheme)://\(authority)/" : "\(scheme)://\(authority):\(port)/" }
        return [name, String(port), origin("http"), origin("http"), origin("https"), origin("https")]
    }

    /// `host` split into a lowercased name or address and its port, if one is given; throws `KioskError.invalidRequest`
    /// saying what is wrong with it.
    static func hostAndPort(_ host: String) throws -> (name: String, port: Int?) {
        let host = host.lowercased()
        // A URL (copied from the log or a browser) is the commonest slip: said as such, not as a malformed address.
        if host.contains("://") { throw hostRefusal(host, "give a host's name or address, with :PORT if you like, not a URL") }
        var name = host, port: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw hostRefusal(host, "an address in [ ] lacks its ]") }
            name = String(host[host.index(after: host.startIndex)..<close])
            let rest = host[host.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { throw hostRefusal(host, "only :PORT may follow the ]") }
            if rest.hasPrefix(":") { port = rest.dropFirst() }
            guard name.contains(":"), IPAddress(literal: name) != nil else { throw hostRefusal(host, "[ ] hold an IPv6 address") }
        } else if host.filter({ $0 == ":" }).count == 1, let colon = host.firstIndex(of: ":") {
            name = String(host[..<colon])
            port = host[host.index(after: colon)...]
        } else if host.contains(":"), IPAddress(literal: host) == nil {
            throw hostRefusal(host, "it is not an IPv6 address")
        }
        guard !name.isEmpty else { throw hostRefusal(host, "the host's name is missing") }
        let refused = Set(" \t/?#@[]\\%")
        guard !name.contains(where: { refused.contains($0) || $0.isNewline }) else {
            throw hostRefusal(host, "give a host's name or address, with :PORT if you like, not a URL")
        }
        guard let port else { return (name, nil) }
        guard let number = Int(port), port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber), (1...65_535).contains(number) else {
            throw hostRefusal(host, "the port must be a number from 1 to 65535")
        }
        return (name, number)
    }

    /// Throws `KioskError.invalidRequest` unless `host` is nil or a host as `entries(host:)` and `clear(host:)` take it.
    public static func check(host: String?) throws {
        if let host { _ = try hostAndPort(host) }
    }

    private static func hostRefusal(_ host: String, _ why: String) -> KioskError {
        .invalidRequest("--host \(host.debugDescription) is not a host: \(why) (example.com, localhost:3000, [::1]:8443).")
    }

    /// How many answers the cache file at `path` holds, read without writing anything (opening the cache writes: on
    /// a full disk it cannot be opened, and this still counts what clearing it removes).
    public static func countEntries(at path: String) throws -> Int {
        do {
            let queue = try DatabaseQueue(path: path, configuration: AppDatabase.readOnlyConfiguration())
            return try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM cacheEntry") ?? 0 }
        } catch {
            throw AppDatabase.storageError(error, while: "count the proxy cache", path: path)
        }
    }

    /// What is stored per host — with its port when the URLs name one (`localhost:3000`, as the log and `--host` write
    /// it: a machine's several local servers are told apart) —, the largest first; each with the `key` that lists or
    /// clears exactly its answers.
    public func hostStats() throws -> [ProxyCacheHostStats] {
        flush()
        let rows = try read("count the proxy cache") { db in
            // Grouped by the URL's scheme and authority, read by the entries' own reading of them (`ProxyCacheEntry.origin`).
            db.add(function: Self.originFunction)
            return try Row.fetchAll(db, sql: """
                SELECT \(Self.originFunction.name)(url) AS origin,
                       COUNT(*) AS entries, SUM(size) AS bytes, SUM(hits) AS hits, MIN(responseTime) AS oldest, MAX(responseTime) AS newest
                FROM cacheEntry GROUP BY 1
                """)
        }
        // http://example.com:443 and https://example.com are the same answers to `--host example.com:443`: one line.
        var byKey: [String: ProxyCacheHostStats] = [:]
        for row in rows {
            // Every stored URL is absolute (the cache keys only such): one without a scheme would have no host to count under.
            let origin: String? = row["origin"]
            guard let origin, let (scheme, authority) = ProxyCacheEntry.origin(ofURL: origin) else { continue }
            let hasPort = authority.hasPrefix("[") ? authority.contains("]:") : authority.contains(":")
            let key = hasPort ? authority : authority + (scheme == "https" ? ":443" : ":80")
            let line = ProxyCacheHostStats(host: authority, key: key, entries: row["entries"], bytes: row["bytes"], hits: row["hits"],
                                           oldest: row["oldest"], newest: row["newest"])
            if let merged = byKey[key] {
                byKey[key] = ProxyCacheHostStats(host: merged.host.count <= authority.count ? merged.host : authority, key: key,
                                                 entries: merged.entries + line.entries, bytes: merged.bytes + line.bytes,
                                                 hits: merged.hits + line.hits, oldest: min(merged.oldest, line.oldest),
                                                 newest: max(merged.newest, line.newest))
            } else {
                byKey[key] = line
            }
        }
        return byKey.values.sorted { ($1.bytes, $0.host) < ($0.bytes, $1.host) }
    }

    /// `kiosk_origin(url)`: a stored URL's `scheme://authority` as `ProxyCacheEntry.origin` reads it, for grouping by host.
    private static let originFunction = DatabaseFunction("kiosk_origin", argumentCount: 1, pure: true) { values in
        guard let url = String.fromDatabaseValue(values[0]), let origin = ProxyCacheEntry.origin(ofURL: url) else { return nil }
        return origin.scheme + "://" + origin.authority
    }

    /// The sum of the entries' sizes, in bytes.
    public func sizeInBytes() throws -> Int {
        flush()
        return try read("measure the proxy cache") { db in try Int.fetchOne(db, sql: "SELECT bytes FROM cacheStats") ?? 0 }
    }

    /// Removes one entry; false when there was none with that id.
    @discardableResult
    public func remove(id: Int64) throws -> Bool {
        flush()
        return try write("remove an answer from the proxy cache") { db in
            try Self.delete(db.cachedStatement(sql: "DELETE FROM cacheEntry WHERE id = ? RETURNING size"), [id], db) > 0
        }
    }

    /// Marks every answer stored for each of `urls` (as keys spell them), of any variant and identity, as changed `at`
    /// (`ProxyCacheEntry.changedAt`): what an unsafe request that succeeded does to its URL (RFC 9111 §4.4 lets a cache
    /// remove them or mark them as needing validation; marked, they can still stand in when the upstream is gone, so a
    /// list an app adds to stays readable offline). Answers of theirs still waiting to be written go first. Returns how
    /// many were marked.
    @discardableResult
    public func invalidate(urls: [String], at now: Date) throws -> Int {
        flush()
        return try write("mark changed answers in the proxy cache") { db in
            var marked = 0
            // The unique index leads with the method and the URL.
            let statement = try db.cachedStatement(sql: "UPDATE cacheEntry SET changedAt = ? WHERE method IN ('GET', 'HEAD') AND url = ?")
            for url in Set(urls) {
                try statement.execute(arguments: [now, url])
                marked += db.changesCount
            }
            return marked
        }
    }

    /// What an upsert, a refresh or a confirmation sets `changedAt` to: cleared by an answer asked for after the change
    /// (it is the resource as changed; one asked in the same millisecond counts as after), kept by one asked for before it
    /// and stored after (it may be the old one).
    /// `requestTime` names the parameter or column holding the new answer's request time.
    private static func changedAfter(_ requestTime: String) -> String {
        "CASE WHEN changedAt <= \(requestTime) THEN NULL ELSE changedAt END"
    }

    /// Removes every entry, or a host's; returns how many went. The file gives the space back.
    @discardableResult
    public func clear(host: String? = nil) throws -> Int {
        let values: [any DatabaseValueConvertible] = try host.map(Self.hostArguments) ?? []
        // Answers waiting to be written are stored first, so that none comes back after the clear.
        flush()
        let removed = try write("clear the proxy cache") { db in
            let statement = try db.cachedStatement(sql: host == nil
                ? "DELETE FROM cacheEntry WHERE id IN (SELECT id FROM cacheEntry LIMIT \(Self.entriesPerDelete)) RETURNING size"
                : "DELETE FROM cacheEntry WHERE id IN (SELECT id FROM cacheEntry WHERE \(Self.hostCondition) LIMIT \(Self.entriesPerDelete)) RETURNING size")
            let arguments = StatementArguments(values.map(\.databaseValue))
            var removed = 0
            while true {
                let count = try Self.delete(statement, arguments, db)
                if count == 0 { return removed }
                removed += count
            }
        }
        remakeKnownKeysBehind()
        // Outside a transaction, as VACUUM's incremental form must be; a failure leaves the space to be reused.
        _ = try? writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA incremental_vacuum")
            try db.checkpoint(.truncate)
        }
        return removed
    }

    /// The most entries one statement deletes (a clear, an eviction): a statement's journal, kept in memory
    /// (AppDatabase.sideFileConfiguration), holds every page it changes, and one statement emptying a full cache held
    /// them all (+325 MB of memory for 330 MB of answers).
    static let entriesPerDelete = 500

    /// Over the limit: the least recently used entries go, down to 90% of it. Returns whether any went.
    private func evictIfNeeded(_ db: Database) throws -> Bool {
        // Eviction goes by use: the uses noted so far count.
        try writePendingUses(db)
        let total = try Int.fetchOne(db, sql: "SELECT bytes FROM cacheStats") ?? 0
        guard total > maxBytes else { return false }
        var excess = total - maxBytes * 9 / 10
        let victims = try Row.fetchCursor(db, sql: "SELECT id, size FROM cacheEntry ORDER BY lastUsed, id")
        var ids: [Int64] = []
        while excess > 0, let row = try victims.next() {
            ids.append(row["id"])
            excess -= row["size"] as Int
        }
        for chunk in stride(from: 0, to: ids.count, by: Self.entriesPerDelete) {
            let part = ids[chunk..<min(chunk + Self.entriesPerDelete, ids.count)]
            let list = part.map { _ in "?" }.joined(separator: ",")
            _ = try Self.delete(db.makeStatement(sql: "DELETE FROM cacheEntry WHERE id IN (\(list)) RETURNING size"), StatementArguments(Array(part)), db)
        }
        return !ids.isEmpty
    }

    // MARK: - Rows

    private static func entry(_ row: Row) -> ProxyCacheEntry {
        var entry = ProxyCacheEntry(id: row["id"], method: row["method"], url: row["url"], host: row["host"], status: row["status"],
                                    headers: decode(row["headers"]), body: row["body"] ?? Data(), requestTime: row["requestTime"],
                                    responseTime: row["responseTime"], lastUsed: row["lastUsed"], hits: row["hits"], size: row["size"])
        entry.shownHeaders = (row["shownHeaders"] as Data?).map(decode)
        entry.shownBody = row["shownBody"]
        entry.changedAt = row["changedAt"]
        if let variant: String = row["variant"] { entry.varied = variedFields(variant) }
        return entry
    }

    /// The fields a key's variant names (`ProxyCachingTransport`'s `variant(for:)`: `name=value` lines, a name alone for a
    /// field the request lacked), in its order.
    static func variedFields(_ variant: String) -> [ProxyCacheEntry.VariedField] {
        variant.split(separator: "\n").map { part in
            guard let equals = part.firstIndex(of: "=") else { return ProxyCacheEntry.VariedField(name: String(part), value: nil) }
            return ProxyCacheEntry.VariedField(name: String(part[..<equals]), value: String(part[part.index(after: equals)...]))
        }
    }

    /// Header fields as a JSON array of [name, value] pairs, keeping their order and repeats (as the request log keeps them).
    static func encode(_ headers: HTTPHeaderFields) -> Data {
        Data(OrderedJSON.pairsText(headers).utf8)
    }

    /// The fields `encode` wrote; read on every hit.
    static func decode(_ data: Data) -> HTTPHeaderFields {
        HTTPHeaderFields(OrderedJSON.pairs(fromJSON: String(decoding: data, as: UTF8.self)) ?? [])
    }

    // MARK: - Schema

    static func makeDatabaseConfiguration() -> GRDB.Configuration {
        // Two `kiosk proxy` processes on one data directory share the file: one waits for the other's write.
        AppDatabase.sideFileConfiguration(label: "KioskProxyCache")
    }

    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE cacheEntry (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    method TEXT NOT NULL,
                    url TEXT NOT NULL,
                    host TEXT NOT NULL,
                    credentials TEXT NOT NULL,
                    vary TEXT NOT NULL,
                    variant TEXT NOT NULL,
                    status INTEGER NOT NULL,
                    headers BLOB NOT NULL,
                    body BLOB NOT NULL,
                    requestTime DATETIME NOT NULL,
                    responseTime DATETIME NOT NULL,
                    lastUsed DATETIME NOT NULL,
                    hits INTEGER NOT NULL,
                    size INTEGER NOT NULL,
                    UNIQUE (method, url, credentials, variant)
                );
                CREATE INDEX cacheEntryByUse ON cacheEntry (lastUsed);
                CREATE INDEX cacheEntryByHost ON cacheEntry (host);
                CREATE TABLE cacheStats (bytes INTEGER NOT NULL);
                INSERT INTO cacheStats (bytes) VALUES (0);
                CREATE TRIGGER cacheEntryAdded AFTER INSERT ON cacheEntry BEGIN
                    UPDATE cacheStats SET bytes = bytes + new.size;
                END;
                CREATE TRIGGER cacheEntryChanged AFTER UPDATE OF size ON cacheEntry BEGIN
                    UPDATE cacheStats SET bytes = bytes - old.size + new.size;
                END;
                CREATE TRIGGER cacheEntryRemoved AFTER DELETE ON cacheEntry BEGIN
                    UPDATE cacheStats SET bytes = bytes - old.size;
                END;
                """)
        }
        // The bound the proxy was started with (`--cache-size`), for the commands beside it.
        migrator.registerMigration("v2") { db in
            try db.execute(sql: "ALTER TABLE cacheStats ADD COLUMN maxBytes INTEGER")
        }
        // What a page and an export show of an answer that echoed its app's own credentials (ProxyCacheAnswer.shownBody).
        migrator.registerMigration("v3") { db in
            try db.execute(sql: "ALTER TABLE cacheEntry ADD COLUMN shownHeaders BLOB; ALTER TABLE cacheEntry ADD COLUMN shownBody BLOB")
        }
        // The total moved by the writes that insert and delete entries, in their statements' transactions, rather than
        // by a trigger statement for each row. It stays as the triggers kept it, equal to the entries' sum (not summed
        // again: that would read every page of a full cache at the first start after the upgrade).
        migrator.registerMigration("v4") { db in
            try db.execute(sql: "DROP TRIGGER cacheEntryAdded; DROP TRIGGER cacheEntryRemoved")
        }
        // Each entry's size in the index of use, so that the total can be summed again from the index alone (`sumSizes`).
        migrator.registerMigration("v5") { db in
            try db.execute(sql: "DROP INDEX cacheEntryByUse; CREATE INDEX cacheEntryByUse ON cacheEntry (lastUsed, size)")
        }
        // The names of the fields an identity's answer was asked with, for an export to name (ProxyCacheAnswer.credentialFields).
        // A proxy of an earlier version beside this one stores none: its answers are exported as before.
        migrator.registerMigration("v6") { db in
            try db.execute(sql: "ALTER TABLE cacheEntry ADD COLUMN credentialFields TEXT NOT NULL DEFAULT ''")
        }
        // When a write to an answer's URL succeeded after it was stored (ProxyCacheEntry.changedAt). A proxy of an earlier
        // version beside this one still removes such answers, and stores without clearing the mark: its own answers to a
        // URL marked before are given only once confirmed or when the upstream is gone, as a marked one is.
        migrator.registerMigration("v7") { db in
            try db.execute(sql: "ALTER TABLE cacheEntry ADD COLUMN changedAt DATETIME")
        }
        return migrator
    }()
}
