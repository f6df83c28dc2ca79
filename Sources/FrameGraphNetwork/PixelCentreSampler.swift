import FrameGraph

/// Crops and stretches an RGB frame the way MetalImage's render passes do (MetalTensor's example
/// apps, format spec §10): a rectangle in continuous pixel coordinates, sampled bilinearly at each
/// output pixel's centre (`src = x0 + (i + 0.5) · w / outW − 0.5`, clamped to the frame's edge
/// pixels), rounded to 8 bits, then normalised (`byte × scale + offset`; MetalTensor feeds
/// RGB / 255). Where the rectangle leaves the frame, the output is either the edge pixels (clamp)
/// or the crop filter's 0.5-grey clear colour.
public struct PixelCentreSampler: Sendable {
    /// What fills output pixels whose centre falls outside the frame.
    public enum Outside: String, Sendable, CaseIterable {
        /// The nearest edge pixel (a clamp-to-edge sampler).
        case clamp
        /// Grey 128 (the crop filter's clear colour, 0.5).
        case grey
    }

    public var width: Int
    public var height: Int
    public var scale: Float = 1 / 255
    public var offset: Float = 0
    public var outside: Outside = .clamp

    public init(width: Int, height: Int, scale: Float = 1 / 255, offset: Float = 0, outside: Outside = .clamp) {
        self.width = width
        self.height = height
        self.scale = scale
        self.offset = offset
        self.outside = outside
    }

    /// Samples the rectangle (x, y, w, h) of `frame` (rgb24) into width × height × 3 floats at
    /// `destination`, RGB order. False when the frame is not rgb24 or the rectangle is empty.
    @discardableResult
    public func sample(_ frame: Frame, x x0: Double, y y0: Double, width w: Double, height h: Double,
                       into destination: UnsafeMutablePointer<Float>) -> Bool {
        guard frame.format == .rgb24, frame.width > 0, frame.height > 0, w > 0, h > 0, width > 0, height > 0 else { return false }
        let fw = frame.width, fh = frame.height
        // Per output column and row: the two source indices and the weight of the second.
        func taps(_ count: Int, start: Double, length: Double, limit: Int) -> [(Int, Int, Float, Bool)] {
            (0..<count).map { i in
                let centre = start + (Double(i) + 0.5) * length / Double(count)
                let inside = centre >= 0 && centre < Double(limit)
                let s = min(max(centre - 0.5, 0), Double(limit - 1))
                let i0 = Int(s.rounded(.down)), i1 = min(i0 + 1, limit - 1)
                return (i0, i1, Float(s - Double(i0)), inside)
            }
        }
        let columns = taps(width, start: x0, length: w, limit: fw), rows = taps(height, start: y0, length: h, limit: fh)
        let grey = Float(128) * scale + offset
        for (oy, row) in rows.enumerated() {
            guard let r0 = frame.row(row.0).baseAddress, let r1 = frame.row(row.1).baseAddress else { continue }
            let wy = row.2
            let dst = destination + oy * width * 3
            for (ox, column) in columns.enumerated() {
                if outside == .grey && !(row.3 && column.3) {
                    dst[ox * 3] = grey; dst[ox * 3 + 1] = grey; dst[ox * 3 + 2] = grey
                    continue
                }
                let (a, b, wx) = (column.0 * 3, column.1 * 3, column.2)
                for c in 0..<3 {
                    let top = Float(r0[a + c]) * (1 - wx) + Float(r0[b + c]) * wx
                    let bottom = Float(r1[a + c]) * (1 - wx) + Float(r1[b + c]) * wx
                    let value = (top * (1 - wy) + bottom * wy + 0.5).rounded(.down)  // an 8-bit texture
                    dst[ox * 3 + c] = value * scale + offset
                }
            }
        }
        return true
    }
}
