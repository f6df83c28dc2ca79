import Foundation
import FrameGraph
import FrameGraphNetwork

/// Face regions as MediaPipe's face mesh makes them: from a detection (the box, turned so the eyes
/// are level: the line from keypoint 0, the right eye, to keypoint 1, the left eye) or from the
/// previous frame's landmarks (their bounding box, turned by the line from point 33 to point 263,
/// the outer eye corners); then squared on the longer side and enlarged 1.5 times.
extension RotatedRegion {
    /// How much larger than the face the region is (MediaPipe's 1.5).
    public static let faceEnlargement: Float = 1.5

    /// The region of a face detection (normalised box and keypoints) in a `width`×`height` frame.
    public init?(faceDetection d: Detection, width: Int, height: Int, enlargement: Float = RotatedRegion.faceEnlargement) {
        guard d.keypoints.count >= 2 else { return nil }
        let w = Float(width), h = Float(height)
        let a = d.keypoints[0], b = d.keypoints[1]
        self.init(boxX: d.box.x * w, boxY: d.box.y * h, boxWidth: d.box.width * w, boxHeight: d.box.height * h,
                  from: (a.x * w, a.y * h), to: (b.x * w, b.y * h), enlargement: enlargement)
    }

    /// The region around face mesh `points` (normalised; at least 264 of them: the face mesh's 468),
    /// turned by the line from point 33 to point 263.
    public init?(faceLandmarks points: [Landmark], width: Int, height: Int, enlargement: Float = RotatedRegion.faceEnlargement) {
        guard points.count > 263 else { return nil }
        let w = Float(width), h = Float(height)
        var x0 = Float.infinity, y0 = Float.infinity, x1 = -Float.infinity, y1 = -Float.infinity
        for p in points {
            x0 = min(x0, p.x); x1 = max(x1, p.x); y0 = min(y0, p.y); y1 = max(y1, p.y)
        }
        guard x0.isFinite, y0.isFinite, x1.isFinite, y1.isFinite else { return nil }
        self.init(boxX: x0 * w, boxY: y0 * h, boxWidth: (x1 - x0) * w, boxHeight: (y1 - y0) * h,
                  from: (points[33].x * w, points[33].y * h), to: (points[263].x * w, points[263].y * h), enlargement: enlargement)
    }
}
