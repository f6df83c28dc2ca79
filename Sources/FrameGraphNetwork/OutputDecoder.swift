import FrameGraph
import XNNPACKRuntime

/// Turns a model's output tensors into what flows on in the graph (a mask frame, later boxes or
/// labels). Decoders keep their own state (temporal smoothing) and reuse their memory.
public protocol OutputDecoder: AnyObject {
    /// Checks the model's outputs fit this decoder (names the output and dimension when not), and says
    /// what the decoder emits.
    func negotiate(outputs: [(name: String, shape: [Int])], input: FrameDescription, node: String) throws -> FrameDescription
    /// Decodes the predictor's outputs for `frame` (the frame that went in).
    func decode(_ predictor: Predictor, for frame: Frame) throws -> Frame?
    /// What the decoder emits: frames (a mask, a/b planes) or results (detections). Default: frames.
    var emits: StreamKind { get }
}

extension OutputDecoder {
    public var emits: StreamKind { .frames }
}
