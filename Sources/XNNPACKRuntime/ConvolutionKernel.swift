import CFrameGraphKernels
import CXNNPACK
import NeuralGraph

/// A ``ConvolutionGroup`` bound to the predictor's buffers: weights packed once (16-channel panels
/// for a dense convolution, 8-channel blocks for a depthwise one), then one call of the kernel per
/// prediction, or, with a thread pool, one part of the output rows per thread (each with its own
/// scratch).
final class ConvolutionKernel {
    let group: ConvolutionGroup
    private let packed: UnsafeMutablePointer<Float>
    /// Scratch of `scratchCount` floats per part.
    private let scratch: UnsafeMutablePointer<Float>
    private let scratchCount: Int
    /// Parts the work is split into (1 without a thread pool): by rows (for a dense convolution each
    /// a multiple of 6 matrix rows, output pixels; for a depthwise one whole output image rows), or,
    /// when there are too few rows for every thread (7×7 or 14×14 layers), by output channels (16 per
    /// panel of a dense convolution, 8 per block of a depthwise one).
    private let parts: KernelParts
    private let rowsPerPart: Int
    private let byChannels: Bool
    private let channelUnitsPerPart: Int
    /// Geometry and epilogue in memory of their own: parts on several threads read them at once
    /// (an `inout` of a stored property from two threads would be an exclusivity violation).
    private let geometry: UnsafeMutablePointer<fg_conv_geometry>
    private let input: UnsafeMutablePointer<Float>
    private let output: UnsafeMutablePointer<Float>
    private let epilogue: UnsafeMutablePointer<fg_conv_epilogue>
    /// The int8 form of a dense convolution (``ConvolutionGroup/int8``), else nil.
    private let quantized: QuantizedWeights?
    /// The bfloat16 form of a dense convolution (``ConvolutionGroup/bfloat16``), else nil.
    private let rounded: BFloat16Weights?

    /// A dense convolution's weights as `fg_bconv_pack` leaves them, and the scratch of each part
    /// (a block's rows in bfloat16; for a windowed convolution, floats for its windows).
    private final class BFloat16Weights {
        let inputs: Int32
        let packed: UnsafeMutablePointer<UInt16>
        let biases: UnsafeMutablePointer<Float>
        let scratch: UnsafeMutablePointer<UInt16>
        let scratchCount: Int
        let windows: UnsafeMutablePointer<Float>
        let windowFloats: Int

        init(weights: UnsafePointer<Float>, bias: UnsafePointer<Float>?, inputs k: Int32, outputs n: Int32, windowed: Bool, parts: Int) {
            inputs = k
            packed = .allocate(capacity: fg_bconv_packed_count(k, n))
            biases = .allocate(capacity: fg_bconv_channels(n))
            scratchCount = fg_bconv_scratch_count(k)
            scratch = .allocate(capacity: scratchCount * parts)
            windowFloats = windowed ? fg_bconv_window_floats(k) : 0
            windows = .allocate(capacity: max(1, windowFloats * parts))
            fg_bconv_pack(weights, bias, k, n, packed, biases)
        }

        deinit {
            packed.deallocate()
            biases.deallocate()
            scratch.deallocate()
            windows.deallocate()
        }
    }

    /// A dense convolution's weights as `fg_qconv_pack` leaves them, and the scratch of each part
    /// (bytes for a block's quantised rows; for a windowed convolution, floats for its windows).
    /// Parts split by channel panels each quantise the same rows (a layer too small to split by rows).
    private final class QuantizedWeights {
        let inputs: Int32
        let packed: UnsafeMutablePointer<Int8>
        /// Per output channel (rounded up to 16): step, Σ of the quantised weights × step, bias.
        let scales, sums, biases: UnsafeMutablePointer<Float>
        let scratch: UnsafeMutablePointer<UInt8>
        let scratchBytes: Int
        let windows: UnsafeMutablePointer<Float>
        let windowFloats: Int

