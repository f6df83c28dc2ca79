import Foundation

/// Bounds a model must stay within before anything is allocated for it: the file's size, each
/// tensor's size, and the memory of the whole plan (every tensor at float32, weights included).
/// A model downloaded from a server is untrusted input: these limits turn a crafted file into one
/// clear error instead of an allocation failure or a crash.
public struct ModelLimits: Sendable, Equatable {
    /// Largest model file read. Default: 2 GiB.
    public var maxFileBytes: Int64
    /// Most memory the model's tensors may take together, in bytes. Default: 2 GiB
    /// (``ModelLimits/defaultBudgetBytes``); the CLI's `--model-budget MB` changes it.
    public var memoryBudgetBytes: Int

    /// The default memory budget: 2 GiB.
    public static let defaultBudgetBytes = 2 << 30

    public init(maxFileBytes: Int64 = 2 << 30, memoryBudgetBytes: Int = ModelLimits.defaultBudgetBytes) {
        self.maxFileBytes = maxFileBytes
        self.memoryBudgetBytes = memoryBudgetBytes
    }

    /// The defaults.
    public static let standard = ModelLimits()
}

extension NeuralGraph {
    /// Bytes the plan needs: every tensor at 4 bytes an element (activations are float32, weights are
    /// converted to float32), or nil when the sum overflows.
    public var plannedBytes: Int? {
        var total = 0
        for t in tensors {
            guard let n = ShapeArithmetic.elementCount(t.shape) else { return nil }
            let (bytes, o1) = n.multipliedReportingOverflow(by: 4)
            let (sum, o2) = total.addingReportingOverflow(bytes)
            guard !o1, !o2 else { return nil }
            total = sum
        }
        return total
    }

    /// Checks, before anything is allocated, that the graph is a well-formed program within `limits`:
    /// every tensor is defined (a graph input, a constant, or the output of an earlier operation)
    /// before an operation reads it, no tensor is written twice (so the graph has no cycle), every
    /// graph output is defined, and the whole plan fits the memory budget.
    public func checkResources(_ limits: ModelLimits = .standard, file: String) throws(ModelError) {
        guard let bytes = plannedBytes else {
            throw ModelError.malformed(file: file, reason: "the tensors' sizes overflow", offset: nil)
        }
        guard bytes <= limits.memoryBudgetBytes else {
            let largest = tensors.max { (elementCount($0.shape) ?? 0) < (elementCount($1.shape) ?? 0) }
            throw ModelError.overBudget(file: file, neededBytes: bytes, budgetBytes: limits.memoryBudgetBytes,
                                        largest: largest.map { "'\($0.name)' \(describe($0.shape))" })
        }
        var defined = [Bool](repeating: false, count: tensors.count)
        for i in inputs where tensors.indices.contains(i) { defined[i] = true }
        for (i, t) in tensors.enumerated() where t.constant != nil { defined[i] = true }
        for (index, node) in nodes.enumerated() {
            let label = "\(node.operation.name) #\(index) '\(node.name)'"
            for t in node.inputs where t >= 0 {
                guard tensors.indices.contains(t) else {
                    throw ModelError.invalidOperation(operation: label, reason: "reads tensor \(t), but the graph has \(tensors.count) tensors")
                }
                guard defined[t] else {
                    throw ModelError.invalidOperation(operation: label, reason: "reads tensor '\(tensors[t].name)' before any operation writes it (a cycle, or operations out of order)")
                }
            }
            for t in node.outputs {
                guard tensors.indices.contains(t) else {
                    throw ModelError.invalidOperation(operation: label, reason: "writes tensor \(t), but the graph has \(tensors.count) tensors")
                }
                guard !defined[t] else {
                    throw ModelError.invalidOperation(operation: label, reason: "writes tensor '\(tensors[t].name)', which is already a graph input, a constant or another operation's output")
                }
                defined[t] = true
            }
        }
        for o in outputs where !(tensors.indices.contains(o) && defined[o]) {
            throw ModelError.invalidOperation(operation: "graph", reason: "output tensor \(o) is never written")
        }
    }
}
