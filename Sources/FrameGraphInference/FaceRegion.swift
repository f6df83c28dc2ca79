import CFrameGraphKernels
import FFmpegSupport
import Foundation
import FrameGraph

/// A rotated square region of a frame, in pixels: where the face-landmark model looks. Made as
/// MediaPipe makes its face regions: from a detection (the box, turned so the eyes are level: the
/// line from keypoint 0, the right eye, to keypoint 1, the left eye) or from the previous frame's
/// landmarks (their bounding box, turned by the line from point 33 to point 263, the outer eye
/// corners); then squared on its longer side and enlarged 1.5 times.
public struct FaceRegion: Sendable, Equatable {
    /// Centre, in pixels.
    public var centerX: Float
    public var centerY: Float
    /// Side of the square, in pixels.
    public var side: Float
    /// Angle in radians of the region's x axis from the frame's (y pointing down): 0 when the
    /// eyes are level.
    public var rotation: Float

    public init(centerX: Float, centerY: Float, side: Float, rotation: Float) {
        self.centerX = centerX
        self.centerY = centerY
        self.side = side
        self.rotation = rotation
    }

    /// How much larger than the face the region is (MediaPipe's 1.5).
    public static let enlargement: Float = 1.5

    /// The region of a detection (normalised box and keypoints) in a `width`×`height` frame.
    public init?(detection d: Detection, width: Int, height: Int, enlargement: Float = FaceRegion.enlargement) {
        guard d.keypoints.count >= 2 else { return nil }
        let w = Float(width), h = Float(height)
        let a = d.keypoints[0], b = d.keypoints[1]
        self.init(boxX: d.box.x * w, boxY: d.box.y * h, boxWidth: d.box.width * w, boxHeight: d.box.height * h,
                  from: (a.x * w, a.y * h), to: (b.x * w, b.y * h), enlargement: enlargement)
    }

    /// The region around `points` (normalised; at least 264 of them: the face mesh's 468), turned
    /// by the line from point 33 to point 263.
    public init?(landmarks points: [Landmark], width: Int, height: Int, enlargement: Float = FaceRegion.enlargement) {
        guard points.count > 263 else { return nil }
        let w = Float(width), h = Float(height)
        var x0 = Float.infinity, y0 = Float.infinity, x1 = -Float.infinity, y1 = -Float.infinity
        for p in points {
            x0 = min(x0, p.x); x1 = max(x1, p.x); y0 = min(y0, p.y); y1 = max(y1, p.y)
        }
        guard x0.isFinite, y0.isFinite, x1.isFinite, y1.isFinite else { return nil }
        self.init(boxX: x0 * w, boxY: y0 * h, boxWidth: (x1 - x0) * w, boxHeight: (y1 - y0) * h,
                  from: (points[33].x * w, points[33].y * h), to: (points[263].x * w, points[263].y * h), enlargement: enlargement)
    }

    private init?(boxX: Float, boxY: Float, boxWidth: Float, boxHeight: Float, from a: (Float, Float), to b: (Float, Float), enlargement: Float) {
        let side = max(boxWidth, boxHeight) * enlargement
        guard side.isFinite, side > 0, boxX.isFinite, boxY.isFinite else { return nil }
        let angle = atan2(b.1 - a.1, b.0 - a.0)
        self.init(centerX: boxX + boxWidth / 2, centerY: boxY + boxHeight / 2, side: side, rotation: angle.isFinite ? angle : 0)
    }

    /// The frame point (pixels) at (`u`, `v`) of the region, each from 0 to 1 across it.
    @inline(__always)
    public func framePoint(u: Float, v: Float) -> (x: Float, y: Float) {
        let a = (u - 0.5) * side, b = (v - 0.5) * side
        let c = cos(rotation), s = sin(rotation)
        return (centerX + c * a - s * b, centerY + s * a + c * b)
    }

