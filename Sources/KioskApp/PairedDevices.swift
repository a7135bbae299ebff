import Crypto
public import Foundation
public import KioskCore
import KioskStore

/// A device just paired: its record, and the token its cookie carries. The token exists only here: the
/// store keeps its SHA-256, so a copy of the database opens nothing.
public struct DevicePairing: Sendable {
    /// The stored device.
    public var device: PairedDevice
    /// 32 random bytes, base64url without padding (43 characters): the cookie's value.
    public var token: String
}

/// The browsers allowed to use `kiosk serve --lan` from other machines, for the faces: the web app pairs
/// and checks them, `kiosk devices` lists and revokes them. Every check reads the store, so a revocation
/// from another process counts at the next request.
public struct PairedDevices: Sendable {
    let database: AppDatabase
    let now: @Sendable () -> Date

    /// Stores a new device named `name` and returns it with its token.
    public func pair(name: String, now date: Date? = nil) throws -> DevicePairing {
        var generator = SystemRandomNumberGenerator()
        let token = Self.newToken(using: &generator)
        let device = try database.addDevice(tokenHash: Self.hash(token), name: Self.clip(name), at: date ?? now())
        return DevicePairing(device: device, token: token)
    }

    /// The device `token` belongs to, or nil when it belongs to none (never issued, revoked, or not a token).
    public func device(forToken token: String) throws -> PairedDevice? {
        guard Self.isWellFormed(token) else { return nil }
        return try database.device(tokenHash: Self.hash(token))
    }

    /// Notes that `device` made a request at `date`, when its "last seen" is older than
    /// `PairedDevice.lastSeenResolution` (so a browsing phone does not write on every request).
    public func touch(_ device: PairedDevice, now date: Date? = nil) throws {
        let date = date ?? now()
        guard date.timeIntervalSince(device.lastSeenAt) >= PairedDevice.lastSeenResolution else { return }
        try database.touchDevice(id: device.id, at: date)
    }

    /// Every paired device, oldest first.
    public func list() throws -> [PairedDevice] { try database.devices() }

    /// Revokes device `id`: its cookie stops working at its next request. Throws `notFound` when there is none.
    public func revoke(id: Int64) throws {
        guard try database.removeDevice(id: id) else {
            throw KioskError.notFound("There is no paired device \(id); `kiosk devices list` shows them")
        }
    }

    /// The token's length: 32 bytes in base64url without padding.
    static let tokenLength = 43

    /// 32 bytes from `generator` as base64url without padding.
    static func newToken(using generator: inout some RandomNumberGenerator) -> String {
        let bytes = (0..<4).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Whether `token` has the shape of one Kiosk issues; anything else is not even hashed.
    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == tokenLength
            && token.utf8.allSatisfy { $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }

    /// The stored form of a token: its SHA-256 as lowercase hex. A token has 256 random bits, so a plain hash
    /// (no salt, no slow function) is enough: there is nothing to guess from it.
    package static func hash(_ token: String) -> String { Hex.encode(SHA256.hash(data: Data(token.utf8))) }

    /// A User-Agent summary is short already; this keeps a forged one from filling the table.
    private static func clip(_ name: String) -> String {
        let line = name.filter { !$0.isNewline }
        return line.count <= 80 ? line : String(line.prefix(79)) + "…"
    }
}

extension UInt8 {
    fileprivate var isASCIIAlphanumeric: Bool {
        (48...57).contains(self) || (65...90).contains(self) || (97...122).contains(self)
    }
}

extension Kiosk {
    /// The browsers paired with `kiosk serve --lan`.
    public var devices: PairedDevices { PairedDevices(database: database, now: now) }
}
