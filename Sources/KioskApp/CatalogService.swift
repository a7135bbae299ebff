package import Foundation
public import KioskCore
import KioskNetwork
package import KioskStore
import Synchronization

/// The offline-first heart of Kiosk: answers page and item requests from the store at once, revalidates
/// stale data with conditional requests, and never lets a bad response replace good stored data.
public final class CatalogService: Sendable {
    /// The sources, by id.
    public let sources: [SourceID: any CatalogSource]
    /// The store.
    package let database: AppDatabase
    private let transport: any HTTPTransport
    let now: @Sendable () -> Date
    private let recordAnswer: (@Sendable (HTTPRequest, CacheStatus, KioskError?) -> Void)?
    private let lastFreshRecord = Mutex<[PageRequest: Date]>([:])
    /// Told once when what is fetched cannot be stored (a full disk), and again after a store that worked.
    private let warn: @Sendable (String) -> Void
    /// What a page that brings no item within the upstream's own count is refused with (a sync stops its list there).
    static let emptyPage = "the page brings no item, though the upstream counts"
    /// The most items a page may bring: the four APIs give 20 (a dogs list a handful); one of thousands is a broken or
    /// hostile upstream's, and shown whole it would make a page of megabytes, each view of it, and hold them in memory.
    static let maxItemsPerPage = 1_000
    /// What a page past the first is refused with when the pages before it, as stored, show every item it brings.
    static let repeatedPage = "the page brings only items the pages before it show"
    /// How long a view waits for linked items not stored (`KioskConfiguration.linkedItemsPatience`).
    let linkedItemsPatience: Duration
    /// Whether the last store failed for want of room or rights, and when that was last said (`keeping`).
    private let cannotStore = Mutex<(failing: Bool, warned: Date?)>((false, nil))
    /// Idempotency keys of writes being applied now (CatalogService+WriteKeys.swift).
    let writesInFlight = Mutex<Set<String>>([])

    /// Dependencies: the sources, the store, the transport stack (with retry/coalescing/monitoring) and the time.
    /// `recordAnswer`, when set, is told of every page answered from the store (fresh, stale while
    /// revalidating, stale because of an error or offline) with the request it stood in for and the
    /// decision with its freshness, so the network debugger shows cache decisions that made no exchange
    /// on the wire.
    package init(sources: [SourceID: any CatalogSource], database: AppDatabase, transport: any HTTPTransport,
                now: @escaping @Sendable () -> Date = { Date() }, linkedItemsPatience: Duration = .seconds(3),
                recordAnswer: (@Sendable (HTTPRequest, CacheStatus, KioskError?) -> Void)? = nil,
                warn: @escaping @Sendable (String) -> Void = { _ in }) {
        self.warn = warn
        self.linkedItemsPatience = linkedItemsPatience
        self.sources = sources
        self.database = database
        self.transport = transport
        self.now = now
        self.recordAnswer = recordAnswer
    }

    /// Stores what was fetched with `write`; returns false when the store cannot be written now (a full disk, a
    /// read-only folder): the answer is then shown unstored, and that is said once (again only after a write has
    /// succeeded and ten minutes have passed: a disk nearly full fails one write and takes the next) — reading must not
    /// stop because keeping does. Any other failure is thrown.
    func keep(_ write: () throws -> Void) throws -> Bool {
        try keeping(write) == nil
    }

    /// `keep`, returning why what was fetched could not be kept (nil when it was).
    func keeping(_ write: () throws -> Void) throws -> KioskError? {
        do {
            try write()
            cannotStore.withLock { $0.failing = false }
            return nil
        } catch let error as KioskError where AppDatabase.cannotWrite(error) {
            let now = now()
            let first = cannotStore.withLock { state in
                defer { state.failing = true }
                guard !state.failing, state.warned.map({ now.timeIntervalSince($0) >= 600 }) ?? true else { return false }
                state.warned = now
                return true
            }
            if first { warn("What is fetched is shown but not kept for offline reading: \(error.description)") }
            return error
        }
    }

    /// Tells the recorder how a page was answered from the store. A page answered fresh is recorded at
    /// most once a second: a busy page would otherwise fill the log with identical records (and pay a
    /// log write per view) without telling anything more.
    private func record(_ request: PageRequest, source: any CatalogSource, _ status: CacheStatus, error: KioskError? = nil) {
        guard let recordAnswer, status.decision != .fresh || freshRecordIsDue(request) else { return }
        guard let httpRequest = try? source.listRequest(for: request) else { return }
        recordAnswer(httpRequest, status, error)
    }

