/// A synthetic source: a moving colour gradient with the frame number stamped into the top-left
/// corner as 16 black/white blocks, so order and drops can be read back from any output, even after
/// lossy encoding and scaling down by 2. Runs in memory: the scheduler's tests use it with a
/// ``ManualClock``.
///
/// Stamp layout: bit `i` (most significant first) of the 16-bit frame number is a `blockSize`×`blockSize`
/// square at x = i × blockSize, y = 0; white (255) is 1, black (0) is 0. Read it with ``readStamp(from:)``.
public final class PatternSource: SourceNode, @unchecked Sendable {
    /// Side of one stamp block in pixels.
    public static let blockSize = 16
    public let width: Int
    public let height: Int
    public let format: PixelFormat
    public let frameRate: Double
    public let frameCount: Int
    private var produced = 0

    /// `frameCount` frames of `width`×`height` (at least 256×16 for the stamp) at `frameRate`, in
    /// `format` (rgb24 or yuv420p).
    public init(name: String = "pattern", width: Int = OptionSpecs.width.defaultValue, height: Int = OptionSpecs.height.defaultValue,
                format: PixelFormat = OptionSpecs.format.defaultValue,
                frameRate: Double = OptionSpecs.fps.defaultValue, frameCount: Int = OptionSpecs.frames.defaultValue) {
        self.width = width
        self.height = height
        self.format = format
        self.frameRate = frameRate
        self.frameCount = frameCount
        super.init(name: name)
    }

    override public var kind: String { "pattern" }

    override public func start(context: RunContext) throws {
        guard format == .rgb24 || format == .yuv420p else {
            throw GraphError.invalidOption(node: name, option: "format", reason: "pattern supports rgb24 and yuv420p, not \(format)")
        }
        guard width >= 16 * Self.blockSize, height >= Self.blockSize else {
            throw GraphError.invalidOption(node: name, option: "width", reason: "the stamp needs at least \(16 * Self.blockSize)x\(Self.blockSize) pixels")
        }
        produced = 0
    }

    override public func outputDescription() throws -> FrameDescription {
        FrameDescription(format: format, width: width, height: height)
    }

    override public func nextFrame(context: RunContext) throws -> Frame? {
        guard produced < frameCount else { return nil }
        var frame = Frame.make(format, width: width, height: height)
        let n = produced
        let shift = n * 4
        for y in 0..<height {
            let row = frame.row(y, plane: 0)
            if format == .rgb24 {
                for x in 0..<width {
                    row[3 * x] = UInt8(truncatingIfNeeded: x + shift)
                    row[3 * x + 1] = UInt8(truncatingIfNeeded: y * 2)
                    row[3 * x + 2] = UInt8(truncatingIfNeeded: 128 + n)
                }
            } else {
                for x in 0..<width { row[x] = UInt8(truncatingIfNeeded: 16 + (x + y + shift) % 200) }
            }
        }
        if format == .yuv420p {
            for p in 1...2 {
                let rows = format.planeGeometry(p, width: width, height: height).rows
                for y in 0..<rows {
                    let row = frame.row(y, plane: p)
                    for x in row.indices { row[x] = UInt8(truncatingIfNeeded: p == 1 ? 128 + (x - y) / 4 : 128 + n % 64) }
                }
            }
        }
        stamp(n, into: frame)
        frame.mediaTime = Double(n) / frameRate
        produced += 1
        return frame
    }

    private func stamp(_ number: Int, into frame: Frame) {
        let b = Self.blockSize
        for bit in 0..<16 {
            let on = (number >> (15 - bit)) & 1 == 1
            for y in 0..<b {
                let row = frame.row(y, plane: 0)
                let bpp = format == .rgb24 ? 3 : 1
                for x in (bit * b * bpp)..<((bit + 1) * b * bpp) { row[x] = on ? 255 : 0 }
            }
            if format == .yuv420p {
                for p in 1...2 {
                    for y in 0..<(b / 2) {
                        let row = frame.row(y, plane: p)
                        for x in (bit * b / 2)..<((bit + 1) * b / 2) { row[x] = 128 }
                    }
                }
            }
        }
    }

    /// Reads the stamped frame number from an rgb24, rgba, bgra, gray8 or yuv420p frame whose width
    /// is the pattern's width divided by `scale` (1 or 2 …); nil if the frame is too small.
    public static func readStamp(from frame: Frame, scale: Int = 1) -> Int? {
        let b = blockSize / scale
        guard frame.width >= 16 * b, frame.height >= b, b >= 2 else { return nil }
        let bpp: Int
        switch frame.format {
        case .rgb24: bpp = 3
        case .rgba, .bgra: bpp = 4
        case .gray8, .yuv420p, .nv12: bpp = 1
        default: return nil
        }
        var number = 0
        let row = frame.row(b / 2, plane: 0)
        for bit in 0..<16 {
            let x = bit * b + b / 2
            let v = Int(row[x * bpp])
            number = (number << 1) | (v > 128 ? 1 : 0)
        }
        return number
    }
}

extension PatternSource {
    /// The options of the `pattern` node type, each written once.
    public enum OptionSpecs {
        public static let width = NodeOption.int("width", default: 640, 256...8192, "frame width (at least 256 for the stamp)")
        public static let height = NodeOption.int("height", default: 480, 16...8192, "frame height")
        public static let fps = NodeOption.number("fps", default: 30, 0.1...1000, "frame rate")
        public static let frames = NodeOption.int("frames", default: 300, 1...10_000_000, "number of frames")
        public static let format = NodeOption<PixelFormat>.choice("format", [("rgb24", .rgb24), ("yuv420p", .yuv420p)], default: "yuv420p", "pixel format")
        public static let all = [width.spec, height.spec, fps.spec, frames.spec, format.spec]
    }
}
