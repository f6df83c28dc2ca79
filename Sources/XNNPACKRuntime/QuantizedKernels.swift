import Foundation
import NeuralGraph

/// Quantized operations this XNNPACK cannot define in integers, computed the way LiteRT's own kernels
/// compute them, so that a quantized model gives LiteRT's integers: average pooling (a rounded
/// integer mean over the window's valid positions), hard-swish (LiteRT's 16-bit fixed point),
/// softmax (LiteRT's table of `expf`), and transposed convolution (the 32-bit sums and float
/// requantisation of the XNNPACK operator LiteRT delegates it to).
///
/// Buffers between stages hold real numbers; a quantized tensor's values are `(q − zero point) ×
/// scale`, from which each kernel recovers `q` exactly, computes in integers, and writes the real
/// numbers of its integer results.
enum QuantizedKernels {
    /// Whether `node` is one of these kernels' operations on quantized tensors they take.
    static func supports(_ node: NeuralNode, in graph: NeuralGraph) -> Bool {
        guard let input = node.inputs.first, let output = node.outputs.first else { return false }
        let x = graph.tensors[input], y = graph.tensors[output]
        guard let qx = x.quantization, let qy = y.quantization, !qx.isPerChannel, !qy.isPerChannel,
              [.int8, .uint8].contains(x.elementType), [.int8, .uint8].contains(y.elementType) else { return false }
        switch node.operation {
        case .quantize:
            // A requantisation within a type needs XNNPACK's multiplier range (256 × scale ratio in 1…32768).
            let ratio = qx.scale / qy.scale
            return x.elementType != y.elementType || (ratio >= 1.0 / 256 && ratio <= 128)
        case .concatenation(_, let a):
            return a == .none && node.inputs.allSatisfy { t in
                let v = graph.tensors[t]
                return v.elementType == y.elementType && v.quantization.map { !$0.isPerChannel } ?? false
            }
        default:
            break
        }
        guard x.elementType == y.elementType else { return false }
        switch node.operation {
        case .averagePool2d(let p):
            return x.shape.count == 4 && qx == qy && p.activation != .tanh
        case .hardSwish:
            return LiteRTFixedPoint.hardSwishParameters(input: qx.scale, output: qy.scale) != nil
        case .softmax:
            return x.shape.count >= 1
        case .transposeConv2d(let p):
            guard p.activation != .tanh, node.inputs.count >= 2, x.shape.count == 4 else { return false }
            let w = graph.tensors[node.inputs[1]]
            return w.constant != nil && w.elementType == .int8 && w.quantization != nil
                && (node.inputs.count < 3 || graph.tensors[node.inputs[2]].constant != nil)
        default:
            return false
        }
    }

