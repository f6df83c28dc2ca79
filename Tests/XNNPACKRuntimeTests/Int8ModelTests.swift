import CFrameGraphKernels
import Foundation
import NeuralGraph
import TFLiteImport
import Testing
import TestSupport
@testable import XNNPACKRuntime

/// `precision: .int8` on the four MediaPipe models, against LiteRT's float outputs on real webcam
/// frames (Tests/Golden): the masks overlap the float ones (IoU ≥ 0.99 at 0.5), BlazeFace keeps its
/// best anchors and their boxes, the face mesh its points within a pixel or two.
@Suite struct Int8ModelTests {
    static let vnni = fg_qconv_has_simd() != 0

    /// The prediction of `c` with int8 1×1 convolutions, per output: (int8 values, LiteRT's).
    func predict(_ c: GoldenParityTests.Case) throws -> [(name: String, int8: [Float], golden: [Float])] {
        let path = try #require(TestEnvironment.mediaPipeModel(c.model))
        let predictor = try Predictor(graph: try TFLiteImporter.load(path: path), options: .init(precision: .int8))
        #expect(predictor.kernelChoice.contains("in 8-bit integers"), "\(predictor.kernelChoice)")
        let bytes = try Data(contentsOf: GoldenParityTests.golden.appendingPathComponent(c.input))
        let input = predictor.input(0)
        try #require(bytes.count == input.count)
        for (i, b) in bytes.enumerated() { input.pointer[i] = Float(b) * c.scale + c.offset }
        try predictor.predict()
        return try c.outputs.enumerated().map { k, expected in
            let index = (0..<predictor.outputCount).first { predictor.outputInfo($0).name == expected.name } ?? k
            let golden = try Data(contentsOf: GoldenParityTests.golden.appendingPathComponent(expected.file)).withUnsafeBytes {
                Array($0.bindMemory(to: Float.self))
            }
            return (expected.name, Array(predictor.output(index).values), golden)
        }
    }

    @Test(.enabled(if: GoldenParityTests.modelsPresent && vnni, "needs the MediaPipe models and AVX-512 VNNI"),
          arguments: GoldenParityTests.cases.filter { $0.model.hasPrefix("selfie") })
    func segmentationMasksOverlapTheFloatOnes(_ c: GoldenParityTests.Case) throws {
        for out in try predict(c) {
            try #require(out.int8.count == out.golden.count)
            var both = 0, either = 0, sum = 0.0
            for (a, b) in zip(out.int8, out.golden) {
                if a > 0.5 && b > 0.5 { both += 1 }
                if a > 0.5 || b > 0.5 { either += 1 }
                sum += Double(abs(a - b))
            }
            let iou = Double(both) / Double(max(either, 1)), mean = sum / Double(out.golden.count)
            print("int8 \(c.id): mask IoU \(iou), mean |difference| \(mean)")
            #expect(either > 1000, "\(c.id): the golden frame should hold a person")
            #expect(iou >= 0.99, "\(c.id): int8 mask IoU \(iou) against LiteRT's float mask")
            #expect(mean <= 0.002, "\(c.id): mean |difference| \(mean)")
        }
    }

    @Test(.enabled(if: GoldenParityTests.modelsPresent && vnni, "needs the MediaPipe models and AVX-512 VNNI"),
          arguments: GoldenParityTests.cases.filter { $0.model.hasPrefix("face_detection") })
    func blazeFaceKeepsItsBestAnchorsAndTheirBoxes(_ c: GoldenParityTests.Case) throws {
        let outs = try predict(c)
        let scores = try #require(outs.first { $0.name == "classificators" }), boxes = try #require(outs.first { $0.name == "regressors" })
        func sigmoid(_ x: Float) -> Float { 1 / (1 + exp(-x)) }
        let best = { (v: [Float]) in Array(v.indices.sorted { v[$0] > v[$1] }.prefix(3)) }
        #expect(best(scores.int8) == best(scores.golden), "\(c.id): best anchors \(best(scores.int8)) vs \(best(scores.golden))")
        for a in best(scores.golden) {
            #expect(abs(sigmoid(scores.int8[a]) - sigmoid(scores.golden[a])) <= 0.02, "\(c.id) anchor \(a): score")
            // 16 values per anchor: the box and six key points, in pixels of the 128 × 128 input.
            var worst: Float = 0
            for j in (a * 16)..<(a * 16 + 16) { worst = max(worst, abs(boxes.int8[j] - boxes.golden[j])) }
            #expect(worst <= 2, "\(c.id) anchor \(a): box and points \(worst) px from the float ones")
        }
    }

