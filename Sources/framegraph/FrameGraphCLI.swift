import Foundation
import FrameGraph
import FrameGraphPipelines

/// The `framegraph` command: parses the command line, runs the sub-command, prints one clear line
/// for any error and exits with a documented status.
@main
struct FrameGraphCLI {
    static let version = "0.1.0"

    static func main() {
        let words = Array(CommandLine.arguments.dropFirst())
        // First: an interrupt at any moment of a run ends it cleanly with status 130 and its stats.
        Interrupts.shared.install(forRun: words.first == "run")
        let status: Int32
        do {
            status = try dispatch(words)
        } catch {
            FileHandle.standardError.write(Data("framegraph: \(describe(error))\n".utf8))
            status = 2
        }
        exit(status)
    }

    static func dispatch(_ words: [String]) throws -> Int32 {
        guard let command = words.first else {
            print(Help.main)
            return 2
        }
        if words.dropFirst().contains(where: { $0 == "--help" || $0 == "-h" }) {
            print(Help.main)  // `framegraph run --help` and the like
            return 0
        }
        switch command {
        case "--help", "-h", "help":
            print(Help.main)
            return 0
        case "--version":
            print("framegraph \(version)")
            return 0
        case "nodes":
            print(NodeCatalog.standard.helpText())
            print(ProbeCommand.codecListing())
            return 0
        case "probe":
            let arguments = try Arguments(words, valued: [], switches: [])
            return try ProbeCommand(arguments: arguments).execute()
        case "devices":
            let arguments = try Arguments(words, valued: DevicesCommand.valued, switches: DevicesCommand.switches)
            return DevicesCommand(arguments: arguments).execute()
        case "model" where words.count > 1 && ["key", "archive"].contains(words[1]):
            let arguments = try Arguments(DeployCommand.normalise(words), valued: DeployCommand.valued, switches: DeployCommand.switches)
            return try DeployCommand(arguments: arguments).executeModel()
        case "model":
            let arguments = try Arguments(words, valued: ModelCommand.valued, switches: ModelCommand.switches)
            return try ModelCommand(arguments: arguments).execute()
        case "deploy":
            let arguments = try Arguments(DeployCommand.normalise(words), valued: DeployCommand.valued, switches: DeployCommand.switches)
            return try DeployCommand(arguments: arguments).executeDeploy()
        case "models":
            let arguments = try Arguments(words, valued: ModelsCommand.valued, switches: ModelsCommand.switches)
            return try ModelsCommand(arguments: arguments).execute()
        case "label":
            let arguments = try Arguments(words, valued: LabelCommand.valued, switches: LabelCommand.switches)
            return try LabelCommand(arguments: arguments).execute()
        case "run", "check":
            let arguments = try Arguments(words, valued: RunCommand.valued, switches: RunCommand.switches)
            return try RunCommand(arguments: arguments, checkOnly: command == "check").execute()
        default:
            throw Arguments.UsageError(description: "unknown command '\(command)' (commands: run, check, nodes, probe, devices, model, label, deploy, models; see framegraph --help)")
        }
    }
}
