import MetalTensorImport
import XNNPACKRuntime

/// The arithmetic a network node runs its model in (the nodes' `precision` option).
public enum NetworkPrecision: String, Sendable, CaseIterable {
    /// Float32 throughout (the default).
    case float32 = "fp32"
    /// MetalTensor models (.plist): every stored tensor and weight rounded to float16, as MetalTensor
    /// runs on an iPhone; other models run float32.
    case float16 = "fp16"
    /// The dense convolutions that pay in 8-bit integers (``Predictor/Precision/int8``), the rest in
    /// float32; float32 on a CPU without AVX-512 VNNI. Check a model on your own clips with
    /// `framegraph model compare MODEL CLIP…`.
    case int8
    /// The same dense convolutions with bfloat16 products (``Predictor/Precision/bfloat16``: 8
    /// significant bits per value, each with its own exponent; sums in float32), the rest in float32;
    /// float32 on a CPU without AVX-512 BF16.
    case bfloat16 = "bf16"

    /// How a MetalTensor model's tensors are stored.
    public var metalTensorStorage: MetalTensorImporter.Precision { self == .float16 ? .float16 : .float32 }
    /// The predictor's arithmetic.
    public var predictor: Predictor.Precision {
        switch self {
        case .int8: return .int8
        case .bfloat16: return .bfloat16
        case .float32, .float16: return .float32
        }
    }
}
