import FFmpegSupport
import FrameGraph

/// Writing numbered pictures (`out/f-%05d.png`): what the `png` sink and the `encode` sink with a
/// pattern path share — the names checked before the run, and each file written through its
/// temporary name unless it is an input of the run.
enum ImageSequenceOutput {
    /// The first file and one far into the run: two patterns that differ only in their field's
    /// width (`f-%d.png`, `f-%02d.png`) write the same files from frame 10 on, and this shows it.
    static func filesWritten(_ pattern: String) -> [String] {
        let first = ImageSequence.path(pattern, index: 0), later = ImageSequence.path(pattern, index: 123_456_789)
        return first == later ? [first] : [first, later]
    }

    /// Refuses patterns with more than one `%` field or an absurd field width.
    static func checkPattern(_ pattern: String, node: String) throws {
        if let problem = ImageSequence.problem(with: pattern) {
            throw GraphError.invalidOption(node: node, option: "path", reason: problem)
        }
    }

    /// Writes `frame` as picture `index` of `pattern` (PNG or JPEG by extension) and returns its path.
    static func write(_ frame: Frame, index: Int, pattern: String, node: String, writer: ImageWriter, quality: Int,
                      context: RunContext) throws -> String {
        let path = ImageSequence.path(pattern, index: index)
        if let input = context.inputFile(sameAs: path) {
            throw GraphError.io(path: path, reason: "node '\(node)' would overwrite \(input), an input of this run: choose another pattern")
        }
        try writer.write(frame, to: path, quality: quality)
        return path
    }
}
