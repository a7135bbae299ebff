import Foundation
public import KioskCore
import KioskStore

/// How far a sync has come.
public struct SyncProgress: Sendable, Hashable {
    public var source: SourceID
    public var completedPages: Int
    /// Known after the first page.
    public var totalPages: Int
    public var items: Int
}

/// What a sync did.
public struct SyncReport: Sendable, Hashable, Codable {
    public var source: SourceID
    /// Pages asked for and answered: updated, unchanged or failed (one that answers after its list stopped, a repeat
    /// of pages before it, is not counted).
    public var pages: Int
    /// Pages that came back 200 and were stored.
    public var updatedPages: Int
    /// Pages the upstream confirmed unchanged (304).
    public var unchangedPages: Int
    /// Items now stored for the pages synced.
    public var items: Int
    /// Pages that failed, with why; their stored data is untouched.
    public var failures: [Failure]
    /// Wall time in seconds.
    public var seconds: Double

    /// One failed page.
    public struct Failure: Sendable, Hashable, Codable {
        public var page: String
        public var message: String
    }

    /// The report of a catalog that could not be synced at all (say, its keys are missing).
    public static func failed(_ source: SourceID, because error: KioskError) -> SyncReport {
        SyncReport(source: source, pages: 0, updatedPages: 0, unchangedPages: 0, items: 0,
                   failures: [Failure(page: source.rawValue, message: error.description)], seconds: 0)
    }
}

