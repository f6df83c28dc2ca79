import Foundation
import FrameGraph
import FrameGraphBodies
import FrameGraphNetwork
import Testing
import TestSupport

/// The detectors' anchors and decoding on synthetic outputs, the hand and pose regions on synthetic
/// targets at known angles, MediaPipe's association and smoothing, and the results' handedness.
@Suite struct BodyGeometryTests {
    @Test func palmAndPoseAnchorsAreLaidOutAsMediaPipes() {
        let palm = SSDAnchorOptions.palm.anchors()
        #expect(palm.count == 2016)  // 24×24 cells × 2 (stride 8) + 12×12 × 6 (three stride-16 layers)
        #expect(palm.allSatisfy { $0.width == 1 && $0.height == 1 })
        // Stride 8: two anchors per cell, row by row; then the 12×12 grid, six per cell.
        #expect(palm[0] == SSDAnchor(x: 0.5 / 24, y: 0.5 / 24, width: 1, height: 1) && palm[1] == palm[0])
        #expect(palm[2].x == 1.5 / 24 && palm[2].y == 0.5 / 24)
        #expect(palm[2 * 24].x == 0.5 / 24 && palm[2 * 24].y == 1.5 / 24)
        #expect(palm[1152] == SSDAnchor(x: 0.5 / 12, y: 0.5 / 12, width: 1, height: 1) && palm[1157] == palm[1152])
        #expect(palm[1158].x == 1.5 / 12 && palm[2015].x == 11.5 / 12 && palm[2015].y == 11.5 / 12)
        let pose = SSDAnchorOptions.pose.anchors()
        #expect(pose.count == 2254)  // 28² × 2 + 14² × 2 + 7² × 6
        #expect(pose[1568] == SSDAnchor(x: 0.5 / 14, y: 0.5 / 14, width: 1, height: 1))
        #expect(pose[1568 + 392] == SSDAnchor(x: 0.5 / 7, y: 0.5 / 7, width: 1, height: 1))
        #expect(pose[2253].x == 6.5 / 7 && pose[2253].y == 6.5 / 7)
    }

    @Test func aPalmIsDecodedFromSyntheticOutputs() {
        let anchors = SSDAnchorOptions.palm.anchors()
        var boxes = [Float](repeating: 0, count: anchors.count * 18), scores = [Float](repeating: -10, count: anchors.count)
        // Anchor of the 12×12 grid's cell (row 5, column 7): centre (7.5/12, 5.5/12).
        let i = 1152 + (5 * 12 + 7) * 6
        let raw: [Float] = [9.6, -19.2, 38.4, 57.6] + (0..<7).flatMap { k in [Float(k) * 1.92, -Float(k) * 1.92] }
        for (j, v) in raw.enumerated() { boxes[i * 18 + j] = v }
        scores[i] = 3
        scores[i + 1] = 0.1  // sigmoid 0.52: kept by the decoder, merged by the suppression (same box)
        for j in 0..<4 { boxes[(i + 1) * 18 + j] = raw[j] }
        let found = boxes.withUnsafeBufferPointer { b in
            scores.withUnsafeBufferPointer { s in
                SSDBoxDecoding.palm.decode(boxes: b.baseAddress!, scores: s.baseAddress!, anchors: anchors, label: "palm")
            }
        }
        #expect(found.count == 2)
        let kept = NonMaxSuppression(algorithm: .weighted, overlap: 0.3, maxDetections: 2).apply(found)
        #expect(kept.count == 1)
        let d = kept[0]
        #expect(abs(d.score - 1 / (1 + exp(-3))) < 1e-6)
        let cx = 7.5 / 12 + 0.05, cy = 5.5 / 12 - 0.1
        #expect(abs(d.box.x - Float(cx - 0.1)) < 1e-5 && abs(d.box.y - Float(cy - 0.15)) < 1e-5)
        #expect(abs(d.box.width - 0.2) < 1e-5 && abs(d.box.height - 0.3) < 1e-5)
        #expect(found[0].keypoints.count == 7)
        #expect(abs(found[0].keypoints[3].x - Float(7.5 / 12 + 0.03)) < 1e-5 && abs(found[0].keypoints[3].y - Float(5.5 / 12 - 0.03)) < 1e-5)
        // Nothing above the threshold: nothing found.
        let none = boxes.withUnsafeBufferPointer { b in
            [Float](repeating: -5, count: anchors.count).withUnsafeBufferPointer { s in
                SSDBoxDecoding.palm.decode(boxes: b.baseAddress!, scores: s.baseAddress!, anchors: anchors, label: "palm")
            }
        }
        #expect(none.isEmpty)
    }

