import Foundation
import NeuralGraph
import TFLiteImport
import Testing
import TestSupport
import XNNPACKRuntime

/// The four MediaPipe models against LiteRT's outputs on real webcam frames (Tests/Golden, written by
/// tools/models/make_goldens.py): every output within 1e-4 absolute, or 3e-6 of its largest magnitude.
@Suite struct GoldenParityTests {
    struct Case: Sendable, CustomStringConvertible {
        var id: String
        var model: String
        var input: String
        var shape: [Int]
        var scale: Float
        var offset: Float
        var outputs: [(name: String, file: String, shape: [Int])]
        var description: String { id }
    }

    static let golden = TestEnvironment.root.appendingPathComponent("Tests/Golden")

    static let cases: [Case] = {
        guard let data = try? Data(contentsOf: golden.appendingPathComponent("goldens.json")),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let list = json["cases"] as? [[String: Any]] else { return [] }
        return list.compactMap { c in
            guard let id = c["id"] as? String, let model = (c["model"] as? [String: Any])?["file"] as? String,
                  let input = c["input"] as? [String: Any], let file = input["file"] as? String,
                  let shape = input["tensor_shape"] as? [Int], let norm = input["normalisation"] as? [String: Any],
                  let scale = norm["scale"] as? Double, let offset = norm["offset"] as? Double,
                  let outs = c["outputs"] as? [[String: Any]] else { return nil }
            let outputs = outs.compactMap { o -> (String, String, [Int])? in
                guard let n = o["name"] as? String, let f = o["file"] as? String, let s = o["shape"] as? [Int] else { return nil }
                return (n, f, s)
            }
            return Case(id: id, model: model, input: file, shape: shape, scale: Float(scale), offset: Float(offset), outputs: outputs)
        }
    }()

    static let modelsPresent = TestEnvironment.mediaPipeModel("selfie_segmentation.tflite") != nil

    /// 1e-4, or float32's own rounding where an output is large: 3e-6 of its largest magnitude, about
    /// 25 float32 steps there (BlazeFace's logits reach 131, its box offsets 227). FrameGraph's kernels
    /// add the products of a convolution in another order than LiteRT's, which moves large results by
    /// a few steps.
    static func allowedDifference(_ reference: [Float]) -> Float {
        max(1e-4, 3e-6 * (reference.map(abs).max() ?? 0))
    }

    @Test func goldenFilesArePresent() {
        #expect(Self.cases.count == 8, "Tests/Golden/goldens.json should describe 8 cases (4 models × 2 frames)")
    }

    @Test(.enabled(if: modelsPresent, "needs the MediaPipe models (tools/models/fetch_mediapipe_models.sh models/cache)"), arguments: cases)
    func outputsMatchLiteRT(_ c: Case) throws {
        let path = try #require(TestEnvironment.mediaPipeModel("\(c.model)"))
        let predictor = try Predictor(graph: try TFLiteImporter.load(path: path))
        let bytes = try Data(contentsOf: Self.golden.appendingPathComponent(c.input))
        let input = predictor.input(0)
        #expect(input.shape == c.shape)
        try #require(bytes.count == input.count)
        for (i, b) in bytes.enumerated() { input.pointer[i] = Float(b) * c.scale + c.offset }
        try predictor.predict()
        for (k, expected) in c.outputs.enumerated() {
            let outputIndex = (0..<predictor.outputCount).first { predictor.outputInfo($0).name == expected.name } ?? k
            let out = predictor.output(outputIndex)
            let reference = try Data(contentsOf: Self.golden.appendingPathComponent(expected.file)).withUnsafeBytes {
                Array($0.bindMemory(to: Float.self))
            }
            try #require(reference.count == out.count, "\(c.id) \(expected.name): \(reference.count) vs \(out.count) values")
            var worst: Float = 0
            for i in 0..<out.count { worst = max(worst, abs(out.pointer[i] - reference[i])) }
            let allowed = GoldenParityTests.allowedDifference(reference)
            print("golden \(c.id) \(expected.name): max abs diff \(worst) (allowed \(allowed))")
            #expect(worst <= allowed, "\(c.id) output '\(expected.name)': max abs diff \(worst), allowed \(allowed)")
        }
    }
}