        init(weights: UnsafePointer<Float>, bias: UnsafePointer<Float>?, inputs k: Int32, outputs n: Int32, windowed: Bool, parts: Int) {
            inputs = k
            let channels = fg_qconv_channels(n)
            packed = .allocate(capacity: fg_qconv_packed_bytes(k, n))
            scales = .allocate(capacity: channels)
            sums = .allocate(capacity: channels)
            biases = .allocate(capacity: channels)
            scratchBytes = fg_qconv_scratch_bytes(k)
            scratch = .allocate(capacity: scratchBytes * parts)
            windowFloats = windowed ? fg_qconv_window_floats(k) : 0
            windows = .allocate(capacity: max(1, windowFloats * parts))
            fg_qconv_pack(weights, bias, k, n, packed, scales, sums, biases)
        }

        deinit {
            packed.deallocate()
            scales.deallocate()
            sums.deallocate()
            biases.deallocate()
            scratch.deallocate()
            windows.deallocate()
        }
    }

    init(_ group: ConvolutionGroup, graph: NeuralGraph, buffers: [Int: TensorBuffer], constants: [Int: ConstantStorage],
         threadpool: pthreadpool_t?) throws {
        self.group = group
        let node = graph.nodes[group.convolution]
        let bind = KernelBindings(graph: graph, buffers: buffers, constants: constants, label: "\(node.operation.name) ('\(node.name)')")
        input = try bind.buffer(group.input)
        output = try bind.buffer(group.output)
        let weights = try bind.constant(node.inputs[1])
        let bias = try bind.bias(of: node)
        let residual = try group.residual.map { UnsafePointer(try bind.buffer($0)) }
        let slopes = try group.preluSlopes.map { UnsafePointer(try bind.constant($0)) }
        // Nothing below throws: what is allocated is freed by deinit.
        let k = Int32(group.windowSize), n = Int32(group.outputChannels)
        geometry = .allocate(capacity: 1)
        geometry.initialize(to: group.geometry)
        let threads = threadpool.map { pthreadpool_get_threads_count($0) } ?? 1
        // Multiply-adds of one prediction (output pixels × window × output channels; for a depthwise
        // convolution the window is per channel): split by channels only when each part gets at least
        // about 500 k of them (the row splits below have thresholds of their own, as before).
        let work = fg_conv_rows(geometry) * Int(k) * Int(n)
        let enough = max(1, min(threads, work / 500_000))
        let count: Int
        switch group.kind {
        case .dense:
            let rows = fg_conv_rows(geometry), panels = fg_conv_panels(n)
            // By rows when every part gets at least 16 tiles of 6 rows, else by panels (2 at least each).
            let byRows = max(1, min(threads, rows / 96))
            byChannels = byRows < enough && panels / 2 > byRows
            count = byChannels ? min(enough, panels / 2) : byRows
            // A multiple of 12 rows: the int8 kernel quantises blocks of rows 12·i … 12·i + 11, so how
            // the rows are shared between threads changes no value.
            rowsPerPart = byChannels ? rows : (rows + count - 1) / count / 12 * 12 + 12
            channelUnitsPerPart = byChannels ? (panels + count - 1) / count : panels
            scratchCount = max(1, fg_conv_scratch_count(geometry))
            // An int8 or bfloat16 convolution keeps only those weights (``QuantizedWeights``, ``BFloat16Weights``).
            packed = .allocate(capacity: group.int8 || group.bfloat16 ? 1 : fg_conv_packed_count(k, n))
            if !group.int8 && !group.bfloat16 { fg_conv_pack(weights, bias, k, n, packed) }
        case .depthwise:
            let rows = fg_dwconv_rows(geometry), blocks = fg_dwconv_blocks(geometry)
            // By rows when every part gets at least 8 output rows of 8 channels × 16 pixels, else by
            // channel blocks (4 at least each).
            let byRows = max(1, min(threads, rows / 8, rows * Int(geometry.pointee.out_w) * Int(n) / 1024))
            byChannels = byRows < enough && blocks / 4 > byRows
            count = byChannels ? min(enough, blocks / 4) : byRows
            rowsPerPart = byChannels ? rows : (rows + count - 1) / count
            channelUnitsPerPart = byChannels ? (blocks + count - 1) / count : blocks
            scratchCount = 1
            packed = .allocate(capacity: fg_dwconv_packed_count(k, n))
            fg_dwconv_pack(weights, bias, k, n, packed)
        }
        parts = KernelParts(count: count, threadpool: threadpool)
        // An int8 convolution gathers its windows into ``QuantizedWeights/windows`` instead.
        scratch = .allocate(capacity: (group.int8 || group.bfloat16 ? 1 : scratchCount) * count)
        quantized = group.int8 && group.kind == .dense
            ? QuantizedWeights(weights: weights, bias: bias, inputs: k, outputs: n, windowed: !group.isPointwise, parts: count) : nil
        rounded = group.bfloat16 && !group.int8 && group.kind == .dense
            ? BFloat16Weights(weights: weights, bias: bias, inputs: k, outputs: n, windowed: !group.isPointwise, parts: count) : nil
        epilogue = .allocate(capacity: 1)
        epilogue.initialize(to: fg_conv_epilogue(min1: group.convolutionRange.0, max1: group.convolutionRange.1,
                                                      residual: residual, residual_stride: residual == nil ? 0 : group.residualChannels,
                                                      residual_channels: residual == nil ? 0 : Int32(group.residualChannels),
                                                      min2: group.additionRange.0, max2: group.additionRange.1,
                                                      prelu_slopes: slopes, hard_swish: group.hardSwish ? 1 : 0))
        parts.bind { [unowned self] in self.run(part: $0) }
    }

