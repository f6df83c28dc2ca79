import Foundation
import FrameGraph

/// Writes results to a JSON Lines file: one line per item (a frame's results, found or empty), with
/// the frame's index, media time and size and the node that made them (schema: docs/RESULTS.md).
/// Read it back with ``ResultsLines/read(path:)``, or any JSON reader, line by line.
///
/// The file is written beside its destination and renamed into place when the run ends, so an
/// interrupted run (Ctrl-C, a camera unplugged) still leaves a complete file of what was found; a
/// failure while writing leaves the destination as it was. Live, every item is written as it
/// arrives (no clock ticks: nothing is repeated or skipped). Several ports take several producers
/// into one file (`--results` uses that).
///
/// ```swift
/// faces --> ResultsSink(name: "log", path: "out/faces.jsonl")
/// ```
public final class ResultsSink: SinkNode, @unchecked Sendable {
    public let path: String
    /// Number of input ports (one producer each).
    public let ports: Int
    private var output: OutputFile?
    private var handle: FileHandle?
    private var buffered = Data()
    /// Lines written so far.
    public private(set) var linesWritten = 0

    public init(name: String = "results", path: String, ports: Int = OptionSpecs.ports.defaultValue) {
        self.path = path
        self.ports = max(1, ports)
        super.init(name: name)
    }

    override public var kind: String { "results" }
    override public var inputPorts: [String] { (0..<ports).map { $0 == 0 ? "in" : "in\($0 + 1)" } }
    override public var inputKinds: [StreamKind?] { Array(repeating: .results, count: ports) }
    override public var isClocked: Bool { false }
    override public var filesWritten: [String] { [path] }

    override public func start(context: RunContext) throws {
        let out = try OutputFile(destination: path)
        let h: FileHandle
        do { h = try out.handle() } catch {
            out.discard()
            throw error
        }
        output = out
        handle = h
        linesWritten = 0
        buffered.removeAll(keepingCapacity: true)
    }

    override public func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        buffered.append(try ResultsLines.encode(TimedResults(frame: frame, producer: name)))
        buffered.append(UInt8(ascii: "\n"))
        linesWritten += 1
        if buffered.count >= 64 << 10 { try flush() }
    }

    private func flush() throws {
        guard let handle, !buffered.isEmpty else { return }
        do {
            try handle.write(contentsOf: buffered)
        } catch {
            throw GraphError.io(path: path, reason: "cannot write results: \(FileCheck.plainReason(error))")
        }
        buffered.removeAll(keepingCapacity: true)
    }

    override public func finish(context: RunContext) throws {
        guard let out = output else { return }
        defer {
            output = nil
            handle = nil
        }
        do {
            try flush()
            try handle?.close()
        } catch {
            out.discard()
            throw error
        }
        try out.commit()
    }
}

extension ResultsSink {
    /// The options of the `results` node type.
    public enum OptionSpecs {
        public static let path = NodeOption<String?>.text("path", required: true, "JSON Lines file, e.g. out/faces.jsonl")
        public static let ports = NodeOption.int("ports", default: 1, 1...16, "number of input ports (in, in2, …), one producer each")
        public static let all = [path.spec, ports.spec]
    }
}
