import Foundation
@testable import TFLiteImport
import Testing
import TestSupport

/// TFLite model metadata and the zip archive of associated files behind it: the shared labeling
/// models (skipped without ../shared), MediaPipe's models (fetched by the setup), and hand-made zips,
/// damaged in every way the reader checks.
@Suite struct MetadataTests {
    static let labeling = TestEnvironment.sharedFile("models/labeling/efficientnet_lite0_metadata.tflite")
    static let threshold = TestEnvironment.sharedFile("models/labeling/efficientnet_lite0_threshold.tflite")

    @Test(.enabled(if: MetadataTests.labeling != nil, "needs ../shared/models/labeling"))
    func theLabelingModelsMetadataAndLabelsAreRead() throws {
        let path = try #require(Self.labeling)
        let m = try #require(try TFLiteMetadata.read(path: path))
        #expect(m.inputs.count == 1 && m.outputs.count == 1)
        #expect(m.inputs[0].mean == [127] && m.inputs[0].std == [128] && m.inputs[0].colorSpace == "RGB")
        #expect(m.outputs[0].files.map(\.type) == ["TENSOR_AXIS_LABELS"] && m.outputs[0].scoreThreshold == nil)
        #expect(m.packedFiles == [m.outputs[0].files[0].name])
        let labels = try #require(try TFLiteMetadata.labels(path: path))
        #expect(labels.count == 1000)
        let thresholdPath = try #require(Self.threshold)
        let t = try #require(try TFLiteMetadata.read(path: thresholdPath))
        #expect(t.outputs[0].scoreThreshold == Float(0.1))
    }

    @Test func mediaPipesModelsCarryTheirOwnMetadata() throws {
        let path = TestEnvironment.root.appendingPathComponent("models/cache/face_detection_short_range.tflite").path
        let m = try #require(try TFLiteMetadata.read(path: path))
        #expect(m.name == "Short Range Face Detection")
        #expect(try TFLiteMetadata.labels(path: path) == nil)
    }

    // MARK: zip archives by hand

    struct ZipMaker {
        var local: [UInt8] = [], central: [UInt8] = [], count = 0
        static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 255), UInt8(v >> 8 & 255)] }
        static func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }

        /// CRC-32 (zip's: reflected 0xEDB88320).
        static func crc32(_ data: [UInt8]) -> Int {
            var c: UInt32 = 0xFFFF_FFFF
            for b in data {
                c ^= UInt32(b)
                for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0xEDB8_8320 : c >> 1 }
            }
            return Int(~c)
        }

        /// `crc`: the CRC-32 to declare (default: that of `data`, which is the stored contents).
        mutating func add(_ name: String, data: [UInt8], method: Int = 0, declared: Int? = nil, crc: Int? = nil) {
            let n = Array(name.utf8), offset = local.count
            let check = crc ?? Self.crc32(data)
            local += Self.le32(0x0403_4B50) + Self.le16(20) + Self.le16(0) + Self.le16(method) + Self.le32(0) + Self.le32(check)
                + Self.le32(data.count) + Self.le32(declared ?? data.count) + Self.le16(n.count) + Self.le16(0) + n + data
            central += Self.le32(0x0201_4B50) + Self.le16(20) + Self.le16(20) + Self.le16(0) + Self.le16(method) + Self.le32(0) + Self.le32(check)
                + Self.le32(data.count) + Self.le32(declared ?? data.count) + Self.le16(n.count) + Self.le16(0) + Self.le16(0)
                + Self.le16(0) + Self.le16(0) + Self.le32(0) + Self.le32(offset) + n
            count += 1
        }

        func bytes(prefix: [UInt8] = []) -> [UInt8] {
            prefix + local + central + Self.le32(0x0605_4B50) + Self.le16(0) + Self.le16(0) + Self.le16(count) + Self.le16(count)
                + Self.le32(central.count) + Self.le32(local.count) + Self.le16(0)
        }
    }

    @Test func aStoredFileIsReadFromAnArchiveAppendedToOtherBytes() throws {
        var zip = ZipMaker()
        zip.add("labels.txt", data: Array("cat\ndog\n".utf8))
        zip.add("other.bin", data: [1, 2, 3])
        let archive = try #require(try ZipArchive(endOf: zip.bytes(prefix: Array(repeating: 7, count: 1000))))
        #expect(archive.entries.map(\.name) == ["labels.txt", "other.bin"])
        #expect(try archive.contents(of: "labels.txt") == Array("cat\ndog\n".utf8))
        #expect(try archive.contents(of: "missing") == nil)
        #expect(try ZipArchive(endOf: Array(repeating: 0, count: 100)) == nil)  // no archive at all
    }

    @Test func damagedArchivesAreRefusedWithAReason() throws {
        func error(_ bytes: [UInt8], _ name: String = "a") -> String {
            do {
                let archive = try ZipArchive(endOf: bytes)
                _ = try archive?.contents(of: name)
                return "no error"
            } catch let e as ZipArchive.ZipError {
                return e.message
            } catch {
                return "\(error)"
            }
        }
        var bomb = ZipMaker()
        bomb.add("a", data: [1, 2, 3, 4], method: 8, declared: 4_000_000)
        #expect(error(bomb.bytes()).contains("would inflate 4 bytes to 4000000: refused"))
        var notDeflate = ZipMaker()
        notDeflate.add("a", data: [0xFF, 0xFF, 0xFF, 0xFF], method: 8, declared: 10)
        #expect(error(notDeflate.bytes()).contains("not valid deflate data"))
        var method = ZipMaker()
        method.add("a", data: [1], method: 12)
        #expect(error(method.bytes()).contains("compression method 12"))
        var stored = ZipMaker()
        stored.add("a", data: [1, 2], declared: 5)
        #expect(error(stored.bytes()).contains("has 2 bytes but declares 5"))
        var huge = ZipMaker()
        huge.add("a", data: [1], declared: 1 << 30)
        #expect(error(huge.bytes()).contains("more than"))
        var ok = ZipMaker()
        ok.add("a", data: [1, 2, 3])
        var cut = ok.bytes()
        cut.replaceSubrange(0..<4, with: [0, 0, 0, 0])  // the local header's signature
        #expect(error(cut).contains("local header is missing or damaged"))
        var damagedContents = ZipMaker()
        damagedContents.add("a", data: [1, 2, 3], crc: ZipMaker.crc32([1, 2, 4]))
        #expect(error(damagedContents.bytes()).contains("entry 'a' is damaged: its CRC-32 is"))
        var twice = ZipMaker()
        twice.add("labels.txt", data: [1])
        twice.add("labels.txt", data: [2])
        #expect(error(twice.bytes(), "labels.txt").contains("entry 'labels.txt' appears twice"))
        var shifted = ok.bytes()
        let end = shifted.count - 22
        shifted[end + 16] = 0xF0  // the central directory's offset, far out
        #expect(error(shifted).contains("does not fit") || error(shifted).contains("local header"))
    }
}
