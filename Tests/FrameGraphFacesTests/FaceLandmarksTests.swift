import Foundation
import FFmpegSupport
import FrameGraph
import FrameGraphFaces
import FrameGraphNetwork
import FrameGraphMedia
import Testing
import TestSupport

/// Face regions, rotated sampling and projection against a synthetic target at a known angle; the
/// two-stage tracker on the setup's portrait clip; bad models and odd frames.
@Suite struct FaceLandmarksTests {
    static let models = TestEnvironment.root.appendingPathComponent("models/cache")

    @Test func aDetectionsRegionIsTurnedByItsEyesAndEnlarged() throws {
        // Eyes 100 px apart on a line rising 30° to the right (y down: the left eye is higher).
        let angle = Float.pi / 6
        let right = (x: Float(300), y: Float(240)), left = (x: 300 + 100 * cos(angle), y: 240 - 100 * sin(angle))
        let d = Detection(box: ResultBox(x: 250 / 640, y: 150 / 480, width: 160 / 640, height: 120 / 480), score: 1,
                          keypoints: [ResultPoint(x: right.x / 640, y: right.y / 480), ResultPoint(x: left.x / 640, y: left.y / 480)])
        let region = try #require(RotatedRegion(faceDetection: d, width: 640, height: 480))
        #expect(abs(region.rotation + angle) < 1e-4)  // the region's x axis runs from the right eye to the left
        #expect(abs(region.side - 240) < 1e-3)         // the longer side (160 px) × 1.5
        #expect(abs(region.centerX - 330) < 1e-3 && abs(region.centerY - 210) < 1e-3)
        // The region's (u, v) = (1, 0.5) lies side/2 along that axis from the centre.
        let p = region.framePoint(u: 1, v: 0.5)
        #expect(abs(p.x - (330 + 120 * cos(angle))) < 1e-3 && abs(p.y - (210 - 120 * sin(angle))) < 1e-3)
        // Projection is the same map: a landmark at the region's centre right edge, and one at its centre.
        let projected = region.project([Landmark(x: 1, y: 0.5, z: 0.5), Landmark(x: 0.5, y: 0.5)], width: 640, height: 480)
        #expect(abs(projected[0].x * 640 - p.x) < 1e-3 && abs(projected[0].y * 480 - p.y) < 1e-3)
        #expect(abs((projected[0].z ?? 0) - 0.5 * 240 / 640) < 1e-6)
        #expect(abs(projected[1].x * 640 - 330) < 1e-3 && abs(projected[1].y * 480 - 210) < 1e-3)
    }

