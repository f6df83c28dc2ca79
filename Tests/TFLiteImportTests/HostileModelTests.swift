import Foundation
import FrameGraph
import NeuralGraph
import TestSupport
import Testing
@testable import TFLiteImport

/// Crafted models of the kinds an attacker (or a broken converter) produces: each is refused with a
/// typed error before anything is allocated, or, where it is a valid model with a hostile output,
/// runs without trapping.
@Suite struct HostileModelTests {
    /// [1, 16384, 16384, 3] through RELU: 805 M elements per tensor, under the importer's 2⁴⁰ cap but
    /// 6 GiB of tensors, over the 2 GiB budget.
    @Test func aModelOverTheMemoryBudgetIsRefusedBeforeAllocation() throws {
        var m = TestModel()
        let x = m.tensor("x", [1, 16384, 16384, 3])
        let y = m.tensor("y", [1, 16384, 16384, 3])
        m.op(19, [x], [y])
        m.inputs = [x]
        m.outputs = [y]
        #expect {
            _ = try TFLiteImporter.load(data: Data(m.bytes()), fileName: "huge.tflite")
        } throws: { error in
            "\(error)".contains("over the memory budget of 2048 MiB") && "\(error)".contains("--model-budget")
        }
        // A bigger budget lets it through (the check is the budget, not a fixed cap).
        let limits = ModelLimits(memoryBudgetBytes: 8 << 30)
        #expect(throws: Never.self) { _ = try TFLiteImporter.load(data: Data(m.bytes()), fileName: "huge.tflite", limits: limits) }
    }

    @Test func aCycleOrUseBeforeDefinitionIsRefused() throws {
        // ADD reads b, which RELU writes only afterwards (and from ADD's output: a cycle).
        var m = TestModel()
        let x = m.tensor("x", [1, 4, 4, 1]), a = m.tensor("a", [1, 4, 4, 1]), b = m.tensor("b", [1, 4, 4, 1])
        m.op(0, [x, b], [a], optionsType: 11, options: [(0, .int8(0))])
        m.op(19, [a], [b])
        m.inputs = [x]
        m.outputs = [b]
        #expect {
            _ = try TFLiteImporter.load(data: Data(m.bytes()), fileName: "cycle.tflite")
        } throws: { error in
            "\(error)".contains("reads tensor 'b' before any operation writes it")
        }
        // Writing a graph input is refused too.
        var w = TestModel()
        let i = w.tensor("i", [1, 4, 4, 1]), o = w.tensor("o", [1, 4, 4, 1])
        w.op(19, [o], [i])
        w.op(19, [i], [o])
        w.inputs = [i]
        w.outputs = [o]
        #expect(throws: ModelError.self) { _ = try TFLiteImporter.load(data: Data(w.bytes()), fileName: "overwrite.tflite") }
    }

    /// The 368-byte MAX_POOL of the issue: filter 2³⁰ with SAME padding passes shape arithmetic, so it
    /// must be stopped by the runtime's parameter limits (and FLOPs must not overflow meanwhile).
    @Test func aPoolingWindowBeyondTheRuntimeIsRefusedAndFlopsSaturate() throws {
        var m = TestModel()
        let x = m.tensor("x", [1, 8, 8, 3]), y = m.tensor("y", [1, 8, 8, 3])
        m.op(17, [x], [y], optionsType: 5,
             options: [(0, .int8(0)), (1, .int32(1)), (2, .int32(1)), (3, .int32(1 << 30)), (4, .int32(1 << 30))])
        m.inputs = [x]
        m.outputs = [y]
        #expect {
            _ = try TFLiteImporter.load(bytes: m.bytes(), fileName: "pool.tflite")
        } throws: { error in
            "\(error)".contains("filter 1073741824×1073741824 is larger than the runtime's limit of 65536")
        }
        // The same graph built directly: counting its FLOPs saturates instead of trapping.
        var g = NeuralGraph()
        let gx = g.addTensor(TensorValue(name: "x", shape: [1, 1 << 20, 1 << 20, 3]))
        let gy = g.addTensor(TensorValue(name: "y", shape: [1, 1 << 20, 1 << 20, 3]))
        g.nodes = [NeuralNode(operation: .maxPool2d(PoolingParameters(filterH: 1 << 30, filterW: 1 << 30, strideH: 1, strideW: 1, padding: .same)),
                              inputs: [gx], outputs: [gy], name: "pool")]
        #expect(g.flops == Int.max)
    }

    /// A colorizer whose every output is ±∞ or NaN (a 1×1 convolution with infinite weights), run
    /// through the colorize pipeline: the run finishes, every prediction is counted as non-finite, and
    /// the frames come out grey (a = b = 0) instead of trapping in the recombine step.
    @Test func nonFiniteNetworkOutputsAreCountedAndReplaced() throws {
        var m = TestModel()
        let l = m.tensor("L", [1, 256, 256, 1])
        let w = m.tensor("w", [2, 1, 1, 1], data: littleEndianBytes([Float.infinity, -Float.infinity]))
        let ab = m.tensor("ab", [1, 256, 256, 2])
        m.op(3, [l, w], [ab], optionsType: 1, options: [(0, .int8(1)), (1, .int32(1)), (2, .int32(1)), (3, .int8(0))])
        m.inputs = [l]
        m.outputs = [ab]
        let dir = TestEnvironment.scratch("hostile-nonfinite")
        let model = dir.appendingPathComponent("inf.tflite").path
        try Data(m.bytes()).write(to: URL(fileURLWithPath: model))
        let out = dir.appendingPathComponent("o.mp4").path, stats = dir.appendingPathComponent("stats.json")
        let pipeline = dir.appendingPathComponent("p.fg").path
        try """
        source = pattern width=256 height=64 frames=12 format=rgb24
        net = colorize model=\(model)
        recombine = recombine
        out = encode path=\(out)
        source -> recombine.frame
        source -> net -> recombine.ab
        recombine -> out
        """.write(toFile: pipeline, atomically: true, encoding: .utf8)
        let r = try runCommand(TestEnvironment.cli, ["run", pipeline, "--stats", stats.path, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let report = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: stats))
        #expect(report.framesOut == 12)
        #expect(report.nonFinite == 12, "every prediction had non-finite outputs")
        #expect(report.nodes.first { $0.name == "net" }?.nonFinite == 12)
        let frames = try TestEnvironment.decodeAll(out).frames
        #expect(frames.count == 12)
    }
}
