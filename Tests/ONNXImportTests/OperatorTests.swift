import Foundation
import NeuralGraph
import Testing
import XNNPACKRuntime
@testable import ONNXImport

/// Activations, arithmetic with broadcast constants, concatenation, softmax, pad, pooling, Gemm,
/// MatMul, reshapes, constants and float16 weights, run through the predictor.
struct OperatorTests {
    static let x4: [Float] = randomValues(2 * 3 * 4 * 4, seed: 20).map { $0 * 4 }

    /// One unary node on a [2, 3, 4, 4] input.
    func unary(_ op: String, _ attributes: [String: Attr] = [:], extra: [(String, [Float])] = [], opset: Int = 13) throws -> [Float] {
        var m = ONNXModelBuilder()
        m.opset = opset
        m.input("x", [2, 3, 4, 4])
        for (name, v) in extra { m.initializer(name, v.count == 3 ? [3, 1, 1] : [], v) }
        m.node(op, ["x"] + extra.map(\.0), ["y"], attributes)
        m.output("y")
        return try runONNX(m, [Self.x4])[0]
    }

    @Test func activations() throws {
        let x = Self.x4
        func check(_ got: [Float], _ f: (Float) -> Float, _ what: String) {
            #expect(maxAbsDiff(got, x.map(f)) < 1e-4, "\(what)")
        }
        check(try unary("Relu"), { max($0, 0) }, "Relu")
        check(try unary("LeakyRelu", ["alpha": .float(0.1)]), { $0 > 0 ? $0 : 0.1 * $0 }, "LeakyRelu")
        check(try unary("Sigmoid"), { 1 / (1 + exp(-$0)) }, "Sigmoid")
        check(try unary("Tanh"), { Foundation.tanh($0) }, "Tanh")
        check(try unary("HardSigmoid", ["alpha": .float(0.25), "beta": .float(0.4)]), { max(0, min(1, 0.25 * $0 + 0.4)) }, "HardSigmoid")
        check(try unary("HardSwish"), { $0 * max(0, min(1, $0 / 6 + 0.5)) }, "HardSwish")
        check(try unary("Clip", ["min": .float(-0.5), "max": .float(1.5)], opset: 10), { min(max($0, -0.5), 1.5) }, "Clip attributes")
        check(try unary("Clip", extra: [("lo", [-1]), ("hi", [2])]), { min(max($0, -1), 2) }, "Clip inputs")
        let slope: [Float] = [0.1, 0.2, 0.3]
        let prelu = try unary("PRelu", extra: [("slope", slope)])
        let expected = x.enumerated().map { i, v in v > 0 ? v : v * slope[(i / 16) % 3] }
        #expect(maxAbsDiff(prelu, expected) < 1e-5)
    }

    @Test func arithmeticWithBroadcastConstants() throws {
        let channel: [Float] = [1, 2, 4]
        for (op, f) in [("Add", { (a: Float, b: Float) in a + b }), ("Sub", { $0 - $1 }), ("Mul", { $0 * $1 }), ("Div", { $0 / $1 })] {
            var m = ONNXModelBuilder()
            m.input("x", [2, 3, 4, 4])
            m.initializer("c", [3, 1, 1], channel)
            m.initializer("s", [], [0.5])
            m.node(op, ["x", "c"], ["t"])
            m.node(op, ["s", "t"], ["y"])   // constant first
            m.output("y")
            let y = try runONNX(m, [Self.x4])[0]
            let expected = Self.x4.enumerated().map { i, v in f(0.5, f(v, channel[(i / 16) % 3])) }
            #expect(maxAbsDiff(y, expected) < 1e-4, "\(op)")
        }
        // Two activations, and a [W]-shaped constant broadcast along the last NCHW axis.
        var m = ONNXModelBuilder()
        m.input("x", [2, 3, 4, 4])
        m.initializer("row", [4], [1, 2, 3, 4])
        m.node("Mul", ["x", "row"], ["t"])
        m.node("Add", ["t", "x"], ["y"])
        m.output("y")
        let y = try runONNX(m, [Self.x4])[0]
        #expect(maxAbsDiff(y, Self.x4.enumerated().map { i, v in v * Float(i % 4 + 1) + v }) < 1e-4)
    }

    @Test func concatOnChannels() throws {
        var m = ONNXModelBuilder()
        m.input("a", [1, 2, 2, 2])
        m.input("b", [1, 1, 2, 2])
        m.initializer("k", [1, 1, 2, 2], [9, 9, 9, 9])
        m.node("Concat", ["a", "b", "k"], ["y"], ["axis": .int(1)])
        m.output("y")
        let a: [Float] = [1, 2, 3, 4, 5, 6, 7, 8], b: [Float] = [-1, -2, -3, -4]
        let y = try runONNX(m, [a, b])[0]
        #expect(y == a + b + [9, 9, 9, 9])
    }

