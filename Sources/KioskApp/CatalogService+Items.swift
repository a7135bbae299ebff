public import Foundation
public import KioskCore
import KioskStore

/// One item for a detail screen.
public struct ItemResult: Sendable, Hashable {
    /// The item.
    public var item: CatalogItem
    /// Where it came from.
    public var origin: UpdateOrigin
    /// Why a refresh failed, when stored data is shown instead.
    public var error: KioskError?
    /// Whether the user starred it.
    public var isFavorite: Bool
    /// What it links to (a character's episodes and places), as far as stored or fetched.
    public var linked: LinkedItems
    /// How Kiosk's cache decided the item itself, in RFC 9211 terms.
    public var cacheStatus: CacheStatus
}

/// The answer to a search.
public struct SearchResult: Sendable, Hashable {
    /// Where results came from.
    public enum Origin: String, Sendable, Hashable, Codable {
        /// The upstream's search (Marvel, Rick and Morty).
        case upstream
        /// Full-text search over stored items.
        case store
    }
    /// The query as searched.
    public var query: String
    /// Matching items, best first.
    public var items: [CatalogItem]
    /// Where they came from.
    public var origin: Origin
    /// Why the upstream was not used, when it failed and the store answered instead.
    public var error: KioskError?
    /// The page of results (upstream search pages like lists; the store's best matches are one page).
    public var page: Int
    /// How many pages of results there are, when known.
    public var totalPages: Int?
    /// How many items match in all, on every page, when known (the upstream's count; the store's matches, one page:
    /// unknown when more match than it gives).
    public var totalItems: Int?
    /// Whether the store holds more matches than the best ones it gave (its search is one page: a word more narrows it).
    public var moreMatch = false
    /// How Kiosk's cache decided the answer, in RFC 9211 terms: the upstream page's decision, or a `hit`
    /// for the store's own search (which, after a failed upstream search, says why it went forward).
    public var cacheStatus: CacheStatus
    /// When the upstream's results shown were fetched, when they came from Kiosk's store rather than the upstream just
    /// now (a search made before, still fresh); nil otherwise. A face says their age when the upstream is unreachable.
    public var savedAt: Date?

    /// Whether the page asked for is past the results' last: not the store's stand-in for a failed upstream search, whose
    /// one page says nothing of the upstream's. A face says so as it says a list's page past its end.
    public var isPastTheEnd: Bool {
        guard error == nil, let totalPages else { return false }
        return page > max(totalPages, 1)
    }
}

extension CatalogService {
    /// One item: from the store, or fetched (and stored) when missing, stale-by-request (`.force`) or
    /// never fetched in detail. Sources without an item endpoint (NYT, dogs) answer from the store only.
    /// The items it links to come with it (`linkedItems`), page `linkedPage` of those shown a page at a
    /// time; failing to get them never fails the item.
    public func item(source sourceID: SourceID, itemID: String, policy: RefreshPolicy = .automatic,
                     linkedPage: Int = 1) async throws -> ItemResult {
        var result = try await itemAlone(source: sourceID, itemID: itemID, policy: policy)
        try checkLinkedPage(linkedPage, of: result.item)
        // After a failed fetch that says the upstream is unreachable, the links are read from the store
        // rather than waiting for the same failure again.
        let linkedPolicy = result.error?.isConnectivityFailure == true ? .offline : policy
        result.linked = await linkedItems(of: result.item, page: linkedPage, policy: linkedPolicy)
        // Read from the store for that failure, what it does not hold is missing for the same reason.
        if linkedPolicy != policy, result.linked.error == nil, result.linked.entries.contains(where: { $0.item == nil }) {
            result.linked.error = result.error
        }
        return result
    }

