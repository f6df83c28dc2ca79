import Foundation
import NeuralGraph
import Testing
@testable import ONNXImport

/// Damaged, foreign and unsupported files give typed errors that say what and where.
struct ImportErrorTests {
    /// A small model that uses most of the schema: conv + BN + relu + resize + concat + softmax.
    static func smallModel() -> ONNXModelBuilder {
        var m = ONNXModelBuilder()
        m.input("x", [1, 2, 4, 4])
        m.initializer("w", [3, 2, 3, 3], randomValues(54, seed: 40))
        m.initializer("b", [3], [0.1, 0.2, 0.3])
        for (name, v) in [("s", [Float](arrayLiteral: 1, 2, 3)), ("t", [0, 1, 0]), ("m", [0, 0, 1]), ("v", [1, 1, 2])] { m.initializer(name, [3], v) }
        m.initializer("scales", [4], [1, 1, 2, 2])
        m.node("Conv", ["x", "w", "b"], ["c"], ["pads": .ints([1, 1, 1, 1]), "strides": .ints([2, 2])])
        m.node("BatchNormalization", ["c", "s", "t", "m", "v"], ["bn"])
        m.node("Relu", ["bn"], ["r"])
        m.node("Resize", ["r", "", "scales"], ["u"], ["mode": .string("linear")])
        m.node("Concat", ["u", "x"], ["cat"], ["axis": .int(1)])
        m.node("Softmax", ["cat"], ["y"], ["axis": .int(1)])
        m.output("y", [1, 5, 4, 4])
        return m
    }

    /// A model touching the other operators and encodings: Constant, Reshape, Pad, pooling,
    /// ConvTranspose, Clip, PRelu, Flatten, Gemm, float16 and float_data initializers.
    static func wideModel() -> ONNXModelBuilder {
        var m = ONNXModelBuilder()
        m.input("x", [1, 2, 4, 4])
        m.initializers.append(ONNXModelBuilder.float16Tensor("wt", [2, 3, 2, 2], floats: randomValues(24, seed: 41)))
        m.initializers.append(ONNXModelBuilder.tensor("slope", [3, 1, 1], floats: [0.1, 0.2, 0.3], raw: false))
        m.initializer("gw", [4, 3], randomValues(12, seed: 42))
        m.initializer("gb", [4], [1, 2, 3, 4])
        m.ints("pads", [0, 0, 1, 1, 0, 0, 1, 1])
        m.node("Constant", [], ["lo"], ["value_float": .float(-1)])
        m.node("Constant", [], ["shape"], ["value": .tensor(ONNXModelBuilder.int64Tensor("", [2], [1, -1]))])
        m.node("ConvTranspose", ["x", "wt"], ["ct"], ["strides": .ints([2, 2])])
        m.node("Clip", ["ct", "lo"], ["cl"])
        m.node("PRelu", ["cl", "slope"], ["pr"])
        m.node("Pad", ["pr", "pads"], ["pd"])
        m.node("MaxPool", ["pd"], ["mp"], ["kernel_shape": .ints([2, 2]), "strides": .ints([2, 2])])
        m.node("AveragePool", ["mp"], ["ap"], ["kernel_shape": .ints([3, 3]), "auto_pad": .string("SAME_UPPER")])
        m.node("GlobalAveragePool", ["ap"], ["gp"])
        m.node("Flatten", ["gp"], ["fl"])
        m.node("Gemm", ["fl", "gw", "gb"], ["gm"], ["transB": .int(1)])
        m.node("Reshape", ["gm", "shape"], ["y"])
        m.output("y", [1, 4])
        return m
    }

    @Test func smallModelLoads() throws {
        let wide = try ONNXImporter.load(bytes: Self.wideModel().bytes(), fileName: "wide.onnx")
        #expect(wide.tensors[wide.outputs[0]].shape == [1, 4])
        let graph = try ONNXImporter.load(bytes: Self.smallModel().bytes(), fileName: "small.onnx")
        #expect(graph.metadata["format"] == "ONNX")
        #expect(graph.metadata["onnx.opset"] == "13")
        #expect(graph.tensors[graph.outputs[0]].shape == [1, 4, 4, 5])
        #expect(graph.tensors[graph.outputs[0]].name == "y")
    }

