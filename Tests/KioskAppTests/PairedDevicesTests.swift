import Foundation
import KioskCore
import GRDB
@testable import KioskStore
import Testing
@testable import KioskApp

@Suite("Paired devices, as the faces see them")
struct PairedDevicesTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func devices() throws -> (PairedDevices, AppDatabase) {
        let database = try AppDatabase.inMemory()
        return (PairedDevices(database: database, now: { start }), database)
    }

    /// Pairs `name` as the pairing page does: a window opened, its code typed as shown.
    static func pair(_ devices: PairedDevices, name: String) throws -> DevicePairing {
        let window = try devices.openPairingWindow(now: start)
        guard case .paired(let pairing) = try devices.pair(typed: window.code.displayed, name: name, now: start) else {
            throw KioskError.invalidRequest("the window's own code did not pair")
        }
        return pairing
    }

    @Test("a pairing window's code is stored only as a salted hash, works typed with or without separators, once")
    func windowCode() throws {
        // Given the paired devices over an empty store, and a window opened with a known code
        let (devices, database) = try Self.devices()
        let code = try #require(PairingCode(digits: "80271946"))
        let window = try devices.openPairingWindow(code: code, now: Self.start)
        // Then it expires in 10 minutes, and the store holds neither the digits nor their unsalted hash
        #expect(window.expiresAt == Self.start.addingTimeInterval(600))
        #expect(try devices.pairingWindowExpiry() == window.expiresAt)
        let stored = try #require(try database.writer.read { db in try String.fetchOne(db, sql: "SELECT codeHash FROM pairingCode") })
        #expect(!stored.contains("80271946") && stored.count == 64)
        #expect(stored != PairedDevices.hash("80271946"))
        // When the code is typed with spaces
        guard case .paired = try devices.pair(typed: " 8027 1946 ", name: "Phone") else { Issue.record("the code did not pair"); return }
        // Then it is used up
        guard case .noOpenCode = try devices.pair(typed: "8027-1946", name: "Other") else { Issue.record("the code paired twice"); return }
    }

    @Test("a wrong or malformed code counts against the window, and the twentieth burns it")
    func wrongCodesBurn() throws {
        // Given an open window
        let (devices, _) = try Self.devices()
        let window = try devices.openPairingWindow(now: Self.start)
        let wrong = window.code.digits == "00000000" ? "11111111" : "00000000"
        // When 19 wrong codes are tried, one of them not even digits
        for attempt in 1...19 {
            guard case .wrong(let remaining) = try devices.pair(typed: attempt == 5 ? "abc" : wrong, name: "x") else {
                Issue.record("attempt \(attempt) was not counted as wrong"); return
            }
            #expect(remaining == 20 - attempt)
        }
        // Then the twentieth burns it, and the right code then finds none open
        guard case .burned = try devices.pair(typed: wrong, name: "x") else { Issue.record("the code was not burned"); return }
        guard case .noOpenCode = try devices.pair(typed: window.code.displayed, name: "x") else { Issue.record("a burned code paired"); return }
        #expect(try devices.list().isEmpty)
    }

    @Test("pairing hands out a 32-byte base64url token that finds the device, and stores only its SHA-256")
    func pairAndFind() throws {
        // Given the paired devices over an empty store
        let (devices, database) = try Self.devices()
        // When a device pairs
        let pairing = try Self.pair(devices, name: "Chrome on Android")
        // Then its token is 43 base64url characters, finds it, and is not what the store holds
        #expect(pairing.token.count == 43)
        #expect(pairing.token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(try devices.device(forToken: pairing.token) == pairing.device)
        #expect(try database.device(tokenHash: pairing.token) == nil)
        #expect(try database.device(tokenHash: PairedDevices.hash(pairing.token)) == pairing.device)
        #expect(PairedDevices.hash(pairing.token).count == 64)
        // And two pairings get different tokens
        #expect(try Self.pair(devices, name: "Other").token != pairing.token)
    }

    @Test("a token of the wrong shape finds nothing, and a forged name is kept to one short line")
    func wrongShapes() throws {
        // Given the paired devices, when tokens of other shapes are looked up, then none finds a device
        let (devices, _) = try Self.devices()
        for token in ["", "short", String(repeating: "a", count: 44), String(repeating: "+", count: 43)] {
            #expect(try devices.device(forToken: token) == nil)
        }
        // And a name of 500 characters over two lines is stored as one line of 80
        let long = try Self.pair(devices, name: String(repeating: "x", count: 500) + "\nsecond line")
        #expect(long.device.name.count == 80 && !long.device.name.contains("\n"))
    }

    @Test("last seen is written once per resolution, so a browsing phone does not write on every request")
    func touchResolution() throws {
        // Given a device paired at the start
        let (devices, _) = try Self.devices()
        let pairing = try Self.pair(devices, name: "Phone")
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
        let pairing = try Self.pair(devices, name: "Phone")
        try devices.revoke(id: pairing.device.id)
        // Then its token finds nothing, it is not listed, and revoking it again says there is no such device
        #expect(try devices.device(forToken: pairing.token) == nil)
        #expect(try devices.list().isEmpty)
        #expect(throws: KioskError.self) { try devices.revoke(id: pairing.device.id) }
    }
}
