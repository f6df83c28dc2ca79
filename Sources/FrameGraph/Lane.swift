import Foundation

/// A thread of the run, as the trace and the clock see it: sources, one worker per slow node, and the
/// output ticker each have their own lane. Work done inline runs on the lane that delivered the frame.
public struct Lane: Hashable, Sendable {
    /// Track id in traces (also the clock's tie-break order: lower wakes first).
    public let id: Int
    /// Track name in traces.
    public let name: String

    public init(id: Int, name: String) {
        self.id = id
        self.name = name
    }

    /// The lane of the thread that called ``GraphRunner/run()``.
    public static let main = Lane(id: 0, name: "main")

    /// The lane of the calling thread: set by the runner on the threads it starts (sources, workers,
    /// the output clock), ``main`` elsewhere. A node that sleeps on the run's clock (``SlowNode``)
    /// passes it, so ties between threads break the same way in every run.
    public static var current: Lane {
        get { Thread.current.threadDictionary[laneKey] as? Lane ?? .main }
        set { Thread.current.threadDictionary[laneKey] = newValue }
    }

    private static let laneKey = "FrameGraph.Lane.current"
}
