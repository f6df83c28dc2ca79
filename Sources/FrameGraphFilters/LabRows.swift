import CFrameGraphKernels

/// Whole-row Lab conversions, split so the arithmetic runs in loops without table lookups: table
/// gathers in Swift, float math in CFrameGraphKernels (vectorised, AVX2+FMA when the CPU has it).
/// The same formulas as ``LabColor``'s per-pixel functions.
struct LabRows {
    /// The matrices as flat arrays for the C kernels.
    private static let forward: [Float] = { let m = LabColor.m; return [m.0, m.1, m.2, m.3, m.4, m.5, m.6, m.7, m.8] }()
    private static let luminance: [Float] = [LabColor.m.3, LabColor.m.4, LabColor.m.5]
    private static let backward: [Float] = { let i = LabColor.inverse; return [i.0, i.1, i.2, i.3, i.4, i.5, i.6, i.7, i.8] }()

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
        withLinearRows(of: src, table: table) { r, g, b in fg_lab_from_linear(r, g, b, l, a, bOut, n, Self.forward) }
    }

    /// rgb24 row → L row.
    mutating func lightness(from src: UnsafePointer<UInt8>, table: UnsafePointer<Float>, l: UnsafeMutablePointer<Float>) {
        let n = width
        withLinearRows(of: src, table: table) { r, g, b in fg_lightness_from_linear(r, g, b, l, n, Self.luminance) }
    }

    /// Looks up the linear light of every byte of an rgb24 row into the scratch rows, then runs `body` on them.
    private mutating func withLinearRows(of src: UnsafePointer<UInt8>, table: UnsafePointer<Float>,
                                         _ body: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) -> Void) {
        let n = width
        r.withUnsafeMutableBufferPointer { rp in g.withUnsafeMutableBufferPointer { gp in b.withUnsafeMutableBufferPointer { bp in
            guard let rr = rp.baseAddress, let gg = gp.baseAddress, let bb = bp.baseAddress else { return }
            for x in 0..<n {
                rr[x] = table[Int(src[3 * x])]
                gg[x] = table[Int(src[3 * x + 1])]
                bb[x] = table[Int(src[3 * x + 2])]
            }
            body(rr, gg, bb)
        } } }
    }

    /// L, a, b rows → rgb24 row (through the linear → byte table).
    mutating func rgb(l: UnsafePointer<Float>, a: UnsafePointer<Float>, b bIn: UnsafePointer<Float>,
                      table: UnsafePointer<UInt8>, into dst: UnsafeMutablePointer<UInt8>) {
        let n = width
        let scale = Float(LabColor.byteTableSize)
        r.withUnsafeMutableBufferPointer { rp in g.withUnsafeMutableBufferPointer { gp in b.withUnsafeMutableBufferPointer { bp in
            guard let rr = rp.baseAddress, let gg = gp.baseAddress, let bb = bp.baseAddress else { return }
            fg_linear_index_from_lab(l, a, bIn, rr, gg, bb, n, Self.backward, scale)
            for x in 0..<n {
                dst[3 * x] = table[Int(rr[x])]
                dst[3 * x + 1] = table[Int(gg[x])]
                dst[3 * x + 2] = table[Int(bb[x])]
            }
        } } }
    }
}

/// Lab lightness (0…100) of whole rgb24 rows, through the vectorised row kernel: for preparing a
/// colorizer's input without a per-pixel function call.
///
/// ```swift
/// var rows = LightnessRows(width: 256)
/// rows.convert(rgbRow, into: lightness)   // 256 pixels → 256 floats
/// ```
public struct LightnessRows {
    private var rows: LabRows

    public init(width: Int) {
        rows = LabRows(width: width)
    }

    /// The row's width in pixels.
    public var width: Int { rows.width }

    /// Converts `width` rgb24 pixels at `src` into `width` lightness values at `l`.
    public mutating func convert(_ src: UnsafePointer<UInt8>, into l: UnsafeMutablePointer<Float>) {
        LabColor.linearFromByte.withUnsafeBufferPointer { table in
            guard let base = table.baseAddress else { return }
            rows.lightness(from: src, table: base, l: l)
        }
    }
}
