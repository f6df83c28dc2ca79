/// Deterministic pseudo-random floats in −1…1 for the kernel tests (a 64-bit linear congruential
/// sequence: each test's cases stay the same from run to run), advancing `seed`.
public func pseudoRandomValues(_ count: Int, seed: inout UInt64) -> [Float] {
    (0..<count).map { _ in
        seed = seed &* 6364136223846793005 &+ 1442695040888963407
        return Float(Int64(bitPattern: seed >> 11) % 2000) / 1000 - 1
    }
}
