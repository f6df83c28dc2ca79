/// Metal Performance Shaders' window arithmetic along one axis (format spec §1, §6, §7), turned into
/// the explicit before/after padding of a TensorFlow-style window, which the graph IR and XNNPACK use.
enum MPSWindow {
    /// Padding modes of convolutions (`padding` key).
    enum Mode: String {
        case same, valid, full
    }

    /// One axis of a convolution or pooling window in IR terms: the padding before and after, the
    /// zero taps to put in front of the kernel (when MPS starts the window inside the input), and the
    /// output length.
    struct Axis: Equatable {
        var before: Int
        var after: Int
        var leadingZeroTaps: Int
        var output: Int
    }

    /// A convolution along one axis: input length `n`, kernel `k`, stride `s`, MPS offset `offset`
    /// (nil: the default of `mode`). Nil when the output would be empty or the offset moves the
    /// windows so that the last one ends a stride or more before the input's end (that would need
    /// a crop).
    static func convolution(n: Int, k: Int, s: Int, mode: Mode, offset: Int?) -> Axis? {
        let out: Int
        switch mode {
        case .same: out = (n + s - 1) / s
        case .valid: out = n - k + 1 > 0 ? (n - k + 1 + s - 1) / s : 0
        case .full: out = (n + k - 1 + s - 1) / s
        }
        guard out >= 1 else { return nil }
        let off: Int
        switch mode {
        case .same: off = offset ?? (s >> 1)
        case .valid: off = offset ?? (k > s ? k >> 1 : s >> 1)
        case .full: off = offset ?? ((s >> 1) - (k >> 1))
        }
        // MPS: output t reads input rows s·t + off − (k >> 1) … + k − 1; IR: s·t − before.
        var before = (k >> 1) - off
        var zeros = 0
        if before < 0 { zeros = -before; before = 0 }
        let after = (out - 1) * s + k + zeros - n - before
        // Padding after that is short by less than a stride gives the same output length.
        guard after > -s else { return nil }
        return Axis(before: before, after: max(after, 0), leadingZeroTaps: zeros, output: out)
    }

    /// A pooling window along one axis (output floor(n / s), default offset s − ceil(k / 2)); nil when
    /// the output is empty or a window would lie entirely outside the input.
    static func pooling(n: Int, k: Int, s: Int, offset: Int?) -> Axis? {
        let out = n / s
        guard out >= 1 else { return nil }
        let off = offset ?? (s - (k + 1) / 2)
        let before = (k >> 1) - off
        let after = (out - 1) * s + k - n - before
        // Windows must start inside the kernel's reach: the first ends after row 0, the last starts before row n.
        guard before >= 0, before < k, (out - 1) * s - before < n, after > -s else { return nil }
        return Axis(before: before, after: max(after, 0), leadingZeroTaps: 0, output: out)
    }

    /// A transposed convolution along one axis (§6.3) as a TensorFlow-style transposed convolution of
    /// the 180°-rotated kernel: padding before and after, the extra rows after (`output adjustment`,
    /// less than the stride) in `after` when negative padding would be needed, zero taps in front.
    static func transposed(n: Int, k: Int, s: Int, mode: Mode, offset: Int?) -> (axis: Axis, adjustment: Int)? {
        let out: Int
        switch mode {
        case .same: out = n * s
        case .valid: out = n * s + max(k - s, 0)
        case .full: out = n * s - (s + k - 2)
        }
        guard out >= 1 else { return nil }
        let off: Int
        switch mode {
        case .same: off = offset ?? -(s >> 1)
        case .valid: off = offset ?? (k > s ? -(k >> 1) : -(s >> 1))
        case .full: off = offset ?? ((k >> 1) - (s >> 1))
        }
        // MPS: out[p] = Σ E[p + off − ((k−1)>>1) + j]·W[j]; with K[j] = W[k−1−j] that is TF's
        // out[s·y + j − before] += in[y]·K[j] with before = k − 1 + off − ((k−1)>>1).
        var before = k - 1 + off - ((k - 1) >> 1)
        var zeros = 0
        if before < 0 { zeros = -before; before = 0 }
        let after = (n - 1) * s + k + zeros - before - out
        var adjustment = 0
        if after < 0 {
            adjustment = -after
            guard adjustment < s else { return nil }
        }
        return (Axis(before: before, after: max(after, 0), leadingZeroTaps: zeros, output: out), adjustment)
    }
}
