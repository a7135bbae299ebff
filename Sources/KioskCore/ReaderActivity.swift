public import Foundation

/// What changed in one catalog's stored items since a moment: how many are new, how many changed, and the
/// latest of them (most recently changed first), for Home's "since your last visit".
public struct CatalogChanges: Sendable, Hashable {
    public var source: SourceID
    /// Items first stored since the moment.
    public var added: Int
    /// Items stored before it whose content changed since.
    public var updated: Int
    /// The most recently changed of them, at most the number asked for.
    public var latest: [CatalogItem]

    public init(source: SourceID, added: Int, updated: Int, latest: [CatalogItem]) {
        self.source = source
        self.added = added
        self.updated = updated
        self.latest = latest
    }
}

/// An item the reader opened, and when (Home's "recently read").
public struct ReadItem: Sendable, Hashable {
    public var item: CatalogItem
    public var readAt: Date

    public init(item: CatalogItem, readAt: Date) {
        self.item = item
        self.readAt = readAt
    }
}
