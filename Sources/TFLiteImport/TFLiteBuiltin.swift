/// TFLite builtin operator codes (BuiltinOperator in schema.fbs) and their names, so that reports
/// name an unsupported operator ("GATHER") rather than a number.
public enum TFLiteBuiltin {
    static let add = 0
    static let averagePool2d = 1
    static let concatenation = 2
    static let conv2d = 3
    static let depthwiseConv2d = 4
    static let depthToSpace = 5
    static let dequantize = 6
    static let fullyConnected = 9
    static let logistic = 14
    static let maxPool2d = 17
    static let mul = 18
    static let relu = 19
    static let reluN1To1 = 20
    static let relu6 = 21
    static let reshape = 22
    static let resizeBilinear = 23
    static let softmax = 25
    static let tanh = 28
    static let custom = 32
    static let pad = 34
    static let mean = 40
    static let sub = 41
    static let div = 42
    static let prelu = 54
    static let maximum = 55
    static let minimum = 57
    static let padV2 = 60
    static let transposeConv = 67
    static let resizeNearestNeighbor = 97
    static let leakyRelu = 98
    static let quantize = 114
    static let hardSwish = 117
    static let densify = 124

    /// The builtin codes the importer maps (TFLiteOperatorMapping.swift; DENSIFY and a constant's
    /// DEQUANTIZE are folded at import). A test imports a one-operator model of every code and
    /// checks that exactly these are not refused as unknown.
    public static let supported: Set<Int> = [
        add, averagePool2d, concatenation, conv2d, depthwiseConv2d, depthToSpace, dequantize, fullyConnected, logistic, maxPool2d,
        mul, relu, reluN1To1, relu6, reshape, resizeBilinear, softmax, tanh, pad, mean, sub, div, prelu, maximum, minimum, padV2,
        transposeConv, resizeNearestNeighbor, leakyRelu, quantize, hardSwish, densify,
    ]
    /// The custom operators the importer maps.
    public static let supportedCustom = ["Convolution2DTransposeBias", "TFLite_Detection_PostProcess"]

