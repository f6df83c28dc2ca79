import Foundation
import FrameGraph

/// A rotated square region of a frame, in pixels: where a landmark model looks (MediaPipe's
/// "region of interest"). A box and a line through two points of the object make one: the box is
/// squared on its longer side and enlarged, and turned by the line's angle, so the object comes
/// upright into the model. Faces, hands and bodies each say which box and which points
/// (`RotatedRegion(faceDetection:…)` in FrameGraphFaces, …).
public struct RotatedRegion: Sendable, Equatable {
    /// Centre, in pixels.
    public var centerX: Float
    public var centerY: Float
    /// Side of the square, in pixels.
    public var side: Float
    /// Angle in radians of the region's x axis from the frame's (y pointing down): 0 when the
    /// object is upright.
    public var rotation: Float

    public init(centerX: Float, centerY: Float, side: Float, rotation: Float) {
        self.centerX = centerX
        self.centerY = centerY
        self.side = side
        self.rotation = rotation
    }

    /// The square around a box (pixels), `enlargement` × its longer side, turned by the angle of the
    /// line from `a` to `b` (pixels); nil when the box is empty or not finite.
    public init?(boxX: Float, boxY: Float, boxWidth: Float, boxHeight: Float, from a: (Float, Float), to b: (Float, Float), enlargement: Float) {
        let side = max(boxWidth, boxHeight) * enlargement
        guard side.isFinite, side > 0, boxX.isFinite, boxY.isFinite else { return nil }
        let angle = atan2(b.1 - a.1, b.0 - a.0)
        self.init(centerX: boxX + boxWidth / 2, centerY: boxY + boxHeight / 2, side: side, rotation: angle.isFinite ? angle : 0)
    }

    /// The frame point (pixels) at (`u`, `v`) of the region, each from 0 to 1 across it.
    @inline(__always)
    public func framePoint(u: Float, v: Float) -> (x: Float, y: Float) {
        let a = (u - 0.5) * side, b = (v - 0.5) * side
        let c = cos(rotation), s = sin(rotation)
        return (centerX + c * a - s * b, centerY + s * a + c * b)
    }

    /// Landmarks found in the region (normalised to it; z in the region's width units) in the
    /// frame's normalised coordinates (z in frame-width units).
    public func project(_ points: [Landmark], width: Int, height: Int) -> [Landmark] {
        let w = Float(width), h = Float(height)
        let c = cos(rotation), s = sin(rotation)
        return points.map { p in
            let a = (p.x - 0.5) * side, b = (p.y - 0.5) * side
            return Landmark(x: (centerX + c * a - s * b) / w, y: (centerY + s * a + c * b) / h, z: p.z.map { $0 * side / w }, visibility: p.visibility)
        }
    }

    /// World landmarks (metres, in the region's upright frame) turned by the region's rotation, so
    /// they stand as the object does in the frame; z and visibility unchanged (MediaPipe's
    /// `WorldLandmarkProjectionCalculator`).
    public func projectWorld(_ points: [Landmark]) -> [Landmark] {
        let c = cos(rotation), s = sin(rotation)
        return points.map { Landmark(x: c * $0.x - s * $0.y, y: s * $0.x + c * $0.y, z: $0.z, visibility: $0.visibility) }
    }

    /// Intersection over union of the two regions' axis-aligned bounds (for telling objects apart).
    public func overlap(with other: RotatedRegion) -> Float {
        func bounds(_ r: RotatedRegion) -> ResultBox {
            let half = r.side / 2 * (abs(cos(r.rotation)) + abs(sin(r.rotation)))
            return ResultBox(x: r.centerX - half, y: r.centerY - half, width: 2 * half, height: 2 * half)
        }
        return NonMaxSuppression.iou(bounds(self), bounds(other))
    }
}

