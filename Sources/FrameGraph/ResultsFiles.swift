import Foundation
@_exported import FrameGraphResults

// Results are what a frame carries (`Frame.results`); their types and file format live in
// FrameGraphResults, re-exported here so `import FrameGraph` is enough to use them.

extension TimedResults {
    /// The results attached to `frame` (empty ones, made by `producer`, when it carries none).
    public init(frame: Frame, producer: String) {
        self.init(index: frame.sequence, time: frame.mediaTime, width: frame.width, height: frame.height,
                  results: frame.results ?? Results(producer: producer))
    }
}

extension ResultsLines {
    /// Every record of a results file, in order (blank lines are skipped), read through the run's
    /// file checks (a regular file of at most ``maxFileBytes``).
    public static func read(path: String, topologies: TopologyCatalog = TopologyCatalog()) throws -> [TimedResults] {
        try parse(try FileCheck.read(path, what: "results file", maxBytes: maxFileBytes), file: path, topologies: topologies)
    }
}
