/// Deterministic pseudo-random floats in −1…1 for the kernel tests (a 64-bit linear congruential
/// sequence: each test's cases stay the same from run to run), advancing `seed`.
public func pseudoRandomValues(_ count: Int, seed: inout UInt64) -> [Float] {
    (0..<count).map { _ in
        seed = seed &* 6364136223846793005 &+ 1442695040888963407
        return Float(Int64(bitPattern: seed >> 11) % 2000) / 1000 - 1
    }
}

/// A deterministic pseudo-random integer in `range` from the same sequence as
/// ``pseudoRandomValues(_:seed:)``, advancing `seed`: the kernel tests' random shapes and options.
public func pseudoRandomInt(_ range: ClosedRange<Int>, seed: inout UInt64) -> Int {
    seed = seed &* 6364136223846793005 &+ 1442695040888963407
    return range.lowerBound + Int((seed >> 33) % UInt64(range.count))
}
