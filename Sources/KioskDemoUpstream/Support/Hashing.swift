import Crypto
import Foundation
import KioskCore

/// A small, fast, seedable generator (SplitMix64).
///
/// Used for everything that must be identical on every run: the data catalogs (fixed seeds) and
/// fault decisions (the configured seed). `SystemRandomNumberGenerator` is only used for keys.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform value in 0..<1.
    mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// A uniform integer in `range`, without `Int.random`'s dependence on the generator protocol details.
    mutating func int(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound + 1)
        return range.lowerBound + Int(next() % span)
    }

    /// Whether an event with probability `probability` happens.
    mutating func chance(_ probability: Double) -> Bool { unit() < probability }

    /// One element of a non-empty array.
    mutating func pick<T>(_ values: [T]) -> T { values[Int(next() % UInt64(values.count))] }
}

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
