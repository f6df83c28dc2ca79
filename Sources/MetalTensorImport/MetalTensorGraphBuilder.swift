import NeuralGraph

/// Turns a wired MetalTensor graph into FrameGraph's graph IR, layer by layer, with MetalTensor's
/// semantics (format spec §5–§7): MPS windows as explicit padding, kernels re-laid out from MPS's
/// layouts, transposed-convolution kernels rotated, channel padding in concatenations, activations
/// fused where the IR has them and separate operations elsewhere, and, for the float16 emulation,
/// every stored tensor and weight rounded to half precision.
struct MetalTensorGraphBuilder {
    let file: String
    let precision: MetalTensorImporter.Precision
    let weights: MetalTensorWeights
    var graph = NeuralGraph()
    /// Each MetalTensor node's output tensor (IR index) and its shape (rows, columns, depth).
    private(set) var produced: [String: (tensor: Int, shape: [Int])] = [:]

    init(file: String, precision: MetalTensorImporter.Precision, weights: MetalTensorWeights) {
        self.file = file
        self.precision = precision
        self.weights = weights
    }

    // MARK: tensors

    private mutating func activationTensor(_ name: String, _ shape: [Int]) -> Int {
        graph.addTensor(TensorValue(name: name, shape: [1] + shape))
    }

    private mutating func constant(_ name: String, _ shape: [Int], _ values: [Float]) -> Int {
        let stored = precision == .float16 ? values.map(Self.half) : values
        return graph.addTensor(TensorValue(name: name, shape: shape, constant: ConstantStorage(floats: stored)))
    }

    /// A scalar broadcast over a tensor (not rounded: MPS applies such parameters in float32).
    private mutating func scalar(_ name: String, _ value: Float) -> Int {
        graph.addTensor(TensorValue(name: name, shape: [1, 1, 1, 1], constant: ConstantStorage(floats: [value])))
    }

    static func half(_ x: Float) -> Float { Float(Float16(x)) }

    private mutating func op(_ operation: NeuralOperation, _ inputs: [Int], _ name: String, shape: [Int]) -> Int {
        let out = activationTensor(name, shape)
        graph.nodes.append(NeuralNode(operation: operation, inputs: inputs, outputs: [out], name: name))
        return out
    }

    /// A stored tensor: rounded to half precision in the float16 emulation.
    private mutating func stored(_ tensor: Int, _ name: String, shape: [Int]) -> Int {
        precision == .float16 ? op(.roundToFloat16, [tensor], name + "/fp16", shape: shape) : tensor
    }

    // MARK: nodes

    mutating func emit(_ node: MetalTensorNode, sources: [Int: String]) throws(ModelError) {
        let keys = node.keys
        let available = produced
        func input(_ slot: Int) throws(ModelError) -> (tensor: Int, shape: [Int]) {
            guard let source = sources[slot], let value = available[source] else {
                throw keys.error("inputs", "input slot \(slot) is not fed")
            }
            return value
        }
        let name = node.name
        var result: (tensor: Int, shape: [Int])
        switch node.type {
        case .input:
            guard let shape = node.declaredInputs.first else { throw keys.error("inputs", "is missing (the input node gives the network's input size)") }
            let t = activationTensor(name, shape)
            graph.inputs.append(t)
            result = (stored(t, name, shape: shape), shape)
        case .output:
            let x = try input(0)
            result = (op(.reshape, [x.tensor], name, shape: x.shape), x.shape)
        default:
            let x = try input(0)
            if let declared = node.declaredInputs.first, declared != x.shape {
                throw keys.error("inputs", "declares \(declared.map(String.init).joined(separator: ",")) for slot 0, but '\(sources[0] ?? "?")' produces \(x.shape.map(String.init).joined(separator: ","))")
            }
            result = try layer(node, x: x, input: input)
            result.tensor = stored(result.tensor, name, shape: result.shape)
        }
        // The node's output carries its name (for outputs read by layer name and per-layer dumps).
        // (Every node makes a tensor of its own; the input node's is the graph input.)
        graph.tensors[result.tensor].name = name
        produced[name] = result
    }

