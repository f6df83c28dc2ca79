import Testing
@testable import TFLiteImport

/// The FlatBuffers reader: values, defaults, and typed errors with offsets for damaged input.
@Suite struct FlatBufferReaderTests {
    @Test func readsTablesVectorsStringsAndUnions() throws {
        let bytes = FBEncoder.encode(.table([
            (0, .uint32(7)), (1, .string("héllo")), (2, .int32s([1, -2, 3])), (3, .uint8(5)),
            (4, .table([(0, .float(1.5)), (1, .bool(true))])), (6, .tables([.table([(0, .int8(-3))]), .table([])])),
        ]), identifier: "TEST")
        let reader = FlatBufferReader(bytes: bytes)
        let root = try reader.rootTable()
        #expect(try root.scalar(0, default: UInt32(0)) == 7)
        #expect(try root.string(1) == "héllo")
        #expect(try root.int32s(2) == [1, -2, 3])
        let (type, table) = try root.union(type: 3, value: 4)
        #expect(type == 5)
        #expect(try table?.float(0, default: 0) == 1.5)
        #expect(try table?.bool(1, default: false) == true)
        #expect(try table?.bool(2, default: true) == true)        // absent: default
        #expect(try root.scalar(5, default: Int32(-1)) == -1)     // absent in vtable
        #expect(try root.scalar(40, default: Int32(9)) == 9)      // beyond the vtable
        let items = try root.tables(6)
        #expect(try items.map { try $0.scalar(0, default: Int8(0)) } == [-3, 0])
    }

    @Test func damagedBuffersThrowWithOffsets() throws {
        // Root offset beyond the end.
        #expect(throws: FlatBufferError.outOfBounds(what: "referenced object", offset: 1000, length: 4, bufferSize: 8)) {
            try FlatBufferReader(bytes: [0xE8, 0x03, 0, 0, 0, 0, 0, 0]).rootTable()
        }
        // A vector claiming more elements than the buffer holds.
        var bytes = FBEncoder.encode(.table([(0, .int32s([1, 2, 3]))]), identifier: "TEST")
        let reader = FlatBufferReader(bytes: bytes)
        let vector = try #require(try reader.rootTable().vector(0, elementSize: 4))
        bytes[vector.position + 3] = 0x40
        #expect(throws: FlatBufferError.vectorTooLong(offset: vector.position, count: 0x4000_0003, elementSize: 4,
                                                      available: bytes.count - vector.position - 4)) {
            try FlatBufferReader(bytes: bytes).rootTable().int32s(0)
        }
        // A vtable with an odd size.
        var odd = FBEncoder.encode(.table([(0, .int32(1))]), identifier: "TEST")
        let root = try FlatBufferReader(bytes: odd).rootTable()
        odd[root.vtable] = 5
        #expect(throws: FlatBufferError.invalidVTable(offset: root.vtable, reason: "vtable size 5 is not an even number ≥ 4")) {
            try FlatBufferReader(bytes: odd).rootTable()
        }
    }

    /// A uoffset of 0 makes a table refer to itself; reading stays bounded.
    @Test func selfReferenceDoesNotLoop() throws {
        var bytes = FBEncoder.encode(.table([(0, .table([(0, .int32(1))]))]), identifier: "TEST")
        let root = try FlatBufferReader(bytes: bytes).rootTable()
        let field = try #require(try root.fieldPosition(0, size: 4))
        for i in 0..<4 { bytes[field + i] = 0 }
        let reader = FlatBufferReader(bytes: bytes)
        var table: FlatTable? = try reader.rootTable()
        var steps = 0
        // Following it repeatedly ends by the work limit (or an error), never by hanging.
        do {
            while let t = table, steps < 10_000_000 {
                table = try t.table(0)
                steps += 1
            }
        } catch {
            #expect(error == .workLimitExceeded(offset: error.offset) || error.offset >= 0)
        }
        #expect(steps < 10_000_000)
    }

    /// Many vector entries aliasing one table with a long vector: the work limit stops the blow-up.
    @Test func aliasedTablesHitTheWorkLimit() throws {
        let items: [FBValue] = [.table([(0, .int32s(Array(repeating: 7, count: 50_000)))])] + Array(repeating: .table([]), count: 2_000)
        var bytes = FBEncoder.encode(.table([(0, .tables(items))]), identifier: "TEST")
        let vector = try #require(try FlatBufferReader(bytes: bytes).rootTable().vector(0, elementSize: 4))
        let first = try vector.table(0).position
        for i in 1..<vector.count {
            let slot = vector.start + 4 * i
            withUnsafeBytes(of: UInt32(first - slot).littleEndian) { for k in 0..<4 { bytes[slot + k] = $0[k] } }
        }
        let reader = FlatBufferReader(bytes: bytes)
        var total = 0
        #expect(throws: FlatBufferError.self) {
            for table in try reader.rootTable().tables(0) { total += try table.int32s(0).count }
        }
        #expect(total < 4 * bytes.count + 100_000)
    }
}
