import Foundation
import FrameGraph
import FrameGraphModels
import FrameGraphPipelines

/// The pipeline a `run`, `check` or `graph` command names: a file, the name of a shipped pipeline
/// (`face-detect` → `PREFIX/share/framegraph/pipelines/face-detect.fg`, or the checkout's
/// `pipelines/`), or `-e 'TEXT'` (``InlinePipeline``).
struct PipelineArgument {
    /// The parsed document.
    var document: PipelineDocument
    /// The file it came from (nil for `-e`): its folder is first on the model search path.
    var file: String?
    /// A short name for window titles and messages.
    var name: String

    static func load(_ arguments: Arguments) throws -> PipelineArgument {
        let command = arguments.spec.name
        if let text = arguments.value("inline") {
            guard arguments.positional.count == 1 else {
                throw Arguments.UsageError(description: "\(command): give a pipeline file or -e TEXT, not both")
            }
            return PipelineArgument(document: try InlinePipeline.parse(text), file: nil, name: "inline")
        }
        guard let given = arguments.positional.dropFirst().first else {
            throw Arguments.UsageError(description: "\(command) needs a pipeline file (e.g. pipelines/transcode.fg), a shipped pipeline's name, or -e 'TEXT'")
        }
        guard arguments.positional.count == 2 else {
            throw Arguments.UsageError(description: "\(command) takes one pipeline; '\(arguments.positional[2].prefix(60))' is extra (options start with --)")
        }
        let path = try find(given)
        return PipelineArgument(document: try Pipeline.parseFile(path: path), file: path, name: URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent)
    }

    /// The pipeline file `given` names (``ShippedPipelines/find(_:executable:)``).
    static func find(_ given: String) throws -> String {
        try ShippedPipelines.find(given)
    }
}
