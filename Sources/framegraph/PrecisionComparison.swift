import Dispatch
import Foundation
import FrameGraph
import FrameGraphLabeling
import FrameGraphModels
import FrameGraphNetwork
import NeuralGraph
import XNNPACKRuntime

/// One model run twice on the same frames, in float32 and in another precision (int8), and the
/// outputs compared: per output the largest and the mean absolute difference, and for an output of
/// one channel of probabilities (a segmentation mask) the intersection over union of the two masks
/// at 0.5; and the prediction times of both, alternated frame by frame. What
/// `framegraph model compare` prints, and what the int8 tests check.
///
/// Frames are prepared as the network nodes prepare them: stretched to the model's input, normalised
/// by the model's metadata, else MediaPipe's convention for its models, else 0…1; for a model of one
/// input channel (a colorizer), the Lab lightness as L / 50 − 1.
final class PrecisionComparison {
    /// What the frames so far gave.
    public struct Report: Sendable {
        /// Frames compared.
        public var frames = 0
        /// Per output, in the model's order: name, largest absolute difference over every frame,
        /// mean absolute difference, and the 99th percentile of the absolute differences (to 5 %).
        public var outputs: [(name: String, maxAbs: Float, meanAbs: Double, p99: Double)] = []
        /// Per frame, for a one-channel output whose values lie in 0…1 (a mask): the IoU of the two
        /// masks at 0.5 (1 where both are empty). Empty for other models.
        public var maskIoU: [Double] = []
        /// Per frame after a clip's first, for a mask: the IoU of the float mask with the float mask
        /// of the frame before (how much the picture itself changes the mask from one frame to the
        /// next: a scale for ``maskIoU``).
        public var maskChange: [Double] = []
        /// For a classifier (an output of one row of at least 10 scores): frames whose best class
        /// is the same in both.
        public var sameTopClass: Int?
        /// Median prediction time of each, milliseconds.
        public var referenceMilliseconds = 0.0, candidateMilliseconds = 0.0
        /// Who ran the candidate's convolutions (``Predictor/kernelChoice``).
        public var candidateKernels = ""
    }

    private let reference: Predictor
    private let candidate: Predictor
    private let input: ModelInput
    private var sums: [Double]
    private var worst: [Float]
    /// Per output, counts of the absolute differences in bins of 1/50 decade from 1e-6 (bin 0: below).
    private var histograms: [[Int]]
    private static let binsPerDecade = 50.0, decades = 10.0
    private var values = 0
    private var ious: [Double] = [], changes: [Double] = []
    /// The float mask of the frame before (at 0.5), within one clip.
    private var previousMask: [Bool]?
    private var referenceTimes: [Double] = [], candidateTimes: [Double] = []
    /// The output whose masks are compared, if one is a mask.
    private let maskOutput: Int?
    /// The output whose best classes are compared, if one holds class scores.
    private let scoresOutput: Int?
    private var sameTop = 0

    /// `path`: a model file (.tflite, .onnx, MetalTensor .plist) with one RGB image input, or one
    /// lightness input.
    public init(model path: String, precision: Predictor.Precision, threads: Int = 1, models: ModelService = ModelService()) throws {
        let graph = try models.graph(at: path)
        reference = try Predictor(graph: graph, options: .init(threads: threads))
        candidate = try Predictor(graph: graph, options: .init(threads: threads, precision: precision))
        let shape = reference.inputInfo(0).shape
        guard reference.inputCount == 1, shape.count == 4, shape[0] == 1, shape[3] == 3 || shape[3] == 1 else {
            throw ModelError.inputMismatch(input: reference.inputInfo(0).name, expected: "one RGB image [1, H, W, 3] or a lightness [1, H, W, 1]",
                                           got: "\(shape)")
        }
        if shape[3] == 1 {
            // A colorizer: the frame's Lab lightness, L / 50 − 1 (the colorize node's default).
            input = ModelInput(width: shape[2], height: shape[1], channels: 1, content: .lightness, normalization: .lightness)
        } else {
            let info = try ClassifierInfo.read(modelAt: path, graph: graph)
            let normalization = info.normalization ?? ModelCommand.knownNormalization(graph) ?? .unit
            input = ModelInput(width: shape[2], height: shape[1], channels: 3, normalization: normalization)
        }
        sums = [Double](repeating: 0, count: reference.outputCount)
        worst = [Float](repeating: 0, count: reference.outputCount)
        histograms = [[Int]](repeating: [Int](repeating: 0, count: Int(Self.binsPerDecade * Self.decades) + 1), count: reference.outputCount)
        let reference = self.reference
        maskOutput = (0..<reference.outputCount).first { i in
            let s = reference.outputInfo(i).shape
            return s.count == 4 && s[3] == 1 && s[1] > 1 && s[2] > 1
        }
        scoresOutput = reference.outputCount == 1 && reference.outputInfo(0).shape.dropLast().allSatisfy { $0 == 1 }
            && (reference.outputInfo(0).shape.last ?? 0) >= 10 ? 0 : nil
    }

