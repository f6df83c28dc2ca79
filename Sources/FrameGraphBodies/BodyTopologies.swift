import FrameGraph

/// The landmark topologies of this module, for reading results files back
/// (`ResultsLines.read(path:topologies:)`).
///
/// ```swift
/// let records = try ResultsLines.read(path: "hands.jsonl", topologies: BodyTopologies.catalog)
/// ```
public enum BodyTopologies {
    public static let all = [HandTopology.hand, PoseTopology.pose]
    public static var catalog: TopologyCatalog { TopologyCatalog(all) }
}