    @Test func aRotatedRegionIsSampledUpright() throws {
        // A grey frame with a white bar along a line at −30° through (320, 240), 10 px thick, 120 px
        // long: sampled by a region turned by the same angle, it must come out horizontal.
        let frame = Frame.make(.rgb24, width: 640, height: 480)
        let angle = -Float.pi / 6
        for y in 0..<480 {
            let row = frame.row(y)
            for x in 0..<640 {
                let dx = Float(x) + 0.5 - 320, dy = Float(y) + 0.5 - 240
                let along = dx * cos(angle) + dy * sin(angle), across = -dx * sin(angle) + dy * cos(angle)
                let v: UInt8 = abs(across) < 5 && abs(along) < 60 ? 255 : 60
                row[3 * x] = v; row[3 * x + 1] = v; row[3 * x + 2] = v
            }
        }
        let region = RotatedRegion(centerX: 320, centerY: 240, side: 192, rotation: angle)
        let sampler = RegionSampler(size: 192, scale: 1 / 255, offset: 0)
        var values = [Float](repeating: 0, count: 192 * 192 * 3)
        #expect(values.withUnsafeMutableBufferPointer { sampler.sample(region, of: frame, into: $0.baseAddress!) })
        func at(_ x: Int, _ y: Int) -> Float { values[(y * 192 + x) * 3] }
        // Along the middle row: white from x ≈ 36 to 156 (120 px), grey beyond; rows 10 px off: grey.
        for x in stride(from: 46, through: 146, by: 10) { #expect(at(x, 96) > 0.95, "x \(x): \(at(x, 96))") }
        for x in [20, 170] { #expect(at(x, 96) < 0.3) }
        for x in stride(from: 46, through: 146, by: 20) { #expect(at(x, 86) < 0.3 && at(x, 106) < 0.3) }
    }

    @Test func theVectorSamplerMatchesTheScalarOneBitForBit() {
        // Random frames (odd sizes, a padded stride) and regions turned, scaled and moved partly or
        // wholly off the frame, with both border rules: the AVX2 build must equal the scalar build.
        var rng = SplitMix64(seed: 7)
        var compared = 0
        for trial in 0..<40 {
            let width = 1 + Int(rng.next() % 700), height = 1 + Int(rng.next() % 500)
            let frame = Frame.make(.rgb24, width: width, height: height)
            for y in 0..<height {
                let row = frame.row(y)
                for x in 0..<(3 * width) { row[x] = UInt8(truncatingIfNeeded: rng.next()) }
            }
            let region = RotatedRegion(centerX: Float(rng.next() % 1000) - 150, centerY: Float(rng.next() % 800) - 150,
                                    side: 2 + Float(rng.next() % 600), rotation: Float(rng.next() % 6283) / 1000 - 3.1415)
            let size = [1, 7, 8, 63, 128, 192][trial % 6]
            for black in [false, true] {
                let sampler = RegionSampler(size: size, scale: 1 / 127.5, offset: -1, blackOutside: black)
                var vector = [Float](repeating: .nan, count: size * size * 3), scalar = vector
                _ = vector.withUnsafeMutableBufferPointer { sampler.sample(region, of: frame, into: $0.baseAddress!) }
                _ = scalar.withUnsafeMutableBufferPointer { sampler.sample(region, of: frame, into: $0.baseAddress!, vectorized: false) }
                let differing = zip(vector, scalar).filter { $0.0.bitPattern != $0.1.bitPattern }.count
                #expect(differing == 0, "trial \(trial) \(width)×\(height) size \(size) black \(black): \(differing) values differ")
                compared += vector.count
            }
        }
        #expect(compared > 1_000_000)
    }

    func landmarksNode(_ options: FaceLandmarksNode.Options = .init()) -> FaceLandmarksNode {
        let node = FaceLandmarksNode(name: "mesh", detectorModel: Self.models.appendingPathComponent("face_detection_short_range.tflite").path,
                                     landmarkModel: Self.models.appendingPathComponent("face_landmark.tflite").path, options: options)
        return node
    }

    @Test(.enabled(if: TestEnvironment.portraitSample != nil, "the setup makes samples/media/portrait.mp4"))
    func theMeshIsTrackedWithOneDetectionAndItsPointsSitOnTheFace() throws {
        let source = FileSource(name: "clip", path: TestEnvironment.portraitSample ?? "", options: .init(duration: 2))
        let mesh = landmarksNode()
        let found = Protected<[TimedResults]>([])
        source --> mesh
        mesh.onResults { item in found.withLock { $0.append(item) } }
        let report = try GraphRunner(sources: [source], options: RunOptions(mode: .offline)).run()
        #expect(report.failure == nil)
        let items = found.withLock { $0 }
        #expect(items.count == 60)
        // MediaPipe's schedule: the detector runs once, then the landmarks follow the face.
        #expect(mesh.detectorRuns == 1 && mesh.landmarkRuns == 60)
        for item in items {
            try #require(item.results.landmarks.count == 1, "frame \(item.index)")
            let points = item.results.landmarks[0].points
            #expect(points.count == 468)
            #expect(item.results.landmarks[0].topology?.name == "face-mesh-contours")
            let face = item.results.detections[0]
            #expect(face.score > 0.9)
            // The outer eye corners (33: the person's right, on the image's left) level-ish and apart.
            let r = points[33], l = points[263]
            #expect(r.x < l.x && abs(r.y - l.y) < 0.05 && (l.x - r.x) > 0.05)
            // Nose tip (1) between the eyes and above the chin (152).
            #expect(points[1].x > r.x && points[1].x < l.x && points[1].y < points[152].y)
        }
    }

    @Test func noFaceGivesEmptyResultsAndOddFramesWork() throws {
        for (w, h) in [(256, 64), (1, 1), (3, 5)] {
            let source = PatternSource(width: max(w, 256), height: max(h, 16), format: .yuv420p, frameCount: 3)
            let crop = CropToSize(name: "crop", width: w, height: h)
            let mesh = landmarksNode()
            let found = Protected<[TimedResults]>([])
            source --> crop --> mesh
            mesh.onResults { item in found.withLock { $0.append(item) } }
            let report = try GraphRunner(sources: [source], options: RunOptions(mode: .offline)).run()
            #expect(report.failure == nil, "\(w)x\(h): \(report.failure?.message ?? "")")
            #expect(found.withLock { $0 }.count == 3 && found.withLock { $0 }.allSatisfy { $0.results.landmarks.isEmpty })
            #expect(mesh.detectorRuns == 3)  // nothing tracked: the detector looks on every frame
        }
    }

    @Test func aDetectorWithTheWrongOutputsIsRefusedNamingTheOutputs() throws {
        let faces = FaceDetection.node(name: "faces", model: Self.models.appendingPathComponent("selfie_segmentation.tflite").path)
        do {
            _ = try faces.negotiate(inputs: [FrameDescription(format: .yuv420p, width: 640, height: 480)])
            Issue.record("a segmentation model was accepted as a face detector")
        } catch {
            let text = "\(error)"
            #expect(text.contains("node 'faces', port 'model outputs': shape mismatch: expected boxes [1, 896, 16]"), "\(text)")
            #expect(text.contains("got '"), "\(text)")
        }
        let mesh = FaceLandmarksNode(name: "mesh", detectorModel: Self.models.appendingPathComponent("face_detection_short_range.tflite").path,
                                     landmarkModel: Self.models.appendingPathComponent("face_detection_short_range.tflite").path)
        #expect(throws: GraphError.self) { _ = try mesh.negotiate(inputs: [FrameDescription(format: .rgb24, width: 64, height: 64)]) }
    }
}

/// Keeps the top-left `width`×`height` of each frame (zero copy), for odd frame sizes.
final class CropToSize: FilterNode, @unchecked Sendable {
    let width: Int, height: Int
    init(name: String, width: Int, height: Int) {
        self.width = width
        self.height = height
        super.init(name: name)
    }
    override func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        inputs.first.map { FrameDescription(format: $0.format, width: width, height: height) }
    }
    override func process(_ frame: Frame, context: RunContext) throws -> Frame? {
        frame.cropped(x: 0, y: 0, width: width, height: height)
    }
}

/// The real models on a turned face: the portrait's first frame turned by a known angle about its
/// centre; the detection's region must turn by that angle and the mesh found in the turned frame,
/// turned back, must land on the mesh of the upright frame.
@Suite struct TurnedFaceTests {
    /// `frame` (rgb24) turned by `angle` radians about its centre (y down: positive turns clockwise
    /// on screen), bilinear, black where nothing comes from.
    static func turned(_ frame: Frame, by angle: Float) -> Frame {
        let out = Frame.make(.rgb24, width: frame.width, height: frame.height)
        let cx = Float(frame.width) / 2, cy = Float(frame.height) / 2, c = cos(angle), s = sin(angle)
        for y in 0..<frame.height {
            let row = out.row(y)
            for x in 0..<frame.width {
                // The source point that lands at (x, y): the inverse turn.
                let dx = Float(x) + 0.5 - cx, dy = Float(y) + 0.5 - cy
                let sx = c * dx + s * dy + cx - 0.5, sy = -s * dx + c * dy + cy - 0.5
                guard sx >= 0, sy >= 0, sx < Float(frame.width - 1), sy < Float(frame.height - 1) else {
                    row[3 * x] = 0; row[3 * x + 1] = 0; row[3 * x + 2] = 0
                    continue
                }
                let ix = Int(sx), iy = Int(sy), tx = sx - Float(ix), ty = sy - Float(iy)
                let r0 = frame.row(iy), r1 = frame.row(iy + 1)
                for k in 0..<3 {
                    let top = Float(r0[3 * ix + k]) * (1 - tx) + Float(r0[3 * ix + 3 + k]) * tx
                    let bottom = Float(r1[3 * ix + k]) * (1 - tx) + Float(r1[3 * ix + 3 + k]) * tx
                    row[3 * x + k] = UInt8(max(0, min(255, (top * (1 - ty) + bottom * ty).rounded())))
                }
            }
        }
        return out
    }

    func firstFrame() throws -> Frame {
        let reader = try MediaReader(path: try #require(TestEnvironment.portraitSample))
        let frame = try #require(try reader.nextFrame())
        var rgb = Frame.make(.rgb24, width: frame.width, height: frame.height)
        rgb.color = frame.color
        try Scaler(method: .bilinear).scale(frame, into: rgb)
        return rgb
    }

    func mesh(of frame: Frame) throws -> [Landmark] {
        let node = FaceLandmarksNode(name: "mesh", detectorModel: FaceLandmarksTests.models.appendingPathComponent("face_detection_short_range.tflite").path,
                                     landmarkModel: FaceLandmarksTests.models.appendingPathComponent("face_landmark.tflite").path)
        _ = try node.negotiate(inputs: [frame.description])
        let out = try node.process(frame, context: RunContext(options: RunOptions()))
        return try #require(out?.results?.landmarks.first?.points)
    }

    @Test(.enabled(if: TestEnvironment.portraitSample != nil, "the setup makes samples/media/portrait.mp4"))
    func aTurnedFaceIsFoundTurnedAndItsMeshTurnsBack() throws {
        let upright = try firstFrame()
        let reference = try mesh(of: upright)
        let w = Float(upright.width), h = Float(upright.height)
        let iod = hypot((reference[33].x - reference[263].x) * w, (reference[33].y - reference[263].y) * h)
        for degrees: Float in [-25, 20] {
            let angle = degrees * .pi / 180
            let frame = Self.turned(upright, by: angle)
            let points = try mesh(of: frame)
            // The eye line (33 → 263) turned by the angle.
            let before = atan2((reference[263].y - reference[33].y) * h, (reference[263].x - reference[33].x) * w)
            let after = atan2((points[263].y - points[33].y) * h, (points[263].x - points[33].x) * w)
            #expect(abs((after - before) - angle) < 3 * .pi / 180, "turned \(degrees)°: the eye line turned \((after - before) * 180 / .pi)°")
            // Each point turned back about the centre lands near the upright mesh's point.
            let c = cos(-angle), s = sin(-angle)
            var total: Float = 0
            for (p, q) in zip(points, reference) {
                let dx = p.x * w - w / 2, dy = p.y * h - h / 2
                let bx = c * dx - s * dy + w / 2, by = s * dx + c * dy + h / 2
                total += hypot(bx - q.x * w, by - q.y * h)
            }
            let mean = total / Float(points.count)
            #expect(mean / iod < 0.05, "turned \(degrees)°: mean distance \(mean) px, inter-ocular \(iod) px")
        }
    }
}

/// Several faces in one frame and a face that leaves the frame: the portrait's face four times in a
/// 2×2 grid; then the portrait slid sideways a little more each frame until the face is gone,
/// through the tracker, frame after frame.
@Suite struct ManyAndLeavingFacesTests {
    let turned = TurnedFaceTests()

    /// `frame` (rgb24) scaled to `width`×`height` and placed at `x` in a black frame of `total`
    /// width (columns outside it are cut).
    static func placed(_ frame: Frame, width: Int, height: Int, at xs: [Int], total: Int) throws -> Frame {
        let small = Frame.make(.rgb24, width: width, height: height)
        try Scaler(method: .bilinear).scale(frame, into: small)
        let out = Frame.make(.rgb24, width: total, height: height)
        for y in 0..<height {
            let row = out.row(y), source = small.row(y)
            for i in 0..<(3 * total) { row[i] = 0 }
            for x0 in xs {
                for x in 0..<width where x0 + x >= 0 && x0 + x < total {
                    for k in 0..<3 { row[3 * (x0 + x) + k] = source[3 * x + k] }
                }
            }
        }
        return out
    }

    /// A square of `side` pixels of `frame` (rgb24) at (`x`, `y`), four times in a 2×2 grid.
    static func grid(_ frame: Frame, x: Int, y: Int, side: Int) -> Frame {
        let out = Frame.make(.rgb24, width: 2 * side, height: 2 * side)
        for oy in 0..<(2 * side) {
            let row = out.row(oy), sy = min(max(y + oy % side, 0), frame.height - 1), source = frame.row(sy)
            for ox in 0..<(2 * side) {
                let sx = min(max(x + ox % side, 0), frame.width - 1)
                for k in 0..<3 { row[3 * ox + k] = source[3 * sx + k] }
            }
        }
        return out
    }

    @Test(.enabled(if: TestEnvironment.portraitSample != nil, "the setup makes samples/media/portrait.mp4"))
    func fourFacesInOneFrameGetFourMeshesAndFourBoxes() throws {
        let upright = try turned.firstFrame()
        // A square twice the face's size around it (from the mesh of the whole frame), four times.
        let points = try turned.mesh(of: upright)
        let xs = points.map { $0.x * Float(upright.width) }, ys = points.map { $0.y * Float(upright.height) }
        let (x0, x1, y0, y1) = (xs.min() ?? 0, xs.max() ?? 0, ys.min() ?? 0, ys.max() ?? 0)
        let side = min(Int(2 * max(x1 - x0, y1 - y0)), upright.height)
        let frame = Self.grid(upright, x: Int((x0 + x1) / 2) - side / 2, y: Int((y0 + y1) / 2) - side / 2, side: side)
        var options = FaceLandmarksNode.Options()
        options.maxFaces = 4
        let mesh = FaceLandmarksNode(name: "mesh", detectorModel: FaceLandmarksTests.models.appendingPathComponent("face_detection_short_range.tflite").path,
                                     landmarkModel: FaceLandmarksTests.models.appendingPathComponent("face_landmark.tflite").path, options: options)
        _ = try mesh.negotiate(inputs: [frame.description])
        let out = try mesh.process(frame, context: RunContext(options: RunOptions()))
        let faces = out?.results?.landmarks ?? []
        #expect(faces.count == 4, "\(faces.count) meshes in a \(frame.width)×\(frame.height) grid")
        // One mesh per copy: the nose tip (point 1) of each in a different quarter of the frame.
        func quarter(_ x: Float, _ y: Float) -> Int { Int(x * 2) + 2 * Int(y * 2) }
        let quarters = Set(faces.compactMap { $0.points.count > 1 ? quarter($0.points[1].x, $0.points[1].y) : nil })
        #expect(quarters == [0, 1, 2, 3], "nose tips in quarters \(quarters.sorted())")
        // The detector alone: four boxes, one per copy; max-faces=2 keeps two.
        for (limit, expected) in [(0, 4), (2, 2)] {
            let faces = FaceDetection.node(name: "faces", model: FaceLandmarksTests.models.appendingPathComponent("face_detection_short_range.tflite").path,
                                           maxFaces: limit)
            _ = try faces.negotiate(inputs: [frame.description])
            let boxes = try faces.process(frame, context: RunContext(options: RunOptions()))?.results?.detections ?? []
            #expect(boxes.count == expected, "max-faces \(limit): \(boxes.count) boxes")
            let centres = Set(boxes.map { quarter($0.box.x + $0.box.width / 2, $0.box.y + $0.box.height / 2) })
            #expect(centres.count == expected, "max-faces \(limit): box centres in quarters \(centres.sorted())")
        }
    }

    @Test(.enabled(if: TestEnvironment.portraitSample != nil, "the setup makes samples/media/portrait.mp4"))
    func aFaceLeavingTheFrameIsFollowedThenLetGo() throws {
        let upright = try turned.firstFrame()
        let (w, h) = (upright.width, upright.height)
        let mesh = FaceLandmarksNode(name: "mesh", detectorModel: FaceLandmarksTests.models.appendingPathComponent("face_detection_short_range.tflite").path,
                                     landmarkModel: FaceLandmarksTests.models.appendingPathComponent("face_landmark.tflite").path)
        var found: [Int] = []
        var noses: [Float] = []
        // The picture slides right by 5 % of the width per frame, 24 frames: the face goes out at the right.
        for step in 0..<24 {
            let frame = try Self.placed(upright, width: w, height: h, at: [step * w / 20], total: w)
            if step == 0 { _ = try mesh.negotiate(inputs: [frame.description]) }
            let out = try mesh.process(frame, context: RunContext(options: RunOptions()))
            let faces = out?.results?.landmarks ?? []
            found.append(faces.count)
            if let p = faces.first?.points, p.count > 1 { noses.append(p[1].x) }
        }
        #expect(found.prefix(4).allSatisfy { $0 == 1 }, "the face is found while inside: \(found)")
        #expect(found.suffix(3).allSatisfy { $0 == 0 }, "no face once it is out: \(found)")
        // While followed, the mesh moves right with the picture (by about 5 % of the width a frame).
        let moves = zip(noses.dropFirst(), noses).prefix(4).map { $0 - $1 }
        #expect(moves.allSatisfy { $0 > 0.03 && $0 < 0.07 }, "nose tip moves \(moves)")
        // Once the face is gone the tracker lets go and the detector looks on every frame.
        #expect(mesh.detectorRuns >= 3, "detector runs \(mesh.detectorRuns)")
    }
}
