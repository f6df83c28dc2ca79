import NeuralGraph
import Testing

/// ``NeuralGraph/validate()`` on graphs built directly in the IR.
@Suite struct ShapeInferenceTests {
    /// A graph with one node: inputs of the given shapes (the second onward constant), one output.
    static func graph(_ operation: NeuralOperation, inputs: [[Int]], output: [Int]) -> NeuralGraph {
        var g = NeuralGraph()
        var ins: [Int] = []
        for (k, shape) in inputs.enumerated() {
            let count = shape.reduce(1, *)
            let constant = k == 0 ? nil : ConstantStorage(floats: [Float](repeating: 0, count: count))
            ins.append(g.addTensor(TensorValue(name: "in\(k)", shape: shape, constant: constant)))
        }
        let out = g.addTensor(TensorValue(name: "out", shape: output))
        g.nodes = [NeuralNode(operation: operation, inputs: ins, outputs: [out], name: "n")]
        g.inputs = [ins[0]]
        g.outputs = [out]
        return g
    }

    static func expected(_ operation: NeuralOperation, inputs: [[Int]], output: [Int]) -> String? {
        do {
            try graph(operation, inputs: inputs, output: output).validate()
            return nil
        } catch {
            if case .shapeMismatch(_, _, let expected, _) = error { return expected }
            return "\(error)"
        }
    }

    @Test func convolutionPaddingAndDilation() {
        let same = NeuralOperation.conv2d(ConvolutionParameters(strideH: 2, strideW: 2, padding: .same))
        #expect(Self.expected(same, inputs: [[1, 7, 8, 3], [4, 3, 3, 3]], output: [1, 4, 4, 4]) == nil)
        let valid = NeuralOperation.conv2d(ConvolutionParameters(strideH: 2, strideW: 1, padding: .valid))
        #expect(Self.expected(valid, inputs: [[1, 7, 8, 3], [4, 3, 3, 3], [4]], output: [1, 3, 6, 4]) == nil)
        let dilated = NeuralOperation.conv2d(ConvolutionParameters(dilationH: 2, dilationW: 2, padding: .valid))
        #expect(Self.expected(dilated, inputs: [[1, 9, 9, 3], [4, 3, 3, 3]], output: [1, 9, 9, 4]) == "[1, 5, 5, 4]")
        let explicit = NeuralOperation.conv2d(ConvolutionParameters(strideH: 2, strideW: 2, padding: .explicit(top: 1, left: 0, bottom: 1, right: 0)))
        #expect(Self.expected(explicit, inputs: [[1, 8, 8, 3], [4, 3, 3, 3]], output: [1, 4, 3, 4]) == nil)
        #expect(Self.expected(same, inputs: [[1, 8, 8, 3], [4, 3, 3, 2]], output: [1, 4, 4, 4])?.contains("[outputs, h, w, 3]") == true)
        let zeroStride = NeuralOperation.conv2d(ConvolutionParameters(strideH: 0, padding: .same))
        #expect(Self.expected(zeroStride, inputs: [[1, 8, 8, 3], [4, 3, 3, 3]], output: [1, 8, 8, 4])?.contains("stride") == true)
    }

    @Test func depthwiseAndTransposed() {
        let dw = NeuralOperation.depthwiseConv2d(ConvolutionParameters(padding: .same, depthMultiplier: 2))
        #expect(Self.expected(dw, inputs: [[1, 5, 5, 3], [1, 3, 3, 6]], output: [1, 5, 5, 6]) == nil)
        var p = ConvolutionParameters(strideH: 2, strideW: 2, padding: .same)
        #expect(Self.expected(.transposeConv2d(p), inputs: [[1, 4, 5, 8], [2, 3, 3, 8]], output: [1, 8, 10, 2]) == nil)
        p.padding = .valid
        #expect(Self.expected(.transposeConv2d(p), inputs: [[1, 4, 5, 8], [2, 3, 3, 8]], output: [1, 8, 10, 2]) == "[1, 9, 11, 2]")
        p.adjustH = 1
        #expect(Self.expected(.transposeConv2d(p), inputs: [[1, 4, 5, 8], [2, 3, 3, 8]], output: [1, 10, 11, 2]) == nil)
    }

