import CFrameGraphKernels
import FFmpegSupport
import Foundation
import FrameGraph

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
    public func sample(_ region: RotatedRegion, of frame: Frame, into destination: UnsafeMutablePointer<Float>,
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
public final class CommonDecoderRGB {
    public init() {}

    private let scaler: Scaler = {
        let s = Scaler(method: .bicubic)
        s.matchesCommonDecoders = true
        return s
    }()
    private let pool = BufferPool(maxFreePerSize: 4)

    /// `frame` itself when it is rgb24, else a converted copy (a new frame each time, from a pool:
    /// a copy made on one thread may still be read on another).
    public func rgb(of frame: Frame) throws -> Frame {
        guard frame.format != .rgb24 else { return frame }
        var out = Frame.make(.rgb24, width: frame.width, height: frame.height, pool: pool)
        out.copyTiming(from: frame)
        try scaler.scale(frame, into: out)
        return out
    }
}
