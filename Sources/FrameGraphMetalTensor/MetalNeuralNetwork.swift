import Foundation
import FrameGraph
import FrameGraphModels
import FrameGraphNetwork
import MetalTensorImport
import NeuralGraph
import XNNPACKRuntime

/// A MetalTensor network in FrameGraph, in the shape of MetalTensor's `MetalNeuralNetwork`:
/// created from the plist, weights loaded from the `.bin` and its `.json` map, `predict` on an image
/// (synchronous, with a completion handler, or `async`), outputs read by layer name. It is also a
/// node, so MetalImage's `camera.addTarget(crop); crop.addTarget(resize); resize.addTarget(net)`
/// becomes `camera --> crop --> net`:
///
/// ```swift
/// let net = try MetalNeuralNetwork(plist: URL(fileURLWithPath: "PortraitSegmentNet.plist"))
/// try net.loadWeights(URL(fileURLWithPath: "PortraitSegmentNet.bin"), mapFile: URL(fileURLWithPath: "PortraitSegmentNet.json"))
/// net.synchronizedProcessing = false          // drop frames that arrive while it is busy
/// net.onOutputs = { outputs, frame in print(outputs["output"]?.values.max() ?? 0) }
/// camera --> Crop(name: "square", square: true) --> net --> NullSink(name: "end")
/// let mask = try net.predict(frame)["output"]    // or: try await net.predict(frame)
/// ```
/// Images are fed as MetalTensor's apps feed them: stretched to the `input` node's size with
/// bilinear sampling at pixel centres, rounded to 8 bits, RGB / 255. As a node it passes each frame
/// on unchanged after the prediction, so more nodes can follow.
public final class MetalNeuralNetwork: FilterNode, ModelUser, @unchecked Sendable {
    /// The network's outputs after one prediction, by layer name: shape (rows, columns, depth as
    /// MetalTensor declares it) and values in HWC order.
    public struct Outputs: Sendable {
        public let tensors: [String: (shape: [Int], values: [Float])]
        public subscript(name: String) -> (shape: [Int], values: [Float])? { tensors[name] }
        public var names: [String] { tensors.keys.sorted() }
    }

    /// The network is not ready: ``loadWeights(_:mapFile:)`` has not succeeded.
    public struct NotLoaded: Error, CustomStringConvertible {
        public var description: String { "the network has no weights yet: call loadWeights(_:mapFile:) first" }
    }

    public let plist: URL
    /// Float32 arithmetic, or MetalTensor's default on an iPhone, float16 storage. Set before
    /// ``loadWeights(_:mapFile:)``.
    public var precision: MetalTensorImporter.Precision = .float32
    /// Threads for each prediction. Set before ``loadWeights(_:mapFile:)``.
    public var threads = 1
    /// True: every frame is predicted, in order, on the thread that delivers it. False: the network
    /// works on its own thread, one frame at a time, and frames that arrive while it is busy are
    /// dropped (counted as dropped-busy in live runs; ``predict(_:completion:)`` returns false).
    public var synchronizedProcessing = true
    /// The service whose limits (file size, memory budget) the model must fit. Set before
    /// ``loadWeights(_:mapFile:)``.
    public var models = ModelService()
    public var modelReferences: [String] { [plist.path] }
    /// Called with each prediction's outputs when the network runs as a node.
    public var onOutputs: (@Sendable (Outputs, Frame) -> Void)?

    private let state = Protected<Predictor?>(nil)
    private let busy = Protected(false)
    private let latest = Protected<Outputs?>(nil)
    private let rgb = CommonDecoderRGB()

    /// A network described by `plist`; its graph is read and checked now (node types, targets,
    /// slots, cycles, input and outputs), each layer's keys and weights by ``loadWeights(_:mapFile:)``.
    public init(plist: URL, name: String = "network") throws {
        self.plist = plist
        super.init(name: name)
        try MetalTensorImporter.checkGraph(plist: [UInt8](try ModelFile.read(plist.path, maxBytes: ModelLimits.standard.maxFileBytes)),
                                           fileName: plist.lastPathComponent)
    }

    override public var kind: String { "metaltensor-network" }
    override public var execution: Execution { synchronizedProcessing ? .inline : .worker }
    override public var filesRead: [String] { MetalTensorImporter.filesRead(path: plist.path, limits: models.limits) }

