import NeuralGraph

/// The builtin option tables the importer reads (schema.fbs), each decoded from an optional table:
/// an absent table gives the schema's defaults. Field ids and defaults follow schema.fbs.
enum TFLiteOptions {
    /// BuiltinOptions union tags of the tables below.
    static let conv2DType: UInt8 = 1, depthwiseConv2DType: UInt8 = 2, pool2DType: UInt8 = 5, fullyConnectedType: UInt8 = 8
    static let softmaxType: UInt8 = 9, concatenationType: UInt8 = 10, addType: UInt8 = 11, resizeBilinearType: UInt8 = 15
    static let reshapeType: UInt8 = 17, mulType: UInt8 = 21, reducerType: UInt8 = 27, subType: UInt8 = 28, divType: UInt8 = 29
    static let transposeConvType: UInt8 = 49, resizeNearestType: UInt8 = 74, leakyReluType: UInt8 = 75, depthToSpaceType: UInt8 = 94

    /// Padding enum: SAME = 0, VALID = 1.
    static func padding(_ raw: Int8) -> Padding? {
        switch raw {
        case 0: return .same
        case 1: return .valid
        default: return nil
        }
    }

    /// ActivationFunctionType: NONE = 0, RELU = 1, RELU_N1_TO_1 = 2, RELU6 = 3, TANH = 4 (SIGN_BIT = 5 unsupported).
    static func activation(_ raw: Int8) -> FusedActivation? {
        switch raw {
        case 0: return FusedActivation.none
        case 1: return .relu
        case 2: return .reluN1To1
        case 3: return .relu6
        case 4: return .tanh
        default: return nil
        }
    }

    /// Conv2DOptions: padding (0), stride_w (1), stride_h (2), fused_activation_function (3),
    /// dilation_w_factor (4, default 1), dilation_h_factor (5, default 1).
    struct Conv2D {
        var padding: Int8 = 0, strideW = 0, strideH = 0, activation: Int8 = 0, dilationW = 1, dilationH = 1
        init(_ t: FlatTable?) throws(FlatBufferError) {
            guard let t else { return }
            padding = try t.scalar(0, default: 0)
            strideW = Int(try t.scalar(1, default: Int32(0)))
            strideH = Int(try t.scalar(2, default: Int32(0)))
            activation = try t.scalar(3, default: 0)
            dilationW = Int(try t.scalar(4, default: Int32(1)))
            dilationH = Int(try t.scalar(5, default: Int32(1)))
        }
    }

    /// DepthwiseConv2DOptions: padding (0), stride_w (1), stride_h (2), depth_multiplier (3),
    /// fused_activation_function (4), dilation_w_factor (5, default 1), dilation_h_factor (6, default 1).
    struct DepthwiseConv2D {
        var padding: Int8 = 0, strideW = 0, strideH = 0, depthMultiplier = 0, activation: Int8 = 0
        var dilationW = 1, dilationH = 1
        init(_ t: FlatTable?) throws(FlatBufferError) {
            guard let t else { return }
            padding = try t.scalar(0, default: 0)
            strideW = Int(try t.scalar(1, default: Int32(0)))
            strideH = Int(try t.scalar(2, default: Int32(0)))
            depthMultiplier = Int(try t.scalar(3, default: Int32(0)))
            activation = try t.scalar(4, default: 0)
            dilationW = Int(try t.scalar(5, default: Int32(1)))
            dilationH = Int(try t.scalar(6, default: Int32(1)))
        }
    }

    /// TransposeConvOptions: padding (0), stride_w (1), stride_h (2), fused_activation_function (3).
    struct TransposeConv {
        var padding: Int8 = 0, strideW = 0, strideH = 0, activation: Int8 = 0
        init(_ t: FlatTable?) throws(FlatBufferError) {
            guard let t else { return }
            padding = try t.scalar(0, default: 0)
            strideW = Int(try t.scalar(1, default: Int32(0)))
            strideH = Int(try t.scalar(2, default: Int32(0)))
            activation = try t.scalar(3, default: 0)
        }
    }

    /// Pool2DOptions: padding (0), stride_w (1), stride_h (2), filter_width (3), filter_height (4),
    /// fused_activation_function (5).
    struct Pool2D {
        var padding: Int8 = 0, strideW = 0, strideH = 0, filterW = 0, filterH = 0, activation: Int8 = 0
        init(_ t: FlatTable?) throws(FlatBufferError) {
            guard let t else { return }
            padding = try t.scalar(0, default: 0)
            strideW = Int(try t.scalar(1, default: Int32(0)))
            strideH = Int(try t.scalar(2, default: Int32(0)))
            filterW = Int(try t.scalar(3, default: Int32(0)))
            filterH = Int(try t.scalar(4, default: Int32(0)))
            activation = try t.scalar(5, default: 0)
        }
    }

    /// Add/Sub/Mul/Div/FullyConnected options: fused_activation_function (0).
    static func fusedActivation(_ t: FlatTable?) throws(FlatBufferError) -> Int8 {
        try t?.scalar(0, default: Int8(0)) ?? 0
    }

    /// FullyConnectedOptions: fused_activation_function (0), weights_format (1: DEFAULT = 0), keep_num_dims (2).
    struct FullyConnected {
        var activation: Int8 = 0, weightsFormat: Int8 = 0, keepNumDims = false
        init(_ t: FlatTable?) throws(FlatBufferError) {
            guard let t else { return }
            activation = try t.scalar(0, default: 0)
            weightsFormat = try t.scalar(1, default: 0)
            keepNumDims = try t.bool(2, default: false)
        }
    }

    /// ConcatenationOptions: axis (0), fused_activation_function (1).
    struct Concatenation {
        var axis = 0, activation: Int8 = 0
        init(_ t: FlatTable?) throws(FlatBufferError) {
            guard let t else { return }
            axis = Int(try t.scalar(0, default: Int32(0)))
            activation = try t.scalar(1, default: 0)
        }
    }

    /// ResizeBilinearOptions: new_height (0) and new_width (1) deprecated, align_corners (2),
    /// half_pixel_centers (3). ResizeNearestNeighborOptions: align_corners (0), half_pixel_centers (1).
    struct Resize {
        var alignCorners = false, halfPixelCenters = false
        init(_ t: FlatTable?, nearest: Bool) throws(FlatBufferError) {
            guard let t else { return }
            let first = nearest ? 0 : 2
            alignCorners = try t.bool(first, default: false)
            halfPixelCenters = try t.bool(first + 1, default: false)
        }
    }

    /// ReducerOptions: keep_dims (0).
    static func keepDims(_ t: FlatTable?) throws(FlatBufferError) -> Bool {
        try t?.bool(0, default: false) ?? false
    }

    /// SoftmaxOptions: beta (0, float, schema default 0 — converters always write it).
    static func softmaxBeta(_ t: FlatTable?) throws(FlatBufferError) -> Float {
        try t?.float(0, default: 0) ?? 0
    }

    /// LeakyReluOptions: alpha (0, float).
    static func leakyReluAlpha(_ t: FlatTable?) throws(FlatBufferError) -> Float {
        try t?.float(0, default: 0) ?? 0
    }
}