    /// The kernel of `node` bound to its buffers (`constants` hold the weights' stored integers).
    static func make(_ node: NeuralNode, graph: NeuralGraph, buffers: [Int: TensorBuffer],
                     constants: [Int: ConstantStorage]) throws -> () -> Void {
        let label = "\(node.operation.name) ('\(node.name)')"
        guard let src = buffers[node.inputs[0]]?.pointer, let out = buffers[node.outputs[0]]?.pointer,
              let qx = graph.tensors[node.inputs[0]].quantization, let qy = graph.tensors[node.outputs[0]].quantization else {
            throw ModelError.runtime(operation: label, reason: "a quantized kernel without its buffers")
        }
        let x = graph.tensors[node.inputs[0]], y = graph.tensors[node.outputs[0]]
        let type = y.elementType
        let (lowest, highest) = (Int32(Quantization.range(of: type).lowerBound), Int32(Quantization.range(of: type).upperBound))
        let count = y.shape.reduce(1, *)
        /// The stored integer of a real value of the input.
        let inputType = x.elementType
        @inline(__always) func q(_ v: Float) -> Int32 { stored(v, qx, inputType) }
        @inline(__always) func real(_ k: Int32) -> Float { Float(k - qy.zeroPoint) * qy.scale }

        switch node.operation {
        case .averagePool2d(let p):
            let (n, ih, iw, c) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3])
            let (oh, ow) = (y.shape[1], y.shape[2])
            let (top, _) = p.padding.amounts(input: ih, output: oh, kernel: p.filterH, stride: p.strideH, dilation: 1, vertical: true)
            let (left, _) = p.padding.amounts(input: iw, output: ow, kernel: p.filterW, stride: p.strideW, dilation: 1, vertical: false)
            let (minimum, maximum) = activationRange(p.activation, qy, lowest, highest)
            let signed = type == .int8
            return {
                var acc = [Int32](repeating: 0, count: c)
                for b in 0..<n {
                    for oy in 0..<oh {
                        for ox in 0..<ow {
                            let y0 = oy * p.strideH - top, x0 = ox * p.strideW - left
                            let ys = max(0, y0)..<min(ih, y0 + p.filterH), xs = max(0, x0)..<min(iw, x0 + p.filterW)
                            let windowCount = Int32(ys.count * xs.count)
                            for k in 0..<c { acc[k] = 0 }
                            for iy in ys {
                                for ix in xs {
                                    let row = src + ((b * ih + iy) * iw + ix) * c
                                    for k in 0..<c { acc[k] &+= q(row[k]) }
                                }
                            }
                            let dst = out + ((b * oh + oy) * ow + ox) * c
                            for k in 0..<c {
                                guard windowCount > 0 else { dst[k] = real(qy.zeroPoint); continue }
                                let a = acc[k]
                                // LiteRT: int8 rounds half away from zero, uint8 (sums ≥ 0) half up.
                                let mean = signed && a <= 0 ? (a - windowCount / 2) / windowCount : (a + windowCount / 2) / windowCount
                                dst[k] = real(min(max(mean, minimum), maximum))
                            }
                        }
                    }
                }
            }
        case .hardSwish:
            guard let h = LiteRTFixedPoint.hardSwishParameters(input: qx.scale, output: qy.scale) else {
                throw ModelError.runtime(operation: label, reason: "scales \(qx.scale) → \(qy.scale) are outside LiteRT's hard-swish")
            }
            let zx = qx.zeroPoint, zy = qy.zeroPoint
            return {
                for i in 0..<count {
                    let v = h.apply(q(src[i]) - zx) + zy
                    out[i] = real(min(max(v, lowest), highest))
                }
            }
        case .softmax(let beta):
            // LiteRT: table[255 − d] = expf(−input scale × beta × d); sums in float in order.
            let scale = -qx.scale * beta
            let table = (0...255).map { d in Foundation.exp(scale * Float(255 - d)) }
            let last = x.shape.last ?? 1
            let unsigned = type == .uint8
            return {
                for row in 0..<(count / max(1, last)) {
                    let s = src + row * last, d = out + row * last
                    var values = [Int32](repeating: 0, count: last)
                    var most = lowest
                    for j in 0..<last {
                        values[j] = q(s[j])
                        most = max(most, values[j])
                    }
                    var sum: Float = 0
                    for j in 0..<last { sum += table[Int(255 - most + values[j])] }
                    let inverse = 1 / (sum * qy.scale)
                    for j in 0..<last {
                        let p = table[Int(255 - most + values[j])] * inverse
                        let k = unsigned ? saturating(p + 0.5, rounding: .towardZero)
                            : saturating(p, rounding: .toNearestOrAwayFromZero) &+ qy.zeroPoint
                        d[j] = real(min(max(k, lowest), highest))
                    }
                }
            }
        case .quantize where x.elementType == y.elementType:
            // Delegated by LiteRT to XNNPACK's convert: a multiplier of 256 × input scale / output
            // scale, rounded; (bias + q × multiplier) >> 8, the bias holding both zero points.
            let multiplier = Int32(clamping: lrintf(256 * (qx.scale / qy.scale)))
            let bias = (qy.zeroPoint << 8) - multiplier * qx.zeroPoint + 0x80
            return {
                for i in 0..<count {
                    let v = (bias &+ q(src[i]) &* multiplier) >> 8
                    out[i] = real(min(max(v, lowest), highest))
                }
            }
        case .quantize:
            // LiteRT's Requantize between int8 and uint8: (q − zero point) times input scale /
            // output scale as a Q31 multiplier, rounded as gemmlowp rounds.
            let (m, shift) = LiteRTFixedPoint.quantizeMultiplier(Double(qx.scale) / Double(qy.scale))
            let zx = qx.zeroPoint, zy = qy.zeroPoint
            return {
                for i in 0..<count {
                    let v = LiteRTFixedPoint.multiplyByQuantizedMultiplier(q(src[i]) - zx, m, shift) + zy
                    out[i] = real(min(max(v, lowest), highest))
                }
            }
        case .concatenation(let axisParameter, _):
            // LiteRT's ConcatenationWithScaling: inputs with other parameters than the output's
            // rescaled in float, rounded half away from zero.
            let rank = y.shape.count
            let axis = axisParameter < 0 ? axisParameter + rank : axisParameter
            let outer = y.shape[..<axis].reduce(1, *)
            let inverse = 1 / qy.scale
            let parts = try node.inputs.map { t -> (UnsafeMutablePointer<Float>, Int, Quantization) in
                guard let b = buffers[t]?.pointer ?? constants[t]?.floatPointer, let qt = graph.tensors[t].quantization else {
                    throw ModelError.runtime(operation: label, reason: "input '\(graph.tensors[t].name)' has no buffer")
                }
                return (b, graph.tensors[t].shape[axis...].reduce(1, *), qt)
            }
            let total = parts.reduce(0) { $0 + $1.1 }
            return {
                for o in 0..<outer {
                    var offset = o * total
                    for (p, inner, qt) in parts {
                        let from = p + o * inner, to = out + offset
                        if qt.scale == qy.scale && qt.zeroPoint == qy.zeroPoint {
                            to.update(from: from, count: inner)
                        } else {
                            let scale = qt.scale * inverse, bias = -Float(qt.zeroPoint) * scale
                            for j in 0..<inner {
                                let k = stored(from[j], qt, type)
                                let v = saturating(Float(k) * scale + bias, rounding: .toNearestOrAwayFromZero) &+ qy.zeroPoint
                                to[j] = real(min(max(v, lowest), highest))
                            }
                        }
                        offset += inner
                    }
                }
            }
        case .transposeConv2d(let p):
            return try transposedConvolution(node, p, graph: graph, src: src, out: out, constants: constants, label: label)
        default:
            throw ModelError.runtime(operation: label, reason: "no quantized kernel")
        }
    }

    /// The integer a quantized tensor stores for real value `v`: exact for the values its buffer
    /// holds (they are (q − zero point) × scale); anything else (NaN, out of range) clamped into the type.
    @inline(__always)
    static func stored(_ v: Float, _ q: Quantization, _ type: ElementType) -> Int32 {
        let r = (v / q.scale).rounded() + Float(q.zeroPoint)
        let range = Quantization.range(of: type)
        guard r.isFinite else { return r.isNaN ? q.zeroPoint : (r > 0 ? Int32(range.upperBound) : Int32(range.lowerBound)) }
        return Int32(min(max(r, Float(range.lowerBound)), Float(range.upperBound)))
    }

    /// `x` rounded to an integer, saturated to ±2³⁰ (NaN → 0): the kernels clamp it to their type after.
    @inline(__always)
    static func saturating(_ x: Float, rounding rule: FloatingPointRoundingRule) -> Int32 {
        guard !x.isNaN else { return 0 }
        return Int32(min(max(x.rounded(rule), -0x1p30), 0x1p30))
    }

    /// The clamp of a fused activation in output integers (LiteRT's CalculateActivationRangeQuantized).
    static func activationRange(_ a: FusedActivation, _ q: Quantization, _ lowest: Int32, _ highest: Int32) -> (Int32, Int32) {
        func quantized(_ v: Float) -> Int32 { q.zeroPoint + Int32((v / q.scale).rounded(.toNearestOrAwayFromZero)) }
        switch a {
        case .relu: return (max(lowest, quantized(0)), highest)
        case .relu6: return (max(lowest, quantized(0)), min(highest, quantized(6)))
        case .reluN1To1: return (max(lowest, quantized(-1)), min(highest, quantized(1)))
        case .none, .tanh: return (lowest, highest)
        }
    }

    /// A quantized transposed convolution as XNNPACK's integer deconvolution: 32-bit sums of
    /// (x − input zero point) × w plus the bias, times input scale × weight scale / output scale in
    /// float, clamped, rounded to nearest even, plus the output zero point.
    private static func transposedConvolution(_ node: NeuralNode, _ p: ConvolutionParameters, graph: NeuralGraph,
                                              src: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>,
                                              constants: [Int: ConstantStorage], label: String) throws -> () -> Void {
        let x = graph.tensors[node.inputs[0]], y = graph.tensors[node.outputs[0]], w = graph.tensors[node.inputs[1]]
        guard let qx = x.quantization, let qy = y.quantization, let qw = w.quantization, let weights = constants[node.inputs[1]] else {
            throw ModelError.runtime(operation: label, reason: "a quantized transposed convolution without its weights")
        }
        let (n, ih, iw, ic) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3])
        let (oc, kh, kw) = (w.shape[0], w.shape[1], w.shape[2])
        let (oh, ow) = (y.shape[1], y.shape[2])
        let wq = weights.integers().map(Int32.init)
        var bias = [Int32](repeating: 0, count: oc)
        if node.inputs.count > 2, node.inputs[2] >= 0, let b = constants[node.inputs[2]] {
            let values = b.integers()
            guard values.count == oc else { throw ModelError.runtime(operation: label, reason: "\(values.count) biases for \(oc) channels") }
            bias = values.map { Int32(clamping: $0) }
        }
        let scales = (0..<oc).map { c in qx.scale * qw.parameters(channel: c).scale / qy.scale }
        let wz = (0..<oc).map { c in qw.parameters(channel: c).zeroPoint }
        let type = y.elementType
        let lowest = Int32(Quantization.range(of: type).lowerBound), highest = Int32(Quantization.range(of: type).upperBound)
        let (minimum, maximum) = activationRange(p.activation, qy, lowest, highest)
        // Output padding: the input pixel (iy, ix) lands at iy × stride − top + ky.
        let totalH = max(0, (ih - 1) * p.strideH + kh - oh), totalW = max(0, (iw - 1) * p.strideW + kw - ow)
        let top: Int, left: Int
        switch p.padding {
        case .explicit(let t, let l, _, _): (top, left) = (t, l)
        case .same: (top, left) = (totalH / 2, totalW / 2)
        case .valid: (top, left) = (0, 0)
        }
        let zy = qy.zeroPoint, inputType = x.elementType
        return {
            var acc = [Int32](repeating: 0, count: oh * ow * oc)
            for b in 0..<n {
                for i in 0..<(oh * ow) { for c in 0..<oc { acc[i * oc + c] = bias[c] } }
                for iy in 0..<ih {
                    for ix in 0..<iw {
                        let row = src + ((b * ih + iy) * iw + ix) * ic
                        let xs = (0..<ic).map { stored(row[$0], qx, inputType) - qx.zeroPoint }
                        for ky in 0..<kh {
                            let oy = iy * p.strideH - top + ky
                            guard oy >= 0, oy < oh else { continue }
                            for kx in 0..<kw {
                                let ox = ix * p.strideW - left + kx
                                guard ox >= 0, ox < ow else { continue }
                                let base = (oy * ow + ox) * oc
                                for c in 0..<oc {
                                    let filter = ((c * kh + ky) * kw + kx) * ic
                                    var sum: Int32 = 0
                                    for k in 0..<ic { sum &+= xs[k] &* (wq[filter + k] - wz[c]) }
                                    acc[base + c] &+= sum
                                }
                            }
                        }
                    }
                }
                let dst = out + b * oh * ow * oc
                for i in 0..<(oh * ow) {
                    for c in 0..<oc {
                        var v = Float(acc[i * oc + c]) * scales[c]
                        if v.isNaN { v = 0 }
                        v = min(max(v, Float(minimum - zy)), Float(maximum - zy))
                        let k = saturating(v, rounding: .toNearestOrEven) &+ zy
                        dst[i * oc + c] = Float(k - zy) * qy.scale
                    }
                }
            }
        }
    }
}

