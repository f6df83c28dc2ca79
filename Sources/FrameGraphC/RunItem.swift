import Foundation
import FrameGraph
import FrameGraphMedia

/// One output frame of a run as a program gets it: its index and media time, its stream (a run
/// with several), the frame (nil when
/// the run was opened without frames) and its results as JSON Lines text (the results file's schema,
/// docs/RESULTS.md: one line per results producer, or one line with the frame's own, usually empty,
/// results when the pipeline has no producer).
///
/// The frame stays in the pipeline's own format until the program asks for its pixels
/// (``rgb()``): it is converted to packed RGB then, once, and a frame nobody looks at costs no
/// conversion.
final class RunItem: @unchecked Sendable {
    let index: Int
    let time: Double
    /// The stream the frame belongs to in a run with several (nil in a one-stream run).
    let stream: String?
    let resultsLines: String
    private let converter: RGBConverter?
    private let lock = NSLock()
    private var source: Frame?
    private var converted: Frame?

    init(index: Int, time: Double, stream: String? = nil, frame: Frame?, converter: RGBConverter?, resultsLines: String) {
        self.index = index
        self.time = time
        self.stream = stream
        self.source = frame
        self.converter = converter
        self.resultsLines = resultsLines
    }

    /// The frame as packed RGB (converted at the first call; the frame in the pipeline's format goes
    /// back to its pool then), nil when the item has none.
    func rgb() throws -> Frame? {
        lock.lock()
        defer { lock.unlock() }
        if let converted { return converted }
        guard let source else { return nil }
        let made = try converter.map { try $0.rgb(source) } ?? source
        converted = made
        self.source = nil
        return made
    }
}