    /// Whether a fresh answer for `request` is to be recorded now (none in the last second), noting it if so.
    private func freshRecordIsDue(_ request: PageRequest) -> Bool {
        let now = now()
        return lastFreshRecord.withLock { last -> Bool in
            if let previous = last[request], now.timeIntervalSince(previous) < 1, now >= previous { return false }
            if last.count > 1000 { last.removeAll() }
            last[request] = now
            return true
        }
    }

    /// Records a page answered fresh by a cache above this service (the web app's page cache), so the
    /// request log still shows it; returns the decision, a `hit` with the freshness `metadata` has left now.
    /// The page cache's hot path: the once-a-second check comes first.
    @discardableResult
    public func recordFreshAnswer(_ request: PageRequest, metadata: SnapshotMetadata) -> CacheStatus {
        let status = CacheStatus(.fresh, ttl: metadata.remainingFreshness(at: now()))
        guard let recordAnswer, freshRecordIsDue(request),
              let normalized = try? normalize(request), let source = sources[normalized.source],
              let httpRequest = try? source.listRequest(for: normalized) else { return status }
        recordAnswer(httpRequest, status, nil)
        return status
    }

    /// The decision for what the store answers by itself and keeps no freshness for (an item, the
    /// favorites, the store's own search): a `hit`, without `ttl`.
    public static let storeAnswer = CacheStatus(.fresh)

    /// The starred item ids of a catalog (works offline).
    public func favoriteIDs(source: SourceID) throws -> Set<String> { try database.favoriteIDs(source: source) }

    /// What the store holds, per catalog.
    public func stats() throws -> StoreStats { try database.stats() }

    /// A number that changes whenever any process commits to the store (nil for an in-memory store):
    /// a cache of rendered pages keyed by it is never stale.
    public func changeToken() throws -> Int64? { try database.changeToken() }

    /// The source for an id; throws when it is not configured.
    public func source(_ id: SourceID) throws -> any CatalogSource {
        guard let source = sources[id] else { throw KioskError.invalidRequest("Source \(id.rawValue) is not configured") }
        return source
    }

    /// Checks and normalises a request without doing any I/O (`Kiosk.checked`).
    public func normalize(_ request: PageRequest) throws -> PageRequest {
        try Kiosk.checked(request)
    }