    /// Names indexed by code, as in schema.fbs (209 codes).
    public static let names: [String] = [
        "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE", "DEQUANTIZE",
        "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED", "HASHTABLE_LOOKUP", "L2_NORMALIZATION", "L2_POOL_2D",
        "LOCAL_RESPONSE_NORMALIZATION", "LOGISTIC", "LSH_PROJECTION", "LSTM", "MAX_POOL_2D", "MUL", "RELU",
        "RELU_N1_TO_1", "RELU6", "RESHAPE", "RESIZE_BILINEAR", "RNN", "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH",
        "CONCAT_EMBEDDINGS", "SKIP_GRAM", "CALL", "CUSTOM", "EMBEDDING_LOOKUP_SPARSE", "PAD",
        "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND", "TRANSPOSE", "MEAN", "SUB",
        "DIV", "SQUEEZE", "UNIDIRECTIONAL_SEQUENCE_LSTM", "STRIDED_SLICE", "BIDIRECTIONAL_SEQUENCE_RNN", "EXP",
        "TOPK_V2", "SPLIT", "LOG_SOFTMAX", "DELEGATE", "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU", "MAXIMUM",
        "ARG_MAX", "MINIMUM", "LESS", "NEG", "PADV2", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "SELECT", "SLICE",
        "SIN", "TRANSPOSE_CONV", "SPARSE_TO_DENSE", "TILE", "EXPAND_DIMS", "EQUAL", "NOT_EQUAL", "LOG", "SUM", "SQRT",
        "RSQRT", "SHAPE", "POW", "ARG_MIN", "FAKE_QUANT", "REDUCE_PROD", "REDUCE_MAX", "PACK", "LOGICAL_OR",
        "ONE_HOT", "LOGICAL_AND", "LOGICAL_NOT", "UNPACK", "REDUCE_MIN", "FLOOR_DIV", "REDUCE_ANY", "SQUARE",
        "ZEROS_LIKE", "FILL", "FLOOR_MOD", "RANGE", "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", "SQUARED_DIFFERENCE",
        "MIRROR_PAD", "ABS", "SPLIT_V", "UNIQUE", "CEIL", "REVERSE_V2", "ADD_N", "GATHER_ND", "COS", "WHERE", "RANK",
        "ELU", "REVERSE_SEQUENCE", "MATRIX_DIAG", "QUANTIZE", "MATRIX_SET_DIAG", "ROUND", "HARD_SWISH", "IF", "WHILE",
        "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5", "SCATTER_ND", "SELECT_V2", "DENSIFY", "SEGMENT_SUM",
        "BATCH_MATMUL", "PLACEHOLDER_FOR_GREATER_OP_CODES", "CUMSUM", "CALL_ONCE", "BROADCAST_TO", "RFFT2D",
        "CONV_3D", "IMAG", "REAL", "COMPLEX_ABS", "HASHTABLE", "HASHTABLE_FIND", "HASHTABLE_IMPORT", "HASHTABLE_SIZE",
        "REDUCE_ALL", "CONV_3D_TRANSPOSE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "BROADCAST_ARGS",
        "RANDOM_STANDARD_NORMAL", "BUCKETIZE", "RANDOM_UNIFORM", "MULTINOMIAL", "GELU", "DYNAMIC_UPDATE_SLICE",
        "RELU_0_TO_1", "UNSORTED_SEGMENT_PROD", "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_SUM", "ATAN2",
        "UNSORTED_SEGMENT_MIN", "SIGN", "BITCAST", "BITWISE_XOR", "RIGHT_SHIFT", "STABLEHLO_LOGISTIC",
        "STABLEHLO_ADD", "STABLEHLO_DIVIDE", "STABLEHLO_MULTIPLY", "STABLEHLO_MAXIMUM", "STABLEHLO_RESHAPE",
        "STABLEHLO_CLAMP", "STABLEHLO_CONCATENATE", "STABLEHLO_BROADCAST_IN_DIM", "STABLEHLO_CONVOLUTION",
        "STABLEHLO_SLICE", "STABLEHLO_CUSTOM_CALL", "STABLEHLO_REDUCE", "STABLEHLO_ABS", "STABLEHLO_AND",
        "STABLEHLO_COSINE", "STABLEHLO_EXPONENTIAL", "STABLEHLO_FLOOR", "STABLEHLO_LOG", "STABLEHLO_MINIMUM",
        "STABLEHLO_NEGATE", "STABLEHLO_OR", "STABLEHLO_POWER", "STABLEHLO_REMAINDER", "STABLEHLO_RSQRT",
        "STABLEHLO_SELECT", "STABLEHLO_SUBTRACT", "STABLEHLO_TANH", "STABLEHLO_SCATTER", "STABLEHLO_COMPARE",
        "STABLEHLO_CONVERT", "STABLEHLO_DYNAMIC_SLICE", "STABLEHLO_DYNAMIC_UPDATE_SLICE", "STABLEHLO_PAD",
        "STABLEHLO_IOTA", "STABLEHLO_DOT_GENERAL", "STABLEHLO_REDUCE_WINDOW", "STABLEHLO_SORT", "STABLEHLO_WHILE",
        "STABLEHLO_GATHER", "STABLEHLO_TRANSPOSE", "DILATE", "STABLEHLO_RNG_BIT_GENERATOR", "REDUCE_WINDOW",
        "STABLEHLO_COMPOSITE", "STABLEHLO_SHIFT_LEFT", "STABLEHLO_CBRT",
    ]

    /// The name of builtin `code`, or BUILTIN_<code> for codes newer than this table.
    public static func name(_ code: Int) -> String {
        code >= 0 && code < names.count ? names[code] : "BUILTIN_\(code)"
    }
}
