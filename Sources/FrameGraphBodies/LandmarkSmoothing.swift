import Foundation
import FrameGraph

/// Landmark smoothing as MediaPipe's `LandmarksSmoothingCalculator` and
/// `VisibilitySmoothingCalculator` do it for hands and poses: every coordinate (in pixels, z in
/// width units) through its own one-euro filter whose speed is measured from the last raw value
/// and divided by the object's size (the region's, or the points' bounds), and each visibility
/// through a low-pass filter. ``reset()`` when the object is lost: the next one starts afresh.
public final class LandmarkSmoothing: @unchecked Sendable {
    /// One-euro settings (MediaPipe's pose: 0.05, 80, 1).
    public struct Settings: Sendable, Equatable {
        /// Cutoff at rest, Hz: lower is steadier.
        public var minCutoff: Double
        /// How fast the cutoff rises with speed (in object sizes per second): higher lags less.
        public var beta: Double
        /// Cutoff of the speed estimate, Hz.
        public var derivativeCutoff: Double
        /// Low-pass weight of a new visibility (nil: visibility not smoothed).
        public var visibilityAlpha: Float?

        public init(minCutoff: Double = 0.05, beta: Double = 80, derivativeCutoff: Double = 1, visibilityAlpha: Float? = nil) {
            self.minCutoff = minCutoff
            self.beta = beta
            self.derivativeCutoff = derivativeCutoff
            self.visibilityAlpha = visibilityAlpha
        }

        /// MediaPipe's pose landmarks.
        public static let pose = Settings(minCutoff: 0.05, beta: 80, derivativeCutoff: 1, visibilityAlpha: 0.1)
        /// MediaPipe's pose world landmarks (metres: speeds are not divided by a size).
        public static let poseWorld = Settings(minCutoff: 0.1, beta: 40, derivativeCutoff: 1, visibilityAlpha: 0.1)
        /// MediaPipe's pose alignment points (the next region comes from them).
        public static let poseAlignment = Settings(minCutoff: 0.01, beta: 10, derivativeCutoff: 1, visibilityAlpha: 0.1)
    }

    /// MediaPipe's low-pass filter: the first value passes, then `alpha·value + (1 − alpha)·previous`.
    struct LowPass {
        var initialized = false
        var raw = 0.0, stored = 0.0

        mutating func apply(_ value: Double, alpha: Double) -> Double {
            let result = initialized ? alpha * value + (1 - alpha) * stored : value
            initialized = true
            raw = value
            stored = result
            return result
        }
    }

    /// MediaPipe's one-euro filter of one value.
    struct OneEuro {
        var x = LowPass(), dx = LowPass()
        var frequency = 30.0
        var lastTime: Double?

        static func alpha(_ cutoff: Double, frequency: Double) -> Double {
            let te = 1 / frequency, tau = 1 / (2 * Double.pi * cutoff)
            return 1 / (1 + tau / te)
        }

        mutating func apply(_ value: Double, time: Double, valueScale: Double, settings: Settings) -> Double {
            if let lastTime {
                guard time > lastTime else { return value }
                frequency = 1 / (time - lastTime)
            }
            lastTime = time
            let dvalue = x.initialized ? (value - x.raw) * valueScale * frequency : 0
            let edvalue = dx.apply(dvalue, alpha: Self.alpha(settings.derivativeCutoff, frequency: frequency))
            let cutoff = settings.minCutoff + settings.beta * abs(edvalue)
            return x.apply(value, alpha: Self.alpha(cutoff, frequency: frequency))
        }
    }

    public let settings: Settings
    private var filters: [OneEuro] = []
    private var visibility: [LowPass] = []

    public init(settings: Settings) {
        self.settings = settings
    }

    /// Forgets the past (the object was lost).
    public func reset() {
        filters = []
        visibility = []
    }

    /// The smoothed points of the frame at `time` seconds, taken as they are (metres: MediaPipe's
    /// `disable_value_scaling`, speeds not divided by the object's size), for world landmarks.
    public func filterMetric(_ points: [Landmark], time: Double) -> [Landmark] {
        resize(for: points.count)
        var out = smoothVisibility(points)
        for i in points.indices {
            let p = points[i]
            out[i].x = Float(filters[3 * i].apply(Double(p.x), time: time, valueScale: 1, settings: settings))
            out[i].y = Float(filters[3 * i + 1].apply(Double(p.y), time: time, valueScale: 1, settings: settings))
            if let z = p.z { out[i].z = Float(filters[3 * i + 2].apply(Double(z), time: time, valueScale: 1, settings: settings)) }
        }
        return out
    }

    private func resize(for count: Int) {
        if filters.count != count * 3 {
            filters = [OneEuro](repeating: OneEuro(), count: count * 3)
            visibility = [LowPass](repeating: LowPass(), count: count)
        }
    }

    private func smoothVisibility(_ points: [Landmark]) -> [Landmark] {
        var out = points
        if let alpha = settings.visibilityAlpha {
            for i in points.indices {
                if let v = points[i].visibility { out[i].visibility = Float(visibility[i].apply(Double(v), alpha: Double(alpha))) }
            }
        }
        return out
    }

    /// The smoothed points (normalised) of the frame at `time` seconds in a `width`×`height` frame;
    /// `objectSize` in pixels (nil: the mean of the points' width and height).
    public func filter(_ points: [Landmark], time: Double, width: Int, height: Int, objectSize: Float? = nil) -> [Landmark] {
        resize(for: points.count)
        var out = smoothVisibility(points)
        let w = Float(width), h = Float(height)
        let size: Float
        if let objectSize {
            size = objectSize
        } else {
            var x0 = Float.infinity, y0 = Float.infinity, x1 = -Float.infinity, y1 = -Float.infinity
            for p in points { x0 = min(x0, p.x * w); x1 = max(x1, p.x * w); y0 = min(y0, p.y * h); y1 = max(y1, p.y * h) }
            size = ((x1 - x0) + (y1 - y0)) / 2
        }
        guard size.isFinite, size >= 1e-6 else { return out }
        let scale = 1 / Double(size)
        for i in points.indices {
            let p = points[i]
            let x = filters[3 * i].apply(Double(p.x * w), time: time, valueScale: scale, settings: settings)
            let y = filters[3 * i + 1].apply(Double(p.y * h), time: time, valueScale: scale, settings: settings)
            out[i].x = Float(x) / w
            out[i].y = Float(y) / h
            if let z = p.z {
                out[i].z = Float(filters[3 * i + 2].apply(Double(z * w), time: time, valueScale: scale, settings: settings)) / w
            }
        }
        return out
    }
}