    private mutating func layer(_ node: MetalTensorNode, x: (tensor: Int, shape: [Int]),
                                input: (Int) throws(ModelError) -> (tensor: Int, shape: [Int])) throws(ModelError) -> (tensor: Int, shape: [Int]) {
        let keys = node.keys, name = node.name
        switch node.type {
        case .input, .output:
            return x
        case .convolution, .transposedConvolution:
            let transposed = node.type == .transposedConvolution
            let depthwise = try keys.bool("depthwise")
            let weightKey = "weight"
            let weightName = try keys.requiredString(weightKey)
            let conv = try convolutionSpec(keys, depthwise: depthwise, input: x.shape, transposed: transposed)
            let (kernel, bias) = try weights.kernelAndBias(weightName, kernelCount: conv.kernelCount, biasCount: conv.outChannels,
                                                           rangeText: try keys.string("weight_range"), keys: keys, key: weightKey,
                                                           separateFile: weightName)
            let activation = try keys.activation("activation", fused: true)
            return try convolution(name, x: x, spec: conv, kernel: kernel, bias: bias, activation: activation, transposed: transposed, keys: keys)
        case .invertedResidual:
            return try invertedResidual(node, x: x)
        case .dense:
            let declared = node.declaredInputs.first ?? x.shape
            let filters = try keys.requiredInt("filters", range: 1...MetalTensorKeys.maxDimension)
            let (inCount, o1) = declared[0].multipliedReportingOverflow(by: declared[1] * declared[2])
            let (kernelCount, o2) = inCount.multipliedReportingOverflow(by: filters)
            guard !o1, !o2, kernelCount <= 1 << 31 else { throw keys.error("filters", "the weight matrix is too large") }
            let weightName = try keys.requiredString("weights")
            let (kernel, bias) = try weights.kernelAndBias(weightName, kernelCount: kernelCount, biasCount: filters,
                                                           rangeText: try keys.string("weight_range"), keys: keys, key: "weights",
                                                           separateFile: weightName + ".bin")
            let activation = try keys.activation("activation", fused: true)
            let (fused, rest) = Self.split(activation)
            let w = constant(name + "/weights", [filters, inCount], kernel)
            let b = constant(name + "/bias", [filters], bias)
            let flat = op(.fullyConnected(activation: fused), [x.tensor, w, b], name + "/matmul", shape: [filters])
            graph.tensors[flat].shape = [1, filters]
            let shaped = op(.reshape, [flat], name + "/shaped", shape: [1, 1, filters])
            return (try apply(rest, to: shaped, shape: [1, 1, filters], name: name), [1, 1, filters])
        case .softmax:
            return (op(.softmax(beta: 1), [x.tensor], name, shape: x.shape), x.shape)
        case .poolingMax, .poolingAverage:
            let kernel = try keys.kernel("kernel", separator: ",", default: nil)
            let stride = try keys.int("stride", default: 2, range: 1...MetalTensorKeys.maxStride)
            let offset = try keys.offset("offset")
            guard let rows = MPSWindow.pooling(n: x.shape[0], k: kernel.h, s: stride, offset: offset?.y),
                  let columns = MPSWindow.pooling(n: x.shape[1], k: kernel.w, s: stride, offset: offset?.x) else {
                throw keys.error("kernel", "a \(kernel.h)×\(kernel.w) window with stride \(stride)\(offset.map { " and offset \($0.x),\($0.y)" } ?? "") does not fit the \(x.shape[0])×\(x.shape[1]) input")
            }
            let p = PoolingParameters(filterH: kernel.h, filterW: kernel.w, strideH: stride, strideW: stride,
                                      padding: .explicit(top: rows.before, left: columns.before, bottom: rows.after, right: columns.after))
            let shape = [rows.output, columns.output, x.shape[2]]
            return (op(node.type == .poolingMax ? .maxPool2d(p) : .averagePool2d(p), [x.tensor], name, shape: shape), shape)
        case .neuron:
            guard keys.has("activation") else { throw keys.error("activation", "is missing (required for a neuron node)") }
            let activation = try keys.activation("activation", fused: false)
            return (try apply(activation, to: x.tensor, shape: x.shape, name: name, copy: true), x.shape)
        case .reshape:
            let shape = try keys.shape("output", text: try keys.requiredString("output"))
            guard shape.reduce(1, *) == x.shape.reduce(1, *) else {
                throw keys.error("output", "\(shape.map(String.init).joined(separator: ",")) does not hold the \(x.shape.map(String.init).joined(separator: ",")) input's \(x.shape.reduce(1, *)) values")
            }
            return (op(.reshape, [x.tensor], name, shape: shape), shape)
        case .concatenate:
            var parts: [(tensor: Int, shape: [Int])] = []
            for slot in 0..<max(node.declaredInputs.count, 1) {
                let part = try input(slot)
                if slot < node.declaredInputs.count, node.declaredInputs[slot] != part.shape {
                    throw keys.error("inputs", "declares \(node.declaredInputs[slot].map(String.init).joined(separator: ",")) for slot \(slot), but it receives \(part.shape.map(String.init).joined(separator: ","))")
                }
                parts.append(part)
            }
            let height = parts.map { $0.shape[0] }.max() ?? 1, width = parts.map { $0.shape[1] }.max() ?? 1
            var tensors: [Int] = []
            var depth = 0
            for (k, part) in parts.enumerated() {
                let padded = (part.shape[2] + 3) / 4 * 4
                let bottom = height - part.shape[0], right = width - part.shape[1], gap = padded - part.shape[2]
                if bottom > 0 || right > 0 || gap > 0 {
                    tensors.append(op(.pad(paddings: [(0, 0), (0, bottom), (0, right), (0, gap)], value: 0), [part.tensor],
                                      name + "/slot\(k)", shape: [height, width, padded]))
                } else {
                    tensors.append(part.tensor)
                }
                depth += padded
            }
            let shape = [height, width, depth]
            return (op(.concatenation(axis: 3, activation: .none), tensors, name, shape: shape), shape)
        case .arithmetic:
            return try arithmetic(node, x: x, input: input)
        }
    }

