import Foundation
import GRDB
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskStore

@Suite("Idempotency keys of user writes")
struct WriteKeysTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let answer = RecordedWrite(fingerprint: "f", status: 303, location: "/dogs?edit=1")

    @Test("keys recorded before devices had scopes are kept, as this machine's, when the store is upgraded")
    func migrationKeepsKeys() throws {
        // Given a store file at the schema before scopes (v5) holding a recorded write
        let folder = try TemporaryDirectory.make("KioskStoreTests")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("kiosk.sqlite").path
        do {
            let queue = try DatabaseQueue(path: path)
            try AppDatabase.migrator.migrate(queue, upTo: "v5")
            try queue.write { db in
                try db.execute(sql: "INSERT INTO writeKey (key, fingerprint, status, location, createdAt) VALUES ('k1', 'f', 303, '/x', ?)",
                               arguments: [Self.now.timeIntervalSince1970])
            }
        }
        // When the current Kiosk opens it
        let database = try AppDatabase.open(at: path)
        // Then the key answers as before for this machine's browsers, and is no paired device's
        #expect(try database.recordedWrite(forKey: "k1", scope: AppDatabase.localWriteScope, now: Self.now)
                == RecordedWrite(fingerprint: "f", status: 303, location: "/x"))
        #expect(try database.recordedWrite(forKey: "k1", scope: AppDatabase.deviceWriteScope(1), now: Self.now) == nil)
    }

    @Test("one key in two scopes is two keys: a device cannot replay or block another's write")
    func scopesAreApart() throws {
        // Given the same key recorded by device 1
        let database = try AppDatabase.inMemory()
        try database.record(Self.answer, forKey: "k", scope: AppDatabase.deviceWriteScope(1), at: Self.now)
        // Then device 2 and this machine do not find it, and record theirs beside it
        #expect(try database.recordedWrite(forKey: "k", scope: AppDatabase.deviceWriteScope(2), now: Self.now) == nil)
        try database.record(RecordedWrite(fingerprint: "g", status: 303, location: nil), forKey: "k", scope: AppDatabase.localWriteScope, at: Self.now)
        #expect(try database.recordedWrite(forKey: "k", scope: AppDatabase.deviceWriteScope(1), now: Self.now)?.fingerprint == "f")
        #expect(try database.recordedWrite(forKey: "k", scope: AppDatabase.localWriteScope, now: Self.now)?.fingerprint == "g")
    }

    @Test("a scope keeps its newest 1,000 keys; other scopes are not touched")
    func capped() throws {
        // Given 1,005 keys from one device, a second apart, and one from another
        let database = try AppDatabase.inMemory()
        try database.record(Self.answer, forKey: "other", scope: AppDatabase.deviceWriteScope(2), at: Self.now)
        for index in 0..<1_005 {
            try database.record(Self.answer, forKey: "k\(index)", scope: AppDatabase.deviceWriteScope(1),
                                at: Self.now.addingTimeInterval(Double(index)))
        }
        // Then it holds 1,000: the five oldest are forgotten, the newest kept
        let later = Self.now.addingTimeInterval(2_000)
        #expect(try database.writeKeyCount(scope: AppDatabase.deviceWriteScope(1)) == AppDatabase.writeKeysPerScope)
        #expect(try database.recordedWrite(forKey: "k4", scope: AppDatabase.deviceWriteScope(1), now: later) == nil)
        #expect(try database.recordedWrite(forKey: "k5", scope: AppDatabase.deviceWriteScope(1), now: later) != nil)
        #expect(try database.recordedWrite(forKey: "other", scope: AppDatabase.deviceWriteScope(2), now: later) != nil)
    }

    @Test("revoking a device forgets its keys")
    func revocationForgetsKeys() throws {
        // Given a paired device that recorded a write
        let database = try AppDatabase.inMemory()
        let device = try pair(database, tokenHash: "aa", name: "Phone", at: Self.now)
        try database.record(Self.answer, forKey: "k", scope: AppDatabase.deviceWriteScope(device.id), at: Self.now)
        // When it is revoked
        #expect(try database.removeDevice(id: device.id, at: Self.now))
        // Then its keys are gone
        #expect(try database.writeKeyCount(scope: AppDatabase.deviceWriteScope(device.id)) == 0)
    }
}
