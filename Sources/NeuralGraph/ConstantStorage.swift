import Foundation

/// Constant tensor data (weights, biases, shape vectors) in 64-byte-aligned memory owned by the model,
/// so that it outlives every runtime built from it (XNNPACK reads static weights when the runtime is
/// created, not when the tensor is defined) and has the slack XNNPACK may read past the end.
public final class ConstantStorage: @unchecked Sendable {
    public let bytes: UnsafeMutableRawPointer
    public let count: Int
    public let elementType: ElementType

    /// `byteCount` zeroed bytes of `elementType` elements (plus 64 bytes of zeroed slack).
    public init(byteCount: Int, elementType: ElementType) {
        count = byteCount
        self.elementType = elementType
        var p: UnsafeMutableRawPointer?
        posix_memalign(&p, 64, max(count, 1) + 64)
        bytes = p ?? UnsafeMutableRawPointer.allocate(byteCount: max(count, 1) + 64, alignment: 64)
        memset(bytes, 0, max(count, 1) + 64)
    }

    /// Copies `data` (little-endian elements of `elementType`).
    public convenience init(copying data: UnsafeRawBufferPointer, elementType: ElementType) {
        self.init(byteCount: data.count, elementType: elementType)
        if let base = data.baseAddress, count > 0 { bytes.copyMemory(from: base, byteCount: count) }
    }

    /// Float32 storage holding `values`. (The copy happens inside `withUnsafeBytes`: a pointer to an
    /// array's storage is valid only there, and a temporary array is freed right after.)
    public convenience init(floats values: [Float]) {
        self.init(byteCount: values.count * MemoryLayout<Float>.size, elementType: .float32)
        values.withUnsafeBytes { raw in
            if let base = raw.baseAddress, count > 0 { bytes.copyMemory(from: base, byteCount: count) }
        }
    }

    deinit { free(bytes) }

    /// Number of elements.
    public var elementCount: Int { elementType.size == 0 ? 0 : count / elementType.size }

    /// The elements as Float (float16 and integers converted).
    public func floats() -> [Float] {
        switch elementType {
        case .float32: return Array(UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: Float.self), count: elementCount))
        case .float16: return UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: UInt16.self), count: elementCount).map { Float(Float16(bitPattern: $0)) }
        case .int32: return integers().map(Float.init)
        case .int64: return integers().map(Float.init)
        case .int8: return UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: Int8.self), count: elementCount).map(Float.init)
        case .uint8: return UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: UInt8.self), count: elementCount).map(Float.init)
        case .other: return []
        }
    }

    /// The elements as Int (for int32/int64 shape and axis vectors).
    public func integers() -> [Int] {
        switch elementType {
        case .int32: return UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: Int32.self), count: elementCount).map(Int.init)
        case .int64: return UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: Int64.self), count: elementCount).map(Int.init)
        default: return floats().map { Int($0) }
        }
    }

    /// Float32 pointer (valid only for float32 storage).
    public var floatPointer: UnsafeMutablePointer<Float> { bytes.assumingMemoryBound(to: Float.self) }
}
