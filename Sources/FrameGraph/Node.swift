import Foundation
import Synchronization

/// How the runner runs a node: declared once by the node (``Node/execution``), read by the runner,
/// the report and the CLI.
public enum Execution: String, Sendable, Equatable {
    /// Produces frames on a thread of its own (sources).
    case source
    /// Runs on the thread that delivers the frame (most filters and composites).
    case inline
    /// Runs on a worker thread of its own with one frame in flight: live mode drops what arrives while
    /// it is busy (counted as dropped-busy), offline mode waits (network nodes, `slow`, composites
    /// that pipeline their work).
    case worker
    /// Consumes frames: as they arrive offline, one per output-clock tick live (sinks).
    case sink
}

/// What a node does with frames: the four base classes, as a value (no downcasts needed).
public enum NodeRole: String, Sendable, CaseIterable {
    case source, filter, composite, sink
}

/// A link from a node's output to an input port of a downstream node.
public struct Connection: Sendable {
    public let node: Node
    public let port: Int
}

/// The base of every node in a graph: a name, its downstream targets, its counters.
///
/// Subclass one of the four roles rather than `Node` itself: ``SourceNode`` produces frames,
/// ``FilterNode`` transforms one frame into another, ``CompositeNode`` combines frames from several
/// ports (frame + mask), ``SinkNode`` consumes frames. Wire nodes with ``addTarget(_:port:)`` or `-->`
/// before running; the graph is fixed once it runs.
///
/// Thread safety: the runner calls one node from one thread at a time (it holds ``processLock``), so
/// a subclass keeps its state in plain stored properties.
open class Node: @unchecked Sendable, CustomStringConvertible {
    /// Unique name within the graph, used in errors, stats and traces.
    public let name: String
    /// What happened to frames at this node.
    public let counters = NodeCounters()
    /// Where this node's output goes.
    public private(set) var targets: [Connection] = []
    /// Held by the runner around every call into the node.
    public let processLock = NSLock()
    /// How frames enter this node during a run. The runner owns the inbox (it holds the inbox
    /// strongly and releases it when the run ends); the node only points at it.
    weak var inbox: (any Inbox)?
    /// What arrives at each input port, once the runner has negotiated formats (valid in ``start(context:)``).
    public internal(set) var inputs: [FrameDescription] = []
    /// The sources whose frames can reach this node, upstream first (set by validation; held weakly,
    /// since the sources hold this node through their targets).
    public var upstreamSources: [SourceNode] { upstreamSourceLinks.compactMap(\.node) }
    var upstreamSourceLinks: [WeakSource] = []

    public init(name: String) {
        self.name = name
    }

    /// Names of the input ports, in port-number order. Default: one port, "in".
    open var inputPorts: [String] { ["in"] }

    /// What each input port takes, in port order: frames, results, or nil for either. The runner
    /// refuses a connection that brings the other kind, naming both. Default: frames on every port.
    open var inputKinds: [StreamKind?] { inputPorts.map { _ in .frames } }

    /// What this node emits: frames (default) or results about frames (a detector, a classifier).
    open var outputKind: StreamKind { .frames }

    /// Whether the frames this node emits also carry its results (a mask with the pose it belongs
    /// to): such a frame stream may feed a results port too (annotate, a results file). Default: no.
    open var framesCarryResults: Bool { false }

    /// How the runner runs this node. Default: by role (a source its own thread, a sink the sink
    /// inbox, filters and composites inline); a node that wants a worker thread overrides it.
    open var execution: Execution { .inline }

    /// Which of the four roles this node has (set by its base class).
    open var role: NodeRole { .filter }

    /// Short type name for reports (e.g. "resize").
    open var kind: String { String(describing: type(of: self)) }

    public var description: String { "\(kind) '\(name)'" }

    /// Sends this node's output to `node`'s input `port`. Returns `node`, so calls chain.
    @discardableResult
    public func addTarget(_ node: Node, port: Int = 0) -> Node {
        targets.append(Connection(node: node, port: port))
        return node
    }

    /// Removes every connection from this node (a graph that failed to build lets go of itself:
    /// connections in a cycle would otherwise keep its nodes alive).
    public func removeAllTargets() {
        targets.removeAll()
    }

