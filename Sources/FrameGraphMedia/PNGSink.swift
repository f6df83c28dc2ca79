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

    public init(name: String = "png", pattern: String, every: Int = 1) {
        self.pattern = pattern
        self.every = max(1, every)
        super.init(name: name)
    }

    override public var kind: String { "png" }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        if let input = inputs.first, case .planarFloat32 = input.format {
            throw GraphError.mismatch(node: name, port: "in", field: "pixel format", expected: "an 8-bit format (add a 'convert' node)",
                                      got: input.format.description)
        }
        return nil
    }

    override public func start(context: RunContext) throws {
        let directory = URL(fileURLWithPath: pattern).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override public func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        guard index % every == 0 else { return }
        let path = PNGSink.path(pattern, index: index)
        try writer.writePNG(frame, to: path)
        written.append(path)
    }

    /// `pattern` with its `%d`-style field replaced by `index`.
    static func path(_ pattern: String, index: Int) -> String {
        guard let range = pattern.range(of: #"%0?\d*d"#, options: .regularExpression) else { return pattern }
        let spec = String(pattern[range])
        let width = Int(spec.dropFirst().dropLast()) ?? 0
        let padZero = spec.hasPrefix("%0")
        var number = String(index)
        if number.count < width { number = String(repeating: padZero ? "0" : " ", count: width - number.count) + number }
        return pattern.replacingCharacters(in: range, with: number)
    }
}
