import FrameGraph

/// Draws into a frame the caller owns (a fresh copy, never a frame another node may still read):
/// rectangles, thick lines, discs and text, clipped to the frame, blended with an alpha.
///
/// Works on every 8-bit format: rgb24, rgba, bgra, gray8, yuv420p and nv12. On 4:2:0 frames the
/// colour (chroma) of a pixel is written by the top-left pixel of each 2×2 block, so primitives at
/// least 2 pixels wide keep their colour; luma is exact everywhere.
public struct Canvas {
    public let frame: Frame
    public let width: Int
    public let height: Int
    private let layout: Layout

    private enum Layout {
        case packed(bytes: Int, r: Int, g: Int, b: Int)
        case gray
        case planar420(interleaved: Bool)
    }

    /// Whether frames of `format` can be drawn on.
    public static func supports(_ format: PixelFormat) -> Bool {
        switch format {
        case .rgb24, .rgba, .bgra, .gray8, .yuv420p, .nv12: return true
        case .planarFloat32: return false
        }
    }

    /// A canvas over `frame`, or nil for a float frame.
    public init?(_ frame: Frame) {
        self.frame = frame
        width = frame.width
        height = frame.height
        switch frame.format {
        case .rgb24: layout = .packed(bytes: 3, r: 0, g: 1, b: 2)
        case .rgba: layout = .packed(bytes: 4, r: 0, g: 1, b: 2)
        case .bgra: layout = .packed(bytes: 4, r: 2, g: 1, b: 0)
        case .gray8: layout = .gray
        case .yuv420p: layout = .planar420(interleaved: false)
        case .nv12: layout = .planar420(interleaved: true)
        case .planarFloat32: return nil
        }
    }

