public import Foundation

/// A browser on another machine that entered `kiosk serve --lan`'s pairing code: what `kiosk devices list`
/// shows. Its token is not part of it: only the token's SHA-256 is stored, and only the pairing answer ever
/// carries the token itself.
public struct PairedDevice: Sendable, Hashable, Codable {
    /// The number `kiosk devices revoke` takes.
    public var id: Int64
    /// What the browser said it was, summarised from its User-Agent ("Chrome on Android").
    public var name: String
    /// When it paired.
    public var pairedAt: Date
    /// When it last made a request (to within `PairedDevice.lastSeenResolution`).
    public var lastSeenAt: Date

    /// A device as stored.
    public init(id: Int64, name: String, pairedAt: Date, lastSeenAt: Date) {
        self.id = id
        self.name = name
        self.pairedAt = pairedAt
        self.lastSeenAt = lastSeenAt
    }

    /// How stale "last seen" may get before a request writes it again: every write moves the store's change
    /// token (and so empties the page cache), so a phone browsing does not write on each request.
    public static let lastSeenResolution: TimeInterval = 300
}
