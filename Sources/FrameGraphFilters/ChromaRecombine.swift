import CFrameGraphKernels
import FrameGraph

/// The fast form of colorization's last step for large yuv420p frames: the frame's own Y' plane is
/// kept as it is, and only the chroma planes are computed — at their own (half) resolution, each
/// chroma sample from the frame's Lab lightness there and the upsampled a/b, through Lab → RGB →
/// Cb/Cr with the frame's matrix and range. A quarter of the pixels go through Lab, and no
/// full-resolution RGB picture is made; each chroma row is one call of a fused C kernel
/// (`fg_chroma_recombine_row`: every step on a block of 64 samples in L1, gathers for the table
/// lookups). `framegraph-bench recombine` at 1080p on one core: 3.7–5.9 ms, where the exact
/// full-resolution Lab recombination (`LabRecombine`'s `mode=lab`) takes 31–42.
struct ChromaRecombine {
    private var columnIndex: [Int32], columnWeight: [Float]
    private var rows: [(Int, Float)]
    private var a: [Float], b: [Float], abScratch: [Float]
    let chromaWidth: Int, chromaHeight: Int

    init(width: Int, height: Int, abWidth: Int, abHeight: Int) {
        chromaWidth = (width + 1) / 2
        chromaHeight = (height + 1) / 2
        let columns = LabRecombine.taps(output: chromaWidth, input: abWidth)
        columnIndex = columns.map { Int32($0.0) }
        columnWeight = columns.map(\.1)
        rows = LabRecombine.taps(output: chromaHeight, input: abHeight)
        a = [Float](repeating: 0, count: chromaWidth)
        b = a
        abScratch = [Float](repeating: 0, count: 2 * abWidth)
    }

    /// Writes `out` (yuv420p, the frame's size): Y' copied from `frame`, Cb/Cr from Lab(L(frame), ab).
    /// `allowSIMD` false runs the kernel's baseline build (the same bytes; for tests).
    mutating func combine(frame: Frame, ab: Frame, into out: Frame, allowSIMD: Bool = true) {
        let width = frame.width, height = frame.height, cw = chromaWidth, aw = ab.width
        let color = frame.color.resolved(height: height)
        let (kr, kb) = color.lumaCoefficients
        let cScale: Float = color.range == .full ? 1 : 224.0 / 255.0
        let m = LabColor.m, inv = LabColor.inverse
        defer { withExtendedLifetime((frame, ab, out)) {} }  // the row pointers below point into them
        Frame.copyPlanes(format: .gray8, width: width, height: height,
                         from: { _ in (UnsafeRawPointer(frame.base(plane: 0)), frame.planes[0].stride) },
                         to: { _ in (out.base(plane: 0), out.planes[0].stride) })
        let lumaBase = frame.base(plane: 0).assumingMemoryBound(to: UInt8.self), lumaStride = frame.planes[0].stride
        LabColor.linearFromByte.withUnsafeBufferPointer { linear in LabColor.byteFromLinear.withUnsafeBufferPointer { bytes in
        a.withUnsafeMutableBufferPointer { ap in b.withUnsafeMutableBufferPointer { bp in
        abScratch.withUnsafeMutableBufferPointer { sp in columnIndex.withUnsafeBufferPointer { ci in columnWeight.withUnsafeBufferPointer { cwp in
            guard let linearTable = linear.baseAddress, let byteTable = bytes.baseAddress,
                  let abase = ap.baseAddress, let bbase = bp.baseAddress, let scratch = sp.baseAddress,
                  let tx = ci.baseAddress, let wx = cwp.baseAddress else { return }
            var parameters = fg_chroma_recombine(
                to_rgb: ResampleToRGB.coefficients(color), linear: linearTable, srgb: byteTable, scale: Float(LabColor.byteTableSize),
                lum: (m.3, m.4, m.5), inv: (inv.0, inv.1, inv.2, inv.3, inv.4, inv.5, inv.6, inv.7, inv.8),
                kr: kr, kb: kb, cbf: cScale / (2 * (1 - kb)), crf: cScale / (2 * (1 - kr)))
            for cy in 0..<chromaHeight {
                let y0 = lumaBase + min(2 * cy, height - 1) * lumaStride, y1 = lumaBase + min(2 * cy + 1, height - 1) * lumaStride
                let u = frame.base(plane: 1).assumingMemoryBound(to: UInt8.self) + cy * frame.planes[1].stride
                let v = frame.base(plane: 2).assumingMemoryBound(to: UInt8.self) + cy * frame.planes[2].stride
                let (ty, wy) = rows[cy]
                let ty1 = min(ty + 1, ab.height - 1)
                let a0 = ab.floatRow(ty, plane: 0), a1 = ab.floatRow(ty1, plane: 0)
                let b0 = ab.floatRow(ty, plane: 1), b1 = ab.floatRow(ty1, plane: 1)
                fg_ab_row(a0.baseAddress, a1.baseAddress, b0.baseAddress, b1.baseAddress, Int32(aw), wy, tx, wx, Int32(cw), abase, bbase, scratch)
                let outU = out.base(plane: 1).assumingMemoryBound(to: UInt8.self) + cy * out.planes[1].stride
                let outV = out.base(plane: 2).assumingMemoryBound(to: UInt8.self) + cy * out.planes[2].stride
                fg_chroma_recombine_row(y0, y1, u, v, Int32(cw), Int32(width), abase, bbase, &parameters, outU, outV, allowSIMD ? 1 : 0)
            }
        } } } } } } }
    }
}
