import FrameGraph

/// A hand's 21 landmarks as MediaPipe numbers them (0 the wrist; 1–4 the thumb from its base to
/// its tip; 5–8, 9–12, 13–16, 17–20 the index, middle, ring and little fingers, knuckle to tip),
/// and the lines between them (topology `hand`: the palm and each finger, MediaPipe's
/// `HAND_CONNECTIONS`).
public enum HandTopology {
    public static let points = 21
    public static let name = "hand"
    public static let wrist = 0
    /// The middle finger's knuckle (its MCP joint).
    public static let middleKnuckle = 9

    /// The palm's outline and the five fingers.
    public static let hand = LandmarkTopology(name: name, paths: [
        [0, 1, 2, 3, 4],             // thumb
        [0, 5, 6, 7, 8],             // index finger
        [9, 10, 11, 12],             // middle finger
        [13, 14, 15, 16],            // ring finger
        [0, 17, 18, 19, 20],         // little finger
        [5, 9, 13, 17],              // knuckles
    ])
}