    // MARK: convolutions

    struct ConvolutionSpec {
        var kernelH: Int, kernelW: Int, stride: Int
        var inChannels: Int, outChannels: Int
        var depthwise: Bool
        var mode: MPSWindow.Mode
        var offset: (x: Int, y: Int)?
        var kernelCount: Int { depthwise ? kernelH * kernelW * inChannels : kernelH * kernelW * inChannels * outChannels }
    }

    private func convolutionSpec(_ keys: MetalTensorKeys, depthwise: Bool, input: [Int], transposed: Bool) throws(ModelError) -> ConvolutionSpec {
        let kernel = try keys.kernel("kernel", separator: ",", default: nil)
        let filters = try keys.requiredInt("filters", range: 1...MetalTensorKeys.maxDimension)
        let stride = try keys.int("stride", default: 1, range: 1...MetalTensorKeys.maxStride)
        let modeText = try keys.string("padding") ?? "same"
        guard let mode = MPSWindow.Mode(rawValue: modeText) else { throw keys.error("padding", "'\(modeText.prefix(40))' is not same, valid or full") }
        let inChannels = input[2]
        let out = depthwise ? inChannels : filters
        guard kernel.h * kernel.w * inChannels <= 1 << 26, kernel.h * kernel.w * inChannels * out <= 1 << 28 else {
            throw keys.error("filters", "the kernel is too large")
        }
        return ConvolutionSpec(kernelH: kernel.h, kernelW: kernel.w, stride: stride, inChannels: inChannels, outChannels: out,
                               depthwise: depthwise, mode: mode, offset: try keys.offset("offset"))
    }

