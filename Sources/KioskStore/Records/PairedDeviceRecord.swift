import Foundation
import GRDB
import KioskCore

/// A row of `pairedDevice`: a browser that paired with `kiosk serve --lan`, found by the SHA-256 of its
/// token (the token itself is never stored). User data: clearing the cache keeps it.
struct PairedDeviceRecord: StoreRecord, Hashable {
    static let databaseTableName = "pairedDevice"

    /// Increases with each pairing: the id `kiosk devices revoke` takes.
    var id: Int64?
    /// Lowercase hex SHA-256 of the device's token; unique, the lookup key of every request.
    var tokenHash: String
    var name: String
    var pairedAt: Date
    var lastSeenAt: Date

    enum Columns: String, ColumnExpression {
        case id, tokenHash, name, pairedAt, lastSeenAt
    }

    /// The public value (a row read back always has its id).
    var device: PairedDevice {
        PairedDevice(id: id ?? 0, name: name, pairedAt: pairedAt, lastSeenAt: lastSeenAt)
    }
}
