import Foundation
import NeuralGraph

/// A TFLite model's metadata (the `TFLITE_METADATA` buffer, TensorFlow Lite's metadata_schema.fbs)
/// and the files packed with it (the zip archive appended to the model): name, description,
/// version, author, licence, per-tensor normalisation, colour space, value range, score threshold
/// and calibration, and associated files by type (labels: `TENSOR_AXIS_LABELS`).
public struct TFLiteMetadata: Sendable, Equatable {
    public struct AssociatedFile: Sendable, Equatable {
        public var name: String
        public var description: String?
        /// AssociatedFileType: DESCRIPTIONS, TENSOR_AXIS_LABELS, TENSOR_VALUE_LABELS,
        /// TENSOR_AXIS_SCORE_CALIBRATION, VOCABULARY, SCANN_INDEX_FILE, or UNKNOWN.
        public var type: String
        public var locale: String?
    }

    public struct Tensor: Sendable, Equatable {
        public var name: String?
        public var description: String?
        /// NormalizationOptions: value = (x − mean) / std, per channel (or one for all).
        public var mean: [Float] = []
        public var std: [Float] = []
        /// ImageProperties.color_space: RGB, GRAYSCALE or UNKNOWN.
        public var colorSpace: String?
        /// Stats: the value range.
        public var min: [Float] = []
        public var max: [Float] = []
        /// ScoreThresholdingOptions.global_score_threshold.
        public var scoreThreshold: Float?
        /// ScoreCalibrationOptions present (its transformation name).
        public var scoreCalibration: String?
        /// ScoreCalibrationOptions' default score (for classes without parameters).
        public var scoreCalibrationDefault: Float = 0
        public var files: [AssociatedFile] = []
    }

    public var name: String?
    public var description: String?
    public var version: String?
    public var author: String?
    public var license: String?
    public var minParserVersion: String?
    public var inputs: [Tensor] = []
    public var outputs: [Tensor] = []
    public var files: [AssociatedFile] = []
    /// Names of the files in the appended zip archive.
    public var packedFiles: [String] = []

    static let fileTypes = ["UNKNOWN", "DESCRIPTIONS", "TENSOR_AXIS_LABELS", "TENSOR_VALUE_LABELS", "TENSOR_AXIS_SCORE_CALIBRATION",
                            "VOCABULARY", "SCANN_INDEX_FILE"]

    /// Largest model file read for its metadata.
    public static let maxFileBytes = 512 << 20

    /// The metadata of the model at `path` (nil when it has none), with the names of its packed
    /// files. Errors name the file and what was wrong.
    public static func read(path: String) throws -> TFLiteMetadata? {
        let bytes = try load(path)
        return try parse(bytes, fileName: (path as NSString).lastPathComponent)
    }

    /// The labels a classifier's output `output` is annotated with (its first TENSOR_AXIS_LABELS
    /// file without a locale, else the first), one per line; nil when the model has none.
    public static func labels(path: String, output: Int = 0) throws -> [String]? {
        let bytes = try load(path)
        return try labels(bytes: bytes, fileName: (path as NSString).lastPathComponent, output: output)
    }

    /// ``labels(path:output:)`` for a model's bytes.
    public static func labels(bytes: [UInt8], fileName: String, output: Int = 0) throws -> [String]? {
        try outputFile(bytes: bytes, fileName: fileName, output: output, type: "TENSOR_AXIS_LABELS").map { text in
            text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
                .reversed().drop(while: \.isEmpty).reversed()
        }
    }

