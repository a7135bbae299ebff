public import Foundation
import GRDB
public import KioskCore
import Synchronization

// The front of KioskStore (NetNewsWire's `ArticlesDatabase` style): the offline store's class, the
// values it hands out, and its pages, items, search, user-ordered lists, favorites, images and maintenance;
// the `AppDatabase+…` files add the rest of its public API (devices and pairing codes, write keys), and
// `RequestLog` is the other file the module keeps. The schema and the SQL are internal, so they can change
// without touching any caller.

/// Kiosk's offline-first SQLite store: page snapshots, items, full-text search, the user's dogs
/// list, favorites and the image cache. Thread-safe; every method is synchronous and throws
/// `KioskError.storage`, `.notFound` or `.invalidRequest`.
public final class AppDatabase: Sendable, StoreFile {
    /// The connection (a WAL `DatabasePool` on disk, a `DatabaseQueue` in memory); GRDB makes it
    /// safe to share between threads, which is what makes this class `Sendable`.
    let writer: any DatabaseWriter

    /// The database file, or nil for an in-memory database.
    public let path: String?

    /// Image cache hits not yet written to the LRU order (see AppDatabase+Images.swift).
    let pendingImageAccesses = Mutex<[String]>([])

    /// A connection used only to ask SQLite whether anything committed (see `changeToken()`).
    private let watcher: DatabaseQueue?

    /// The clock of what the store dates itself: when an item was first stored and last changed, when a favorite
    /// was made, when an item was read.
    let now: @Sendable () -> Date

    init(writer: any DatabaseWriter, path: String?, now: @escaping @Sendable () -> Date) throws {
        self.writer = writer
        self.path = path
        self.now = now
        do {
            watcher = try path.map { try DatabaseQueue(path: $0, configuration: Self.readOnlyConfiguration()) }
        } catch {
            throw Self.storageError(error, while: "open the database", path: path)
        }
        try AppDatabase.migrate(Self.migrator, writer, what: "the database", path: path)
    }

    /// Opens (creating it and its parent folders if needed) and migrates the database at `path`, dating what it
    /// stores by `now`; throws `KioskError.storage` saying why when the file cannot be used.
    public static func open(at path: String, now: @escaping @Sendable () -> Date = { Date() }) throws -> AppDatabase {
        // Its owner's only, as the log and the proxy cache are: it holds the paired devices' token hashes too.
        try prepareOwnerOnlyFile(at: path, what: "the database")
        // A pool gives WAL mode: readers (web requests) never wait for the writer (a sync).
        let pool = try openPool(at: path, configuration: makeConfiguration(), what: "the database")
        return try AppDatabase(writer: pool, path: path, now: now)
    }

    /// A fresh, empty, migrated database that lives in memory only (for tests and throwaway runs), dating what it
    /// stores by `now`.
    public static func inMemory(now: @escaping @Sendable () -> Date = { Date() }) throws -> AppDatabase {
        do {
            return try AppDatabase(writer: DatabaseQueue(configuration: makeConfiguration()), path: nil, now: now)
        } catch let error as KioskError {
            throw error
        } catch {
            throw storageError(error, while: "create an in-memory database", path: nil)
        }
    }

    /// A value that changes whenever anything commits to the database — this process or another one
    /// (a `kiosk sync` in a terminal while `kiosk serve` runs) — so a cache built from it is valid while
    /// the value is unchanged. SQLite's `data_version` on a connection that never writes gives exactly
    /// that. Nil for an in-memory database, which has no other connection to ask.
    public func changeToken() throws -> Int64? {
        guard let watcher else { return nil }
        do {
            return try watcher.inDatabase { db in try Int64.fetchOne(db, sql: "PRAGMA data_version") }
        } catch {
            throw Self.storageError(error, while: "check the database for changes", path: path)
        }
    }

    // MARK: - Snapshots

    /// The stored page for a `PageRequest.cacheKey`, items in stored order, or nil when there is
    /// none (or when a stored item can no longer be decoded, so that a refetch replaces it).
    public func snapshot(forKey key: String) throws -> Snapshot? {
        try read("read the stored page \(key)") { db in try Self.fetchSnapshot(key: key, db) }
    }

