import NeuralGraph
import Testing
import TestSupport
import TFLiteImport
@testable import XNNPACKRuntime

/// A graph with its batch dimension set to N (``NeuralGraph/batched(_:)``) runs N images in one
/// prediction, each image's outputs equal to what the graph of batch 1 gives for it alone.
@Suite struct BatchedGraphTests {
    @Test(arguments: ["selfie_segmentation.tflite", "face_detection_short_range.tflite"], [Predictor.ConvolutionKernels.own, .xnnpack])
    func aBatchOfThreeEqualsThreeSinglePredictions(_ file: String, _ kernels: Predictor.ConvolutionKernels) throws {
        guard let path = TestEnvironment.mediaPipeModel(file) else {
            Issue.record("\(file) is missing: run tools/models/fetch_mediapipe_models.sh models/cache")
            return
        }
        let graph = try TFLiteImporter.load(path: path)
        let batched = try graph.batched(3)
        #expect(batched.inputs.map { batched.tensors[$0].shape[0] } == [3])
        #expect(batched.outputs.allSatisfy { batched.tensors[$0].shape[0] == 3 })
        let single = try Predictor(graph: graph, options: .init(convolutions: kernels))
        let three = try Predictor(graph: batched, options: .init(convolutions: kernels))
        let per = single.input(0).count
        #expect(three.input(0).count == 3 * per)
        var seed: UInt64 = 9
        let images = (0..<3).map { _ in pseudoRandomValues(per, seed: &seed).map { $0 * 0.5 + 0.5 } }
        let together = try three.predict([images.flatMap { $0 }])
        for (k, image) in images.enumerated() {
            let alone = try single.predict([image])
            for (o, values) in alone.enumerated() {
                let slice = together[o][(k * values.count)..<((k + 1) * values.count)]
                let worst = zip(values, slice).map { abs($0 - $1) }.max() ?? .infinity
                #expect(worst <= 1e-5, "\(file) \(kernels) image \(k) output \(o): max |diff| \(worst)")
            }
        }
    }

    @Test func aBatchOfOneIsTheGraphItselfAndABadBatchIsRefused() throws {
        var g = NeuralGraph()
        let x = g.addTensor(TensorValue(name: "x", shape: [1, 4, 4, 3]))
        let y = g.addTensor(TensorValue(name: "y", shape: [1, 4, 4, 3]))
        g.nodes = [NeuralNode(operation: .relu, inputs: [x], outputs: [y], name: "relu")]
        g.inputs = [x]
        g.outputs = [y]
        #expect(try g.batched(1).tensors.map(\.shape) == g.tensors.map(\.shape))
        #expect(try g.batched(4).tensors.map(\.shape) == [[4, 4, 4, 3], [4, 4, 4, 3]])
        #expect(throws: ModelError.self) { try g.batched(0) }
        // A reshape to rank 1 folds the batch away: refused, the caller predicts image by image.
        let flat = g.addTensor(TensorValue(name: "flat", shape: [48]))
        g.nodes.append(NeuralNode(operation: .reshape, inputs: [y], outputs: [flat], name: "flatten"))
        g.outputs = [flat]
        #expect(throws: ModelError.self) { try g.batched(2) }
    }
}
