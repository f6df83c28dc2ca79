import Foundation
import ModelFormats
import NeuralGraph
import ONNXImport
import Testing
import TestSupport
import TFLiteImport
@testable import XNNPACKRuntime

/// Other people's quantized, fp16 and SSD models against their reference runtimes, on the inputs the
/// set-up stored (tools/quantized/make_models.py: models/cache/quantized/, each model's outputs from
/// LiteRT or onnxruntime on real pictures, fed the same bytes):
/// - full-integer TFLite (int8, uint8, int8 with uint8 I/O; the SSDs' post-processing): every value
///   equal to LiteRT's (XNNPACK's integer kernels where LiteRT delegates to them, LiteRT's own integer
///   arithmetic where it does not);
/// - dynamic-range TFLite (run in float32 here, with LiteRT's hybrid int8 kernels there) and QDQ /
///   QOperator ONNX (float operations between exact roundings here, fused integer kernels in
///   onnxruntime): within the larger of 0.02 and the spread between the reference runtime's own two
///   paths (models/cache/quantized/verify.json), and mostly the same best class;
/// - float and fp16 models: within 1e-4 (or twice the reference's own paths' spread where that is larger).
@Suite(.serialized, .enabled(if: QuantizedReferences.available, "needs the set-up's models/cache/quantized (tools/quantized/setup.sh, make_models.py)"))
struct QuantizedParityTests {
    @Test(arguments: QuantizedReferences.models)
    func matchesItsReferenceRuntime(_ model: String) throws {
        let cases = try QuantizedReferences.cases(of: model)
        try #require(!cases.isEmpty, "no stored references for \(model)")
        let graph = try QuantizedReferences.graph(model)
        let predictor = try Predictor(graph: graph, options: .init(threads: 1))
        let spread = QuantizedReferences.spread(of: model)
        var classified = 0, agreed = 0
        for c in cases {
            let input = predictor.input(0), info = predictor.inputInfo(0)
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: c.directory + "/input.rgb")))
            try #require(bytes.count == input.count, "\(c.directory)/input.rgb: \(bytes.count) bytes for \(input.shape)")
            if let q = info.quantization {
                // The reference feeds uint8 inputs the bytes, int8 inputs byte − 128.
                let shift = info.elementType == .int8 ? 128 : 0
                for i in 0..<input.count { input.pointer[i] = Float(Int32(bytes[i]) - Int32(shift) - q.zeroPoint) * q.scale }
            } else if let (scale, offset) = c.inputScaleOffset {
                // As the reference fed it (reference.json: value = byte × scale + offset, in float32).
                for i in 0..<input.count { input.pointer[i] = Float(bytes[i]) * scale + offset }
            } else {
                let (mean, std) = try #require(QuantizedReferences.normalization(of: model), "\(model): no input normalisation in the manifest")
                for i in 0..<input.count { input.pointer[i] = (Float(bytes[i]) - mean) / std }
            }
            try predictor.predict()
            for output in c.outputs {
                let index = try #require((0..<predictor.outputCount).first { predictor.outputInfo($0).name == output.name },
                                         "\(model): no output '\(output.name)'")
                let ours = predictor.output(index)
                let reference = try QuantizedReferences.floats(c.directory + "/" + output.file)
                try #require(reference.count == ours.count, "\(model) \(output.name): \(reference.count) reference values, \(ours.count) here")
                let n = output.validRows.map { $0 * (reference.count / max(1, output.rows)) } ?? reference.count
                var largest: Float = 0
                for i in 0..<n { largest = max(largest, abs(ours.pointer[i] - reference[i])) }
                let label = "\(model) '\(output.name)' on \(URL(fileURLWithPath: c.directory).lastPathComponent)"
                switch QuantizedReferences.kind(of: model) {
                case .fullInteger:
                    #expect(largest == 0, "\(label): largest difference \(largest), expected LiteRT's values exactly")
                case .betweenPaths:
                    // The reference's own two paths' spread, and at least 0.02 (a few steps of 1/256).
                    let bound = max(spread[output.name] ?? 0, 0.02)
                    #expect(largest <= bound, "\(label): largest difference \(largest), allowed \(bound)")
                    if reference.count >= 10, output.validRows == nil {
                        let ourBest = (0..<n).max { ours.pointer[$0] < ours.pointer[$1] }
                        let referenceBest = (0..<n).max { reference[$0] < reference[$1] }
                        classified += 1
                        if ourBest == referenceBest { agreed += 1 }
                    }
                case .float:
                    // 1e-4, or twice the reference's own two paths' spread (large outputs: box offsets in pixels).
                    let bound = max(1e-4, 2 * (spread[output.name] ?? 0))
                    #expect(largest <= bound, "\(label): largest difference \(largest), allowed \(bound)")
                }
            }
        }
        // The best class: the same as the reference's on most pictures (near-ties may go either way,
        // as between the reference runtime's own two paths); tools/quantized/parity.py measures the
        // share over 100 photos.
        #expect(classified == 0 || Double(agreed) >= 0.5 * Double(classified), "\(model): the best class agrees on \(agreed) of \(classified) pictures")
    }
}

