import Testing
@testable import ONNXImport

/// The wire-format reader: values, packed fields, and typed errors with offsets.
struct ProtobufReaderTests {
    @Test func readsScalarsStringsAndPackedFields() throws {
        var m = ProtoMessage()
        m.varint(1, 300)
        m.varint(2, -2)
        m.fixed32(3, 1.5)
        m.string(4, "héllo")
        m.packedVarints(5, [1, 128, -1])
        m.packedFloats(6, [0.25, -4])
        var r = ProtobufReader(bytes: m.bytes)
        var seen: [Int] = []
        var ints: [Int64] = [], floats: [Float] = []
        while let f = try r.nextField() {
            seen.append(f.number)
            switch f.number {
            case 1: #expect(try r.varint() == 300)
            case 2: #expect(try r.int64() == -2)
            case 3: #expect(try r.float() == 1.5)
            case 4: #expect(try r.string() == "héllo")
            case 5: try r.appendInt64s(to: &ints, wireType: f.wireType, field: "5", offset: f.offset)
            case 6: try r.appendFloats(to: &floats, wireType: f.wireType, field: "6", offset: f.offset)
            default: try r.skip(f.wireType)
            }
        }
        #expect(seen == [1, 2, 3, 4, 5, 6])
        #expect(ints == [1, 128, -1])
        #expect(floats == [0.25, -4])
    }

    @Test func errorsCarryOffsets() {
        // Truncated varint at byte 1.
        var r = ProtobufReader(bytes: [0x08, 0x80, 0x80])
        #expect(throws: ProtobufError.truncated(what: "varint", offset: 1, length: 3, end: 3)) { while let f = try r.nextField() { try r.skip(f.wireType) } }
        // Length past the end.
        var m = ProtoMessage()
        m.data(2, [1, 2, 3])
        var cut = ProtobufReader(bytes: Array(m.bytes.dropLast()))
        #expect(throws: ProtobufError.self) { while let f = try cut.nextField() { try cut.skip(f.wireType) } }
        // Group wire type and field number 0.
        var group = ProtobufReader(bytes: [0x0B])
        #expect(throws: ProtobufError.invalidKey(offset: 0, key: 0x0B)) { _ = try group.nextField() }
        var zero = ProtobufReader(bytes: [0x00])
        #expect(throws: ProtobufError.invalidKey(offset: 0, key: 0)) { _ = try zero.nextField() }
        // Overlong varint.
        var long = ProtobufReader(bytes: [UInt8](repeating: 0xFF, count: 11) + [0])
        #expect(throws: ProtobufError.invalidVarint(offset: 0)) { _ = try long.varint() }
    }

    @Test func nestingIsLimited() throws {
        var inner = ProtoMessage()
        inner.varint(1, 1)
        for _ in 0..<40 {
            var outer = ProtoMessage()
            outer.message(1, inner)
            inner = outer
        }
        func descend(_ reader: ProtobufReader) throws {
            var r = reader
            while let f = try r.nextField() {
                if f.wireType == .lengthDelimited { try descend(try r.message()) } else { try r.skip(f.wireType) }
            }
        }
        #expect(throws: ProtobufError.self) { try descend(ProtobufReader(bytes: inner.bytes)) }
    }
}
