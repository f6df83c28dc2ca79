import Foundation

/// Results with the frame they describe: its position in the source, its media time and its size.
/// One line of a results file (``ResultsLines``), and what a ``ResultsTap`` hands to a program.
public struct TimedResults: Sendable, Equatable {
    /// The frame's position in its source's output, from 0.
    public var index: Int
    /// The frame's presentation time in the media, in seconds.
    public var time: Double
    /// Size of the frame the normalised coordinates refer to.
    public var width: Int
    public var height: Int
    public var results: Results

    public init(index: Int, time: Double, width: Int, height: Int, results: Results) {
        self.index = index
        self.time = time
        self.width = width
        self.height = height
        self.results = results
    }

}

extension TimedResults: Codable {
    // One flat object per line; the names are the results file's documented schema (docs/RESULTS.md).
    private enum CodingKeys: String, CodingKey { case node, index, time, width, height, detections, landmarks, classifications }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        index = try c.decode(Int.self, forKey: .index)
        time = try c.decode(Double.self, forKey: .time)
        width = try c.decode(Int.self, forKey: .width)
        height = try c.decode(Int.self, forKey: .height)
        results = Results(producer: try c.decode(String.self, forKey: .node),
                          detections: try c.decodeIfPresent([Detection].self, forKey: .detections) ?? [],
                          landmarks: try c.decodeIfPresent([LandmarkSet].self, forKey: .landmarks) ?? [],
                          classifications: try c.decodeIfPresent([Classification].self, forKey: .classifications) ?? [])
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(results.producer, forKey: .node)
        try c.encode(index, forKey: .index)
        try c.encode(time, forKey: .time)
        try c.encode(width, forKey: .width)
        try c.encode(height, forKey: .height)
        try c.encode(results.detections, forKey: .detections)
        try c.encode(results.landmarks, forKey: .landmarks)
        try c.encode(results.classifications, forKey: .classifications)
    }
}
