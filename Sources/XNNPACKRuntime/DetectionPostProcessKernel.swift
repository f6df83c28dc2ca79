import Foundation
import NeuralGraph

/// TFLite's `TFLite_Detection_PostProcess` computed as LiteRT computes it: centre-size codes decoded
/// against the anchors in double precision and stored as float corners; scores at or above the
/// threshold kept, stably sorted by decreasing score, and greedily suppressed when their IoU with a
/// kept box is above the threshold; regular suppression per class then the best across classes,
/// fast suppression on each anchor's best class. Ties between equal scores go to the lower index
/// (LiteRT's partial sorts leave their order to the C++ library). Rows past the detections found
/// are zero.
struct DetectionPostProcessKernel {
    let parameters: DetectionPostProcessParameters
    /// Anchors (rows of the inputs).
    let count: Int
    /// Values per box encoding (4, or more for keypoint coders: the first four are the box).
    let codeLength: Int
    /// The scores' last dimension: classes, plus one when a background column comes first.
    let columns: Int

    /// The outputs of one run.
    struct Outputs {
        let boxes: UnsafeMutablePointer<Float>, classes: UnsafeMutablePointer<Float>
        let scores: UnsafeMutablePointer<Float>, count: UnsafeMutablePointer<Float>
    }

    private var labelOffset: Int { columns - parameters.classes }

    /// Corners (ymin, xmin, ymax, xmax) of every anchor's box.
    func decode(codes: UnsafePointer<Float>, anchors: UnsafePointer<Float>) -> [Float] {
        var corners = [Float](repeating: 0, count: count * 4)
        let p = parameters
        for i in 0..<count {
            let c = codes + i * codeLength, a = anchors + i * 4
            let (ay, ax, ah, aw) = (Double(a[0]), Double(a[1]), Double(a[2]), Double(a[3]))
            let yCentre = Float(Double(c[0]) / Double(p.yScale) * ah + ay)
            let xCentre = Float(Double(c[1]) / Double(p.xScale) * aw + ax)
            let halfH = Float(0.5 * Foundation.exp(Double(c[2]) / Double(p.hScale)) * ah)
            let halfW = Float(0.5 * Foundation.exp(Double(c[3]) / Double(p.wScale)) * aw)
            corners[4 * i] = yCentre - halfH
            corners[4 * i + 1] = xCentre - halfW
            corners[4 * i + 2] = yCentre + halfH
            corners[4 * i + 3] = xCentre + halfW
        }
        return corners
    }

    /// Intersection over union of boxes `i` and `j` (0 when either has no area).
    static func iou(_ b: [Float], _ i: Int, _ j: Int) -> Float {
        let areaI = (b[4 * i + 2] - b[4 * i]) * (b[4 * i + 3] - b[4 * i + 1])
        let areaJ = (b[4 * j + 2] - b[4 * j]) * (b[4 * j + 3] - b[4 * j + 1])
        if areaI <= 0 || areaJ <= 0 { return 0 }
        let ymin = max(b[4 * i], b[4 * j]), xmin = max(b[4 * i + 1], b[4 * j + 1])
        let ymax = min(b[4 * i + 2], b[4 * j + 2]), xmax = min(b[4 * i + 3], b[4 * j + 3])
        let intersection = max(ymax - ymin, 0) * max(xmax - xmin, 0)
        return intersection / (areaI + areaJ - intersection)
    }

    /// Indices of the boxes one-class suppression keeps, best first, at most `limit`.
    func suppress(scores: [Float], boxes: [Float], limit: Int) -> [Int] {
        var kept: [Int] = []
        for i in scores.indices where scores[i] >= parameters.scoreThreshold { kept.append(i) }
        let order = Self.decreasing(kept.map { scores[$0] })
        let candidates = order.map { kept[$0] }
        var active = [Bool](repeating: true, count: candidates.count)
        var selected: [Int] = []
        for i in candidates.indices where active[i] {
            if selected.count >= limit { break }
            selected.append(candidates[i])
            for j in (i + 1)..<candidates.count where active[j] {
                if Self.iou(boxes, candidates[i], candidates[j]) > parameters.iouThreshold { active[j] = false }
            }
        }
        return selected
    }

    /// Positions of `values` by decreasing value, equal values in their order (NaN last).
    static func decreasing(_ values: [Float]) -> [Int] {
        let keys = values.map { $0.isNaN ? -Float.infinity : $0 }
        return keys.indices.sorted { keys[$0] > keys[$1] || (keys[$0] == keys[$1] && $0 < $1) }
    }

    /// Runs on the inputs (real numbers) and writes the four outputs.
    func run(codes: UnsafePointer<Float>, scores: UnsafePointer<Float>, anchors: UnsafePointer<Float>, into out: Outputs) {
        let rows = parameters.outputRows
        out.boxes.update(repeating: 0, count: rows * 4)
        out.classes.update(repeating: 0, count: rows)
        out.scores.update(repeating: 0, count: rows)
        let boxes = decode(codes: codes, anchors: anchors)
        var found = 0
        if parameters.useRegularNMS {
            // Per class, then the best max_detections across classes: (score, anchor, class).
            var best: [(score: Float, anchor: Int, label: Int)] = []
            for label in 0..<parameters.classes {
                let column = (0..<count).map { scores[$0 * columns + label + labelOffset] }
                let selected = suppress(scores: column, boxes: boxes, limit: parameters.detectionsPerClass)
                let merged = best + selected.map { (column[$0], $0, label) }
                let order = Self.decreasing(merged.map(\.score))
                best = order.prefix(parameters.maxDetections).map { merged[$0] }
            }
            for (row, d) in best.enumerated() {
                for k in 0..<4 { out.boxes[4 * row + k] = boxes[4 * d.anchor + k] }
                out.classes[row] = Float(d.label)
                out.scores[row] = d.score
            }
            found = best.count
        } else {
            let perAnchor = min(parameters.maxClassesPerDetection, parameters.classes)
            var topClasses = [[Int]](repeating: [], count: count)
            var maxScores = [Float](repeating: 0, count: count)
            for a in 0..<count {
                let row = (0..<parameters.classes).map { scores[a * columns + $0 + labelOffset] }
                topClasses[a] = Array(Self.decreasing(row).prefix(perAnchor))
                maxScores[a] = row[topClasses[a][0]]
            }
            let selected = suppress(scores: maxScores, boxes: boxes, limit: parameters.maxDetections)
            for (n, a) in selected.enumerated() {
                for (k, label) in topClasses[a].enumerated() {
                    let row = parameters.maxClassesPerDetection * n + k
                    for c in 0..<4 { out.boxes[4 * row + c] = boxes[4 * a + c] }
                    out.classes[row] = Float(label)
                    out.scores[row] = scores[a * columns + label + labelOffset]
                }
            }
            found = selected.count
        }
        out.count[0] = Float(found)
    }
}
