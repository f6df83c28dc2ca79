import CZlib

/// Raw deflate data (a zip entry's, no zlib header) inflated with zlib, into exactly `expected`
/// bytes: the thin wrapper over zlib's stream (created and ended here).
enum RawInflate {
    /// The inflated bytes, or nil when the data is not valid deflate or does not inflate to exactly
    /// `expected` bytes.
    static func inflate(_ input: ArraySlice<UInt8>, expected: Int) -> [UInt8]? {
        guard expected >= 0 else { return nil }
        var stream = z_stream()
        guard fg_inflate_init_raw(&stream) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: max(expected, 1))
        let status: Int32 = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = UInt32(clamping: source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = UInt32(clamping: expected)
                return CZlib.inflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END, Int(stream.total_out) == expected else { return nil }
        return Array(output.prefix(expected))
    }
}