    /// A convolution, depthwise convolution or transposed convolution with its activation.
    private mutating func convolution(_ name: String, x: (tensor: Int, shape: [Int]), spec: ConvolutionSpec, kernel: [Float], bias: [Float],
                                      activation: MetalTensorActivation, transposed: Bool, keys: MetalTensorKeys) throws(ModelError) -> (tensor: Int, shape: [Int]) {
        let (fused, rest) = Self.split(activation)
        let (kh, kw, cin, cout) = (spec.kernelH, spec.kernelW, spec.inChannels, spec.outChannels)
        var rows: MPSWindow.Axis, columns: MPSWindow.Axis
        var adjustH = 0, adjustW = 0
        if transposed {
            guard let r = MPSWindow.transposed(n: x.shape[0], k: kh, s: spec.stride, mode: spec.mode, offset: spec.offset?.y),
                  let c = MPSWindow.transposed(n: x.shape[1], k: kw, s: spec.stride, mode: spec.mode, offset: spec.offset?.x) else {
                throw keys.error("offset", "this kernel, stride, padding and offset give no output, or need an output adjustment of a stride or more (not supported)")
            }
            (rows, adjustH) = r
            (columns, adjustW) = c
        } else {
            guard let r = MPSWindow.convolution(n: x.shape[0], k: kh, s: spec.stride, mode: spec.mode, offset: spec.offset?.y),
                  let c = MPSWindow.convolution(n: x.shape[1], k: kw, s: spec.stride, mode: spec.mode, offset: spec.offset?.x) else {
                throw keys.error("offset", "this kernel, stride, padding and offset give no output, or windows that stop a stride or more before the input's end (that needs a crop, which is not supported)")
            }
            (rows, columns) = (r, c)
        }
        let newH = kh + rows.leadingZeroTaps, newW = kw + columns.leadingZeroTaps
        // Re-lay the kernel out: MPS OHWI (or C,H,W for depthwise) → IR OHWI / [1,H,W,C], transposed
        // convolutions rotated by 180°, with the zero taps in front.
        var w = [Float](repeating: 0, count: (spec.depthwise ? cin : cout * cin) * newH * newW)
        for o in 0..<(spec.depthwise ? cin : cout) {
            for ky in 0..<kh {
                for kx in 0..<kw {
                    let (sy, sx) = transposed ? (kh - 1 - ky, kw - 1 - kx) : (ky, kx)
                    let (ty, tx) = (ky + rows.leadingZeroTaps, kx + columns.leadingZeroTaps)
                    if spec.depthwise {
                        w[(ty * newW + tx) * cin + o] = kernel[(o * kh + sy) * kw + sx]
                    } else {
                        for i in 0..<cin { w[((o * newH + ty) * newW + tx) * cin + i] = kernel[((o * kh + sy) * kw + sx) * cin + i] }
                    }
                }
            }
        }
        var p = ConvolutionParameters(strideH: spec.stride, strideW: spec.stride,
                                      padding: .explicit(top: rows.before, left: columns.before, bottom: rows.after, right: columns.after),
                                      activation: fused)
        p.adjustH = adjustH
        p.adjustW = adjustW
        let weightsTensor = constant(name + "/weights", spec.depthwise ? [1, newH, newW, cin] : [cout, newH, newW, cin], w)
        let biasTensor = constant(name + "/bias", [cout], bias)
        let shape = [rows.output, columns.output, cout]
        let operation: NeuralOperation = transposed ? .transposeConv2d(p) : (spec.depthwise ? .depthwiseConv2d(p) : .conv2d(p))
        let out = op(operation, [x.tensor, weightsTensor, biasTensor], rest == .none ? name : name + "/conv", shape: shape)
        return (try apply(rest, to: out, shape: shape, name: name), shape)
    }

