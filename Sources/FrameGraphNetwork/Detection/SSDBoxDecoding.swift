import Foundation
import FrameGraph

/// How a single-shot detector's raw outputs become boxes, as MediaPipe's
/// `TensorsToDetectionsCalculator`: per anchor, `coordinates` regressor values (a box, then
/// keypoints) scaled by `scale` and the anchor's size, offset by its centre; one score per anchor
/// (one class), through a sigmoid after clipping.
public struct SSDBoxDecoding: Sendable, Equatable {
    /// Regressor values per anchor (BlazeFace: 16 = box 4 + 6 keypoints × 2).
    public var coordinates: Int
    /// Where the box starts among them.
    public var boxOffset = 0
    /// Where the keypoints start.
    public var keypointOffset = 4
    public var keypoints: Int
    public var valuesPerKeypoint = 2
    /// Divisors of the raw values (the input size for BlazeFace).
    public var scaleX: Float, scaleY: Float, scaleWidth: Float, scaleHeight: Float
    /// Whether the box is stored x, y, w, h (true, BlazeFace) rather than y, x, h, w.
    public var reverseOutputOrder = true
    /// Raw scores are clipped to ±this before the sigmoid (0: no clipping).
    public var scoreClipping: Float = 100
    public var sigmoidScores = true
    /// Boxes scoring below this are dropped before suppression.
    public var minScore: Float

    public init(coordinates: Int, keypoints: Int, scale: Float, minScore: Float) {
        self.coordinates = coordinates
        self.keypoints = keypoints
        scaleX = scale
        scaleY = scale
        scaleWidth = scale
        scaleHeight = scale
        self.minScore = minScore
    }

    public static let blazeFaceShortRange = SSDBoxDecoding(coordinates: 16, keypoints: 6, scale: 128, minScore: 0.5)
    public static let blazeFaceFullRange = SSDBoxDecoding(coordinates: 16, keypoints: 6, scale: 192, minScore: 0.6)

    /// The detections among `anchors` scoring at least ``minScore``, in normalised input coordinates.
    /// `boxes` holds anchors.count × coordinates values, `scores` anchors.count values.
    public func decode(boxes: UnsafePointer<Float>, scores: UnsafePointer<Float>, anchors: [SSDAnchor], label: String?) -> [Detection] {
        var out: [Detection] = []
        for (i, a) in anchors.enumerated() {
            var raw = scores[i]
            if scoreClipping > 0 { raw = max(-scoreClipping, min(scoreClipping, raw)) }
            let score = sigmoidScores ? 1 / (1 + exp(-raw)) : raw
            guard score >= minScore else { continue }
            let r = boxes + i * coordinates + boxOffset
            let (rx, ry, rw, rh) = reverseOutputOrder ? (r[0], r[1], r[2], r[3]) : (r[1], r[0], r[3], r[2])
            let cx = rx / scaleX * a.width + a.x, cy = ry / scaleY * a.height + a.y
            let w = rw / scaleWidth * a.width, h = rh / scaleHeight * a.height
            var points: [ResultPoint] = []
            points.reserveCapacity(keypoints)
            for k in 0..<keypoints {
                let p = boxes + i * coordinates + keypointOffset + k * valuesPerKeypoint
                let (px, py) = reverseOutputOrder ? (p[0], p[1]) : (p[1], p[0])
                points.append(ResultPoint(x: px / scaleX * a.width + a.x, y: py / scaleY * a.height + a.y))
            }
            out.append(Detection(box: ResultBox(x: cx - w / 2, y: cy - h / 2, width: w, height: h), score: score, label: label, index: 0,
                                 keypoints: points))
        }
        return out
    }
}
