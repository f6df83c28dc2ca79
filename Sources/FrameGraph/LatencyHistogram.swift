import Foundation

/// A fixed-memory latency histogram: logarithmic buckets 2% wide from 1 µs to about 100 s, so a
/// ten-minute run records every frame without growing. Percentiles are accurate to one bucket (2%).
public struct LatencyHistogram: Sendable {
    private static let ratio = 1.02
    private static let minimum = 1e-6
    private static let bucketCount = 940
    private static let logRatio = log(ratio)

    private var buckets = [UInt32](repeating: 0, count: LatencyHistogram.bucketCount)
    private var zeros = 0
    /// Samples recorded.
    public private(set) var count = 0
    /// Largest sample, in seconds.
    public private(set) var max = 0.0
    /// Sum of all samples, in seconds.
    public private(set) var sum = 0.0

    public init() {}

    /// Records one latency in seconds (negative values count as zero).
    public mutating func record(_ seconds: Double) {
        count += 1
        let v = Swift.max(seconds, 0)
        sum += v
        if v > max { max = v }
        if v < Self.minimum {
            zeros += 1
            return
        }
        let index = Int(log(v / Self.minimum) / Self.logRatio)
        buckets[Swift.min(index, Self.bucketCount - 1)] += 1
    }

    /// Adds every sample of `other` (the streams of a run into its totals).
    public mutating func merge(_ other: LatencyHistogram) {
        for i in buckets.indices { buckets[i] += other.buckets[i] }
        zeros += other.zeros
        count += other.count
        sum += other.sum
        max = Swift.max(max, other.max)
    }

    /// The latency below which `fraction` (0…1) of the samples fall, in seconds; 0 when empty.
    public func percentile(_ fraction: Double) -> Double {
        guard count > 0 else { return 0 }
        let rank = Int((fraction * Double(count)).rounded(.up))
        var seen = zeros
        if seen >= rank { return 0 }
        for (i, n) in buckets.enumerated() where n > 0 {
            seen += Int(n)
            if seen >= rank {
                // The bucket's geometric middle, never above the true maximum.
                let mid = Self.minimum * pow(Self.ratio, Double(i) + 0.5)
                return Swift.min(mid, max)
            }
        }
        return max
    }

    /// Samples at or below `seconds` (a Prometheus histogram's cumulative bucket), accurate to one
    /// bucket: a bucket counts when its upper edge is at or below `seconds`.
    public func count(atOrBelow seconds: Double) -> Int {
        guard seconds >= 0 else { return 0 }
        if seconds >= max { return count }
        var total = zeros
        guard seconds >= Self.minimum else { return total }
        // Bucket i holds [minimum·ratio^i, minimum·ratio^(i+1)).
        let edge = Int((log(seconds / Self.minimum) / Self.logRatio).rounded(.down))
        for i in 0..<Swift.min(Swift.max(edge, 0), Self.bucketCount) { total += Int(buckets[i]) }
        return total
    }

    /// Mean in seconds; 0 when empty.
    public var mean: Double { count == 0 ? 0 : sum / Double(count) }
}
