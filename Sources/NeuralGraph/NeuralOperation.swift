/// Activation fused into an operation's output.
public enum FusedActivation: String, Sendable, Equatable {
    case none, relu, reluN1To1, relu6, tanh

    /// Output clamp range for the clamp-like activations (nil for none and tanh).
    public var clamp: (min: Float, max: Float)? {
        switch self {
        case .none, .tanh: return nil
        case .relu: return (0, .infinity)
        case .reluN1To1: return (-1, 1)
        case .relu6: return (0, 6)
        }
    }
}

/// How a convolution or pooling window treats the border.
public enum Padding: Sendable, Equatable {
    /// TensorFlow SAME: output size ceil(input / stride), padding split with the extra on the bottom/right.
    case same
    /// No padding: output size ceil((input − window + 1) / stride).
    case valid
    /// Explicit padding in pixels (ONNX `pads`).
    case explicit(top: Int, left: Int, bottom: Int, right: Int)
}

/// Parameters of 2-D convolutions, depthwise convolutions and transposed convolutions.
public struct ConvolutionParameters: Sendable, Equatable {
    public var strideH = 1, strideW = 1
    public var dilationH = 1, dilationW = 1
    public var padding: Padding = .valid
    public var activation: FusedActivation = .none
    /// Depthwise only: output channels per input channel.
    public var depthMultiplier = 1
    /// Transposed convolution only: extra rows/columns added at the bottom/right of the output.
    public var adjustH = 0, adjustW = 0

    public init(strideH: Int = 1, strideW: Int = 1, dilationH: Int = 1, dilationW: Int = 1, padding: Padding = .valid,
                activation: FusedActivation = .none, depthMultiplier: Int = 1) {
        self.strideH = strideH
        self.strideW = strideW
        self.dilationH = dilationH
        self.dilationW = dilationW
        self.padding = padding
        self.activation = activation
        self.depthMultiplier = depthMultiplier
    }
}

/// Parameters of average and max pooling.
public struct PoolingParameters: Sendable, Equatable {
    public var filterH: Int, filterW: Int
    public var strideH: Int, strideW: Int
    public var padding: Padding
    public var activation: FusedActivation

    public init(filterH: Int, filterW: Int, strideH: Int, strideW: Int, padding: Padding, activation: FusedActivation = .none) {
        self.filterH = filterH
        self.filterW = filterW
        self.strideH = strideH
        self.strideW = strideW
        self.padding = padding
        self.activation = activation
    }
}

/// One operation of the graph IR. Activations are NHWC; weight layouts follow TFLite (importers of
/// other formats convert at import):
/// - `conv2d`: inputs [input, filter [O, H, W, I], bias [O]?]
/// - `depthwiseConv2d`: inputs [input, filter [1, H, W, I × multiplier], bias?]
/// - `transposeConv2d`: inputs [input, filter [O, H, W, I], bias [O]?]; output shape from the output tensor
/// - `fullyConnected`: inputs [input [N, I] (or flattened), weights [O, I], bias [O]?]
/// - binary ops: inputs [a, b] with NumPy-style broadcasting
/// - `prelu`: inputs [input, slope] (slope broadcast over the channel axis)
/// - `pad`: paddings per dimension (before, after), padded with `value`
/// - `mean`: over `axes`
/// - `concatenation`: any number of inputs along `axis`
/// - `resizeBilinear`: to the output tensor's size
public enum NeuralOperation: Sendable, Equatable {
    case conv2d(ConvolutionParameters)
    case depthwiseConv2d(ConvolutionParameters)
    case transposeConv2d(ConvolutionParameters)
    case fullyConnected(activation: FusedActivation)
    case add(FusedActivation), subtract(FusedActivation), multiply(FusedActivation), divide(FusedActivation)
    case minimum, maximum
    case relu, relu6, reluN1To1, leakyRelu(alpha: Float), hardSwish, hardSigmoid(alpha: Float, beta: Float), logistic, tanh, prelu
    case clamp(min: Float, max: Float)
    case averagePool2d(PoolingParameters), maxPool2d(PoolingParameters)
    case mean(axes: [Int], keepDims: Bool)
    case pad(paddings: [(Int, Int)], value: Float)
    case reshape
    case concatenation(axis: Int, activation: FusedActivation)
    case resizeBilinear(alignCorners: Bool, halfPixelCenters: Bool)
    case resizeNearest(alignCorners: Bool, halfPixelCenters: Bool)
    case softmax(beta: Float)
    /// Moves `blockSize`² channel groups into blockSize × blockSize spatial blocks (TensorFlow's
    /// DCR order): [N, H, W, C] → [N, H·b, W·b, C / b²].
    case depthToSpace(blockSize: Int)
    /// x^exponent elementwise (MetalTensor's `power` neuron, after its a·x + b).
    case power(exponent: Float)
    /// Each value rounded to the nearest float16 and back (emulates a network that stores its
    /// tensors in half precision, as MetalTensor does by default).
    case roundToFloat16
    /// Real values (or another quantized tensor) to the output tensor's quantized type (TFLite's
    /// QUANTIZE, ONNX's QuantizeLinear): rounding half away from zero, clamped to the type.
    case quantize
    /// A quantized tensor to real values (TFLite's DEQUANTIZE, ONNX's DequantizeLinear).
    case dequantize
    /// SSD post-processing (TFLite's `TFLite_Detection_PostProcess`): inputs [box encodings, class
    /// scores, anchors], four outputs (boxes, classes, scores, count); see ``DetectionPostProcessParameters``.
    case detectionPostProcess(DetectionPostProcessParameters)

    /// The name reports and errors use.
    public var name: String {
        switch self {
        case .conv2d: return "CONV_2D"
        case .depthwiseConv2d: return "DEPTHWISE_CONV_2D"
        case .transposeConv2d: return "TRANSPOSE_CONV"
        case .fullyConnected: return "FULLY_CONNECTED"
        case .add: return "ADD"
        case .subtract: return "SUB"
        case .multiply: return "MUL"
        case .divide: return "DIV"
        case .minimum: return "MINIMUM"
        case .maximum: return "MAXIMUM"
        case .relu: return "RELU"
        case .relu6: return "RELU6"
        case .reluN1To1: return "RELU_N1_TO_1"
        case .leakyRelu: return "LEAKY_RELU"
        case .hardSwish: return "HARD_SWISH"
        case .hardSigmoid: return "HARD_SIGMOID"
        case .logistic: return "LOGISTIC"
        case .tanh: return "TANH"
        case .prelu: return "PRELU"
        case .clamp: return "CLAMP"
        case .averagePool2d: return "AVERAGE_POOL_2D"
        case .maxPool2d: return "MAX_POOL_2D"
        case .mean: return "MEAN"
        case .pad: return "PAD"
        case .reshape: return "RESHAPE"
        case .concatenation: return "CONCATENATION"
        case .resizeBilinear: return "RESIZE_BILINEAR"
        case .resizeNearest: return "RESIZE_NEAREST_NEIGHBOR"
        case .softmax: return "SOFTMAX"
        case .depthToSpace: return "DEPTH_TO_SPACE"
        case .power: return "POW"
        case .roundToFloat16: return "ROUND_TO_FLOAT16"
        case .quantize: return "QUANTIZE"
        case .dequantize: return "DEQUANTIZE"
        case .detectionPostProcess: return "TFLite_Detection_PostProcess"
        }
    }

    public static func == (a: NeuralOperation, b: NeuralOperation) -> Bool { "\(a)" == "\(b)" }
}