    private func itemAlone(source sourceID: SourceID, itemID: String, policy: RefreshPolicy) async throws -> ItemResult {
        let source = try source(sourceID)
        // A number written with leading zeros (`/rickandmorty/01`) is the item the upstream answers for it, stored and
        // starred under its own id: read as that one (it was fetched every time, and shown unstarred).
        let id = try storedItemID(itemID, source: sourceID)
        // A dog deleted from the list is gone for the reader until the list is reset, its page and star too.
        if source.ordering == .user { try database.checkNotDeleted(sourceID, itemID: id) }
        let stored = try database.item(source: sourceID, itemID: id)
        let favorite = { try self.database.favoriteIDs(source: sourceID).contains(id) }
        // An id the upstream cannot be asked about (a duplicate renumbered `0-2`) is read from the store.
        let request: HTTPRequest?
        do {
            request = try source.detailRequest(itemID: id)
        } catch let error as KioskError {
            guard stored != nil, case .invalidRequest = error else { throw error }
            request = nil
        }
        guard let request, policy != .offline else {
            guard let stored else {
                throw KioskError.notFound("\(sourceID.rawValue) item \(id) (not in the store; list the catalog first)")
            }
            return ItemResult(item: stored, origin: .store, error: nil, isFavorite: try favorite(), linked: .none,
                              cacheStatus: Self.storeAnswer)
        }
        if let stored, policy == .automatic {
            return ItemResult(item: stored, origin: .store, error: nil, isFavorite: try favorite(), linked: .none,
                              cacheStatus: Self.storeAnswer)
        }
        // Items keep no freshness: one goes forward because it is missing, or because the caller asked.
        let forward: CacheStatus.Forward = stored == nil ? .miss : .request
        var upstreamStatus: Int?
        do {
            let response = try await send(request)
            upstreamStatus = response.status
            let item = try source.decodeDetail(response, itemID: id)
            // An answer edited at a breakpoint or by a rule is shown, never stored: the offline store
            // holds only what the upstream really said, as for pages.
            let kept = try !response.isEdited && keep { try database.saveItems([item]) }
            return ItemResult(item: item, origin: .network, error: nil, isFavorite: try favorite(), linked: .none,
                              cacheStatus: CacheStatus(CacheDecision(forwardedAnswer: response), forward: forward,
                                                       forwardStatus: response.status, stored: kept,
                                                       collapsed: response.isCollapsed))
        } catch let error as KioskError {
            guard let stored, error != .cancelled else { throw error }
            return ItemResult(item: stored, origin: .store, error: error, isFavorite: try favorite(), linked: .none,
                              cacheStatus: CacheStatus(error.isConnectivityFailure ? .offline : .staleOnError, forward: forward,
                                                       forwardStatus: upstreamStatus))
        }
    }

    /// Searches a catalog: 3+ characters go upstream for sources with an upstream search, everything else
    /// (short queries, NYT, dogs, `.offline`, or an unreachable upstream) searches the store.
    public func search(source sourceID: SourceID, text: String, page: Int = 1, filters: [String: String] = [:],
                       policy: RefreshPolicy = .automatic) async throws -> SearchResult {
        let source = try source(sourceID)
        let query = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !query.isEmpty else { throw KioskError.invalidRequest("Search text is empty") }
        guard query.count <= 200 else { throw KioskError.invalidRequest("Search text is longer than 200 characters") }
        guard page >= 1 else { throw KioskError.invalidRequest("Page must be 1 or more, got \(page)") }
        // The store's best matches are a single page, whatever the filters (they are the upstream's). After
        // a failed upstream search, the decision says how the request went forward and why it failed; the
        // stored page's freshness is left out, as that page is not what is shown.
        let stored = { (error: KioskError?, forwarded: CacheStatus?) throws -> SearchResult in
            var status = Self.storeAnswer
            if let error, let forwarded {
                status = CacheStatus(error.isConnectivityFailure ? .offline : .staleOnError, forward: forwarded.forward,
                                     forwardStatus: forwarded.forwardStatus)
            }
            let (items, more) = page == 1 ? try self.localSearch(source, query, filters: filters) : ([], false)
            return SearchResult(query: query, items: items, origin: .store, error: error, page: page, totalPages: 1,
                                totalItems: page == 1 && !more ? items.count : nil, moreMatch: more, cacheStatus: status)
        }
        if source.search.isRemote(query), policy != .offline {
            do {
                let update = try await self.page(PageRequest(source: sourceID, page: page, query: query, filters: filters),
                                                 policy: policy)
                if let error = update.error, error.isConnectivityFailure { return try stored(error, update.cacheStatus) }
                return SearchResult(query: query, items: update.page.items, origin: .upstream, error: update.error,
                                    page: page, totalPages: update.page.totalPages, totalItems: update.page.totalItems,
                                    cacheStatus: update.cacheStatus,
                                    savedAt: update.origin == .network ? nil : update.asOf.addingTimeInterval(-update.age))
            } catch let error as KioskError where error.isConnectivityFailure || error.isRetryable || Self.isUnreadable(error) {
                // Nothing was stored for this search: it went forward as a miss, and nothing usable came back.
                return try stored(error, CacheStatus(.network, forward: .miss, forwardStatus: Self.upstreamStatus(of: error)))
            }
        }
        return try stored(nil, nil)
    }

    /// Whether `error` says the upstream answered what cannot be read (bad JSON, a body cut short): the store's matches
    /// serve a search better than the error, as when the upstream is unreachable.
    private static func isUnreadable(_ error: KioskError) -> Bool {
        switch error {
        case .malformedResponse, .truncatedBody: true
        default: false
        }
    }

    /// The status an upstream answered with, as far as `error` tells (UpstreamStatus.check made it).
    private static func upstreamStatus(of error: KioskError) -> Int? {
        switch error {
        case .httpStatus(let status, _): status
        case .rateLimited: 429
        default: nil
        }
    }

