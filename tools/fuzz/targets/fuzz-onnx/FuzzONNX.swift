import Foundation
import FuzzSupport
import ONNXImport

/// Fuzz target: ONNX protobuf → import → resource checks → compile → one prediction.
func fuzzOne(_ bytes: [UInt8]) {
    guard let graph = try? ONNXImporter.load(bytes: bytes, fileName: "fuzz.onnx") else { return }
    ModelFuzzing.exercise(graph, fileName: "fuzz.onnx")
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
