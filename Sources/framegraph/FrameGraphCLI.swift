import Foundation
import FrameGraph
import FrameGraphPipelines

/// The `framegraph` command: finds the command in the table (``Commands``), parses its options
/// against it, runs it, prints one clear line for any error and exits with a documented status.
@main
struct FrameGraphCLI {
    static let version = "0.2.0"

    static func main() {
        // First of all: an interrupt (or a closed terminal) at any moment of a run ends it cleanly
        // with status 130 and its stats.
        let words = Array(CommandLine.arguments.dropFirst())
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
        guard let first = words.first else {
            print(Help.main)
            return 2
        }
        switch first {
        case "--help", "-h":
            print(Help.main)
            return 0
        case "--version":
            print("framegraph \(version)")
            return 0
        default:
            break
        }
        guard let (spec, length) = Commands.find(words) else {
            if Commands.topWords.contains(first) {
                // A family without its subcommand (`framegraph model`, `framegraph model --help`).
                let prefix = [first] + words.dropFirst().prefix { !$0.hasPrefix("-") }.prefix(1)
                let family = Commands.family(Array(prefix)).isEmpty ? [first] : Array(prefix)
                if words.contains("--help") || words.contains("-h") {
                    print(Help.family(family))
                    return 0
                }
                let subs = Commands.family([first]).map { $0.words.dropFirst().joined(separator: " ") }
                let given = words.dropFirst().first.map { "'\($0.prefix(40))'" } ?? "nothing"
                throw Arguments.UsageError(description: "framegraph \(first) needs one of: \(subs.joined(separator: ", ")); got \(given)"
                                           + (words.count > 1 ? didYouMean(words[1], subs.map { $0.split(separator: " ").first.map(String.init) ?? $0 }) : ""))
            }
            throw Arguments.UsageError(description: "unknown command '\(first.prefix(40))'\(didYouMean(first, Commands.topWords)) — commands: \(Commands.topWords.joined(separator: ", ")); see framegraph --help")
        }
        if words.dropFirst(length).contains(where: { $0 == "--help" || $0 == "-h" }) {
            print(Help.command(spec))
            return 0
        }
        let arguments = try Arguments(words, spec: spec)
        switch spec.words[0] {
        case "run", "check":
            return try RunCommand(arguments: arguments, checkOnly: spec.words[0] == "check").execute()
        case "graph":
            return try GraphCommand(arguments: arguments).execute()
        case "report":
            return try ReportCommand(arguments: arguments).execute()
        case "nodes":
            print(NodeCatalog.standard.helpText())
            print(ProbeCommand.codecListing())
            return 0
        case "probe":
            return try ProbeCommand(arguments: arguments).execute()
        case "devices":
            return DevicesCommand(arguments: arguments).execute()
        case "model" where ["key", "archive"].contains(spec.words[1]):
            return try DeployCommand(arguments: arguments).executeModel()
        case "model":
            return try ModelCommand(arguments: arguments).execute()
        case "deploy":
            return try DeployCommand(arguments: arguments).executeDeploy()
        case "models":
            return try ModelsCommand(arguments: arguments).execute()
        case "label":
            return try LabelCommand(arguments: arguments).execute()
        case "help":
            if arguments.has("man") {
                print(Help.manPage)
                return 0
            }
            let topic = Array(arguments.positional.dropFirst())
            if topic.isEmpty {
                print(Help.main)
            } else if let (c, _) = Commands.find(topic) {
                print(Help.command(c))
            } else if !Commands.family(topic).isEmpty {
                print(Help.family(topic))
            } else {
                throw Arguments.UsageError(description: "help: no command '\(topic.joined(separator: " ").prefix(60))'\(didYouMean(topic[0], Commands.topWords))")
            }
            return 0
        case "completions":
            guard let shell = arguments.positional.dropFirst().first else {
                throw Arguments.UsageError(description: "completions needs a shell: bash or zsh")
            }
            print(try Help.completions(shell: shell))
            return 0
        default:
            throw Arguments.UsageError(description: "command '\(spec.name)' is not implemented")
        }
    }
}