    /// The store's best matches for `query` within `filters` (as the upstream's search keeps them), and whether more match
    /// than those.
    private func localSearch(_ source: any CatalogSource, _ query: String, filters: [String: String]) throws -> (items: [CatalogItem], more: Bool) {
        // One more than a page: whether it comes says whether more match. A list its user orders leaves out what the user
        // deleted after the search, and filters what they do not match: such searches are asked for whole (a catalog's
        // store is thousands of items at most), so that what is left out does not hide a 51st.
        let filters = try source.normalize(PageRequest(source: source.id, filters: filters)).filters
        let whole = source.ordering == .user || filters.keys.contains(where: source.itemFilterNames.contains)
        var items = try database.search(query, source: source.id, limit: whole ? 10_000 : Self.storeSearchPage + 1)
        items = items.filter { source.matches($0, filters: filters) }
        if source.ordering == .user {
            // Deleted items stay deleted, in search too.
            let visible = Set(try database.userOrdered(source.id).map(\.itemID))
            items = items.filter { visible.contains($0.itemID) }
        }
        return (Array(items.prefix(Self.storeSearchPage)), items.count > Self.storeSearchPage)
    }

    /// How many of the store's best matches a search gives.
    static let storeSearchPage = 50

    // MARK: Favorites

    /// The id an item is stored and starred under, for an id as a person wrote it (" 01" is Rick and Morty's 1); throws
    /// `invalidRequest` for an empty one.
    public func storedItemID(_ written: String, source sourceID: SourceID) throws -> String {
        let id = try source(sourceID).canonicalItemID(written.trimmingCharacters(in: .whitespaces))
        guard !id.isEmpty else { throw KioskError.invalidRequest("An item id is required") }
        return id
    }

    /// The item as stored, whether or not its list still shows it (a dog deleted from the list is still stored): for a
    /// refusal to name it. Nil when it is not stored.
    public func storedItem(source: SourceID, itemID: String) throws -> CatalogItem? {
        try database.item(source: source, itemID: try storedItemID(itemID, source: source))
    }

    /// Stars or unstars a stored item.
    public func setFavorite(_ isFavorite: Bool, source: SourceID, itemID: String) throws {
        try database.setFavorite(isFavorite, source: source, itemID: try storedItemID(itemID, source: source))
    }

    /// Stars `item` (as read from its source), storing it as well when the store does not hold it.
    public func addFavorite(_ item: CatalogItem) throws {
        _ = try source(item.source)
        try database.addFavorite(item)
    }

    /// Every starred item, newest first, from the store (works offline).
    public func favorites() throws -> [CatalogItem] { try database.favorites() }

    // MARK: Lists the user orders (the dogs)

    /// The source of `id` when its list is ordered by the user; `notFound` otherwise (only such a list can be
    /// edited).
    private func userOrderedSource(_ id: SourceID) throws -> any CatalogSource {
        let source = try self.source(id)
        guard source.ordering == .user else {
            throw KioskError.notFound("\(id.displayName) is not a list you order yourself: its items cannot be moved or deleted")
        }
        return source
    }

    /// Deletes an item from a user-ordered list; deleting the last one fetches the list again and forgets the
    /// edits, as the original app did. If that fetch fails (offline), the last item is kept and the error is thrown.
    @discardableResult
    public func deleteFromUserOrder(source id: SourceID, itemID: String) async throws -> [CatalogItem] {
        _ = try userOrderedSource(id)
        let remaining = try database.deleteFromUserOrder(id, itemID: itemID, at: now())
        guard remaining == 0 else { return try database.userOrdered(id) }
        // The list starts over only from a list fetched: left empty, it stayed empty once back online (every item
        // deleted) until a reset, though the command had failed.
        do {
            let update = try await page(PageRequest(source: id), policy: .force)
            if let error = update.error { throw error }
        } catch {
            try database.restoreInUserOrder(id, itemID: itemID)
            throw error
        }
        try database.resetUserOrder(id)
        return try database.userOrdered(id)
    }

    /// Takes back a deletion from a user-ordered list (Undo): the item shows again where it was.
    @discardableResult
    public func restoreToUserOrder(source id: SourceID, itemID: String) throws -> [CatalogItem] {
        _ = try userOrderedSource(id)
        try database.restoreInUserOrder(id, itemID: itemID)
        return try database.userOrdered(id)
    }

    /// Moves an item of a user-ordered list to a 0-based position in the user's order.
    @discardableResult
    public func moveInUserOrder(source id: SourceID, itemID: String, to index: Int) throws -> [CatalogItem] {
        _ = try userOrderedSource(id)
        try database.moveInUserOrder(id, itemID: itemID, to: index)
        return try database.userOrdered(id)
    }

    /// Forgets a user-ordered list's deletions and order, and fetches it again.
    @discardableResult
    public func resetUserOrder(source id: SourceID) async throws -> [CatalogItem] {
        _ = try userOrderedSource(id)
        try database.resetUserOrder(id)
        return try await page(PageRequest(source: id), policy: .force).page.items
    }
}
