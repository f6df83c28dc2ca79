import NeuralGraph

/// ONNX's quantization operators as onnxruntime's QDQ models use them, and `Cast`:
/// - `DequantizeLinear` of a constant (a quantized weight or bias) is folded into a float constant;
///   of an activation, it is a DEQUANTIZE operation.
/// - `QuantizeLinear` of an activation is a QUANTIZE operation whose output is a quantized tensor
///   (int8, or uint8 as the zero point's type says), so the activation is rounded exactly as
///   onnxruntime rounds it; the operations between stay float32 on those values.
/// - `Cast` of a constant is folded (fp16 weights behind a Cast become float32); of an activation, a
///   cast to FLOAT16 rounds to half precision and a cast to FLOAT is the value itself.
extension ONNXGraphBuilder {
    /// Scale and zero point inputs (1, 2) and `axis` as a ``Quantization`` for a tensor of ONNX shape `shape`.
    mutating func quantizationParameters(_ c: ONNXNodeContext, shape: [Int]) throws -> (Quantization, ElementType) {
        let scale = try requiredConstant(c, 1, "scale")
        let zero = try constant(c, 2)
        let type = zero?.elementType ?? .uint8
        guard type == .int8 || type == .uint8 || type == .int32 else {
            throw UnsupportedOperator("zero point of type \(type); int8, uint8 and int32 are supported")
        }
        let scales = scale.floats
        let zeroPoints = (zero?.integers ?? [Int](repeating: 0, count: max(1, scales.count))).map { Int32(clamping: $0) }
        var axis: Int?
        if scales.count > 1 {
            let a = try c.int("axis", 1)
            axis = a < 0 ? a + shape.count : a
        }
        let q = Quantization(scales: scales, zeroPoints: zeroPoints.count == scales.count ? zeroPoints : [zeroPoints.first ?? 0], axis: axis)
        if let problem = q.problem(type: type, shape: shape) { throw c.invalid("quantization: \(problem)") }
        return (q, type)
    }

    mutating func mapDequantizeLinear(_ c: ONNXNodeContext) throws {
        guard let name = c.inputName(0), let v = try value(name) else { throw c.invalid("lacks its input 0") }
        switch v {
        case .constant(let x):
            let (q, _) = try quantizationParameters(c, shape: x.shape)
            guard let integers = x.integers else { throw c.invalid("input '\(name)' is not integers") }
            setConstant(c, ONNXConstant(shape: x.shape, values: .floats(q.dequantize(integers, shape: x.shape))))
        case .activation(let t, let s):
            let (q, type) = try quantizationParameters(c, shape: s)
            guard let own = graph.tensors[t].quantization, graph.tensors[t].elementType == type, own == q else {
                throw UnsupportedOperator("dequantizing '\(name)' with other parameters than it was quantized with")
            }
            try emit(c, .dequantize, inputs: [t], shape: s)
        case .unavailable:
            throw UnsupportedOperator("input '\(name)' is unavailable")
        }
    }

    mutating func mapQuantizeLinear(_ c: ONNXNodeContext) throws {
        guard let name = c.inputName(0), let v = try value(name) else { throw c.invalid("lacks its input 0") }
        switch v {
        case .constant(let x):
            let (q, type) = try quantizationParameters(c, shape: x.shape)
            guard !q.isPerChannel else { throw UnsupportedOperator("per-axis QuantizeLinear of a constant") }
            setConstant(c, ONNXConstant(shape: x.shape, values: .integers(x.floats.map { q.quantize($0, type: type) }), elementType: type))
        case .activation(let t, let s):
            let (q, type) = try quantizationParameters(c, shape: s)
            guard !q.isPerChannel else { throw UnsupportedOperator("per-axis quantization of an activation") }
            let output = try emit(c, .quantize, inputs: [t], shape: s)
            graph.tensors[output].elementType = type
            graph.tensors[output].quantization = q
        case .unavailable:
            throw UnsupportedOperator("input '\(name)' is unavailable")
        }
    }

    mutating func mapCast(_ c: ONNXNodeContext) throws {
        guard let name = c.inputName(0), let v = try value(name) else { throw c.invalid("lacks its input 0") }
        let to = Int64(try c.int("to", Int(ONNXDataType.float)))
        switch v {
        case .constant(let x):
            switch to {
            case ONNXDataType.float: setConstant(c, ONNXConstant(shape: x.shape, values: .floats(x.floats)))
            case ONNXDataType.float16: setConstant(c, ONNXConstant(shape: x.shape, values: .floats(x.floats.map { Float(Float16($0)) })))
            case ONNXDataType.int32, ONNXDataType.int64:
                guard let i = x.integers else { throw c.invalid("casting non-finite values to integers") }
                setConstant(c, ONNXConstant(shape: x.shape, values: .integers(i)))
            default: throw UnsupportedOperator("to \(ONNXDataType.name(to))")
            }
        case .activation(let t, let s):
            switch to {
            case ONNXDataType.float:
                values[c.node.outputs[0]] = v  // float32 stays float32 (an fp16 activation is float32 here, rounded)
                if naturalOrder.contains(name) { naturalOrder.insert(c.node.outputs[0]) }
            case ONNXDataType.float16:
                let output = try emit(c, .roundToFloat16, inputs: [t], shape: s)
                if naturalOrder.contains(name) {
                    // Still in ONNX's own order (NHWC before its Transpose): the IR shape is the ONNX one.
                    naturalOrder.insert(c.node.outputs[0])
                    graph.tensors[output].shape = graph.tensors[t].shape
                }
            default:
                throw UnsupportedOperator("of an activation to \(ONNXDataType.name(to))")
            }
        case .unavailable:
            throw UnsupportedOperator("input '\(name)' is unavailable")
        }
    }
}
