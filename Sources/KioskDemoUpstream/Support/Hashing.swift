import Crypto
import Foundation
import KioskCore

enum Hashing {
    /// FNV-1a, 64 bit: a stable hash of text (Swift's `Hasher` is randomly seeded per process).
    static func fnv1a(_ text: String) -> UInt64 { FNV1a.hash(text.utf8) }

    /// Marvel's request signature: md5(ts + privateKey + publicKey) as lowercase hex.
    static func marvelHash(timestamp: String, privateKey: String, publicKey: String) -> String {
        Hex.encode(Insecure.MD5.hash(data: Array((timestamp + privateKey + publicKey).utf8)))
    }

    /// The entity tag of a body: SHA-1 hex, the shape Marvel's `etag` field has.
    static func entityTag(_ body: [UInt8]) -> String {
        Hex.encode(Insecure.SHA1.hash(data: body))
    }

    /// A random key of `length` lowercase hex digits, for per-instance default credentials.
    static func randomKey(length: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return String(Hex.encode((0..<(length + 1) / 2).map { _ in UInt8.random(in: 0...255, using: &generator) }).prefix(length))
    }
}
