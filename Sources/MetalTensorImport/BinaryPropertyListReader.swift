/// Reads Apple's binary property list format (`bplist00`): the 32-byte trailer, the offset table and
/// the objects it points to (booleans, integers, reals, dates, data, ASCII and UTF-16 strings, arrays,
/// dictionaries). Every offset, count and reference is checked against the file before it is used;
/// a reference cycle, nesting deeper than the limit or more values than the limit is an error with
/// the byte offset of the object involved.
struct BinaryPropertyListReader {
    private let bytes: [UInt8]
    private let limits: PropertyListLimits
    private var offsets: [Int] = []
    private var referenceSize = 0
    private var values = 0
    private var inProgress: Set<Int> = []

    init(bytes: [UInt8], limits: PropertyListLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    func bigEndian(_ at: Int, _ size: Int) throws(PropertyListError) -> UInt64 {
        guard size >= 1, size <= 8, at >= 0, at <= bytes.count - size else {
            throw PropertyListError("a \(size)-byte field runs past the end of the file", at: at)
        }
        var v: UInt64 = 0
        for i in 0..<size { v = v << 8 | UInt64(bytes[at + i]) }
        return v
    }

    mutating func read() throws(PropertyListError) -> PropertyList {
        guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist0".utf8)) else {
            throw PropertyListError("binary property list is shorter than its header and trailer", at: 0)
        }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        let count = try bigEndian(trailer + 8, 8)
        let top = try bigEndian(trailer + 16, 8)
        let tableOffset = try bigEndian(trailer + 24, 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw PropertyListError("trailer gives offset size \(offsetSize) and reference size \(referenceSize) (each must be 1…8)", at: trailer + 6)
        }
        guard count >= 1, count <= UInt64(limits.maxValues), top < count else {
            throw PropertyListError("trailer gives \(count) objects and top object \(top)", at: trailer + 8)
        }
        guard tableOffset >= 8, tableOffset <= UInt64(trailer),
              UInt64(trailer) - tableOffset >= count * UInt64(offsetSize) else {
            throw PropertyListError("offset table (\(count) entries at byte \(tableOffset)) does not fit before the trailer", at: trailer + 24)
        }
        offsets.reserveCapacity(Int(count))
        for i in 0..<Int(count) {
            let at = Int(tableOffset) + i * offsetSize
            let o = try bigEndian(at, offsetSize)
            guard o >= 8, o < UInt64(tableOffset) else {
                throw PropertyListError("object \(i) is at byte \(o), outside the object area", at: at)
            }
            offsets.append(Int(o))
        }
        return try object(Int(top), depth: 0)
    }

    private mutating func object(_ index: Int, depth: Int) throws(PropertyListError) -> PropertyList {
        guard index >= 0, index < offsets.count else { throw PropertyListError("reference to object \(index) of \(offsets.count)", at: 0) }
        let at = offsets[index]
        values += 1
        guard values <= limits.maxValues else { throw PropertyListError("more than \(limits.maxValues) values", at: at) }
        let marker = bytes[at]
        let kind = marker >> 4, info = Int(marker & 0x0F)
        switch kind {
        case 0x0:
            switch info {
            case 0x8: return .bool(false)
            case 0x9: return .bool(true)
            default: throw PropertyListError("object marker 0x\(String(marker, radix: 16)) is not supported", at: at)
            }
        case 0x1:
            guard info <= 3 else { throw PropertyListError("integer of \(1 << info) bytes is not supported", at: at) }
            let size = 1 << info
            let raw = try bigEndian(at + 1, size)
            return .integer(size == 8 ? Int64(bitPattern: raw) : Int64(raw))
        case 0x2:
            switch info {
            case 2: return .real(Double(Float(bitPattern: UInt32(try bigEndian(at + 1, 4)))))
            case 3: return .real(Double(bitPattern: try bigEndian(at + 1, 8)))
            default: throw PropertyListError("real of \(1 << info) bytes is not supported", at: at)
            }
        case 0x3:
            guard info == 3 else { throw PropertyListError("date marker 0x\(String(marker, radix: 16)) is not valid", at: at) }
            return .date(Double(bitPattern: try bigEndian(at + 1, 8)))
        case 0x4, 0x5, 0x6:
            let (count, start) = try length(at: at, info: info)
            let unit = kind == 0x6 ? 2 : 1
            guard count <= (bytes.count - start) / unit else {
                throw PropertyListError("\(count)-element \(kind == 0x4 ? "data" : "string") runs past the end of the file", at: at)
            }
            let body = Array(bytes[start..<start + count * unit])
            if kind == 0x4 { return .data(body) }
            if kind == 0x5 { return .string(String(decoding: body, as: UTF8.self)) }
            let units = (0..<count).map { UInt16(body[2 * $0]) << 8 | UInt16(body[2 * $0 + 1]) }
            return .string(String(decoding: units, as: UTF16.self))
        case 0xA, 0xD:
            guard depth < limits.maxDepth else { throw PropertyListError("nested more than \(limits.maxDepth) deep", at: at) }
            guard inProgress.insert(index).inserted else { throw PropertyListError("object \(index) contains itself (a reference cycle)", at: at) }
            defer { inProgress.remove(index) }
            let (count, start) = try length(at: at, info: info)
            let references = kind == 0xA ? count : 2 * count
            guard references <= (bytes.count - start) / referenceSize else {
                throw PropertyListError("\(count)-entry \(kind == 0xA ? "array" : "dictionary") runs past the end of the file", at: at)
            }
            var refs: [Int] = []
            refs.reserveCapacity(references)
            for i in 0..<references {
                let r = try bigEndian(start + i * referenceSize, referenceSize)
                guard r < UInt64(offsets.count) else { throw PropertyListError("reference to object \(r) of \(offsets.count)", at: start + i * referenceSize) }
                refs.append(Int(r))
            }
            if kind == 0xA {
                var items: [PropertyList] = []
                for r in refs { items.append(try object(r, depth: depth + 1)) }
                return .array(items)
            }
            var entries: [(key: String, value: PropertyList)] = []
            for i in 0..<count {
                guard case .string(let key) = try object(refs[i], depth: depth + 1) else {
                    throw PropertyListError("dictionary key (object \(refs[i])) is not a string", at: offsets[refs[i]])
                }
                let v = try object(refs[count + i], depth: depth + 1)
                if let existing = entries.firstIndex(where: { $0.key == key }) { entries.remove(at: existing) }
                entries.append((key, v))
            }
            return .dictionary(entries)
        default:
            throw PropertyListError("object marker 0x\(String(marker, radix: 16)) is not supported", at: at)
        }
    }

    /// The element count of a data/string/array/dictionary object (inline in the marker, or an integer
    /// object after it when the marker says 0xF) and where its body starts.
    private func length(at: Int, info: Int) throws(PropertyListError) -> (Int, Int) {
        if info != 0x0F { return (info, at + 1) }
        guard at + 1 < bytes.count else { throw PropertyListError("length runs past the end of the file", at: at) }
        let marker = bytes[at + 1]
        guard marker >> 4 == 0x1, marker & 0x0F <= 3 else { throw PropertyListError("length is not an integer object", at: at + 1) }
        let size = 1 << Int(marker & 0x0F)
        let n = try bigEndian(at + 2, size)
        guard n <= UInt64(bytes.count) else { throw PropertyListError("length \(n) is larger than the file", at: at + 1) }
        return (Int(n), at + 2 + size)
    }
}
