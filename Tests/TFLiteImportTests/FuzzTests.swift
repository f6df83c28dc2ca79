import Foundation
import NeuralGraph
import TestSupport
import Testing
@testable import TFLiteImport

/// Randomly damaged models must load or throw a ``ModelError``: never crash, never hang.
///
/// Each iteration draws its mutations from `SplitMix64(seed: baseSeed ^ iteration)`, so one iteration
/// reproduces on its own. Environment:
/// - `FRAMEGRAPH_FUZZ_ITERATIONS` (default 100 000): iterations on the small hand-built model.
/// - `FRAMEGRAPH_FUZZ_REAL_ITERATIONS` (default 3 000): iterations on face_detection_short_range.tflite.
/// - `FRAMEGRAPH_FUZZ_TRACE=1`: write every mutated file to .build/test-output/… before loading it,
///   so the file that crashed the process is left behind.
/// A mutated file that takes longer than the per-iteration bound is written there too.
@Suite(.serialized) struct FuzzTests {
    static let baseSeed: UInt64 = 0x5EED_F1A7_B0FF_0001
    /// Per-iteration time bound (debug build); a slower load counts as a hang.
    static let iterationBound: Duration = .seconds(2)

    static func iterations(_ variable: String, default value: Int) -> Int {
        ProcessInfo.processInfo.environment[variable].flatMap(Int.init) ?? value
    }

    /// Applies 1–3 random mutations: byte flips, int32/int16 overwrites with boundary values, truncation.
    static func mutate(_ original: [UInt8], rng: inout SplitMix64, focus: Range<Int>) -> [UInt8] {
        var bytes = original
        let count = Int.random(in: 1...3, using: &rng)
        for _ in 0..<count where bytes.count > 8 {
            // Half the mutations land in `focus`, where the tables are (TFLite writers put them after
            // the weights, at the end of the file), the rest anywhere.
            let range = Bool.random(using: &rng) ? focus.clamped(to: 0..<bytes.count) : 0..<bytes.count
            let position = range.isEmpty ? 0 : Int.random(in: range, using: &rng)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<4:
                bytes[position] ^= UInt8.random(in: 1...255, using: &rng)
            case 4..<7:
                let p = position & ~3
                guard p + 4 <= bytes.count else { continue }
                let boundary: [UInt32] = [0, 1, 2, 3, 4, 0xFFFF_FFFF, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF, 0x1_0000,
                                          UInt32(bytes.count), UInt32(bytes.count - p), UInt32(bytes.count - p - 4),
                                          UInt32.random(in: 0...UInt32.max, using: &rng)]
                let v = boundary.randomElement(using: &rng) ?? 0
                withUnsafeBytes(of: v.littleEndian) { for i in 0..<4 { bytes[p + i] = $0[i] } }
            case 7..<9:
                let p = position & ~1
                guard p + 2 <= bytes.count else { continue }
                let boundary: [UInt16] = [0, 2, 3, 4, 5, 0xFFFF, 0x8000, UInt16.random(in: 0...UInt16.max, using: &rng)]
                let v = boundary.randomElement(using: &rng) ?? 0
                bytes[p] = UInt8(v & 0xFF)
                bytes[p + 1] = UInt8(v >> 8)
            default:
                bytes.removeLast(bytes.count - max(position, 1))
            }
        }
        return bytes
    }

    struct Outcome {
        var loaded = 0, malformed = 0, other = 0
        var slowest: Duration = .zero
    }

    /// Runs `iterations` mutations of `original`; returns counts of outcomes.
    static func fuzz(_ original: [UInt8], name: String, iterations: Int, focus: Range<Int>) throws -> Outcome {
        let trace = ProcessInfo.processInfo.environment["FRAMEGRAPH_FUZZ_TRACE"] == "1"
        let scratch = TestEnvironment.scratch("fuzz-\(name)")
        let clock = ContinuousClock()
        var outcome = Outcome()
        for iteration in 0..<iterations {
            var rng = SplitMix64(seed: baseSeed ^ UInt64(iteration))
            let bytes = mutate(original, rng: &rng, focus: focus)
            let file = scratch.appendingPathComponent("\(name)-iteration-\(iteration).tflite")
            if trace { try Data(bytes).write(to: scratch.appendingPathComponent("current.tflite")) }
            let start = clock.now
            do {
                let graph = try TFLiteImporter.load(bytes: bytes, fileName: name)
                outcome.loaded += 1
                _ = graph.parameterCount
            } catch let error {
                switch error {
                case .malformed: outcome.malformed += 1
                default: outcome.other += 1
                }
                _ = error.description
            }
            let elapsed = clock.now - start
            outcome.slowest = max(outcome.slowest, elapsed)
            if elapsed > iterationBound {
                try Data(bytes).write(to: file)
                Issue.record("iteration \(iteration) took \(elapsed); the file is at \(file.path)")
            }
        }
        return outcome
    }

    @Test func fuzzSmallModel() throws {
        let original = TestModel.small().bytes()
        let n = Self.iterations("FRAMEGRAPH_FUZZ_ITERATIONS", default: 100_000)
        let start = ContinuousClock.now
        let outcome = try Self.fuzz(original, name: "small", iterations: n, focus: 0..<original.count)
        print("fuzz small model (\(original.count) bytes): \(n) iterations in \(ContinuousClock.now - start): " +
              "\(outcome.loaded) loaded, \(outcome.malformed) malformed, \(outcome.other) other errors; slowest \(outcome.slowest)")
        #expect(outcome.loaded + outcome.malformed + outcome.other == n)
        #expect(outcome.malformed > 0)
    }

    @Test func fuzzRealModel() throws {
        guard let path = TestEnvironment.mediaPipeModel("face_detection_short_range.tflite") else {
            print("skipped: face_detection_short_range.tflite is absent from models/cache (tools/models/fetch_mediapipe_models.sh models/cache)")
            return
        }
        let original = try [UInt8](contentsOf: path)
        let n = Self.iterations("FRAMEGRAPH_FUZZ_REAL_ITERATIONS", default: 3_000)
        let start = ContinuousClock.now
        let outcome = try Self.fuzz(original, name: "face_detection", iterations: n, focus: max(0, original.count - 24_576)..<original.count)
        print("fuzz face_detection_short_range (\(original.count) bytes): \(n) iterations in \(ContinuousClock.now - start): " +
              "\(outcome.loaded) loaded, \(outcome.malformed) malformed, \(outcome.other) other errors; slowest \(outcome.slowest)")
        #expect(outcome.loaded + outcome.malformed + outcome.other == n)
    }
}
