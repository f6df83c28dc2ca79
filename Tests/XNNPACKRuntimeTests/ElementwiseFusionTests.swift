import CFrameGraphKernels
import Foundation
import NeuralGraph
import Testing
import TestSupport
import TFLiteImport
@testable import XNNPACKRuntime

/// The elementwise patterns FrameGraph's kernels run in one pass (`fg_scale_add`, `fg_add_mean`):
/// MediaPipe's segmentation decoders gate a tensor by channel and add a skip, and pool the sum of two
/// tensors.
@Suite struct ElementwiseFusionTests {
    /// Both kernels, both builds, channel counts with and without whole vectors, pixel counts with
    /// and without whole runs of eight: bit for bit the same, and as defined.
    @Test func bothBuildsAgreeAndFollowTheDefinition() {
        var seed: UInt64 = 12
        for (pixels, channels) in [(1, 1), (7, 8), (9, 16), (64, 24), (333, 5), (4096, 16)] {
            let a = pseudoRandomValues(pixels * channels, seed: &seed), b = pseudoRandomValues(pixels * channels, seed: &seed), gate = pseudoRandomValues(channels, seed: &seed)
            var v = [Float](repeating: .nan, count: pixels * channels), s = v
            fg_scale_add(a, gate, b, pixels, channels, &v, 1)
            fg_scale_add(a, gate, b, pixels, channels, &s, 0)
            #expect(zip(v, s).allSatisfy { $0.bitPattern == $1.bitPattern }, "scale-add \(pixels)×\(channels): builds differ")
            #expect((0..<v.count).allSatisfy { i in v[i] == a[i] * gate[i % channels] + b[i] }, "scale-add \(pixels)×\(channels)")
            var mv = [Float](repeating: .nan, count: channels), ms = mv
            fg_add_mean(a, b, pixels, channels, &mv, 1)
            fg_add_mean(a, b, pixels, channels, &ms, 0)
            #expect(zip(mv, ms).allSatisfy { $0.bitPattern == $1.bitPattern }, "add-mean \(pixels)×\(channels): builds differ")
            for c in 0..<channels {
                let exact = (0..<pixels).reduce(0.0) { $0 + Double(a[$1 * channels + c]) + Double(b[$1 * channels + c]) } / Double(pixels)
                #expect(abs(Double(mv[c]) - exact) < 1e-5, "add-mean \(pixels)×\(channels) channel \(c): \(mv[c]) vs \(exact)")
            }
        }
    }

    /// The selfie segmentation model's decoder takes both patterns, and its mask stays within 1e-5 of
    /// XNNPACK's operations one by one.
    @Test func theSelfieModelsDecoderUsesThemAndKeepsItsMask() throws {
        guard let path = TestEnvironment.mediaPipeModel("selfie_segmentation.tflite") else {
            Issue.record("selfie_segmentation.tflite is missing: run tools/models/fetch_mediapipe_models.sh models/cache")
            return
        }
        let graph = try TFLiteImporter.load(path: path)
        let fused = try Predictor(graph: graph, options: .init(convolutions: .own))
        let plain = try Predictor(graph: graph, options: .init(convolutions: .xnnpack))
        #expect(fused.planSummary.contains("own(MUL+ADD)") && fused.planSummary.contains("own(ADD+AVERAGE_POOL_2D)"), "\(fused.planSummary)")
        var seed: UInt64 = 5
        let inputs = [pseudoRandomValues(fused.input(0).count, seed: &seed).map { $0 * 0.5 + 0.5 }]
        let a = try fused.predict(inputs)[0], c = try plain.predict(inputs)[0]
        let worst = zip(a, c).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst < 1e-5, "mask, fused vs XNNPACK: max |diff| \(worst)")
    }
}