    /// Given what arrives at each input port, says what this node emits (nil for sinks), or throws a
    /// ``GraphError/mismatch(node:port:field:expected:got:)`` naming the port and field.
    open func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        inputs.first
    }

    /// Files this node reads (a video, a model, an image), as given. The runner checks them before
    /// anything is opened: no output may name one of them. Default: none.
    open var filesRead: [String] { [] }

    /// Where this node's model came from (a file, a deployed collection's entry and deployment, or
    /// the fallback and why), for the stats' `modelSource`; nil for nodes without a model.
    open var modelSource: String? { nil }

    /// Times the node switched to a new model while running (`--hot-swap`).
    open var modelSwaps: Int { 0 }

    /// Files this node writes, as given (for a pattern, the first file it would write). The runner
    /// refuses an output that is also an input or another node's output. Default: none.
    open var filesWritten: [String] { [] }

    /// Called once before the first frame (open files, allocate scratch memory).
    open func start(context: RunContext) throws {}

    /// Called once after the last frame, always, even after an error (flush and close files).
    open func finish(context: RunContext) throws {}

    /// Throws a mismatch error unless `got` is one of `allowed`.
    public func require(format got: PixelFormat, in allowed: [PixelFormat], port: Int = 0) throws {
        guard allowed.contains(got) else {
            throw GraphError.mismatch(node: name, port: portName(port), field: "pixel format",
                                      expected: allowed.map(\.description).joined(separator: " or "),
                                      got: got.description)
        }
    }

    /// Throws a mismatch error when what arrives at `port` is not 8-bit (a float frame, such as a
    /// colorizer's a/b output). `hint` is added to the expectation ("add a 'convert' node").
    public func requireEightBit(_ input: FrameDescription, port: Int = 0, hint: String? = nil) throws {
        guard input.format.isFloat else { return }
        throw GraphError.mismatch(node: name, port: portName(port), field: "pixel format",
                                  expected: "an 8-bit format" + (hint.map { " (\($0))" } ?? ""), got: input.format.description)
    }

    /// The name of input `port` (or its number when out of range).
    public func portName(_ port: Int) -> String {
        inputPorts.indices.contains(port) ? inputPorts[port] : "#\(port)"
    }
}

/// A node that produces frames: a file, a camera, a test pattern. The runner calls ``nextFrame(context:)``
/// in a loop on the source's own thread, paces it in live mode, and sends each frame downstream.
open class SourceNode: Node, @unchecked Sendable {
    override open var inputPorts: [String] { [] }
    override open var execution: Execution { .source }
    override public final var role: NodeRole { .source }

    /// Whether the runner should pace frames by their media time in live mode (files: yes; a camera
    /// delivers in real time already: no).
    open var pacedByMediaTime: Bool { true }

    /// What this source emits; valid after ``Node/start(context:)``. Every source overrides it.
    open func outputDescription() throws -> FrameDescription {
        throw GraphError.nodeFailed(node: name, reason: "\(kind) does not say what it emits (override outputDescription())")
    }

    /// The stream this source starts, when a run has several (`--input` given more than once): its
    /// name in the report's `streams`. Default nil: the source's own name.
    public var streamName: String?

    /// Frames lost so far to damage inside the input (skipped; reading went on). Default: 0.
    open var framesLostToDamage: Int { 0 }

    /// How many seconds of media the source will deliver (after ``start(context:)``), for a progress
    /// line; nil when unknown or endless (a camera, a loop).
    open var expectedSeconds: Double? { nil }

    /// One line naming where the damage was (file, byte offset), when ``framesLostToDamage`` > 0.
    open var damageNote: String? { nil }

    /// The next frame (its `mediaTime` set), or nil at the end of the input. Errors end the input:
    /// what was produced before still flows to the sinks.
    open func nextFrame(context: RunContext) throws -> Frame? {
        nil
    }

    /// The file behind the frames, for sinks that keep its timing, sound and tags; nil for sources
    /// that are not files (a camera, a test pattern). Valid after ``Node/start(context:)``.
    open var mediaOrigin: MediaOrigin? { nil }

    /// The connection counters of a source that can lose its input and get it back (a network
    /// stream, a camera that is unplugged): reconnects, stalls, seconds without signal, for the
    /// stats, the trace and `/metrics`; nil for sources without one (a file, a pattern).
    open var connection: ConnectionCounters? { nil }

    /// After ``Node/start(context:)``: one line for people on what the device behind the source
    /// granted (a camera's size, format and rate, and where it differs from what was asked); nil
    /// for sources without a device.
    open var deviceNote: String? { nil }

    /// After the run: one line for people on what the device behind the source did (a camera's
    /// frames, drops at the driver, reconnects); nil for sources without a device.
    open var deviceSummary: String? { nil }

    /// Set by the runner before ``Node/start(context:)``: whether this source may start without
    /// knowing what it emits (a network stream not connected yet). True only in a run of several
    /// sources where every node this source feeds is fed by it alone: the runner then starts that
    /// chain at the source's first frame, and the other streams do not wait for it.
    public internal(set) var mayStartLate = false

