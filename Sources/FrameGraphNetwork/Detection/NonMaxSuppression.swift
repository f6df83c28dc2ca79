import FrameGraph

/// Non-maximum suppression: of boxes that overlap (intersection over union above a threshold),
/// keep one. Plain keeps the best-scoring box; weighted (MediaPipe's face detection) replaces it
/// by the score-weighted mean of the overlapping boxes and keypoints, which steadies the box.
public struct NonMaxSuppression: Sendable, Equatable {
    public enum Algorithm: String, Sendable, CaseIterable {
        case plain, weighted
    }

    public var algorithm: Algorithm
    /// Boxes overlapping the kept one by more than this IoU are suppressed (merged, when weighted).
    public var overlap: Float
    /// At most this many detections come out (0: no limit), best first.
    public var maxDetections: Int

    public init(algorithm: Algorithm = .weighted, overlap: Float = 0.3, maxDetections: Int = 0) {
        self.algorithm = algorithm
        self.overlap = overlap
        self.maxDetections = maxDetections
    }

    /// Intersection over union of two boxes (0 when either is empty).
    public static func iou(_ a: ResultBox, _ b: ResultBox) -> Float {
        let x0 = max(a.x, b.x), y0 = max(a.y, b.y)
        let x1 = min(a.x + a.width, b.x + b.width), y1 = min(a.y + a.height, b.y + b.height)
        let inter = max(0, x1 - x0) * max(0, y1 - y0)
        let union = a.width * a.height + b.width * b.height - inter
        return union > 0 ? inter / union : 0
    }

    /// The detections left after suppression, best first.
    public func apply(_ detections: [Detection]) -> [Detection] {
        var remaining = detections.sorted { $0.score > $1.score }
        var kept: [Detection] = []
        while let best = remaining.first {
            if maxDetections > 0 && kept.count >= maxDetections { break }
            var cluster = [best], rest: [Detection] = []
            for d in remaining.dropFirst() {
                if Self.iou(best.box, d.box) > overlap { cluster.append(d) } else { rest.append(d) }
            }
            remaining = rest
            kept.append(algorithm == .weighted ? Self.weightedMean(cluster, best: best) : best)
        }
        return kept
    }

    /// The score-weighted mean box and keypoints of `cluster`, with the best detection's score and label.
    static func weightedMean(_ cluster: [Detection], best: Detection) -> Detection {
        guard cluster.count > 1 else { return best }
        var total: Float = 0, x0: Float = 0, y0: Float = 0, x1: Float = 0, y1: Float = 0
        var points = [ResultPoint](repeating: ResultPoint(x: 0, y: 0), count: best.keypoints.count)
        for d in cluster {
            let w = d.score
            total += w
            x0 += d.box.x * w
            y0 += d.box.y * w
            x1 += (d.box.x + d.box.width) * w
            y1 += (d.box.y + d.box.height) * w
            for k in points.indices where k < d.keypoints.count {
                points[k].x += d.keypoints[k].x * w
                points[k].y += d.keypoints[k].y * w
            }
        }
        guard total > 0 else { return best }
        var merged = best
        merged.box = ResultBox(x: x0 / total, y: y0 / total, width: (x1 - x0) / total, height: (y1 - y0) / total)
        merged.keypoints = points.map { ResultPoint(x: $0.x / total, y: $0.y / total) }
        return merged
    }
}
