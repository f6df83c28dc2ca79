import Foundation
import FrameGraph
import FrameGraphLabeling
import FrameGraphModels

/// ML Kit's image labeling in one call (`fg_label`'s argument, JSON): a photo or a video and the
/// labeler's settings, by `framegraph label`'s names. Only `file` is required.
///
/// ```json
/// {"file": "photo.jpg", "model": "efficientnet_lite0", "max_results": 5, "threshold": 0.1, "crop": "centre"}
/// ```
struct LabelRequest: Decodable, Sendable {
    var file: String
    var model: String?
    var maxResults: Int?
    var threshold: Double?
    /// `whole` (default) or `centre`.
    var crop: String?
    var threads: Int?
    /// A video: label at most this many frames (default: all).
    var maxFrames: Int?

    enum CodingKeys: String, CodingKey {
        case file, model, threshold, crop, threads
        case maxResults = "max_results"
        case maxFrames = "max_frames"
    }

    /// One labelled picture: its frame index and time (a video's), and the labels.
    struct Line: Encodable {
        let index: Int?
        let time: Double?
        let labels: [ImageLabel]
    }

    /// The answer: `{"file", "photo": true, "labels": […]}` for a photo, `{"file", "photo": false,
    /// "frames": [{"index", "time", "labels"}]}` for a video.
    struct Answer: Encodable {
        let file: String
        let photo: Bool
        let labels: [ImageLabel]?
        let frames: [Line]?
    }

    static func decode(_ json: String) throws -> LabelRequest {
        do {
            return try JSONDecoder().decode(LabelRequest.self, from: Data(json.utf8))
        } catch {
            throw RequestError("the label request is not valid: it needs \"file\" (text); \"model\" (text), \"max_results\" (integer), "
                               + "\"threshold\" (number), \"crop\" (whole or centre), \"threads\", \"max_frames\" are optional")
        }
    }

    /// Labels the file with the library's model search path (its checkout's or prefix's models).
    func run(library: String?) throws -> String {
        let specs = ImageLabelerOptions.Specs.self
        let environment = ProcessInfo.processInfo.environment
        let configuration = ModelService.Configuration(
            searchPath: .standard(pipelineFile: nil, environment: environment, dataFolders: ModelSearchPath.dataFolders(executable: library)),
            environment: environment)
        var options = ImageLabelerOptions(localModel: LocalModel(path: model ?? specs.model.defaultValue))
        options.models = ModelService(configuration)
        if let threshold {
            guard (0...1).contains(threshold) else { throw RequestError("threshold must be from 0 to 1, got \(threshold)") }
            options.confidenceThreshold = Float(threshold)
        }
        if let maxResults {
            guard maxResults >= 1 else { throw RequestError("max_results must be at least 1, got \(maxResults)") }
            options.maxResultCount = maxResults
        }
        if let threads {
            guard (1...64).contains(threads) else { throw RequestError("threads must be from 1 to 64, got \(threads)") }
            options.threads = threads
        }
        if let crop {
            guard let centre = specs.crop.parse(crop) else { throw RequestError("crop must be whole or centre, got '\(crop.prefix(40))'") }
            options.centreCrop = centre
        }
        let labeler = try ImageLabeler(options: options)
        var photo: [ImageLabel]?
        var lines: [Line] = []
        try labeler.labelFile(file, maxFrames: maxFrames ?? .max) { index, time, labels in
            if let index { lines.append(Line(index: index, time: time, labels: labels)) } else { photo = labels }
        }
        let answer = photo.map { Answer(file: file, photo: true, labels: $0, frames: nil) } ?? Answer(file: file, photo: false, labels: nil, frames: lines)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(answer), as: UTF8.self)
    }
}
