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

/// Samples a rotated region of a frame into a model's RGB input, bilinearly, in one pass: each of
/// the `size`×`size` output pixels is the frame's colour at the matching point of the region
/// (edges replicated outside the frame), normalised as `value × scale + offset`.
public struct RegionSampler {
    public let size: Int
    public let scale: Float
    public let offset: Float
    /// Outside the frame: black (MediaPipe's zero border, for letterboxing) or the nearest edge pixel.
    public let blackOutside: Bool

    public init(size: Int, scale: Float, offset: Float, blackOutside: Bool = false) {
        self.size = size
        self.scale = scale
        self.offset = offset
        self.blackOutside = blackOutside
    }

    /// Fills `size × size × 3` floats at `destination` (NHWC) from `frame` (yuv420p or rgb24).
    /// Returns false for other formats.
    public func sample(_ region: FaceRegion, of frame: Frame, into destination: UnsafeMutablePointer<Float>) -> Bool {
        guard frame.format == .yuv420p || frame.format == .rgb24 else { return false }
        let w = frame.width, h = frame.height
        let coefficients = YUVToRGB(frame.color.resolved(height: h))
        let c = cos(region.rotation), s = sin(region.rotation), step = region.side / Float(size)
        // The frame point of output pixel (0, 0), and the steps along a row and down a column. As
        // MediaPipe's ImageToTensor (OpenCV's warp from the region's corners to the output's), output
        // pixel j samples the frame at the region's corner + j steps, in pixel-index coordinates.
        let a0 = -0.5 * region.side
        let originX = region.centerX + c * a0 - s * a0, originY = region.centerY + s * a0 + c * a0
        if frame.format == .rgb24 {
            withExtendedLifetime(frame) {
                fg_sample_grid_rgb24(frame.base(plane: 0).assumingMemoryBound(to: UInt8.self), frame.planes[0].stride, Int32(w), Int32(h),
                                     originX, originY, c * step, s * step, -s * step, c * step, Int32(size), scale, offset,
                                     blackOutside ? 1 : 0, destination)
            }
            return true
        }
        withExtendedLifetime(frame) {
            let y0 = frame.base(plane: 0).assumingMemoryBound(to: UInt8.self), ys = frame.planes[0].stride
            let u0 = frame.format == .yuv420p ? frame.base(plane: 1).assumingMemoryBound(to: UInt8.self) : y0
            let v0 = frame.format == .yuv420p ? frame.base(plane: 2).assumingMemoryBound(to: UInt8.self) : y0
            let cs = frame.format == .yuv420p ? frame.planes[1].stride : 0
            for row in 0..<size {
                var fx = originX - s * step * Float(row), fy = originY + c * step * Float(row)
                let out = destination + row * size * 3
                for col in 0..<size {
                    // (fx, fy) is in pixel-index coordinates here: pixel i's centre is at i.
                    if blackOutside && (fx < -0.5 || fy < -0.5 || fx >= Float(w) - 0.5 || fy >= Float(h) - 0.5) {
                        out[3 * col] = offset
                        out[3 * col + 1] = offset
                        out[3 * col + 2] = offset
                        fx += c * step
                        fy += s * step
                        continue
                    }
                    let px = max(0, min(Float(w - 1), fx)), py = max(0, min(Float(h - 1), fy))
                    let ix = Int(px), iy = Int(py)
                    let tx = px - Float(ix), ty = py - Float(iy)
                    let jx = min(ix + 1, w - 1), jy = min(iy + 1, h - 1)
                    var r: Float, g: Float, b: Float
                    if frame.format == .rgb24 {
                        func at(_ x: Int, _ y: Int, _ k: Int) -> Float { Float(y0[y * ys + 3 * x + k]) }
                        func lerp(_ k: Int) -> Float {
                            let top = at(ix, iy, k) + (at(jx, iy, k) - at(ix, iy, k)) * tx
                            let bottom = at(ix, jy, k) + (at(jx, jy, k) - at(ix, jy, k)) * tx
                            return top + (bottom - top) * ty
                        }
                        (r, g, b) = (lerp(0), lerp(1), lerp(2))
                    } else {
                        // As a decoder's own conversion to RGB does it (FFmpeg's, which MediaPipe's
                        // callers use): each of the four neighbours converted with the chroma of its
                        // 2×2 block, rounded to 8 bits, then blended.
                        func pixel(_ x: Int, _ y: Int) -> (Float, Float, Float) {
                            let k = (y >> 1) * cs + (x >> 1)
                            let (r, g, b) = coefficients.rgb(Float(y0[y * ys + x]), Float(u0[k]), Float(v0[k]))
                            return (r.rounded(), g.rounded(), b.rounded())
                        }
                        let p00 = pixel(ix, iy), p10 = pixel(jx, iy), p01 = pixel(ix, jy), p11 = pixel(jx, jy)
                        func blend(_ a: Float, _ b: Float, _ c: Float, _ d: Float) -> Float {
                            let top = a + (b - a) * tx, bottom = c + (d - c) * tx
                            return top + (bottom - top) * ty
                        }
                        (r, g, b) = (blend(p00.0, p10.0, p01.0, p11.0), blend(p00.1, p10.1, p01.1, p11.1), blend(p00.2, p10.2, p01.2, p11.2))
                    }
                    out[3 * col] = r * scale + offset
                    out[3 * col + 1] = g * scale + offset
                    out[3 * col + 2] = b * scale + offset
                    fx += c * step
                    fy += s * step
                }
            }
        }
        return true
    }
}

/// Y'CbCr → R'G'B' for one colour description (BT.601 or BT.709, limited or full range), 0…255.
struct YUVToRGB {
    let yScale: Float, yOffset: Float, rv: Float, gu: Float, gv: Float, bu: Float

    init(_ color: ColorDescription) {
        let (kr, kb): (Float, Float) = color.matrix == ColorDescription.bt709Code ? (0.2126, 0.0722) : (0.299, 0.114)
        let kg = 1 - kr - kb
        let full = color.range == .full
        yScale = full ? 1 : 255 / 219
        yOffset = full ? 0 : 16
        let c: Float = full ? 1 : 255 / 224
        rv = 2 * (1 - kr) * c
        bu = 2 * (1 - kb) * c
        gu = -2 * (1 - kb) * kb / kg * c
        gv = -2 * (1 - kr) * kr / kg * c
    }

    @inline(__always)
    func rgb(_ y: Float, _ u: Float, _ v: Float) -> (Float, Float, Float) {
        let l = (y - yOffset) * yScale, cb = u - 128, cr = v - 128
        func clamp(_ x: Float) -> Float { max(0, min(255, x)) }
        return (clamp(l + rv * cr), clamp(l + gu * cb + gv * cr), clamp(l + bu * cb))
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