    /// Loads the weights (`.bin`) through their map (`.json`), then compiles the network.
    public func loadWeights(_ weights: URL, mapFile: URL) throws {
        let graph = try models.graph(at: plist.path, metalTensor: .init(precision: precision, weights: weights.path, map: mapFile.path))
        let predictor = try Predictor(graph: graph, options: .init(threads: threads))
        state.withLock { $0 = predictor }
    }

    /// The `input` node's size: (rows, columns, depth).
    public var inputShape: [Int]? { state.withLock { $0.map { Array($0.inputInfo(0).shape.dropFirst()) } } }

    /// The outputs of the most recent prediction.
    public var lastOutputs: Outputs? { latest.withLock { $0 } }

    /// One output of the most recent prediction, by layer name.
    public func output(named name: String) -> [Float]? { lastOutputs?[name]?.values }

    /// Predicts on an image (rgb24 or yuv420p, any size), synchronously.
    public func predict(_ frame: Frame) throws -> Outputs {
        let image = try rgb.rgb(of: frame)
        return try run { input, shape in
            PixelCentreSampler(width: shape[2], height: shape[1]).sample(image, x: 0, y: 0, width: Double(image.width),
                                                                         height: Double(image.height), into: input.pointer)
        }
    }

    /// Predicts on a tensor given as it is (rows × columns × depth floats, HWC), like `predictWithTensor:`.
    public func predict(tensor values: [Float]) throws -> Outputs {
        try run { input, shape in
            guard values.count == input.count else {
                throw ModelError.inputMismatch(input: "input", expected: "\(input.count) values \(Array(shape.dropFirst()))", got: "\(values.count) values")
            }
            input.pointer.update(from: values, count: values.count)
        }
    }

    /// Predicts on another thread and calls `completion` there. Returns false, without calling it,
    /// when ``synchronizedProcessing`` is false and a prediction is still running (the frame is dropped).
    @discardableResult
    public func predict(_ frame: Frame, completion: @escaping @Sendable (Result<Outputs, any Error>) -> Void) -> Bool {
        predict(frame, dropWhenBusy: !synchronizedProcessing, completion: completion)
    }

    /// Predicts without blocking the caller's thread (never dropped).
    public func predict(_ frame: Frame) async throws -> Outputs {
        try await withCheckedThrowingContinuation { continuation in
            _ = predict(frame, dropWhenBusy: false) { continuation.resume(with: $0) }
        }
    }

    private func predict(_ frame: Frame, dropWhenBusy: Bool, completion: @escaping @Sendable (Result<Outputs, any Error>) -> Void) -> Bool {
        if dropWhenBusy {
            let accepted = busy.withLock { b -> Bool in
                if b { return false }
                b = true
                return true
            }
            guard accepted else { return false }
        }
        Thread.detachNewThread { [self] in
            let result = Result { try self.predict(frame) }
            if dropWhenBusy { busy.withLock { $0 = false } }
            completion(result)
        }
        return true
    }

    private func run(_ fill: (TensorBuffer, [Int]) throws -> Void) throws -> Outputs {
        try state.withLock { predictor -> Outputs in
            guard let predictor else { throw NotLoaded() }
            let input = predictor.input(0)
            try fill(input, predictor.inputInfo(0).shape)
            try predictor.predict()
            var tensors: [String: (shape: [Int], values: [Float])] = [:]
            for i in 0..<predictor.outputCount {
                let out = predictor.output(i)
                tensors[predictor.outputInfo(i).name] = (Array(out.shape.dropFirst()), Array(UnsafeBufferPointer(start: out.pointer, count: out.count)))
            }
            let outputs = Outputs(tensors: tensors)
            latest.withLock { $0 = outputs }
            return outputs
        }
    }

    // MARK: as a node

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard let frame = inputs.first else { return nil }
        try require(format: frame.format, in: [.yuv420p, .rgb24])
        guard state.withLock({ $0 != nil }) else { throw GraphError.nodeFailed(node: name, reason: NotLoaded().description) }
        return frame
    }

    override public func process(_ frame: Frame, context: RunContext) throws -> Frame? {
        let outputs = try predict(frame)
        onOutputs?(outputs, frame)
        return frame
    }
}
