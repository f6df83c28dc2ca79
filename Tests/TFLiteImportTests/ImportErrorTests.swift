import Foundation
import NeuralGraph
import TestSupport
import Testing
@testable import TFLiteImport

/// Damaged files, unsupported and quantized models: each gives the right ``ModelError``.
@Suite struct ImportErrorTests {
    /// A real model when ../shared is there, else the small hand-built one.
    static func sampleBytes() throws -> (bytes: [UInt8], name: String) {
        if let path = TestEnvironment.mediaPipeModel("face_detection_short_range.tflite") {
            return (try [UInt8](contentsOf: path), "face_detection_short_range.tflite")
        }
        return (TestModel.small().bytes(), "small.tflite")
    }

    @Test func smallModelLoads() throws {
        let bytes = TestModel.small().bytes()
        // Kept for inspection with other readers (e.g. the `tflite` Python package).
        try Data(bytes).write(to: TestEnvironment.scratch("tflite-small").appendingPathComponent("small.tflite"))
        let graph = try TFLiteImporter.load(bytes: bytes, fileName: "small.tflite")
        #expect(graph.nodes.map(\.operation.name) == [
            "CONV_2D", "DEPTHWISE_CONV_2D", "HARD_SWISH", "PRELU", "ADD", "PAD", "MAX_POOL_2D", "RESIZE_BILINEAR",
            "CONCATENATION", "TRANSPOSE_CONV", "AVERAGE_POOL_2D", "MEAN", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX", "LOGISTIC",
        ])
        #expect(graph.outputs.map { graph.tensors[$0].name } == ["softmax", "logistic"])
        let conv = graph.nodes[0]
        #expect(conv.operation == .conv2d(ConvolutionParameters(padding: .same, activation: .relu)))
        #expect(graph.tensors[conv.inputs[1]].constant?.floats().prefix(4) == [-0.3, -0.2, -0.1, 0].map { Float(Float16($0)) }[...])
        #expect(graph.nodes[5].operation == .pad(paddings: [(0, 0), (1, 1), (1, 1), (0, 0)], value: 0))
        #expect(graph.nodes[8].operation == .concatenation(axis: 3, activation: .none))
        #expect(graph.nodes[11].operation == .mean(axes: [1, 2], keepDims: true))
        #expect(graph.nodes[7].operation == .resizeBilinear(alignCorners: false, halfPixelCenters: true))
        #expect(graph.nodes[14].operation == .softmax(beta: 1))
        // Shape, axis, size and padding constants are parameters, not tensors of the graph.
        #expect(!graph.tensors.contains { $0.elementType == .int32 })
        #expect(graph.parameterCount == 108 + 4 + 36 + 4 + 64 + 2 + 6 + 3)
    }

    /// TRANSPOSE_CONV's [output_shape, weights, input, bias] become [input, weights, bias]; PADV2's value,
    /// LEAKY_RELU's alpha, RESIZE_NEAREST_NEIGHBOR and the other binary operators map too.
    @Test func moreOperatorsMap() throws {
        var m = TestModel()
        let x = m.tensor("x", [1, 4, 4, 2])
        let outShape = m.tensor("tconv/shape", [4], type: 2, data: littleEndianBytes([1, 9, 9, 3] as [Int32]))
        let w = m.tensor("tconv/w", [3, 3, 3, 2], data: littleEndianBytes([Float](repeating: 0.5, count: 54)))
        let b = m.tensor("tconv/b", [3], data: littleEndianBytes([1, 2, 3] as [Float]))
        let t = m.tensor("tconv", [1, 9, 9, 3])
        let paddings = m.tensor("paddings", [4, 2], type: 2, data: littleEndianBytes([0, 0, 1, 0, 0, 1, 0, 0] as [Int32]))
        let value = m.tensor("value", [], data: littleEndianBytes([-1] as [Float]))
        let p = m.tensor("padv2", [1, 10, 10, 3])
        let l = m.tensor("leaky", [1, 10, 10, 3])
        let size = m.tensor("size", [2], type: 2, data: littleEndianBytes([20, 20] as [Int32]))
        let r = m.tensor("nearest", [1, 20, 20, 3])
        let s = m.tensor("sub", [1, 20, 20, 3]), d = m.tensor("div", [1, 20, 20, 3]), mul = m.tensor("mul", [1, 20, 20, 3])
        m.op(67, [outShape, w, x, b], [t], optionsType: 49, options: [(0, .int8(1)), (1, .int32(2)), (2, .int32(2))])
        m.op(60, [t, paddings, value], [p])
        m.op(98, [p], [l], optionsType: 75, options: [(0, .float(0.25))])
        m.op(97, [l, size], [r], optionsType: 74, options: [(0, .bool(true))])
        m.op(41, [r, r], [s], optionsType: 28, options: [(0, .int8(3))])
        m.op(42, [s, r], [d])
        m.op(18, [d, s], [mul], optionsType: 21, options: [(0, .int8(2))])
        m.inputs = [x]
        m.outputs = [mul]
        let graph = try TFLiteImporter.load(bytes: m.bytes(), fileName: "more.tflite")
        let names = graph.nodes.map(\.operation.name)
        #expect(names == ["TRANSPOSE_CONV", "PAD", "LEAKY_RELU", "RESIZE_NEAREST_NEIGHBOR", "SUB", "DIV", "MUL"])
        #expect(graph.nodes[0].inputs.map { graph.tensors[$0].name } == ["x", "tconv/w", "tconv/b"])
        guard case .transposeConv2d(let params) = graph.nodes[0].operation else { Issue.record("not TRANSPOSE_CONV"); return }
        #expect(params.padding == .valid && params.strideH == 2 && params.adjustH == 0)
        #expect(graph.nodes[1].operation == .pad(paddings: [(0, 0), (1, 0), (0, 1), (0, 0)], value: -1))
        #expect(graph.nodes[2].operation == .leakyRelu(alpha: 0.25))
        #expect(graph.nodes[3].operation == .resizeNearest(alignCorners: true, halfPixelCenters: false))
        #expect(graph.nodes[4].operation == .subtract(.relu6))
        #expect(graph.nodes[5].operation == .divide(.none))
        #expect(graph.nodes[6].operation == .multiply(.reluN1To1))
    }

    /// Buffer.offset/size: constant data stored after the flatbuffer.
    @Test func externalBufferDataLoads() throws {
        let inline = try TFLiteImporter.load(bytes: TestModel.small().bytes(), fileName: "small.tflite")
        var m = TestModel.small()
        m.externalData = true
        let bytes = m.bytes()
        let external = try TFLiteImporter.load(bytes: bytes, fileName: "external.tflite")
        #expect(external.parameterCount == inline.parameterCount)
        for (a, b) in zip(inline.tensors, external.tensors) {
            #expect(a.constant?.floats() == b.constant?.floats(), "\(a.name)")
        }
        // Cutting the appended data is caught.
        #expect(performing: { try TFLiteImporter.load(bytes: Array(bytes.dropLast(8)), fileName: "external.tflite") },
                throws: { if case ModelError.malformed(_, let reason, _) = $0 { reason.contains("external data") } else { false } })
    }

    @Test func truncatedFilesAreMalformedWithOffset() throws {
        let (bytes, name) = try Self.sampleBytes()
        for length in [0, 3, 7, 8, 12, 64, 500, 4096, bytes.count / 3, bytes.count / 2, bytes.count - 100] {
            let cut = Array(bytes.prefix(length))
            do {
                _ = try TFLiteImporter.load(bytes: cut, fileName: name)
                Issue.record("a file cut at \(length) bytes loaded")
            } catch {
                guard case .malformed(let file, _, let offset) = error, let offset else {
                    Issue.record("cut at \(length): \(error)")
                    continue
                }
                #expect(file == name)
                // The offset is where the damage shows: a read that starts (or a referenced object
                // that lies) past the end of the cut file.
                #expect(offset >= 0, "cut at \(length): \(error)")
            }
        }
    }

    @Test func wrongMagicIsNamed() throws {
        var (bytes, name) = try Self.sampleBytes()
        bytes.replaceSubrange(4..<8, with: Array("ONNX".utf8))
        #expect(throws: ModelError.malformed(file: name, reason: "file identifier is 'ONNX', expected 'TFL3' (not a TFLite model)",
                                             offset: 4)) {
            try TFLiteImporter.load(bytes: bytes, fileName: name)
        }
        let error = ModelError.malformed(file: name, reason: "x", offset: 4)
        #expect(error.description.contains("at byte 4"))
    }

    @Test func unsupportedOperationsAreListedTogether() throws {
        var m = TestModel()
        let x = m.tensor("x", [1, 4])
        let idx = m.tensor("idx", [2], type: 2, data: littleEndianBytes([0, 1] as [Int32]))
        let a = m.tensor("a", [1, 2]), b = m.tensor("b", [1, 2]), c = m.tensor("c", [1, 2]), d = m.tensor("d", [1, 2])
        m.op(36, [x, idx], [a])             // GATHER
        m.op(36, [x, idx], [b])             // GATHER
        m.op(32, custom: "Foo", [a], [c])   // CUSTOM:Foo
        m.op(19, [c], [d])                  // RELU (supported)
        m.op(250, [d], [d])                 // unknown code
        m.inputs = [x]
        m.outputs = [d]
        #expect(throws: ModelError.unsupportedOperations(file: "ops.tflite", operations: ["GATHER ×2", "CUSTOM:Foo", "BUILTIN_250"])) {
            try TFLiteImporter.load(bytes: m.bytes(), fileName: "ops.tflite")
        }
    }

    /// Patches operator codes of a real model (RELU → GATHER, MAX_POOL_2D → TOPK_V2).
    @Test func patchedRealModelReportsAllUnsupported() throws {
        guard let path = TestEnvironment.mediaPipeModel("face_detection_short_range.tflite") else {
            print("skipped: face_detection_short_range.tflite is absent from models/cache (tools/models/fetch_mediapipe_models.sh models/cache)")
            return
        }
        var bytes = try [UInt8](contentsOf: path)
        let model = try TFLiteModelFile(reader: FlatBufferReader(bytes: bytes))
        let codes = try model.reader.rootTable().tables(1)
        for (k, code) in model.operatorCodes.enumerated() where code.builtin == 19 || code.builtin == 17 {
            let replacement: UInt8 = code.builtin == 19 ? 36 : 48
            let deprecated = try #require(try codes[k].fieldPosition(0, size: 1))
            bytes[deprecated] = replacement
            if let builtin = try codes[k].fieldPosition(3, size: 4) { bytes[builtin] = replacement }
        }
        #expect(throws: ModelError.unsupportedOperations(file: "patched.tflite", operations: ["GATHER ×17", "TOPK_V2 ×3"])) {
            try TFLiteImporter.load(bytes: bytes, fileName: "patched.tflite")
        }
    }

    /// The message a model's import fails with (nil when it imports).
    private func importFailure(_ m: TestModel, _ file: String = "q.tflite") -> String? {
        do {
            _ = try TFLiteImporter.load(bytes: m.bytes(), fileName: file)
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// A quantized int8 model x → RELU → y whose tensor `y` carries `scale`, `zeroPoints` and `axis`.
    private func quantizedRelu(scale: [Float], zeroPoints: [Int64]? = nil, axis: Int32 = 0, type: Int8 = 9) -> TestModel {
        var m = TestModel()
        let x = m.tensor("x", [1, 4], type: type)
        let y = m.tensor("y", [1, 4], type: type)
        m.tensors[Int(x)].quantizationScale = [0.5]
        m.tensors[Int(y)].quantizationScale = scale
        m.tensors[Int(y)].quantizationZeroPoints = zeroPoints
        m.tensors[Int(y)].quantizedDimension = axis
        m.op(19, [x], [y])
        m.inputs = [x]
        m.outputs = [y]
        return m
    }

    @Test func quantizedInt8ModelsImportWithTheirParameters() throws {
        let m = quantizedRelu(scale: [0.25], zeroPoints: [-3])
        let graph = try TFLiteImporter.load(bytes: m.bytes(), fileName: "q.tflite")
        let y = try #require(graph.tensors.first { $0.name == "y" })
        #expect(y.elementType == .int8)
        #expect(y.quantization == Quantization(scale: 0.25, zeroPoint: -3))
    }

    @Test(arguments: [
        ([Float(0)], [Int64(0)], Int32(0), "scale 0.0 is not a positive finite number"),
        ([Float.nan], [0], 0, "scale nan is not a positive finite number"),
        ([-1], [0], 0, "scale -1.0 is not a positive finite number"),
        ([0.5], [200], 0, "zero point 200 is outside int8's -128…127"),
        ([0.5, 0.5, 0.5], [0, 0, 0], 1, "3 scales for 4 channels along axis 1"),
        ([0.5, 0.5], [0], 7, "channel axis 7 is not a dimension of [1, 4]"),
        ([0.5, 0.5, 0.5, 0.5], [0, 0], 1, "4 scales but 2 zero points"),
    ])
    func hostileQuantizationIsOneClearError(scale: [Float], zeroPoints: [Int64], axis: Int32, problem: String) throws {
        let message = try #require(importFailure(quantizedRelu(scale: scale, zeroPoints: zeroPoints, axis: axis)))
        #expect(message.contains("q.tflite"))
        #expect(message.contains("tensor 'y': quantization: \(problem)"), "\(message)")
    }

    @Test func uint8ZeroPointsOutsideTheTypeAreRefused() throws {
        let message = try #require(importFailure(quantizedRelu(scale: [0.5], zeroPoints: [-1], type: 3)))
        #expect(message.contains("zero point -1 is outside uint8's 0…255"), "\(message)")
        let huge = try #require(importFailure(quantizedRelu(scale: [0.5], zeroPoints: [Int64(1) << 40], type: 3)))
        #expect(huge.contains("tensor 'y': quantization: zero point"), "\(huge)")
    }

    @Test func int16AndInt4ModelsAreRefusedByName() throws {
        for type: Int8 in [7, 17] {  // INT16, INT4
            var m = TestModel()
            let x = m.tensor("x", [1, 4], type: type)
            let y = m.tensor("y", [1, 4], type: type)
            m.tensors[Int(x)].quantizationScale = [0.5]
            m.tensors[Int(y)].quantizationScale = [0.5]
            m.op(19, [x], [y])
            m.inputs = [x]
            m.outputs = [y]
            #expect(throws: ModelError.quantizedModel(file: "q.tflite", tensor: "x")) {
                try TFLiteImporter.load(bytes: m.bytes(), fileName: "q.tflite")
            }
        }
    }

    @Test func integerActivationsWithoutQuantizationAreRefused() throws {
        var m = TestModel()
        let x = m.tensor("x", [1, 4], type: 9)
        let y = m.tensor("y", [1, 4], type: 9)
        m.op(19, [x], [y])
        m.inputs = [x]
        m.outputs = [y]
        let message = try #require(importFailure(m))
        #expect(message.contains("without quantization"), "\(message)")
    }

    @Test func declaredShapeMismatchNamesOperationAndTensor() throws {
        var m = TestModel.small()
        let conv = try #require(m.tensors.firstIndex { $0.name == "conv" })
        m.tensors[conv].shape = [1, 7, 8, 4]
        #expect(throws: ModelError.shapeMismatch(operation: "CONV_2D #0 '#1 conv'", tensor: "conv", expected: "[1, 8, 8, 4]",
                                                 got: "[1, 7, 8, 4]")) {
            try TFLiteImporter.load(bytes: m.bytes(), fileName: "small.tflite")
        }
    }

    @Test func dequantizeOfAFloat16ActivationIsRefused() throws {
        var m = TestModel()
        let x = m.tensor("x", [1, 4], type: 1)
        let y = m.tensor("y", [1, 4])
        m.op(6, [x], [y])
        m.inputs = [x]
        m.outputs = [y]
        let message = try #require(importFailure(m, "d.tflite"))
        #expect(message.contains("float16"), "\(message)")
    }

    @Test func metadataSaysWhenOnlyTheFirstSubgraphIsImported() throws {
        let single = try TFLiteImporter.load(bytes: TestModel.small().bytes(), fileName: "small.tflite")
        #expect(single.metadata["subgraphs"] == nil)
        #expect(single.metadata["description"] == "test model")
        #expect(single.metadata["subgraph"] == "main")
        var m = TestModel.small()
        m.extraSubgraphs = 2
        let graph = try TFLiteImporter.load(bytes: m.bytes(), fileName: "small.tflite")
        #expect(graph.metadata["subgraphs"] == "3 (only the first is imported)")
        #expect(graph.nodes.count == single.nodes.count)
    }
}

extension [UInt8] {
    init(contentsOf path: String) throws {
        self = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    }
}

