import Foundation
import FrameGraph

/// The one-euro filter (Casiez et al. 2012) over a set of landmarks, as MediaPipe's landmark
/// smoothing applies it: each coordinate is low-pass filtered with a cutoff that rises with its
/// speed (steady at rest, little lag in motion); the speed is measured relative to the object's
/// size (the points' bounding box), so the same settings suit a near and a far face. Time comes
/// from the frames' media time.
public final class OneEuroFilter: @unchecked Sendable {
    public struct Settings: Sendable, Equatable {
        /// Cutoff at rest, Hz: lower is steadier.
        public var minCutoff: Float
        /// How fast the cutoff rises with speed (in object sizes per second): higher lags less.
        public var beta: Float
        /// Cutoff of the speed estimate, Hz.
        public var derivativeCutoff: Float

        public init(minCutoff: Float = 0.05, beta: Float = 80, derivativeCutoff: Float = 1) {
            self.minCutoff = minCutoff
            self.beta = beta
            self.derivativeCutoff = derivativeCutoff
        }
    }

    public let settings: Settings
    private var previous: [Float] = []
    private var speed: [Float] = []
    private var lastTime: Double?

    public init(settings: Settings) {
        self.settings = settings
    }

    private static func alpha(_ cutoff: Float, _ dt: Float) -> Float {
        let tau = 1 / (2 * Float.pi * max(cutoff, 1e-6))
        return 1 / (1 + tau / dt)
    }

    /// The filtered points for the frame at `time` (seconds); the first call returns them as given.
    public func filter(_ points: [Landmark], time: Double, width: Int, height: Int) -> [Landmark] {
        let w = Float(width), h = Float(height)
        var values: [Float] = []
        values.reserveCapacity(points.count * 3)
        var x0 = Float.infinity, x1 = -Float.infinity, y0 = Float.infinity, y1 = -Float.infinity
        for p in points {
            values += [p.x * w, p.y * h, (p.z ?? 0) * w]
            x0 = min(x0, p.x * w); x1 = max(x1, p.x * w); y0 = min(y0, p.y * h); y1 = max(y1, p.y * h)
        }
        let size = ((x1 - x0) + (y1 - y0)) / 2
        guard let last = lastTime, previous.count == values.count, size.isFinite, size > 1e-3 else {
            previous = values
            speed = [Float](repeating: 0, count: values.count)
            lastTime = time
            return points
        }
        let dt = Float(time - last) > 0 ? Float(time - last) : 1 / 30
        lastTime = time
        let ad = Self.alpha(settings.derivativeCutoff, dt)
        for i in values.indices {
            let rate = (values[i] - previous[i]) / dt
            speed[i] += ad * (rate - speed[i])
            let cutoff = settings.minCutoff + settings.beta * abs(speed[i]) / size
            previous[i] += Self.alpha(cutoff, dt) * (values[i] - previous[i])
        }
        return points.indices.map { i in
            Landmark(x: previous[3 * i] / w, y: previous[3 * i + 1] / h, z: points[i].z == nil ? nil : previous[3 * i + 2] / w,
                     visibility: points[i].visibility)
        }
    }
}
