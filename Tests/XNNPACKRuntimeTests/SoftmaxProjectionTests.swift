import CFrameGraphKernels
import Foundation
import NeuralGraph
import ONNXImport
import TestSupport
import Testing
@testable import XNNPACKRuntime

/// FrameGraph's softmax + 1×1 projection kernel (`fg_softmax_project`) and the plans that use it (the
/// colorizer's annealed mean).
@Suite struct SoftmaxProjectionTests {
    /// Random row lengths (with and without a partial vector), scales (a temperature, 1, a negative
    /// one), logits far apart and close together, projections with and without bias and clamp: the
    /// AVX2 and scalar builds agree bit for bit and both follow the definition (double precision).
    @Test func theVectorKernelMatchesTheScalarOneBitForBitAndBothMatchTheDefinition() {
        var seed: UInt64 = 77
        func int(_ range: ClosedRange<Int>) -> Int { pseudoRandomInt(range, seed: &seed) }
        var compared = 0
        for caseIndex in 0..<80 {
            let rows = int(1...30), k = int(1...200), n = int(1...6)
            let spread = Float([1, 10, 60][int(0...2)])
            let scale: Float = [1 / 0.7, 1, -0.5, 2.5][int(0...3)]
            let logits = pseudoRandomValues(rows * k, seed: &seed).map { $0 * spread }
            let weights = pseudoRandomValues(n * k, seed: &seed).map { $0 * 90 }
            let bias = int(0...1) == 0 ? nil : pseudoRandomValues(n, seed: &seed)
            let (lo, hi): (Float, Float) = int(0...1) == 0 ? (-.infinity, .infinity) : (-20, 20)
            var packed = [Float](repeating: .nan, count: fg_softmax_project_padded(Int32(k)) * n)
            fg_softmax_project_pack(weights, Int32(k), Int32(n), &packed)
            func run(simd: Int32) -> [Float] {
                var out = [Float](repeating: .nan, count: rows * n)
                var scratch = [Float](repeating: .nan, count: fg_softmax_project_padded(Int32(k)))
                if let bias {
                    fg_softmax_project(logits, 0, rows, Int32(k), scale, packed, bias, Int32(n), lo, hi, &out, &scratch, simd)
                } else {
                    fg_softmax_project(logits, 0, rows, Int32(k), scale, packed, nil, Int32(n), lo, hi, &out, &scratch, simd)
                }
                return out
            }
            let vector = run(simd: 1), scalar = run(simd: 0)
            var worst = 0.0
            for r in 0..<rows {
                // The scaled logits as float32 has them (their own rounding, up to 1e-5 of logits near
                // 150, is the input's, not the kernel's); the rest in double precision.
                let t = (0..<k).map { Double(logits[r * k + $0] * scale) }
                let top = t.max() ?? 0
                let e = t.map { Foundation.exp($0 - top) }
                let sum = e.reduce(0, +)
                for c in 0..<n {
                    var v = Double(bias?[c] ?? 0)
                    for i in 0..<k { v += e[i] / sum * Double(weights[c * k + i]) }
                    v = min(max(v, Double(lo)), Double(hi))
                    worst = max(worst, abs(v - Double(scalar[r * n + c])))
                }
            }
            let label = "rows \(rows) k \(k) n \(n) spread \(spread) scale \(scale) bias \(bias != nil) clamp \(lo)…\(hi)"
            // Values reach ±90 (the colorizer's bin centres): 1e-4 there is about 15 float steps.
            #expect(worst < 1e-4, "case \(caseIndex) (\(label)): scalar build differs from the definition by \(worst)")
            let mismatches = zip(vector, scalar).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(mismatches == 0, "case \(caseIndex) (\(label)): \(mismatches) values differ between the AVX2 and scalar builds")
            compared += vector.count
        }
        #expect(compared > 500)
    }

    /// MUL by a scalar → SOFTMAX → 1×1 convolution with bias: one kernel in the fused plan, the same
    /// values as XNNPACK's operations one by one; a softmax whose probabilities are also an output
    /// is left alone.
    @Test func anAnnealedMeanRunsAsOneKernelAndMatchesXNNPACK() throws {
        var seed: UInt64 = 3
        func graph(probabilitiesAreAnOutput: Bool) -> NeuralGraph {
            var g = NeuralGraph()
            let x = g.addTensor(TensorValue(name: "logits", shape: [1, 9, 7, 37]))
            let t = g.addTensor(TensorValue(name: "inverseT", shape: [1], constant: ConstantStorage(floats: [1 / 0.38])))
            let scaled = g.addTensor(TensorValue(name: "scaled", shape: [1, 9, 7, 37]))
            let p = g.addTensor(TensorValue(name: "p", shape: [1, 9, 7, 37]))
            let w = g.addTensor(TensorValue(name: "centres", shape: [2, 1, 1, 37], constant: ConstantStorage(floats: pseudoRandomValues(74, seed: &seed).map { $0 * 80 })))
            let b = g.addTensor(TensorValue(name: "b", shape: [2], constant: ConstantStorage(floats: [0.5, -0.25])))
            let ab = g.addTensor(TensorValue(name: "ab", shape: [1, 9, 7, 2]))
            g.nodes = [
                NeuralNode(operation: .multiply(.none), inputs: [x, t], outputs: [scaled], name: "mul"),
                NeuralNode(operation: .softmax(beta: 1), inputs: [scaled], outputs: [p], name: "softmax"),
                NeuralNode(operation: .conv2d(ConvolutionParameters(padding: .valid)), inputs: [p, w, b], outputs: [ab], name: "mean"),
            ]
            g.inputs = [x]
            g.outputs = probabilitiesAreAnOutput ? [ab, p] : [ab]
            return g
        }
        let g = graph(probabilitiesAreAnOutput: false)
        try g.validate()
        let fused = try Predictor(graph: g, options: .init(convolutions: .own))
        let plain = try Predictor(graph: g, options: .init(convolutions: .xnnpack))
        #expect(fused.planSummary == "own(MUL+SOFTMAX+CONV_2D)")
        let inputs = [pseudoRandomValues(9 * 7 * 37, seed: &seed).map { $0 * 4 }]
        let a = try fused.predict(inputs)[0], c = try plain.predict(inputs)[0]
        let worst = zip(a, c).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst < 1e-4, "fused vs XNNPACK: max |diff| \(worst)")
        #expect(a.contains { abs($0) > 5 }, "the projection gives values well away from zero")
        let kept = try Predictor(graph: graph(probabilitiesAreAnOutput: true), options: .init(convolutions: .own))
        #expect(!kept.planSummary.contains("SOFTMAX+CONV_2D"), "\(kept.planSummary)")
    }

    /// The colorizer ends in the fused kernel and gives XNNPACK's a/b.
    @Test func theColorizersDecodingIsOneKernel() throws {
        let path = TestEnvironment.root.appendingPathComponent("models/colorizer/colorizer.onnx").path
        let graph = try ONNXImporter.load(path: path)
        let fused = try Predictor(graph: graph, options: .init(convolutions: .own))
        let plain = try Predictor(graph: graph, options: .init(convolutions: .xnnpack))
        #expect(fused.planSummary.hasSuffix("own(MUL+SOFTMAX+CONV_2D)"), "\(fused.planSummary)")
        var seed: UInt64 = 19
        let inputs = [pseudoRandomValues(fused.input(0).count, seed: &seed)]
        let a = try fused.predict(inputs)[0], c = try plain.predict(inputs)[0]
        let worst = zip(a, c).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst < 2e-3, "colorizer a/b, fused vs XNNPACK: max |diff| \(worst) Lab units")
    }
}
