import FrameGraph
import Foundation
import Testing

/// The runner's own safety rules, without the CLI: outputs checked against inputs and each other
/// before any node starts, a stop before the start opens nothing, a graph over the node limit is
/// refused, and files are written beside their destination and renamed into place.
@Suite struct RunSafetyTests {
    /// A sink that records whether it was started and claims a file it would write.
    final class ClaimingSink: SinkNode, @unchecked Sendable {
        let path: String
        private let startedFlag = Protected(false)
        var started: Bool { startedFlag.withLock { $0 } }
        init(name: String, path: String) {
            self.path = path
            super.init(name: name)
        }
        override var filesWritten: [String] { [path] }
        override func start(context: RunContext) throws { startedFlag.withLock { $0 = true } }
    }

    func scratch(_ name: String) -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fg-run-safety-\(name)-\(getpid())")
        try? FileManager.default.removeItem(at: url)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func aStopBeforeTheRunStartsNoNodeAndReportsNotStarted() throws {
        let source = PatternSource(width: 256, height: 32, frameCount: 30)
        let sink = ClaimingSink(name: "sink", path: scratch("stop").appendingPathComponent("o.bin").path)
        source --> sink
        let runner = try GraphRunner(sources: [source], options: RunOptions(mode: .offline, clock: ManualClock()))
        runner.stop()
        let report = try runner.run()
        #expect(!report.started)
        #expect(report.interrupted)
        #expect(report.framesIn == 0)
        #expect(!sink.started)
    }

    @Test func twoSinksOnOneFileAreRefusedBeforeAnythingStarts() throws {
        let dir = scratch("two")
        let source = PatternSource(width: 256, height: 32, frameCount: 3)
        let a = ClaimingSink(name: "a", path: dir.appendingPathComponent("o.bin").path)
        let b = ClaimingSink(name: "b", path: dir.path + "/./o.bin")
        source --> a
        source --> b
        let runner = try GraphRunner(sources: [source], options: RunOptions(clock: ManualClock()))
        #expect(throws: GraphError.io(path: b.path, reason: "node 'b' and node 'a' both write this file: give each its own path")) {
            try runner.validate()
        }
        #expect(!a.started && !b.started)
    }

    @Test func theTraceMayNotNameAnotherOutputAndIsNotCreatedByValidation() throws {
        let dir = scratch("trace")
        let source = PatternSource(width: 256, height: 32, frameCount: 3)
        let out = dir.appendingPathComponent("o.bin").path
        source --> ClaimingSink(name: "sink", path: out)
        var options = RunOptions(clock: ManualClock())
        options.traceURL = URL(fileURLWithPath: out)
        #expect(throws: GraphError.self) { try GraphRunner(sources: [source], options: options).validate() }
        let trace = dir.appendingPathComponent("trace.json")
        options.traceURL = trace
        let runner = try GraphRunner(sources: [source], options: options)
        try runner.validate()
        #expect(!FileManager.default.fileExists(atPath: trace.path), "validation creates nothing")
        _ = try runner.run()
        let events = try JSONSerialization.jsonObject(with: Data(contentsOf: trace)) as? [Any]
        #expect((events?.count ?? 0) > 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["trace.json"], "no temporary file left")
    }

    @Test func aGraphOverTheNodeLimitIsRefused() throws {
        let source = PatternSource(width: 256, height: 32, frameCount: 3)
        var last: Node = source
        for i in 0..<20 { last = last.addTarget(SlowNode(name: "n\(i)", delay: 0)) }
        last.addTarget(NullSink(name: "out"))
        var options = RunOptions(clock: ManualClock())
        options.maxNodes = 10
        #expect(throws: GraphError.tooManyNodes(count: 22, limit: 10)) { try GraphRunner(sources: [source], options: options).validate() }
    }

    @Test func outputFilesAppearOnlyWhenComplete() throws {
        let dir = scratch("output-file")
        let path = dir.appendingPathComponent("stats.json").path
        try "old".write(toFile: path, atomically: false, encoding: .utf8)
        let out = try OutputFile(destination: path)
        try out.append(Data("new".utf8))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old", "the destination is untouched until commit")
        #expect(out.temporaryPath.hasSuffix(".json") && out.temporaryPath.contains("/.fg-"))
        try out.commit()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
        let discarded = try OutputFile(destination: path)
        try discarded.append(Data("half".utf8))
        discarded.discard()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["stats.json"])
        #expect(throws: GraphError.self) { try OutputFile(destination: "tcp://127.0.0.1:9/x") }
        #expect(throws: GraphError.self) { try OutputFile(destination: dir.path) }
    }

    @Test func optionSpecsCheckRangesAndChoices() {
        #expect(SlowNode.OptionSpecs.ms.spec.problem(with: "1e308") == "must be from 0 to 60000, got 1e308")
        #expect(SlowNode.OptionSpecs.ms.spec.problem(with: "nan") == "expected a number, got 'nan'")
        #expect(SlowNode.OptionSpecs.ms.spec.problem(with: "20") == nil)
        #expect(PairingChoice.option.spec.problem(with: "newset")?.contains("did you mean 'newest'") == true)
        #expect(PatternSource.OptionSpecs.width.spec.kind.label == "integer 256…8192")
        // The Swift initialiser's defaults are the spec's.
        let pattern = PatternSource()
        #expect(pattern.width == PatternSource.OptionSpecs.width.defaultValue && pattern.frameCount == 300)
        #expect(SlowNode().delay == 0.05)
    }
}
