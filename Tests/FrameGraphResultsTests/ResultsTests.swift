import Foundation
@testable import FrameGraph
@testable import FrameGraphResults
import FrameGraphDraw
import FrameGraphMedia
import Testing
import TestSupport

/// A results producer for tests: passes each frame on with results that depend on its sequence
/// number (so a round trip and a pairing can be checked exactly).
final class KnownResults: FilterNode, @unchecked Sendable {
    override var outputKind: StreamKind { .results }

    /// A small layout of the test's own, read back through a catalog that knows it.
    static let triangle = LandmarkTopology(name: "test-triangle", paths: [[0, 1, 2, 0]])

    static func results(for sequence: Int, producer: String) -> Results {
        let s = Float(sequence)
        return Results(producer: producer,
                       detections: [Detection(box: ResultBox(x: 0.1 + 0.01 * s, y: 0.2, width: 0.25, height: 0.5), score: 0.875, label: "face",
                                              index: 0, keypoints: [ResultPoint(x: 0.2, y: 0.3), ResultPoint(x: 0.3, y: 0.3)])],
                       landmarks: [LandmarkSet(label: "face", points: [Landmark(x: 0.5, y: 0.5, z: -0.125, visibility: 0.75),
                                                                       Landmark(x: 0.25, y: 0.75), Landmark(x: 0.125, y: 0.5, z: nil, visibility: 1)],
                                               topology: KnownResults.triangle)],
                       classifications: sequence % 2 == 0 ? [Classification(label: "even", confidence: 0.5, index: 2)] : [])
    }

    override func process(_ frame: Frame, context: RunContext) throws -> Frame? {
        var out = frame
        out.results = Self.results(for: frame.sequence, producer: name)
        return out
    }
}

/// Results beside frames: kinds checked before the run, the JSON Lines file, taps, re-projection.
@Suite struct ResultsTests {
    func source(_ frames: Int = 12) -> PatternSource { PatternSource(width: 256, height: 64, format: .rgb24, frameCount: frames) }

    @Test func aResultsFileRoundTripsEveryFrame() throws {
        let path = TestEnvironment.scratch("results-roundtrip").appendingPathComponent("faces.jsonl").path
        let s = source(), producer = KnownResults(name: "faces")
        s --> producer --> ResultsSink(name: "log", path: path)
        let report = try GraphRunner(sources: [s], options: RunOptions(mode: .offline)).run()
        #expect(report.failure == nil)
        let records = try ResultsLines.read(path: path, topologies: TopologyCatalog([KnownResults.triangle]))
        #expect(records.count == 12)
        for (i, r) in records.enumerated() {
            #expect(r.index == i)
            #expect(r.width == 256 && r.height == 64)
            #expect(abs(r.time - Double(i) / 30) < 1e-9)
            #expect(r.results == KnownResults.results(for: i, producer: "faces"))
        }
        // The topology travels by name and comes back as the catalog's, with its lines; a reader
        // without it gets the name and no lines.
        #expect(records[0].results.landmarks[0].topology?.connections.count == 3)
        #expect(try ResultsLines.read(path: path)[0].results.landmarks[0].topology?.connections.isEmpty == true)
        // Field names are the documented schema.
        let firstLine = try #require(String(data: try Data(contentsOf: URL(fileURLWithPath: path)), encoding: .utf8)?.split(separator: "\n").first)
        #expect(firstLine.hasPrefix(#"{"classifications":[{"confidence":0.5,"index":2,"label":"even"}],"detections":[{"box":["#))
        #expect(firstLine.contains(#""node":"faces""#) && firstLine.contains(#""topology":"test-triangle""#))
        #expect(firstLine.contains(#"[0.5,0.5,-0.125,0.75]"#) && firstLine.contains(#"[0.125,0.5,null,1]"#))
    }

    @Test func damagedResultsLinesNameTheLineAndTheField() throws {
        let folder = TestEnvironment.scratch("results-bad")
        let good = String(decoding: try ResultsLines.encode(TimedResults(index: 0, time: 0, width: 4, height: 4, results: Results(producer: "p"))), as: UTF8.self)
        let cases: [(String, String)] = [
            ("\(good)\n{\"node\":\"p\",\"index\":1", "bad.jsonl:2: not valid JSON"),
            ("\(good)\n\n" + good.replacingOccurrences(of: "\"index\":0", with: "\"index\":-3"), "bad.jsonl:3: index -3 is negative"),
            (good.replacingOccurrences(of: ",\"width\":4", with: ""), "bad.jsonl:1: missing field 'width'"),
            (good.replacingOccurrences(of: "\"detections\":[]", with: "\"detections\":[{\"box\":[1,2,3],\"score\":1}]"),
             "bad.jsonl:1: expected Float at detections[0].box[3]: the list ends early"),
            (good.replacingOccurrences(of: "\"detections\":[]", with: "\"detections\":[{\"box\":[0,0,1,1],\"score\":1e60}]"), "bad.jsonl:1: not valid JSON, or a number out of range"),
            (good.replacingOccurrences(of: "\"landmarks\":[]", with: "\"landmarks\":[{\"points\":[[1,2,3,4,5]]}]"),
             "bad.jsonl:1: landmarks[0].points[0]: a landmark is [x, y], [x, y, z] or [x, y, z, visibility]"),
        ]
        for (text, expected) in cases {
            let path = folder.appendingPathComponent("bad.jsonl").path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            do {
                _ = try ResultsLines.read(path: path)
                Issue.record("read \(text) without an error")
            } catch let error as ResultsFileError {
                #expect(error.description.hasSuffix(expected) || error.description.contains(expected), "\(error.description)")
                #expect(error.description.hasPrefix(path))
            }
        }
    }

