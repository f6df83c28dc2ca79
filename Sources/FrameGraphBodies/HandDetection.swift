import FrameGraph
import FrameGraphNetwork

/// MediaPipe's palm and pose detectors' settings: their SSD anchors and how their outputs decode.
///
/// - Palm detection (`palm_detection_lite` / `palm_detection_full`): 192×192 input letterboxed,
///   values 0…1; 2,016 anchors (strides 8, 16, 16, 16); per anchor a box and 7 keypoints (wrist,
///   the index, middle, ring and little fingers' knuckles, two on the thumb); score ≥ 0.5; weighted
///   suppression at IoU 0.3.
/// - Pose detection (`pose_detection`): 224×224 letterboxed, values −1…1; 2,254 anchors
///   (strides 8, 16, 32, 32, 32); a box and 4 keypoints (hips' centre, a point giving the body's
///   size and tilt, the shoulders' centre, a point above the head); score ≥ 0.5; weighted
///   suppression at IoU 0.3.
extension SSDAnchorOptions {
    /// Palm detection (192×192): 2,016 anchors.
    public static let palm = SSDAnchorOptions(inputWidth: 192, inputHeight: 192, minScale: 0.1484375, maxScale: 0.75, strides: [8, 16, 16, 16])
    /// Pose detection (224×224): 2,254 anchors.
    public static let pose = SSDAnchorOptions(inputWidth: 224, inputHeight: 224, minScale: 0.1484375, maxScale: 0.75, strides: [8, 16, 32, 32, 32])
}

extension SSDBoxDecoding {
    /// Palm detection: 18 values per anchor (box + 7 keypoints), divided by 192.
    public static let palm = SSDBoxDecoding(coordinates: 18, keypoints: 7, scale: 192, minScore: 0.5)
    /// Pose detection: 12 values per anchor (box + 4 keypoints), divided by 224.
    public static let pose = SSDBoxDecoding(coordinates: 12, keypoints: 4, scale: 224, minScore: 0.5)
}