    @Test func truncatedFilesAreMalformedWithAnOffset() throws {
        let bytes = Self.smallModel().bytes()
        var lengths = Array(stride(from: 1, to: bytes.count, by: 7))
        lengths.append(bytes.count - 1)
        for n in lengths {
            do {
                _ = try ONNXImporter.load(bytes: Array(bytes.prefix(n)), fileName: "cut.onnx")
                Issue.record("a file cut to \(n) of \(bytes.count) bytes loaded")
            } catch {
                guard case .malformed(let file, let reason, let offset) = error else {
                    Issue.record("a file cut to \(n) bytes gave \(error), not .malformed")
                    continue
                }
                #expect(file == "cut.onnx")
                #expect(!reason.isEmpty)
                if let offset { #expect(offset >= 0 && offset <= n, "offset \(offset) for a \(n)-byte file") }
            }
        }
    }

    @Test func textFileIsRefused() throws {
        let text = Array("# This is a README, not a model\nname: colorizer\n".utf8)
        #expect {
            try ONNXImporter.load(bytes: text, fileName: "README.md")
        } throws: { error in
            guard case ModelError.malformed(let file, let reason, _) = error else { return false }
            return file == "README.md" && reason.contains("looks like text")
        }
        #expect(throws: ModelError.malformed(file: "empty.onnx", reason: "the file is empty", offset: 0)) {
            try ONNXImporter.load(bytes: [], fileName: "empty.onnx")
        }
    }

    @Test func unsupportedOperatorsAreAllListedWithCounts() throws {
        var m = ONNXModelBuilder()
        m.input("x", [1, 2, 4, 4])
        m.node("LSTM", ["x"], ["a"])
        m.node("LSTM", ["a"], ["b"])
        m.node("Relu", ["b"], ["c"])           // downstream of unsupported: skipped, not reported
        m.node("Gather", ["x"], ["d"])
        m.node("FusedConv", ["x"], ["e"], domain: "com.microsoft")
        m.node("Resize", ["x"], ["f"], ["mode": .string("cubic"), "scales": .floats([1, 1, 2, 2])])
        m.node("Add", ["c", "d"], ["y"])
        m.output("y")
        #expect(throws: ModelError.unsupportedOperations(file: "u.onnx", operations: [
            "LSTM ×2", "Gather", "com.microsoft:FusedConv", "Resize (mode 'cubic')",
        ])) {
            try ONNXImporter.load(bytes: m.bytes(), fileName: "u.onnx")
        }
    }

    @Test func externalDataAndSymbolicShapesAreExplained() throws {
        var m = ONNXModelBuilder()
        m.input("x", [1, 1, 2, 2])
        var w = ONNXModelBuilder.tensor("w", [1, 1, 1, 1], floats: [])
        w.varint(14, 1)
        m.initializers.append(w)
        m.node("Conv", ["x", "w"], ["y"])
        m.output("y")
        #expect {
            try ONNXImporter.load(bytes: m.bytes(), fileName: "ext.onnx")
        } throws: { error in
            "\(error)".contains("tensor 'w'") && "\(error)".contains("external file")
        }

        var s = ONNXModelBuilder()
        s.inputs.append(ONNXModelBuilder.valueInfo("x", [1, 3, 0, 0], symbolic: [0: "batch", 2: "height", 3: "width"]))
        s.node("Relu", ["x"], ["y"])
        s.output("y")
        #expect {
            try ONNXImporter.load(bytes: s.bytes(), fileName: "sym.onnx")
        } throws: { error in
            "\(error)".contains("graph input 'x'") && "\(error)".contains("dimension 2 is symbolic ('height')")
        }
        // A symbolic batch dimension alone is fixed to 1.
        var b = ONNXModelBuilder()
        b.inputs.append(ONNXModelBuilder.valueInfo("x", [1, 3, 2, 2], symbolic: [0: "batch"]))
        b.node("Relu", ["x"], ["y"])
        b.output("y")
        let graph = try ONNXImporter.load(bytes: b.bytes(), fileName: "batch.onnx")
        #expect(graph.tensors[graph.inputs[0]].shape == [1, 2, 2, 3])
    }

    @Test func badWeightsNameTheTensor() throws {
        var m = ONNXModelBuilder()
        m.input("x", [1, 2, 4, 4])
        m.initializer("w", [3, 2, 3, 3], randomValues(10, seed: 1))   // too few values
        m.node("Conv", ["x", "w"], ["y"])
        m.output("y")
        #expect {
            try ONNXImporter.load(bytes: m.bytes(), fileName: "w.onnx")
        } throws: { error in
            guard case ModelError.malformed(_, let reason, let offset) = error else { return false }
            return reason.contains("tensor 'w' has shape [3, 2, 3, 3] (54 elements) but holds 40 bytes") && offset != nil
        }
        var wrong = ONNXModelBuilder()
        wrong.input("x", [1, 2, 4, 4])
        wrong.initializer("w", [3, 5, 3, 3], randomValues(135, seed: 1))
        wrong.node("Conv", ["x", "w"], ["y"], name: "stem")
        wrong.output("y")
        #expect {
            try ONNXImporter.load(bytes: wrong.bytes(), fileName: "w.onnx")
        } throws: { error in
            guard case ModelError.shapeMismatch(let op, let tensor, _, _) = error else { return false }
            return op == "Conv 'stem'" && tensor == "w"
        }
        var dangling = ONNXModelBuilder()
        dangling.input("x", [1, 2, 4, 4])
        dangling.node("Relu", ["nowhere"], ["y"])
        dangling.output("y")
        #expect {
            try ONNXImporter.load(bytes: dangling.bytes(), fileName: "d.onnx")
        } throws: { error in
            "\(error)".contains("reads 'nowhere', which is not a graph input")
        }
    }
}