    /// How the two masks of one frame agree at 0.5.
    public struct MaskAgreement: Sendable, Equatable {
        /// Pixels in both masks, and in either.
        public var intersection: Int, union: Int
        /// Pixels in the float mask.
        public var pixels: Int
        /// Intersection over union (1 where both are empty).
        public var iou: Double { union == 0 ? 1 : Double(intersection) / Double(union) }

        public init(intersection: Int, union: Int, pixels: Int) {
            self.intersection = intersection
            self.union = union
            self.pixels = pixels
        }

        /// How `other` agrees with `mask` (pixels: those of `mask`); both the same size.
        init(_ mask: [Bool], _ other: [Bool]) {
            self.init(intersection: 0, union: 0, pixels: 0)
            for j in 0..<min(mask.count, other.count) {
                if mask[j] { pixels += 1 }
                if mask[j] && other[j] { intersection += 1 }
                if mask[j] || other[j] { union += 1 }
            }
        }
    }

    /// The next frame starts another clip: its mask is not compared with the last frame's.
    public func beginClip() { previousMask = nil }

    /// Compares the two on `frame`. Returns, for a mask, how the two masks agree.
    @discardableResult
    public func add(_ frame: Frame) throws -> MaskAgreement? {
        try input.fill(reference.input(0), from: frame)
        candidate.input(0).pointer.update(from: reference.input(0).pointer, count: reference.input(0).count)
        // Alternate which runs first, so that neither always finds the other's weights in the caches.
        let first = values % 2 == 0
        for run in first ? [0, 1] : [1, 0] {
            let p = run == 0 ? reference : candidate
            let t0 = DispatchTime.now().uptimeNanoseconds
            try p.predict()
            let ms = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
            if run == 0 { referenceTimes.append(ms) } else { candidateTimes.append(ms) }
        }
        values += 1
        for i in 0..<reference.outputCount {
            let a = reference.output(i), b = candidate.output(i)
            var sum = 0.0, most: Float = 0
            let last = histograms[i].count - 1
            for j in 0..<a.count {
                let d = abs(a.pointer[j] - b.pointer[j])
                sum += Double(d)
                most = max(most, d.isNaN ? .infinity : d)
                let bin = d > 1e-6 ? (log10(Double(d)) + 6) * Self.binsPerDecade + 1 : 0
                histograms[i][bin.isFinite ? min(last, Int(bin)) : last] += 1
            }
            sums[i] += sum / Double(max(1, a.count))
            worst[i] = max(worst[i], most)
        }
        if let o = scoresOutput {
            let a = reference.output(o), b = candidate.output(o)
            func best(_ t: TensorBuffer) -> Int { (0..<t.count).max { t.pointer[$0] < t.pointer[$1] } ?? 0 }
            if best(a) == best(b) { sameTop += 1 }
        }
        if let m = maskOutput {
            func threshold(_ t: TensorBuffer) -> [Bool] { (0..<t.count).map { t.pointer[$0] > 0.5 } }
            let mask = threshold(reference.output(m))
            let agreement = MaskAgreement(mask, threshold(candidate.output(m)))
            ious.append(agreement.iou)
            if let previous = previousMask, previous.count == mask.count { changes.append(MaskAgreement(mask, previous).iou) }
            previousMask = mask
            return agreement
        }
        return nil
    }

    /// The comparison so far.
    public var report: Report {
        func median(_ v: [Double]) -> Double { v.isEmpty ? 0 : v.sorted()[v.count / 2] }
        var r = Report()
        r.frames = values
        r.outputs = (0..<reference.outputCount).map { i in
            // The upper edge of the bin where 99 % of the differences are reached.
            let total = histograms[i].reduce(0, +)
            var seen = 0, p99 = 0.0
            for (bin, count) in histograms[i].enumerated() {
                seen += count
                if Double(seen) >= 0.99 * Double(total) {
                    p99 = bin == 0 ? 1e-6 : pow(10, Double(bin) / Self.binsPerDecade - 6)
                    break
                }
            }
            return (reference.outputInfo(i).name, worst[i], sums[i] / Double(max(1, values)), p99)
        }
        r.maskIoU = ious
        r.maskChange = changes
        r.sameTopClass = scoresOutput == nil ? nil : sameTop
        r.referenceMilliseconds = median(referenceTimes)
        r.candidateMilliseconds = median(candidateTimes)
        r.candidateKernels = candidate.kernelChoice
        return r
    }
}