/// LiteRT's fixed-point helpers (gemmlowp's rounding rules) for the kernels above.
enum LiteRTFixedPoint {
    /// `multiplier` as a Q31 significand and a power-of-two exponent (LiteRT's QuantizeMultiplier:
    /// frexp, rounded half away from zero).
    static func quantizeMultiplier(_ multiplier: Double) -> (significand: Int32, exponent: Int) {
        guard multiplier != 0, multiplier.isFinite else { return (0, 0) }
        let fraction = multiplier.significand / 2  // in [0.5, 1)
        var exponent = Int(multiplier.exponent) + 1
        var fixed = Int64((fraction * Double(Int64(1) << 31)).rounded(.toNearestOrAwayFromZero))
        if fixed == Int64(1) << 31 {
            fixed /= 2
            exponent += 1
        }
        if exponent < -31 { return (0, 0) }
        return (Int32(fixed), exponent)
    }

    /// gemmlowp's SaturatingRoundingDoublingHighMul for 32 bits.
    static func roundingDoublingHighMul(_ a: Int32, _ b: Int32) -> Int32 {
        if a == b && a == Int32.min { return Int32.max }
        let ab = Int64(a) * Int64(b)
        let nudge: Int64 = ab >= 0 ? 1 << 30 : 1 - (1 << 30)
        return Int32(truncatingIfNeeded: (ab + nudge) / (Int64(1) << 31))
    }

