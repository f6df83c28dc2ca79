import CFrameGraphKernels
import Foundation
import FrameGraph
import FrameGraphNetwork

/// The person mask of MediaPipe's pose solution (`enable_segmentation`): the landmark model's
/// segmentation output (logits over its 256×256 region) through a sigmoid, put back into the frame
/// (the inverse of the region's warp, bilinear, 0 outside the region: MediaPipe's
/// `WarpAffineCalculator` with `BORDER_ZERO`), and blended with the previous mask where the new
/// one is unsure (MediaPipe's `SegmentationSmoothingCalculator`, `combine_with_previous_ratio`
/// 0.7: a pixel near 0.5 leans on the last frame's, a pixel near 0 or 1 is taken as it is).
/// Emitted as a gray8 frame of the frame's size (255 = person).
final class PoseSegmentationMask {
    /// Weight of the previous mask where the new one is most unsure (0: no smoothing).
    let combineWithPrevious: Float
    private var previous: [Float] = []
    private var current: [Float] = []
    private var region: [Float] = []
    private let pool = BufferPool(maxFreePerSize: 4)

    init(combineWithPrevious: Float) {
        self.combineWithPrevious = combineWithPrevious
    }

    /// Forgets the previous mask (the person was lost).
    func reset() { previous = [] }

    /// MediaPipe's uncertainty of a probability: 1 at 0.5, 0 at 0 and 1 (a polynomial of (p − ½)²).
    @inline(__always) static func uncertainty(_ p: Float) -> Float {
        let t = p - 0.5, x = t * t
        let c1: Float = 5.68842, c2: Float = -0.748699, c3: Float = -57.8051, c4: Float = 291.309, c5: Float = -624.717
        return 1 - min(1, x * (c1 + x * (c2 + x * (c3 + x * (c4 + x * c5)))))
    }

    /// The mask of a `width`×`height` frame from `logits` (`side`×`side`, the model's output over
    /// `area`, sampled as ``RegionSampler`` samples it); nil `logits`: no person (all 0).
    func mask(logits: UnsafePointer<Float>?, side: Int, area: RotatedRegion?, width: Int, height: Int) -> Frame {
        let count = width * height
        if current.count != count { current = [Float](repeating: 0, count: count) }
        if let logits, let area, side > 0 {
            if region.count != side * side { region = [Float](repeating: 0, count: side * side) }
            for i in 0..<(side * side) { region[i] = 1 / (1 + exp(-max(-80, min(80, logits[i])))) }
            project(area, side: side, width: width, height: height)
        } else {
            for i in 0..<count { current[i] = 0 }
        }
        if combineWithPrevious > 0, previous.count == count {
            let ratio = combineWithPrevious
            for i in 0..<count {
                let new = current[i]
                current[i] = new + (previous[i] - new) * (Self.uncertainty(new) * ratio)
            }
        }
        swap(&previous, &current)
        let out = Frame.make(.gray8, width: width, height: height, pool: pool)
        previous.withUnsafeBufferPointer { p in
            guard let base = p.baseAddress else { return }
            for y in 0..<height {
                guard let row = out.row(y).baseAddress else { continue }
                fg_probability_bytes(base + y * width, row, Int32(width), 0, 255)
            }
        }
        return out
    }

    /// `region` (the sigmoid of the model's mask) back into `current`: frame pixel (x, y) reads the
    /// region at the model pixel the sampler took it from, bilinear, 0 beyond the region's edges.
    private func project(_ area: RotatedRegion, side: Int, width: Int, height: Int) {
        let c = cos(area.rotation), s = sin(area.rotation), step = area.side / Float(side)
        guard step.isFinite, step > 0 else {
            for i in current.indices { current[i] = 0 }
            return
        }
        let a0 = -0.5 * area.side
        let originX = area.centerX + c * a0 - s * a0, originY = area.centerY + s * a0 + c * a0
        let last = Float(side - 1)
        region.withUnsafeBufferPointer { r in
            current.withUnsafeMutableBufferPointer { out in
                for y in 0..<height {
                    let dy = Float(y) - originY
                    for x in 0..<width {
                        let dx = Float(x) - originX
                        let col = (c * dx + s * dy) / step, row = (-s * dx + c * dy) / step
                        guard col > -1, row > -1, col < last + 1, row < last + 1 else {
                            out[y * width + x] = 0
                            continue
                        }
                        let c0 = Int(col.rounded(.down)), r0 = Int(row.rounded(.down))
                        let fx = col - Float(c0), fy = row - Float(r0)
                        @inline(__always) func at(_ cc: Int, _ rr: Int) -> Float {
                            cc >= 0 && rr >= 0 && cc < side && rr < side ? r[rr * side + cc] : 0
                        }
                        let top = at(c0, r0) * (1 - fx) + at(c0 + 1, r0) * fx
                        let bottom = at(c0, r0 + 1) * (1 - fx) + at(c0 + 1, r0 + 1) * fx
                        out[y * width + x] = top * (1 - fy) + bottom * fy
                    }
                }
            }
        }
    }
}
