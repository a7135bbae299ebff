public import Foundation
import GRDB
import KioskCore

// Idempotency keys of user writes: a write sent again after its answer was lost (a phone's queued edit
// replayed when Kiosk answers again) is answered as the first time, without being applied twice.

/// The answer a write gave, kept under its idempotency key.
public struct RecordedWrite: Sendable, Hashable {
    /// What the write was (its method, path and body, hashed): the same key on another write is refused.
    public var fingerprint: String
    /// The HTTP status it answered.
    public var status: Int
    /// Where it redirected, when it did.
    public var location: String?

    /// A recorded answer.
    public init(fingerprint: String, status: Int, location: String?) {
        self.fingerprint = fingerprint
        self.status = status
        self.location = location
    }
}

extension AppDatabase {
    /// How long a key is remembered: far longer than a phone stays away from home, short enough to stay small.
    static let writeKeyLifetime: TimeInterval = 7 * 86_400
    /// The most keys one scope keeps (its oldest are forgotten first): a device cannot grow the table without
    /// bound by sending writes with new keys. A phone queues a handful of edits, not a thousand.
    static let writeKeysPerScope = 1_000
    /// The scope of writes sent by browsers that are not paired devices (this machine's own, over loopback).
    public static let localWriteScope = "local"

    /// The scope of writes sent by paired device `id`.
    public static func deviceWriteScope(_ id: Int64) -> String { "device-\(id)" }

    /// The answer recorded under `key` in `scope`, or nil; keys older than a week are forgotten first.
    public func recordedWrite(forKey key: String, scope: String, now: Date) throws -> RecordedWrite? {
        try write("read a write's idempotency key") { db in
            try db.execute(sql: "DELETE FROM writeKey WHERE createdAt < ?", arguments: [(now.addingTimeInterval(-Self.writeKeyLifetime)).timeIntervalSince1970])
            guard let row = try Row.fetchOne(db, sql: "SELECT fingerprint, status, location FROM writeKey WHERE scope = ? AND key = ?",
                                             arguments: [scope, key]) else { return nil }
            return RecordedWrite(fingerprint: row["fingerprint"], status: row["status"], location: row["location"])
        }
    }

    /// Keeps `answer` under `key` in `scope` (the first answer stays if the key is already recorded), then
    /// forgets the scope's oldest keys past `writeKeysPerScope`.
    public func record(_ answer: RecordedWrite, forKey key: String, scope: String, at date: Date) throws {
        try write("record a write's idempotency key") { db in
            try db.execute(sql: """
                INSERT INTO writeKey (scope, key, fingerprint, status, location, createdAt) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (scope, key) DO NOTHING
                """, arguments: [scope, key, answer.fingerprint, answer.status, answer.location, date.timeIntervalSince1970])
            try db.execute(sql: """
                DELETE FROM writeKey WHERE scope = ? AND rowid NOT IN
                    (SELECT rowid FROM writeKey WHERE scope = ? ORDER BY createdAt DESC, rowid DESC LIMIT ?)
                """, arguments: [scope, scope, Self.writeKeysPerScope])
        }
    }

    /// How many keys `scope` holds.
    public func writeKeyCount(scope: String) throws -> Int {
        try read("count idempotency keys") { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM writeKey WHERE scope = ?", arguments: [scope]) ?? 0
        }
    }
}
