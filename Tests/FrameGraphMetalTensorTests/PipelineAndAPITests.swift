import FFmpegSupport
import Foundation
import FrameGraph
import FrameGraphFilters
import FrameGraphMetalTensor
import FrameGraphNetwork
import FrameGraphMedia
import MetalTensorImport
import NeuralGraph
import Testing
import TestSupport
import XNNPACKRuntime

/// The three demos as pipelines, MobileNetV2 with deterministic random weights laid out per its
/// `.json`, and the MetalTensor-shaped Swift API.
@Suite(.serialized) struct PipelineAndAPITests {
    static let available = ShippedModelTests.available

    /// MobileNetV2_1.0.bin made by tools/metaltensor/make_random_weights.py (seed 1).
    static func mobileNetWeights() throws -> String {
        let dir = TestEnvironment.scratch("metaltensor-mobilenet")
        let bin = dir.appendingPathComponent("MobileNetV2_1.0.bin").path
        let r = try runCommand(MetalTensorReference.python, [TestEnvironment.root.appendingPathComponent("tools/metaltensor/make_random_weights.py").path,
                                                  ShippedModelTests.model("MobileNetV2_1.0"), "--seed", "1", "--out", bin], timeout: 300)
        try #require(r.status == 0, "make_random_weights.py: \(r.stderr)")
        return bin
    }

    @Test(.enabled(if: available, "needs ../shared (models/metaltensor, media/webcam) and the tools venv"))
    func mobileNetV2WithRandomWeightsMatchesTheReference() throws {
        let bin = try Self.mobileNetWeights()
        let plist = ShippedModelTests.model("MobileNetV2_1.0")
        let graph = try MetalTensorImporter.load(path: plist, options: .init(exposeAllLayers: true, weights: bin))
        let predictor = try Predictor(graph: graph)
        // A real frame's centre square, sampled as the app does.
        let frame = try ShippedModelTests.referenceFrame(clip: "book", time: 1.0)
        PixelCentreSampler(width: 224, height: 224).sample(frame, x: 80, y: 0, width: 480, height: 480, into: predictor.input(0).pointer)
        try predictor.predict()
        let dir = TestEnvironment.scratch("metaltensor-mobilenet-run")
        let inputPath = dir.appendingPathComponent("input.f32").path
        try writeFloats(Array(UnsafeBufferPointer(start: predictor.input(0).pointer, count: predictor.input(0).count)), to: inputPath)
        let r = try MetalTensorReference.run(plist, input: inputPath, into: dir.appendingPathComponent("reference"), weights: bin)
        try #require(r.status == 0, "reference: \(r.stderr)")
        var compared = 0
        for i in 0..<predictor.outputCount {
            let name = predictor.outputInfo(i).name
            let path = dir.appendingPathComponent("reference/\(name).f32").path
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let ours = Array(UnsafeBufferPointer(start: predictor.output(i).pointer, count: predictor.output(i).count))
            let reference = try readFloats(path)
            // The probabilities within 1e-4; the 50 layers before them within float32 rounding accumulated
            // over their depth (5e-5 of their magnitude; random weights make large activations).
            let allowed = i == 0 ? 1e-4 : max(1e-4, 5e-5 * (reference.map(abs).max() ?? 0))
            #expect(ShippedModelTests.maxDifference(ours, reference) <= allowed, "\(name): max |Δ| \(ShippedModelTests.maxDifference(ours, reference)), max |value| \(reference.map(abs).max() ?? 0)")
            compared += 1
        }
        #expect(compared >= 20, "compared \(compared) layers")
        let probabilities = Array(UnsafeBufferPointer(start: predictor.output(0).pointer, count: 1000))
        #expect(abs(probabilities.reduce(0, +) - 1) < 1e-3 && probabilities.allSatisfy(\.isFinite))
    }

