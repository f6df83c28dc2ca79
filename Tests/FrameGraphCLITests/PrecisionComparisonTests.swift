import FFmpegSupport
import Foundation
import FrameGraph
@testable import framegraph
import Testing
import TestSupport
import XNNPACKRuntime

/// `framegraph model compare`'s arithmetic: masks compared frame by frame, and float's own change
/// from one frame to the next, which restarts with every clip.
struct PrecisionComparisonTests {
    static let model = TestEnvironment.mediaPipeModel("selfie_segmentation.tflite")

    @Test func anEmptyPairOfMasksAgreesFully() {
        #expect(PrecisionComparison.MaskAgreement(intersection: 0, union: 0, pixels: 0).iou == 1)
        #expect(PrecisionComparison.MaskAgreement(intersection: 30, union: 40, pixels: 35).iou == 0.75)
    }

    @Test(.enabled(if: model != nil && TestEnvironment.portraitSample != nil,
                   "needs models/cache/selfie_segmentation.tflite and samples/media/portrait.mp4 (tools/make-samples.sh)"))
    func floatAgainstItselfAgreesAndFrameChangesRestartPerClip() throws {
        let model = try #require(Self.model), sample = try #require(TestEnvironment.portraitSample)
        let comparison = try PrecisionComparison(model: model, precision: .float32)
        for _ in 0..<2 {
            comparison.beginClip()
            let reader = try MediaReader(path: sample, options: .init())
            for _ in 0..<3 {
                let frame = try #require(try reader.nextFrame())
                let agreement = try #require(try comparison.add(frame))
                // The same arithmetic on both sides: the same mask, and a person in it.
                #expect(agreement.intersection == agreement.union && agreement.union == agreement.pixels && agreement.pixels > 1000)
            }
        }
        let report = comparison.report
        #expect(report.frames == 6 && report.maskIoU == [Double](repeating: 1, count: 6))
        // Two clips of three frames: two changes each, none across the clips' seam.
        #expect(report.maskChange.count == 4)
        #expect(report.maskChange.allSatisfy { $0 > 0.5 && $0 <= 1 }, "\(report.maskChange)")
    }
}
