import CFrameGraphKernels
import FrameGraph

/// The fast form of colorization's last step for large yuv420p frames: the frame's own Y' plane is
/// kept as it is, and only the chroma planes are computed — at their own (half) resolution, each
/// chroma sample from the frame's Lab lightness there and the upsampled a/b, through Lab → RGB →
/// Cb/Cr with the frame's matrix and range. A quarter of the pixels go through Lab, and no
/// full-resolution RGB picture is made: about 4 ms at 1080p where the exact full-resolution Lab
/// recombination takes about 20 (`LabRecombine`'s `mode=lab`).
struct ChromaRecombine {
    private var kernels: LabRows
    private var columnIndex: [Int32], columnWeight: [Float]
    private var rows: [(Int, Float)]
    private var rgbIn: [UInt8], rgbOut: [UInt8]
    private var l: [Float], a: [Float], b: [Float], abScratch: [Float]
    let chromaWidth: Int, chromaHeight: Int

    init(width: Int, height: Int, abWidth: Int, abHeight: Int) {
        chromaWidth = (width + 1) / 2
        chromaHeight = (height + 1) / 2
        kernels = LabRows(width: chromaWidth)
        let columns = LabRecombine.taps(output: chromaWidth, input: abWidth)
        columnIndex = columns.map { Int32($0.0) }
        columnWeight = columns.map(\.1)
        rows = LabRecombine.taps(output: chromaHeight, input: abHeight)
        let row = [Float](repeating: 0, count: chromaWidth)
        (l, a, b) = (row, row, row)
        abScratch = [Float](repeating: 0, count: 2 * abWidth)
        rgbIn = [UInt8](repeating: 0, count: chromaWidth * 3)
        rgbOut = rgbIn
    }

    /// Writes `out` (yuv420p, the frame's size): Y' copied from `frame`, Cb/Cr from Lab(L(frame), ab).
    mutating func combine(frame: Frame, ab: Frame, into out: Frame) {
        let width = frame.width, height = frame.height, cw = chromaWidth, aw = ab.width
        let color = frame.color.resolved(height: height)
        var toRGB = ResampleToRGB.coefficients(color)
        let (kr, kb) = color.lumaCoefficients
        let cScale: Float = color.range == .full ? 1 : 224.0 / 255.0
        let cbFactor = cScale / (2 * (1 - kb)), crFactor = cScale / (2 * (1 - kr))
        defer { withExtendedLifetime((frame, ab, out)) {} }  // the row pointers below point into them
        Frame.copyPlanes(format: .gray8, width: width, height: height,
                         from: { _ in (UnsafeRawPointer(frame.base(plane: 0)), frame.planes[0].stride) },
                         to: { _ in (out.base(plane: 0), out.planes[0].stride) })
        let lumaBase = frame.base(plane: 0).assumingMemoryBound(to: UInt8.self), lumaStride = frame.planes[0].stride
        LabColor.linearFromByte.withUnsafeBufferPointer { linear in LabColor.byteFromLinear.withUnsafeBufferPointer { bytes in
        rgbIn.withUnsafeMutableBufferPointer { inp in rgbOut.withUnsafeMutableBufferPointer { outp in
        l.withUnsafeMutableBufferPointer { lp in a.withUnsafeMutableBufferPointer { ap in b.withUnsafeMutableBufferPointer { bp in
        abScratch.withUnsafeMutableBufferPointer { sp in columnIndex.withUnsafeBufferPointer { ci in columnWeight.withUnsafeBufferPointer { cwp in
            guard let linearTable = linear.baseAddress, let byteTable = bytes.baseAddress, let rin = inp.baseAddress, let rout = outp.baseAddress,
                  let lb = lp.baseAddress, let abase = ap.baseAddress, let bbase = bp.baseAddress, let scratch = sp.baseAddress,
                  let tx = ci.baseAddress, let wx = cwp.baseAddress else { return }
            for cy in 0..<chromaHeight {
                let y0 = lumaBase + min(2 * cy, height - 1) * lumaStride, y1 = lumaBase + min(2 * cy + 1, height - 1) * lumaStride
                let u = frame.base(plane: 1).assumingMemoryBound(to: UInt8.self) + cy * frame.planes[1].stride
                let v = frame.base(plane: 2).assumingMemoryBound(to: UInt8.self) + cy * frame.planes[2].stride
                fg_chroma_row_to_rgb24(y0, y1, u, v, Int32(cw), Int32(width), rin, &toRGB)
                let (ty, wy) = rows[cy]
                let ty1 = min(ty + 1, ab.height - 1)
                let a0 = ab.floatRow(ty, plane: 0), a1 = ab.floatRow(ty1, plane: 0)
                let b0 = ab.floatRow(ty, plane: 1), b1 = ab.floatRow(ty1, plane: 1)
                fg_ab_row(a0.baseAddress, a1.baseAddress, b0.baseAddress, b1.baseAddress, Int32(aw), wy, tx, wx, Int32(cw), abase, bbase, scratch)
                kernels.lightness(from: rin, table: linearTable, l: lb)
                kernels.rgb(l: lb, a: abase, b: bbase, table: byteTable, into: rout)
                let outU = out.base(plane: 1).assumingMemoryBound(to: UInt8.self) + cy * out.planes[1].stride
                let outV = out.base(plane: 2).assumingMemoryBound(to: UInt8.self) + cy * out.planes[2].stride
                fg_rgb24_to_cbcr(rout, Int32(cw), kr, kb, cbFactor, crFactor, outU, outV)
            }
        } } } } } } } } } }
    }
}