extension CatalogService {
    /// Fetches (conditionally) every page of a catalog, `concurrency` pages at a time, reporting progress;
    /// `includingRelated` adds the lists the catalog links to (Rick and Morty's episodes and locations).
    /// A failed page is reported and leaves its stored snapshot as it was.
    public func sync(_ source: SourceID, includingRelated: Bool = false, concurrency: Int = 6,
                     progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }) async throws -> SyncReport {
        let clock = ContinuousClock()
        let started = clock.now
        var report = SyncReport(source: source, pages: 0, updatedPages: 0, unchangedPages: 0, items: 0, failures: [],
                                seconds: 0)
        let catalog = try self.source(source)
        var plans = [catalog.syncPlan]
        if includingRelated {
            plans += catalog.relatedCollections.map {
                SyncPlan(requests: [PageRequest(source: source, collection: $0)], followsTotalPages: true)
            }
        }
        // The first page of each paged list comes first, so the progress total is known early.
        var firsts: [PageRequest] = []
        var requests: [PageRequest] = []
        for plan in plans {
            if plan.followsTotalPages, let first = plan.requests.first {
                firsts.append(first)
                requests += plan.requests.dropFirst()
            } else {
                requests += plan.requests
            }
        }
        var totalPages = firsts.count + requests.count
        // The ids each paged list has brought so far, and the lists stopped: a page past the first that brings none
        // new (empty, or repeating earlier pages) says the upstream's page count is wrong — one that claims a million
        // pages would otherwise be asked every one of them.
        var pending: ArraySlice<PageRequest> = []
        var seen: [PageRequest: Set<String>] = [:]
        var stopped: Set<PageRequest> = []
        // Where each stopped list stopped, and its failure's place in the report.
        var stops: [PageRequest: (page: Int, failure: Int)] = [:]
        let pagedLists = Set(firsts.map(Self.list))
        // How many pages each paged list's first page counted, for a stop's word on a page refused before it was read.
        var counted: [PageRequest: Int] = [:]

        /// Stops `list` at `request`, a page that brings nothing new; one already stopped stops at the lower page of the
        /// two (pages are asked several at a time, so page 3's repeat may answer before page 2's), and a page answering
        /// after its list stopped is not counted: the report's pages are those updated, unchanged or failed.
        func stop(_ list: PageRequest, at request: PageRequest, counting pages: Int?) {
            let failure = SyncReport.Failure(page: Self.describe(request), message: "stopped here: it brings no item the pages "
                + "before it did not, though the upstream counts \(pages.map(String.init) ?? "more") pages")
            if let earlier = stops[list] {
                uncount()
                if request.page < earlier.page {
                    report.failures[earlier.failure] = failure
                    stops[list] = (request.page, earlier.failure)
                }
                return
            }
            stopped.insert(list)
            stops[list] = (request.page, report.failures.count)
            totalPages -= pending.count
            pending = pending.filter { Self.list($0) != list }[...]
            totalPages += pending.count
            report.failures.append(failure)
        }

        /// A page that answered after its list stopped: neither in the report's pages nor in the progress's total.
        func uncount() {
            report.pages -= 1
            totalPages -= 1
        }

        func record(_ request: PageRequest, _ outcome: Result<CatalogUpdate, any Error>) {
            // A page the sync's cancellation (Ctrl-C) cut short was neither fetched nor failed (whatever error it ended
            // in, a "not found" of the store it fell back to among them): it is not counted, so that the line saying how
            // far the sync got does not count it.
            if case .failure = outcome, Task.isCancelled { return }
            report.pages += 1
            let list = Self.list(request)
            switch outcome {
            case .success(let update):
                let ids = Set(update.page.items.map(\.itemID))
                // A page past the first that repeats the pages before it, stopping its list or answering after that.
                let repeated = pagedLists.contains(list) && request.page > 1 && ids.isSubset(of: seen[list, default: []])
                if repeated {
                    stop(list, at: request, counting: update.page.totalPages)
                    // It says nothing true of its page (page 5 showing page 1's items again): it is not kept.
                    if update.origin == .network { _ = try? keep { try database.removeSnapshot(forKey: request.cacheKey) } }
                    break
                }
                seen[list, default: []].formUnion(ids)
                if let error = update.error ?? update.notKept {
                    report.failures.append(.init(page: Self.describe(request), message: error.description))
                } else if update.origin == .notModified {
                    report.unchangedPages += 1
                } else {
                    report.updatedPages += 1
                }
                report.items += update.page.items.count
            case .failure(let error):
                // A page that brings nothing though within the upstream's count says its count is wrong, as a repeat does.
                if pagedLists.contains(list), request.page > 1,
                   case .malformedResponse(_, let message) = error as? KioskError,
                   message.hasPrefix(Self.emptyPage) || message.hasPrefix(Self.repeatedPage) {
                    stop(list, at: request, counting: counted[list])
                } else if !stopped.contains(list) || request.page == 1 {
                    report.failures.append(.init(page: Self.describe(request), message: "\(error)"))
                } else {
                    uncount()
                }
            }
            progress(SyncProgress(source: source, completedPages: report.pages, totalPages: totalPages, items: report.items))
        }

        // Paged lists: the first page says how many there are.
        for first in firsts {
            let outcome: Result<CatalogUpdate, any Error>
            do { outcome = .success(try await page(first, policy: .force)) } catch { outcome = .failure(error) }
            if case .success(let update) = outcome, let pages = update.page.totalPages, pages > 1 {
                counted[Self.list(first)] = pages
                totalPages += pages - 1
                requests += (2...pages).map { number in
                    var next = first
                    next.page = number
                    return next
                }
            }
            record(first, outcome)
            if case .failure(let error) = outcome, firsts.count == 1, report.failures.count == 1, requests.isEmpty {
                throw error
            }
        }

        let width = max(1, concurrency)
        pending = requests[...]
        try await withThrowingTaskGroup(of: (PageRequest, Result<CatalogUpdate, any Error>).self) { group in
            // A sliding window: `width` pages on the wire, the next one starting as each finishes.
            for _ in 0..<width {
                guard let request = pending.popFirst() else { break }
                group.addTask { await self.outcome(of: request) }
            }
            while let (request, outcome) = try await group.next() {
                try Task.checkCancellation()
                record(request, outcome)
                if let next = pending.popFirst() {
                    group.addTask { await self.outcome(of: next) }
                }
            }
        }
        let elapsed = clock.now - started
        report.seconds = elapsed.seconds
        return report
    }

    /// The list a page belongs to: the request but its page.
    private static func list(_ request: PageRequest) -> PageRequest {
        var list = request
        list.page = 1
        return list
    }

    /// One page of a sync, revalidated, as a value rather than a throw.
    private func outcome(of request: PageRequest) async -> (PageRequest, Result<CatalogUpdate, any Error>) {
        do {
            return (request, .success(try await page(request, policy: .force)))
        } catch {
            return (request, .failure(error))
        }
    }

    static func describe(_ request: PageRequest) -> String {
        var text = "\(request.source.rawValue)\(request.collection.map { " \($0)s" } ?? "") page \(request.page)"
        for (key, value) in request.filters.sorted(by: { $0.key < $1.key }) { text += " \(key)=\(value)" }
        return text
    }
}
