import Foundation

/// What a network (or any node) found in one frame: detections, landmark sets and classifications.
/// Masks are not results: they stay frames.
///
/// Coordinates are **normalised** to the frame the results are attached to: x from 0 (left edge)
/// to 1 (right edge) across its width, y from 0 (top) to 1 (bottom) down its height, whatever its
/// pixel size, so they stay right when the frame is scaled (a crop re-projects them). Values a little
/// outside 0…1 are allowed (a box partly outside the frame).
///
/// ```swift
/// var results = Results(producer: "faces")
/// results.detections.append(Detection(box: ResultBox(x: 0.4, y: 0.2, width: 0.2, height: 0.3), score: 0.93, label: "face"))
/// frame.results = results
/// ```
public struct Results: Sendable, Equatable, Codable {
    /// The node that made them (its name in the pipeline).
    public var producer: String
    public var detections: [Detection]
    public var landmarks: [LandmarkSet]
    public var classifications: [Classification]

    public init(producer: String, detections: [Detection] = [], landmarks: [LandmarkSet] = [], classifications: [Classification] = []) {
        self.producer = producer
        self.detections = detections
        self.landmarks = landmarks
        self.classifications = classifications
    }

    /// Whether nothing was found.
    public var isEmpty: Bool { detections.isEmpty && landmarks.isEmpty && classifications.isEmpty }

    /// The same results under the map x' = x·scaleX + offsetX, y' = y·scaleY + offsetY of normalised
    /// coordinates (a crop, a letterbox undone). Depth and visibility are kept; box sizes scale.
    public func mapped(scaleX: Float, scaleY: Float, offsetX: Float, offsetY: Float) -> Results {
        func p(_ q: ResultPoint) -> ResultPoint { ResultPoint(x: q.x * scaleX + offsetX, y: q.y * scaleY + offsetY) }
        var out = self
        out.detections = detections.map { d in
            var d = d
            d.box = ResultBox(x: d.box.x * scaleX + offsetX, y: d.box.y * scaleY + offsetY, width: d.box.width * scaleX, height: d.box.height * scaleY)
            d.keypoints = d.keypoints.map(p)
            return d
        }
        out.landmarks = landmarks.map { set in
            var set = set
            set.points = set.points.map { Landmark(x: $0.x * scaleX + offsetX, y: $0.y * scaleY + offsetY, z: $0.z.map { $0 * scaleX }, visibility: $0.visibility) }
            return set
        }
        return out
    }

    /// These results and `other`'s together (the producer of the first is kept).
    public func merged(with other: Results) -> Results {
        Results(producer: producer, detections: detections + other.detections, landmarks: landmarks + other.landmarks,
                classifications: classifications + other.classifications)
    }
}

/// A point in normalised frame coordinates (see ``Results``).
public struct ResultPoint: Sendable, Equatable, Codable {
    public var x: Float
    public var y: Float

    public init(x: Float, y: Float) {
        self.x = x
        self.y = y
    }

    /// Written as `[x, y]`.
    public init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        x = try c.decode(Float.self)
        y = try c.decode(Float.self)
        guard c.isAtEnd else { throw ResultsDecodingError.shape(decoder.codingPath, "a point is [x, y]") }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.unkeyedContainer()
        try c.encode(x)
        try c.encode(y)
    }
}

/// An axis-aligned rectangle in normalised frame coordinates: left, top, width, height.
public struct ResultBox: Sendable, Equatable, Codable {
    public var x: Float
    public var y: Float
    public var width: Float
    public var height: Float

    public init(x: Float, y: Float, width: Float, height: Float) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// Written as `[x, y, width, height]`.
    public init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        x = try c.decode(Float.self)
        y = try c.decode(Float.self)
        width = try c.decode(Float.self)
        height = try c.decode(Float.self)
        guard c.isAtEnd else { throw ResultsDecodingError.shape(decoder.codingPath, "a box is [x, y, width, height]") }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.unkeyedContainer()
        for v in [x, y, width, height] { try c.encode(v) }
    }
}

/// One object found in a frame: where (a box, optional keypoints), how sure, and what.
public struct Detection: Sendable, Equatable, Codable {
    public var box: ResultBox
    /// Confidence, usually 0…1.
    public var score: Float
    /// Class name, when the model has labels.
    public var label: String?
    /// Class index in the model's output, when it has classes.
    public var index: Int?
    /// Points tied to the object (a face detector's eyes, nose, mouth, ears), normalised.
    public var keypoints: [ResultPoint]

    public init(box: ResultBox, score: Float, label: String? = nil, index: Int? = nil, keypoints: [ResultPoint] = []) {
        self.box = box
        self.score = score
        self.label = label
        self.index = index
        self.keypoints = keypoints
    }