    /// Stores a page in one transaction: its order and metadata replace the previous ones for the
    /// same key, its items are upserted, and items of other pages are never deleted.
    public func saveSnapshot(_ snapshot: Snapshot) throws {
        try write("save the page \(snapshot.page.request.cacheKey)") { db in try Self.saveSnapshot(snapshot, at: now(), db) }
    }

    /// How many of `itemIDs` the stored pages of `request`'s list before its page show (pages 1 to `request.page - 1`,
    /// of its source, collection, filters and query): a page every item of which they show repeats them.
    public func countShownBefore(_ request: PageRequest, itemIDs: Set<String>) throws -> Int {
        guard request.page > 1, !itemIDs.isEmpty else { return 0 }
        let keys = (1..<request.page).map { number in
            var before = request
            before.page = number
            return before.cacheKey
        }
        return try read("read the pages before \(request.cacheKey)") { db in
            try Int.fetchOne(db, sql: """
                SELECT COUNT(DISTINCT itemID) FROM snapshotItem
                WHERE source = ? AND snapshotKey IN (\(databaseQuestionMarks(count: keys.count)))
                AND itemID IN (\(databaseQuestionMarks(count: itemIDs.count)))
                """, arguments: StatementArguments([request.source.rawValue] + keys + Array(itemIDs))) ?? 0
        }
    }

    /// Removes the stored page under `key` (its items stay, as other pages may show them); nothing when there is none.
    public func removeSnapshot(forKey key: String) throws {
        try write("remove the stored page \(key)") { db in
            try db.execute(sql: "DELETE FROM snapshot WHERE key = ?", arguments: [key])
        }
    }

    /// After a 304 Not Modified: replaces only the freshness and validators of the stored page, or, when
    /// the page is no longer stored (`kiosk cache clear` in another process meanwhile), stores it whole
    /// again from `snapshot`, in one transaction.
    public func renew(_ snapshot: Snapshot) throws {
        let key = snapshot.page.request.cacheKey
        try write("update the stored page \(key)") { db in
            if try !Self.updateMetadata(snapshot.metadata, key: key, db) { try Self.saveSnapshot(snapshot, at: now(), db) }
        }
    }

    // MARK: - Items

    /// The stored item, or nil when it is not stored.
    public func item(source: SourceID, itemID: String) throws -> CatalogItem? {
        try read("read the item \(source.rawValue)/\(itemID)") { db in
            try Self.fetchItem(source: source, itemID: itemID, db)
        }
    }

