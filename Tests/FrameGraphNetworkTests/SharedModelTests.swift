import Foundation
import FrameGraph
import FrameGraphMedia
import FrameGraphNetwork
import Testing
import TestSupport

/// Several streams through one network worker and one loaded model (``WorkerGroup``): the masks are
/// those of a network of each stream's own, bit for bit.
@Suite(.serialized) struct SharedModelTests {
    static let model = TestEnvironment.mediaPipeModel("selfie_segmentation.tflite")
    static let ready = model != nil && TestClips.canMake
    static let needs: Comment = "needs models/cache/selfie_segmentation.tflite (tools/models/fetch_mediapipe_models.sh), samples/media/portrait.mp4 and ffmpeg"

    /// Offline runs of `streams` copies of the clip: each stream's masks (every 7th), and the networks.
    func masks(streams: Int, batch: Int?, keepsBatches: Bool? = false) throws -> (masks: [[[UInt8]]], nets: [NetworkNode], report: RunReport) {
        let clip = try TestClips.person()
        var sources: [SourceNode] = []
        var nets: [NetworkNode] = []
        var collectors: [FrameCollector] = []
        for i in 0..<streams {
            let source = FileSource(name: "source\(i)", path: clip)
            // Smoothing keeps state per stream: a decoder shared across streams would mix them.
            let net = NetworkNode(name: "net\(i)", model: Self.model ?? "", decoder: SegmentationDecoder(smoothing: 0.2))
            net.keepsBatches = keepsBatches
            let collector = FrameCollector(name: "masks\(i)", keepEvery: 7)
            source --> net --> collector
            sources.append(source)
            nets.append(net)
            collectors.append(collector)
        }
        if let batch {
            let group = WorkerGroup(name: "net", batchLimit: batch)
            for net in nets { net.join(group, leader: nets[0]) }
        }
        let report = try GraphRunner(sources: sources, options: RunOptions(mode: .offline)).run()
        return (collectors.map { $0.frames.map { $0.packedBytes() } }, nets, report)
    }

    @Test(.enabled(if: ready, needs))
    func sharedBatchedWorkerGivesEachStreamItsOwnMasksBitForBit() throws {
        let single = try masks(streams: 1, batch: nil)
        let shared = try masks(streams: 3, batch: 3)
        #expect(shared.report.failure == nil, "\(String(describing: shared.report.failure))")
        #expect(single.masks[0].count == 11)  // 77 frames, every 7th
        for stream in shared.masks {
            #expect(stream.count == single.masks[0].count)
            #expect(stream == single.masks[0], "a stream's masks differ from a network of its own")
        }
        #expect(shared.report.streams?.map(\.admitted) == [77, 77, 77])
        // One model for all: only the leader imports and compiles it.
        #expect(shared.nets[0].loadSeconds > 0)
        #expect(shared.nets.dropFirst().allSatisfy { $0.loadSeconds == 0 })
    }

    @Test(.enabled(if: ready, needs))
    func oneBatchedPredictionGivesEachStreamItsOwnMasks() throws {
        // The model compiled for 2 and 3 images, kept whatever the timing says: offline, every turn
        // takes the three streams' frames (each waits for the others), one prediction of three images.
        let single = try masks(streams: 1, batch: nil)
        let batched = try masks(streams: 3, batch: 3, keepsBatches: true)
        #expect(batched.report.failure == nil, "\(String(describing: batched.report.failure))")
        #expect(batched.nets[0].batchTimings.map { $0.images } == [2, 3])
        for stream in batched.masks {
            #expect(stream.count == single.masks[0].count)
            let worst = zip(stream.joined(), single.masks[0].joined()).map { abs(Int($0) - Int($1)) }.max() ?? 255
            #expect(worst <= 1, "a stream's mask bytes differ from a network of its own by up to \(worst)")
            #expect(stream == single.masks[0], "not bit for bit (within 1: \(worst <= 1))")
        }
    }
}