    @Test(.enabled(if: available, "needs ../shared (models/metaltensor, media/webcam) and the tools venv"))
    func theClassifyPipelineWritesTheFiveBestLabels() throws {
        let bin = try Self.mobileNetWeights()
        let dir = TestEnvironment.scratch("metaltensor-classify")
        let results = dir.appendingPathComponent("labels.jsonl").path
        let r = try runCommand(TestEnvironment.cli, ["run", "pipelines/metaltensor-classify.fg", "--input", TestEnvironment.againClip,
                                                     "--output", dir.appendingPathComponent("out.mp4").path, "--results", results,
                                                     "--set", "net.weights=\(bin)"], timeout: 300)
        try #require(r.status == 0, "\(r.stderr)")
        let lines = try String(contentsOfFile: results, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 77)
        let synset = try String(contentsOfFile: ShippedModelTests.models.appendingPathComponent("synset_words.txt").path, encoding: .utf8)
            .split(separator: "\n").map { String($0.dropFirst(10)) }
        for line in lines.prefix(5) {
            let item = try JSONDecoder().decode(TimedResults.self, from: Data(line.utf8))
            let c = item.results.classifications
            #expect(c.count == 5)
            #expect(zip(c, c.dropFirst()).allSatisfy { $0.confidence >= $1.confidence })
            for k in c { #expect(k.label == synset[k.index], "class \(k.index): '\(k.label)' is not its synset line without the id") }
        }
        // Without weights: one line naming the node, the model and what to do.
        let missing = try runCommand(TestEnvironment.cli, ["run", "pipelines/metaltensor-classify.fg", "--input", TestEnvironment.againClip,
                                                           "--output", dir.appendingPathComponent("none.mp4").path])
        #expect(missing.status != 0 && missing.stderr.contains("node 'net'") && missing.stderr.contains("MobileNetV2_1.0.bin is missing"), "\(missing.stderr)")
    }

    @Test(.enabled(if: available, "needs ../shared (models/metaltensor, media/webcam) and the tools venv"))
    func thePortraitPipelineCompositesAtFullResolution() throws {
        let dir = TestEnvironment.scratch("metaltensor-portrait")
        let out = dir.appendingPathComponent("portrait.mkv").path
        let r = try runCommand(TestEnvironment.cli, ["run", "pipelines/metaltensor-portrait.fg", "--input", TestEnvironment.againClip,
                                                     "--output", out, "--set", "output.codec=ffv1", "--set", "output.pixel-format=yuv444p"], timeout: 300)
        try #require(r.status == 0, "\(r.stderr)")
        let (_, frames) = try TestEnvironment.decodeAll(out)
        #expect(frames.count == 77)
        let frame = try #require(frames.first { $0.mediaTime >= 0.5 })
        #expect(frame.width == 480 && frame.height == 480)
        let rgb = Frame.make(.rgb24, width: 480, height: 480)
        try Scaler(method: .bilinear).scale(frame, into: rgb)
        func pixel(_ x: Int, _ y: Int) -> [Int] { let row = rgb.row(y); return (0..<3).map { Int(row[x * 3 + $0]) } }
        // A background corner is the app's colour (20, 40, 80); the face keeps its own skin colour.
        for (x, y) in [(10, 470), (470, 470), (20, 300)] {
            #expect(zip(pixel(x, y), [20, 40, 80]).allSatisfy { abs($0 - $1) <= 4 }, "background pixel (\(x), \(y)) = \(pixel(x, y))")
        }
        let face = pixel(240, 120)
        #expect(face[0] > face[2] + 20, "face pixel \(face) is not skin-coloured")
    }

    @Test(.enabled(if: available, "needs ../shared (models/metaltensor, media/webcam) and the tools venv"))
    func theMetalTensorShapedAPIPredictsAndChains() async throws {
        let plist = URL(fileURLWithPath: ShippedModelTests.model("PortraitSegmentNet"))
        let net = try MetalNeuralNetwork(plist: plist, name: "net")
        #expect(throws: MetalNeuralNetwork.NotLoaded.self) { try net.predict(tensor: []) }
        try net.loadWeights(plist.deletingPathExtension().appendingPathExtension("bin"),
                            mapFile: plist.deletingPathExtension().appendingPathExtension("json"))
        #expect(net.inputShape == [128, 128, 3])
        // predictWithTensor: the reference's input gives the reference's output.
        let dir = try ShippedModelTests.dump(clip: "again", time: 0.5)
        let outputs = try net.predict(tensor: try readFloats(dir.appendingPathComponent("portrait.input.f32").path))
        let reference = try readFloats(dir.appendingPathComponent("portrait.output.f32").path)
        #expect(outputs.names == ["output"] && outputs["output"]?.shape == [128, 128, 1])
        #expect(ShippedModelTests.maxDifference(outputs["output"]?.values ?? [], reference) <= 1e-4)
        #expect(net.output(named: "output") == outputs["output"]?.values)
        // An image: synchronous, awaited and with a completion handler give the same mask.
        let frame = try ShippedModelTests.referenceFrame(clip: "again", time: 0.5)
        let sync = try { try net.predict(frame) }()  // a synchronous context picks the synchronous predict
        let awaited = try await net.predict(frame)
        #expect(sync["output"]?.values == awaited["output"]?.values)
        let handled: MetalNeuralNetwork.Outputs = try await withCheckedThrowingContinuation { continuation in
            _ = net.predict(frame) { continuation.resume(with: $0) }
        }
        #expect(handled["output"]?.values == sync["output"]?.values)
        // As a node: source --> crop --> net, every frame's outputs through the handler (offline).
        net.synchronizedProcessing = false
        #expect(net.execution == .worker)
        let seen = Protected(0)
        net.onOutputs = { outputs, _ in if outputs["output"] != nil { seen.withLock { $0 += 1 } } }
        let source = FileSource(name: "file", path: TestEnvironment.againClip)
        source --> Crop(name: "square", region: .centerSquare) --> net --> NullSink(name: "end")
        let report = try GraphRunner(sources: [source], options: RunOptions(mode: .offline)).run()
        #expect(report.failure == nil)
        #expect(seen.withLock { $0 } == 77)
    }

    @Test(.enabled(if: available, "needs ../shared (models/metaltensor, media/webcam) and the tools venv"))
    func modelCommandsTakeAPlist() throws {
        let plist = ShippedModelTests.model("Landmarks")
        let info = try runCommand(TestEnvironment.cli, ["model", "info", plist, "--precision", "fp16"])
        #expect(info.status == 0 && info.stdout.contains("format: MetalTensor plist") && info.stdout.contains("precision: fp16")
                && info.stdout.contains("output 'output': [1, 1, 1, 136]"), "\(info.stdout)\(info.stderr)")
        let bench = try runCommand(TestEnvironment.cli, ["model", "bench", plist, "--runs", "3", "--warmup", "1"])
        #expect(bench.status == 0 && bench.stdout.contains("median"), "\(bench.stderr)")
        let wrong = try runCommand(TestEnvironment.cli, ["model", "info", ShippedModelTests.model("RapidFaceDetect"), "--precision", "fp8"])
        #expect(wrong.status != 0 && wrong.stderr.contains("--precision expects fp32, fp16 or int8, got 'fp8'"), "\(wrong.stderr)")
    }
}