    /// The stored items among `itemIDs`, by id; ids not stored are absent. One read for them all.
    public func items(source: SourceID, itemIDs: [String]) throws -> [String: CatalogItem] {
        let ids = Array(Set(itemIDs))
        return try read("read \(ids.count) items of \(source.rawValue)") { db in
            var found: [String: CatalogItem] = [:]
            // 500 ids a statement stays far below SQLite's limit on bound parameters.
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = ids[start..<min(start + 500, ids.count)]
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                let items = try Self.fetchItems(db, sql: "SELECT payload FROM item WHERE source = ? AND itemID IN (\(marks))",
                                                arguments: StatementArguments([source.rawValue] + Array(chunk)))
                for item in items { found[item.itemID] = item }
            }
            return found
        }
    }

    /// Whether some stored item shows this picture (its list image): the image route's allow-list for
    /// pictures hosted outside a source's own hosts, such as the dogs document's.
    public func isStoredImageURL(_ url: String) throws -> Bool {
        try read("look up an image URL") { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM item WHERE imageURL = ?)", arguments: [url]) ?? false
        }
    }

    /// Inserts or updates items by (source, itemID) in one transaction; never changes any page's order.
    public func saveItems(_ items: [CatalogItem]) throws {
        try write("save \(items.count) items") { db in try Self.upsertItems(items, at: now(), db) }
    }

    /// Full-text search over stored items: every word must prefix a word of the title, subtitle,
    /// summary or keywords (case and accents ignored); best BM25-style relevance first, ranking
    /// only the 500 most recently stored matches when more match. Any input is safe; input
    /// without a word returns [].
    public func search(_ text: String, source: SourceID? = nil, limit: Int = 50) throws -> [CatalogItem] {
        guard limit > 0 else { return [] }
        return try read("search the stored items") { db in
            try Self.fullTextSearch(text, source: source, limit: limit, db)
        }
    }

    /// Case-insensitive substring search by scanning every item, ordered by title; any input is safe, and blank
    /// input returns []. Not for the faces: kiosk-bench's baseline for `search` (and its tests), hence `package`.
    package func searchByLike(_ text: String, source: SourceID? = nil, limit: Int = 50) throws -> [CatalogItem] {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, limit > 0 else { return [] }
        return try read("search the stored items") { db in
            try Self.likeSearch(trimmed, source: source, limit: limit, db)
        }
    }

    /// How many items are stored (for one source, or all when `source` is nil).
    package func itemCount(source: SourceID? = nil) throws -> Int {
        try read("count the stored items") { db in try Self.countItems(source: source, db) }
    }

    // MARK: - User-ordered lists (the dogs: the user's deletions and order are user data)

    /// The list of a user-ordered catalog to display: its latest upstream list in the user's order, without the
    /// items the user deleted (and without items no longer stored, e.g. after `clearCache`).
    public func userOrdered(_ source: SourceID) throws -> [CatalogItem] {
        try read("read the \(source.displayName) list") { db in try Self.fetchUserOrdered(source, db) }
    }

    /// Merges a freshly fetched list of a user-ordered catalog: stores the items, keeps the user's order,
    /// appends new items in upstream order, never brings back deleted ones, drops those upstream no longer
    /// lists; returns the display list. Throws `.invalidRequest` if an item is of another catalog.
    public func mergeUserOrder(_ upstream: [CatalogItem], source: SourceID) throws -> [CatalogItem] {
        try write("merge the \(source.displayName) list") { db in try Self.mergeUserOrder(upstream, source: source, at: now(), db) }
    }

    /// Deletes an item from a user-ordered list for good (it stays deleted across refreshes); returns how
    /// many items remain; throws `.notFound` when the item is not in the display list.
    @discardableResult
    public func deleteFromUserOrder(_ source: SourceID, itemID: String, at date: Date) throws -> Int {
        try write("delete \(itemID) from the \(source.displayName) list") { db in
            try Self.deleteFromUserOrder(source, itemID: itemID, at: date, db)
        }
    }

    /// Throws `.notFound`, saying so, when the item was deleted from its user-ordered list (and not restored): it is
    /// then not found anywhere.
    public func checkNotDeleted(_ source: SourceID, itemID: String) throws {
        let deleted = try read("read the \(source.displayName) list's deletions") { db in try Self.isDeleted(source, itemID: itemID, db) }
        if deleted { throw Self.deletedError(source, itemID: itemID) }
    }

    /// Takes back the deletion of an item from a user-ordered list: it shows again in the place it had (deleted
    /// items keep theirs); throws `.notFound` when the item is not deleted.
    public func restoreInUserOrder(_ source: SourceID, itemID: String) throws {
        try write("restore \(itemID) to the \(source.displayName) list") { db in
            try Self.restoreInUserOrder(source, itemID: itemID, db)
        }
    }

    /// Moves an item to the 0-based `index` of a user-ordered list; throws `.notFound` for an item not in the
    /// list and `.invalidRequest` when `index` is outside `0..<count`.
    public func moveInUserOrder(_ source: SourceID, itemID: String, to index: Int) throws {
        try write("move \(itemID) in the \(source.displayName) list") { db in
            try Self.moveInUserOrder(source, itemID: itemID, to: index, db)
        }
    }

    /// Forgets the user's deletions and order of a list: it becomes the latest upstream list.
    public func resetUserOrder(_ source: SourceID) throws {
        try write("reset the \(source.displayName) list") { db in try Self.resetUserOrder(source, db) }
    }

    // MARK: - Favorites (user data: kept across refreshes and cache clears)

    /// Marks or unmarks a stored item as a favorite (idempotent); throws `.notFound` when the item
    /// is not stored.
    public func setFavorite(_ isFavorite: Bool, source: SourceID, itemID: String) throws {
        try write("update the favorite \(source.rawValue)/\(itemID)") { db in
            try Self.setFavorite(isFavorite, source: source, itemID: itemID, at: now(), db)
        }
    }

    /// Stars `item`, storing it first when it is not stored (a favorite always reads offline), in one transaction: a
    /// full disk is a storage error, and no other process's clearing can come between the two.
    public func addFavorite(_ item: CatalogItem) throws {
        try write("add the favorite \(item.source.rawValue)/\(item.itemID)") { db in
            if try !Self.itemExists(source: item.source, itemID: item.itemID, db) {
                try Self.upsertItems([item], at: now(), db)
            }
            try Self.setFavorite(true, source: item.source, itemID: item.itemID, at: now(), db)
        }
    }

    /// The favorite items of every source, most recently favorited first.
    public func favorites() throws -> [CatalogItem] {
        try read("read the favorites") { db in try Self.fetchFavorites(db) }
    }

    /// The item IDs of one source's favorites (to draw the stars of a list).
    public func favoriteIDs(source: SourceID) throws -> Set<String> {
        try read("read the favorites") { db in try Self.fetchFavoriteIDs(source: source, db) }
    }

    // MARK: - Image cache (least recently used first out, size-limited)

    /// The cached image for `url`, or nil; a hit counts as a use for the LRU eviction order.
    public func image(forURL url: String) throws -> StoredImage? {
        try fetchImage(url: url)
    }

    /// Stores (or replaces) an image as the most recently used one, then evicts the least recently
    /// used images until the cache holds at most `sizeLimit` bytes (possibly this image too).
    public func saveImage(_ image: StoredImage, sizeLimit: Int) throws {
        guard sizeLimit >= 0 else { throw KioskError.invalidRequest("The image cache size limit must not be negative") }
        try write("save the image \(image.url)") { db in try saveImage(image, sizeLimit: sizeLimit, db) }
    }

    // MARK: - Maintenance

    /// Counts of everything stored (per source, favorites, deleted dogs, images) and the database size.
    public func stats() throws -> StoreStats {
        try read("compute the storage statistics") { db in try Self.computeStats(path: path, db) }
    }

    /// Deletes pages, images and every item that is not a favorite, and gives the space back to the
    /// disk; keeps favorites (with their items) and the dogs order and deletions.
    public func clearCache() throws {
        // A WAL that was never checkpointed holds every superseded version of the pages written
        // since (several times the live data), and the delete appends more to it. Folding it into
        // the main file first lets the delete reuse the log from its start, which is what makes a
        // clear fit in the little room a full disk has left. Best effort, as below.
        if path != nil {
            _ = try? writer.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        }
        try write("clear the cache") { db in try Self.clearCache(db) }
        // The freed pages were returned by incremental_vacuum, but in WAL mode the file shrinks
        // only at a truncating checkpoint. With a reader active SQLite may refuse, and the log is
        // then reused rather than grown, so that is no failure. A full disk is: the checkpoint
        // must first write the (now small) store into its main file, and until it can, the WAL
        // keeps every byte; the caller makes room and clears again (a quick no-op delete).
        guard path != nil else { return }
        do {
            _ = try writer.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_FULL {
            throw Self.storageError(error, while: "give the cleared space back to the disk", path: path)
        } catch {}
    }
}

/// An image held in the disk cache, with the HTTP metadata needed to revalidate it.
public struct StoredImage: Sendable, Hashable {
    /// The image's URL, the cache key.
    public var url: String
    /// The encoded image bytes as received.
    public var data: Data
    /// The response's Content-Type, if any.
    public var contentType: String?
    /// The response's ETag, for conditional requests.
    public var etag: String?
    /// The response's Last-Modified, for conditional requests.
    public var lastModified: String?
    /// When the image was fetched or last revalidated.
    public var fetchedAt: Date
    /// Until when the image may be used without revalidating.
    public var freshUntil: Date

    /// Creates an image value; nothing is stored until `AppDatabase.saveImage` is called.
    public init(url: String, data: Data, contentType: String? = nil, etag: String? = nil,
                lastModified: String? = nil, fetchedAt: Date, freshUntil: Date) {
        self.url = url
        self.data = data
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.fetchedAt = fetchedAt
        self.freshUntil = freshUntil
    }
}
