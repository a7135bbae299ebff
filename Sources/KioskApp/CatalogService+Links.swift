public import KioskCore
import KioskStore

/// The items an item links to (a character's episodes, origin and location), one page of them.
public struct LinkedItems: Sendable, Hashable {
    /// One link and, when stored or fetched, its item.
    public struct Entry: Sendable, Hashable {
        /// What is linked, and why.
        public var link: ItemLink
        /// The linked item; nil when it is neither stored nor could be fetched.
        public var item: CatalogItem?
    }

    /// The links of this page in the source's order: every link whose role is not paged, and the
    /// page's share of those that are.
    public var entries: [Entry]
    /// How many links of each role the item has in all.
    public var counts: [ItemLink.Role: Int]
    /// The page of paged links shown, from 1.
    public var page: Int
    /// How many pages of paged links there are (at least 1).
    public var pageCount: Int
    /// Why some linked items could not be fetched (their entries have no item).
    public var error: KioskError?
    /// Linked items the upstream sent but that could not be read.
    public var skipped: [DecodingIssue]
    /// The ids of the shown linked items the user starred.
    public var favorites: Set<String>

    /// Nothing linked.
    public static let none = LinkedItems(entries: [], counts: [:], page: 1, pageCount: 1, error: nil, skipped: [], favorites: [])

    /// The entries of one role.
    public func entries(_ role: ItemLink.Role) -> [Entry] { entries.filter { $0.link.role == role } }

    /// The links whose item is missing.
    public var missing: [ItemLink] { entries.filter { $0.item == nil }.map(\.link) }
}

extension CatalogService {
    /// How many paged links (a location's residents) a page shows.
    public static let linkedPageSize = 20

    /// How many pages `count` paged links take (one at least, empty).
    static func pageCount(_ count: Int) -> Int { max(1, (count + linkedPageSize - 1) / linkedPageSize) }

    /// Throws `notFound` when `item` has no page `page` of paged links (a location's residents): a page past the end
    /// is refused as a catalog's is, not shown as its last.
    func checkLinkedPage(_ page: Int, of item: CatalogItem) throws {
        guard page > 1, let source = sources[item.source] else { return }
        let paged = source.links(of: item).filter(\.role.isPaged)
        let pageCount = Self.pageCount(paged.count)
        guard page > pageCount else { return }
        let name = "page \(page) of \(item.source.rawValue) item \(item.itemID)'s linked items"
        throw KioskError.notFound(paged.isEmpty ? "\(name) (its linked items are shown whole, on one page)"
                                  : "\(name) (\(paged.count) in \(pageCount) page\(pageCount == 1 ? "" : "s"))")
    }

    /// What `item` links to, page `page` of the paged roles: read from the store, the rest fetched with
    /// the source's multi-id requests (one per kind) and stored. `.force` fetches them all again,
    /// `.offline` reads the store only. Never throws: what is missing says why in `error`.
    public func linkedItems(of item: CatalogItem, page: Int = 1, policy: RefreshPolicy = .automatic) async -> LinkedItems {
        guard let source = sources[item.source] else { return .none }
        let links = source.links(of: item)
        guard !links.isEmpty else { return .none }
        let paged = links.filter(\.role.isPaged)
        let pageCount = Self.pageCount(paged.count)
        let page = min(max(1, page), pageCount)
        let shownPaged = Set(paged.dropFirst((page - 1) * Self.linkedPageSize).prefix(Self.linkedPageSize))
        let shown = links.filter { !$0.role.isPaged || shownPaged.contains($0) }
        var counts: [ItemLink.Role: Int] = [:]
        for link in links { counts[link.role, default: 0] += 1 }

        let ids = shown.map(\.itemID)
        var error: KioskError?
        var skipped: [DecodingIssue] = []
        var found: [String: CatalogItem] = [:]
        do {
            found = try database.items(source: item.source, itemIDs: ids)
        } catch let storeError as KioskError {
            error = storeError
        } catch {}
        let wanted = policy == .force ? ids : ids.filter { found[$0] == nil }
        if policy != .offline, !wanted.isEmpty {
            do {
                let requests = try source.linkedItemsRequests(itemIDs: wanted)
                // Behind the view: what comes after it stopped waiting is stored all the same, for the next view.
                let fetching = Task { await fetchLinked(requests, source: source) }
                let patience = linkedItemsPatience
                let fetched = await withTaskGroup(of: LinkedFetch?.self) { group in
                    group.addTask { await fetching.value }
                    group.addTask {
                        try? await Task.sleep(for: patience)
                        return nil
                    }
                    let first = await group.next() ?? nil
                    group.cancelAll()
                    return first
                }
                if let fetched {
                    skipped += fetched.issues
                    for item in fetched.items { found[item.itemID] = item }
                    error = error ?? fetched.error
                } else if let first = requests.first {
                    error = error ?? .timeout(url: first.url.redactedString, seconds: patience.seconds)
                }
            } catch let requestError as KioskError {
                error = requestError
            } catch {}
        }
        let favorites = (try? database.favoriteIDs(source: item.source))?.intersection(ids) ?? []
        return LinkedItems(entries: shown.map { LinkedItems.Entry(link: $0, item: found[$0.itemID]) }, counts: counts, page: page,
                           pageCount: pageCount, error: error, skipped: skipped, favorites: favorites)
    }

    /// What the linked items' requests brought: the items (stored as they came), the ones skipped, the first failure.
    struct LinkedFetch: Sendable {
        var items: [CatalogItem] = []
        var issues: [DecodingIssue] = []
        var error: KioskError?
    }

    /// Sends `requests` (one per kind of linked item) at once, so a slow upstream costs one wait, not one per kind
    /// (a character's episodes, then its locations, each waited for its whole timeout); stores what each brings.
    func fetchLinked(_ requests: [HTTPRequest], source: any CatalogSource) async -> LinkedFetch {
        await withTaskGroup(of: LinkedFetch.self) { group in
            for request in requests {
                group.addTask { [self] in
                    do {
                        let response = try await send(request)
                        let (items, issues) = try source.decodeLinkedItems(response, for: request)
                        // As with pages, an answer edited at a breakpoint is shown but never stored.
                        if !response.isEdited { _ = try keep { try database.saveItems(items) } }
                        return LinkedFetch(items: items, issues: issues)
                    } catch let error as KioskError {
                        return LinkedFetch(error: error == .cancelled ? nil : error)
                    } catch {
                        return LinkedFetch()
                    }
                }
            }
            var all = LinkedFetch()
            for await part in group {
                all.items += part.items
                all.issues += part.issues
                all.error = all.error ?? part.error
            }
            return all
        }
    }
}
