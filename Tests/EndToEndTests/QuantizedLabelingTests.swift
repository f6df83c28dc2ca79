import Foundation
import Testing
import TestSupport

/// `framegraph label` with other people's quantized classifiers, as with the float ones: labels and
/// normalisation from the ONNX metadata the quantizer kept, the softmax the model ends in recognised
/// through its output's quantize/dequantize (probabilities, not a second softmax over them), and a
/// quantized TFLite with NAME.labels.txt beside it.
@Suite(.serialized, .enabled(if: FileManager.default.fileExists(atPath: quantizedModels + "/manifest.json"),
                              "needs the set-up's models/cache/quantized (tools/quantized/setup.sh, make_models.py)"))
struct QuantizedLabelingTests {
    /// "photo.jpg: label 0.133; label 0.062; …" → [(label, score)].
    func labels(_ r: CommandResult) -> [(String, Double)] {
        guard let line = r.stdout.split(separator: "\n").first, let colon = line.range(of: ": ") else { return [] }
        return line[colon.upperBound...].components(separatedBy: "; ").compactMap { item in
            guard let space = item.lastIndex(of: " "), let score = Double(item[item.index(after: space)...]) else { return nil }
            return (String(item[..<space]), score)
        }
    }

    func photo() throws -> String {
        let dir = TestEnvironment.scratch("quantized-labels")
        let out = dir.appendingPathComponent("photo.jpg").path
        let sample = try #require(TestEnvironment.portraitSample, "needs the sample (tools/make-samples.sh)")
        let r = try runCommand(try #require(ffmpegPath), ["-v", "error", "-y", "-i", sample, "-frames:v", "1", out])
        try #require(r.status == 0, "\(r.stderr)")
        return out
    }

    @Test(arguments: ["efficientnet_lite0_qdq_u8.onnx", "efficientnet_lite0_qdq_s8.onnx", "efficientnet_lite0_qop_u8.onnx"])
    func quantizedONNXLabelsAsTheFloatModelDoes(_ model: String) throws {
        let picture = try photo()
        let float = labels(try runCommand(TestEnvironment.cli, ["label", "--model", TestEnvironment.root.appendingPathComponent("models/cache/efficientnet_lite0.onnx").path, picture], timeout: 60))
        let quantized = labels(try runCommand(TestEnvironment.cli, ["label", "--model", quantizedModels + "/" + model, picture], timeout: 60))
        try #require(!float.isEmpty && !quantized.isEmpty)
        #expect(quantized[0].0 == float[0].0, "\(model): best label '\(quantized[0].0)', the float model's '\(float[0].0)'")
        // Probabilities, not a softmax of probabilities (which is flat: 0.001 each).
        #expect(abs(quantized[0].1 - float[0].1) < 0.05, "\(model): \(quantized[0].1) against the float model's \(float[0].1)")
        #expect(!quantized[0].0.hasPrefix("class "), "\(model): labels from the metadata")
    }

    @Test func aQuantizedTFLiteTakesTheLabelsBesideIt() throws {
        let picture = try photo()
        let dir = TestEnvironment.scratch("quantized-labels-beside")
        let model = dir.appendingPathComponent("mobilenet_uint8.tflite").path
        try? FileManager.default.removeItem(atPath: model)
        try FileManager.default.copyItem(atPath: quantizedModels + "/mobilenet_v2_1.0_224_uint8.tflite", toPath: model)
        try (0..<1000).map { "thing \($0)" }.joined(separator: "\n").write(toFile: dir.appendingPathComponent("mobilenet_uint8.labels.txt").path,
                                                                         atomically: true, encoding: .utf8)
        let r = try runCommand(TestEnvironment.cli, ["label", "--model", model, picture], timeout: 60)
        let found = labels(r)
        try #require(!found.isEmpty, "\(r.stderr)")
        #expect(found.allSatisfy { $0.0.hasPrefix("thing ") }, "\(found)")
        #expect(found[0].1 > 0.01, "probabilities as the model outputs them: \(found)")
    }
}
