public import Foundation
import GRDB
public import KioskCore

// Browsers paired with `kiosk serve --lan`. Each request of a paired browser looks its token's hash up here
// (a unique index), so a device revoked by `kiosk devices revoke` in another process stops working at once.

extension AppDatabase {
    /// Stores a newly paired device under `tokenHash` (the SHA-256 of its token, never the token).
    public func addDevice(tokenHash: String, name: String, at date: Date) throws -> PairedDevice {
        try write("pair a device") { db in
            var record = PairedDeviceRecord(id: nil, tokenHash: tokenHash, name: name, pairedAt: date, lastSeenAt: date)
            try record.insert(db)
            record.id = db.lastInsertedRowID
            return record.device
        }
    }

    /// The device whose token hashes to `tokenHash`, or nil (never paired, or revoked).
    public func device(tokenHash: String) throws -> PairedDevice? {
        try read("look a paired device up") { db in
            try PairedDeviceRecord.filter(PairedDeviceRecord.Columns.tokenHash == tokenHash).fetchOne(db)?.device
        }
    }

    /// Records that device `id` was seen at `date` (nothing when it was revoked meanwhile).
    public func touchDevice(id: Int64, at date: Date) throws {
        try write("note when a paired device was last seen") { db in
            try db.execute(sql: "UPDATE pairedDevice SET lastSeenAt = ? WHERE id = ?", arguments: [date.storedValue, id])
        }
    }

    /// Every paired device, oldest pairing first.
    public func devices() throws -> [PairedDevice] {
        try read("list the paired devices") { db in
            try PairedDeviceRecord.order(PairedDeviceRecord.Columns.id).fetchAll(db).map(\.device)
        }
    }

    /// Forgets device `id`, so its token stops working; false when there is no such device.
    public func removeDevice(id: Int64) throws -> Bool {
        try write("revoke a paired device") { db in try PairedDeviceRecord.deleteOne(db, key: id) }
    }
}
