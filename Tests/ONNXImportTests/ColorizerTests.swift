import Foundation
import NeuralGraph
import TestSupport
import Testing
import XNNPACKRuntime
@testable import ONNXImport

/// The project's colorizer (models/colorizer/colorizer.onnx, a PyTorch export): it imports, and its
/// output matches onnxruntime's on a seeded input when .venv-tools has onnxruntime.
struct ColorizerTests {
    static let modelPath = TestEnvironment.root.appendingPathComponent("models/colorizer/colorizer.onnx").path
    static let python = TestEnvironment.root.appendingPathComponent(".venv-tools/bin/python").path

    @Test func imports() throws {
        guard FileManager.default.fileExists(atPath: Self.modelPath) else {
            print("skipped: \(Self.modelPath) is absent")
            return
        }
        let graph = try ONNXImporter.load(path: Self.modelPath)
        #expect(graph.inputs.count == 1 && graph.outputs.count == 1)
        #expect(graph.tensors[graph.inputs[0]].name == "L")
        #expect(graph.tensors[graph.inputs[0]].shape == [1, 192, 192, 1])
        #expect(graph.tensors[graph.outputs[0]].name == "ab")
        #expect(graph.tensors[graph.outputs[0]].shape == [1, 48, 48, 2])
        #expect(graph.metadata["producer"]?.hasPrefix("pytorch") == true)
    }

    @Test func matchesOnnxRuntime() throws {
        guard FileManager.default.fileExists(atPath: Self.modelPath) else {
            print("skipped: \(Self.modelPath) is absent")
            return
        }
        guard FileManager.default.isExecutableFile(atPath: Self.python) else {
            print("skipped: \(Self.python) is missing (make the tools venv with onnxruntime to compare against it)")
            return
        }
        let scratch = TestEnvironment.scratch("onnx-colorizer")
        let inputFile = scratch.appendingPathComponent("input.f32").path
        let outputFile = scratch.appendingPathComponent("output.f32").path
        let script = """
        import sys, numpy as np, onnxruntime as ort
        model, inp, out = sys.argv[1:4]
        x = (np.random.default_rng(1234).random((1, 1, 192, 192), dtype=np.float32) * 100).astype(np.float32)
        x.tofile(inp)
        s = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        y = s.run(["ab"], {"L": x})[0].astype(np.float32)
        assert y.shape == (1, 2, 48, 48), y.shape
        y.tofile(out)
        """
        let result = try runCommand(Self.python, ["-c", script, Self.modelPath, inputFile, outputFile], timeout: 120)
        guard result.status == 0 else {
            if result.stderr.contains("No module named") {
                print("skipped: onnxruntime is not importable in \(Self.python): \(result.stderr)")
                return
            }
            Issue.record("onnxruntime failed: \(result.stderr)")
            return
        }
        let input = try Self.floats(inputFile), reference = try Self.floats(outputFile)
        let predictor = try Predictor(graph: try ONNXImporter.load(path: Self.modelPath))
        // NCHW [1, 1, 192, 192] and NHWC [1, 192, 192, 1] are the same memory.
        let nhwc = try predictor.predict([input])[0]
        let ours = ONNXLayout.transpose(nhwc, shape: [1, 48, 48, 2], permutation: [0, 3, 1, 2])
        let diff = maxAbsDiff(ours, reference)
        let range = reference.map(abs).max() ?? 0
        print("colorizer.onnx vs onnxruntime: max |Δ| = \(diff) a/b units (outputs up to \(range)); plan \(predictor.planSummary)")
        #expect(diff <= 0.02)
    }

    static func floats(_ path: String) throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}
