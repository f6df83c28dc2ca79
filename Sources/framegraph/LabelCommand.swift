import FFmpegSupport
import Foundation
import ModelDeployment
import FrameGraph
import FrameGraphLabeling
import FrameGraphModels

/// `framegraph label [--model M] [--threshold T] [--max-results N] [--crop centre] [--json] FILE…`:
/// ML Kit's image labeling from the command line. A photo (a file with one picture) prints its
/// labels; a video prints one line per frame. With `--json`: one JSON object per photo, JSON Lines
/// per video frame (`{"file", "index", "time", "labels": [{"text", "confidence", "index"}]}`).
struct LabelCommand {
    let arguments: Arguments

    struct Line: Encodable {
        let file: String
        let index: Int?
        let time: Double?
        let labels: [ImageLabel]
    }

    func execute() throws -> Int32 {
        let files = Array(arguments.positional.dropFirst())
        guard !files.isEmpty else {
            throw Arguments.UsageError(description: "label needs photos or videos, e.g. framegraph label photo.jpg clip.mp4")
        }
        let specs = ImageLabelerOptions.Specs.self
        // --model may also be an archive (.fgarchive) or a hosted model (collection:NAME/ENTRY).
        var models = ModelService.Configuration.standard()
        models.machineConfigPath = arguments.value("machine-config")
        var options = ImageLabelerOptions(localModel: LocalModel(path: arguments.value("model") ?? specs.model.defaultValue))
        options.models = ModelService(models)
        options.confidenceThreshold = arguments.number("threshold").map(Float.init)
        options.maxResultCount = arguments.integer("max-results")
        options.threads = arguments.integer("threads")
        // The node's own table reads the words (checked against its choices when parsed).
        options.centreCrop = arguments.value("crop").flatMap(specs.crop.parse) ?? specs.crop.defaultValue
        options.softmax = arguments.value("softmax").flatMap(specs.softmax.parse) ?? specs.softmax.defaultValue
        let labeler = try ImageLabeler(options: options)
        if labeler.info.labels.isEmpty {
            FileHandle.standardError.write(Data("framegraph: warning: the model has no labels; results carry class indices only\n".utf8))
        }
        let json = arguments.has("json")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        func emit(_ line: Line) throws {
            if json {
                print(String(decoding: try encoder.encode(line), as: UTF8.self))
            } else {
                let where_ = line.index.map { String(format: "%@ frame %d (%.3f s)", line.file, $0, line.time ?? 0) } ?? line.file
                let text = line.labels.map { String(format: "%@ %.3f", $0.text, $0.confidence) }.joined(separator: "; ")
                print("\(where_): \(text.isEmpty ? "no labels above the threshold" : text)")
            }
        }
        for file in files {
            try labeler.labelFile(file, shouldStop: { Interrupts.shared.interrupted }) { index, time, labels in
                try emit(Line(file: file, index: index, time: time, labels: labels))
            }
            if Interrupts.shared.interrupted { return 130 }
        }
        return 0
    }
}
