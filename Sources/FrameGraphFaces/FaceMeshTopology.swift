import Foundation
import FrameGraph

/// The lines between the face mesh's 468 points, read from `face_mesh_connections.json` (made by
/// `tools/models/fetch_mediapipe_models.sh` from MediaPipe's own list in the wheel it fetches) as
/// the topologies `face-mesh` (2,556 lines: the tesselation) and `face-mesh-contours` (124: lips,
/// eyes, brows, face oval). The file is checked: bounded size, indices within 0…467. It is found
/// along the model search path, like a model.
public enum FaceMeshTopology {
    public static let points = 468
    public static let meshName = "face-mesh"
    public static let contoursName = "face-mesh-contours"
    /// The lines' file, looked for beside the models.
    public static let fileName = "face_mesh_connections.json"

    private struct File: Decodable {
        let tesselation: [[Int]]
        let contours: [[Int]]
    }

    /// Reads the file; returns both topologies (mesh, contours).
    public static func load(path: String) throws -> (mesh: LandmarkTopology, contours: LandmarkTopology) {
        let data = try FileCheck.read(path, what: "face mesh lines", maxBytes: 1 << 20)
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw GraphError.io(path: path, reason: "face mesh lines: not the expected JSON ({\"tesselation\": [[a, b], …], \"contours\": …})")
        }
        func topology(_ name: String, _ pairs: [[Int]]) throws -> LandmarkTopology {
            guard pairs.count <= 10_000 else { throw GraphError.io(path: path, reason: "face mesh lines: \(pairs.count) lines in '\(name)', more than 10000") }
            var lines: [LandmarkTopology.Connection] = []
            for (i, p) in pairs.enumerated() {
                guard p.count == 2, (0..<points).contains(p[0]), (0..<points).contains(p[1]) else {
                    throw GraphError.io(path: path, reason: "face mesh lines: line \(i) of '\(name)' is \(p), not two point indices in 0…\(points - 1)")
                }
                lines.append(.init(p[0], p[1]))
            }
            return LandmarkTopology(name: name, connections: lines)
        }
        return (try topology(meshName, file.tesselation), try topology(contoursName, file.contours))
    }
}
