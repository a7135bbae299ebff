import Foundation

/// Counts of what the store holds, for `kiosk stats` and the settings screen.
public struct StoreStats: Sendable, Hashable, Codable {
    /// The counts of one catalog.
    public struct SourceCounts: Sendable, Hashable, Codable {
        /// The catalog.
        public var source: SourceID
        /// Stored items of this catalog.
        public var items: Int
        /// Stored pages of this catalog.
        public var snapshots: Int
        /// Favorites of this catalog.
        public var favorites: Int
        /// Items the user deleted from this catalog's list (a user-ordered one: the dogs), remembered so that
        /// refreshes do not bring them back.
        public var deleted: Int

        /// Creates a counts value.
        public init(source: SourceID, items: Int, snapshots: Int, favorites: Int, deleted: Int = 0) {
            self.source = source
            self.items = items
            self.snapshots = snapshots
            self.favorites = favorites
            self.deleted = deleted
        }
    }

    /// One entry per catalog, in `SourceID.allCases` order (zero counts included).
    public var sources: [SourceCounts]
    /// Favorites of all catalogs.
    public var favorites: Int
    /// Images in the disk cache.
    public var imageCount: Int
    /// Total size of the cached images, in bytes.
    public var imageBytes: Int
    /// Size of the database on disk (file plus write-ahead log), or of the in-memory database.
    public var databaseBytes: Int

    /// Creates a statistics value.
    public init(sources: [SourceCounts], favorites: Int, imageCount: Int, imageBytes: Int, databaseBytes: Int) {
        self.sources = sources
        self.favorites = favorites
        self.imageCount = imageCount
        self.imageBytes = imageBytes
        self.databaseBytes = databaseBytes
    }

    /// Stored items of all catalogs.
    public var totalItems: Int { sources.reduce(0) { $0 + $1.items } }
    /// Stored pages of all catalogs.
    public var totalSnapshots: Int { sources.reduce(0) { $0 + $1.snapshots } }
    /// The counts of one catalog (zeros when it has nothing stored).
    public func counts(for source: SourceID) -> SourceCounts {
        sources.first { $0.source == source } ?? SourceCounts(source: source, items: 0, snapshots: 0, favorites: 0, deleted: 0)
    }
}
