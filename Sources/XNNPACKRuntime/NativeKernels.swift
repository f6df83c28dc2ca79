import CFrameGraphKernels
import Foundation
import NeuralGraph

/// The operations this XNNPACK snapshot lacks, as plain Swift loops over the predictor's buffers:
/// concatenation, tanh, hard sigmoid, mean over arbitrary axes, nearest-neighbour resize, softmax
/// with a temperature; and one it runs slowly, bilinear resize (the C kernel `fg_resize_bilinear`,
/// where the plan runs FrameGraph's own kernels: ``runsInsteadOfXNNPACK(_:in:)``).
enum NativeKernels {
    /// Whether the own-kernel plan runs `node` here although XNNPACK supports it: a bilinear resize
    /// of NHWC images (four dimensions in and out).
    static func runsInsteadOfXNNPACK(_ node: NeuralNode, in graph: NeuralGraph) -> Bool {
        guard case .resizeBilinear = node.operation, let input = node.inputs.first, input >= 0, let output = node.outputs.first
        else { return false }
        return graph.tensors[input].shape.count == 4 && graph.tensors[output].shape.count == 4
    }

    /// Source indices and weights of a bilinear resize along one axis of `inputs` samples to
    /// `outputs`, by TensorFlow's conventions (corners aligned, half-pixel centres, or neither): output
    /// o blends `low[o]` and `high[o]` with weight `weight[o]` for the second; positions before the
    /// first sample or past the last take that sample alone.
    static func bilinearTaps(outputs: Int, inputs: Int, alignCorners: Bool, halfPixelCenters: Bool)
        -> (low: [Int32], high: [Int32], weight: [Float]) {
        let scale = alignCorners && outputs > 1 ? Float(inputs - 1) / Float(outputs - 1) : Float(inputs) / Float(outputs)
        var low = [Int32](), high = [Int32](), weight = [Float]()
        for o in 0..<outputs {
            let x = !alignCorners && halfPixelCenters ? (Float(o) + 0.5) * scale - 0.5 : Float(o) * scale
            let below = x.rounded(.down)
            let l = x < 0 ? 0 : min(Int(below), inputs - 1), h = x < 0 ? 0 : min(l + 1, inputs - 1)
            low.append(Int32(l))
            high.append(Int32(h))
            weight.append(x < 0 || h == l ? 0 : x - below)
        }
        return (low, high, weight)
    }

