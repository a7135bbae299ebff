import Foundation
import GRDB
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskStore

/// Pairs a device the one way the store offers: a window opened, then redeemed with the code's hash.
@discardableResult
func pair(_ database: AppDatabase, tokenHash: String, name: String, at date: Date) throws -> PairedDevice {
    try database.openPairingCode(salt: [1, 2], codeHash: "hash-of-code", at: date, expiresAt: date.addingTimeInterval(600))
    guard case .paired(let device) = try database.redeemPairingCode(hash: { _ in "hash-of-code" }, tokenHash: tokenHash, name: name,
                                                                     at: date, maximumFailures: 20) else {
        throw KioskError.invalidRequest("the test's pairing did not pair")
    }
    return device
}

@Suite("Paired devices")
struct DevicesTests {
    static let paired = Date(timeIntervalSince1970: 1_800_000_000)

    /// Redeems with a code whose hash is `hash`, the salt it was opened with checked.
    static func redeem(_ database: AppDatabase, _ hash: String, token: String = "tok", at date: Date = paired) throws -> PairingRedemption {
        try database.redeemPairingCode(hash: { salt in salt == [7, 7] ? hash : "wrong salt" }, tokenHash: token, name: "Phone",
                                       at: date, maximumFailures: 3)
    }

    @Test("a pairing code is used once: the right hash pairs and closes the window, a wrong one counts, the third burns it")
    func pairingWindow() throws {
        // Given an open window whose code hashes to "right" with salt 7,7, burned at 3 wrong tries
        let database = try AppDatabase.inMemory()
        try database.openPairingCode(salt: [7, 7], codeHash: "right", at: Self.paired, expiresAt: Self.paired.addingTimeInterval(600))
        #expect(try database.pairingCodeExpiry(at: Self.paired) == Self.paired.addingTimeInterval(600))
        // When two wrong codes are tried, then the right one
        #expect(try Self.redeem(database, "wrong") == .wrong(remaining: 2))
        #expect(try Self.redeem(database, "wrong") == .wrong(remaining: 1))
        guard case .paired(let device) = try Self.redeem(database, "right") else { Issue.record("the right code did not pair"); return }
        // Then the device is stored and the window is closed: the same code finds none
        #expect(try database.device(tokenHash: "tok") == device)
        #expect(try Self.redeem(database, "right", token: "tok2") == .noOpenCode)
        #expect(try database.pairingCodeExpiry(at: Self.paired) == nil)
        // And a new window burns at its third wrong code, after which the right one finds nothing
        try database.openPairingCode(salt: [7, 7], codeHash: "right", at: Self.paired, expiresAt: Self.paired.addingTimeInterval(600))
        #expect(try Self.redeem(database, "a", token: "t3") == .wrong(remaining: 2))
        #expect(try Self.redeem(database, "b", token: "t3") == .wrong(remaining: 1))
        #expect(try Self.redeem(database, "c", token: "t3") == .burned)
        #expect(try Self.redeem(database, "right", token: "t3") == .noOpenCode)
        #expect(try database.devices().count == 1)
    }

    @Test("an expired code pairs nothing, and a new window replaces the open one")
    func expiryAndReplacement() throws {
        // Given a window open for 10 minutes
        let database = try AppDatabase.inMemory()
        try database.openPairingCode(salt: [7, 7], codeHash: "first", at: Self.paired, expiresAt: Self.paired.addingTimeInterval(600))
        // When its right code comes at the very end
        // Then no code is open
        #expect(try Self.redeem(database, "first", at: Self.paired.addingTimeInterval(600)) == .noOpenCode)
        // And when a window is opened over another, only the newer code works
        try database.openPairingCode(salt: [7, 7], codeHash: "second", at: Self.paired, expiresAt: Self.paired.addingTimeInterval(600))
        try database.openPairingCode(salt: [7, 7], codeHash: "third", at: Self.paired, expiresAt: Self.paired.addingTimeInterval(600))
        #expect(try Self.redeem(database, "second") == .wrong(remaining: 2))
        guard case .paired = try Self.redeem(database, "third") else { Issue.record("the newest code did not pair"); return }
    }

    @Test("a code entered through two connections at once pairs one browser only")
    func redeemedOnceAcrossConnections() async throws {
        // Given one file opened twice, as two processes would, and an open window
        let folder = try TemporaryDirectory.make("KioskStoreTests")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("kiosk.sqlite").path
        let first = try AppDatabase.open(at: path), second = try AppDatabase.open(at: path)
        try first.openPairingCode(salt: [7, 7], codeHash: "right", at: Self.paired, expiresAt: Self.paired.addingTimeInterval(600))
        // When both redeem the right code at the same time
        async let a = Task { try Self.redeem(first, "right", token: "a") }.value
        async let b = Task { try Self.redeem(second, "right", token: "b") }.value
        let outcomes = try await [a, b]
        // Then exactly one paired, the other found no open code
        #expect(outcomes.filter { if case .paired = $0 { true } else { false } }.count == 1)
        #expect(outcomes.contains(.noOpenCode))
        #expect(try first.devices().count == 1)
    }

