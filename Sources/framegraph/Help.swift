import Foundation
import FrameGraphPipelines

/// Help text made from the command table (``Commands``): the overview, one command's help, the man
/// page and the shell completions — so none of them can drift from what the parser accepts.
enum Help {
    /// `framegraph --help`: every command with one line.
    static var main: String {
        var lines = ["framegraph \(FrameGraphCLI.version) — real-time video machine learning on Linux CPUs", "", "USAGE"]
        let width = Commands.all.map { "framegraph \($0.name) \($0.usage)".count }.filter { $0 <= 52 }.max() ?? 40
        for c in Commands.all {
            let head = "  framegraph \(c.name)" + (c.usage.isEmpty ? "" : " \(c.usage)")
            if head.count <= width + 2 {
                lines.append(head.padding(toLength: width + 4, withPad: " ", startingAt: 0) + c.summary)
            } else {
                lines.append(head)
                lines.append(String(repeating: " ", count: width + 4) + c.summary)
            }
        }
        lines += ["  framegraph --version", "", "EXAMPLES",
                  "  framegraph run pipelines/transcode.fg --input talk.mp4 --output small.mp4",
                  "  framegraph run face-detect --input clip.mp4 --output faces.mp4 --results faces.jsonl",
                  "  framegraph run pipelines/portrait-segment.fg --camera /dev/video0 --preview",
                  "  framegraph run -e 'file path=clip.mp4 -> resize width=320 height=240 -> encode path=small.mp4'",
                  "  framegraph model info selfie_segmentation", "",
                  "framegraph COMMAND --help shows a command's options, their ranges and defaults, and examples.",
                  "Models are found by name in the pipeline's folder, the current folder, $FRAMEGRAPH_MODELS, the installed",
                  "data and the checkout's models/ (docs/MODELS.md); docs/CLI.md has everything."]
        return lines.joined(separator: "\n")
    }

    /// `framegraph COMMAND --help`.
    static func command(_ c: CommandSpec) -> String {
        var lines = ["framegraph \(c.name) — \(c.summary)", "", "USAGE", "  framegraph \(c.name)" + (c.usage.isEmpty ? "" : " \(c.usage)")]
        if !c.details.isEmpty { lines += [""] + c.details.map { "  " + $0 } }
        if !c.options.isEmpty {
            lines += ["", "OPTIONS"]
            for o in c.options {
                lines.append("  " + o.synopsis)
                lines.append("        " + o.help + (o.rangeText.map { " [\($0)]" } ?? "") + (o.repeatable ? " (repeatable)" : ""))
            }
        }
        if !c.examples.isEmpty { lines += ["", "EXAMPLES"] + c.examples.map { "  " + $0 } }
        return lines.joined(separator: "\n")
    }

    /// `framegraph model --help`: the commands of a family.
    static func family(_ prefix: [String]) -> String {
        var lines = ["framegraph \(prefix.joined(separator: " ")) — its commands:", ""]
        for c in Commands.family(prefix) {
            lines.append("  framegraph \(c.name) \(c.usage)")
            lines.append("        \(c.summary)")
        }
        lines += ["", "framegraph \(prefix.joined(separator: " ")) SUBCOMMAND --help shows one of them."]
        return lines.joined(separator: "\n")
    }