    @Test func softmaxOnChannels() throws {
        var m = ONNXModelBuilder()
        m.input("x", [2, 3, 4, 4])
        m.node("Softmax", ["x"], ["y"], ["axis": .int(1)])
        m.output("y")
        let y = try runONNX(m, [Self.x4])[0]
        var expected = [Float](repeating: 0, count: Self.x4.count)
        for n in 0..<2 { for p in 0..<16 {
            let idx = (0..<3).map { (n * 3 + $0) * 16 + p }
            let e = idx.map { exp(Self.x4[$0]) }
            let sum = e.reduce(0, +)
            for (k, i) in idx.enumerated() { expected[i] = e[k] / sum }
        } }
        #expect(maxAbsDiff(y, expected) < 1e-5)
    }

    @Test func padConstant() throws {
        var m = ONNXModelBuilder()
        m.input("x", [1, 1, 2, 2])
        m.ints("pads", [0, 0, 1, 0, 0, 0, 0, 2])
        m.initializer("v", [], [7])
        m.node("Pad", ["x", "pads", "v"], ["y"])
        m.output("y")
        let y = try runONNX(m, [[1, 2, 3, 4]])[0]
        #expect(y == [7, 7, 7, 7, 1, 2, 7, 7, 3, 4, 7, 7])
    }

