import Foundation
import NeuralGraph
import TestSupport
import Testing
import XNNPACKRuntime
@testable import ONNXImport

/// The four MediaPipe models converted to ONNX (models/cache/*.onnx: NHWC inputs behind a Transpose,
/// as tf2onnx writes them) against LiteRT's outputs for the TFLite originals (Tests/Golden).
struct MediaPipeONNXTests {
    static let root = TestEnvironment.root

    static let cases: [(id: String, model: String, input: String, scale: Float, offset: Float, outputs: [(String, String)])] = {
        guard let data = try? Data(contentsOf: root.appendingPathComponent("Tests/Golden/goldens.json")),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let list = json["cases"] as? [[String: Any]] else { return [] }
        return list.compactMap { c in
            guard let id = c["id"] as? String, let model = (c["model"] as? [String: Any])?["file"] as? String,
                  let input = c["input"] as? [String: Any], let file = input["file"] as? String,
                  let norm = input["normalisation"] as? [String: Any],
                  let scale = norm["scale"] as? Double, let offset = norm["offset"] as? Double,
                  let outs = c["outputs"] as? [[String: Any]] else { return nil }
            let outputs = outs.compactMap { o -> (String, String)? in
                guard let n = o["name"] as? String, let f = o["file"] as? String else { return nil }
                return (n, f)
            }
            return (id, model.replacingOccurrences(of: ".tflite", with: ".onnx"), file, Float(scale), Float(offset), outputs)
        }
    }()

    /// Whether models/cache holds at least one of them (the setup does not convert them).
    static let anyConverted = cases.contains { FileManager.default.fileExists(atPath: root.appendingPathComponent("models/cache/\($0.model)").path) }

    @Test(.enabled(if: anyConverted, "needs MediaPipe's models as ONNX in models/cache (tools/models/tflite_to_onnx.py, with tools/requirements-tools.txt)"))
    func convertedModelsMatchLiteRT() throws {
        var compared = 0
        for c in Self.cases {
            let path = Self.root.appendingPathComponent("models/cache/\(c.model)").path
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let predictor = try Predictor(graph: try ONNXImporter.load(path: path))
            let bytes = try Data(contentsOf: Self.root.appendingPathComponent("Tests/Golden/\(c.input)"))
            let input = predictor.input(0)
            try #require(bytes.count == input.count, "\(c.id): input \(input.shape)")
            for (i, b) in bytes.enumerated() { input.pointer[i] = Float(b) * c.scale + c.offset }
            try predictor.predict()
            for (name, file) in c.outputs {
                guard let k = (0..<predictor.outputCount).first(where: { predictor.outputInfo($0).name == name }) else {
                    Issue.record("\(c.id): no output '\(name)'")
                    continue
                }
                let out = predictor.output(k)
                let reference = try Data(contentsOf: Self.root.appendingPathComponent("Tests/Golden/\(file)")).withUnsafeBytes {
                    Array($0.bindMemory(to: Float.self))
                }
                try #require(reference.count == out.count, "\(c.id) \(name)")
                let diff = maxAbsDiff(Array(out.values), reference)
                print("\(c.model) vs LiteRT \(c.id) '\(name)': max abs diff \(diff)")
                // 1e-4, or float32's rounding of large outputs (3e-6 of the largest), as GoldenParityTests.
                let allowed = max(1e-4, 3e-6 * (reference.map(abs).max() ?? 0))
                #expect(diff <= allowed, "\(c.id) '\(name)': max abs diff \(diff), allowed \(allowed)")
                compared += 1
            }
        }
        #expect(compared > 0, "no output of the converted models was compared")
    }
}
