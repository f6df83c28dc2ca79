import Foundation
import NeuralGraph
import XNNPACKRuntime
@testable import ONNXImport
import TestSupport


/// Deterministic values in −1…1.
func randomValues(_ count: Int, seed: UInt64) -> [Float] {
    var rng = SplitMix64(seed: seed)
    return (0..<count).map { _ in Float.random(in: -1...1, using: &rng) }
}

func maxAbsDiff(_ a: [Float], _ b: [Float]) -> Float {
    guard a.count == b.count else { return .infinity }
    return zip(a, b).map { abs($0 - $1) }.max() ?? 0
}

/// Imports `model`, runs it on `inputs` given in ONNX layout (NCHW for 4-D), and returns the outputs
/// in ONNX layout (transposed back from the graph's NHWC).
func runONNX(_ model: ONNXModelBuilder, _ inputs: [[Float]]) throws -> [[Float]] {
    let graph = try ONNXImporter.load(bytes: model.bytes(), fileName: "test.onnx")
    let predictor = try Predictor(graph: graph)
    var nhwc: [[Float]] = []
    for (k, values) in inputs.enumerated() {
        let shape = predictor.inputInfo(k).shape
        nhwc.append(shape.count == 4
            ? ONNXLayout.transpose(values, shape: [shape[0], shape[3], shape[1], shape[2]], permutation: [0, 2, 3, 1])
            : values)
    }
    let outputs = try predictor.predict(nhwc)
    return outputs.enumerated().map { k, values in
        let shape = predictor.outputInfo(k).shape
        return shape.count == 4 ? ONNXLayout.transpose(values, shape: shape, permutation: [0, 3, 1, 2]) : values
    }
}

/// Reference NCHW convolution (groups, strides, dilation, explicit pads [t, l, b, r]).
func referenceConv(_ x: [Float], _ xs: [Int], _ w: [Float], _ ws: [Int], bias: [Float]?, stride: (Int, Int) = (1, 1),
                   pads: [Int] = [0, 0, 0, 0], dilation: (Int, Int) = (1, 1), group: Int = 1) -> (values: [Float], shape: [Int]) {
    let (n, c, h, wd) = (xs[0], xs[1], xs[2], xs[3])
    let (o, cg, kh, kw) = (ws[0], ws[1], ws[2], ws[3])
    let oh = (h + pads[0] + pads[2] - ((kh - 1) * dilation.0 + 1)) / stride.0 + 1
    let ow = (wd + pads[1] + pads[3] - ((kw - 1) * dilation.1 + 1)) / stride.1 + 1
    let og = o / group
    var out = [Float](repeating: 0, count: n * o * oh * ow)
    for b in 0..<n { for oc in 0..<o { for y in 0..<oh { for xo in 0..<ow {
        var sum = bias?[oc] ?? 0
        let g = oc / og
        for ic in 0..<cg { for ky in 0..<kh { for kx in 0..<kw {
            let iy = y * stride.0 - pads[0] + ky * dilation.0, ix = xo * stride.1 - pads[1] + kx * dilation.1
            guard iy >= 0, iy < h, ix >= 0, ix < wd else { continue }
            sum += x[((b * c + g * cg + ic) * h + iy) * wd + ix] * w[((oc * cg + ic) * kh + ky) * kw + kx]
        } } }
        out[((b * o + oc) * oh + y) * ow + xo] = sum
    } } } }
    return (out, [n, o, oh, ow])
}

/// Reference NCHW transposed convolution (weights [C, O, kh, kw]).
func referenceConvTranspose(_ x: [Float], _ xs: [Int], _ w: [Float], _ ws: [Int], bias: [Float]?, stride: (Int, Int),
                            pads: [Int], outputPadding: (Int, Int) = (0, 0)) -> (values: [Float], shape: [Int]) {
    let (n, c, h, wd) = (xs[0], xs[1], xs[2], xs[3])
    let (o, kh, kw) = (ws[1], ws[2], ws[3])
    let fullH = (h - 1) * stride.0 + kh + outputPadding.0, fullW = (wd - 1) * stride.1 + kw + outputPadding.1
    let oh = fullH - pads[0] - pads[2], ow = fullW - pads[1] - pads[3]
    var out = [Float](repeating: 0, count: n * o * oh * ow)
    for b in 0..<n { for oc in 0..<o {
        for i in 0..<(oh * ow) { out[(b * o + oc) * oh * ow + i] = bias?[oc] ?? 0 }
        for ic in 0..<c { for y in 0..<h { for xi in 0..<wd { for ky in 0..<kh { for kx in 0..<kw {
            let oy = y * stride.0 + ky - pads[0], ox = xi * stride.1 + kx - pads[1]
            guard oy >= 0, oy < oh, ox >= 0, ox < ow else { continue }
            out[((b * o + oc) * oh + oy) * ow + ox] += x[((b * c + ic) * h + y) * wd + xi] * w[((ic * o + oc) * kh + ky) * kw + kx]
        } } } } }
    } }
    return (out, [n, o, oh, ow])
}

/// Reference ONNX Resize, linear, half_pixel (NCHW).
func referenceResizeLinearHalfPixel(_ x: [Float], _ xs: [Int], outH: Int, outW: Int) -> [Float] {
    let (n, c, h, w) = (xs[0], xs[1], xs[2], xs[3])
    var out = [Float](repeating: 0, count: n * c * outH * outW)
    func source(_ o: Int, _ inSize: Int, _ outSize: Int) -> (Int, Int, Float) {
        let s = max(0, (Float(o) + 0.5) * Float(inSize) / Float(outSize) - 0.5)
        let i0 = min(Int(s), inSize - 1), i1 = min(i0 + 1, inSize - 1)
        return (i0, i1, s - Float(i0))
    }
    for p in 0..<(n * c) { for y in 0..<outH { for xo in 0..<outW {
        let (y0, y1, fy) = source(y, h, outH), (x0, x1, fx) = source(xo, w, outW)
        func at(_ yy: Int, _ xx: Int) -> Float { x[(p * h + yy) * w + xx] }
        let top = at(y0, x0) * (1 - fx) + at(y0, x1) * fx, bottom = at(y1, x0) * (1 - fx) + at(y1, x1) * fx
        out[(p * outH + y) * outW + xo] = top * (1 - fy) + bottom * fy
    } } }
    return out
}
