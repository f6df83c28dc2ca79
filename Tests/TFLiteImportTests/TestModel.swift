import Foundation
@testable import TFLiteImport
import TestSupport

/// A small TFLite model described in Swift and encoded with ``FBEncoder``, for tests that need a
/// model with particular operators (unsupported, quantized) or a small valid one to fuzz.
struct TestModel {
    struct Tensor {
        var name: String
        var shape: [Int32]
        var type: Int8 = 0
        var data: [UInt8]? = nil
        var quantizationScale: [Float]? = nil
        /// Zero points (int64 in the file); zeros when nil.
        var quantizationZeroPoints: [Int64]? = nil
        var quantizedDimension: Int32 = 0
    }

    struct Operator {
        var code: Int
        var inputs: [Int32]
        var outputs: [Int32]
        var optionsType: UInt8 = 0
        var options: [(Int, FBValue)]? = nil
        var custom: [UInt8]? = nil
    }

    /// Operator codes: builtin code and custom name.
    var codes: [(builtin: Int32, custom: String?)] = []
    var tensors: [Tensor] = []
    var operators: [Operator] = []
    var inputs: [Int32] = []
    var outputs: [Int32] = []
    var description = "test model"
    var identifier = "TFL3"
    /// Copies of the subgraph appended after the first (to test multi-subgraph files).
    var extraSubgraphs = 0
    /// Store constant data after the flatbuffer (Buffer.offset/size, as models over 2 GB do).
    var externalData = false

    /// Adds a tensor, returning its index.
    @discardableResult
    mutating func tensor(_ name: String, _ shape: [Int32], type: Int8 = 0, data: [UInt8]? = nil) -> Int32 {
        tensors.append(Tensor(name: name, shape: shape, type: type, data: data))
        return Int32(tensors.count - 1)
    }

    /// Adds an operator with builtin `builtin` (or CUSTOM with `custom`), reusing operator codes.
    mutating func op(_ builtin: Int32, custom: String? = nil, _ inputs: [Int32], _ outputs: [Int32],
                     optionsType: UInt8 = 0, options: [(Int, FBValue)]? = nil, customOptions: [UInt8]? = nil) {
        let code: Int
        if let k = codes.firstIndex(where: { $0.builtin == builtin && $0.custom == custom }) {
            code = k
        } else {
            codes.append((builtin, custom))
            code = codes.count - 1
        }
        operators.append(Operator(code: code, inputs: inputs, outputs: outputs, optionsType: optionsType, options: options,
                                  custom: customOptions))
    }

    /// The FlatBuffer bytes (followed by the constant data when `externalData` is set).
    func bytes() -> [UInt8] {
        guard externalData else { return encode(dataStart: nil) }
        // Offsets are fixed-size fields: encode once to learn the length, then with the real offsets.
        let start = encode(dataStart: 0).count
        return encode(dataStart: start) + tensors.compactMap(\.data).flatMap { $0 }
    }

    private func encode(dataStart: Int?) -> [UInt8] {
        var next = dataStart ?? 0
        var buffers: [FBValue] = [.table([])]
        var tensorTables: [FBValue] = []
        for t in tensors {
            var fields: [(Int, FBValue)] = [(0, .int32s(t.shape)), (1, .int8(t.type)), (3, .string(t.name))]
            if let data = t.data {
                if dataStart != nil {
                    buffers.append(.table([(1, .uint64(UInt64(next))), (2, .uint64(UInt64(data.count)))]))
                    next += data.count
                } else {
                    buffers.append(.table([(0, .bytes(data))]))
                }
                fields.append((2, .uint32(UInt32(buffers.count - 1))))
            }
            if let scale = t.quantizationScale {
                let zeroPoints = t.quantizationZeroPoints ?? [Int64](repeating: 0, count: scale.count)
                fields.append((4, .table([(2, .int32s(scale.map { Int32(bitPattern: $0.bitPattern) })), (3, .int64s(zeroPoints)),
                                          (6, .int32(t.quantizedDimension))])))
            }
            tensorTables.append(.table(fields))
        }
        let ops: [FBValue] = operators.map { o in
            var fields: [(Int, FBValue)] = [(0, .uint32(UInt32(o.code))), (1, .int32s(o.inputs)), (2, .int32s(o.outputs))]
            if let options = o.options {
                fields.append((3, .uint8(o.optionsType)))
                fields.append((4, .table(options)))
            }
            if let custom = o.custom { fields.append((5, .bytes(custom))) }
            return .table(fields)
        }
        let codeTables: [FBValue] = codes.map { c in
            var fields: [(Int, FBValue)] = [(0, .int8(Int8(min(c.builtin, 127)))), (2, .int32(1)), (3, .int32(c.builtin))]
            if let custom = c.custom { fields.append((1, .string(custom))) }
            return .table(fields)
        }
        let subgraph: FBValue = .table([(0, .tables(tensorTables)), (1, .int32s(inputs)), (2, .int32s(outputs)),
                                        (3, .tables(ops)), (4, .string("main"))])
        let model: FBValue = .table([(0, .uint32(3)), (1, .tables(codeTables)), (2, .tables(Array(repeating: subgraph, count: 1 + extraSubgraphs))),
                                     (3, .string(description)), (4, .tables(buffers))])
        return FBEncoder.encode(model, identifier: identifier)
    }
}

/// Little-endian bytes of values.
func littleEndianBytes(_ values: [Float]) -> [UInt8] { values.flatMap { withUnsafeBytes(of: $0.bitPattern.littleEndian, Array.init) } }
func littleEndianBytes(_ values: [Int32]) -> [UInt8] { values.flatMap { withUnsafeBytes(of: $0.littleEndian, Array.init) } }
func float16Bytes(_ values: [Float]) -> [UInt8] {
    values.flatMap { withUnsafeBytes(of: Float16($0).bitPattern.littleEndian, Array.init) }
}

