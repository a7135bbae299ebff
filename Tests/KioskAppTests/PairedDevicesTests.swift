import Foundation
import KioskCore
import KioskStore
import Testing
@testable import KioskApp

@Suite("Paired devices, as the faces see them")
struct PairedDevicesTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func devices() throws -> (PairedDevices, AppDatabase) {
        let database = try AppDatabase.inMemory()
        return (PairedDevices(database: database, now: { start }), database)
    }

    @Test("pairing hands out a 32-byte base64url token that finds the device, and stores only its SHA-256")
    func pairAndFind() throws {
        // Given the paired devices over an empty store
        let (devices, database) = try Self.devices()
        // When a device pairs
        let pairing = try devices.pair(name: "Chrome on Android")
        // Then its token is 43 base64url characters, finds it, and is not what the store holds
        #expect(pairing.token.count == 43)
        #expect(pairing.token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(try devices.device(forToken: pairing.token) == pairing.device)
        #expect(try database.device(tokenHash: pairing.token) == nil)
        #expect(try database.device(tokenHash: PairedDevices.hash(pairing.token)) == pairing.device)
        #expect(PairedDevices.hash(pairing.token).count == 64)
        // And two pairings get different tokens
        #expect(try devices.pair(name: "Other").token != pairing.token)
    }

    @Test("a token of the wrong shape finds nothing, and a forged name is kept to one short line")
    func wrongShapes() throws {
        // Given the paired devices, when tokens of other shapes are looked up, then none finds a device
        let (devices, _) = try Self.devices()
        for token in ["", "short", String(repeating: "a", count: 44), String(repeating: "+", count: 43)] {
            #expect(try devices.device(forToken: token) == nil)
        }
        // And a name of 500 characters over two lines is stored as one line of 80
        let long = try devices.pair(name: String(repeating: "x", count: 500) + "\nsecond line")
        #expect(long.device.name.count == 80 && !long.device.name.contains("\n"))
    }

    @Test("last seen is written once per resolution, so a browsing phone does not write on every request")
    func touchResolution() throws {
        // Given a device paired at the start
        let (devices, _) = try Self.devices()
        let pairing = try devices.pair(name: "Phone")
        // When it is seen a minute later, then past the resolution
        try devices.touch(pairing.device, now: Self.start.addingTimeInterval(60))
        let early = try #require(try devices.device(forToken: pairing.token))
        let later = Self.start.addingTimeInterval(PairedDevice.lastSeenResolution + 1)
        try devices.touch(early, now: later)
        // Then the first touch wrote nothing and the second did
        #expect(early.lastSeenAt == Self.start)
        #expect(try devices.device(forToken: pairing.token)?.lastSeenAt == later)
    }

    @Test("revoking a device makes its token find nothing; an unknown id is a notFound")
    func revoke() throws {
        // Given a paired device, revoked
        let (devices, _) = try Self.devices()
        let pairing = try devices.pair(name: "Phone")
        try devices.revoke(id: pairing.device.id)
        // Then its token finds nothing, it is not listed, and revoking it again says there is no such device
        #expect(try devices.device(forToken: pairing.token) == nil)
        #expect(try devices.list().isEmpty)
        #expect(throws: KioskError.self) { try devices.revoke(id: pairing.device.id) }
    }
}
