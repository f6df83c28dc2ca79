import Foundation
import FrameGraph
import FrameGraphFaces
import FrameGraphNetwork
import NeuralGraph

/// How FrameGraph's nodes use the models it knows, as `framegraph model info` prints it: the input
/// preparation and the decoder settings, read from the same values the nodes use. A model is
/// recognised by its inputs' and outputs' shapes (its content), not by its file name.
enum ModelUse {
    /// Lines describing how a model of this graph's shapes is used, or none for a model FrameGraph
    /// has no settings for.
    static func lines(for graph: NeuralGraph) -> [String] {
        let inputs = graph.inputs.map { graph.tensors[$0].shape }, outputs = graph.outputs.map { graph.tensors[$0].shape }
        let counts = outputs.map { $0.reduce(1, *) }
        func looksLike(_ a: SSDAnchorOptions) -> Bool {
            inputs == [[1, a.inputHeight, a.inputWidth, 3]] && outputs.contains { $0.count == 3 && $0[1] == a.anchors().count && $0[2] == 1 }
        }
        if looksLike(.blazeFaceShortRange) {
            return ["used by detect-faces and face-landmarks (first stage), as MediaPipe's face detection:"] + detector(.blazeFaceShortRange, .blazeFaceShortRange)
        }
        if looksLike(.blazeFaceFullRange) {
            return ["used by detect-faces range=full, as MediaPipe's full-range face detection:"] + detector(.blazeFaceFullRange, .blazeFaceFullRange)
        }
        if inputs == [[1, 192, 192, 3]], counts.contains(FaceMeshTopology.points * 3), counts.contains(1) {
            return ["used by face-landmarks (second stage), as MediaPipe's face mesh:",
                    "  input: a rotated square region, 1.5 × the face (eyes level: from the detection's eye keypoints, or from",
                    "         landmarks 33 → 263 of the previous frame when tracking), sampled bilinearly to 192×192, values x / 255",
                    "  output: 468 × (x, y, z) / 192 in the region, projected back to the frame; face score sigmoid(logit):",
                    "          below min-presence (0.5) the face is dropped and the detector looks again"]
        }
        if let input = inputs.first, inputs.count == 1, input.count == 4, input[3] == 3, outputs == [[1, input[1], input[2], 1]] {
            return ["used by segment (portrait-segment.fg) as a segmentation model: the frame stretched to the model's size, values x / 255;",
                    "  output: the person's probability per pixel, a gray8 mask at model size (smoothing optional)"]
        }
        return []
    }

    private static func detector(_ a: SSDAnchorOptions, _ d: SSDBoxDecoding) -> [String] {
        let s = NonMaxSuppression()
        let format = { (v: Float) in String(format: "%g", v) }
        return [
            "  input: the frame letterboxed to \(a.inputWidth)×\(a.inputHeight) (aspect kept, black outside), values x / 127.5 − 1",
            "  anchors: \(a.anchors().count) (strides \(a.strides.map(String.init).joined(separator: ", ")); scales \(format(a.minScale))…\(format(a.maxScale)); "
                + "aspect ratios \(a.aspectRatios.map(format).joined(separator: ", ")); interpolated \(format(a.interpolatedScaleAspectRatio)); "
                + "offset \(format(a.offsetX)); \(a.fixedAnchorSize ? "fixed size" : "sized"))",
            "  boxes: \(d.coordinates) values per anchor (box \(d.reverseOutputOrder ? "x, y, w, h" : "y, x, h, w") at \(d.boxOffset), "
                + "\(d.keypoints) keypoints at \(d.keypointOffset)) / \(format(d.scaleX)) × anchor size + anchor centre",
            "  scores: \(d.sigmoidScores ? "sigmoid" : "raw"), clipped at ±\(format(d.scoreClipping)), min score \(format(d.minScore)) (min-score)",
            "  suppression: \(s.algorithm.rawValue), IoU above \(format(s.overlap)) merged (overlap, suppression); results mapped back to the frame",
        ]
    }
}
