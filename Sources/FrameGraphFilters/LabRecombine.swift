import FFmpegSupport
import FrameGraph

/// Recombines a frame's own full-resolution lightness with a/b colour channels (from a colorizer, at
/// any size): `out = lab2rgb(L(frame), upsample(a), upsample(b))`, the last step of colorization.
///
/// Ports: 0 `frame` (rgb24, yuv420p or gray8 — only its Lab lightness is used), 1 `ab` (float32x2:
/// a and b planes in Lab units, upsampled bilinearly with half-pixel centres). Output rgb24 at the
/// frame's size. In live mode each frame pairs with the newest a/b, so the output keeps the frame
/// rate while the colorizer runs at its own pace.
///
/// `mode` chooses how: `lab` recombines every pixel exactly as above (rgb24 out); `chroma` keeps a
/// yuv420p frame's own Y' plane and computes only the chroma planes, at their half resolution, from
/// Lab(L, a, b) there (yuv420p out; ``ChromaRecombine``, about 5× less work); `auto` (default) is
/// `chroma` for yuv420p frames — video, whose output is 4:2:0 anyway and whose colour comes from a
/// 64×64 a/b map either way — and `lab` for rgb24 and gray8 frames (a PNG sequence, a photo
/// converted to RGB). At 1080p the exact form costs more than a live frame period on a small machine.
///
/// ```swift
/// let recombine = LabRecombine(name: "recombine")
/// source --> recombine.port(0); colorizer --> recombine.port(1)
/// ```
public final class LabRecombine: CompositeNode, @unchecked Sendable {
    private let scaler = Scaler(method: .bilinear)
    private var rgb: Frame?
    /// Per output column and row: left/top source index and weight of the right/bottom neighbour.
    private var columns: [(Int, Float)] = []
    private var rows: [(Int, Float)] = []
    private var abSize = (width: 0, height: 0)
    private var rowKernels: LabRows?
    private let pool = BufferPool(maxFreePerSize: 8)

    /// Row buffers of one recombine pass: L, a and b at the frame's width, a and b at the a/b width.
    private struct RowScratch {
        var l: [Float], a: [Float], b: [Float], aRow: [Float], bRow: [Float]
        init(l: [Float], a: [Float], b: [Float], aRow: [Float], bRow: [Float]) {
            (self.l, self.a, self.b, self.aRow, self.bRow) = (l, a, b, aRow, bRow)
        }
        init(width: Int, abWidth: Int) {
            let row = [Float](repeating: 0, count: width), abRow = [Float](repeating: 0, count: abWidth)
            self.init(l: row, a: row, b: row, aRow: abRow, bRow: abRow)
        }
    }
    private var scratch = RowScratch(width: 0, abWidth: 0)

    /// Whether recombining runs on a worker thread of its own (default true), pipelining it with
    /// decoding and prediction.
    public let ownWorker: Bool
    override public var execution: Execution { ownWorker ? .worker : .inline }

    /// How colour is put back.
    public enum Mode: String, Sendable, CaseIterable {
        case auto, lab, chroma
    }

    public let mode: Mode
    /// The mode in use after negotiation (`auto` resolved).
    public private(set) var resolvedMode: Mode = .lab
    private var chroma: ChromaRecombine?

    public init(name: String = "recombine", ownWorker: Bool = OptionSpecs.worker.defaultValue, mode: Mode = .auto) {
        self.ownWorker = ownWorker
        self.mode = mode
        super.init(name: name)
    }

