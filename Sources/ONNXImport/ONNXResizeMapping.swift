import NeuralGraph

/// Resize (opset 10+) and Upsample: spatial scaling of a 4-D input, nearest or linear.
///
/// Linear maps to the IR's bilinear resize (half_pixel and pytorch_half_pixel → half-pixel centres,
/// asymmetric → TensorFlow's legacy mode, align_corners → align corners). Nearest is accepted when the
/// source index the runtime picks for every output row and column equals ONNX's for the model's sizes
/// (coordinate_transformation_mode × nearest_mode), so no combination is guessed.
extension ONNXGraphBuilder {
    mutating func mapResize(_ c: ONNXNodeContext) throws {
        let x = try spatialInput(c)
        let isUpsample = c.node.opType == "Upsample"
        let rawMode = c.string("mode", "nearest")
        let mode = rawMode == "bilinear" ? "linear" : rawMode
        guard mode == "nearest" || mode == "linear" else { throw UnsupportedOperator("mode '\(rawMode)'") }
        if !isUpsample {
            if c.node.attribute("axes") != nil { throw UnsupportedOperator("'axes' attribute") }
            if try c.int("antialias", 0) != 0 { throw UnsupportedOperator("antialias=1") }
            let policy = c.string("keep_aspect_ratio_policy", "stretch")
            guard policy == "stretch" else { throw UnsupportedOperator("keep_aspect_ratio_policy '\(policy)'") }
        }
        // Scales (Upsample ≤ 8: attribute; Upsample 9 and Resize 10: input 1; Resize 11+: input 2) or sizes (input 3).
        var scales: [Float]?
        var sizes: [Int]?
        if isUpsample && opset < 9 {
            scales = c.floats("scales")
        } else if isUpsample || opset < 11 {
            scales = try constant(c, 1)?.floats
        } else {
            if let s = try constant(c, 2), s.count > 0 { scales = s.floats }
            if let s = try constant(c, 3), s.count > 0 {
                guard let ints = s.integers else { throw c.invalid("sizes are not integers") }
                sizes = ints
            }
        }
        let (n, ch, h, w) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3])
        let oh: Int, ow: Int, scaleH: Double, scaleW: Double
        if let sizes {
            guard sizes.count == 4, sizes[0] == n, sizes[1] == ch, sizes[2] >= 1, sizes[3] >= 1,
                  sizes[2] < 1 << 24, sizes[3] < 1 << 24 else {
                throw UnsupportedOperator("sizes \(sizes) for input \(describe(x.shape)); only H and W may change")
            }
            (oh, ow) = (sizes[2], sizes[3])
            (scaleH, scaleW) = (Double(oh) / Double(h), Double(ow) / Double(w))
        } else if let scales {
            guard scales.count == 4, scales[0] == 1, scales[1] == 1, scales[2] > 0, scales[3] > 0,
                  scales[2] < 65_536, scales[3] < 65_536 else {
                throw UnsupportedOperator("scales \(scales); only H and W may be scaled (by positive factors)")
            }
            (scaleH, scaleW) = (Double(scales[2]), Double(scales[3]))
            (oh, ow) = (Int((Double(h) * scaleH).rounded(.down)), Int((Double(w) * scaleW).rounded(.down)))
            guard oh >= 1, ow >= 1 else { throw c.invalid("scales \(scales) leave no output for \(describe(x.shape))") }
        } else {
            throw c.invalid("has neither scales nor sizes")
        }
        let coordinates = isUpsample || opset < 11 ? "asymmetric" : c.string("coordinate_transformation_mode", "half_pixel")
        let operation: NeuralOperation
        if mode == "linear" {
            // The runtime's scale is output / input; a scale that truncated the size differs from it.
            guard Double(oh) == Double(h) * scaleH, Double(ow) == Double(w) * scaleW else {
                throw UnsupportedOperator("linear scales \(scaleH)×\(scaleW) that do not give a whole output size for \(describe(x.shape))")
            }
            switch coordinates {
            case "half_pixel": operation = .resizeBilinear(alignCorners: false, halfPixelCenters: true)
            case "pytorch_half_pixel" where oh > 1 && ow > 1: operation = .resizeBilinear(alignCorners: false, halfPixelCenters: true)
            case "asymmetric": operation = .resizeBilinear(alignCorners: false, halfPixelCenters: false)
            case "align_corners": operation = .resizeBilinear(alignCorners: true, halfPixelCenters: false)
            default: throw UnsupportedOperator("linear with coordinate_transformation_mode '\(coordinates)' to \(oh)×\(ow)")
            }
        } else {
            let rounding = isUpsample || opset < 11 ? "floor" : c.string("nearest_mode", "round_prefer_floor")
            let candidates: [(alignCorners: Bool, halfPixel: Bool)] = [(false, false), (false, true), (true, false)]
            guard let match = candidates.first(where: { candidate in
                [(h, oh, scaleH), (w, ow, scaleW)].allSatisfy { input, output, scale in
                    (0..<output).allSatisfy { o in
                        guard let expected = Self.onnxNearest(o, input: input, output: output, scale: scale,
                                                              coordinates: coordinates, rounding: rounding) else { return false }
                        return expected == Self.runtimeNearest(o, input: input, output: output, candidate.alignCorners, candidate.halfPixel)
                    }
                }
            }) else {
                throw UnsupportedOperator("nearest with coordinate_transformation_mode '\(coordinates)' and nearest_mode '\(rounding)' " +
                                          "from \(h)×\(w) to \(oh)×\(ow)")
            }
            operation = .resizeNearest(alignCorners: match.alignCorners, halfPixelCenters: match.halfPixel)
        }
        try emit(c, operation, inputs: [x.tensor], shape: [n, ch, oh, ow])
    }

    /// The source index ONNX's Resize picks for output index `o` (nil for unknown modes).
    static func onnxNearest(_ o: Int, input: Int, output: Int, scale: Double, coordinates: String, rounding: String) -> Int? {
        let x: Double
        switch coordinates {
        case "half_pixel": x = (Double(o) + 0.5) / scale - 0.5
        case "pytorch_half_pixel": x = output > 1 ? (Double(o) + 0.5) / scale - 0.5 : 0
        case "align_corners": x = output > 1 ? Double(o) * Double(input - 1) / Double(output - 1) : 0
        case "asymmetric": x = Double(o) / scale
        case "tf_half_pixel_for_nn": x = (Double(o) + 0.5) / scale
        default: return nil
        }
        let i: Double
        switch rounding {
        case "round_prefer_floor": i = x - x.rounded(.down) == 0.5 ? x.rounded(.down) : x.rounded()
        case "round_prefer_ceil": i = x - x.rounded(.down) == 0.5 ? x.rounded(.up) : x.rounded()
        case "floor": i = x.rounded(.down)
        case "ceil": i = x.rounded(.up)
        default: return nil
        }
        return min(max(Int(i), 0), input - 1)
    }

    /// The source index the runtime's nearest-neighbour resize picks (as XNNPACKRuntime's kernel computes it).
    static func runtimeNearest(_ o: Int, input: Int, output: Int, _ alignCorners: Bool, _ halfPixel: Bool) -> Int {
        let scale = alignCorners && output > 1 ? Float(input - 1) / Float(output - 1) : Float(input) / Float(output)
        let x = halfPixel ? (Float(o) + 0.5) * scale : Float(o) * scale
        let i = alignCorners ? Int(x.rounded()) : Int(x.rounded(.down))
        return min(max(i, 0), input - 1)
    }
}
