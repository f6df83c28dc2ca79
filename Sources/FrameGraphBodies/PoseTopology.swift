import FrameGraph

/// A body's 33 pose landmarks as MediaPipe numbers them (0 the nose; 1–6 the eyes; 7, 8 the ears;
/// 9, 10 the mouth; 11, 12 the shoulders; 13–22 the arms and hands; 23, 24 the hips; 25–32 the legs
/// and feet; odd numbers on the person's left), and the lines between them (topology `pose`,
/// MediaPipe's `POSE_CONNECTIONS`, 35 lines).
public enum PoseTopology {
    public static let points = 33
    public static let name = "pose"
    public static let leftShoulder = 11, rightShoulder = 12, leftHip = 23, rightHip = 24

    public static let pose = LandmarkTopology(name: name, paths: [
        [8, 6, 5, 4, 0, 1, 2, 3, 7],      // ears, eyes, nose
        [9, 10],                          // mouth
        [11, 12, 24, 23, 11],             // torso
        [11, 13, 15, 17, 19, 15, 21],     // left arm and hand
        [12, 14, 16, 18, 20, 16, 22],     // right arm and hand
        [23, 25, 27, 29, 31, 27],         // left leg and foot
        [24, 26, 28, 30, 32, 28],         // right leg and foot
    ])
}