    /// The text of output `output`'s associated file of `type` (for example
    /// `TENSOR_AXIS_SCORE_CALIBRATION`; one without a locale first), read from the files packed
    /// behind the model; nil when the metadata names none.
    public static func outputFile(bytes: [UInt8], fileName name: String, output: Int = 0, type: String) throws -> String? {
        guard let metadata = try parse(bytes, fileName: name), metadata.outputs.indices.contains(output) else { return nil }
        let candidates = metadata.outputs[output].files.filter { $0.type == type }
        guard let file = candidates.first(where: { $0.locale == nil }) ?? candidates.first else { return nil }
        guard let archive = try ZipArchive(endOf: bytes) else {
            throw ModelError.malformed(file: name, reason: "its metadata names '\(file.name)' but no files are packed with the model", offset: bytes.count)
        }
        guard let data = try archive.contents(of: file.name) else {
            throw ModelError.malformed(file: name, reason: "its metadata names '\(file.name)', which is not among the packed files", offset: bytes.count)
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The bytes of a model file read for its metadata (at most ``maxFileBytes``).
    public static func modelBytes(path: String) throws -> [UInt8] { try load(path) }

    /// The metadata in a model's bytes (nil when it has none); `fileName` names it in errors.
    public static func read(bytes: [UInt8], fileName: String) throws -> TFLiteMetadata? {
        try parse(bytes, fileName: fileName)
    }

    /// Every file of the zip archive at the end of `bytes`, by name (empty when there is none).
    /// Errors name what was wrong and where.
    public static func packedFiles(bytes: [UInt8], fileName: String) throws -> [String: [UInt8]] {
        do {
            guard let archive = try ZipArchive(endOf: bytes) else { return [:] }
            var files: [String: [UInt8]] = [:]
            for entry in archive.entries { files[entry.name] = try archive.contents(of: entry.name) }
            return files
        } catch let error as ZipArchive.ZipError {
            throw ModelError.malformed(file: fileName, reason: "the packed files: \(error.message)", offset: error.offset)
        }
    }

    private static func load(_ path: String) throws -> [UInt8] {
        [UInt8](try ModelFile.read(path, maxBytes: Int64(maxFileBytes)))
    }

    /// Parses a model's bytes (no metadata: nil).
    static func parse(_ bytes: [UInt8], fileName: String) throws -> TFLiteMetadata? {
        do {
            guard bytes.count >= 8, Array(bytes[4..<8]) == Array("TFL3".utf8) else {
                throw ModelError.malformed(file: fileName, reason: "not a TFLite model (no 'TFL3' identifier)", offset: 4)
            }
            let model = try TFLiteModelFile(reader: FlatBufferReader(bytes: bytes))
            guard let entry = model.metadata.first(where: { $0.name == "TFLITE_METADATA" }), let range = try model.buffer(entry.buffer) else { return nil }
            let buffer = Array(bytes[range])
            guard buffer.count >= 8, Array(buffer[4..<8]) == Array("M001".utf8) else {
                throw ModelError.malformed(file: fileName, reason: "the TFLITE_METADATA buffer lacks its 'M001' identifier", offset: range.lowerBound)
            }
            var metadata = try decode(FlatBufferReader(bytes: buffer).rootTable())
            do {
                metadata.packedFiles = try ZipArchive(endOf: bytes)?.entries.map(\.name) ?? []
            } catch let error as ZipArchive.ZipError {
                throw ModelError.malformed(file: fileName, reason: "the packed files: \(error.message)", offset: error.offset)
            }
            return metadata
        } catch let error as FlatBufferError {
            throw ModelError.malformed(file: fileName, reason: "metadata: \(error)", offset: 0)
        }
    }

    private static func decode(_ root: FlatTable) throws(FlatBufferError) -> TFLiteMetadata {
        var m = TFLiteMetadata()
        m.name = try root.string(0)
        m.description = try root.string(1)
        m.version = try root.string(2)
        m.author = try root.string(4)
        m.license = try root.string(5)
        m.files = try files(root, 6)
        m.minParserVersion = try root.string(7)
        if let subgraph = try root.tables(3).first {
            m.inputs = try subgraph.tables(2).map { t throws(FlatBufferError) in try tensor(t) }
            m.outputs = try subgraph.tables(3).map { t throws(FlatBufferError) in try tensor(t) }
            m.files += try files(subgraph, 4)
        }
        return m
    }

    private static func files(_ t: FlatTable, _ id: Int) throws(FlatBufferError) -> [AssociatedFile] {
        try t.tables(id).map { f throws(FlatBufferError) in
            let type: UInt8 = try f.scalar(2, default: 0)
            return AssociatedFile(name: try f.string(0) ?? "", description: try f.string(1),
                                  type: Int(type) < fileTypes.count ? fileTypes[Int(type)] : "UNKNOWN", locale: try f.string(3))
        }
    }

    private static func tensor(_ t: FlatTable) throws(FlatBufferError) -> Tensor {
        var tensor = Tensor()
        tensor.name = try t.string(0)
        tensor.description = try t.string(1)
        if let content = try t.table(3) {
            let (kind, properties) = try content.union(type: 0, value: 1)
            if kind == 2, let image = properties {  // ContentProperties: FeatureProperties 1, ImageProperties 2, …
                let space: UInt8 = try image.scalar(0, default: 0)
                tensor.colorSpace = ["UNKNOWN", "RGB", "GRAYSCALE"][Int(min(space, 2))]
            }
        }
        for unit in try t.tables(4) {
            let (kind, options) = try unit.union(type: 0, value: 1)
            guard let options else { continue }
            switch kind {
            case 1:  // NormalizationOptions
                tensor.mean = try options.vector(0, elementSize: 4)?.floats() ?? []
                tensor.std = try options.vector(1, elementSize: 4)?.floats() ?? []
            case 2:  // ScoreCalibrationOptions
                let transformation: UInt8 = try options.scalar(0, default: 0)
                tensor.scoreCalibration = ["IDENTITY", "LOG", "INVERSE_LOGISTIC"][Int(min(transformation, 2))]
                tensor.scoreCalibrationDefault = try options.float(1, default: 0)
            case 3:  // ScoreThresholdingOptions
                tensor.scoreThreshold = try options.float(0, default: 0)
            default:
                break
            }
        }
        if let stats = try t.table(5) {
            tensor.max = try stats.vector(0, elementSize: 4)?.floats() ?? []
            tensor.min = try stats.vector(1, elementSize: 4)?.floats() ?? []
        }
        tensor.files = try files(t, 6)
        return tensor
    }
}
