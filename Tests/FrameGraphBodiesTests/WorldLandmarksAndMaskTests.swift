import Foundation
import FrameGraph
@testable import FrameGraphBodies
import FrameGraphMedia
import FrameGraphNetwork
import FrameGraphPipelines
import Testing
import TestSupport

/// World landmarks (`world-landmarks=on`) and the pose's person mask (`pose-segment`): the geometry
/// on synthetic inputs, then the real models on the set-up's sample (the astronaut portrait: one
/// person, head and shoulders, centred) and on ../shared's webcam clip for hands.
@Suite struct WorldLandmarksAndMaskTests {
    @Test func worldLandmarksTurnWithTheRegionAndKeepDepthAndVisibility() {
        let region = RotatedRegion(centerX: 100, centerY: 50, side: 80, rotation: .pi / 2)
        let turned = region.projectWorld([Landmark(x: 0.1, y: 0, z: -0.2, visibility: 0.7), Landmark(x: 0, y: 0.1, z: 0.3)])
        #expect(abs(turned[0].x) < 1e-6 && abs(turned[0].y - 0.1) < 1e-6 && turned[0].z == -0.2 && turned[0].visibility == 0.7)
        #expect(abs(turned[1].x + 0.1) < 1e-6 && abs(turned[1].y) < 1e-6 && turned[1].z == 0.3)
        let upright = RotatedRegion(centerX: 0, centerY: 0, side: 1, rotation: 0).projectWorld(turned)
        #expect(upright == turned)
    }

    @Test func worldPointsAreWrittenAndReadBackOnlyWhenPresent() throws {
        let set = LandmarkSet(label: "pose", points: [Landmark(x: 0.5, y: 0.5, z: 0.1, visibility: 0.9)],
                              world: [Landmark(x: -0.05, y: -0.5, z: 0.02, visibility: 0.9)])
        let data = try JSONEncoder().encode(set)
        #expect(String(decoding: data, as: UTF8.self).contains("\"world\":[[-0.05,-0.5,0.02,0.9]]"))
        #expect(try JSONDecoder().decode(LandmarkSet.self, from: data) == set)
        let plain = try JSONEncoder().encode(LandmarkSet(label: "pose", points: set.points))
        #expect(!String(decoding: plain, as: UTF8.self).contains("world"))
    }

    @Test func metricSmoothingDoesNotScaleBySizeAndSteadiesJitter() {
        let filter = LandmarkSmoothing(settings: .poseWorld)
        var outputs: [Float] = []
        for i in 0..<30 {
            let jitter: Float = i % 2 == 0 ? 0.01 : -0.01
            outputs.append(filter.filterMetric([Landmark(x: 0.2 + jitter, y: 0, z: 0, visibility: 1)], time: Double(i) / 30)[0].x)
        }
        #expect(abs(outputs[0] - 0.21) < 1e-6)  // the first value passes
        let late = outputs[20...]
        #expect(late.max()! - late.min()! < 0.01, "the 2 cm jitter is steadied: \(Array(late))")
    }

    @Test func maskUncertaintyIsMediaPipesPolynomial() {
        #expect(abs(PoseSegmentationMask.uncertainty(0.5) - 1) < 1e-6)
        #expect(PoseSegmentationMask.uncertainty(0) < 1e-3 && PoseSegmentationMask.uncertainty(1) < 1e-3)
        #expect(PoseSegmentationMask.uncertainty(0.3) > 0 && PoseSegmentationMask.uncertainty(0.3) < 1)
    }

