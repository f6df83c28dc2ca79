import Foundation
import FuzzSupport
import TFLiteImport

/// Fuzz target: TFLite flatbuffers → import → resource checks → compile → one prediction.
func fuzzOne(_ bytes: [UInt8]) {
    guard let graph = try? TFLiteImporter.load(bytes: bytes, fileName: "fuzz.tflite") else { return }
    ModelFuzzing.exercise(graph, fileName: "fuzz.tflite")
}

#if FUZZING
@main
struct Fuzz {
    static func main() {
        exit(FuzzHarness.runLibFuzzer { data, size in
            fuzzOne(FuzzHarness.bytes(data, size))
            return 0
        })
    }
}
#else
@main
struct Replay {
    static func main() { exit(FuzzHarness.replay(fuzzOne)) }
}
#endif