    /// Landmarks found in the region (normalised to it; z in the region's width units) in the
    /// frame's normalised coordinates (z in frame-width units).
    public func project(_ points: [Landmark], width: Int, height: Int) -> [Landmark] {
        let w = Float(width), h = Float(height)
        let c = cos(rotation), s = sin(rotation)
        return points.map { p in
            let a = (p.x - 0.5) * side, b = (p.y - 0.5) * side
            return Landmark(x: (centerX + c * a - s * b) / w, y: (centerY + s * a + c * b) / h, z: p.z.map { $0 * side / w }, visibility: p.visibility)
        }
    }

    /// Intersection over union of the two regions' axis-aligned bounds (for telling faces apart).
    public func overlap(with other: FaceRegion) -> Float {
        func bounds(_ r: FaceRegion) -> ResultBox {
            let half = r.side / 2 * (abs(cos(r.rotation)) + abs(sin(r.rotation)))
            return ResultBox(x: r.centerX - half, y: r.centerY - half, width: 2 * half, height: 2 * half)
        }
        return NonMaxSuppression.iou(bounds(self), bounds(other))
    }
}

/// Samples a rotated region of an rgb24 frame into a model's RGB input in one pass, exactly as
/// MediaPipe's ImageToTensor does it (OpenCV's warp, bilinear on 8-bit pixels: the C kernel
/// `fg_sample_grid_rgb24`): each of the `size`×`size` output pixels is the frame's colour at the
/// matching point of the region, normalised as `value × scale + offset`. Outside the frame: black
/// (`blackOutside`, a letterbox) or the nearest edge pixel. Other formats are first converted with
/// ``CommonDecoderRGB``, as MediaPipe's callers convert video.
public struct RegionSampler {
    public let size: Int
    public let scale: Float
    public let offset: Float
    public let blackOutside: Bool

    public init(size: Int, scale: Float, offset: Float, blackOutside: Bool = false) {
        self.size = size
        self.scale = scale
        self.offset = offset
        self.blackOutside = blackOutside
    }

    /// Fills `size × size × 3` floats at `destination` (NHWC) from `frame`. Returns false unless
    /// the frame is rgb24. `vectorized: false` forces the scalar build of the kernel (the AVX2 one
    /// must match it bit for bit).
    public func sample(_ region: FaceRegion, of frame: Frame, into destination: UnsafeMutablePointer<Float>,
                       vectorized: Bool = true) -> Bool {
        guard frame.format == .rgb24 else { return false }
        let c = cos(region.rotation), s = sin(region.rotation), step = region.side / Float(size)
        // Output pixel (col, row) reads the frame at the region's corner + col, row steps along the
        // region's axes, in pixel-index coordinates (OpenCV's warp from corner to corner).
        let a0 = -0.5 * region.side
        let originX = region.centerX + c * a0 - s * a0, originY = region.centerY + s * a0 + c * a0
        withExtendedLifetime(frame) {
            fg_sample_grid_rgb24_with(frame.base(plane: 0).assumingMemoryBound(to: UInt8.self), frame.planes[0].stride,
                                      Int32(frame.width), Int32(frame.height), originX, originY, c * step, s * step, -s * step, c * step,
                                      Int32(size), scale, offset, blackOutside ? 1 : 0, vectorized ? 1 : 0, destination)
        }
        return true
    }
}

/// A frame as RGB the way the ffmpeg tool and OpenCV's video reader convert it (swscale, bicubic,
/// its default fast colour path), so that models tuned on such pictures (MediaPipe's) see the same
/// pixels. Reuses one scaler and one frame.
final class CommonDecoderRGB {
    private let scaler: Scaler = {
        let s = Scaler(method: .bicubic)
        s.matchesCommonDecoders = true
        return s
    }()
    private let pool = BufferPool(maxFreePerSize: 4)

    /// `frame` itself when it is rgb24, else a converted copy (a new frame each time, from a pool:
    /// a copy made on one thread may still be read on another).
    func rgb(of frame: Frame) throws -> Frame {
        guard frame.format != .rgb24 else { return frame }
        var out = Frame.make(.rgb24, width: frame.width, height: frame.height, pool: pool)
        out.copyTiming(from: frame)
        try scaler.scale(frame, into: out)
        return out
    }
}
