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

/// The code a browser on another machine enters once to pair with `serve --lan`: 8 random digits, shown as
/// `1234-5678`. It is a secret: `description` hides it, so a log line or an error that interpolates it shows
/// nothing; only `displayed`, for the terminal of the person who asked for it, has it.
public struct PairingCode: Sendable, CustomStringConvertible {
    /// The 8 digits.
    package let digits: String

    /// A code of exactly 8 ASCII digits.
    package init?(digits: String) {
        guard digits.utf8.count == 8, digits.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        self.digits = digits
    }

    /// A code drawn uniformly from `generator`.
    public static func random(using generator: inout some RandomNumberGenerator) -> PairingCode {
        let value = Int.random(in: 0..<100_000_000, using: &generator)
        let text = String(value)
        return PairingCode(digits: String(repeating: "0", count: 8 - text.count) + text)!
    }

    /// "1234-5678": for the terminal of the person who opened the window, and nowhere else.
    public var displayed: String { String(digits.prefix(4)) + "-" + String(digits.suffix(4)) }

    /// Never the code.
    public var description: String { "••••-••••" }

    /// The 8 digits of a code however it was typed ("1234-5678", "1234 5678", "12345678"), or nil.
    package static func digits(of typed: String) -> String? {
        let digits = String(typed.unicodeScalars.filter { $0 != "-" && $0 != " " && $0 != "\u{A0}" }.map(Character.init))
        return PairingCode(digits: digits)?.digits
    }
}

/// An open pairing window: the code to show, and when it stops working.
public struct PairingWindow: Sendable {
    /// The code (shown once, to the person who asked).
    public var code: PairingCode
    /// When it stops working if unused.
    public var expiresAt: Date
}

/// What a typed pairing code did.
public enum PairingOutcome: Sendable {
    /// It was the open code: this browser is a paired device now (the code is used up).
    case paired(DevicePairing)
    /// It was not; the code survives `remaining` more wrong tries.
    case wrong(remaining: Int)
    /// It was not, and too many wrong codes were tried: the code no longer works.
    case burned
    /// No code is open: none was shown, or it expired, was used or was burned.
    case noOpenCode
}

/// The browsers allowed to use `kiosk serve --lan` from other machines, for the faces: the web app pairs
/// and checks them, `kiosk devices` lists and revokes them. Every check reads the store, so a revocation
/// from another process counts at the next request.
public struct PairedDevices: Sendable {
    let database: AppDatabase
    let now: @Sendable () -> Date

    /// How long a pairing code works once shown.
    public static let pairingWindow: TimeInterval = 600
    /// How many wrong codes burn the open one (it then stops working; `openPairingWindow` makes a new one).
    public static let maximumPairingFailures = 20

    /// Opens a pairing window: a new random code, valid for `pairingWindow` and for one browser; any code
    /// shown before stops working. The code is returned to be shown to the user and is stored only as a
    /// salted hash.
    public func openPairingWindow(now date: Date? = nil) throws -> PairingWindow {
        var generator = SystemRandomNumberGenerator()
        return try openPairingWindow(code: .random(using: &generator), now: date ?? now())
    }

    /// `openPairingWindow` with a given code (tests choose theirs).
    package func openPairingWindow(code: PairingCode, now date: Date) throws -> PairingWindow {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<2).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } }
        let expiresAt = date.addingTimeInterval(Self.pairingWindow)
        try database.openPairingCode(salt: salt, codeHash: Self.codeHash(code.digits, salt: salt), at: date, expiresAt: expiresAt)
        return PairingWindow(code: code, expiresAt: expiresAt)
    }

    /// When the open pairing code stops working, or nil when none is open.
    public func pairingWindowExpiry() throws -> Date? { try database.pairingCodeExpiry(at: now()) }

    /// Pairs the browser `name` that typed `typed` ("1234-5678", "1234 5678", "12345678"): a new device with its
    /// token when it is the open code (which is then used up), otherwise what happened to the attempt. Any
    /// attempt with a code open counts, whatever was typed.
    public func pair(typed: String, name: String, now date: Date? = nil) throws -> PairingOutcome {
        var generator = SystemRandomNumberGenerator()
        let token = Self.newToken(using: &generator)
        let digits = PairingCode.digits(of: typed)
        let redemption = try database.redeemPairingCode(
            // Typed text that is not 8 digits can match no code, but still counts as a wrong try.
            hash: { salt in digits.map { Self.codeHash($0, salt: salt) } ?? "" },
            tokenHash: Self.hash(token), name: Self.clip(name), at: date ?? now(), maximumFailures: Self.maximumPairingFailures)
        switch redemption {
        case .paired(let device): return .paired(DevicePairing(device: device, token: token))
        case .wrong(let remaining): return .wrong(remaining: remaining)
        case .burned: return .burned
        case .noOpenCode: return .noOpenCode
        }
    }

    /// Whether the browser holding `token` is (still) a paired device.
    public func isPaired(token: String) -> Bool { (try? device(forToken: token)) != nil }

    /// Whether `token` belonged to a device revoked from this store (not merely one it never knew).
    public func isRevoked(token: String) -> Bool {
        Self.isWellFormed(token) && ((try? database.isRevokedDevice(tokenHash: Self.hash(token))) ?? false)
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

    /// Revokes device `id`: its cookie stops working at its next request (and an open live stream of its ends
    /// within seconds); the idempotency keys of its writes are forgotten. Throws `notFound` when there is none.
    public func revoke(id: Int64) throws {
        guard try database.removeDevice(id: id, at: now()) else {
            throw KioskError.notFound("paired device \(id) (`kiosk devices list` shows them)")
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

    /// The stored form of a code: SHA-256 of the salt and the digits, as hex. The salt keeps one table of
    /// precomputed hashes from serving every store; the window's few minutes and the burn after
    /// `maximumPairingFailures` are what keep the code from being guessed.
    static func codeHash(_ digits: String, salt: [UInt8]) -> String {
        Hex.encode(SHA256.hash(data: Data(salt + Array(digits.utf8))))
    }

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
