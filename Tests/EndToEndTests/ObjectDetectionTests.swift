import Foundation
import Testing
import TestSupport

/// The `detect` node on the set-up's SSDs (models/cache/quantized: TFLite_Detection_PostProcess with
/// regular and fast suppression, float, int8 and all-uint8): the picture LiteRT saw, run through a
/// pipeline, gives LiteRT's detections — same count, same order, the same boxes (corners turned into
/// x, y, width, height), classes and scores — in the results file.
/// The set-up's quantized test models.
let quantizedModels = TestEnvironment.root.appendingPathComponent("models/cache/quantized").path

@Suite(.serialized, .enabled(if: FileManager.default.fileExists(atPath: quantizedModels + "/manifest.json"),
                              "needs the set-up's models/cache/quantized (tools/quantized/setup.sh, make_models.py)"))
struct ObjectDetectionTests {
    static let models = quantizedModels

    struct Row { let box: [Float]; let label: Int; let score: Float }

    /// LiteRT's rows for one stored picture: the op's outputs in its own order (boxes, classes, scores, count).
    func reference(_ folder: String) throws -> [Row] {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/reference.json"))) as? [String: Any])
        let outputs = try #require(json["outputs"] as? [[String: Any]])
        func values(_ shape: [Int]) throws -> [[Float]] {
            try outputs.filter { $0["shape"] as? [Int] == shape }.map { o in
                let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + (o["f32"] as? String ?? "")))
                return data.withUnsafeBytes { raw in (0..<(data.count / 4)).map { raw.loadUnaligned(fromByteOffset: 4 * $0, as: Float.self) } }
            }
        }
        let boxes = try #require(try values([1, 10, 4]).first), rows = try values([1, 10]), count = try #require(try values([1]).first?.first)
        try #require(rows.count == 2)
        // Classes are whole numbers; scores are not all whole.
        let (classes, scores) = rows[0].allSatisfy { $0 == $0.rounded() } ? (rows[0], rows[1]) : (rows[1], rows[0])
        return (0..<Int(count)).map { r in Row(box: Array(boxes[(4 * r)..<(4 * r + 4)]), label: Int(classes[r]), score: scores[r]) }
    }

    @Test(arguments: ["ssd_regular_nms_uint8.tflite", "ssd_fast_nms_int8.tflite", "ssd_regular_nms.tflite", "ssd_fast_nms.tflite"])
    func theDetectNodeGivesLiteRTsDetections(_ model: String) throws {
        let folder = Self.models + "/reference/" + model
        let pictures = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        try #require(!pictures.isEmpty)
        let dir = TestEnvironment.scratch("detect-\(model)")
        let tool = try #require(ffmpegPath)
        var compared = 0
        for picture in pictures {
            let expected = try reference(folder + "/" + picture)
            // The model's input as a PNG: the frame is the input itself (no scaling).
            let png = dir.appendingPathComponent("\(picture).png").path
            let made = try runCommand(tool, ["-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "128x128",
                                             "-i", folder + "/" + picture + "/input.rgb", png])
            try #require(made.status == 0, "\(made.stderr)")
            let results = dir.appendingPathComponent("\(picture).jsonl").path
            let r = try runCommand(TestEnvironment.cli, ["run", "-e", "file path=\(png) -> detect model=\(Self.models)/\(model) min-score=0 max-results=100",
                                                         "--results", results, "--quiet"], timeout: 60)
            try #require(r.status == 0, "\(r.stderr)")
            let line = try #require(try String(contentsOfFile: results, encoding: .utf8).split(separator: "\n").first)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let detections = try #require(json["detections"] as? [[String: Any]])
            #expect(detections.count == expected.count, "\(model) \(picture): \(detections.count) detections, LiteRT \(expected.count)")
            // Float models take (byte − 127.5) / 127.5 here as byte / 127.5 − 1: a rounding apart.
            let tolerance: Float = model.contains("8") ? 0 : 1e-5
            for (d, e) in zip(detections, expected) {
                let box = (d["box"] as? [Double] ?? []).map(Float.init)
                let (ymin, xmin, ymax, xmax) = (e.box[0], e.box[1], e.box[2], e.box[3])
                let want = [xmin, ymin, xmax - xmin, ymax - ymin]
                #expect(box.count == 4 && zip(box, want).allSatisfy { abs($0 - $1) <= tolerance + 1e-6 }, "\(model) \(picture): box \(box), LiteRT \(want)")
                #expect(d["index"] as? Int == e.label, "\(model) \(picture): class \(String(describing: d["index"])), LiteRT \(e.label)")
                #expect(abs(Float(d["score"] as? Double ?? -1) - e.score) <= tolerance + 1e-6, "\(model) \(picture): score")
                compared += 1
            }
        }
        #expect(compared > 0, "\(model): no detections compared")
    }

    @Test func aModelWithoutThePostProcessingIsRefusedNamingItsOutputs() throws {
        let dir = TestEnvironment.scratch("detect-refused")
        let tool = try #require(ffmpegPath)
        let png = dir.appendingPathComponent("in.png").path
        _ = try runCommand(tool, ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=64x64:d=0.04", "-frames:v", "1", png])
        let r = try runCommand(TestEnvironment.cli, ["run", "-e", "file path=\(png) -> detect model=\(Self.models)/opzoo_int8.tflite",
                                                     "--results", dir.appendingPathComponent("r.jsonl").path], timeout: 60)
        #expect(r.status != 0)
        #expect(r.stderr.contains("TFLite_Detection_PostProcess") && r.stderr.contains("detect"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
    }
}
