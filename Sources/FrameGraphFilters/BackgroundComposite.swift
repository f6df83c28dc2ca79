import FFmpegSupport
import FrameGraph

/// Composites a frame over a new background by a segmentation mask: the person (mask 255) is kept,
/// the rest replaced by a colour, a blurred copy of the frame, or an image; or, for inspection, the
/// mask is shown as a tint over the frame.
///
/// Ports: 0 `frame` (rgb24 or yuv420p, full resolution), 1 `mask` (gray8, any size: upsampled
/// bilinearly to the frame). Live runs pair each frame with the newest mask; offline runs with its own.
///
/// ```swift
/// let matte = BackgroundComposite(name: "matte", mode: .blur(radius: 16))
/// source --> matte.port(0); net --> matte.port(1)
/// ```
public final class BackgroundComposite: CompositeNode, @unchecked Sendable {
    /// What replaces the background.
    public enum Mode: Sendable, Equatable {
        /// A solid colour (R, G, B).
        case colour(UInt8, UInt8, UInt8)
        /// The frame itself, blurred (about `radius` pixels).
        case blur(radius: Int)
        /// An image file (scaled to the frame).
        case image(path: String)
        /// The frame with the person tinted in (R, G, B) at 50 %, to inspect the mask.
        case overlay(UInt8, UInt8, UInt8)
    }

    public let mode: Mode
    /// Whether compositing runs on its own worker thread (default true): the source and the network
    /// worker then go straight back to decoding and predicting, which pipelines the three stages.
    public let ownWorker: Bool
    override public var execution: Execution { ownWorker ? .worker : .inline }
    private let maskScaler = Scaler(method: .bilinear)
    private let downScaler = Scaler(method: .area)
    private let upScaler = Scaler(method: .bilinear)
    private var background: Frame?
    private var halfMask: Frame?
    private var small: Frame?
    private let pool = BufferPool(maxFreePerSize: 8)

    override public var filesRead: [String] {
        if case .image(let path) = mode { return [path] }
        return []
    }

    public init(name: String = "background", mode: Mode, ownWorker: Bool = OptionSpecs.worker.defaultValue) {
        self.mode = mode
        self.ownWorker = ownWorker
        super.init(name: name)
    }

    override public var inputPorts: [String] { ["frame", "mask"] }
    override public var kind: String { "background" }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard inputs.count == 2 else { return nil }
        try require(format: inputs[0].format, in: [.rgb24, .yuv420p], port: 0)
        try require(format: inputs[1].format, in: [.gray8], port: 1)
        return inputs[0]
    }

    override public func start(context: RunContext) throws {
        guard let frame = inputs.first else { return }
        background = nil
        backgroundColor = nil
        switch mode {
        case .colour, .overlay:
            // The fill itself is made for the first frame, in its colour description (matchBackground).
            if case .overlay = mode {
                let half = Frame.make(.gray8, width: frame.width, height: frame.height)
                for y in 0..<frame.height { half.row(y).update(repeating: 128) }
                halfMask = half
            }
        case .image(let path):
            let reader = try MediaReader(path: path)
            guard let picture = try reader.nextFrame() else {
                throw GraphError.invalidOption(node: name, option: "image", reason: "\(path) holds no picture")
            }
            loadedPicture = picture
        case .blur(let radius):
            let factor = max(2, radius)
            small = Frame.make(frame.format, width: max(2, frame.width / factor) & ~1, height: max(2, frame.height / factor) & ~1)
        }
    }

    /// The colour description the background picture was made for (nil: not made yet).
    private var backgroundColor: ColorDescription?

    /// Makes the solid or image background for `frame`'s format, size and colour description (a
    /// full-range frame needs full-range fill values): on the first frame, and again if the frames'
    /// colour changes.
    private func matchBackground(to frame: Frame) throws {
        guard frame.color != backgroundColor else { return }
        backgroundColor = frame.color
        switch mode {
        case .colour(let r, let g, let b), .overlay(let r, let g, let b):
            background = try Self.solid(r, g, b, like: frame.description, color: frame.color)
        case .image:
            guard let picture = loadedPicture else { return }
            var scaled = Frame.make(frame.description)
            scaled.color = frame.color
            try Scaler(method: .bicubic).scale(picture, into: scaled)
            background = scaled
        case .blur:
            break
        }
    }

    override public func combine(_ frames: [Frame], context: RunContext) throws -> Frame? {
        let frame = frames[0], maskIn = frames[1]
        try matchBackground(to: frame)
        let mask: Frame
        if maskIn.width == frame.width && maskIn.height == frame.height {
            mask = maskIn
        } else {
            mask = Frame.make(.gray8, width: frame.width, height: frame.height, pool: pool)
            try maskScaler.scale(maskIn, into: mask)
        }
        var out = Frame.make(frame.description, pool: pool)
        switch mode {
        case .colour, .image:
            guard let background else { throw GraphError.nodeFailed(node: name, reason: "not started") }
            AlphaBlend.blend(foreground: frame, background: background, mask: mask, into: out)
        case .blur:
            guard let small else { throw GraphError.nodeFailed(node: name, reason: "not started") }
            let blurred = Frame.make(frame.description, pool: pool)
            try downScaler.scale(frame, into: small)
            try upScaler.scale(small, into: blurred)
            AlphaBlend.blend(foreground: frame, background: blurred, mask: mask, into: out)
        case .overlay:
            guard let background, let halfMask else { throw GraphError.nodeFailed(node: name, reason: "not started") }
            let tinted = Frame.make(frame.description, pool: pool)
            AlphaBlend.blend(foreground: background, background: frame, mask: halfMask, into: tinted)
            AlphaBlend.blend(foreground: tinted, background: frame, mask: mask, into: out)
        }
        out.copyTiming(from: frame)
        return out
    }

    /// The `image` background as read (converted to the frames' format and colour on the first frame).
    private var loadedPicture: Frame?

    /// A frame of `description` filled with one RGB colour (Y'CbCr values per `color`).
    static func solid(_ r: UInt8, _ g: UInt8, _ b: UInt8, like description: FrameDescription, color: ColorDescription = .unspecified) throws -> Frame {
        let rgb = Frame.make(.rgb24, width: description.width, height: description.height)
        for y in 0..<description.height {
            let row = rgb.row(y)
            for x in 0..<description.width {
                row[3 * x] = r
                row[3 * x + 1] = g
                row[3 * x + 2] = b
            }
        }
        if description.format == .rgb24 { return rgb }
        var out = Frame.make(description)
        out.color = color
        try Scaler().scale(rgb, into: out)
        return out
    }
}

extension BackgroundComposite {
    /// The `mode` option's words.
    public enum ModeName: String, Sendable, CaseIterable { case colour, blur, image, overlay }

    /// The options of the `background` node type.
    public enum OptionSpecs {
        public static let mode = NodeOption<ModeName>.choice("mode", default: .colour, "what replaces the background")
        public static let colour = NodeOption<String?>.text("colour", required: false,
                                                            "RRGGBB for mode=colour (default 00b140) and the tint for overlay (default ff00ff)")
        public static let blur = NodeOption.int("blur", default: 16, 2...256, "blur radius in pixels for mode=blur")
        public static let image = NodeOption<String?>.text("image", required: false, "image file for mode=image")
        public static let worker = NodeOption.flag("worker", default: true, "composite on a worker thread of its own (pipelines with the network)")
        public static let all = [mode.spec, colour.spec, blur.spec, image.spec, PairingChoice.option.spec, worker.spec]
    }
}