    /// A 64×64 "model mask", person on its left half, put back through regions that cover a 64×64
    /// frame upright, and turned a quarter: the person lands on the left, then at the top.
    @Test func theMaskIsPutBackWhereTheRegionWasSampled() {
        let side = 64
        var logits = [Float](repeating: -20, count: side * side)
        for r in 0..<side { for c in 0..<(side / 2) { logits[r * side + c] = 20 } }
        func mask(rotation: Float) -> Frame {
            let projection = PoseSegmentationMask(combineWithPrevious: 0)
            return logits.withUnsafeBufferPointer {
                projection.mask(logits: $0.baseAddress, side: side, area: RotatedRegion(centerX: 32, centerY: 32, side: 64, rotation: rotation),
                                width: 64, height: 64)
            }
        }
        let upright = mask(rotation: 0)
        #expect(upright.format == .gray8 && upright.width == 64 && upright.height == 64)
        #expect(upright.row(32)[10] == 255 && upright.row(32)[54] == 0 && upright.row(5)[10] == 255)
        // Turned by +90°: the region's x axis points down the frame, so its left half is the top.
        let turned = mask(rotation: .pi / 2)
        #expect(turned.row(10)[32] == 255 && turned.row(54)[32] == 0, "\(turned.row(10)[32]) \(turned.row(54)[32])")
        // Beyond the region: nothing.
        let small = logits.withUnsafeBufferPointer {
            PoseSegmentationMask(combineWithPrevious: 0).mask(logits: $0.baseAddress, side: side,
                                                              area: RotatedRegion(centerX: 16, centerY: 16, side: 16, rotation: 0), width: 64, height: 64)
        }
        #expect(small.row(12)[10] == 255 && small.row(40)[10] == 0 && small.row(12)[40] == 0)
    }

    @Test func anUnsurePixelLeansOnTheLastMaskASureOneDoesNot() {
        let projection = PoseSegmentationMask(combineWithPrevious: 0.7)
        let area = RotatedRegion(centerX: 2, centerY: 1, side: 4, rotation: 0)
        func run(_ value: Float) -> [UInt8] {
            let logits = [Float](repeating: value, count: 16)
            let frame = logits.withUnsafeBufferPointer { projection.mask(logits: $0.baseAddress, side: 4, area: area, width: 4, height: 2) }
            return Array(frame.row(1))
        }
        #expect(run(20) == [255, 255, 255, 255])
        // sigmoid(0) = 0.5: fully unsure, so 0.7 of the previous 1 and 0.3 of 0.5: 0.85.
        #expect(run(0) == [217, 217, 217, 217])
        // Sure again (0): taken as it is.
        #expect(run(-20) == [0, 0, 0, 0])
    }

    // MARK: - The real models