    private mutating func invertedResidual(_ node: MetalTensorNode, x: (tensor: Int, shape: [Int])) throws(ModelError) -> (tensor: Int, shape: [Int]) {
        let keys = node.keys, name = node.name
        let expansion = try keys.float("expansion", default: 0)
        guard keys.has("expansion"), expansion > 0, expansion <= 1024 else { throw keys.error("expansion", "must be a number above 0 (required)") }
        let stride = try keys.int("stride", default: 1, range: 1...MetalTensorKeys.maxStride)
        let cin = x.shape[2]
        let filters = try keys.int("filters", default: cin, range: 1...MetalTensorKeys.maxDimension)
        let kernel = try keys.kernel("kernel", separator: ";", default: 3)
        let offset = try keys.offset("offset") ?? (stride >> 1, stride >> 1)
        let neuronText = try keys.string("neurons") ?? "relun,0,6;relun,0,6;none,0,0"
        let neuronParts = MetalTensorLexicon.components(neuronText, ";")
        guard neuronParts.count == 3 else { throw keys.error("neurons", "'\(neuronText.prefix(60))' must have exactly three ';'-separated activations") }
        var neurons: [MetalTensorActivation] = []
        for part in neuronParts {
            neurons.append(try MetalTensorActivation(text: part, fused: true) { reason throws(ModelError) in throw keys.error("neurons", reason) })
        }
        let names = MetalTensorLexicon.components(try keys.requiredString("weights"), ",")
        guard let first = names.first else { throw keys.error("weights", "is empty") }
        let weightNames = names.count >= 3 ? Array(names.prefix(3)) : [first, first, first]
        let ranges = try keys.string("weight_ranges").map { MetalTensorLexicon.components($0, ";") }
        let middle = Self.makeDivisible(Float(cin) * expansion)
        guard middle <= 1 << 20 else { throw keys.error("expansion", "expands to \(middle) channels (too many)") }

        func spec(_ kh: Int, _ kw: Int, _ s: Int, _ i: Int, _ o: Int, depthwise: Bool, offset: (x: Int, y: Int)?) -> ConvolutionSpec {
            ConvolutionSpec(kernelH: kh, kernelW: kw, stride: s, inChannels: i, outChannels: o, depthwise: depthwise, mode: .same, offset: offset)
        }
        let stages: [(String, ConvolutionSpec)] = [
            ("expand", spec(1, 1, 1, cin, middle, depthwise: false, offset: (0, 0))),
            ("depthwise", spec(kernel.h, kernel.w, stride, middle, middle, depthwise: true, offset: offset)),
            ("project", spec(1, 1, 1, middle, filters, depthwise: false, offset: (0, 0))),
        ]
        var current = x
        for (k, (stage, s)) in stages.enumerated() {
            let (kernelValues, bias) = try weights.kernelAndBias(weightNames[k], kernelCount: s.kernelCount, biasCount: s.outChannels,
                                                                 rangeText: ranges.flatMap { k < $0.count ? $0[k] : nil }, keys: keys, key: "weights",
                                                                 separateFile: first + ".bin")
            current = try convolution("\(name)/\(stage)", x: current, spec: s, kernel: kernelValues, bias: bias, activation: neurons[k],
                                      transposed: false, keys: keys)
            if k < 2 { current.tensor = stored(current.tensor, "\(name)/\(stage)", shape: current.shape) }
        }
        if current.shape == x.shape {
            return (op(.add(.none), [x.tensor, current.tensor], name, shape: x.shape), x.shape)
        }
        return current
    }

    /// MobileNetV2's channel rounding: max(8, round(v / 8) · 8), plus 8 when that is below 0.9 · v.
    static func makeDivisible(_ v: Float) -> Int {
        var m = max(8, Int((v / 8).rounded(.toNearestOrAwayFromZero)) * 8)
        if Float(m) < 0.9 * v { m += 8 }
        return m
    }

    // MARK: arithmetic

