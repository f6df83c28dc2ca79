import FFmpegSupport
import Foundation
import FrameGraph

/// Writes every Nth output frame as a PNG file. The path is a pattern with `%d` (or `%05d` …) for the
/// output frame number; without one, the same file is overwritten (handy for a single image).
///
/// ```swift
/// resize --> PNGSink(name: "snap", pattern: "out/frame-%04d.png", every: 30)
/// ```
public final class PNGSink: SinkNode, @unchecked Sendable {
    public var pattern: String
    public let every: Int
    private let writer = ImageWriter()
    /// Files written so far.
    public private(set) var written: [String] = []

    public init(name: String = "png", pattern: String, every: Int = OptionSpecs.every.defaultValue) {
        self.pattern = pattern
        self.every = max(1, every)
        super.init(name: name)
    }

    override public var kind: String { "png" }

    override public var filesWritten: [String] { ImageSequenceOutput.filesWritten(pattern) }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        try ImageSequenceOutput.checkPattern(pattern, node: name)
        if let input = inputs.first { try requireEightBit(input, hint: "add a 'convert' node") }
        return nil
    }

    override public func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        guard index % every == 0 else { return }
        written.append(try ImageSequenceOutput.write(frame, index: index, pattern: pattern, node: name, writer: writer, quality: 3,
                                                     context: context))
    }
}

extension PNGSink {
    /// The options of the `png` node type.
    public enum OptionSpecs {
        public static let path = NodeOption<String?>.text("path", required: true, "file pattern, e.g. out/frame-%04d.png")
        public static let every = NodeOption.int("every", default: 1, 1...1_000_000, "write frames 0, N, 2N …")
        public static let all = [path.spec, every.spec]
    }
}
