/// One operator of a model file as its importer saw it: imported into the graph, folded away at
/// import (a constant's DEQUANTIZE), or unsupported and why. `framegraph model check` lists them.
public struct ImportedOperator: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        case imported
        /// Computed at import (on constants) and gone from the graph: what it became.
        case folded(String)
        /// Not supported: why ("GATHER", "PAD (non-constant paddings)").
        case unsupported(String)
    }

    /// Position in the file's operator list.
    public var index: Int
    /// The format's operator type (CONV_2D, CUSTOM:TFLite_Detection_PostProcess, Conv, com.microsoft:QGemm).
    public var type: String
    /// The operator's name in the file, or its first output's.
    public var name: String
    public var outcome: Outcome

    public init(index: Int, type: String, name: String, outcome: Outcome) {
        self.index = index
        self.type = type
        self.name = name
        self.outcome = outcome
    }
}

/// What importing a model found: every operator's outcome, and the graph when all are supported
/// (else the error ``ModelError/unsupportedOperations(file:operations:)`` that import throws).
public struct ImportCheck: Sendable {
    public var operators: [ImportedOperator]
    public var graph: NeuralGraph?
    public var failure: ModelError?

    public init(operators: [ImportedOperator], graph: NeuralGraph?, failure: ModelError?) {
        self.operators = operators
        self.graph = graph
        self.failure = failure
    }
}