/// The stored references of models/cache/quantized.
enum QuantizedReferences {
    static let directory = TestEnvironment.root.appendingPathComponent("models/cache/quantized").path
    static var available: Bool { FileManager.default.fileExists(atPath: directory + "/manifest.json") }

    enum Kind { case fullInteger, betweenPaths, float }

    struct Output { let name: String, file: String, rows: Int, validRows: Int? }
    struct Case { let directory: String, outputs: [Output], inputScaleOffset: (Float, Float)? }

    static var manifest: [String: Any] {
        guard let data = FileManager.default.contents(atPath: directory + "/manifest.json"),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
        return json
    }

    /// Every model with stored references (a .task bundle's parts as BUNDLE.task#PART).
    static var models: [String] {
        guard available, let entries = try? FileManager.default.contentsOfDirectory(atPath: directory + "/reference") else { return [] }
        return entries.sorted().map { $0.replacingOccurrences(of: ".task_", with: ".task#") }
    }

    static func kind(of model: String) -> Kind {
        if model.contains("dynamic") || model.contains("qdq") || model.contains("qop") { return .betweenPaths }
        let outputs = ((manifest["models"] as? [String: Any])?[model] as? [String: Any])?["outputs"] as? [[String: Any]] ?? []
        let inputs = ((manifest["models"] as? [String: Any])?[model] as? [String: Any])?["inputs"] as? [[String: Any]] ?? []
        let integerIO = (outputs + inputs).contains { ($0["dtype"] as? String).map { ["int8", "uint8"].contains($0) } ?? false }
        return integerIO ? .fullInteger : .float
    }

    static func normalization(of model: String) -> (Float, Float)? {
        let base = model.components(separatedBy: "#")[0]
        guard let n = ((manifest["models"] as? [String: Any])?[base] as? [String: Any])?["input_normalization"] as? [String: Any],
              let mean = n["mean"] as? Double, let std = n["std"] as? Double else {
            return model.contains(".task#") ? (0, 255) : nil  // the reference's default, byte / 255
        }
        return (Float(mean), Float(std))
    }

    /// The largest difference between the reference runtime's own two paths, per output (verify.json).
    static func spread(of model: String) -> [String: Float] {
        guard let data = FileManager.default.contents(atPath: directory + "/verify.json"),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let results = json["results"] as? [[String: Any]],
              let entry = results.first(where: { $0["model"] as? String == model }),
              let outputs = entry["outputs"] as? [String: [String: Any]] else { return [:] }
        return outputs.compactMapValues { o in (o["unit"] as? String) == "abs" ? (o["max_diff"] as? Double).map(Float.init) : nil }
    }

    static func cases(of model: String) throws -> [Case] {
        let folder = directory + "/reference/" + model.replacingOccurrences(of: ".task#", with: ".task_")
        return try FileManager.default.contentsOfDirectory(atPath: folder).sorted().compactMap { photo in
            let d = folder + "/" + photo
            guard let data = FileManager.default.contents(atPath: d + "/reference.json"),
                  let json = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let outputs = json["outputs"] as? [[String: Any]] else { return nil }
            let input = (json["inputs"] as? [[String: Any]])?.first
            let scaleOffset = (input?["scale"] as? Double).flatMap { s in (input?["offset"] as? Double).map { (Float(s), Float($0)) } }
            return Case(directory: d, outputs: outputs.compactMap { o in
                guard let name = o["name"] as? String, let file = o["f32"] as? String, let shape = o["shape"] as? [Int] else { return nil }
                return Output(name: name, file: file, rows: shape.count >= 2 ? shape[1] : 1, validRows: o["valid_rows"] as? Int)
            }, inputScaleOffset: scaleOffset)
        }
    }

    static func graph(_ model: String) throws -> NeuralGraph {
        let parts = model.components(separatedBy: "#")
        let path = directory + "/" + parts[0]
        if parts.count == 2 {
            let bundle = try ModelBundle(path: path, limits: .standard)
            return try TFLiteImporter.load(bytes: [UInt8](try bundle.part(parts[1])), fileName: model)
        }
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        return path.hasSuffix(".onnx") ? try ONNXImporter.load(bytes: bytes, fileName: model) : try TFLiteImporter.load(bytes: bytes, fileName: model)
    }

    static func floats(_ path: String) throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { raw in (0..<(data.count / 4)).map { raw.loadUnaligned(fromByteOffset: 4 * $0, as: Float.self) } }
    }
}
