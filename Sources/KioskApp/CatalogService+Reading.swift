public import Foundation
public import KioskCore
import KioskStore

// The reader's own activity, for Home: what it opened, and what changed in its catalogs since a visit.

extension CatalogService {
    /// Notes that the reader opened an item of a configured catalog (a page it navigated to, not one saved in
    /// the background); `invalidRequest` for a catalog not configured.
    public func noteRead(source: SourceID, itemID: String) throws {
        _ = try self.source(source)
        try database.noteRead(source: source, itemID: itemID)
    }

    /// The stored items of configured catalogs the reader opened, most recent first, at most `limit`.
    public func recentlyRead(limit: Int) throws -> [ReadItem] {
        try database.recentlyRead(limit: limit, sources: configuredSources)
    }

    /// Forgets what the reader opened.
    public func clearReadingHistory() throws { try database.clearReadingHistory() }

    /// Per configured catalog with any, the stored items new or changed since `date` (with the `latest` of them).
    public func changes(since date: Date, latest: Int) throws -> [CatalogChanges] {
        try database.changes(since: date, latest: latest, sources: configuredSources)
    }

    /// The configured catalogs, in a stable order (SourceID's).
    private var configuredSources: [SourceID] { SourceID.allCases.filter { sources[$0] != nil } }
}
