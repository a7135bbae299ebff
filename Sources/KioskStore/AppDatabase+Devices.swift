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

    /// How long a revoked token is remembered: as long as a browser keeps the cookie that holds it.
    static let revokedTokenLifetime: TimeInterval = 400 * 86_400

    /// Forgets device `id`, so its token stops working, and the idempotency keys of its writes, and remembers its
    /// token's hash as revoked (at `date`); false when there is no such device.
    public func removeDevice(id: Int64, at date: Date) throws -> Bool {
        try write("revoke a paired device") { db in
            try db.execute(sql: "DELETE FROM writeKey WHERE scope = ?", arguments: [Self.deviceWriteScope(id)])
            guard let record = try PairedDeviceRecord.fetchOne(db, key: id) else { return false }
            try db.execute(sql: "DELETE FROM revokedDevice WHERE revokedAt < ?",
                           arguments: [date.addingTimeInterval(-Self.revokedTokenLifetime).timeIntervalSince1970])
            try db.execute(sql: "INSERT OR REPLACE INTO revokedDevice (tokenHash, revokedAt) VALUES (?, ?)",
                           arguments: [record.tokenHash, date.timeIntervalSince1970])
            return try PairedDeviceRecord.deleteOne(db, key: id)
        }
    }

    /// Whether `tokenHash` is the token of a device revoked from this store.
    public func isRevokedDevice(tokenHash: String) throws -> Bool {
        try read("look a revoked device up") { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM revokedDevice WHERE tokenHash = ?", arguments: [tokenHash]) ?? false
        }
    }

    // MARK: - The pairing window

    /// Opens a pairing window: the code's salted hash, valid until `expiresAt`. Any code opened before is
    /// closed, so exactly one code works at a time whichever process opened it.
    public func openPairingCode(salt: [UInt8], codeHash: String, at date: Date, expiresAt: Date) throws {
        try write("open a pairing window") { db in
            try db.execute(sql: "DELETE FROM pairingCode")
            try db.execute(sql: "INSERT INTO pairingCode (salt, codeHash, createdAt, expiresAt) VALUES (?, ?, ?, ?)",
                           arguments: [Data(salt), codeHash, date.timeIntervalSince1970, expiresAt.timeIntervalSince1970])
        }
    }

    /// Checks a typed code against the open one in a single transaction, so two browsers (or two processes)
    /// cannot both use it: `hash(salt)` hashes the typed code with the stored salt. A match closes the window
    /// and stores the new device (`tokenHash`, `name`); a miss counts against the code, which is burned (closed)
    /// at `maximumFailures`; an expired code is closed and counts as none.
    public func redeemPairingCode(hash: (_ salt: [UInt8]) -> String, tokenHash: String, name: String, at date: Date,
                                  maximumFailures: Int) throws -> PairingRedemption {
        try write("check a pairing code") { db in
            try db.execute(sql: "DELETE FROM pairingCode WHERE expiresAt <= ?", arguments: [date.timeIntervalSince1970])
            guard let row = try Row.fetchOne(db, sql: "SELECT id, salt, codeHash, failures FROM pairingCode ORDER BY id DESC LIMIT 1")
            else { return .noOpenCode }
            let id: Int64 = row["id"], salt: Data = row["salt"], stored: String = row["codeHash"], failures: Int = row["failures"]
            if Self.constantTimeEqual(hash(Array(salt)), stored) {
                try db.execute(sql: "DELETE FROM pairingCode WHERE id = ?", arguments: [id])
                var record = PairedDeviceRecord(id: nil, tokenHash: tokenHash, name: name, pairedAt: date, lastSeenAt: date)
                try record.insert(db)
                record.id = db.lastInsertedRowID
                return .paired(record.device)
            }
            guard failures + 1 < maximumFailures else {
                try db.execute(sql: "DELETE FROM pairingCode WHERE id = ?", arguments: [id])
                return .burned
            }
            try db.execute(sql: "UPDATE pairingCode SET failures = failures + 1 WHERE id = ?", arguments: [id])
            return .wrong(remaining: maximumFailures - failures - 1)
        }
    }

    /// When the open pairing code expires, or nil when none is open at `date`.
    public func pairingCodeExpiry(at date: Date) throws -> Date? {
        try read("read the pairing window") { db in
            try Double.fetchOne(db, sql: "SELECT max(expiresAt) FROM pairingCode WHERE expiresAt > ?",
                                arguments: [date.timeIntervalSince1970]).map(Date.init(timeIntervalSince1970:))
        }
    }

    private static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let a = Array(lhs.utf8), b = Array(rhs.utf8)
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// What checking a typed pairing code did.
public enum PairingRedemption: Sendable, Equatable {
    /// It was the open code: the window is closed and this device stored.
    case paired(PairedDevice)
    /// It was not; the open code takes `remaining` more wrong tries before it is burned.
    case wrong(remaining: Int)
    /// It was not, and that was the code's last allowed wrong try: it no longer works.
    case burned
    /// No code is open (none was, it expired, was used or was burned).
    case noOpenCode
}