    private enum CodingKeys: String, CodingKey { case box, score, label, index, keypoints }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        box = try c.decode(ResultBox.self, forKey: .box)
        score = try c.decode(Float.self, forKey: .score)
        label = try c.decodeIfPresent(String.self, forKey: .label)
        index = try c.decodeIfPresent(Int.self, forKey: .index)
        keypoints = try c.decodeIfPresent([ResultPoint].self, forKey: .keypoints) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(box, forKey: .box)
        try c.encode(score, forKey: .score)
        try c.encodeIfPresent(label, forKey: .label)
        try c.encodeIfPresent(index, forKey: .index)
        if !keypoints.isEmpty { try c.encode(keypoints, forKey: .keypoints) }
    }
}

/// One landmark: a point with an optional depth (same scale as x, MediaPipe's convention) and an
/// optional visibility (0…1).
public struct Landmark: Sendable, Equatable, Codable {
    public var x: Float
    public var y: Float
    public var z: Float?
    public var visibility: Float?

    public init(x: Float, y: Float, z: Float? = nil, visibility: Float? = nil) {
        self.x = x
        self.y = y
        self.z = z
        self.visibility = visibility
    }

    /// Written as `[x, y]`, `[x, y, z]` or `[x, y, z, visibility]` (z `null` when only visibility is known).
    public init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        x = try c.decode(Float.self)
        y = try c.decode(Float.self)
        if !c.isAtEnd { z = try c.decodeNil() ? nil : try c.decode(Float.self) }
        if !c.isAtEnd { visibility = try c.decode(Float.self) }
        guard c.isAtEnd else { throw ResultsDecodingError.shape(decoder.codingPath, "a landmark is [x, y], [x, y, z] or [x, y, z, visibility]") }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.unkeyedContainer()
        try c.encode(x)
        try c.encode(y)
        if let visibility {
            if let z { try c.encode(z) } else { try c.encodeNil() }
            try c.encode(visibility)
        } else if let z {
            try c.encode(z)
        }
    }
}

/// The points of one object (a face's 468 mesh points, a hand's 21), and how to draw lines
/// between them (its ``LandmarkTopology``, by name).
public struct LandmarkSet: Sendable, Equatable, Codable {
    /// What the points belong to ("face", "hand").
    public var label: String?
    public var points: [Landmark]
    /// Which points are joined when drawn; nil: points only.
    public var topology: LandmarkTopology?
    /// What kind of object the set is, when a model tells (a hand's handedness: "Left" or
    /// "Right", with its score and class index); written only when present.
    public var classification: Classification?
    /// The same points in metres, in the object's own frame (MediaPipe's "world landmarks": a
    /// body's origin between its hips, a hand's at its centre; x right, y down, z toward the
    /// camera's far side, turned upright as the frame shows it), when the model gives them and they
    /// were asked for; written as `world` only when present. Frame maps (crops) leave them alone.
    public var world: [Landmark]?

    public init(label: String? = nil, points: [Landmark], topology: LandmarkTopology? = nil, classification: Classification? = nil,
                world: [Landmark]? = nil) {
        self.label = label
        self.points = points
        self.topology = topology
        self.classification = classification
        self.world = world
    }

    private enum CodingKeys: String, CodingKey { case label, points, topology, classification, world }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        label = try c.decodeIfPresent(String.self, forKey: .label)
        points = try c.decode([Landmark].self, forKey: .points)
        let catalog = decoder.userInfo[TopologyCatalog.userInfoKey] as? TopologyCatalog ?? TopologyCatalog()
        topology = try c.decodeIfPresent(String.self, forKey: .topology).map { catalog.named($0) }
        classification = try c.decodeIfPresent(Classification.self, forKey: .classification)
        world = try c.decodeIfPresent([Landmark].self, forKey: .world)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(label, forKey: .label)
        try c.encode(points, forKey: .points)
        try c.encodeIfPresent(topology?.name, forKey: .topology)
        try c.encodeIfPresent(classification, forKey: .classification)
        try c.encodeIfPresent(world, forKey: .world)
    }
}

/// One label for the whole frame (or a region): what, how sure, and its index in the model's output.
public struct Classification: Sendable, Equatable, Codable {
    public var label: String
    public var confidence: Float
    public var index: Int

    public init(label: String, confidence: Float, index: Int) {
        self.label = label
        self.confidence = confidence
        self.index = index
    }
}

/// A results file or stream had the wrong shape at `path`.
public enum ResultsDecodingError: Error, Sendable, CustomStringConvertible {
    case shape([any CodingKey], String)

    public var description: String {
        switch self {
        case .shape(let path, let message):
            let at = codingPathText(path)
            return at.isEmpty ? message : "\(at): \(message)"
        }
    }
}

/// A decoding path as people read it: `landmarks[0].points[2]`.
func codingPathText(_ path: [any CodingKey]) -> String {
    let p = path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
    return p.hasPrefix(".") ? String(p.dropFirst()) : p
}
