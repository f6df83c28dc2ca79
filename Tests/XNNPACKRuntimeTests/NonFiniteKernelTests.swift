import CFrameGraphKernels
import Testing

/// `fg_zero_nonfinite`, the scrub every network output goes through: whichever lane of the AVX2
/// pass (32 values at a time) or of the scalar rest holds a NaN or an infinity, it is found, it and
/// only it becomes 0, and the count says how many there were.
@Suite struct NonFiniteKernelTests {
    @Test(arguments: [1, 31, 32, 33, 64, 100, 65536])
    func everyNonFiniteValueIsZeroedAndCounted(n: Int) {
        let finite = (0..<n).map { Float($0 % 97) * 0.37 - 11 }
        // A clean output is left alone.
        var clean = finite
        #expect(fg_zero_nonfinite(&clean, clean.count) == 0)
        #expect(clean == finite)
        // One special value at a time, at the start, in the middle (inside the AVX2 pass for large
        // n), and last (in the scalar rest unless n is a multiple of 32).
        for special in [Float.nan, .infinity, -.infinity, Float(bitPattern: 0x7fc0_0001)] {
            for position in Set([0, n / 2, n - 1]) {
                var p = finite
                p[position] = special
                #expect(fg_zero_nonfinite(&p, p.count) == 1, "\(special) at \(position) of \(n)")
                var expected = finite
                expected[position] = 0
                #expect(p == expected, "\(special) at \(position) of \(n)")
            }
        }
        // Several, and the largest finite values are kept.
        var p = finite
        p[n - 1] = -.greatestFiniteMagnitude
        p[0] = .greatestFiniteMagnitude
        var nonFinite = 0
        for i in stride(from: 1, to: n - 1, by: 5) {
            p[i] = .nan
            nonFinite += 1
        }
        let replaced = fg_zero_nonfinite(&p, p.count)
        #expect(replaced == nonFinite)
        let first = p[0], last = p[n - 1]
        #expect(first == .greatestFiniteMagnitude)
        #expect(last == (n == 1 ? .greatestFiniteMagnitude : -.greatestFiniteMagnitude))
        #expect(p.allSatisfy { $0.isFinite })
    }
}