    /// A kernel bound to its input and output buffers.
    static func make(_ node: NeuralNode, graph: NeuralGraph, buffers: [Int: TensorBuffer],
                     constants: [Int: ConstantStorage]) throws -> () -> Void {
        let label = "\(node.operation.name) ('\(node.name)')"
        func pointer(_ tensor: Int) throws -> UnsafeMutablePointer<Float> {
            if let b = buffers[tensor] { return b.pointer }
            if let c = constants[tensor] { return c.floatPointer }
            throw ModelError.runtime(operation: label, reason: "tensor '\(graph.tensors[tensor].name)' has no buffer")
        }
        let out = try pointer(node.outputs[0])
        let outShape = graph.tensors[node.outputs[0]].shape
        let count = outShape.reduce(1, *)
        switch node.operation {
        case .concatenation(let axisParameter, let activation):
            let rank = outShape.count
            let axis = axisParameter < 0 ? axisParameter + rank : axisParameter
            let outer = outShape[..<axis].reduce(1, *)
            let parts = try node.inputs.map { t -> (UnsafeMutablePointer<Float>, Int) in
                let shape = graph.tensors[t].shape
                return (try pointer(t), shape[axis...].reduce(1, *))
            }
            let total = parts.reduce(0) { $0 + $1.1 }
            let range = activation.range
            return {
                for o in 0..<outer {
                    var offset = o * total
                    for (src, inner) in parts {
                        (out + offset).update(from: src + o * inner, count: inner)
                        offset += inner
                    }
                }
                if activation != .none { clamp(out, count, range) }
            }
        case .tanh:
            let src = try pointer(node.inputs[0])
            return { for i in 0..<count { out[i] = Foundation.tanh(src[i]) } }
        case .hardSigmoid(let alpha, let beta):
            let src = try pointer(node.inputs[0])
            return { for i in 0..<count { out[i] = max(0, min(1, alpha * src[i] + beta)) } }
        case .mean(let axesParameter, _):
            let inShape = graph.tensors[node.inputs[0]].shape
            let src = try pointer(node.inputs[0])
            let rank = inShape.count
            let axes = Set(axesParameter.map { $0 < 0 ? $0 + rank : $0 })
            var strides = [Int](repeating: 1, count: rank)
            for d in stride(from: rank - 2, through: 0, by: -1) { strides[d] = strides[d + 1] * inShape[d + 1] }
            let reduced = axes.reduce(1) { $0 * inShape[$1] }
            let total = inShape.reduce(1, *)
            return {
                for i in 0..<count { out[i] = 0 }
                for flat in 0..<total {
                    var rest = flat, o = 0
                    for d in 0..<rank {
                        let coordinate = rest / strides[d]
                        rest %= strides[d]
                        if !axes.contains(d) {
                            o = o * inShape[d] + coordinate
                        }
                    }
                    out[o] += src[flat]
                }
                let scale = 1 / Float(reduced)
                for i in 0..<count { out[i] *= scale }
            }
        case .resizeNearest(let alignCorners, let halfPixel):
            let inShape = graph.tensors[node.inputs[0]].shape
            let src = try pointer(node.inputs[0])
            let (n, ih, iw, c) = (inShape[0], inShape[1], inShape[2], inShape[3])
            let (oh, ow) = (outShape[1], outShape[2])
            func index(_ o: Int, _ inSize: Int, _ outSize: Int) -> Int {
                let scale = alignCorners && outSize > 1 ? Float(inSize - 1) / Float(outSize - 1) : Float(inSize) / Float(outSize)
                let x = halfPixel ? (Float(o) + 0.5) * scale : Float(o) * scale
                let i = alignCorners ? Int(x.rounded()) : Int(x.rounded(.down))
                return min(max(i, 0), inSize - 1)
            }
            let ys = (0..<oh).map { index($0, ih, oh) }, xs = (0..<ow).map { index($0, iw, ow) }
            return {
                for b in 0..<n {
                    for y in 0..<oh {
                        for x in 0..<ow {
                            (out + ((b * oh + y) * ow + x) * c).update(from: src + ((b * ih + ys[y]) * iw + xs[x]) * c, count: c)
                        }
                    }
                }
            }
        case .resizeBilinear(let alignCorners, let halfPixel):
            let inShape = graph.tensors[node.inputs[0]].shape
            let src = try pointer(node.inputs[0])
            guard inShape.count == 4, outShape.count == 4, inShape[0] == outShape[0], inShape[3] == outShape[3],
                  inShape.allSatisfy({ $0 > 0 && $0 <= Int(Int32.max) }), outShape.allSatisfy({ $0 > 0 && $0 <= Int(Int32.max) })
            else { throw ModelError.runtime(operation: label, reason: "resizes \(inShape) to \(outShape): not NHWC images of one batch and channel count") }
            let ys = bilinearTaps(outputs: outShape[1], inputs: inShape[1], alignCorners: alignCorners, halfPixelCenters: halfPixel)
            let xs = bilinearTaps(outputs: outShape[2], inputs: inShape[2], alignCorners: alignCorners, halfPixelCenters: halfPixel)
            let dims = (inShape + outShape).map { Int32($0) }
            return {
                fg_resize_bilinear(src, dims[0], dims[1], dims[2], dims[3], out, dims[5], dims[6], ys.low, ys.high, ys.weight,
                                   xs.low, xs.high, xs.weight, 1)
            }
        case .softmax(let beta):
            let src = try pointer(node.inputs[0])
            let last = outShape.last ?? 1
            return {
                for row in 0..<(count / last) {
                    let s = src + row * last, d = out + row * last
                    var m = -Float.infinity
                    for i in 0..<last { m = max(m, s[i]) }
                    var sum: Float = 0
                    for i in 0..<last { d[i] = exp(beta * (s[i] - m)); sum += d[i] }
                    for i in 0..<last { d[i] /= sum }
                }
            }
        case .power(let exponent):
            let src = try pointer(node.inputs[0])
            return { for i in 0..<count { out[i] = Foundation.pow(src[i], exponent) } }
        case .quantize:
            // Real numbers rounded to the output's quantized type (its buffer holds real numbers).
            let src = try pointer(node.inputs[0])
            let t = graph.tensors[node.outputs[0]]
            guard let q = t.quantization else { return { out.update(from: src, count: count) } }
            return { for i in 0..<count { out[i] = q.fakeQuantize(src[i], type: t.elementType) } }
        case .dequantize:
            // A quantized tensor's buffer already holds its real numbers.
            let src = try pointer(node.inputs[0])
            return { if src != out { out.update(from: src, count: count) } }
        case .detectionPostProcess(let p):
            let codes = graph.tensors[node.inputs[0]].shape, scores = graph.tensors[node.inputs[1]].shape
            let kernel = DetectionPostProcessKernel(parameters: p, count: codes[1], codeLength: codes[2], columns: scores[2])
            let anchors = try pointer(node.inputs[2])
            for i in 0..<codes[1] where !(anchors[4 * i + 2] >= 0 && anchors[4 * i + 3] >= 0) {
                throw ModelError.runtime(operation: label, reason: "anchor \(i) has height \(anchors[4 * i + 2]) and width \(anchors[4 * i + 3]); both must be 0 or more")
            }
            let inputs = (try pointer(node.inputs[0]), try pointer(node.inputs[1]), anchors)
            let outputs = DetectionPostProcessKernel.Outputs(boxes: out, classes: try pointer(node.outputs[1]), scores: try pointer(node.outputs[2]),
                                                             count: try pointer(node.outputs[3]))
            return { kernel.run(codes: inputs.0, scores: inputs.1, anchors: inputs.2, into: outputs) }
        case .roundToFloat16:
            let src = try pointer(node.inputs[0])
            return { for i in 0..<count { out[i] = Float(Float16(src[i])) } }
        default:
            throw ModelError.runtime(operation: label, reason: "no native kernel")
        }
    }

    static func clamp(_ p: UnsafeMutablePointer<Float>, _ count: Int, _ range: (Float, Float)) {
        for i in 0..<count { p[i] = min(max(p[i], range.0), range.1) }
    }
}