    @Test(.enabled(if: GoldenParityTests.modelsPresent && vnni, "needs the MediaPipe models and AVX-512 VNNI"),
          arguments: GoldenParityTests.cases.filter { $0.model.hasPrefix("face_landmark") })
    func faceMeshPointsStayWithinAPixelOrTwo(_ c: GoldenParityTests.Case) throws {
        let outs = try predict(c)
        let points = try #require(outs.first { $0.name == "conv2d_21" })  // 468 × (x, y, z), pixels of the 192 × 192 input
        let xy = stride(from: 0, to: points.golden.count, by: 3).flatMap { [$0, $0 + 1] }
        let d = xy.map { abs(points.int8[$0] - points.golden[$0]) }
        let mean = d.reduce(0, +) / Float(d.count), worst = d.max() ?? .infinity
        print("int8 \(c.id): face mesh points mean \(mean) px, largest \(worst) px")
        #expect(mean <= 0.5 && worst <= 2, "\(c.id): points mean \(mean) px, largest \(worst) px from the float ones")
    }

    @Test(.enabled(if: GoldenParityTests.modelsPresent && vnni, "needs the MediaPipe models and AVX-512 VNNI"))
    func twoThreadsGiveTheSameValuesAsOne() throws {
        let c = try #require(GoldenParityTests.cases.first { $0.model == "selfie_segmentation.tflite" })
        let path = try #require(TestEnvironment.mediaPipeModel(c.model))
        let graph = try TFLiteImporter.load(path: path)
        let bytes = try Data(contentsOf: GoldenParityTests.golden.appendingPathComponent(c.input))
        let input = bytes.map { Float($0) * c.scale + c.offset }
        let one = try Predictor(graph: graph, options: .init(threads: 1, precision: .int8)).predict([input])[0]
        let two = try Predictor(graph: graph, options: .init(threads: 2, precision: .int8)).predict([input])[0]
        #expect(one.count == two.count && zip(one, two).allSatisfy { $0.bitPattern == $1.bitPattern })
    }

    @Test func withoutVNNIOrForFloatThePlanHasNoInt8Convolution() throws {
        var g = NeuralGraph()
        var seed: UInt64 = 5
        let x = g.addTensor(TensorValue(name: "x", shape: [1, 8, 8, 64]))
        let w = g.addTensor(TensorValue(name: "w", shape: [32, 1, 1, 64], constant: ConstantStorage(floats: pseudoRandomValues(2048, seed: &seed))))
        let y = g.addTensor(TensorValue(name: "y", shape: [1, 8, 8, 32]))
        g.nodes = [NeuralNode(operation: .conv2d(ConvolutionParameters()), inputs: [x, w], outputs: [y], name: "conv")]
        g.inputs = [x]
        g.outputs = [y]
        let float = try Predictor(graph: g, options: .init(convolutions: .own))
        #expect(!float.kernelChoice.contains("int8"))
        let int8 = try Predictor(graph: g, options: .init(precision: .int8))
        #expect(int8.kernelChoice.contains(Self.vnni ? "1 convolutions in 8-bit integers" : "lacks: float32"), "\(int8.kernelChoice)")
        let values = pseudoRandomValues(8 * 8 * 64, seed: &seed)
        let a = try float.predict([values])[0], b = try int8.predict([values])[0]
        let worst = zip(a, b).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst < 0.3, "int8 differs from float by \(worst)")
        #expect(!Self.vnni || worst > 0, "int8 gave float's values bit for bit: it did not run")
    }
}
