/// Which landmarks of a set are joined by lines when drawn (a face mesh's edges, the 68-point
/// contour), under a stable name. Results carry a topology by reference and results files by name
/// only, so the edges are not repeated on every frame.
///
/// The modules that produce such points define their topologies (faces in FrameGraphFaces, the
/// 68-point contour in FrameGraphMetalTensor); reading a results file resolves names through a
/// ``TopologyCatalog`` it is given, and a name the catalog lacks comes back with no edges.
public final class LandmarkTopology: Sendable, Equatable, CustomStringConvertible {
    /// Stable name, written into results files ("face-contour-68").
    public let name: String
    /// Pairs of point indices to join.
    public let connections: [Connection]

    /// A line between two points of the set.
    public struct Connection: Sendable, Equatable {
        public var from: Int
        public var to: Int
        public init(_ from: Int, _ to: Int) {
            self.from = from
            self.to = to
        }
    }

    public init(name: String, connections: [Connection]) {
        self.name = name
        self.connections = connections
    }

    /// Joins consecutive indices of each run in `paths` (a polyline per run).
    public convenience init(name: String, paths: [[Int]]) {
        var edges: [Connection] = []
        for path in paths where path.count > 1 {
            for i in 1..<path.count { edges.append(Connection(path[i - 1], path[i])) }
        }
        self.init(name: name, connections: edges)
    }

    public static func == (a: LandmarkTopology, b: LandmarkTopology) -> Bool { a.name == b.name }
    public var description: String { "\(name) (\(connections.count) lines)" }
}

/// Landmark topologies by name, for reading results files back: a value handed to the reader, not
/// a process-wide registry.
///
/// ```swift
/// let records = try ResultsLines.read(path: "faces.jsonl", topologies: TopologyCatalog([FaceMesh.contours]))
/// ```
public struct TopologyCatalog: Sendable {
    public private(set) var topologies: [String: LandmarkTopology] = [:]

    public init(_ topologies: [LandmarkTopology] = []) {
        for t in topologies { self.topologies[t.name] = t }
    }

    /// The topology called `name`, or one with that name and no lines.
    public func named(_ name: String) -> LandmarkTopology {
        topologies[name] ?? LandmarkTopology(name: name, connections: [])
    }

    /// Where a decoder finds the catalog (`JSONDecoder.userInfo`).
    public static let userInfoKey = CodingUserInfoKey(rawValue: "FrameGraphResults.TopologyCatalog")!
}