    @Test(.enabled(if: BodiesPipelineTests.ready, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and models/cache (tools/models/fetch_mediapipe_models.sh)"))
    func poseSegmentGivesTheAstronautsMaskWithHerWorldPoints() throws {
        var options = PoseLandmarksNode.Options()
        options.output = .mask
        options.worldLandmarks = true
        let source = FileSource(path: try #require(TestEnvironment.portraitSample), options: .init(duration: 1))
        let pose = HandAndPoseTrackingTests.pose(options)
        let masks = FrameCollector(name: "masks", keepEvery: 10)
        let found = Protected<[TimedResults]>([])
        source --> pose --> masks
        _ = pose.onResults { item in found.withLock { $0.append(item) } }
        let report = try GraphRunner(sources: [source], options: RunOptions(mode: .offline)).run()
        #expect(report.failure == nil, "\(report.failure?.message ?? "")")
        let items = found.withLock { $0 }
        #expect(items.count == 30 && masks.frames.count == 3)
        for item in items {
            let set = try #require(item.results.landmarks.first, "frame \(item.index)")
            let world = try #require(set.world, "frame \(item.index)")
            #expect(world.count == 33 && set.points.count == 33)
            // Metres, origin between the hips, y down: the nose above them, shoulders 20–60 cm apart.
            let hips = ((world[23].x + world[24].x) / 2, (world[23].y + world[24].y) / 2)
            #expect(abs(hips.0) < 0.05 && abs(hips.1) < 0.05, "frame \(item.index): hips \(hips)")
            #expect(world[0].y < -0.3, "frame \(item.index): nose \(world[0])")
            let shoulders = hypot(world[11].x - world[12].x, world[11].y - world[12].y)
            #expect(shoulders > 0.2 && shoulders < 0.6, "frame \(item.index): \(shoulders) m")
        }
        for (k, mask) in masks.frames.enumerated() {
            #expect(mask.format == .gray8 && mask.width == 640 && mask.height == 480)
            let nose = try #require(items[k * 10].results.landmarks.first?.points[0])
            let noseX = Int(nose.x * 640), noseY = Int(nose.y * 480)
            #expect(mask.row(noseY)[noseX] > 200, "frame \(k * 10): the face is the person")
            #expect(mask.row(5)[5] < 20 && mask.row(5)[634] < 20, "frame \(k * 10): the top corners are background")
            var person = 0
            for y in 0..<480 { for x in 0..<640 where mask.row(y)[x] >= 128 { person += 1 } }
            let share = Double(person) / Double(640 * 480)
            #expect(share > 0.25 && share < 0.75, "frame \(k * 10): \(share) of the picture is the person")
        }
    }

    @Test(.enabled(if: BodiesPipelineTests.ready, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and models/cache (tools/models/fetch_mediapipe_models.sh)"))
    func theShippedPoseSegmentPipelineMattesAndWritesItsResults() throws {
        let records = try BodiesPipelineTests.run("pose-segment.fg", seconds: 1, name: "pose-segment")
        #expect(records.count == 30)
        #expect(records.allSatisfy { $0.results.landmarks.first?.points.count == 33 && $0.results.landmarks.first?.world == nil })
    }

    @Test(.enabled(if: BodiesPipelineTests.ready, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and models/cache (tools/models/fetch_mediapipe_models.sh)"))
    func theMaskStreamFeedsAnAnnotatesResultsPortButPlainFramesStillDoNot() throws {
        let text = """
        source = file path=\(try #require(TestEnvironment.portraitSample)) duration=0.2
        pose   = pose-segment
        matte  = background
        marks  = annotate
        out    = null
        source -> matte.frame
        source -> pose -> matte.mask
        pose -> marks.results
        matte -> marks.frame
        marks -> out
        """
        let built = try Pipeline.build(try PipelineParser.parse(text, file: "mask.fg"))
        let report = try GraphRunner(sources: built.sources, options: RunOptions(mode: .offline)).run()
        #expect(report.failure == nil && report.framesOut == 6, "\(report.failure?.message ?? "")")
        let wrong = text.replacingOccurrences(of: "pose -> marks.results", with: "matte -> marks.results")
        let refused = try Pipeline.build(try PipelineParser.parse(wrong, file: "mask.fg"))
        #expect(throws: GraphError.self) { try GraphRunner(sources: refused.sources, options: RunOptions(mode: .offline)).validate() }
    }

    @Test(.enabled(if: HandAndPoseTrackingTests.haveClip, "needs models/cache (tools/models/fetch_mediapipe_models.sh) and ../shared/media/webcam"))
    func handsGetTheirWorldPointsInMetres() throws {
        var options = HandLandmarksNode.Options()
        options.worldLandmarks = true
        let node = HandAndPoseTrackingTests.hands(options)
        let harness = NodeHarness()
        let frames = try HandAndPoseTrackingTests.clipFrames(8)
        _ = try node.negotiate(inputs: [frames[0].description])
        var seen = 0
        for frame in frames {
            for hand in try node.process(frame, context: harness.context)?.results?.landmarks ?? [] {
                let world = try #require(hand.world)
                #expect(world.count == 21)
                // Wrist to the middle finger's knuckle: a hand's 6–12 cm.
                let palm = hypot(hypot(world[0].x - world[9].x, world[0].y - world[9].y), (world[0].z ?? 0) - (world[9].z ?? 0))
                #expect(palm > 0.06 && palm < 0.12, "\(palm) m")
                seen += 1
            }
        }
        #expect(seen > 0)
    }
}
