import NeuralGraph
import Testing
@testable import TFLiteImport

/// The FlexBuffer maps TFLite custom operators keep their options in (as the flatbuffers package's
/// encoder writes them), and hostile ones: every truncation and byte flip is an error or a value,
/// never a crash.
@Suite struct FlexBufferMapTests {
    /// TFLite_Detection_PostProcess's options as TensorFlow's converter writes them (flatbuffers 25.12's
    /// flexbuffers.Dumps): 64-bit integers and doubles, a boolean.
    static let options: [UInt8] = [109, 97, 120, 95, 100, 101, 116, 101, 99, 116, 105, 111, 110, 115, 0, 109, 97, 120, 95, 99, 108, 97, 115, 115, 101, 115, 95, 112, 101, 114, 95, 100, 101, 116, 101, 99, 116, 105, 111, 110, 0, 100, 101, 116, 101, 99, 116, 105, 111, 110, 115, 95, 112, 101, 114, 95, 99, 108, 97, 115, 115, 0, 117, 115, 101, 95, 114, 101, 103, 117, 108, 97, 114, 95, 110, 109, 115, 0, 110, 109, 115, 95, 115, 99, 111, 114, 101, 95, 116, 104, 114, 101, 115, 104, 111, 108, 100, 0, 110, 109, 115, 95, 105, 111, 117, 95, 116, 104, 114, 101, 115, 104, 111, 108, 100, 0, 110, 117, 109, 95, 99, 108, 97, 115, 115, 101, 115, 0, 121, 95, 115, 99, 97, 108, 101, 0, 120, 95, 115, 99, 97, 108, 101, 0, 104, 95, 115, 99, 97, 108, 101, 0, 119, 95, 115, 99, 97, 108, 101, 0, 11, 120, 18, 148, 164, 67, 88, 51, 106, 17, 34, 43, 0, 0, 0, 0, 15, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 11, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20, 64, 1, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 51, 51, 51, 51, 51, 51, 227, 63, 0, 0, 0, 0, 0, 0, 208, 63, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20, 64, 0, 0, 0, 0, 0, 0, 36, 64, 0, 0, 0, 0, 0, 0, 36, 64, 7, 15, 7, 7, 15, 15, 7, 107, 15, 15, 15, 99, 39, 1]

    @Test func detectionOptionsAreRead() throws {
        let map = try FlexBufferMap(bytes: Self.options[...])
        #expect(map["max_detections"] == .int(10))
        #expect(map["detections_per_class"] == .int(100))
        #expect(map["use_regular_nms"] == .bool(true))
        #expect(map["nms_iou_threshold"]?.number == 0.6)
        #expect(map["nms_score_threshold"]?.number == 0.25)
        #expect(map["h_scale"]?.number == 5)
        #expect(map["missing"] == nil)
    }

    @Test func damagedMapsAreErrorsNotCrashes() {
        var outcomes = 0
        for n in 0..<Self.options.count {
            if (try? FlexBufferMap(bytes: Self.options[0..<n])) == nil { outcomes += 1 }
        }
        #expect(outcomes > 0)
        for i in Self.options.indices {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var b = Self.options
                b[i] ^= flip
                _ = try? FlexBufferMap(bytes: b[...])
            }
        }
    }
}

/// The settings LiteRT refuses at run time are refused at import, each named.
@Suite struct DetectionPostProcessSettingsTests {
    static func settings(_ change: (inout DetectionPostProcessParameters) -> Void) -> DetectionPostProcessParameters {
        var p = DetectionPostProcessParameters(maxDetections: 10, maxClassesPerDetection: 1, detectionsPerClass: 100, useRegularNMS: false,
                                               scoreThreshold: 0.3, iouThreshold: 0.6, classes: 90, yScale: 10, xScale: 10, hScale: 5, wScale: 5)
        change(&p)
        return p
    }

    @Test func impossibleSettingsAreNamed() {
        #expect(Self.settings { _ in }.problem == nil)
        #expect(Self.settings { $0.iouThreshold = 0 }.problem?.contains("nms_iou_threshold") == true)
        #expect(Self.settings { $0.iouThreshold = .nan }.problem?.contains("nms_iou_threshold") == true)
        #expect(Self.settings { $0.maxDetections = -1 }.problem?.contains("max_detections") == true)
        #expect(Self.settings { $0.maxClassesPerDetection = 0 }.problem?.contains("max_classes_per_detection") == true)
        #expect(Self.settings { $0.classes = 0 }.problem?.contains("num_classes") == true)
        #expect(Self.settings { $0.hScale = 0 }.problem?.contains("h_scale") == true)
        #expect(Self.settings { $0.scoreThreshold = .infinity }.problem?.contains("nms_score_threshold") == true)
        #expect(Self.settings { $0.maxDetections = 1 << 40 }.problem?.contains("max_detections") == true)
    }
}
