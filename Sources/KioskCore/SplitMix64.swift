/// A small, fast, seedable generator (SplitMix64).
///
/// Used for everything that must be identical on every run: the demo upstream's catalogs (fixed seeds) and fault
/// decisions (the configured seed), and randomized tests, so a failure names an input that fails again.
/// `SystemRandomNumberGenerator` is used for keys.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next number of the sequence.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform value in 0..<1.
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// A uniform integer in `range`, without `Int.random`'s dependence on the generator protocol details.
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound + 1)
        return range.lowerBound + Int(next() % span)
    }

    /// Whether an event with probability `probability` happens.
    public mutating func chance(_ probability: Double) -> Bool { unit() < probability }

    /// One element of a non-empty array.
    public mutating func pick<T>(_ values: [T]) -> T { values[Int(next() % UInt64(values.count))] }
}
