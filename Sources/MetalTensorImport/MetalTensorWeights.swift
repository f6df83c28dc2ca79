import NeuralGraph

/// Where a MetalTensor model's weights come from: the blob (`NAME.bin`) through the weight map
/// (`NAME.json`), or a separate file beside the plist named by the layer (format spec §2.5). Every
/// range is checked against the bytes it points into, and every count against the layer's shape.
struct MetalTensorWeights {
    let map: WeightMap?
    let blob: [UInt8]?
    let mapName: String
    let blobName: String
    /// Bytes of a file beside the plist, by name (nil when there is none).
    let resource: (String) throws(ModelError) -> [UInt8]?

    /// A layer's kernel (`kernelCount` floats) and its bias (`biasCount` floats, zeros when the range
    /// holds only the kernel), from `name` (a map entry, or a separate file with `rangeText`).
    func kernelAndBias(_ name: String, kernelCount: Int, biasCount: Int, rangeText: String?, keys: MetalTensorKeys,
                       key: String, separateFile: String? = nil) throws(ModelError) -> (kernel: [Float], bias: [Float]) {
        let source: [UInt8]
        var offset = 0, length = 0
        let sourceName: String
        if let file = separateFile, let bytes = try resource(file) {
            source = bytes
            sourceName = file
            length = bytes.count
            if let r = rangeText {
                let parts = MetalTensorLexicon.components(r, ",").map(MetalTensorLexicon.intValue)
                guard parts.count == 2, parts[0] >= 0, parts[1] >= 0 else { throw keys.error("weight_range", "'\(r.prefix(40))' is not \"offset,length\"") }
                (offset, length) = (parts[0], parts[1])
            }
        } else {
            guard let map else {
                throw keys.error(key, "needs weights, but there is no weight map (\(mapName) not found beside the plist)")
            }
            guard let range = map.entries[name] else {
                throw keys.error(key, "weight '\(name.prefix(60))' is not in \(mapName)")
            }
            guard let blob else {
                throw keys.error(key, "needs weights, but \(blobName) is missing (put it beside the plist, or give its path: --weights FILE, or weights=FILE on the node)")
            }
            source = blob
            sourceName = blobName
            (offset, length) = (range.offset, range.length)
        }
        guard offset <= source.count, length <= source.count - offset else {
            throw keys.error(key, "weight '\(name.prefix(60))' range \(offset),\(length) runs past the end of \(sourceName) (\(source.count) bytes)")
        }
        let (withBias, overflow) = kernelCount.addingReportingOverflow(biasCount)
        guard !overflow, length % 4 == 0, length == 4 * kernelCount || length == 4 * withBias else {
            throw keys.error(key, "weight '\(name.prefix(60))' has \(length) bytes (\(length / 4) floats), expected \(kernelCount) (kernel) or \(withBias) (kernel + bias) for the declared shape")
        }
        let floats = Self.floats(source, offset: offset, count: length / 4)
        let kernel = Array(floats.prefix(kernelCount))
        let bias = floats.count > kernelCount ? Array(floats[kernelCount...]) : [Float](repeating: 0, count: biasCount)
        return (kernel, bias)
    }

    /// Little-endian float32 values.
    static func floats(_ bytes: [UInt8], offset: Int, count: Int) -> [Float] {
        bytes.withUnsafeBytes { raw in
            (0..<count).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 4 * $0, as: UInt32.self))) }
        }
    }
}