extension TestModel {
    /// A small valid float model exercising most mapped operators:
    /// input [1,8,8,3] → CONV_2D (float16 weights through DEQUANTIZE) → DEPTHWISE_CONV_2D → HARD_SWISH,
    /// PRELU → ADD → PAD → MAX_POOL_2D → RESIZE_BILINEAR → CONCATENATION → Convolution2DTransposeBias →
    /// AVERAGE_POOL_2D → MEAN → RESHAPE → FULLY_CONNECTED → SOFTMAX, plus LOGISTIC as a second output.
    static func small() -> TestModel {
        var m = TestModel()
        func ramp(_ n: Int, _ scale: Float = 0.1) -> [Float] { (0..<n).map { Float($0 % 7 - 3) * scale } }
        let input = m.tensor("input", [1, 8, 8, 3])
        let convW16 = m.tensor("conv/w16", [4, 3, 3, 3], type: 1, data: float16Bytes(ramp(108)))
        let convW = m.tensor("conv/w", [4, 3, 3, 3])
        let convB = m.tensor("conv/b", [4], data: littleEndianBytes(ramp(4)))
        let conv = m.tensor("conv", [1, 8, 8, 4])
        let dwW = m.tensor("dw/w", [1, 3, 3, 4], data: littleEndianBytes(ramp(36)))
        let dw = m.tensor("dw", [1, 4, 4, 4])
        let hs = m.tensor("hswish", [1, 4, 4, 4])
        let alpha = m.tensor("prelu/alpha", [1, 1, 4], data: littleEndianBytes(ramp(4)))
        let prelu = m.tensor("prelu", [1, 4, 4, 4])
        let add = m.tensor("add", [1, 4, 4, 4])
        let paddings = m.tensor("pad/paddings", [4, 2], type: 2, data: littleEndianBytes([0, 0, 1, 1, 1, 1, 0, 0] as [Int32]))
        let pad = m.tensor("pad", [1, 6, 6, 4])
        let pool = m.tensor("maxpool", [1, 3, 3, 4])
        let size = m.tensor("resize/size", [2], type: 2, data: littleEndianBytes([6, 6] as [Int32]))
        let resize = m.tensor("resize", [1, 6, 6, 4])
        let concat = m.tensor("concat", [1, 6, 6, 8])
        let tW = m.tensor("tconv/w", [2, 2, 2, 8], data: littleEndianBytes(ramp(64)))
        let tB = m.tensor("tconv/b", [2], data: littleEndianBytes(ramp(2)))
        let tconv = m.tensor("tconv", [1, 12, 12, 2])
        let avg = m.tensor("avgpool", [1, 6, 6, 2])
        let axes = m.tensor("mean/axes", [2], type: 2, data: littleEndianBytes([1, 2] as [Int32]))
        let mean = m.tensor("mean", [1, 1, 1, 2])
        let newShape = m.tensor("reshape/shape", [2], type: 2, data: littleEndianBytes([1, 2] as [Int32]))
        let reshape = m.tensor("reshape", [1, 2])
        let fcW = m.tensor("fc/w", [3, 2], data: littleEndianBytes(ramp(6)))
        let fcB = m.tensor("fc/b", [3], data: littleEndianBytes(ramp(3)))
        let fc = m.tensor("fc", [1, 3])
        let softmax = m.tensor("softmax", [1, 3])
        let logistic = m.tensor("logistic", [1, 1, 1, 2])

        m.op(6, [convW16], [convW])
        m.op(3, [input, convW, convB], [conv], optionsType: 1,
             options: [(0, .int8(0)), (1, .int32(1)), (2, .int32(1)), (3, .int8(1))])
        m.op(4, [conv, dwW], [dw], optionsType: 2,
             options: [(0, .int8(0)), (1, .int32(2)), (2, .int32(2)), (3, .int32(1)), (4, .int8(0))])
        m.op(117, [dw], [hs])
        m.op(54, [dw, alpha], [prelu])
        m.op(0, [hs, prelu], [add], optionsType: 11, options: [(0, .int8(0))])
        m.op(34, [add, paddings], [pad])
        m.op(17, [pad], [pool], optionsType: 5,
             options: [(0, .int8(1)), (1, .int32(2)), (2, .int32(2)), (3, .int32(2)), (4, .int32(2))])
        m.op(23, [pool, size], [resize], optionsType: 15, options: [(3, .bool(true))])
        m.op(2, [pad, resize], [concat], optionsType: 10, options: [(0, .int32(-1))])
        m.op(32, custom: "Convolution2DTransposeBias", [concat, tW, tB], [tconv],
             customOptions: littleEndianBytes([1, 2, 2] as [Int32]))
        m.op(1, [tconv], [avg], optionsType: 5,
             options: [(0, .int8(0)), (1, .int32(2)), (2, .int32(2)), (3, .int32(2)), (4, .int32(2))])
        m.op(40, [avg, axes], [mean], optionsType: 27, options: [(0, .bool(true))])
        m.op(22, [mean, newShape], [reshape])
        m.op(9, [reshape, fcW, fcB], [fc], optionsType: 8, options: [(0, .int8(0))])
        m.op(25, [fc], [softmax], optionsType: 9, options: [(0, .float(1))])
        m.op(14, [mean], [logistic])
        m.inputs = [input]
        m.outputs = [softmax, logistic]
        return m
    }
}

