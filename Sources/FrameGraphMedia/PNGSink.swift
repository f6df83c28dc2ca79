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

    /// The first file and one far into the run: two patterns that differ only in their field's
    /// width (`f-%d.png`, `f-%02d.png`) write the same files from frame 10 on, and this shows it.
    override public var filesWritten: [String] {
        let first = PNGSink.path(pattern, index: 0), later = PNGSink.path(pattern, index: 123_456_789)
        return first == later ? [first] : [first, later]
    }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        try PNGSink.checkPattern(pattern, node: name)
        if let input = inputs.first { try requireEightBit(input, hint: "add a 'convert' node") }
        return nil
    }

    override public func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        guard index % every == 0 else { return }
        let path = PNGSink.path(pattern, index: index)
        if let input = context.inputFile(sameAs: path) {
            throw GraphError.io(path: path, reason: "node '\(name)' would overwrite \(input), an input of this run: choose another pattern")
        }
        try writer.writePNG(frame, to: path)
        written.append(path)
    }

    /// Refuses patterns with more than one `%` field or an absurd field width.
    static func checkPattern(_ pattern: String, node: String) throws {
        if let problem = ImageSequence.problem(with: pattern) {
            throw GraphError.invalidOption(node: node, option: "path", reason: problem)
        }
    }

    /// `pattern` with its `%d`-style field replaced by `index`.
    static func path(_ pattern: String, index: Int) -> String { ImageSequence.path(pattern, index: index) }
}

extension PNGSink {
    /// The options of the `png` node type.
    public enum OptionSpecs {
        public static let path = NodeOption<String?>.text("path", required: true, "file pattern, e.g. out/frame-%04d.png")
        public static let every = NodeOption.int("every", default: 1, 1...1_000_000, "write frames 0, N, 2N …")
        public static let all = [path.spec, every.spec]
    }
}
