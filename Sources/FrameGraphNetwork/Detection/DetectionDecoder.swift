import FrameGraph
import XNNPACKRuntime

/// Decodes a single-shot detector (BlazeFace and its kind: a regressors output [1, N, C] and a
/// scores output [1, N, 1]) into detections: anchors, box decoding, non-maximum suppression. Emits
/// the frame that went in with the detections attached (a results stream); the network node maps
/// them back from its letterboxed input to the frame.
public final class DetectionDecoder: OutputDecoder {
    public let anchorOptions: SSDAnchorOptions
    public let decoding: SSDBoxDecoding
    public let suppression: NonMaxSuppression
    /// The class name given to every detection ("face").
    public let label: String?
    private let anchors: [SSDAnchor]
    private var boxesOutput = 0, scoresOutput = 1
    private var producer = ""

    public init(anchors: SSDAnchorOptions, decoding: SSDBoxDecoding, suppression: NonMaxSuppression, label: String?) {
        anchorOptions = anchors
        self.decoding = decoding
        self.suppression = suppression
        self.label = label
        self.anchors = anchors.anchors()
    }

    public var emits: StreamKind { .results }

    public func negotiate(outputs: [(name: String, shape: [Int])], input: FrameDescription, node: String) throws -> FrameDescription {
        let n = anchors.count, c = decoding.coordinates
        let boxes = outputs.firstIndex { $0.shape == [1, n, c] }
        let scores = outputs.firstIndex { $0.shape == [1, n, 1] }
        guard let boxes, let scores else {
            let seen = outputs.map { "'\($0.name)' \($0.shape)" }.joined(separator: ", ")
            let which = boxes == nil ? "boxes [1, \(n), \(c)]" : "scores [1, \(n), 1]"
            throw GraphError.mismatch(node: node, port: "model outputs", field: "shape",
                                      expected: "\(which) (\(n) anchors of the detector's settings, \(c) values each)", got: seen.isEmpty ? "none" : seen)
        }
        boxesOutput = boxes
        scoresOutput = scores
        producer = node
        return input
    }

    public func decode(_ predictor: Predictor, for frame: Frame) throws -> Frame? {
        let boxes = predictor.output(boxesOutput), scores = predictor.output(scoresOutput)
        guard boxes.count >= anchors.count * decoding.coordinates, scores.count >= anchors.count else { return nil }
        let found = decoding.decode(boxes: UnsafePointer(boxes.pointer), scores: UnsafePointer(scores.pointer), anchors: anchors, label: label)
        var out = frame
        out.results = Results(producer: producer, detections: suppression.apply(found))
        return out
    }
}

extension DetectionDecoder {
    /// The first stage of a landmark pipeline (faces, hands, pose): the detector's one image input,
    /// [1, H, W, 3], letterboxed into and normalised as `normalization` says, and its outputs
    /// negotiated with this decoder. `port` names the model in errors ("palm detector").
    public func negotiate(detector: Predictor, input: FrameDescription, normalization: InputNormalization,
                          port: String, node: String) throws -> ModelInput {
        let info = detector.inputInfo(0)
        guard info.shape.count == 4, info.shape[0] == 1, info.shape[3] == 3 else {
            throw GraphError.mismatch(node: node, port: "\(port) input '\(info.name)'", field: "shape", expected: "[1, H, W, 3]", got: "\(info.shape)")
        }
        let outputs = (0..<detector.outputCount).map { (detector.outputInfo($0).name, detector.outputInfo($0).shape) }
        _ = try negotiate(outputs: outputs, input: input, node: node)
        return ModelInput(width: info.shape[2], height: info.shape[1], channels: 3, normalization: normalization, fit: .letterbox)
    }
}