    @Test func resultsIntoAFramePortAreRefusedBeforeTheRunNamingBothKinds() throws {
        let s = source(), producer = KnownResults(name: "faces")
        s --> producer --> SlowNode(name: "shrink", delay: 0) --> NullSink(name: "out")
        #expect(throws: GraphError.mismatch(node: "shrink", port: "in", field: "stream", expected: "frames",
                                            got: "results (detections, landmarks, labels) from KnownResults 'faces'")) {
            try GraphRunner(sources: [s], options: RunOptions(clock: ManualClock())).validate()
        }
        let t = source()
        t --> ResultsSink(name: "log", path: TestEnvironment.scratch("results-kind").appendingPathComponent("x.jsonl").path)
        #expect(throws: GraphError.mismatch(node: "log", port: "in", field: "stream", expected: "results (detections, landmarks, labels)",
                                            got: "frames from pattern 'pattern'")) {
            try GraphRunner(sources: [t], options: RunOptions(clock: ManualClock())).validate()
        }
    }

    @Test func aCallbackAndAnAsyncStreamGetEveryResultInOrder() async throws {
        let s = source(), producer = KnownResults(name: "faces")
        s --> producer
        let seen = Protected<[Int]>([])
        producer.onResults { item in seen.withLock { $0.append(item.index) } }
        let stream = producer.resultsStream()
        let report = try GraphRunner(sources: [s], options: RunOptions(mode: .offline)).run()
        #expect(report.failure == nil)
        #expect(seen.withLock { $0 } == Array(0..<12))
        var streamed: [TimedResults] = []
        for await item in stream { streamed.append(item) }  // ends with the run
        #expect(streamed.map(\.index) == Array(0..<12))
        #expect(streamed[3].results == KnownResults.results(for: 3, producer: "faces"))
    }

    @Test func liveResultsSinksTakeEveryItemNotOnePerTick() throws {
        let path = TestEnvironment.scratch("results-live").appendingPathComponent("live.jsonl").path
        let s = PatternSource(width: 256, height: 64, format: .rgb24, frameRate: 30, frameCount: 30)
        let producer = KnownResults(name: "faces"), sink = ResultsSink(name: "log", path: path)
        s --> producer --> sink
        let report = try GraphRunner(sources: [s], options: RunOptions(mode: .live, clock: ManualClock())).run()
        #expect(report.failure == nil)
        #expect(try ResultsLines.read(path: path).map(\.index) == Array(0..<30))
    }

    /// Mutated results lines: every line is refused with an error or read; a line that is read
    /// writes and reads back equal, and draws without trouble (tools/fuzz/run.sh results runs the
    /// same under libFuzzer for longer).
    @Test func mutatedResultsLinesAreRefusedOrRoundTrip() throws {
        let seed = Array(try ResultsLines.encode(TimedResults(index: 7, time: 0.25, width: 64, height: 48,
                                                              results: KnownResults.results(for: 4, producer: "faces"))))
        let alphabet = Array("0123456789-.e,[]{}\":nultrfa ".utf8)
        var rng = SplitMix64(seed: 19)
        let node = Annotate(name: "fuzz", style: .init(textSize: 12), resultPorts: 0)
        _ = try node.negotiate(inputs: [FrameDescription(format: .yuv420p, width: 64, height: 48)])
        let canvas = Frame.make(.yuv420p, width: 64, height: 48)
        var accepted = 0
        for _ in 0..<3000 {
            var bytes = seed
            for _ in 0..<Int(rng.next() % 4 + 1) {
                let at = Int(rng.next() % UInt64(bytes.count))
                switch rng.next() % 3 {
                case 0: bytes[at] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: at)
                default: bytes.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: at)
                }
            }
            guard let record = try? ResultsLines.decode(Data(bytes)) else { continue }
            accepted += 1
            let again = try ResultsLines.decode(try ResultsLines.encode(record))
            #expect(again == record.finite())
            node.draw([record.results], on: canvas, hudLine: "x")
        }
        #expect(accepted > 100, "mutations read: \(accepted)")
    }

    @Test func aCropReprojectsTheResultsItCarries() {
        var frame = Frame.make(.rgb24, width: 200, height: 100)
        frame.results = Results(producer: "p", detections: [Detection(box: ResultBox(x: 0.5, y: 0.5, width: 0.25, height: 0.5), score: 1)])
        let crop = frame.cropped(x: 100, y: 0, width: 100, height: 50)
        let box = crop.results?.detections.first?.box
        #expect(box == ResultBox(x: 0, y: 1, width: 0.5, height: 1))
    }
}
