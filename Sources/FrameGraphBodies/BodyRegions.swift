import Foundation
import FrameGraph
import FrameGraphNetwork

/// Hand and body regions as MediaPipe's rect calculators make them, in pixels:
///
/// - a rectangle (centre, width, height) turned so that the line between two points of the object
///   points up (MediaPipe's `rotation_vector_target_angle_degrees: 90`);
/// - then moved along its own axes by a fraction of its size, squared on its longer side and
///   enlarged (`RectTransformationCalculator`'s `shift_y`, `square_long`, `scale`).
///
/// A palm detection gives the box and the line from the wrist (keypoint 0) to the middle finger's
/// knuckle (keypoint 2), shifted up by half its height and enlarged 2.6×; a hand's landmarks give
/// the box of its 21 points seen along the line from the wrist to the middle of the index, middle
/// and ring fingers, shifted up by a tenth, enlarged 2×; a pose detection (or the pose model's two
/// alignment points) gives a square centred on the hips twice the distance to the second point,
/// enlarged 1.25×.
extension RotatedRegion {
    /// `angle` brought into −π…π (MediaPipe's NormalizeRadians).
    public static func normalizedAngle(_ angle: Float) -> Float {
        angle - 2 * Float.pi * ((angle + Float.pi) / (2 * Float.pi)).rounded(.down)
    }

    /// The rotation that turns the line from `a` to `b` (pixels, y down) upright (pointing up).
    public static func uprightRotation(from a: (x: Float, y: Float), to b: (x: Float, y: Float)) -> Float {
        let angle = normalizedAngle(Float.pi / 2 - atan2(-(b.y - a.y), b.x - a.x))
        return angle.isFinite ? angle : 0
    }

    /// A `width`×`height` rectangle (pixels) at (`centerX`, `centerY`) turned by `rotation`, moved by
    /// (`shiftX`·width, `shiftY`·height) along its own axes, squared on its longer side and scaled by
    /// `scale`; nil when empty or not finite.
    public init?(centerX: Float, centerY: Float, width: Float, height: Float, rotation: Float, shiftX: Float = 0, shiftY: Float = 0, scale: Float) {
        let c = cos(rotation), s = sin(rotation)
        let x = centerX + width * shiftX * c - height * shiftY * s
        let y = centerY + width * shiftX * s + height * shiftY * c
        let side = max(width, height) * scale
        guard side.isFinite, side > 0, x.isFinite, y.isFinite, rotation.isFinite else { return nil }
        self.init(centerX: x, centerY: y, side: side, rotation: rotation)
    }

    /// The hand region of a palm detection (normalised box and 7 keypoints) in a `width`×`height`
    /// frame: turned by the wrist → middle-knuckle line (keypoints 0 → 2), shifted up by half the
    /// box, squared and enlarged 2.6×.
    public init?(palmDetection d: Detection, width: Int, height: Int) {
        guard d.keypoints.count >= 3 else { return nil }
        let w = Float(width), h = Float(height)
        let a = d.keypoints[0], b = d.keypoints[2]
        let rotation = Self.uprightRotation(from: (a.x * w, a.y * h), to: (b.x * w, b.y * h))
        self.init(centerX: (d.box.x + d.box.width / 2) * w, centerY: (d.box.y + d.box.height / 2) * h,
                  width: d.box.width * w, height: d.box.height * h, rotation: rotation, shiftY: -0.5, scale: 2.6)
    }

    /// The 12 of a hand's 21 landmarks MediaPipe's region is made from: the wrist, the thumb but its
    /// tip, and each finger's knuckle and first joint.
    public static let handRegionPoints = [0, 1, 2, 3, 5, 6, 9, 10, 13, 14, 17, 18]

    /// The next frame's hand region from a hand's 21 landmarks (normalised): the bounds of
    /// ``handRegionPoints`` seen along the line from the wrist (0) to the mean of the middle
    /// finger's knuckle (9) and the middle of the index and ring fingers' knuckles (5, 13), shifted
    /// up by a tenth, squared, enlarged 2× (MediaPipe's HandLandmarksToRectCalculator).
    public init?(handLandmarks all: [Landmark], width: Int, height: Int) {
        guard all.count >= 21 else { return nil }
        let points = Self.handRegionPoints.map { all[$0] }
        let w = Float(width), h = Float(height)
        let mx = ((all[5].x + all[13].x) / 2 + all[9].x) / 2, my = ((all[5].y + all[13].y) / 2 + all[9].y) / 2
        let rotation = Self.uprightRotation(from: (all[0].x * w, all[0].y * h), to: (mx * w, my * h))
        guard let bounds = Self.turnedBounds(points, rotation: rotation, width: w, height: h) else { return nil }
        self.init(centerX: bounds.centerX, centerY: bounds.centerY, width: bounds.width, height: bounds.height,
                  rotation: rotation, shiftY: -0.1, scale: 2)
    }

