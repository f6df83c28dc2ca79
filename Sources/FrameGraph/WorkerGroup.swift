import Foundation

/// The same worker node of several streams (one per camera or file of a run), sharing one worker
/// thread — and, for a network, one loaded model.
///
/// Admission stays per member: each member keeps its own "one frame in flight" (live mode drops a
/// frame that arrives while the member's previous one still waits or runs, counted as dropped-busy
/// on that member; offline mode holds its sender). The worker serves members round-robin: each turn
/// starts after the member served first in the previous turn and takes up to ``batchLimit`` members
/// whose frame is waiting, so no stream starves whatever the others send. It never waits to fill a
/// batch: a turn takes what is waiting when the worker becomes free.
///
/// ```swift
/// let group = WorkerGroup(name: "net", batchLimit: 4)
/// for net in nets { net.join(group, leader: nets[0]) }   // nets: one NetworkNode per stream
/// ```
public final class WorkerGroup: Sendable {
    /// Names the worker's lane in traces ("worker: NAME").
    public let name: String
    /// Most frames (of different members) run in one worker turn, ≥ 1.
    public let batchLimit: Int

    public init(name: String, batchLimit: Int = 1) {
        precondition(batchLimit >= 1, "a batch holds at least one frame")
        self.name = name
        self.batchLimit = batchLimit
    }
}

/// One frame of a worker turn: the member it is for, the frame, and what the member's
/// ``FilterNode/prepare(_:context:)`` made for it.
public struct BatchItem: @unchecked Sendable {
    public let node: FilterNode
    public let frame: Frame
    public let prepared: (any Sendable)?

    public init(node: FilterNode, frame: Frame, prepared: (any Sendable)?) {
        self.node = node
        self.frame = frame
        self.prepared = prepared
    }
}

/// A worker node (``Execution/worker``) that can join a ``WorkerGroup`` with its copies in other
/// streams. The runner gives every group one ``Execution/worker`` thread; a node joins by
/// conforming, and nobody downcasts to its class.
public protocol WorkerSharing: FilterNode {
    /// The group whose worker runs this node; nil: a worker of its own (the default for one stream).
    var workerGroup: WorkerGroup? { get }

    /// Makes this node run on `group`'s worker, using what `leader` (a member of the same group,
    /// possibly this node) loads — a network's model is loaded once for all of them.
    func join(_ group: WorkerGroup, leader: Self)

    /// One worker turn: `items` (one frame each for different members of this node's group, this
    /// node's own first) in round-robin order; returns one output per item, in order (nil: nothing
    /// emitted for it). Called on the group's worker, every member's lock held. A model whose batch
    /// dimension allows runs them as one inference; the default runs each member's
    /// ``FilterNode/process(_:prepared:context:)`` in turn.
    func processBatch(_ items: [BatchItem], context: RunContext) throws -> [Frame?]
}

extension WorkerSharing {
    public func processBatch(_ items: [BatchItem], context: RunContext) throws -> [Frame?] {
        try items.map { try $0.node.process($0.frame, prepared: $0.prepared, context: context) }
    }
}
