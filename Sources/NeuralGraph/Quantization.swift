import Foundation

/// How a tensor's integers stand for real numbers: `real = (q − zeroPoint) × scale`, with one scale
/// and zero point for the whole tensor, or one per channel along `axis` (TFLite's per-channel
/// weights, ONNX's per-axis `DequantizeLinear`). Quantized activations are int8 or uint8; weights int8
/// or uint8; biases int32 (scale = input scale × weight scale, zero point 0).
///
/// FrameGraph's buffers between stages hold real numbers (float32): a quantized tensor's buffer holds
/// its dequantized values, which convert back to the same integers exactly. Inside an XNNPACK stage
/// a quantized tensor is quantized (`xnn_datatype_qint8`, `quint8`, `qcint8` …), so the arithmetic is
/// XNNPACK's integer kernels', the ones LiteRT runs.
public struct Quantization: Sendable, Equatable, CustomStringConvertible {
    public var scales: [Float]
    public var zeroPoints: [Int32]
    /// The channel axis of per-channel parameters (nil: one for the whole tensor).
    public var axis: Int?

    public init(scales: [Float], zeroPoints: [Int32], axis: Int? = nil) {
        self.scales = scales
        self.zeroPoints = zeroPoints
        self.axis = axis
    }

    /// One scale and zero point for the whole tensor.
    public init(scale: Float, zeroPoint: Int32) {
        self.init(scales: [scale], zeroPoints: [zeroPoint])
    }

    public var isPerChannel: Bool { scales.count > 1 || axis != nil }
    public var scale: Float { scales.first ?? 1 }
    public var zeroPoint: Int32 { zeroPoints.first ?? 0 }

    public var description: String {
        if scales.count == 1 { return String(format: "scale %g, zero point %d", scale, zeroPoint) }
        return "\(scales.count) scales along axis \(axis ?? 0)"
    }

    /// What is impossible about these parameters for a tensor of `type` and `shape` (a scale that is
    /// 0, negative or not finite, a zero point outside the type's range, a count that does not match
    /// the channel axis), or nil.
    public func problem(type: ElementType, shape: [Int]) -> String? {
        guard !scales.isEmpty else { return "no scale" }
        guard zeroPoints.count == scales.count || zeroPoints.count == 1 else {
            return "\(scales.count) scales but \(zeroPoints.count) zero points"
        }
        for s in scales where !(s.isFinite && s > 0) { return "scale \(s) is not a positive finite number" }
        let range = Self.range(of: type)
        for z in zeroPoints where !range.contains(Int(z)) { return "zero point \(z) is outside \(type)'s \(range.lowerBound)…\(range.upperBound)" }
        if let axis {
            guard axis >= 0, axis < shape.count else { return "channel axis \(axis) is not a dimension of \(shape)" }
            guard scales.count == shape[axis] || scales.count == 1 else {
                return "\(scales.count) scales for \(shape[axis]) channels along axis \(axis)"
            }
        } else if scales.count > 1 {
            return "\(scales.count) scales but no channel axis"
        }
        return nil
    }

    /// The integers a type holds.
    public static func range(of type: ElementType) -> ClosedRange<Int> {
        switch type {
        case .int8: return -128...127
        case .uint8: return 0...255
        case .int32: return Int(Int32.min)...Int(Int32.max)
        default: return 0...0
        }
    }

    /// Scale and zero point of channel `c` (the only ones when per tensor).
    public func parameters(channel c: Int) -> (scale: Float, zeroPoint: Int32) {
        (scales.count > 1 ? scales[c] : scale, zeroPoints.count > 1 ? zeroPoints[c] : zeroPoint)
    }

    /// The real values of integers `values` of a tensor of `shape` (per channel along ``axis``).
    public func dequantize(_ values: [Int], shape: [Int]) -> [Float] {
        guard isPerChannel, let axis, axis < shape.count else {
            return values.map { Float($0 - Int(zeroPoint)) * scale }
        }
        let inner = shape[(axis + 1)...].reduce(1, *), channels = shape[axis]
        return values.enumerated().map { i, q in
            let (s, z) = parameters(channel: (i / max(1, inner)) % max(1, channels))
            return Float(q - Int(z)) * s
        }
    }

    /// `x` rounded to the nearest representable value of a tensor of `type` with these (per-tensor)
    /// parameters: quantized (round half away from zero, as TFLite's reference kernels and
    /// XNNPACK's convert), clamped to the type, and dequantized again.
    @inline(__always)
    public func fakeQuantize(_ x: Float, type: ElementType) -> Float {
        let range = Self.range(of: type)
        let q = (x / scale).rounded(.toNearestOrAwayFromZero) + Float(zeroPoint)
        let clamped = min(max(q.isFinite ? q : 0, Float(range.lowerBound)), Float(range.upperBound))
        return (clamped - Float(zeroPoint)) * scale
    }

    /// The stored integer of real value `x` (per tensor), clamped to `type`.
    public func quantize(_ x: Float, type: ElementType) -> Int {
        let range = Self.range(of: type)
        let q = (x / scale).rounded(.toNearestOrAwayFromZero) + Float(zeroPoint)
        return Int(min(max(q.isFinite ? q : 0, Float(range.lowerBound)), Float(range.upperBound)))
    }
}
