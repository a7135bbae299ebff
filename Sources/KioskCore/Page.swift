public import Foundation

/// What a caller asks a catalog for: one page, optionally narrowed by a query and filters.
public struct PageRequest: Codable, Sendable, Hashable {
    /// The catalog.
    public var source: SourceID
    /// 1-based page number.
    public var page: Int
    /// Free-text search; nil or empty means the plain list.
    public var query: String?
    /// Source-specific filters: NYT `kind`/`period`, Rick and Morty `status`/`gender`.
    public var filters: [String: String]
    /// One of the source's `relatedCollections` (Rick and Morty `episode`, `location`); nil is the catalog itself.
    public var collection: String?

    public init(source: SourceID, page: Int = 1, query: String? = nil, filters: [String: String] = [:],
                collection: String? = nil) {
        self.source = source
        self.page = page
        self.collection = collection
        let trimmed = query?.trimmingCharacters(in: .whitespacesAndNewlines)
        self.query = (trimmed?.isEmpty ?? true) ? nil : trimmed
        self.filters = filters
    }

    /// A canonical, order-independent key that names this page's snapshot in the store.
    public var cacheKey: String {
        var parts = ["\(source.rawValue)", "page=\(page)"]
        if let collection { parts.insert("collection=\(collection)", at: 1) }
        for (key, value) in filters.sorted(by: { $0.key < $1.key }) { parts.append("\(key)=\(value)") }
        if let query { parts.append("q=\(query.lowercased())") }
        return parts.joined(separator: "|")
    }
}

/// One page of a catalog, in upstream order.
public struct Page: Codable, Sendable, Hashable {
    /// The request this page answers.
    public var request: PageRequest
    /// The items, in upstream order (NYT rank, paging order, the user's dog order).
    public var items: [CatalogItem]
    /// Total items upstream, when the API says.
    public var totalItems: Int?
    /// Total pages upstream, when known.
    public var totalPages: Int?
    /// Items that could not be decoded and were skipped.
    public var skipped: [DecodingIssue]
    /// Attribution text the source requires to be shown (Marvel), if any.
    public var attribution: String?
    /// How many items the upstream says it counts in all, when that is more than its pages hold (NYT's
    /// `num_results`: 1,491 articles counted, 20 sent): information only, never pages to fetch.
    public var reportedTotal: Int?

    /// A page of `items`, except those whose id could not be linked (`CatalogItem.isLinkableID`): they are
    /// reported in `skipped` like any other unreadable item, so everything a page lists can be opened.
    public init(request: PageRequest, items: [CatalogItem], totalItems: Int? = nil, totalPages: Int? = nil,
                skipped: [DecodingIssue] = [], attribution: String? = nil, reportedTotal: Int? = nil) {
        self.request = request
        self.items = items.filter { CatalogItem.isLinkableID($0.itemID) }
        self.totalItems = totalItems
        self.totalPages = totalPages
        self.skipped = skipped + items.filter { !CatalogItem.isLinkableID($0.itemID) }.map { item in
            DecodingIssue(path: "itemID", message: "“\(item.title.prefix(60))” has an id that cannot be linked "
                          + "(\(item.itemID.utf8.count) bytes; at most \(CatalogItem.maximumIDLength), no control characters)")
        }
        self.attribution = attribution
        self.reportedTotal = reportedTotal
    }

    /// Whether a page after this one exists.
    public var hasNext: Bool {
        if let totalPages { return request.page < totalPages }
        return false
    }

    /// The page with every item's id unique within it: an upstream that sends one id for several
    /// different items (three characters with `"id": 0`) has the second stored as `0-2`, the third as
    /// `0-3` (stepping over ids in use), as dog names are numbered; otherwise they would be stored as
    /// one item and the others lost offline. The first keeps its id, so links to it stay valid.
    public func withUniqueItemIDs() -> Page {
        var used = Set<String>()
        used.reserveCapacity(items.count)
        guard items.contains(where: { !used.insert($0.itemID).inserted }) else { return self }
        used.removeAll()
        var unique = self
        for index in unique.items.indices {
            let base = unique.items[index].itemID
            var candidate = base
            var number = 1
            while used.contains(candidate) || (candidate != base && items.contains { $0.itemID == candidate }) {
                number += 1
                candidate = "\(base)-\(number)"
            }
            used.insert(candidate)
            unique.items[index].itemID = candidate
        }
        return unique
    }
}

/// A problem found while decoding one item: where it is and what was wrong.
public struct DecodingIssue: Codable, Sendable, Hashable, CustomStringConvertible {
    /// JSON path of the problem, e.g. `results[3].name`.
    public var path: String
    /// What was wrong there.
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}

/// The cache validators an upstream sent with a response.
public struct Validators: Codable, Sendable, Hashable {
    public var etag: String?
    public var lastModified: String?
    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }
    /// Whether a conditional request can be made.
    public var isEmpty: Bool { etag == nil && lastModified == nil }
}

/// When a snapshot was fetched, until when it is fresh, and how to revalidate it.
public struct SnapshotMetadata: Codable, Sendable, Hashable {
    public var fetchedAt: Date
    public var freshUntil: Date
    public var validators: Validators
    /// Until when a stale copy may be shown while it revalidates: nil means any time (the offline-first
    /// default); `must-revalidate` and `no-cache` set it to `freshUntil`, `stale-while-revalidate=N` to N
    /// seconds after it. Past it, a reader waits for the revalidation (and still gets this copy if it fails).
    public var staleShownUntil: Date?

    public init(fetchedAt: Date, freshUntil: Date, validators: Validators = Validators(), staleShownUntil: Date? = nil) {
        self.fetchedAt = fetchedAt
        self.freshUntil = freshUntil
        self.validators = validators
        self.staleShownUntil = staleShownUntil
    }

    /// Whether the snapshot may be used without asking upstream at `now`.
    public func isFresh(at now: Date) -> Bool { now < freshUntil }

    /// Whether, at `now`, the snapshot may be shown before its revalidation answers.
    public func mayShowWhileRevalidating(at now: Date) -> Bool { isFresh(at: now) || staleShownUntil.map { now < $0 } ?? true }

    /// Seconds since the data was fetched or last revalidated.
    public func age(at now: Date) -> TimeInterval { max(0, now.timeIntervalSince(fetchedAt)) }

    /// Seconds of freshness left at `now`, negative once stale (RFC 9211's `ttl`).
    public func remainingFreshness(at now: Date) -> TimeInterval { freshUntil.timeIntervalSince(now) }
}

/// A stored page with its metadata.
public struct Snapshot: Codable, Sendable, Hashable {
    public var page: Page
    public var metadata: SnapshotMetadata
    public init(page: Page, metadata: SnapshotMetadata) {
        self.page = page
        self.metadata = metadata
    }
}
