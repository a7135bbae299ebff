public import Foundation
public import KioskCore

/// Where the data in an update came from.
public enum UpdateOrigin: String, Codable, Sendable, Hashable {
    /// Read from the local store without asking the upstream.
    case store
    /// A new 200 response, now stored.
    case network
    /// The upstream said 304: the stored data is confirmed and fresh again.
    case notModified
}

/// One element of a page stream: the data to show now, and how much to trust it.
public struct CatalogUpdate: Sendable, Hashable {
    /// The page to show (dogs in the user's order).
    public var page: Page
    /// When it was fetched and until when it is fresh.
    public var metadata: SnapshotMetadata
    /// Where it came from.
    public var origin: UpdateOrigin
    /// Whether it is past its freshness lifetime at the time of the update.
    public var isStale: Bool
    /// Whether a revalidation is under way and another update will follow.
    public var isRevalidating: Bool
    /// Why the revalidation failed, when it did and stored data is shown instead.
    public var error: KioskError?
    /// The moment this update was made, for computing the age shown.
    public var asOf: Date
    /// How Kiosk's cache decided this update, in RFC 9211 terms (the web app's Cache-Status header).
    public var cacheStatus: CacheStatus
    /// Why a page fetched to be kept was not (a full disk, a read-only store): it is shown all the same, and a sync,
    /// whose whole point is keeping it, fails it.
    public var notKept: KioskError?

    /// Seconds since the data was fetched or confirmed.
    public var age: TimeInterval { metadata.age(at: asOf) }

    /// Whether the shown data is stored data because the upstream could not be reached.
    public var isOffline: Bool { error?.isConnectivityFailure ?? false }

    public init(page: Page, metadata: SnapshotMetadata, origin: UpdateOrigin, isStale: Bool,
                isRevalidating: Bool, error: KioskError?, asOf: Date, cacheStatus: CacheStatus) {
        self.page = page
        self.metadata = metadata
        self.origin = origin
        self.isStale = isStale
        self.isRevalidating = isRevalidating
        self.error = error
        self.asOf = asOf
        self.cacheStatus = cacheStatus
    }
}

/// How a page request treats the store.
public enum RefreshPolicy: Sendable, Hashable {
    /// Answer from the store when fresh; revalidate when stale (stale-while-revalidate).
    case automatic
    /// Show what is stored, then always revalidate.
    case force
    /// Never touch the network: stored data or an error.
    case offline
}