    @Test func aPalmsRegionIsTurnedFromWristToKnuckleShiftedAndEnlarged() throws {
        for degrees: Float in [0, 30, -70, 180] {
            let t = degrees * .pi / 180
            // A 100×100 px palm box centred at (320, 240); wrist below the centre, the middle finger's
            // knuckle 60 px from it in the direction the fingers point (tilted t clockwise from up).
            let wrist = (x: Float(320), y: Float(300)), knuckle = (x: 320 + 60 * sin(t), y: 300 - 60 * cos(t))
            let d = Detection(box: ResultBox(x: 270 / 640, y: 190 / 480, width: 100 / 640, height: 100 / 480), score: 0.9,
                              keypoints: [ResultPoint(x: wrist.x / 640, y: wrist.y / 480), ResultPoint(x: 0.5, y: 0.5),
                                          ResultPoint(x: knuckle.x / 640, y: knuckle.y / 480)])
            let r = try #require(RotatedRegion(palmDetection: d, width: 640, height: 480))
            #expect(abs(RotatedRegion.normalizedAngle(r.rotation - t)) < 1e-4, "\(degrees)°: rotation \(r.rotation)")
            #expect(abs(r.side - 260) < 1e-3)  // 100 × 2.6
            // Shifted half the box towards the fingers.
            #expect(abs(r.centerX - (320 + 50 * sin(t))) < 1e-3 && abs(r.centerY - (240 - 50 * cos(t))) < 1e-3)
            // The region's top middle lies towards the fingertips.
            let top = r.framePoint(u: 0.5, v: 0)
            #expect(abs(top.x - (r.centerX + 130 * sin(t))) < 1e-3 && abs(top.y - (r.centerY - 130 * cos(t))) < 1e-3)
        }
    }

    /// 21 points of an upright hand (pixels, wrist at the bottom), turned by `t` about (cx, cy), normalised to 640×480.
    static func hand(turnedBy t: Float, cx: Float = 320, cy: Float = 240) -> [Landmark] {
        var local: [(Float, Float)] = [(0, 60)]
        let bases: [Float] = [-40, -20, 0, 20, 40]
        for (f, bx) in bases.enumerated() {
            for j in 0..<4 { local.append((bx + (f == 0 ? -Float(j) * 8 : 0), (f == 0 ? 30 : 10) - Float(j) * 22)) }
        }
        return local.map { p in
            let x = cos(t) * p.0 - sin(t) * p.1 + cx, y = sin(t) * p.0 + cos(t) * p.1 + cy
            return Landmark(x: x / 640, y: y / 480, z: 0)
        }
    }

    @Test func aHandsRegionFollowsItsLandmarksTurn() throws {
        let upright = try #require(RotatedRegion(handLandmarks: Self.hand(turnedBy: 0), width: 640, height: 480))
        // Upright: the wrist → knuckles line points straight up; the region spans the 12 points
        // (thumb tip and finger tips left out): x −56…40, y −14…60 about (320, 240): 96 × 74 px,
        // squared on 96 and ×2, moved up a tenth of 74 px.
        #expect(abs(upright.rotation) < 1e-5)
        #expect(abs(upright.side - 192) < 1e-2)
        #expect(abs(upright.centerX - 312) < 1e-2 && abs(upright.centerY - (263 - 7.4)) < 1e-2, "\(upright)")
        for degrees: Float in [25, -60, 120] {
            let t = degrees * .pi / 180
            let r = try #require(RotatedRegion(handLandmarks: Self.hand(turnedBy: t), width: 640, height: 480))
            #expect(abs(RotatedRegion.normalizedAngle(r.rotation - upright.rotation - t)) < 1e-3, "\(degrees)°: \(r.rotation)")
            #expect(abs(r.side - upright.side) < 1e-2, "\(degrees)°: side \(r.side) vs \(upright.side)")
            // The centre turns with the hand about (320, 240).
            let ux = upright.centerX - 320, uy = upright.centerY - 240
            #expect(abs(r.centerX - (320 + cos(t) * ux - sin(t) * uy)) < 1e-2 && abs(r.centerY - (240 + sin(t) * ux + cos(t) * uy)) < 1e-2)
        }
        #expect(RotatedRegion(handLandmarks: Array(Self.hand(turnedBy: 0).prefix(20)), width: 640, height: 480) == nil)
    }

