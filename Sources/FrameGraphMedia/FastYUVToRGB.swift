import CFrameGraphKernels
import FFmpegSupport
import FrameGraph

/// Planar 4:2:0 frames to packed RGB with swscale's fast (unscaled) arithmetic, computed by the
/// project's own AVX2 kernel (`fg_yuv420_to_rgb24_fixed`, about twice as fast as swscale's SSSE3
/// loop on 640×480; tools/bench/python_vs_cli.py measures what it saves per frame).
///
/// It is used only where it gives swscale's bytes exactly: for each colour setting (matrix and
/// range) it converts a calibration picture both ways once and keeps the coefficients only if every
/// byte agrees; a frame it does not serve (another format, a width not a multiple of 16 or an odd
/// height, where swscale takes other paths) is left to swscale by the caller.
final class FastYUVToRGB {
    /// The coefficients per colour setting, or nil where the calibration disagreed.
    private var verified: [ColorDescription: fg_yuv_fixed?] = [:]

    /// Converts `frame` into `rgb` (rgb24, same size) and returns true, or returns false when this
    /// frame is not one it serves.
    func convert(_ frame: Frame, into rgb: Frame) -> Bool {
        guard frame.format == .yuv420p, frame.width % 16 == 0, frame.height % 2 == 0, frame.width > 0, frame.height > 0,
              rgb.format == .rgb24, rgb.width == frame.width, rgb.height == frame.height else { return false }
        guard var c = coefficients(for: frame.color.resolved(height: frame.height)) else { return false }
        Self.run(frame, into: rgb, &c, simd: Int32(FG_SIMD_BEST))
        return true
    }

    /// Whether frames of this colour setting are converted by the kernel (after calibrating once).
    func serves(_ color: ColorDescription) -> Bool {
        coefficients(for: color) != nil
    }

    /// The verified coefficients for `color`, calibrated at its first frame; nil where swscale's
    /// bytes differ.
    private func coefficients(for color: ColorDescription) -> fg_yuv_fixed? {
        if let known = verified[color] { return known }
        let made = Self.calibrate(color)
        verified[color] = .some(made)
        return made
    }

    static func run(_ frame: Frame, into rgb: Frame, _ c: inout fg_yuv_fixed, simd: Int32) {
        fg_yuv420_to_rgb24_fixed(frame.base(plane: 0).assumingMemoryBound(to: UInt8.self), frame.planes[0].stride,
                                 frame.base(plane: 1).assumingMemoryBound(to: UInt8.self), frame.planes[1].stride,
                                 frame.base(plane: 2).assumingMemoryBound(to: UInt8.self), frame.planes[2].stride,
                                 rgb.base(plane: 0).assumingMemoryBound(to: UInt8.self), rgb.planes[0].stride,
                                 Int32(frame.width), Int32(frame.height), &c, simd)
    }

    /// swscale's coefficients for `color` if the kernel, scalar and SIMD, gives swscale's bytes on
    /// a 256×16 picture that sweeps every Y' level and a spread of Cb/Cr pairs (extremes included).
    static func calibrate(_ color: ColorDescription) -> fg_yuv_fixed? {
        let width = 256, height = 16
        var source = Frame.make(.yuv420p, width: width, height: height)
        source.color = color
        for y in 0..<height {
            let row = source.row(y, plane: 0)
            for x in 0..<width { row[x] = UInt8(truncatingIfNeeded: x &+ 37 &* y) }
        }
        for y in 0..<height / 2 {
            let u = source.row(y, plane: 1), v = source.row(y, plane: 2)
            for x in 0..<width / 2 {
                u[x] = UInt8(truncatingIfNeeded: x &* 2 &+ 59 &* y)
                v[x] = UInt8(truncatingIfNeeded: 255 &- x &* 2 &+ 83 &* y)
            }
        }
        let scaler = Scaler(method: .bilinear)
        scaler.matchesCommonDecoders = true
        let reference = Frame.make(.rgb24, width: width, height: height)
        guard (try? scaler.scale(source, into: reference)) != nil, let f = scaler.fixedPointCoefficients() else { return nil }
        var c = fg_yuv_fixed(y_offset: f.yOffset, y_scale: f.yScale, uv_offset: f.uvOffset, v_to_r: f.vToR,
                             u_to_g: f.uToG, v_to_g: f.vToG, u_to_b: f.uToB)
        for simd in [Int32(FG_SIMD_SCALAR), Int32(FG_SIMD_BEST)] {
            let ours = Frame.make(.rgb24, width: width, height: height)
            run(source, into: ours, &c, simd: simd)
            for y in 0..<height where !ours.row(y).elementsEqual(reference.row(y)) { return nil }
        }
        return c
    }
}