    private mutating func arithmetic(_ node: MetalTensorNode, x: (tensor: Int, shape: [Int]),
                                     input: (Int) throws(ModelError) -> (tensor: Int, shape: [Int])) throws(ModelError) -> (tensor: Int, shape: [Int]) {
        let keys = node.keys, name = node.name
        let kindText = try keys.requiredString("arithmetic")
        let shape = x.shape
        for key in ["primary_strides", "secondary_strides"] {
            if let s = try keys.string(key), MetalTensorLexicon.components(s, ",").map(MetalTensorLexicon.intValue) != [1, 1, 1] {
                throw keys.error(key, "strides '\(s.prefix(40))' other than 1,1,1 are not supported")
            }
        }
        if try keys.int("channel_offset", default: 0) != 0 { throw keys.error("channel_offset", "a destination channel offset is not supported") }
        let primaryScale = try keys.float("primary_scale", default: 1)
        let secondaryScale = try keys.float("secondary_scale", default: 1)
        let bias = try keys.float("bias", default: 0)
        var a = x.tensor
        if primaryScale != 1 { a = op(.multiply(.none), [a, scalar(name + "/primary_scale", primaryScale)], name + "/primary", shape: shape) }
        var b: Int
        if let imageName = try keys.string("secondary_image") {
            guard let bytes = try weights.resource(imageName) else { throw keys.error("secondary_image", "'\(imageName.prefix(80))' not found beside the plist") }
            let image: PNGImage
            do { image = try PNGImage(bytes: bytes) } catch {
                throw keys.error("secondary_image", "\(imageName): \(error.reason) (at byte \(error.offset))")
            }
            guard [image.height, image.width, 3] == shape else {
                throw keys.error("secondary_image", "\(imageName) is \(image.width)×\(image.height), the input is \(shape[1])×\(shape[0])")
            }
            // RGB / 255; stored as float16 in the float16 emulation (§4, §6.11), then scaled in float32.
            let values = image.rgb.map { (precision == .float16 ? Self.half(Float($0) / 255) : Float($0) / 255) * secondaryScale }
            b = graph.addTensor(TensorValue(name: name + "/" + imageName, shape: [1] + shape, constant: ConstantStorage(floats: values)))
        } else if let dataName = try keys.string("secondary_data") {
            let dataShape = try keys.shape("secondary_data_shape", text: try keys.requiredString("secondary_data_shape"))
            guard dataShape == shape else { throw keys.error("secondary_data_shape", "is \(dataShape), the input is \(shape)") }
            guard let bytes = try weights.resource(dataName) else { throw keys.error("secondary_data", "'\(dataName.prefix(80))' not found beside the plist") }
            let count = shape.reduce(1, *)
            guard bytes.count == 2 * count else { throw keys.error("secondary_data", "\(dataName) has \(bytes.count) bytes, expected \(2 * count) (float16 values of the declared shape)") }
            let values = (0..<count).map { Float(Float16(bitPattern: UInt16(bytes[2 * $0]) | UInt16(bytes[2 * $0 + 1]) << 8)) * secondaryScale }
            b = graph.addTensor(TensorValue(name: name + "/" + dataName, shape: [1] + shape, constant: ConstantStorage(floats: values)))
        } else {
            let second = try input(1)
            guard second.shape == shape else { throw keys.error("inputs", "slot 1 receives \(second.shape), slot 0 \(shape) (they must match)") }
            b = second.tensor
            if secondaryScale != 1 { b = op(.multiply(.none), [b, scalar(name + "/secondary_scale", secondaryScale)], name + "/secondary", shape: shape) }
        }
        let operation: NeuralOperation
        switch kindText {
        case "addition": operation = .add(.none)
        case "subtract": operation = .subtract(.none)
        case "multiply": operation = .multiply(.none)
        case "divide": operation = .divide(.none)
        default: throw keys.error("arithmetic", "'\(kindText.prefix(40))' is not addition, subtract, multiply or divide")
        }
        var out = op(operation, [a, b], bias == 0 ? name : name + "/op", shape: shape)
        if bias != 0 { out = op(.add(.none), [out, scalar(name + "/bias", bias)], name, shape: shape) }
        return (out, shape)
    }

    // MARK: activations

    /// The part of an activation the IR fuses into the operation, and the rest.
    static func split(_ activation: MetalTensorActivation) -> (FusedActivation, MetalTensorActivation) {
        switch activation {
        case .none: return (.none, .none)
        case .relu(let a) where a == 0: return (.relu, .none)
        case .reluN(let a, let b) where a == 0 && b == 6: return (.relu6, .none)
        default: return (.none, activation)
        }
    }

    /// Applies an activation as separate operations; `copy` makes an identity copy when there is
    /// nothing to do (a `neuron` node must still produce its own tensor).
    private mutating func apply(_ activation: MetalTensorActivation, to x: Int, shape: [Int], name: String, copy: Bool = false) throws(ModelError) -> Int {
        switch activation {
        case .none:
            return copy ? op(.reshape, [x], name, shape: shape) : x
        case .relu(let a):
            return op(a == 0 ? .relu : .leakyRelu(alpha: a), [x], name, shape: shape)
        case .reluN(let a, let b):
            if a == 0 && b >= 0 { return op(b == 6 ? .relu6 : .clamp(min: 0, max: b), [x], name, shape: shape) }
            let leaky = op(a == 0 ? .relu : .leakyRelu(alpha: a), [x], name + "/leaky", shape: shape)
            return op(.minimum, [leaky, scalar(name + "/max", b)], name, shape: shape)
        case .linear(let a, let b):
            if a == 1 && b == 0 { return copy ? op(.reshape, [x], name, shape: shape) : x }
            var t = x
            if a != 1 { t = op(.multiply(.none), [t, scalar(name + "/a", a)], b == 0 ? name : name + "/scaled", shape: shape) }
            if b != 0 { t = op(.add(.none), [t, scalar(name + "/b", b)], name, shape: shape) }
            return t
        case .sigmoid:
            return op(.logistic, [x], name, shape: shape)
        case .power(let a, let b, let c):
            let base = try apply(.linear(a: a, b: b), to: x, shape: shape, name: name + "/base")
            return op(.power(exponent: c), [base], name, shape: shape)
        }
    }
}
