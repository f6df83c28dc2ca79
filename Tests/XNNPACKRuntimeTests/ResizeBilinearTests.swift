import CFrameGraphKernels
import NeuralGraph
import TestSupport
import Testing
@testable import XNNPACKRuntime

/// RESIZE_BILINEAR in the own-kernel plan (`fg_resize_bilinear`, tables from
/// `NativeKernels.bilinearTaps`) against XNNPACK's operator, for each corner convention, enlarging and
/// shrinking by whole and fractional factors; and its two builds against each other.
@Suite struct ResizeBilinearTests {
    @Test(arguments: [(false, false), (true, false), (false, true)], [([1, 64, 64, 16], [1, 128, 128, 16]), ([2, 7, 5, 3], [2, 3, 11, 3]),
                                                                   ([1, 10, 13, 20], [1, 25, 4, 20]), ([1, 1, 1, 8], [1, 4, 3, 8])])
    func theOwnPlanMatchesXNNPACK(corners: (alignCorners: Bool, halfPixel: Bool), shapes: ([Int], [Int])) throws {
        var g = NeuralGraph()
        let x = g.addTensor(TensorValue(name: "x", shape: shapes.0))
        let y = g.addTensor(TensorValue(name: "y", shape: shapes.1))
        g.nodes = [NeuralNode(operation: .resizeBilinear(alignCorners: corners.alignCorners, halfPixelCenters: corners.halfPixel),
                              inputs: [x], outputs: [y], name: "resize")]
        g.inputs = [x]
        g.outputs = [y]
        try g.validate()
        let own = try Predictor(graph: g, options: .init(convolutions: .own))
        let xnnpack = try Predictor(graph: g, options: .init(convolutions: .xnnpack))
        #expect(own.planSummary.contains("native(RESIZE_BILINEAR)"), "\(own.planSummary)")
        #expect(xnnpack.planSummary.contains("xnnpack"), "\(xnnpack.planSummary)")
        var seed: UInt64 = 7
        let values = pseudoRandomValues(shapes.0.reduce(1, *), seed: &seed)
        let a = try own.predict([values])[0], b = try xnnpack.predict([values])[0]
        let worst = zip(a, b).map { abs($0 - $1) }.max() ?? .infinity
        #expect(a.count == shapes.1.reduce(1, *))
        #expect(worst <= 1e-5, "\(corners) \(shapes.0) → \(shapes.1): differs from XNNPACK by \(worst)")
    }

    @Test func theVectorAndScalarBuildsAgreeBitForBit() {
        let (ih, iw, c, oh, ow) = (9, 14, 21, 20, 31)
        var seed: UInt64 = 11
        let input = pseudoRandomValues(ih * iw * c, seed: &seed)
        let ys = NativeKernels.bilinearTaps(outputs: oh, inputs: ih, alignCorners: false, halfPixelCenters: true)
        let xs = NativeKernels.bilinearTaps(outputs: ow, inputs: iw, alignCorners: false, halfPixelCenters: true)
        func run(_ simd: Int32) -> [Float] {
            var out = [Float](repeating: .nan, count: oh * ow * c)
            fg_resize_bilinear(input, 1, Int32(ih), Int32(iw), Int32(c), &out, Int32(oh), Int32(ow), ys.low, ys.high, ys.weight,
                               xs.low, xs.high, xs.weight, simd)
            return out
        }
        let vector = run(1), scalar = run(0)
        #expect(zip(vector, scalar).allSatisfy { $0.bitPattern == $1.bitPattern })
        #expect(!scalar.contains { $0.isNaN })
    }

    @Test func tapsStayInsideTheSourceAndTakeTheEdgeSampleAlonePastIt() {
        let t = NativeKernels.bilinearTaps(outputs: 8, inputs: 3, alignCorners: false, halfPixelCenters: true)
        #expect(t.low.allSatisfy { $0 >= 0 && $0 < 3 } && t.high.allSatisfy { $0 >= 0 && $0 < 3 })
        #expect(t.low[0] == 0 && t.high[0] == 0 && t.weight[0] == 0)  // position −0.3125: before the first sample
        #expect(t.low[7] == 2 && t.high[7] == 2)  // position 2.3125: past the last
        let aligned = NativeKernels.bilinearTaps(outputs: 5, inputs: 3, alignCorners: true, halfPixelCenters: false)
        #expect(aligned.low == [0, 0, 1, 1, 2] && aligned.weight == [0, 0.5, 0, 0.5, 0])
    }
}
