import Foundation
import FrameGraph
import FrameGraphFaces
import FrameGraphNetwork
import FrameGraphMedia
import Testing
import TestSupport

/// The detector's parts against values worked out by hand: anchors, box decoding, both
/// suppressions, letterbox un-projection; then the real model on the setup's portrait clip.
@Suite struct FaceDetectionTests {
    @Test func blazeFaceAnchorsMatchMediaPipesLayout() {
        let short = SSDAnchorOptions.blazeFaceShortRange.anchors()
        #expect(short.count == 896)  // 16×16 cells × 2 (stride 8) + 8×8 × 6 (three stride-16 layers × 2)
        #expect(short[0] == SSDAnchor(x: 0.5 / 16, y: 0.5 / 16, width: 1, height: 1))
        #expect(short[1] == short[0])                      // the interpolated-scale anchor of the same cell
        #expect(short[2] == SSDAnchor(x: 1.5 / 16, y: 0.5 / 16, width: 1, height: 1))
        #expect(short[511] == SSDAnchor(x: 15.5 / 16, y: 15.5 / 16, width: 1, height: 1))
        #expect(short[512] == SSDAnchor(x: 0.5 / 8, y: 0.5 / 8, width: 1, height: 1))
        #expect(short[895] == SSDAnchor(x: 7.5 / 8, y: 7.5 / 8, width: 1, height: 1))
        let full = SSDAnchorOptions.blazeFaceFullRange.anchors()
        #expect(full.count == 2304)  // 48×48, one anchor per cell
        #expect(full[2303] == SSDAnchor(x: 47.5 / 48, y: 47.5 / 48, width: 1, height: 1))
        var sized = SSDAnchorOptions(inputWidth: 64, inputHeight: 64, minScale: 0.2, maxScale: 0.8, strides: [32, 64])
        sized.fixedAnchorSize = false
        sized.aspectRatios = [1, 4]
        sized.interpolatedScaleAspectRatio = 0
        let a = sized.anchors()
        #expect(a.count == 2 * 2 * 2 + 1 * 1 * 2)
        #expect(a[1].width == 0.2 * 2 && a[1].height == 0.2 / 2)           // ratio 4 at scale 0.2
        #expect(a[9].width == 0.8 * 2 && abs(a[9].height - 0.4) < 1e-6)    // ratio 4 at scale 0.8 (last layer)
    }

    @Test func boxesAndKeypointsAreDecodedFromTheirAnchor() {
        var decoding = SSDBoxDecoding(coordinates: 6, keypoints: 1, scale: 128, minScore: 0.5)
        decoding.keypointOffset = 4
        let anchors = [SSDAnchor(x: 0.5, y: 0.5, width: 1, height: 1), SSDAnchor(x: 0.25, y: 0.25, width: 1, height: 1)]
        let boxes: [Float] = [12.8, -6.4, 32, 64, 25.6, 0,   0, 0, 10, 10, 0, 0]
        let scores: [Float] = [0, -500]
        let found = decoding.decode(boxes: boxes, scores: scores, anchors: anchors, label: "face")
        #expect(found.count == 1)  // sigmoid(0) = 0.5 passes; −500 is clipped to −100, far below
        let d = found[0]
        #expect(abs(d.box.x - 0.475) < 1e-6 && abs(d.box.y - 0.2) < 1e-6 && d.box.width == 0.25 && d.box.height == 0.5)
        #expect(d.score == 0.5 && d.label == "face")
        #expect(d.keypoints == [ResultPoint(x: 0.7, y: 0.5)])
    }

    @Test func plainAndWeightedSuppression() {
        let a = Detection(box: ResultBox(x: 0, y: 0, width: 1, height: 1), score: 0.9, keypoints: [ResultPoint(x: 0, y: 0)])
        let b = Detection(box: ResultBox(x: 0.1, y: 0, width: 1, height: 1), score: 0.8, keypoints: [ResultPoint(x: 1, y: 1)])
        let c = Detection(box: ResultBox(x: 2, y: 2, width: 1, height: 1), score: 0.7)
        #expect(abs(NonMaxSuppression.iou(a.box, b.box) - 0.9 / 1.1) < 1e-6)
        #expect(NonMaxSuppression(algorithm: .plain, overlap: 0.3).apply([c, b, a]) == [a, c])
        let weighted = NonMaxSuppression(algorithm: .weighted, overlap: 0.3).apply([b, c, a])
        #expect(weighted.count == 2 && weighted[1] == c)
        let merged = weighted[0]
        #expect(merged.score == 0.9)
        #expect(abs(merged.box.x - 0.08 / 1.7) < 1e-6 && abs(merged.box.width - 1) < 1e-6)
        #expect(abs(merged.keypoints[0].x - 0.8 / 1.7) < 1e-6)
        #expect(NonMaxSuppression(algorithm: .plain, overlap: 0.3, maxDetections: 1).apply([a, b, c]) == [a])
        #expect(NonMaxSuppression(algorithm: .plain, overlap: 0.95).apply([a, b, c]).count == 3)  // 0.82 overlap is below 0.95
    }