    /// LiteRT's MultiplyByQuantizedMultiplier: x × significand × 2^(exponent − 31), rounded.
    static func multiplyByQuantizedMultiplier(_ x: Int32, _ significand: Int32, _ exponent: Int) -> Int32 {
        let left = max(exponent, 0), right = max(-exponent, 0)
        let shifted = Int32(truncatingIfNeeded: Int64(x) << left)
        return roundingDivideByPOT(roundingDoublingHighMul(shifted, significand), right)
    }

    /// A Q31 multiplier rounded to Q15.
    static func downScale(_ m: Int32) -> Int16 {
        if m >= Int32.max - (1 << 15) { return Int16.max }
        return Int16((m + (1 << 15)) >> 16)
    }

    /// gemmlowp's SaturatingRoundingDoublingHighMul for 16 bits.
    static func roundingDoublingHighMul(_ a: Int16, _ b: Int16) -> Int16 {
        if a == b && a == Int16.min { return Int16.max }
        let ab = Int32(a) * Int32(b)
        let nudge: Int32 = ab >= 0 ? 1 << 14 : 1 - (1 << 14)
        return Int16(truncatingIfNeeded: (ab + nudge) / (1 << 15))
    }

    /// The same, truncating toward zero instead of rounding (LiteRT's SaturatingDoublingHighMul).
    static func doublingHighMul(_ a: Int16, _ b: Int16) -> Int16 {
        if a == b && a == Int16.min { return Int16.max }
        return Int16(truncatingIfNeeded: (Int32(a) * Int32(b)) / (1 << 15))
    }

