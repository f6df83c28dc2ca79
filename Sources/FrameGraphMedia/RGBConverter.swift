import FFmpegSupport
import Foundation
import FrameGraph

/// How a frame becomes packed RGB for a program (``FrameTap``, the C library's items).
public enum RGBConversion: String, Sendable, CaseIterable {
    /// libswscale's unscaled SIMD path (nearest chroma, fast rounding): the pixels `ffmpeg -pix_fmt
    /// rgb24` and OpenCV's video reader give, about ten times cheaper than `exact` (docs/PYTHON.md);
    /// planar 4:2:0 is computed by the project's own AVX2 kernel with the same bytes (``FastYUVToRGB``).
    case fast
    /// libswscale's accurate path (full chroma interpolation, accurate rounding): the pixels the
    /// `png` sink writes.
    case exact
}

/// Converts 8-bit frames to packed RGB (`rgb24`) into pooled frames, one scaler context reused for
/// the stream; safe to call from several threads (they take turns). A frame that is `rgb24` already
/// is returned as it is.
///
/// ```swift
/// let converter = RGBConverter(.fast)
/// let rgb = try converter.rgb(frame)      // rgb.format == .rgb24, same size and timing
/// ```
public final class RGBConverter: @unchecked Sendable {
    public let conversion: RGBConversion
    private let lock = NSLock()
    private let scaler: Scaler
    /// `.fast`'s own kernel for planar 4:2:0 (swscale's bytes, checked once per colour setting).
    private let kernel: FastYUVToRGB?
    /// The converted frames' memory, recycled as their holders let them go.
    private let pool = BufferPool(maxFreePerSize: 8)

    /// Memory blocks made for converted frames so far (the rest were recycled): about as many as
    /// converted frames are held at once.
    public var buffersMade: Int { pool.allocations }

    public init(_ conversion: RGBConversion) {
        self.conversion = conversion
        scaler = Scaler(method: .bilinear)
        scaler.matchesCommonDecoders = conversion == .fast
        kernel = conversion == .fast ? FastYUVToRGB() : nil
    }

    /// `frame` as packed RGB of the same size, timing and results: a new pooled frame, or `frame`
    /// itself when it is `rgb24` already. Throws for a format swscale cannot read (float planes).
    public func rgb(_ frame: Frame) throws -> Frame {
        if frame.format == .rgb24 { return frame }
        var rgb = Frame.make(.rgb24, width: frame.width, height: frame.height, pool: pool)
        lock.lock()
        defer { lock.unlock() }
        if kernel?.convert(frame, into: rgb) != true { try scaler.scale(frame, into: rgb) }
        rgb.copyTiming(from: frame)
        return rgb
    }
}