    @Test func letterboxedResultsComeBackInTheFramesCoordinates() {
        // 640×480 into 128×128: scaled to 128×96, 16 rows of black above and below.
        let box = ModelInput.Letterbox(x: 0, y: 16 / 128, width: 1, height: 96 / 128)
        let inInput = Results(producer: "p", detections: [Detection(box: ResultBox(x: 0.25, y: 0.125, width: 0.5, height: 0.375), score: 1,
                                                                    keypoints: [ResultPoint(x: 0.5, y: 0.5)])])
        let inFrame = box.unproject(inInput).detections[0]
        #expect(inFrame.box == ResultBox(x: 0.25, y: 0, width: 0.5, height: 0.5))
        #expect(inFrame.keypoints == [ResultPoint(x: 0.5, y: 0.5)])
    }

    @Test(.enabled(if: TestEnvironment.portraitSample != nil, "the setup makes samples/media/portrait.mp4"))
    func theRealDetectorFindsThePortraitsFaceWithItsFeaturesInPlace() throws {
        let source = FileSource(name: "clip", path: TestEnvironment.portraitSample ?? "", options: .init(duration: 10.0 / 30))
        let faces = FaceDetection.node(name: "faces", model: TestEnvironment.root.appendingPathComponent("models/cache/face_detection_short_range.tflite").path)
        let found = Protected<[TimedResults]>([])
        source --> faces
        faces.onResults { item in found.withLock { $0.append(item) } }
        let report = try GraphRunner(sources: [source], options: RunOptions(mode: .offline)).run()
        #expect(report.failure == nil)
        let items = found.withLock { $0 }
        #expect(items.count == 10)
        for item in items {
            #expect(item.results.producer == "faces")
            try #require(item.results.detections.count == 1, "frame \(item.index): \(item.results.detections.count) faces")
            let face = item.results.detections[0]
            #expect(face.score > 0.8 && face.label == "face" && face.keypoints.count == 6)
            // In the frame's coordinates (not the letterboxed input's): a face-sized box in the upper half.
            #expect(face.box.width > 0.1 && face.box.width < 0.5 && face.box.y > 0 && face.box.y + face.box.height < 0.6)
            let (rightEye, leftEye, nose, mouth) = (face.keypoints[0], face.keypoints[1], face.keypoints[2], face.keypoints[3])
            #expect(rightEye.x < leftEye.x && rightEye.y < nose.y && nose.y < mouth.y)
            for k in face.keypoints.prefix(4) {
                #expect(k.x > face.box.x && k.x < face.box.x + face.box.width && k.y > face.box.y && k.y < face.box.y + face.box.height)
            }
        }
    }

    @Test(.enabled(if: TestEnvironment.portraitSample != nil, "the setup makes samples/media/portrait.mp4"))
    func theFullRangeModelFindsTheSameFace() throws {
        // The full-range model is sparse (DENSIFY of float16 weights, folded at import) and uses
        // DEPTH_TO_SPACE: both must work for it to find the portrait's face where the short-range one does.
        func faces(_ range: FaceDetection.Range) throws -> [Detection] {
            let source = FileSource(name: "clip", path: TestEnvironment.portraitSample ?? "", options: .init(duration: 3.0 / 30))
            let node = FaceDetection.node(name: "faces", range: range,
                                          model: TestEnvironment.root.appendingPathComponent("models/cache/\(range.defaultModel).tflite").path)
            let found = Protected<[Detection]>([])
            source --> node
            node.onResults { item in found.withLock { $0 += item.results.detections } }
            let report = try GraphRunner(sources: [source], options: RunOptions(mode: .offline)).run()
            #expect(report.failure == nil)
            return found.withLock { $0 }
        }
        let short = try faces(.short), full = try faces(.full)
        #expect(short.count == 3 && full.count == 3)
        for (a, b) in zip(short, full) {
            #expect(b.score > 0.6 && NonMaxSuppression.iou(a.box, b.box) > 0.7, "short \(a.box) full \(b.box)")
        }
    }
}