    @Test("a paired device is found by its token's hash, listed with its name and dates, and gone once removed")
    func pairFindListRemove() throws {
        // Given two devices paired a minute apart
        let database = try AppDatabase.inMemory()
        let phone = try pair(database, tokenHash: "aa", name: "Chrome on Android", at: Self.paired)
        let tablet = try pair(database, tokenHash: "bb", name: "Safari on iPad", at: Self.paired.addingTimeInterval(60))
        // When they are looked up and listed
        // Then each hash finds its own device, an unknown hash none, and the list is in pairing order
        #expect(try database.device(tokenHash: "aa") == phone)
        #expect(try database.device(tokenHash: "bb")?.name == "Safari on iPad")
        #expect(try database.device(tokenHash: "cc") == nil)
        #expect(try database.devices() == [phone, tablet])
        #expect(phone.pairedAt == Self.paired && phone.lastSeenAt == Self.paired)
        // And removing one makes its hash find nothing, while removing it again says there was nothing
        #expect(try database.removeDevice(id: phone.id, at: Self.paired))
        #expect(try database.device(tokenHash: "aa") == nil)
        #expect(try !database.removeDevice(id: phone.id, at: Self.paired))
        #expect(try database.devices() == [tablet])
    }

    @Test("a revoked device's token is remembered as revoked; a token the store never knew is not")
    func revokedTokensRemembered() throws {
        // Given a device paired under hash "aa", then revoked
        let database = try AppDatabase.inMemory()
        let device = try pair(database, tokenHash: "aa", name: "Phone", at: Self.paired)
        #expect(try !database.isRevokedDevice(tokenHash: "aa"))
        #expect(try database.removeDevice(id: device.id, at: Self.paired))
        // Then its hash reads as revoked, and another one does not
        #expect(try database.isRevokedDevice(tokenHash: "aa"))
        #expect(try !database.isRevokedDevice(tokenHash: "bb"))
        // And 400 days later, when the next revocation tidies up, it is forgotten (no browser keeps the cookie longer)
        let other = try pair(database, tokenHash: "cc", name: "Tablet", at: Self.paired)
        #expect(try database.removeDevice(id: other.id, at: Self.paired.addingTimeInterval(401 * 86_400)))
        #expect(try !database.isRevokedDevice(tokenHash: "aa"))
        #expect(try database.isRevokedDevice(tokenHash: "cc"))
    }

    @Test("a removed device's id is never given to the next one, so a stale revoke cannot hit another device")
    func idsAreNotReused() throws {
        // Given the newest device removed
        let database = try AppDatabase.inMemory()
        _ = try pair(database, tokenHash: "aa", name: "A", at: Self.paired)
        let second = try pair(database, tokenHash: "bb", name: "B", at: Self.paired)
        _ = try database.removeDevice(id: second.id, at: Self.paired)
        // When another pairs
        let third = try pair(database, tokenHash: "cc", name: "C", at: Self.paired)
        // Then it gets a new id
        #expect(third.id > second.id)
    }

    @Test("touching a device moves its last-seen date only")
    func touch() throws {
        // Given a paired device
        let database = try AppDatabase.inMemory()
        let device = try pair(database, tokenHash: "aa", name: "Firefox on Linux", at: Self.paired)
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
        let device = try pair(database, tokenHash: "aa", name: "Chrome on Android", at: Self.paired)
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
        let device = try pair(serve, tokenHash: "aa", name: "Chrome on Android", at: Self.paired)
        #expect(try serve.device(tokenHash: "aa") != nil)
        // When the other connection removes it
        #expect(try cli.removeDevice(id: device.id, at: Self.paired))
        // Then the first no longer finds it
        #expect(try serve.device(tokenHash: "aa") == nil)
    }

    @Test("two devices cannot share a token hash")
    func uniqueHash() throws {
        // Given a device paired under a hash
        let database = try AppDatabase.inMemory()
        _ = try pair(database, tokenHash: "aa", name: "A", at: Self.paired)
        // When another is stored under the same hash
        // Then the store refuses it, so one token can never open two rows
        #expect(throws: KioskError.self) { try pair(database, tokenHash: "aa", name: "B", at: Self.paired) }
    }
}
