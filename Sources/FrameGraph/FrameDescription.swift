/// What travels on a connection: video frames, or results (detections, landmarks, labels) about
/// frames. A port says which it takes (``Node/inputKinds``), a node which it emits
/// (``Node/outputKind``); the runner refuses a connection between the two before anything runs.
public enum StreamKind: String, Sendable, Hashable {
    /// Pictures: what filters, composites and encoders work on.
    case frames
    /// ``Results`` about frames: each carries the frame it describes (shared, not copied), with its
    /// timestamps, so a composite pairs results with frames as it pairs masks.
    case results
}

/// What a port carries: pixel format and size, and whether it is frames or results about such
/// frames. Nodes agree on these before the first frame (see ``Node/negotiate(inputs:)``), so a
/// mismatch is reported by name before anything runs.
public struct FrameDescription: Hashable, Sendable, CustomStringConvertible {
    public var format: PixelFormat
    public var width: Int
    public var height: Int
    /// Frames, or results about frames of this format and size (set by the runner from the
    /// emitting node's ``Node/outputKind``).
    public var kind: StreamKind = .frames

    public init(format: PixelFormat, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
    }

    public var description: String {
        kind == .frames ? "\(width)x\(height) \(format)" : "results (about \(width)x\(height) \(format) frames)"
    }
}