    @Test func pooling() throws {
        let x: [Float] = (0..<16).map { -Float($0) }
        var m = ONNXModelBuilder()
        m.input("x", [1, 1, 4, 4])
        m.node("MaxPool", ["x"], ["mx"], ["kernel_shape": .ints([3, 3]), "strides": .ints([2, 2]), "pads": .ints([1, 1, 1, 1])])
        m.node("AveragePool", ["x"], ["av"], ["kernel_shape": .ints([2, 2]), "strides": .ints([2, 2])])
        m.node("AveragePool", ["x"], ["ap"], ["kernel_shape": .ints([3, 3]), "pads": .ints([1, 1, 1, 1])])
        m.node("GlobalAveragePool", ["x"], ["g"])
        m.node("MaxPool", ["x"], ["ce"], ["kernel_shape": .ints([3, 3]), "strides": .ints([2, 2]), "ceil_mode": .int(1)])
        for o in ["mx", "av", "ap", "g", "ce"] { m.output(o) }
        let out = try runONNX(m, [x])
        #expect(out[0] == [0, -1, -4, -5])   // padding never wins a max of negative values
        #expect(out[1] == [-2.5, -4.5, -10.5, -12.5])
        #expect(abs(out[2][0] - (-(0 + 1 + 4 + 5) / 4)) < 1e-5)   // corner: padding left out of the average
        #expect(out[3] == [-7.5])
        #expect(out[4] == [0, -2, -8, -10])
        var bad = ONNXModelBuilder()
        bad.input("x", [1, 1, 4, 4])
        bad.node("AveragePool", ["x"], ["y"], ["kernel_shape": .ints([3, 3]), "pads": .ints([1, 1, 1, 1]), "count_include_pad": .int(1)])
        bad.output("y")
        #expect(throws: ModelError.unsupportedOperations(
            file: "p.onnx", operations: ["AveragePool (count_include_pad=1 with padding: the runtime's average leaves padding out)"])) {
            try ONNXImporter.load(bytes: bad.bytes(), fileName: "p.onnx")
        }
    }

    @Test func flattenGemmAndMatMul() throws {
        // GlobalAveragePool → Flatten → Gemm (transB, alpha, beta) → MatMul: a classifier head.
        let w = randomValues(5 * 3, seed: 21), c = randomValues(5, seed: 22), b2 = randomValues(5 * 2, seed: 23)
        var m = ONNXModelBuilder()
        m.input("x", [2, 3, 4, 4])
        m.initializer("w", [5, 3], w)
        m.initializer("c", [5], c)
        m.initializer("b2", [5, 2], b2)
        m.node("GlobalAveragePool", ["x"], ["g"])
        m.node("Flatten", ["g"], ["f"])
        m.node("Gemm", ["f", "w", "c"], ["h"], ["transB": .int(1), "alpha": .float(2), "beta": .float(0.5)])
        m.node("MatMul", ["h", "b2"], ["y"])
        m.output("y")
        let y = try runONNX(m, [Self.x4])[0]
        var expected: [Float] = []
        for n in 0..<2 {
            var g = [Float](repeating: 0, count: 3)
            for ch in 0..<3 { for p in 0..<16 { g[ch] += Self.x4[(n * 3 + ch) * 16 + p] / 16 } }
            var h = [Float](repeating: 0, count: 5)
            for o in 0..<5 {
                var sum: Float = 0
                for i in 0..<3 { sum += g[i] * w[o * 3 + i] }
                h[o] = 2 * sum + 0.5 * c[o]
            }
            for j in 0..<2 {
                var sum: Float = 0
                for o in 0..<5 { sum += h[o] * b2[o * 2 + j] }
                expected.append(sum)
            }
        }
        #expect(maxAbsDiff(y, expected) < 1e-4)
    }

    @Test func reshapeRefusedWhenOrderChanges() throws {
        var m = ONNXModelBuilder()
        m.input("x", [1, 3, 2, 2])
        m.node("Flatten", ["x"], ["y"])
        m.output("y")
        #expect {
            try ONNXImporter.load(bytes: m.bytes(), fileName: "f.onnx")
        } throws: { error in
            guard case ModelError.unsupportedOperations(_, let ops) = error else { return false }
            return ops.count == 1 && ops[0].contains("[1, 3, 2, 2] → [1, 12]") && ops[0].contains("transpose")
        }
        // A one-channel image reshapes freely; shapes from a Constant node; Identity aliases.
        var ok = ONNXModelBuilder()
        ok.input("x", [1, 1, 2, 3])
        var shape = ProtoMessage()
        shape = ONNXModelBuilder.int64Tensor("", [2], [-1, 2])
        ok.node("Constant", [], ["shape"], ["value": .tensor(shape)])
        ok.node("Reshape", ["x", "shape"], ["r"])
        ok.node("Identity", ["r"], ["y"])
        ok.output("y")
        let graph = try ONNXImporter.load(bytes: ok.bytes(), fileName: "r.onnx")
        #expect(graph.tensors[graph.outputs[0]].shape == [3, 2])
        #expect(try runONNX(ok, [[1, 2, 3, 4, 5, 6]])[0] == [1, 2, 3, 4, 5, 6])
    }

    @Test func nhwcModelTransposesAreFreeAndReduceMeanMapsAxes() throws {
        // tf2onnx style: NHWC input → Transpose to NCHW → ops → Transpose back; the graph keeps NHWC
        // and the transposes become aliases.
        var m = ONNXModelBuilder()
        m.input("x", [1, 2, 2, 3])
        m.initializer("c", [3, 1, 1], [1, 2, 3])
        m.node("Transpose", ["x"], ["nchw"], ["perm": .ints([0, 3, 1, 2])])
        m.node("Mul", ["nchw", "c"], ["scaled"])
        m.node("Transpose", ["scaled"], ["y"], ["perm": .ints([0, 2, 3, 1])])
        m.node("ReduceMean", ["scaled"], ["mean"], ["axes": .ints([2, 3]), "keepdims": .int(0)])
        m.output("y", [1, 2, 2, 3])
        m.output("mean", [1, 3])
        let graph = try ONNXImporter.load(bytes: m.bytes(), fileName: "nhwc.onnx")
        #expect(graph.tensors[graph.inputs[0]].shape == [1, 2, 2, 3])
        #expect(graph.nodes.count == 2)
        let predictor = try XNNPACKRuntime.Predictor(graph: graph)
        let x: [Float] = (0..<12).map(Float.init)
        let out = try predictor.predict([x])
        #expect(out[0] == x.enumerated().map { i, v in v * Float(i % 3 + 1) })
        #expect(out[1] == [4.5, 2 * 5.5, 3 * 6.5])
        // Other permutations of activations are refused with the reason.
        var bad = ONNXModelBuilder()
        bad.input("x", [1, 2, 3, 4])
        bad.node("Transpose", ["x"], ["y"], ["perm": .ints([0, 1, 3, 2])])
        bad.output("y")
        #expect(throws: ModelError.unsupportedOperations(
            file: "t.onnx", operations: ["Transpose (perm [0, 1, 3, 2] on [1, 2, 3, 4]; only NCHW ↔ NHWC is supported)"])) {
            try ONNXImporter.load(bytes: bad.bytes(), fileName: "t.onnx")
        }
    }

    @Test func float16WeightsAndFloatDataAreConverted() throws {
        var m = ONNXModelBuilder()
        m.input("x", [1, 2, 1, 1])
        m.initializers.append(ONNXModelBuilder.float16Tensor("w", [2, 2, 1, 1], floats: [1, 0.5, -2, 0.25]))
        m.initializers.append(ONNXModelBuilder.tensor("b", [2], floats: [1, 2], raw: false))
        m.node("Conv", ["x", "w", "b"], ["y"])
        m.output("y")
        let y = try runONNX(m, [[2, 4]])[0]
        let expected: [Float] = [5, -1]   // [2·1 + 4·0.5 + 1, 2·(−2) + 4·0.25 + 2]
        #expect(y == expected)
    }
}