    /// `framegraph help --man`: the manual page, troff.
    static var manPage: String {
        func esc(_ s: String) -> String { s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "-", with: "\\-") }
        var t = [".TH FRAMEGRAPH 1 \"\" \"framegraph \(FrameGraphCLI.version)\" \"User Commands\"",
                 ".SH NAME", "framegraph \\- real-time video machine learning on Linux CPUs",
                 ".SH SYNOPSIS", ".B framegraph", "\\fICOMMAND\\fR [\\fIoptions\\fR]",
                 ".SH DESCRIPTION",
                 esc("Frames flow through a graph of nodes (camera or video file, crop and resize, networks, composites, encoder) on CPU threads; a network node admits a frame only when its previous prediction has finished, under a fixed output clock, and every run reports what happened to every frame."),
                 ".SH COMMANDS"]
        for c in Commands.all {
            t += [".SS \(esc("framegraph \(c.name) \(c.usage)"))", esc(c.summary)]
            for d in c.details { t += [".br", esc(d)] }
            for o in c.options {
                t += [".TP", "\\fB\(esc(o.synopsis))\\fR", esc(o.help + (o.rangeText.map { " [\($0)]" } ?? ""))]
            }
            if !c.examples.isEmpty {
                t += [".PP", "Examples:", ".nf"] + c.examples.map(esc) + [".fi"]
            }
        }
        t += [".SH ENVIRONMENT",
              ".TP", "FRAMEGRAPH_MODELS", esc("folders (colon-separated) where models are looked for by name"),
              ".TP", "FRAMEGRAPH_MACHINE_CONFIG", esc("this machine's deployment config (hosted models)"),
              ".TP", "FRAMEGRAPH_MODEL_CACHE", esc("the model cache folder (default ~/.cache/framegraph/models)"),
              ".TP", "FRAMEGRAPH_CAMERAS", esc("more camera device paths for framegraph devices (colon-separated)"),
              ".SH EXIT STATUS", esc("0 done, 1 the run stopped on an error (outputs kept), 2 bad command line, pipeline or input, 130 interrupted."),
              ".SH SEE ALSO", "docs/CLI.md, docs/PIPELINES.md, docs/MODELS.md in FrameGraph's source or PREFIX/share/doc/framegraph"]
        return t.joined(separator: "\n")
    }

    /// `framegraph completions bash|zsh`: commands, subcommands, each command's options, node types
    /// (after `--set`), shipped pipelines and files.
    static func completions(shell: String) throws -> String {
        let top = Commands.topWords.joined(separator: " ")
        var cases: [String] = []
        for first in Commands.topWords {
            let family = Commands.family([first])
            let subs = family.compactMap { $0.words.count > 1 ? $0.words[1] : nil }
            let options = Set(family.flatMap { $0.options.map { "--" + $0.name } }).sorted().joined(separator: " ")
            cases.append("    \(first)) subs=\"\(Array(Set(subs)).sorted().joined(separator: " "))\"; opts=\"\(options) --help\" ;;")
        }
        let nodes = NodeCatalog.standard.names.joined(separator: " ")
        switch shell {
        case "bash":
            return """
            # bash completion for framegraph (made by `framegraph completions bash`)
            _framegraph() {
                local cur prev subs opts
                cur="${COMP_WORDS[COMP_CWORD]}"; prev="${COMP_WORDS[COMP_CWORD-1]}"
                if [ "$COMP_CWORD" -eq 1 ]; then COMPREPLY=($(compgen -W "\(top) --help --version" -- "$cur")); return; fi
                case "${COMP_WORDS[1]}" in
            \(cases.joined(separator: "\n"))
                    *) subs=""; opts="--help" ;;
                esac
                if [ "$prev" = "--set" ]; then COMPREPLY=($(compgen -W "\(nodes)" -S . -- "$cur")); compopt -o nospace 2>/dev/null; return; fi
                if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur")); return; fi
                if [ "$COMP_CWORD" -eq 2 ] && [ -n "$subs" ]; then COMPREPLY=($(compgen -W "$subs" -- "$cur")); return; fi
                local pipelines=""
                for d in "$(dirname "$(command -v framegraph)")/../share/framegraph/pipelines" ./pipelines; do
                    [ -d "$d" ] && pipelines="$pipelines $(cd "$d" && ls *.fg 2>/dev/null | sed 's/\\.fg$//')"
                done
                COMPREPLY=($(compgen -f -- "$cur") $(compgen -W "$pipelines" -- "$cur"))
            }
            complete -F _framegraph framegraph
            """
        case "zsh":
            return """
            #compdef framegraph
            # zsh completion for framegraph (made by `framegraph completions zsh`); uses bash's through bashcompinit
            autoload -U +X bashcompinit && bashcompinit
            \(try completions(shell: "bash"))
            """
        default:
            throw Arguments.UsageError(description: "completions: expected bash or zsh, got '\(shell.prefix(40))'")
        }
    }
}
