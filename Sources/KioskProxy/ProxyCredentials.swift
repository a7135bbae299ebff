import Crypto
public import Foundation
import KioskCore

/// The password every client of a proxy that other machines can reach must send (`Proxy-Authorization: Basic`, user
/// `kiosk`). Made by Kiosk — 32 random bytes, so no dictionary or brute force can find it — shown once when made, and
/// kept only as a salted SHA-256 digest in the data directory (mode 0600): a copy of the file does not reveal it.
/// A slow password hash would add nothing against a secret of 256 random bits and cost every request.
public struct ProxyCredentials: Sendable {
    /// The user name clients send.
    public static let user = "kiosk"
    /// The digest's file in the data directory.
    public static let fileName = "kiosk-proxy-auth"

    private let salt: [UInt8]
    private let digest: [UInt8]

    /// Credentials checking `password`, salted with `salt`.
    init(password: String, salt: [UInt8]) {
        self.salt = salt
        digest = Self.digest(password, salt: salt)
    }

    private init(salt: [UInt8], digest: [UInt8]) {
        self.salt = salt
        self.digest = digest
    }

    /// The credentials of `directory`, and the new password when they were made now (nil when they were read from its
    /// file, whose password was shown when it was made). `renew` makes a new password, replacing the old.
    /// Throws, saying what to do, when the file is readable by others or is not one Kiosk wrote. Processes starting at
    /// once on a new folder make one password between them (under a lock): the one shown is the one that works.
    public static func inDirectory(_ directory: URL, renew: Bool = false) throws -> (credentials: ProxyCredentials, newPassword: String?) {
        try SecretFile.makeFolder(directory)
        let lock = directory.appendingPathComponent(fileName + ".lock").path
        return try SecretFile.withLock(lock, failure: { reason -> any Error in
            KioskError.storage("cannot lock \(lock) to make the proxy's password: \(reason)")
        }) { () throws -> (credentials: ProxyCredentials, newPassword: String?) in
            try readOrMake(in: directory, renew: renew)
        }
    }

    /// `inDirectory`'s work, under its lock.
    private static func readOrMake(in directory: URL, renew: Bool) throws -> (credentials: ProxyCredentials, newPassword: String?) {
        let url = directory.appendingPathComponent(fileName)
        if !renew, FileManager.default.fileExists(atPath: url.path) {
            if let mode = SecretFile.othersCanRead(url.path) {
                throw KioskError.invalidRequest("The proxy's password digest \(url.path) can be read by others (mode "
                                                + "\(String(mode, radix: 8))). chmod 600 it, or run `kiosk proxy password` for a new password.")
            }
            let text = try String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            let parts = text.split(separator: ":").map { Self.bytes(hex: String($0)) }
            guard parts.count == 3, text.hasPrefix("sha256:"), let salt = parts[1], let digest = parts[2], salt.count == 16, digest.count == 32 else {
                throw KioskError.invalidRequest("\(url.path) is not a password digest Kiosk wrote; run `kiosk proxy password` for a new password.")
            }
            return (ProxyCredentials(salt: salt, digest: digest), nil)
        }
        var generator = SystemRandomNumberGenerator()
        let password = Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let salt = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let credentials = ProxyCredentials(password: password, salt: salt)
        try SecretFile.write("sha256:" + Hex.encode(salt) + ":" + Hex.encode(credentials.digest) + "\n", to: url)
        return (credentials, password)
    }

    /// Whether a request's `Proxy-Authorization` values carry this password for user `kiosk` (Basic, RFC 7617): exactly
    /// one value, since the field takes one (RFC 9110 §11.7.2) and a request carrying many would try as many guesses. The
    /// digests are compared in constant time.
    public func admits(_ authorization: [String]) -> Bool {
        guard authorization.count == 1 else { return false }
        for value in authorization {
            let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2, parts[0].lowercased() == "basic",
                  let decoded = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
                  let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":"),
                  text[..<colon] == Self.user else { continue }
            let candidate = Self.digest(String(text[text.index(after: colon)...]), salt: salt)
            if zip(candidate, digest).reduce(UInt8(0), { $0 | ($1.0 ^ $1.1) }) == 0 { return true }
        }
        return false
    }

    private static func digest(_ password: String, salt: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: salt + Array(password.utf8)))
    }

    private static func bytes(hex: String) -> [UInt8]? {
        guard hex.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
