/// Element types a model's tensors may have. Compute is float32; float16 is accepted as a storage
/// format for constant weights (converted at load); int32 appears in shape-like constants.
public enum ElementType: String, Sendable, Equatable {
    case float32, float16, int32, int64, int8, uint8, other

    /// Bytes per element (0 for `other`).
    public var size: Int {
        switch self {
        case .float32, .int32: return 4
        case .float16: return 2
        case .int64: return 8
        case .int8, .uint8: return 1
        case .other: return 0
        }
    }
}
