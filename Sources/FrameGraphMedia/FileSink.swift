import FFmpegSupport
import Foundation
import FrameGraph

/// Encodes its input to a video file: H.264 (libx264) in MP4 or MKV by extension, with timestamps at
/// the run's clock rate (output frame `i` at `i / fps` seconds).
///
/// ```swift
/// resize --> FileSink(name: "out", path: "o.mp4", settings: .init(crf: 20, preset: "fast"))
/// ```
/// The file is written under a temporary name beside `path` and finalized and renamed into place in
/// ``finish(context:)``, which the runner always calls, also after Ctrl-C or an error upstream: what
/// was written so far plays, and `path` never holds a half-written file.
public final class FileSink: SinkNode, @unchecked Sendable {
    public var path: String
    public let settings: MediaWriter.Settings
    private var writer: MediaWriter?

    public init(name: String = "output", path: String, settings: MediaWriter.Settings = .init()) {
        self.path = path
        self.settings = settings
        super.init(name: name)
    }

    override public var kind: String { "encode" }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard let input = inputs.first else { return nil }
        try requireEightBit(input, hint: "add a 'convert' node")
        guard input.width % 2 == 0, input.height % 2 == 0 else {
            throw GraphError.mismatch(node: name, port: "in", field: "size", expected: "even width and height for H.264 4:2:0",
                                      got: "\(input.width)x\(input.height)")
        }
        return nil
    }

    override public var filesWritten: [String] { [path] }

    override public func start(context: RunContext) throws {
        guard let input = inputs.first else { return }
        writer = try MediaWriter(path: path, width: input.width, height: input.height, fps: context.fps, settings: settings)
    }

    override public func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        try writer?.write(frame, index: index)
    }

    override public func finish(context: RunContext) throws {
        defer { writer = nil }
        try writer?.finish()
    }
}

extension FileSink {
    /// The options of the `encode` node type, each written once (``MediaWriter/Settings`` holds the
    /// same defaults for programs that use the writer directly).
    public enum OptionSpecs {
        public static let path = NodeOption<String?>.text("path", required: true, "output file (the CLI's --output replaces it)")
        public static let crf = NodeOption.int("crf", default: MediaWriter.Settings.defaultCRF, 0...51, "quality, 0-51 (lower is better)")
        public static let preset = NodeOption.choice("preset", MediaWriter.Settings.presets, default: MediaWriter.Settings.defaultPreset,
                                                     "x264 speed preset")
        public static let threads = NodeOption.int("threads", default: 0, 0...64, "encoder threads (0: encoder chooses)")
        public static let all = [path.spec, crf.spec, preset.spec, threads.spec]
    }
}
