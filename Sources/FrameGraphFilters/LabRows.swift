/// Whole-row Lab conversions, split so the arithmetic runs in loops without table lookups (which
/// the compiler turns into vector instructions): table gathers in one pass, float math in another.
/// The same formulas as ``LabColor``'s per-pixel functions.
struct LabRows {
    let width: Int
    // Scratch rows, reused.
    private var r: [Float], g: [Float], b: [Float]

    init(width: Int) {
        self.width = width
        r = [Float](repeating: 0, count: width)
        g = r
        b = r
    }

    /// rgb24 row → L, a, b rows.
    mutating func lab(from src: UnsafePointer<UInt8>, table: UnsafePointer<Float>,
                      l: UnsafeMutablePointer<Float>, a: UnsafeMutablePointer<Float>, bOut: UnsafeMutablePointer<Float>) {
        let n = width
        r.withUnsafeMutableBufferPointer { rp in g.withUnsafeMutableBufferPointer { gp in b.withUnsafeMutableBufferPointer { bp in
            guard let rr = rp.baseAddress, let gg = gp.baseAddress, let bb = bp.baseAddress else { return }
            for x in 0..<n {
                rr[x] = table[Int(src[3 * x])]
                gg[x] = table[Int(src[3 * x + 1])]
                bb[x] = table[Int(src[3 * x + 2])]
            }
            let m = LabColor.m
            let (m0, m1, m2, m3, m4, m5, m6, m7, m8) = m
            for x in 0..<n {
                let X = m0 * rr[x] + m1 * gg[x] + m2 * bb[x]
                let Y = m3 * rr[x] + m4 * gg[x] + m5 * bb[x]
                let Z = m6 * rr[x] + m7 * gg[x] + m8 * bb[x]
                let fx = LabColor.f(X), fy = LabColor.f(Y), fz = LabColor.f(Z)
                l[x] = 116 * fy - 16
                a[x] = 500 * (fx - fy)
                bOut[x] = 200 * (fy - fz)
            }
        } } }
    }

    /// rgb24 row → L row.
    mutating func lightness(from src: UnsafePointer<UInt8>, table: UnsafePointer<Float>, l: UnsafeMutablePointer<Float>) {
        let n = width
        let (m3, m4, m5) = (LabColor.m.3, LabColor.m.4, LabColor.m.5)
        r.withUnsafeMutableBufferPointer { rp in
            guard let yy = rp.baseAddress else { return }
            for x in 0..<n {
                yy[x] = m3 * table[Int(src[3 * x])] + m4 * table[Int(src[3 * x + 1])] + m5 * table[Int(src[3 * x + 2])]
            }
            for x in 0..<n { l[x] = 116 * LabColor.f(yy[x]) - 16 }
        }
    }

    /// L, a, b rows → rgb24 row (through the linear → byte table).
    mutating func rgb(l: UnsafePointer<Float>, a: UnsafePointer<Float>, b bIn: UnsafePointer<Float>,
                      table: UnsafePointer<UInt8>, into dst: UnsafeMutablePointer<UInt8>) {
        let n = width
        let i = LabColor.inverse
        let (i0, i1, i2, i3, i4, i5, i6, i7, i8) = i
        let scale = Float(LabColor.byteTableSize)
        r.withUnsafeMutableBufferPointer { rp in g.withUnsafeMutableBufferPointer { gp in b.withUnsafeMutableBufferPointer { bp in
            guard let rr = rp.baseAddress, let gg = gp.baseAddress, let bb = bp.baseAddress else { return }
            for x in 0..<n {
                let fy = (l[x] + 16) * (1 / 116)
                let fx = fy + a[x] * (1 / 500)
                let fz = max(fy - bIn[x] * (1 / 200), 0)
                let X = LabColor.finv(fx), Y = LabColor.finv(fy), Z = LabColor.finv(fz)
                rr[x] = min(max(i0 * X + i1 * Y + i2 * Z, 0), 1) * scale + 0.5
                gg[x] = min(max(i3 * X + i4 * Y + i5 * Z, 0), 1) * scale + 0.5
                bb[x] = min(max(i6 * X + i7 * Y + i8 * Z, 0), 1) * scale + 0.5
            }
            for x in 0..<n {
                dst[3 * x] = table[Int(rr[x])]
                dst[3 * x + 1] = table[Int(gg[x])]
                dst[3 * x + 2] = table[Int(bb[x])]
            }
        } } }
    }
}
