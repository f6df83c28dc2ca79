import FrameGraph
import FrameGraphResults

/// One output frame of a run as a program gets it: its index and media time, the frame (packed
/// RGB; nil when the run was opened without frames) and its results as JSON Lines text (the results
/// file's schema, docs/RESULTS.md: one line per results producer, or one line with the frame's own,
/// usually empty, results when the pipeline has no producer).
final class RunItem: @unchecked Sendable {
    let index: Int
    let time: Double
    let frame: Frame?
    let resultsLines: String

    init(index: Int, time: Double, frame: Frame?, resultsLines: String) {
        self.index = index
        self.time = time
        self.frame = frame
        self.resultsLines = resultsLines
    }
}