    @inline(__always)
    private static func mix(_ old: UInt8, _ new: UInt8, _ a: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: (Int(old) * (256 - a) + Int(new) * a) >> 8)
    }

    /// Blends `paint` into pixels `x0..<x1` of row `y` (already clipped) with alpha `a` (0…256).
    @inline(__always)
    private func span(_ y: Int, _ x0: Int, _ x1: Int, _ paint: Paint, _ a: Int) {
        guard x0 < x1 else { return }
        switch layout {
        case .packed(let bytes, let r, let g, let b):
            let row = (frame.base(plane: 0) + y * frame.planes[0].stride).assumingMemoryBound(to: UInt8.self)
            var p = row + x0 * bytes
            for _ in x0..<x1 {
                p[r] = Self.mix(p[r], paint.r, a)
                p[g] = Self.mix(p[g], paint.g, a)
                p[b] = Self.mix(p[b], paint.b, a)
                p += bytes
            }
        case .gray:
            let row = (frame.base(plane: 0) + y * frame.planes[0].stride).assumingMemoryBound(to: UInt8.self)
            for x in x0..<x1 { row[x] = Self.mix(row[x], paint.y, a) }
        case .planar420(let interleaved):
            let luma = (frame.base(plane: 0) + y * frame.planes[0].stride).assumingMemoryBound(to: UInt8.self)
            for x in x0..<x1 { luma[x] = Self.mix(luma[x], paint.y, a) }
            guard y & 1 == 0 else { return }
            let cy = y / 2
            let first = (x0 + 1) / 2, last = (x1 - 1) / 2   // chroma samples whose top-left pixel is in the span
            guard first <= last else { return }
            if interleaved {
                let uv = (frame.base(plane: 1) + cy * frame.planes[1].stride).assumingMemoryBound(to: UInt8.self)
                for cx in first...last {
                    uv[2 * cx] = Self.mix(uv[2 * cx], paint.cb, a)
                    uv[2 * cx + 1] = Self.mix(uv[2 * cx + 1], paint.cr, a)
                }
            } else {
                let u = (frame.base(plane: 1) + cy * frame.planes[1].stride).assumingMemoryBound(to: UInt8.self)
                let v = (frame.base(plane: 2) + cy * frame.planes[2].stride).assumingMemoryBound(to: UInt8.self)
                for cx in first...last {
                    u[cx] = Self.mix(u[cx], paint.cb, a)
                    v[cx] = Self.mix(v[cx], paint.cr, a)
                }
            }
        }
    }

    /// `v` rounded down to a pixel index, clamped far outside any frame first (Int(Float) traps on
    /// huge values; coordinates come from models and files).
    @inline(__always)
    static func pixel(_ v: Float) -> Int { Int(max(-1e7, min(1e7, v)).rounded(.down)) }

    /// Alpha 0…255 as the 0…256 weight the blend uses.
    @inline(__always)
    private static func weight(_ alpha: Int) -> Int { alpha <= 0 ? 0 : (alpha >= 255 ? 256 : alpha + (alpha >> 7)) }

    /// Fills the pixels x0..<x1, y0..<y1 (clipped to the frame) with `paint` at `alpha` (0…255).
    public func fill(x0: Int, y0: Int, x1: Int, y1: Int, _ paint: Paint, alpha: Int = 255) {
        let a = Self.weight(alpha)
        guard a > 0 else { return }
        let cx0 = max(0, x0), cx1 = min(width, x1), cy0 = max(0, y0), cy1 = min(height, y1)
        guard cx0 < cx1, cy0 < cy1 else { return }
        for y in cy0..<cy1 { span(y, cx0, cx1, paint, a) }
    }

    /// The outline of the box x0..<x1, y0..<y1, `thickness` pixels wide, inside the box.
    public func stroke(x0: Int, y0: Int, x1: Int, y1: Int, thickness: Int, _ paint: Paint, alpha: Int = 255) {
        let t = max(1, min(thickness, (x1 - x0 + 1) / 2, (y1 - y0 + 1) / 2))
        fill(x0: x0, y0: y0, x1: x1, y1: y0 + t, paint, alpha: alpha)            // top
        fill(x0: x0, y0: y1 - t, x1: x1, y1: y1, paint, alpha: alpha)            // bottom
        fill(x0: x0, y0: y0 + t, x1: x0 + t, y1: y1 - t, paint, alpha: alpha)    // left
        fill(x0: x1 - t, y0: y0 + t, x1: x1, y1: y1 - t, paint, alpha: alpha)    // right
    }

    /// A filled disc centred on (`cx`, `cy`) in pixels (pixel centres at +0.5), edges anti-aliased.
    public func disc(cx: Float, cy: Float, radius: Float, _ paint: Paint, alpha: Int = 255) {
        guard radius > 0, cx.isFinite, cy.isFinite else { return }
        guard radius < Float(width + height) else { return }
        let y0 = max(0, Self.pixel(cy - radius - 1)), y1 = min(height, Self.pixel(cy + radius + 2))
        guard y0 < y1 else { return }
        for y in y0..<y1 {
            let dy = Float(y) + 0.5 - cy
            let half = (radius + 0.5) * (radius + 0.5) - dy * dy
            guard half > 0 else { continue }
            let w = half.squareRoot()
            let xs = max(0, Self.pixel(cx - w)), xe = min(width, Self.pixel(cx + w) + 1)
            guard xs < xe else { continue }
            for x in xs..<xe {
                let dx = Float(x) + 0.5 - cx
                let d = (dx * dx + dy * dy).squareRoot()
                let coverage = max(0, min(1, radius + 0.5 - d))   // 1 inside, ramps to 0 over the edge pixel
                let a = Self.weight(Int(coverage * Float(alpha)))
                if a > 0 { span(y, x, x + 1, paint, a) }
            }
        }
    }

    /// A line `thickness` pixels wide from (`x0`, `y0`) to (`x1`, `y1`) in pixels: stepped along its
    /// longer axis, a run of `thickness` pixels across it at each step.
    public func line(x0: Float, y0: Float, x1: Float, y1: Float, thickness: Int, _ paint: Paint, alpha: Int = 255) {
        guard x0.isFinite, y0.isFinite, x1.isFinite, y1.isFinite else { return }
        // Far-away ends are pulled in (bounded work; the visible part of such a line is approximate).
        let far = Float(4 * (width + height))
        let (x0, y0, x1, y1) = (max(-far, min(far, x0)), max(-far, min(far, y0)), max(-far, min(far, x1)), max(-far, min(far, y1)))
        let a = Self.weight(alpha)
        guard a > 0 else { return }
        let t = max(1, thickness), before = (t - 1) / 2
        let dx = x1 - x0, dy = y1 - y0
        // Bounded work whatever the coordinates: clip the steps to the frame's extent.
        let steps = Int(max(abs(dx), abs(dy)).rounded(.up))
        for i in 0...steps {
            let f = steps == 0 ? 0 : Float(i) / Float(steps)
            let x = Self.pixel(x0 + dx * f), y = Self.pixel(y0 + dy * f)
            if abs(dx) >= abs(dy) {
                guard x >= 0, x < width else { continue }
                let lo = max(0, y - before), hi = min(height, y - before + t)
                if lo < hi { for yy in lo..<hi { span(yy, x, x + 1, paint, a) } }
            } else {
                guard y >= 0, y < height else { continue }
                span(y, max(0, x - before), min(width, max(0, x - before + t)), paint, a)
            }
        }
    }

    /// Draws `text` with `font`, its pen starting at `x` and its baseline at `baseline` (pixels),
    /// the glyphs' coverage as alpha. Returns the pen position after the last glyph.
    @discardableResult
    public func text(_ text: String, font: FontFace, x: Int, baseline: Int, _ paint: Paint) -> Int {
        var pen = x
        for scalar in text.unicodeScalars {
            let g = font.glyph(scalar)
            let left = pen + g.left, top = baseline - g.top
            if g.width > 0 && left < width && top < height && left + g.width > 0 && top + g.rows > 0 {
                for gy in max(0, -top)..<min(g.rows, height - top) {
                    let y = top + gy
                    for gx in max(0, -left)..<min(g.width, width - left) {
                        let c = Int(g.coverage[gy * g.width + gx])
                        if c > 0 { span(y, left + gx, left + gx + 1, paint, Self.weight(c)) }
                    }
                }
            }
            pen += g.advance
            if pen >= width { break }
        }
        return pen
    }
}