    /// The centre and size (pixels) of `points`' bounds measured along axes turned by `rotation`
    /// (MediaPipe's HandLandmarksToRectCalculator).
    static func turnedBounds(_ points: [Landmark], rotation: Float, width w: Float, height h: Float)
        -> (centerX: Float, centerY: Float, width: Float, height: Float)? {
        // The maxima start at the smallest positive float, as MediaPipe's do (numeric_limits::min).
        var x0 = Float.greatestFiniteMagnitude, y0 = Float.greatestFiniteMagnitude, x1 = Float.leastNormalMagnitude, y1 = Float.leastNormalMagnitude
        for p in points { x0 = min(x0, p.x); x1 = max(x1, p.x); y0 = min(y0, p.y); y1 = max(y1, p.y) }
        let ax = (x0 + x1) / 2, ay = (y0 + y1) / 2
        let back = normalizedAngle(-rotation), cb = cos(back), sb = sin(back)
        x0 = .greatestFiniteMagnitude; y0 = .greatestFiniteMagnitude; x1 = .leastNormalMagnitude; y1 = .leastNormalMagnitude
        for p in points {
            let ox = (p.x - ax) * w, oy = (p.y - ay) * h
            let px = ox * cb - oy * sb, py = ox * sb + oy * cb
            x0 = min(x0, px); x1 = max(x1, px); y0 = min(y0, py); y1 = max(y1, py)
        }
        let pcx = (x0 + x1) / 2, pcy = (y0 + y1) / 2
        let c = cos(rotation), s = sin(rotation)
        let cx = pcx * c - pcy * s + ax * w, cy = pcx * s + pcy * c + ay * h
        guard cx.isFinite, cy.isFinite, x1 - x0 >= 0, y1 - y0 >= 0 else { return nil }
        return (cx, cy, x1 - x0, y1 - y0)
    }

    /// The square MediaPipe's AlignmentPointsRectsCalculator makes from two normalised points:
    /// centred on `center`, twice the distance to `scalePoint` on a side, turned so the line from
    /// the centre to that point points up; not yet enlarged.
    public init?(alignmentCenter center: (x: Float, y: Float), scalePoint: (x: Float, y: Float), width: Int, height: Int, scale: Float = 1) {
        let w = Float(width), h = Float(height)
        let a = (x: center.x * w, y: center.y * h), b = (x: scalePoint.x * w, y: scalePoint.y * h)
        let size = 2 * hypot(b.x - a.x, b.y - a.y)
        self.init(centerX: a.x, centerY: a.y, width: size, height: size, rotation: Self.uprightRotation(from: a, to: b), scale: scale)
    }

    /// How much a pose region is larger than its alignment square (MediaPipe's 1.25).
    public static let poseEnlargement: Float = 1.25

    /// The pose region of a pose detection (its keypoints 0, the hips' centre, and 1, a point whose
    /// distance gives the body's size and whose direction its rotation).
    public init?(poseDetection d: Detection, width: Int, height: Int) {
        guard d.keypoints.count >= 2 else { return nil }
        self.init(alignmentCenter: (d.keypoints[0].x, d.keypoints[0].y), scalePoint: (d.keypoints[1].x, d.keypoints[1].y),
                  width: width, height: height, scale: Self.poseEnlargement)
    }

    /// The next frame's pose region from the pose model's two alignment points (its landmarks 33
    /// and 34), normalised.
    public init?(poseAlignment points: [Landmark], width: Int, height: Int) {
        guard points.count >= 2 else { return nil }
        self.init(alignmentCenter: (points[0].x, points[0].y), scalePoint: (points[1].x, points[1].y),
                  width: width, height: height, scale: Self.poseEnlargement)
    }

    /// Intersection over union of the two regions' squares, their rotation ignored (MediaPipe's
    /// AssociationNormRectCalculator, which tells a tracked hand from a newly detected one).
    public func uprightOverlap(with other: RotatedRegion) -> Float {
        func box(_ r: RotatedRegion) -> ResultBox { ResultBox(x: r.centerX - r.side / 2, y: r.centerY - r.side / 2, width: r.side, height: r.side) }
        return NonMaxSuppression.iou(box(self), box(other))
    }
}
