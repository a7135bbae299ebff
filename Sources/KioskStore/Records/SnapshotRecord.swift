import Foundation
import GRDB
import KioskCore

/// A row of `snapshot`: one stored page's metadata; its items are `SnapshotItemRecord`s.
struct SnapshotRecord: StoreRecord, SourceScopedRecord, Hashable {
    static let databaseTableName = "snapshot"

    /// `PageRequest.cacheKey`.
    var key, source: String
    var page: Int
    /// The whole request, stored as JSON (GRDB encodes nested Codable values as JSON text).
    var request: PageRequest
    var fetchedAt, freshUntil: Date
    var etag, lastModified: String?
    /// `SnapshotMetadata.staleShownUntil` (added by migration v2; NULL: any time).
    var staleShownUntil: Date?
    var totalItems, totalPages: Int?
    /// `Page.reportedTotal` (added by migration v3).
    var reportedTotal: Int?
    var attribution: String?
    /// Items that were skipped when the page was decoded, stored as JSON.
    var skipped: [DecodingIssue]

    enum Columns: String, ColumnExpression {
        case key, source, page
    }

    init(_ snapshot: Snapshot) {
        let page = snapshot.page
        self.key = page.request.cacheKey
        self.source = page.request.source.rawValue
        self.page = page.request.page
        self.request = page.request
        self.fetchedAt = snapshot.metadata.fetchedAt
        self.freshUntil = snapshot.metadata.freshUntil
        self.etag = snapshot.metadata.validators.etag
        self.lastModified = snapshot.metadata.validators.lastModified
        self.staleShownUntil = snapshot.metadata.staleShownUntil
        self.totalItems = page.totalItems
        self.totalPages = page.totalPages
        self.reportedTotal = page.reportedTotal
        self.attribution = page.attribution
        self.skipped = page.skipped
    }

    var metadata: SnapshotMetadata {
        SnapshotMetadata(fetchedAt: fetchedAt, freshUntil: freshUntil,
                         validators: Validators(etag: etag, lastModified: lastModified), staleShownUntil: staleShownUntil)
    }

    /// The domain value, with the page's items in stored order.
    func snapshot(items: [CatalogItem]) -> Snapshot {
        Snapshot(page: Page(request: request, items: items, totalItems: totalItems, totalPages: totalPages,
                            skipped: skipped, attribution: attribution, reportedTotal: reportedTotal),
                 metadata: metadata)
    }
}
