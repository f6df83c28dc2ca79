import CFrameGraphKernels
import Foundation
import NeuralGraph
import TestSupport
import Testing
@testable import XNNPACKRuntime

/// `--conv-kernels auto`: both plans timed once per graph structure, the faster kept and reused.
@Suite struct KernelTuningTests {
    /// A 3×3 convolution over 12×12×8 with ReLU6, then a 1×1 one: one own-kernel group or one
    /// XNNPACK stage. `seed` changes the weights only.
    func graph(seed: UInt64, width: Int = 12) -> NeuralGraph {
        var g = NeuralGraph()
        var state = seed
        let w1 = pseudoRandomValues(16 * 9 * 8, seed: &state), w2 = pseudoRandomValues(8 * 16, seed: &state)
        let input = g.addTensor(TensorValue(name: "x", shape: [1, 12, width, 8]))
        let f1 = g.addTensor(TensorValue(name: "w1", shape: [16, 3, 3, 8], constant: ConstantStorage(floats: w1)))
        let b1 = g.addTensor(TensorValue(name: "b1", shape: [16], constant: ConstantStorage(floats: [Float](repeating: 0.1, count: 16))))
        let mid = g.addTensor(TensorValue(name: "m", shape: [1, 12, width, 16]))
        let f2 = g.addTensor(TensorValue(name: "w2", shape: [8, 1, 1, 16], constant: ConstantStorage(floats: w2)))
        let b2 = g.addTensor(TensorValue(name: "b2", shape: [8], constant: ConstantStorage(floats: [Float](repeating: 0, count: 8))))
        let out = g.addTensor(TensorValue(name: "y", shape: [1, 12, width, 8]))
        g.nodes = [
            NeuralNode(operation: .conv2d(ConvolutionParameters(strideH: 1, strideW: 1, padding: .same, activation: .relu6)),
                       inputs: [input, f1, b1], outputs: [mid], name: "conv1"),
            NeuralNode(operation: .conv2d(ConvolutionParameters(strideH: 1, strideW: 1, padding: .same)),
                       inputs: [mid, f2, b2], outputs: [out], name: "conv2"),
        ]
        g.inputs = [input]
        g.outputs = [out]
        return g
    }

    @Test func theKeyIsTheStructureNotTheWeights() {
        let a = KernelTuning.key(of: graph(seed: 1), threads: 1)
        #expect(a == KernelTuning.key(of: graph(seed: 7), threads: 1))
        #expect(a != KernelTuning.key(of: graph(seed: 1), threads: 2))
        #expect(a != KernelTuning.key(of: graph(seed: 1, width: 13), threads: 1))
    }

    @Test func autoRunsThePlanItNamesAndASecondPredictorReusesTheDecision() throws {
        // A width no other test uses, so this test makes the decision itself.
        let g = graph(seed: 3, width: 17)
        let first = try Predictor(graph: g)
        // The tuner leaves the input buffers zeroed, as a fresh predictor has them.
        #expect(Array(first.input(0).values).allSatisfy { $0 == 0 })
        let second = try Predictor(graph: graph(seed: 4, width: 17))
        let fixedByEnvironment = ProcessInfo.processInfo.environment["FRAMEGRAPH_CONV_KERNELS"] != nil
        if fg_conv_has_simd() != 0 && !fixedByEnvironment {
            // Timed: both times in the description, the same ones for the second predictor.
            #expect(first.kernelChoice.contains("(auto, timed: own "), "\(first.kernelChoice)")
            #expect(second.kernelChoice == first.kernelChoice)
            let decision = try #require(KernelTuning.known(KernelTuning.key(of: first.graph, threads: 1)))
            #expect(decision.own == first.usesOwnKernels)
            #expect(decision.ownMilliseconds > 0 && decision.xnnpackMilliseconds > 0)
        } else {
            #expect(first.kernelChoice.hasSuffix("(--conv-kernels auto)"), "\(first.kernelChoice)")
        }
        #expect(second.usesOwnKernels == first.usesOwnKernels)
        // The values are those of the named plan compiled on its own, bit for bit.
        let fixed = try Predictor(graph: g, options: .init(convolutions: first.usesOwnKernels ? .own : .xnnpack))
        #expect(fixed.planSummary == first.planSummary)
        var state: UInt64 = 9
        let x = pseudoRandomValues(12 * 17 * 8, seed: &state)
        #expect(try first.predict([x]) == fixed.predict([x]))
    }

    /// The rule on given times (no clock involved): the lower quartile decides, so a few slow runs
    /// (the host's noise only adds time) do not, and a tie goes to the own kernels.
    @Test func theLowerQuartileDecides() {
        // Medians 2.6 against 1.5, but the own plan's lower quartile is the lower: 1.2 against 1.5.
        let noisyOwn = KernelTuning.choose(ownTimes: [2.7, 1.0, 2.5, 9, 1.2, 2.6, 1.1, 8],
                                           xnnpackTimes: [1.5, 1.4, 1.5, 1.6, 1.4, 1.5, 1.5, 1.6])
        #expect(noisyOwn == .init(own: true, ownMilliseconds: 1.2, xnnpackMilliseconds: 1.5))
        let slower = KernelTuning.choose(ownTimes: [2.0, 2.1, 2.2, 2.3], xnnpackTimes: [1.9, 2.0, 2.4, 2.5])
        #expect(slower == .init(own: false, ownMilliseconds: 2.1, xnnpackMilliseconds: 2.0))
        let tie = KernelTuning.choose(ownTimes: [1, 1, 1, 1], xnnpackTimes: [1, 1, 1, 1])
        #expect(tie.own)
    }

    @Test func fixedChoicesAreNotTimed() throws {
        let own = try Predictor(graph: graph(seed: 5), options: .init(convolutions: .own))
        let xnnpack = try Predictor(graph: graph(seed: 5), options: .init(convolutions: .xnnpack))
        #expect(own.usesOwnKernels && own.kernelChoice == "FrameGraph's kernels (--conv-kernels own)")
        #expect(!xnnpack.usesOwnKernels && xnnpack.kernelChoice == "XNNPACK (--conv-kernels xnnpack)")
        #expect(own.planSummary.hasPrefix("own("))
        #expect(xnnpack.planSummary == "xnnpack(2 ops)")
    }
}