    @Test func poolingMeanPadConcatReshapeResize() {
        let pool = NeuralOperation.maxPool2d(PoolingParameters(filterH: 3, filterW: 3, strideH: 2, strideW: 2, padding: .valid))
        #expect(Self.expected(pool, inputs: [[1, 9, 9, 4]], output: [1, 4, 4, 4]) == nil)
        #expect(Self.expected(.mean(axes: [1, 2], keepDims: false), inputs: [[1, 9, 9, 4]], output: [1, 4]) == nil)
        #expect(Self.expected(.mean(axes: [1, 2], keepDims: true), inputs: [[1, 9, 9, 4]], output: [1, 4]) == "[1, 1, 1, 4]")
        #expect(Self.expected(.mean(axes: [4], keepDims: true), inputs: [[1, 9, 9, 4]], output: [1, 4])?.contains("axes") == true)
        #expect(Self.expected(.pad(paddings: [(0, 0), (1, 2), (0, 1), (0, 0)], value: 0), inputs: [[1, 4, 4, 3]], output: [1, 7, 5, 3]) == nil)
        #expect(Self.expected(.concatenation(axis: 3, activation: .none), inputs: [[1, 4, 4, 3], [1, 4, 4, 5]], output: [1, 4, 4, 8]) == nil)
        #expect(Self.expected(.concatenation(axis: 3, activation: .none), inputs: [[1, 4, 4, 3], [1, 4, 2, 5]], output: [1, 4, 4, 8])?
            .contains("except along axis 3") == true)
        #expect(Self.expected(.reshape, inputs: [[1, 4, 4, 3]], output: [1, 48]) == nil)
        #expect(Self.expected(.reshape, inputs: [[1, 4, 4, 3]], output: [1, 47]) == "48 elements")
        #expect(Self.expected(.resizeBilinear(alignCorners: false, halfPixelCenters: true), inputs: [[1, 4, 4, 3]], output: [1, 9, 7, 3]) == nil)
        #expect(Self.expected(.resizeBilinear(alignCorners: false, halfPixelCenters: true), inputs: [[1, 4, 4, 3]], output: [1, 9, 7, 2]) == "[1, 9, 7, 3]")
    }

    @Test func broadcastingPreluAndFullyConnected() {
        #expect(Self.expected(.add(.none), inputs: [[1, 4, 4, 3], [3]], output: [1, 4, 4, 3]) == nil)
        #expect(Self.expected(.multiply(.none), inputs: [[1, 4, 1, 3], [1, 1, 5, 1]], output: [1, 4, 5, 3]) == nil)
        #expect(Self.expected(.add(.none), inputs: [[1, 4, 4, 3], [2]], output: [1, 4, 4, 3])?.contains("broadcasts") == true)
        #expect(Self.expected(.prelu, inputs: [[1, 4, 4, 3], [1, 1, 3]], output: [1, 4, 4, 3]) == nil)
        #expect(Self.expected(.fullyConnected(activation: .none), inputs: [[1, 8], [3, 8], [3]], output: [1, 3]) == nil)
        #expect(Self.expected(.fullyConnected(activation: .none), inputs: [[2, 2, 8], [3, 8]], output: [2, 2, 3]) == nil)
        #expect(Self.expected(.fullyConnected(activation: .none), inputs: [[1, 8], [3, 8]], output: [1, 4]) != nil)
    }

    @Test func errorsNameOperationAndIndex() {
        var g = Self.graph(.relu, inputs: [[1, 4]], output: [1, 5])
        g.nodes[0].name = "#7 act"
        #expect(throws: ModelError.shapeMismatch(operation: "RELU #0 '#7 act'", tensor: "out", expected: "[1, 4]", got: "[1, 5]")) {
            try g.validate()
        }
        g.nodes[0].inputs = [42]
        #expect(throws: ModelError.invalidOperation(operation: "RELU #0 '#7 act'", reason: "input refers to tensor 42, but the graph has 2 tensors")) {
            try g.validate()
        }
    }
}
