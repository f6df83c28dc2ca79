import Foundation
import NeuralGraph
import TestSupport
import Testing
@testable import ONNXImport

/// Randomly damaged models must load or throw a ``ModelError``: never crash, never hang.
///
/// Each iteration draws its mutations from `SplitMix64(seed: baseSeed ^ iteration)`, so one iteration
/// reproduces on its own. Two hand-built models are mutated: the small one (Conv, BatchNormalization,
/// Resize, Concat, Softmax) and a wide one (most other operators and tensor encodings).
/// `FRAMEGRAPH_FUZZ_ITERATIONS` (default 100 000 per model) sets the count;
/// `FRAMEGRAPH_FUZZ_TRACE=1` writes every mutated file to the scratch folder before loading it, so the
/// file that crashed the process is left behind. A load slower than the per-iteration bound is
/// written there too.
@Suite(.serialized) struct FuzzTests {
    static let baseSeed: UInt64 = 0x0000_5EED_0000_0A11
    /// Per-iteration time bound (debug build); a slower load counts as a hang.
    static let iterationBound: Duration = .seconds(2)

    /// Applies 1–3 mutations: byte flips, varint-sized overwrites with boundary values, insertions,
    /// deletions, truncation.
    static func mutate(_ original: [UInt8], rng: inout SplitMix64) -> [UInt8] {
        var bytes = original
        for _ in 0..<Int.random(in: 1...3, using: &rng) where bytes.count > 2 {
            let p = Int.random(in: 0..<bytes.count, using: &rng)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<4:
                bytes[p] ^= UInt8.random(in: 1...255, using: &rng)
            case 4..<6:
                let boundary: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0x08, 0x0A, 0x12, 0x1A, 0x22]
                bytes[p] = boundary.randomElement(using: &rng) ?? 0
            case 6:
                // A huge varint (length or count) in place.
                let huge: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]
                for (k, b) in huge.enumerated() where p + k < bytes.count { bytes[p + k] = b }
            case 7:
                bytes.insert(UInt8.random(in: 0...255, using: &rng), at: p)
            case 8:
                bytes.remove(at: p)
            default:
                bytes.removeLast(bytes.count - max(p, 1))
            }
        }
        return bytes
    }

    @Test(arguments: ["small", "wide"]) func fuzzModel(_ name: String) throws {
        let original = (name == "small" ? ImportErrorTests.smallModel() : ImportErrorTests.wideModel()).bytes()
        let n = ProcessInfo.processInfo.environment["FRAMEGRAPH_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 100_000
        let trace = ProcessInfo.processInfo.environment["FRAMEGRAPH_FUZZ_TRACE"] == "1"
        let scratch = TestEnvironment.scratch("onnx-fuzz-\(name)")
        let clock = ContinuousClock()
        let start = clock.now
        var loaded = 0, malformed = 0, other = 0
        var slowest: Duration = .zero
        for iteration in 0..<n {
            var rng = SplitMix64(seed: Self.baseSeed ^ UInt64(iteration))
            let bytes = Self.mutate(original, rng: &rng)
            if trace { try Data(bytes).write(to: scratch.appendingPathComponent("current.onnx")) }
            let t0 = clock.now
            do {
                let graph = try ONNXImporter.load(bytes: bytes, fileName: "fuzz.onnx")
                loaded += 1
                _ = graph.parameterCount
            } catch {
                if case .malformed = error { malformed += 1 } else { other += 1 }
                _ = error.description
            }
            let elapsed = clock.now - t0
            slowest = max(slowest, elapsed)
            if elapsed > Self.iterationBound {
                let file = scratch.appendingPathComponent("slow-iteration-\(iteration).onnx")
                try Data(bytes).write(to: file)
                Issue.record("iteration \(iteration) took \(elapsed); the file is at \(file.path)")
            }
        }
        print("ONNX fuzz (\(name), \(original.count)-byte model): \(n) iterations in \(clock.now - start): \(loaded) loaded, " +
              "\(malformed) malformed, \(other) other errors; slowest \(slowest)")
        #expect(loaded + malformed + other == n)
        if n >= 1000 { #expect(malformed > 0 && loaded > 0) }
    }
}