    override public var inputPorts: [String] { ["frame", "ab"] }
    override public var kind: String { "recombine" }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard inputs.count == 2 else { return nil }
        try require(format: inputs[0].format, in: [.rgb24, .yuv420p, .gray8], port: 0)
        try require(format: inputs[1].format, in: [.planarFloat32(channels: 2)], port: 1)
        let (frame, ab) = (inputs[0], inputs[1])
        switch mode {
        case .chroma:
            try require(format: frame.format, in: [.yuv420p], port: 0)
            resolvedMode = .chroma
        case .lab: resolvedMode = .lab
        case .auto: resolvedMode = frame.format == .yuv420p ? .chroma : .lab
        }
        if resolvedMode == .chroma {
            chroma = ChromaRecombine(width: frame.width, height: frame.height, abWidth: ab.width, abHeight: ab.height)
            abSize = (ab.width, ab.height)
            return FrameDescription(format: .yuv420p, width: frame.width, height: frame.height)
        }
        chroma = nil
        columns = Self.taps(output: frame.width, input: ab.width)
        rows = Self.taps(output: frame.height, input: ab.height)
        abSize = (ab.width, ab.height)
        rgb = frame.format == .rgb24 ? nil : Frame.make(.rgb24, width: frame.width, height: frame.height)
        return FrameDescription(format: .rgb24, width: frame.width, height: frame.height)
    }

    /// Bilinear taps with half-pixel centres (as PyTorch's align_corners=False and OpenCV), clamped.
    static func taps(output: Int, input: Int) -> [(Int, Float)] {
        let scale = Float(input) / Float(output)
        return (0..<output).map { o in
            let x = max(0, (Float(o) + 0.5) * scale - 0.5)
            let i = min(Int(x), input - 1)
            let w = i + 1 < input ? x - Float(i) : 0
            return (i, w)
        }
    }

    override public func combine(_ frames: [Frame], context: RunContext) throws -> Frame? {
        var source = frames[0]
        let ab = frames[1]
        if ab.width != abSize.width || ab.height != abSize.height {
            throw GraphError.mismatch(node: name, port: "ab", field: "size", expected: "\(abSize.width)x\(abSize.height)",
                                      got: "\(ab.width)x\(ab.height)")
        }
        if var chroma {
            self.chroma = nil  // its row buffers uniquely held while it works (no copy on write)
            var out = Frame.make(.yuv420p, width: source.width, height: source.height, pool: pool)
            out.copyTiming(from: frames[0])
            chroma.combine(frame: source, ab: ab, into: out)
            self.chroma = chroma
            return out
        }
        if let rgb {
            try scaler.scale(source, into: rgb)
            source = rgb
        }
        var out = Frame.make(.rgb24, width: source.width, height: source.height, pool: pool)
        let width = source.width, aw = ab.width
        if rowKernels?.width != width { rowKernels = LabRows(width: width) }
        guard var kernels = rowKernels else { return nil }
        // Per output row: L from the frame, a/b interpolated vertically then horizontally, then Lab → RGB.
        // The row buffers are the node's, reused frame after frame (moved out and back, so no copy).
        if scratch.l.count != width || scratch.aRow.count != aw { scratch = RowScratch(width: width, abWidth: aw) }
        var (l, a, b, aRow, bRow) = (scratch.l, scratch.a, scratch.b, scratch.aRow, scratch.bRow)
        scratch = RowScratch(width: 0, abWidth: 0)
        defer { scratch = RowScratch(l: l, a: a, b: b, aRow: aRow, bRow: bRow) }
        LabColor.linearFromByte.withUnsafeBufferPointer { linear in
            LabColor.byteFromLinear.withUnsafeBufferPointer { bytes in
                guard let linearTable = linear.baseAddress, let byteTable = bytes.baseAddress else { return }
                for y in 0..<source.height {
                    let (ty, wy) = rows[y]
                    let ty1 = min(ty + 1, ab.height - 1)
                    let a0 = ab.floatRow(ty, plane: 0), a1 = ab.floatRow(ty1, plane: 0)
                    let b0 = ab.floatRow(ty, plane: 1), b1 = ab.floatRow(ty1, plane: 1)
                    for x in 0..<aw {
                        aRow[x] = a0[x] + (a1[x] - a0[x]) * wy
                        bRow[x] = b0[x] + (b1[x] - b0[x]) * wy
                    }
                    for x in 0..<width {
                        let (tx, wx) = columns[x]
                        let tx1 = min(tx + 1, aw - 1)
                        a[x] = aRow[tx] + (aRow[tx1] - aRow[tx]) * wx
                        b[x] = bRow[tx] + (bRow[tx1] - bRow[tx]) * wx
                    }
                    guard let src = source.row(y).baseAddress, let dst = out.row(y).baseAddress else { continue }
                    l.withUnsafeMutableBufferPointer { lp in a.withUnsafeBufferPointer { ap in b.withUnsafeBufferPointer { bp in
                        guard let lb = lp.baseAddress, let ab = ap.baseAddress, let bb = bp.baseAddress else { return }
                        kernels.lightness(from: src, table: linearTable, l: lb)
                        kernels.rgb(l: lb, a: ab, b: bb, table: byteTable, into: dst)
                    } } }
                }
            }
        }
        rowKernels = kernels
        out.copyTiming(from: frames[0])
        return out
    }
}

extension LabRecombine {
    /// The options of the `recombine` node type.
    public enum OptionSpecs {
        public static let worker = NodeOption.flag("worker", default: true, "recombine on a worker thread of its own (pipelines with the network)")
        public static let mode = NodeOption.choice("mode", default: Mode.auto,
                                                   "lab: every pixel through Lab (rgb24 out); chroma: keep Y', colour the chroma planes (yuv420p in and out); auto: chroma for yuv420p frames, else lab")
        public static let all = [PairingChoice.option.spec, worker.spec, mode.spec]
    }
}