    /// A stream of updates for a page: the stored snapshot at once (if any), then the revalidated one.
    /// It finishes after the last update; it throws only when nothing is stored and the fetch failed.
    public func updates(for request: PageRequest, policy: RefreshPolicy = .automatic)
        -> AsyncThrowingStream<CatalogUpdate, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await self.produce(request, policy: policy) { continuation.yield($0) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The final state of a page: waits for revalidation when the stored data is stale.
    public func page(_ request: PageRequest, policy: RefreshPolicy = .automatic) async throws -> CatalogUpdate {
        var last: CatalogUpdate?
        for try await update in updates(for: request, policy: policy) { last = update }
        guard let last else { throw KioskError.notFound("page \(request.page) of \(request.source.rawValue)") }
        return last
    }

    /// The first state of a page, at once: the stored snapshot when there is one (even stale), else the
    /// network's answer. A revalidation it starts goes on in the background after this returns and
    /// stores its result, so a view can show stored data now and fetch the fresh page a moment later.
    public func firstUpdate(for request: PageRequest, policy: RefreshPolicy = .automatic) async throws -> CatalogUpdate {
        let stream = updates(for: request, policy: policy)
        let first = FirstValue<CatalogUpdate>()
        return try await withCheckedThrowingContinuation { continuation in
            first.set(continuation)
            // Unstructured on purpose: the revalidation must outlive the caller, who returns as soon
            // as the stored snapshot is known. The stream is drained so the producer runs to the end.
            Task {
                do {
                    for try await update in stream { first.resume(returning: update) }
                    first.resume(throwing: KioskError.notFound("page \(request.page) of \(request.source.rawValue)"))
                } catch {
                    first.resume(throwing: error)
                }
            }
        }
    }

    private func produce(_ rawRequest: PageRequest, policy: RefreshPolicy,
                         yield: (CatalogUpdate) -> Void) async throws {
        let request = try normalize(rawRequest)
        let source = try source(request.source)
        let key = request.cacheKey
        let stored = try database.snapshot(forKey: key)
        let start = now()

        if let stored {
            let stale = !stored.metadata.isFresh(at: start)
            let willRevalidate = policy == .force || (policy == .automatic && stale)
            // The cache policy (CachePolicy.swift) says when a stale page waits for its revalidation.
            if !willRevalidate || stored.metadata.mayShowWhileRevalidating(at: start) {
                // Shown without asking: fresh, stale because the caller said offline, or while revalidating.
                let decision: CacheDecision = willRevalidate ? .staleWhileRevalidate : stale ? .offline : .fresh
                let status = CacheStatus(decision, ttl: stored.metadata.remainingFreshness(at: start))
                yield(try present(stored, source: source, origin: .store, isRevalidating: willRevalidate, error: nil, at: start,
                                  cacheStatus: status))
                record(request, source: source, status)
                if !willRevalidate { return }
            }
        } else if policy == .offline {
            throw KioskError.notFound("nothing stored for page \(request.page) of \(request.source.rawValue) (a page is kept once read "
                                      + "online, by a list or a sync, and read offline from then on)")
        }

        // Why the request goes forward (RFC 9211 §2.2): nothing stored, a stale copy, or a fresh copy the
        // caller asked to refresh.
        let forward: CacheStatus.Forward = stored.map { $0.metadata.isFresh(at: start) ? .request : .stale } ?? .miss
        var upstreamStatus: Int?
        do {
            let update = try await fetch(request, source: source, stored: stored, forward: forward, upstreamStatus: &upstreamStatus)
            yield(update)
        } catch let error as KioskError {
            guard let stored, error != .cancelled else { throw error }
            let at = now()
            let status = CacheStatus(error.isConnectivityFailure ? .offline : .staleOnError, forward: forward,
                                     forwardStatus: upstreamStatus, ttl: stored.metadata.remainingFreshness(at: at))
            record(request, source: source, status, error: error)
            // stale-if-error: keep showing what we have, and say why it is not fresh.
            yield(try present(stored, source: source, origin: .store, isRevalidating: false, error: error, at: at, cacheStatus: status))
        }
    }

    /// Fetches a page upstream (conditionally when validators are stored) and stores the result. Sets
    /// `upstreamStatus` as soon as an answer arrives, so a caller still knows it when the answer is refused.
    private func fetch(_ request: PageRequest, source: any CatalogSource, stored: Snapshot?, forward: CacheStatus.Forward,
                       upstreamStatus: inout Int?) async throws -> CatalogUpdate {
        var httpRequest = try source.listRequest(for: request)
        if let validators = stored?.metadata.validators {
            if let etag = validators.etag { httpRequest.headers["If-None-Match"] = etag }
            if let lastModified = validators.lastModified { httpRequest.headers["If-Modified-Since"] = lastModified }
        }
        let response = try await send(httpRequest)
        upstreamStatus = response.status
        let receivedAt = now()
        let policy = CachePolicy(defaultLifetime: source.defaultFreshness)
        let decision = policy.decide(headers: response.headers, receivedAt: receivedAt)
        // The decision on this answer: `ttl` and `stored` only when it was stored.
        func status(storedWith metadata: SnapshotMetadata?) -> CacheStatus {
            CacheStatus(CacheDecision(forwardedAnswer: response), forward: forward, forwardStatus: response.status,
                        ttl: metadata?.remainingFreshness(at: receivedAt), stored: metadata != nil, collapsed: response.isCollapsed)
        }

        // A 304 confirms the copy a conditional request named; one to a request that named none (no validator was
        // stored) confirms nothing, and is read below as the unexpected status it is, the stored page kept as it was.
        let asked = httpRequest.headers["If-None-Match"] != nil || httpRequest.headers["If-Modified-Since"] != nil
        if response.status == 304, asked, let stored {
            var metadata = stored.metadata
            metadata.fetchedAt = receivedAt
            if case .store(let freshUntil, let validators, let staleShownUntil) = decision {
                if response.headers["Cache-Control"] != nil || response.headers["Expires"] != nil {
                    metadata.freshUntil = freshUntil
                    metadata.staleShownUntil = staleShownUntil
                } else {
                    // RFC 9111 §4.3.4: where the 304 says nothing, the stored answer's fields stand — its freshness
                    // lifetime (a `max-age=0` page stays one to revalidate), not the source's default.
                    let was = stored.metadata
                    metadata.freshUntil = receivedAt.addingTimeInterval(max(0, was.freshUntil.timeIntervalSince(was.fetchedAt)))
                    metadata.staleShownUntil = was.staleShownUntil.map { receivedAt.addingTimeInterval($0.timeIntervalSince(was.fetchedAt)) }
                }
                if !validators.isEmpty { metadata.validators = validators }
            }
            let renewed = Snapshot(page: stored.page, metadata: metadata)
            let kept = try keep { try database.renew(renewed) }
            return try present(renewed, source: source, origin: .notModified, isRevalidating: false, error: nil, at: receivedAt,
                               cacheStatus: status(storedWith: kept ? metadata : nil))
        }

        let decoded: Page
        do {
            decoded = try source.decodeList(response, for: request)
        } catch KioskError.notFound where request.page == 1 && response.status == 404 {
            // A 404 to a list's first page is no item the reader asked for that is missing: the API lost the route, or
            // the source's base URL is wrong. A failure of the upstream, then (the CLI's exit 1, the web's 502).
            throw KioskError.httpStatus(404, url: response.url.redactedString)
        }
        if decoded.items.count > Self.maxItemsPerPage {
            throw KioskError.malformedResponse(path: "$", message: "the page brings \(decoded.items.count) items, more than the "
                + "\(Self.maxItemsPerPage) a page of Kiosk holds")
        }
        let page = decoded.withUniqueItemIDs()
        if page.items.isEmpty, let firstIssue = page.skipped.first {
            // Every item was bad: that is a bad response, and it must not replace good stored data.
            throw KioskError.malformedResponse(path: firstIssue.path,
                                               message: "no item of the page could be read (\(firstIssue.message))")
        }
        // A page within the upstream's count that brings nothing contradicts itself: a bad answer as well, which must not
        // empty a good stored page (a search, or a page past the end, that matches nothing counts 0 or is past its pages).
        if page.items.isEmpty, let total = page.totalItems, total > 0, page.totalPages.map({ request.page <= $0 }) ?? true {
            throw KioskError.malformedResponse(path: "$", message: Self.emptyPage + " \(total) in all")
        }
        // A page past the first all of whose items the stored pages before it show (page 2 answered with page 1: an
        // upstream that ignores the page asked, or numbers its items anew on each) says nothing true of its page: stored,
        // it would replace its own good copy, and its items those pages' items of the same ids.
        let ids = Set(page.items.map(\.itemID))
        if request.page > 1, !ids.isEmpty, try database.countShownBefore(request, itemIDs: ids) == ids.count {
            throw KioskError.malformedResponse(path: "$", message: Self.repeatedPage + " (page \(request.page) of \(page.totalPages.map(String.init) ?? "more"))")
        }
        // An answer edited at a breakpoint is shown as it is and never stored: the offline store holds
        // only what the upstream really said (and a user-ordered list is not re-merged from it).
        if response.isEdited {
            return CatalogUpdate(page: Self.ranked(page, source.ordering), metadata: SnapshotMetadata(fetchedAt: receivedAt, freshUntil: receivedAt),
                                 origin: .network, isStale: false, isRevalidating: false, error: nil, asOf: receivedAt,
                                 cacheStatus: status(storedWith: nil))
        }
        // A partly bad page is shown and stored, but stays stale so the next request asks again.
        let partlyBad = !page.skipped.isEmpty
        switch decision {
        case .doNotStore:
            return try unstored(page, source: source, partlyBad: partlyBad, at: receivedAt, cacheStatus: status(storedWith: nil))
        case .store(let freshUntil, let validators, let staleShownUntil):
            // A mock's answer keeps no validators: a mock made from a logged answer carries the upstream's ETag, and the
            // upstream, asked with it once the mock is gone, would confirm the mock's page as its own (304).
            let metadata = SnapshotMetadata(fetchedAt: receivedAt, freshUntil: partlyBad ? receivedAt : freshUntil,
                                            validators: partlyBad || response.isMocked ? Validators() : validators,
                                            staleShownUntil: staleShownUntil)
            let snapshot = Snapshot(page: page, metadata: metadata)
            if let notKept = try keeping({ try database.saveSnapshot(snapshot) }) {
                var update = try unstored(page, source: source, partlyBad: partlyBad, at: receivedAt, cacheStatus: status(storedWith: nil))
                update.notKept = notKept
                return update
            }
            // The user's order is only re-merged from a complete list (or on the very first load): an item
            // missing because it failed to decode must not lose its place.
            if source.ordering == .user, try !partlyBad || database.userOrdered(source.id).isEmpty {
                _ = try database.mergeUserOrder(page.items, source: source.id)
            }
            var update = try present(snapshot, source: source, origin: .network, isRevalidating: false, error: nil, at: receivedAt,
                                     cacheStatus: status(storedWith: metadata))
            update.isStale = false
            return update
        }
    }

    /// A fetched page shown without being stored (`no-store`, or a store that cannot be written): a user-ordered list
    /// still shows the user's order and deletions, merged when the store takes it, else over what it holds.
    private func unstored(_ page: Page, source: any CatalogSource, partlyBad: Bool, at receivedAt: Date,
                          cacheStatus: CacheStatus) throws -> CatalogUpdate {
        var shown = page
        if source.ordering == .user {
            let current = try database.userOrdered(source.id)
            var merged: [CatalogItem]?
            if !(partlyBad && !current.isEmpty) {
                _ = try keep { merged = try database.mergeUserOrder(page.items, source: source.id) }
            }
            shown.items = merged ?? (current.isEmpty ? page.items : current)
        }
        return CatalogUpdate(page: Self.ranked(shown, source.ordering), metadata: SnapshotMetadata(fetchedAt: receivedAt, freshUntil: receivedAt),
                             origin: .network, isStale: false, isRevalidating: false, error: nil, asOf: receivedAt, cacheStatus: cacheStatus)
    }

    /// In a ranked catalog (NYT) an item is stored once and shared by several rankings, so its rank comes
    /// from its position in the page being shown (skipped malformed items keep their places in the
    /// ranking), not from whichever list stored it last.
    static func ranked(_ page: Page, _ ordering: ItemOrdering) -> Page {
        guard ordering == .ranked else { return page }
        let skippedPositions = Set(page.skipped.compactMap { issue -> Int? in
            guard let open = issue.path.firstIndex(of: "["), let close = issue.path[open...].firstIndex(of: "]") else {
                return nil
            }
            return Int(issue.path[issue.path.index(after: open)..<close])
        })
        var ranked = page
        var position = 0
        for index in ranked.items.indices {
            while skippedPositions.contains(position) { position += 1 }
            if case .article(var article) = ranked.items[index].detail {
                article.rank = position + 1
                ranked.items[index].detail = .article(article)
            }
            position += 1
        }
        return ranked
    }

    /// Sends through the transport; turns transport-level cancellation into `KioskError.cancelled`.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        do {
            return try await transport.send(request)
        } catch is CancellationError {
            throw KioskError.cancelled
        }
    }

    /// Shapes a snapshot for display: a user-ordered list (the dogs) always shows the user's order and deletions.
    private func present(_ snapshot: Snapshot, source: any CatalogSource, origin: UpdateOrigin, isRevalidating: Bool,
                         error: KioskError?, at date: Date, cacheStatus: CacheStatus) throws -> CatalogUpdate {
        var page = snapshot.page
        if source.ordering == .user {
            page.items = try database.userOrdered(source.id)
            page.totalItems = page.items.count
        }
        return CatalogUpdate(page: Self.ranked(page, source.ordering), metadata: snapshot.metadata, origin: origin,
                             isStale: !snapshot.metadata.isFresh(at: date), isRevalidating: isRevalidating,
                             error: error, asOf: date, cacheStatus: cacheStatus)
    }
}

/// A continuation resumed at most once: later values (the revalidated update) are ignored.
private final class FirstValue<Value: Sendable>: Sendable {
    private let state = Mutex<CheckedContinuation<Value, any Error>?>(nil)

    func set(_ continuation: CheckedContinuation<Value, any Error>) { state.withLock { $0 = continuation } }

    func resume(returning value: Value) { take()?.resume(returning: value) }

    func resume(throwing error: any Error) { take()?.resume(throwing: error) }

    private func take() -> CheckedContinuation<Value, any Error>? {
        state.withLock { current in
            defer { current = nil }
            return current
        }
    }
}