    deinit {
        packed.deallocate()
        scratch.deallocate()
        geometry.deallocate()
        epilogue.deallocate()
    }

    func run() { parts.run() }

    /// Rows part·rowsPerPart … of the output (or its channels part·channelUnitsPerPart … panels or
    /// blocks), with scratch of its own.
    private func run(part: Int) {
        let first = byChannels ? 0 : part * rowsPerPart, end = first + rowsPerPart
        let unit = byChannels ? part * channelUnitsPerPart : 0, unitEnd = unit + channelUnitsPerPart
        switch group.kind {
        case .dense:
            if let q = quantized {
                let n = Int32(group.outputChannels), bytes = q.scratch + part * q.scratchBytes
                if group.isPointwise {
                    fg_qconv_part(input, q.inputs, q.packed, q.scales, q.sums, q.biases, n, output, epilogue, bytes, first,
                                  min(end, fg_conv_rows(geometry)), unit, unitEnd, 1)
                } else {
                    fg_qconv_windows_part(input, geometry, q.packed, q.scales, q.sums, q.biases, n, output, epilogue,
                                          q.windows + part * q.windowFloats, bytes, first, end, unit, unitEnd, 1)
                }
                return
            }
            if let b = rounded {
                let n = Int32(group.outputChannels), values = b.scratch + part * b.scratchCount
                if group.readsBFloat16 {
                    // The rows the depthwise convolution before left in bfloat16 (``ConvolutionGroup/writesBFloat16``).
                    fg_bconv_part_rounded(UnsafePointer<UInt16>(OpaquePointer(input)), b.inputs, b.packed, b.biases, n, output, epilogue,
                                          values, first, min(end, fg_conv_rows(geometry)), unit, unitEnd, 1)
                } else if group.isPointwise {
                    fg_bconv_part(input, b.inputs, b.packed, b.biases, n, output, epilogue, values, first, min(end, fg_conv_rows(geometry)),
                                  unit, unitEnd, 1)
                } else {
                    fg_bconv_windows_part(input, geometry, b.packed, b.biases, n, output, epilogue, b.windows + part * b.windowFloats, values,
                                          first, end, unit, unitEnd, 1)
                }
                return
            }
            fg_conv_part_channels(input, geometry, packed, Int32(group.outputChannels), output, epilogue, scratch + part * scratchCount,
                                  first, end, unit, unitEnd, 1)
        case .depthwise:
            if group.writesBFloat16 {
                fg_dwconv_part_bf16(input, geometry, packed, UnsafeMutablePointer<UInt16>(OpaquePointer(output)), epilogue, first, end, unit,
                                    unitEnd)
            } else {
                fg_dwconv_part_channels(input, geometry, packed, output, epilogue, first, end, unit, unitEnd, 1)
            }
        }
    }
}