    /// After ``Node/start(context:)``: whether the source started without knowing what it emits
    /// (only when ``mayStartLate``). Its ``outputDescription()`` is valid from its first frame, when
    /// the runner negotiates and starts the nodes it feeds. Default: false.
    open var startsLate: Bool { false }

    /// Set by the runner when this source has sent its last frame (composites waiting for a partner
    /// from it then know none will come).
    let hasEnded = Atomic<Bool>(false)
}

/// A source held weakly (a node's ``Node/upstreamSources``).
struct WeakSource {
    weak var node: SourceNode?
}

/// A node that turns one frame into another (or into nothing, to drop it).
///
/// ```swift
/// final class Invert: FilterNode, @unchecked Sendable {
///     override func process(_ frame: Frame, context: RunContext) throws -> Frame? { … }
/// }
/// ```
open class FilterNode: Node, @unchecked Sendable {
    override public final var role: NodeRole { .filter }

    /// Transforms one frame. Return nil to emit nothing for it.
    open func process(_ frame: Frame, context: RunContext) throws -> Frame? {
        frame
    }

    /// For a node on a worker: work on `frame` that can run on the thread that delivers it, while
    /// the worker is still busy with the previous frame (a network's input preparation), so that
    /// the worker — often the pipeline's critical path — does less. Called only for frames the
    /// worker will take. What it returns reaches ``process(_:prepared:context:)``. Default: nil.
    open func prepare(_ frame: Frame, context: RunContext) throws -> (any Sendable)? {
        nil
    }

    /// ``process(_:context:)`` with what ``prepare(_:context:)`` made for this frame (nil when the
    /// node runs inline, or prepares nothing). Default: calls ``process(_:context:)``.
    open func process(_ frame: Frame, prepared: (any Sendable)?, context: RunContext) throws -> Frame? {
        try process(frame, context: context)
    }
}

/// How a composite node pairs frames that arrive on its ports.
public enum PairingPolicy: String, Sendable, CaseIterable {
    /// Each frame on port 0 is combined with the newest frame seen on every other port (live default):
    /// a slow mask branch never holds the video back.
    case newest
    /// Frames are combined only when every port has the frame of the same sequence number (offline
    /// default): every output uses its own mask.
    case sameFrame = "same"
}

/// The `pairing` option of composite nodes: a ``PairingPolicy`` or `auto` (follow the run mode).
public enum PairingChoice: String, Sendable, CaseIterable {
    case auto, newest, same

    /// The policy it names (nil for `auto`).
    public var policy: PairingPolicy? { self == .auto ? nil : PairingPolicy(rawValue: rawValue) }

    /// The option, shared by every composite node type.
    public static let option = NodeOption<PairingChoice>.choice(
        "pairing", default: .auto, "newest (live default: the newest result), same (offline default: the frame's own), or auto (by mode)")
}

/// A node with several inputs (frame + mask, foreground + background). It emits when port 0 receives
/// a frame that can be paired by its ``pairing`` policy (default: by run mode).
open class CompositeNode: Node, @unchecked Sendable {
    /// Pairing policy; nil means `sameFrame` offline and `newest` live.
    public var pairing: PairingPolicy?
    override public final var role: NodeRole { .composite }

    /// Combines one frame per port (in port order) into the output frame.
    open func combine(_ frames: [Frame], context: RunContext) throws -> Frame? {
        frames.first
    }
}

/// A node that consumes frames: an encoder, an image writer, a counter.
open class SinkNode: Node, @unchecked Sendable {
    override open var execution: Execution { .sink }
    override public final var role: NodeRole { .sink }

    override open func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? { nil }

    /// Live mode: whether the sink takes one frame per output-clock tick (video outputs, a window:
    /// default) or every frame as it arrives (a results file, a callback: nothing repeated, nothing
    /// skipped). Offline, every sink takes every frame as it arrives.
    open var isClocked: Bool { true }

    /// Whether the sink only watches the run (the picture `--serve` shows): it is left out of the
    /// run's report, so that watching a run never changes its figures. Default: false.
    open var isMonitor: Bool { false }

    /// An encoding sink: its preset and what its live speed control did (``EncoderSpeedControl``),
    /// for the stats' `encoder`; nil for other sinks.
    open var encoderSpeed: EncoderSpeedReport? { nil }

    /// Consumes one output frame. `index` counts the sink's output frames from 0, so the frame's
    /// presentation time is `index / context.fps`.
    open func consume(_ frame: Frame, index: Int, context: RunContext) throws {}
}
