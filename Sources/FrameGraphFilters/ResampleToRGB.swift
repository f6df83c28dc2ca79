import CFrameGraphKernels
import FrameGraph

/// Shrinks (or enlarges) a yuv420p or rgb24 frame straight into an rgb24 frame of another size with
/// an area filter (the mean of the source pixels under each output pixel, partial ones weighted),
/// converting Y'CbCr with the frame's own matrix and range: the C kernels `fg_area_resize` and
/// `fg_yuv_float_to_rgb24`. This is a network's input preparation at full HD: no full-resolution
/// RGB picture is made, and the chroma planes are read at their own size.
///
/// ```swift
/// var resample = ResampleToRGB()
/// if !resample.convert(frame, into: rgb256) { try scaler.scale(frame, into: rgb256) }  // other formats
/// ```
public struct ResampleToRGB {
    /// Taps of one axis for one source → output size (`fg_area_taps`), and for the horizontal axis
    /// the plan that runs its pass on this core (`fg_area_plan_make`; none without AVX-512F), made
    /// once per size.
    final class Taps {
        let start: [Int32], count: [Int32], weight: [Float], maxTaps: Int32
        /// 64-byte aligned, `planBytes` long; nil where no plan serves.
        let plan: UnsafeMutableRawPointer?
        let planBytes: Int

        init(outputs n: Int, source: Int, horizontal: Bool) {
            let most = Int((Double(source) / Double(n)).rounded(.up)) + 2
            var start = [Int32](repeating: 0, count: n), count = start, weight = [Float](repeating: 0, count: n * most)
            _ = fg_area_taps(&start, &count, &weight, Int32(most), Int32(n), Int32(source))  // `most` is always enough
            let bytes = horizontal ? fg_area_plan_bytes(Int32(n), start, count) : 0
            let plan = bytes > 0 ? UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64) : nil
            if let plan { fg_area_plan_make(Int32(n), start, count, weight, Int32(most), plan) }
            (self.start, self.count, self.weight, maxTaps, self.plan, planBytes) = (start, count, weight, Int32(most), plan, bytes)
        }

        deinit { plan?.deallocate() }
    }

    private var key: [Int] = []
    private var luma: (x: Taps, y: Taps)?
    private var chroma: (x: Taps, y: Taps)?
    private var y: [Float] = [], u: [Float] = [], v: [Float] = [], rgb: [Float] = [], acc: [Float] = []

    public init() {}

    /// Converts `frame` into `destination` (rgb24). Returns false, touching nothing, for formats it
    /// does not handle (the caller falls back to swscale).
    public mutating func convert(_ frame: Frame, into destination: Frame) -> Bool {
        guard destination.format == .rgb24, frame.format == .yuv420p || frame.format == .rgb24 else { return false }
        let sw = frame.width, sh = frame.height, dw = destination.width, dh = destination.height
        prepare(sw: sw, sh: sh, dw: dw, dh: dh, format: frame.format)
        guard let luma else { return false }
        defer { withExtendedLifetime((frame, destination)) {} }  // the planes below point into them
        let ds = destination.planes[0].stride
        let out = destination.base(plane: 0).assumingMemoryBound(to: UInt8.self)
        if frame.format == .rgb24 {
            Self.area(frame, plane: 0, width: sw, height: sh, channels: 3, taps: luma, into: &rgb, acc: &acc, dw: dw, dh: dh)
            rgb.withUnsafeBufferPointer { p in
                for row in 0..<dh { fg_float_to_bytes(p.baseAddress! + row * dw * 3, out + row * ds, Int32(dw * 3)) }
            }
            return true
        }
        guard let chroma else { return false }
        let cw = (sw + 1) / 2, ch = (sh + 1) / 2
        Self.area(frame, plane: 0, width: sw, height: sh, channels: 1, taps: luma, into: &y, acc: &acc, dw: dw, dh: dh)
        Self.area(frame, plane: 1, width: cw, height: ch, channels: 1, taps: chroma, into: &u, acc: &acc, dw: dw, dh: dh)
        Self.area(frame, plane: 2, width: cw, height: ch, channels: 1, taps: chroma, into: &v, acc: &acc, dw: dw, dh: dh)
        var c = Self.coefficients(frame.color.resolved(height: sh))
        y.withUnsafeBufferPointer { yp in u.withUnsafeBufferPointer { up in v.withUnsafeBufferPointer { vp in
            for row in 0..<dh {
                let o = row * dw
                fg_yuv_float_to_rgb24(yp.baseAddress! + o, up.baseAddress! + o, vp.baseAddress! + o, out + row * ds, Int32(dw), &c)
            }
        } } }
        return true
    }

    private static func area(_ frame: Frame, plane: Int, width: Int, height: Int, channels: Int, taps: (x: Taps, y: Taps),
                             into dst: inout [Float], acc: inout [Float], dw: Int, dh: Int) {
        let src = UnsafePointer(frame.base(plane: plane).assumingMemoryBound(to: UInt8.self))
        let stride = frame.planes[plane].stride
        dst.withUnsafeMutableBufferPointer { d in acc.withUnsafeMutableBufferPointer { a in
            fg_area_resize(src, stride, Int32(width), Int32(height), Int32(channels), d.baseAddress!, Int32(dw), Int32(dh),
                           taps.x.start, taps.x.count, taps.x.weight, taps.x.maxTaps, taps.x.plan, taps.x.planBytes,
                           taps.y.start, taps.y.count, taps.y.weight, taps.y.maxTaps, a.baseAddress!)
        } }
    }

    private mutating func prepare(sw: Int, sh: Int, dw: Int, dh: Int, format: PixelFormat) {
        let k = [sw, sh, dw, dh, format == .rgb24 ? 3 : 1]
        guard k != key else { return }
        luma = (Taps(outputs: dw, source: sw, horizontal: true), Taps(outputs: dh, source: sh, horizontal: false))
        chroma = format == .yuv420p
            ? (Taps(outputs: dw, source: (sw + 1) / 2, horizontal: true), Taps(outputs: dh, source: (sh + 1) / 2, horizontal: false)) : nil
        let n = dw * dh
        y = [Float](repeating: 0, count: n)
        u = y
        v = y
        rgb = [Float](repeating: 0, count: format == .rgb24 ? n * 3 : 0)
        acc = [Float](repeating: 0, count: sw * 3)
        key = k
    }

    /// Y'CbCr → R'G'B' for a colour description: Kr/Kb of its matrix, its range.
    static func coefficients(_ color: ColorDescription) -> fg_yuv_to_rgb {
        let (kr, kb) = color.lumaCoefficients
        let kg = 1 - kr - kb
        let full = color.range == .full
        let ys: Float = full ? 1 : 255.0 / 219.0, cs: Float = full ? 1 : 255.0 / 224.0
        return fg_yuv_to_rgb(yo: full ? 0 : 16, ys: ys, rv: 2 * (1 - kr) * cs, gu: 2 * (1 - kb) * kb / kg * cs,
                             gv: 2 * (1 - kr) * kr / kg * cs, bu: 2 * (1 - kb) * cs)
    }
}
