import Foundation
import GRDB

/// A row of `image`: one cached image and its place in the LRU order.
struct ImageRecord: StoreRecord, Hashable {
    static let databaseTableName = "image"

    var url: String
    var data: Data
    var contentType: String?
    var etag: String?
    var lastModified: String?
    var fetchedAt: Date
    var freshUntil: Date
    var byteCount: Int
    /// A use counter: the highest value is the most recently used image.
    var lastAccess: Int64

    enum Columns: String, ColumnExpression {
        case url, byteCount, lastAccess
    }

    init(_ image: StoredImage, lastAccess: Int64) {
        self.url = image.url
        self.data = image.data
        self.contentType = image.contentType
        self.etag = image.etag
        self.lastModified = image.lastModified
        self.fetchedAt = image.fetchedAt
        self.freshUntil = image.freshUntil
        self.byteCount = image.data.count
        self.lastAccess = lastAccess
    }

    var storedImage: StoredImage {
        StoredImage(url: url, data: data, contentType: contentType, etag: etag, lastModified: lastModified,
                    fetchedAt: fetchedAt, freshUntil: freshUntil)
    }
}

extension DerivableRequest<ImageRecord> {
    /// Images in eviction order: the least recently used first.
    func leastRecentlyUsedFirst() -> Self {
        order(ImageRecord.Columns.lastAccess)
    }
}
