import Foundation
import GRDB
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskStore

@Suite("Paired devices")
struct DevicesTests {
    static let paired = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("a paired device is found by its token's hash, listed with its name and dates, and gone once removed")
    func pairFindListRemove() throws {
        // Given two devices paired a minute apart
        let database = try AppDatabase.inMemory()
        let phone = try database.addDevice(tokenHash: "aa", name: "Chrome on Android", at: Self.paired)
        let tablet = try database.addDevice(tokenHash: "bb", name: "Safari on iPad", at: Self.paired.addingTimeInterval(60))
        // When they are looked up and listed
        // Then each hash finds its own device, an unknown hash none, and the list is in pairing order
        #expect(try database.device(tokenHash: "aa") == phone)
        #expect(try database.device(tokenHash: "bb")?.name == "Safari on iPad")
        #expect(try database.device(tokenHash: "cc") == nil)
        #expect(try database.devices() == [phone, tablet])
        #expect(phone.pairedAt == Self.paired && phone.lastSeenAt == Self.paired)
        // And removing one makes its hash find nothing, while removing it again says there was nothing
        #expect(try database.removeDevice(id: phone.id))
        #expect(try database.device(tokenHash: "aa") == nil)
        #expect(try !database.removeDevice(id: phone.id))
        #expect(try database.devices() == [tablet])
    }

    @Test("a removed device's id is never given to the next one, so a stale revoke cannot hit another device")
    func idsAreNotReused() throws {
        // Given the newest device removed
        let database = try AppDatabase.inMemory()
        _ = try database.addDevice(tokenHash: "aa", name: "A", at: Self.paired)
        let second = try database.addDevice(tokenHash: "bb", name: "B", at: Self.paired)
        _ = try database.removeDevice(id: second.id)
        // When another pairs
        let third = try database.addDevice(tokenHash: "cc", name: "C", at: Self.paired)
        // Then it gets a new id
        #expect(third.id > second.id)
    }

    @Test("touching a device moves its last-seen date only")
    func touch() throws {
        // Given a paired device
        let database = try AppDatabase.inMemory()
        let device = try database.addDevice(tokenHash: "aa", name: "Firefox on Linux", at: Self.paired)
        // When it is seen an hour later
        try database.touchDevice(id: device.id, at: Self.paired.addingTimeInterval(3600))
        // Then its last-seen date is that, and its pairing date unchanged
        let seen = try #require(try database.device(tokenHash: "aa"))
        #expect(seen.lastSeenAt == Self.paired.addingTimeInterval(3600))
        #expect(seen.pairedAt == Self.paired)
    }

    @Test("paired devices are user data: clearing the cache keeps them")
    func survivesClearCache() throws {
        // Given a paired device
        let database = try AppDatabase.inMemory()
        let device = try database.addDevice(tokenHash: "aa", name: "Chrome on Android", at: Self.paired)
        // When the cache is cleared
        try database.clearCache()
        // Then the device is still paired
        #expect(try database.devices() == [device])
    }

    @Test("a device removed through one connection to the file is gone at once for another, as for serve and the CLI")
    func removalSeenByAnotherConnection() throws {
        // Given the same file opened twice, as `kiosk serve` and `kiosk devices revoke` do
        let folder = try TemporaryDirectory.make("KioskStoreTests")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("kiosk.sqlite").path
        let serve = try AppDatabase.open(at: path)
        let cli = try AppDatabase.open(at: path)
        let device = try serve.addDevice(tokenHash: "aa", name: "Chrome on Android", at: Self.paired)
        #expect(try serve.device(tokenHash: "aa") != nil)
        // When the other connection removes it
        #expect(try cli.removeDevice(id: device.id))
        // Then the first no longer finds it
        #expect(try serve.device(tokenHash: "aa") == nil)
    }

    @Test("two devices cannot share a token hash")
    func uniqueHash() throws {
        // Given a device paired under a hash
        let database = try AppDatabase.inMemory()
        _ = try database.addDevice(tokenHash: "aa", name: "A", at: Self.paired)
        // When another is stored under the same hash
        // Then the store refuses it, so one token can never open two rows
        #expect(throws: KioskError.self) { try database.addDevice(tokenHash: "aa", name: "B", at: Self.paired) }
    }
}
