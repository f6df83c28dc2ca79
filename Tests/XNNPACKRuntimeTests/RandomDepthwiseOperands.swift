import CFrameGraphKernels
import TestSupport

/// One random depthwise convolution's operands and epilogue (a residual on some channels, a PReLU
/// or hard-swish tail, an optional ReLU6 clamp), drawn from `seed` in one fixed order: the
/// depthwise kernel tests' cases, shared by DepthwiseKernelTests and BFloat16HandOffTests.
struct RandomDepthwiseOperands {
    let input: [Float], weights: [Float], bias: [Float], slopes: [Float], residual: [Float]
    /// Channels the residual is added to (0: none).
    let residualChannels: Int
    /// 0 none, 1 PReLU, 2 hard-swish.
    let tail: Int
    let min1: Float, max1: Float

    /// `inputCount` input values, `taps` weights per channel, `outputCount` residual values.
    init(inputCount: Int, taps: Int, channels: Int, outputCount: Int, seed: inout UInt64) {
        input = pseudoRandomValues(inputCount, seed: &seed)
        weights = pseudoRandomValues(taps * channels, seed: &seed)
        bias = pseudoRandomValues(channels, seed: &seed)
        slopes = pseudoRandomValues(channels, seed: &seed)
        residual = pseudoRandomValues(outputCount, seed: &seed)
        residualChannels = pseudoRandomInt(0...2, seed: &seed) == 0 ? 0 : pseudoRandomInt(1...channels, seed: &seed)
        tail = pseudoRandomInt(0...2, seed: &seed)
        (min1, max1) = pseudoRandomInt(0...1, seed: &seed) == 0 ? (-.infinity, .infinity) : (0, 6)
    }

    /// Calls `body` with the epilogue (its second clamp `min2`…`max2`) over `channels` channels,
    /// whose pointers are valid inside it.
    func withEpilogue(channels: Int, min2: Float = -.infinity, max2: Float = .infinity, _ body: (inout fg_conv_epilogue) -> Void) {
        residual.withUnsafeBufferPointer { r in
            slopes.withUnsafeBufferPointer { s in
                var e = fg_conv_epilogue(min1: min1, max1: max1, residual: residualChannels > 0 ? r.baseAddress : nil,
                                         residual_stride: channels, residual_channels: Int32(residualChannels),
                                         min2: min2, max2: max2, prelu_slopes: tail == 1 ? s.baseAddress : nil,
                                         hard_swish: tail == 2 ? 1 : 0)
                body(&e)
            }
        }
    }
}
