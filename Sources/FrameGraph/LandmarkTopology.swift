/// Which landmarks of a set are joined by lines when drawn (a face mesh's edges, the 68-point
/// contour), under a stable name. Results carry a topology by reference and results files by name
/// only, so the edges are not repeated on every frame.
///
/// Known topologies are registered once (``register(_:)``) by the code that produces such points;
/// a name read from a file that is not registered comes back as a topology with no edges.
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

    private static let registry = Protected<[String: LandmarkTopology]>([
        faceContour68.name: faceContour68,
    ])

    /// Makes `topology` known by its name (for results read back from files).
    public static func register(_ topology: LandmarkTopology) {
        registry.withLock { $0[topology.name] = topology }
    }

    /// The registered topology called `name`, or one with that name and no lines.
    public static func named(_ name: String) -> LandmarkTopology {
        registry.withLock { $0[name] } ?? LandmarkTopology(name: name, connections: [])
    }

    /// The iBUG 300-W 68-point face layout (dlib's, MetalTensor's demo): jaw, brows, nose, eyes
    /// (closed), lips (closed).
    public static let faceContour68 = LandmarkTopology(name: "face-contour-68", paths: [
        Array(0...16), Array(17...21), Array(22...26), Array(27...30), Array(30...35) + [30],
        Array(36...41) + [36], Array(42...47) + [42], Array(48...59) + [48], Array(60...67) + [60],
    ])
}
