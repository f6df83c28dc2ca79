import NeuralGraph
import TestSupport
import Testing
@testable import TFLiteImport

/// Loads the four MediaPipe models the setup fetches into models/cache.
@Suite struct MediaPipeModelTests {
    struct Expectation: Sendable, CustomStringConvertible {
        var file: String
        var inputs: [(String, [Int])]
        var outputs: [(String, [Int])]
        var operations: [String: Int]
        /// Float parameters as the `tflite` Python package counts them (constant float16/float32 elements).
        var parameters: Int
        var description: String { file }
    }

    static let models: [Expectation] = [
        Expectation(file: "selfie_segmentation.tflite", inputs: [("input_1", [1, 256, 256, 3])],
                    outputs: [("activation_10", [1, 256, 256, 1])],
                    operations: ["CONV_2D": 43, "DEPTHWISE_CONV_2D": 11, "AVERAGE_POOL_2D": 10, "TRANSPOSE_CONV": 1,
                                 "RESIZE_BILINEAR": 3, "HARD_SWISH": 11, "RELU": 22, "LOGISTIC": 11, "MUL": 10, "ADD": 14],
                    parameters: 106_401),
        Expectation(file: "selfie_segmentation_landscape.tflite", inputs: [("input_1", [1, 144, 256, 3])],
                    outputs: [("segment_back", [1, 144, 256, 1])],
                    operations: ["CONV_2D": 43, "DEPTHWISE_CONV_2D": 11, "MEAN": 10, "TRANSPOSE_CONV": 1,
                                 "RESIZE_BILINEAR": 3, "HARD_SWISH": 11, "RELU": 22, "LOGISTIC": 11, "MUL": 10, "ADD": 14],
                    parameters: 106_401),
        Expectation(file: "face_detection_short_range.tflite", inputs: [("input", [1, 128, 128, 3])],
                    outputs: [("regressors", [1, 896, 16]), ("classificators", [1, 896, 1])],
                    operations: ["CONV_2D": 21, "RELU": 17, "DEPTHWISE_CONV_2D": 16, "ADD": 16, "PAD": 11,
                                 "MAX_POOL_2D": 3, "RESHAPE": 4, "CONCATENATION": 2],
                    parameters: 101_390),
        Expectation(file: "face_landmark.tflite", inputs: [("input_1", [1, 192, 192, 3])],
                    outputs: [("conv2d_21", [1, 1, 1, 1404]), ("conv2d_31", [1, 1, 1, 1])],
                    operations: ["CONV_2D": 25, "PRELU": 23, "DEPTHWISE_CONV_2D": 20, "ADD": 20, "MAX_POOL_2D": 6, "PAD": 3],
                    parameters: 604_685),
    ]

    @Test(arguments: models)
    func loadsMediaPipeModel(_ expected: Expectation) throws {
        guard let path = TestEnvironment.mediaPipeModel("\(expected.file)") else {
            print("skipped: \(expected.file) is absent from models/cache (tools/models/fetch_mediapipe_models.sh models/cache)")
            return
        }
        let graph = try TFLiteImporter.load(path: path)
        #expect(graph.inputs.map { graph.tensors[$0].name } == expected.inputs.map(\.0))
        #expect(graph.inputs.map { graph.tensors[$0].shape } == expected.inputs.map(\.1))
        #expect(graph.outputs.map { graph.tensors[$0].name } == expected.outputs.map(\.0))
        #expect(graph.outputs.map { graph.tensors[$0].shape } == expected.outputs.map(\.1))

        var counts: [String: Int] = [:]
        for node in graph.nodes { counts[node.operation.name, default: 0] += 1 }
        #expect(counts == expected.operations)
        #expect(counts["DEQUANTIZE"] == nil)

        #expect(graph.parameterCount > 0)
        #expect(graph.parameterCount == expected.parameters)
        // Every constant is float32 (float16 weights were folded) or an integer vector.
        for t in graph.tensors where t.constant != nil {
            #expect(t.elementType != .float16, "\(t.name) kept as float16")
            #expect(t.constant?.elementCount == t.elementCount, "\(t.name)")
        }
        // Node inputs are data: no int32 shape/axis/padding constants left as inputs.
        for node in graph.nodes {
            for t in node.inputs { #expect(graph.tensors[t].elementType == .float32, "\(node.name): \(graph.tensors[t].name)") }
        }
        #expect(graph.metadata["format"] == "TFLite")
        #expect(graph.metadata["tflite.version"] == "3")
        #expect(graph.metadata["description"]?.isEmpty == false)
        #expect(graph.metadata["metadata"]?.contains("TFLITE_METADATA") == true)
        try graph.validate()
    }

    /// A float16 weight decoded here equals what the `tflite` Python package reads for it
    /// (`Buffers(b).DataAsNumpy().view(np.float16)`), and the folded tensor replaces DEQUANTIZE.
    @Test func float16WeightsRoundTrip() throws {
        guard let path = TestEnvironment.mediaPipeModel("selfie_segmentation.tflite") else {
            print("skipped: selfie_segmentation.tflite is absent from models/cache (tools/models/fetch_mediapipe_models.sh models/cache)")
            return
        }
        let graph = try TFLiteImporter.load(path: path)
        let kernel = try #require(graph.tensors.first { $0.name == "conv2d/Kernel_dequantize" })
        #expect(kernel.shape == [16, 3, 3, 3])
        #expect(kernel.elementType == .float32)
        let values = try #require(kernel.constant).floats()
        #expect(values.count == 432)
        #expect(Array(values.prefix(3)) == [-13.625, 3.47265625, 10.109375])
        #expect(values.last == -0.39697265625)
        // The first convolution reads it directly.
        let first = try #require(graph.nodes.first)
        #expect(first.operation.name == "CONV_2D")
        #expect(graph.tensors[first.inputs[1]].name == "conv2d/Kernel_dequantize")
    }

    @Test func mediaPipeTransposedConvolution() throws {
        guard let path = TestEnvironment.mediaPipeModel("selfie_segmentation.tflite") else {
            print("skipped: selfie_segmentation.tflite is absent from models/cache (tools/models/fetch_mediapipe_models.sh models/cache)")
            return
        }
        let graph = try TFLiteImporter.load(path: path)
        let node = try #require(graph.nodes.first { $0.operation.name == "TRANSPOSE_CONV" })
        guard case .transposeConv2d(let p) = node.operation else { Issue.record("not a transposed convolution"); return }
        #expect(p.padding == .same && p.strideH == 2 && p.strideW == 2 && p.adjustH == 0 && p.adjustW == 0)
        #expect(node.inputs.map { graph.tensors[$0].shape } == [[1, 128, 128, 16], [1, 2, 2, 16], [1]])
        #expect(graph.tensors[node.outputs[0]].shape == [1, 256, 256, 1])
    }

    @Test func faceDetectionPadAndReshapeParameters() throws {
        guard let path = TestEnvironment.mediaPipeModel("face_detection_short_range.tflite") else {
            print("skipped: face_detection_short_range.tflite is absent from models/cache (tools/models/fetch_mediapipe_models.sh models/cache)")
            return
        }
        let graph = try TFLiteImporter.load(path: path)
        for node in graph.nodes {
            switch node.operation {
            case .pad(let paddings, let value):
                #expect(node.inputs.count == 1)
                #expect(paddings.count == 4 && value == 0)
                #expect(paddings.allSatisfy { $0.0 >= 0 && $0.1 >= 0 })
            case .reshape, .resizeBilinear:
                #expect(node.inputs.count == 1)
            case .concatenation(let axis, _):
                #expect(axis == 1)
            default: break
            }
        }
    }
}