    @Test func aPoseRegionIsCentredOnTheHipsAndSizedByTheSecondPoint() throws {
        for degrees: Float in [0, 15, -40] {
            let t = degrees * .pi / 180
            let hips = ResultPoint(x: 320 / 640, y: 300 / 480), top = ResultPoint(x: (320 + 100 * sin(t)) / 640, y: (300 - 100 * cos(t)) / 480)
            let d = Detection(box: ResultBox(x: 0.3, y: 0.1, width: 0.4, height: 0.8), score: 0.9, keypoints: [hips, top])
            let r = try #require(RotatedRegion(poseDetection: d, width: 640, height: 480))
            #expect(abs(r.centerX - 320) < 1e-3 && abs(r.centerY - 300) < 1e-3)
            #expect(abs(r.side - 250) < 1e-2)  // 2 × 100 × 1.25
            #expect(abs(RotatedRegion.normalizedAngle(r.rotation - t)) < 1e-4)
            let same = try #require(RotatedRegion(poseAlignment: [Landmark(x: hips.x, y: hips.y), Landmark(x: top.x, y: top.y)], width: 640, height: 480))
            #expect(same == r)
        }
        #expect(RotatedRegion(poseDetection: Detection(box: ResultBox(x: 0, y: 0, width: 1, height: 1), score: 1,
                                                       keypoints: [ResultPoint(x: 0.5, y: 0.5)]), width: 640, height: 480) == nil)
    }

    @Test func anglesAreNormalisedAsMediaPipes() {
        #expect(abs(RotatedRegion.normalizedAngle(3 * .pi / 2) + .pi / 2) < 1e-5)
        #expect(abs(RotatedRegion.normalizedAngle(-3 * .pi / 2) - .pi / 2) < 1e-5)
        #expect(RotatedRegion.normalizedAngle(0.25) == 0.25)
    }

    @Test func smoothingPassesTheFirstFrameAndSteadiesJitterAtRest() {
        let smoothing = LandmarkSmoothing(settings: .pose)
        let base = [Landmark(x: 0.5, y: 0.5, z: 0, visibility: 1), Landmark(x: 0.6, y: 0.7, z: 0, visibility: 0)]
        #expect(smoothing.filter(base, time: 0, width: 640, height: 480, objectSize: 200) == base)
        // 1 px of jitter at 30 fps on a 200 px object: the output moves far less than the input.
        var moved: Float = 0
        for n in 1...30 {
            let jitter: Float = n % 2 == 0 ? 1 : -1
            let input = base.map { Landmark(x: $0.x + jitter / 640, y: $0.y, z: 0, visibility: $0.visibility) }
            let out = smoothing.filter(input, time: Double(n) / 30, width: 640, height: 480, objectSize: 200)
            moved = max(moved, abs(out[0].x - 0.5) * 640)
            if n == 30 { #expect(out[1].visibility ?? 1 < 0.1 && out[0].visibility == 1) }
        }
        #expect(moved < 0.5, "moved \(moved) px")
        // After a reset the next frame passes unchanged.
        smoothing.reset()
        let far = base.map { Landmark(x: $0.x + 0.2, y: $0.y, z: 0, visibility: $0.visibility) }
        #expect(smoothing.filter(far, time: 2, width: 640, height: 480, objectSize: 200) == far)
    }

    @Test func aHandsHandednessIsWrittenAndReadBack() throws {
        var results = Results(producer: "hands")
        results.landmarks.append(LandmarkSet(label: "hand", points: [Landmark(x: 0.5, y: 0.5, z: -0.01)], topology: HandTopology.hand,
                                             classification: Classification(label: "Left", confidence: 0.97, index: 0)))
        results.landmarks.append(LandmarkSet(label: "face", points: [Landmark(x: 0.1, y: 0.2)]))
        let line = try ResultsLines.encode(TimedResults(index: 3, time: 0.1, width: 640, height: 480, results: results))
        let text = String(decoding: line, as: UTF8.self)
        #expect(text.contains("\"classification\":{\"confidence\":0.97"), "\(text)")
        #expect(text.components(separatedBy: "classification\"").count == 2, "only the hand has one: \(text)")
        let back = try ResultsLines.decode(line, topologies: BodyTopologies.catalog)
        #expect(back.results.landmarks[0].classification?.label == "Left")
        #expect(back.results.landmarks[0].topology?.connections.count == 21)
        #expect(back.results.landmarks[1].classification == nil)
        #expect(PoseTopology.pose.connections.count == 35)
        let all = PoseTopology.pose.connections.flatMap { [$0.from, $0.to] } + HandTopology.hand.connections.flatMap { [$0.from, $0.to] }
        #expect(all.allSatisfy { (0..<33).contains($0) })
    }
}
