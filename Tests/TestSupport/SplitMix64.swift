/// SplitMix64: a small deterministic generator so that test data and fuzz failures reproduce from
/// their seed (and match the Python tools, which use the same sequence).
public struct SplitMix64: RandomNumberGenerator {
    public var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The first value of the sequence seeded with `i` (what tools/colorizer/make_lab_goldens.py calls splitmix64(i)).
    public static func value(_ i: UInt64) -> UInt64 {
        var g = SplitMix64(seed: i)
        return g.next()
    }
}
