import NeuralGraph

extension Padding {
    /// Explicit (before, after) padding for a window of `kernel` (dilated) with `stride` producing
    /// `output` from `input` along one axis (TensorFlow SAME puts the odd pixel after).
    func amounts(input: Int, output: Int, kernel: Int, stride: Int, dilation: Int, vertical: Bool) -> (Int, Int) {
        switch self {
        case .valid:
            return (0, 0)
        case .same:
            let effective = (kernel - 1) * dilation + 1
            let total = max(0, (output - 1) * stride + effective - input)
            return (total / 2, total - total / 2)
        case .explicit(let top, let left, let bottom, let right):
            return vertical ? (top, bottom) : (left, right)
        }
    }
}

extension FusedActivation {
    /// Output range for XNNPACK's fused clamp (−∞…∞ when none; tanh is applied separately).
    var range: (Float, Float) {
        clamp ?? (-Float.infinity, Float.infinity)
    }
}