    /// gemmlowp's RoundingDivideByPOT: x / 2^exponent rounded to nearest, ties away from zero.
    static func roundingDivideByPOT(_ x: Int32, _ exponent: Int) -> Int32 {
        guard exponent > 0 else { return x }
        let mask: Int32 = (1 << exponent) - 1
        let remainder = x & mask
        let threshold = (mask >> 1) + (x < 0 ? 1 : 0)
        return (x >> exponent) + (remainder > threshold ? 1 : 0)
    }

    static func saturatingLeftShift(_ value: Int16, _ amount: Int) -> Int16 {
        let r = Int64(value) * (Int64(1) << amount)
        return Int16(min(max(r, Int64(Int16.min)), Int64(Int16.max)))
    }

    /// LiteRT's hard-swish parameters for input and output scales.
    struct HardSwish {
        let outputMultiplier: Int16, outputExponent: Int
        let reluishMultiplier: Int16, reluishExponent: Int

        /// Hard-swish of an input value already minus its zero point, on the output scale before
        /// the output zero point (LiteRT's reference HardSwish).
        func apply(_ input: Int32) -> Int32 {
            let value = Int16(clamping: input)
            let hires = Int16(truncatingIfNeeded: Int32(value) * (1 << 7))
            let preshift = roundingDoublingHighMul(hires, outputMultiplier)
            var reluish = hires
            if reluishExponent > 0 { reluish = saturatingLeftShift(reluish, reluishExponent - 1) }
            reluish = roundingDoublingHighMul(reluish, reluishMultiplier)
            if reluishExponent > 0 { reluish = saturatingLeftShift(reluish, 1) }
            if reluishExponent < 0 { reluish = Int16(truncatingIfNeeded: roundingDivideByPOT(Int32(reluish), -reluishExponent)) }
            reluish = Int16(truncatingIfNeeded: (Int32(reluish) + (1 << 15)) >> 1)
            let product = doublingHighMul(reluish, preshift)
            return roundingDivideByPOT(Int32(product), -outputExponent)
        }
    }

    /// Nil when LiteRT would refuse the scales (an output multiplier above 1).
    static func hardSwishParameters(input: Float, output: Float) -> HardSwish? {
        let hires = (1 as Float) / 128 * input
        let reluishScale: Float = 3 / 32768
        let o = quantizeMultiplier(Double(hires / output)), r = quantizeMultiplier(Double(hires / reluishScale))
        guard o.exponent <= 0, o.exponent > -16, r.exponent < 16, r.exponent > -16 else { return nil }
        return HardSwish(outputMultiplier: downScale(o.significand), outputExponent: o.exponent,
                         reluishMultiplier: downScale(r.significand), reluishExponent: r.exponent)
    }
}
