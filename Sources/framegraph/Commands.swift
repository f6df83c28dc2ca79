import Foundation
import FrameGraph
import FrameGraphLabeling
import FrameGraphPipelines

/// Every command of `framegraph` with its options: the one table that parsing, `--help`, the man
/// page (`framegraph help --man`) and the shell completions (`framegraph completions bash|zsh`) read.
enum Commands {
    // Options several commands share.
    static let modelBudget = RunOptionSpec.modelBudget
    static let machineConfig = RunOptionSpec.machineConfig
    static let threads = CommandOption("threads", .integer(1...64), default: "1", "inference threads")
    static let output = CommandOption("output", .text("FILE"), "the file to write", short: "o")
    static let quiet = RunOptionSpec.quiet

    /// `framegraph run`'s options: the run options' one table (``RunOptionSpec/all``, FrameGraphPipelines), which the
    /// C library's requests (Python's keywords) read too.
    static let runOptions: [CommandOption] = RunOptionSpec.all

    static let all: [CommandSpec] = [
        CommandSpec(words: ["run"], usage: "PIPELINE [options]  |  run -e 'TYPE key=value -> …' [options]",
                    summary: "run a pipeline (a .fg file, a shipped pipeline's name, or -e TEXT)",
                    details: ["PIPELINE is a file, or the name of a shipped pipeline (face-detect, portrait-segment, …) found in the",
                              "installed or checkout pipelines/ folder. Ctrl-C stops the sources, finishes work in flight (at most",
                              "--stop-grace seconds), finalizes the outputs and prints the statistics; a second Ctrl-C aborts at once.",
                              "The run ends by listing every file it wrote.",
                              "EXIT STATUS: 0 done, 1 the run stopped on an error (outputs kept), 2 bad command line, pipeline or input, 130 interrupted."],
                    options: runOptions,
                    examples: ["framegraph run pipelines/transcode.fg --input talk.mp4 --output small.mp4",
                               "framegraph run face-detect --input clip.mp4 --output faces.mp4 --results faces.jsonl",
                               "framegraph run -e 'file path=clip.mp4 -> resize width=320 height=240 -> encode path=small.mp4'",
                               "framegraph run pipelines/portrait-segment.fg --camera /dev/video0 --preview"]),
        CommandSpec(words: ["check"], usage: "PIPELINE [options]", summary: "validate a pipeline (wiring, formats, models) without running it",
                    options: runOptions, examples: ["framegraph check pipelines/slow.fg", "framegraph check -e 'pattern -> null'"]),
        CommandSpec(words: ["graph"], usage: "PIPELINE [--set NODE.KEY=VALUE…] [-o FILE.dot|.svg|.png]",
                    summary: "a picture of a pipeline: Graphviz DOT (SVG or PNG when Graphviz's dot is installed)",
                    details: ["Nodes with their type, options and lane (source, inline, worker, sink); edges with the port they enter.",
                              "Without -o the DOT text goes to standard output."],
                    options: [CommandOption("output", .text("FILE"), "write FILE.dot, or FILE.svg / FILE.png through Graphviz's dot", short: "o"),
                              CommandOption("set", .text("NODE.KEY=VALUE"), "set an option first", repeatable: true),
                              CommandOption("inline", .text("PIPELINE"), "the pipeline written on the command line", short: "e")],
                    examples: ["framegraph graph pipelines/portrait-segment.fg -o portrait.svg", "framegraph graph face-mesh | dot -Tpng > mesh.png"]),
        CommandSpec(words: ["report"], usage: "STATS.json [--trace TRACE.json] -o REPORT.html",
                    summary: "a run's statistics (and trace) as one self-contained HTML page: summary, node timing, timeline, latency, slowest frames",
                    details: ["The page has no script and loads nothing: inline SVG. With --trace it adds the per-second timeline,",
                              "the histogram of every frame's time through the graph and the slowest frames.",
                              "The page is written beside its destination and renamed into place; it never overwrites an input."],
                    options: [CommandOption("output", .text("FILE.html"), "where to write the page", short: "o"),
                              CommandOption("trace", .text("FILE"), "the run's trace (framegraph run --trace)")],
                    examples: ["framegraph run pipelines/slow.fg --mode live --stats stats.json --trace trace.json",
                               "framegraph report stats.json --trace trace.json -o report.html"]),
        CommandSpec(words: ["nodes"], usage: "", summary: "list node types with their ports and options, and the video codecs this machine encodes",
                    examples: ["framegraph nodes"]),
        CommandSpec(words: ["probe"], usage: "FILE|URL…", summary: "what FrameGraph sees in a media file: streams, timing, colour, rotation, frames; or in a network stream (with --allow-network): codec, size, rate, time to first frame",
                    options: [CommandOption("allow-network", "probe network streams (rtsp, rtsps, http(s), srt, udp, rtp, rtmp); refused without it"),
                              CommandOption("stream-transport", .choice(["tcp", "udp"]), default: "tcp", "RTSP media over TCP (interleaved) or UDP"),
                              CommandOption("credentials", .text("FILE"), "a file whose first line is user:password for the stream (never printed)"),
                              CommandOption("timeout", .number(0.1...600), default: "10", "seconds allowed to connect, and to wait for each frame"),
                              CommandOption("seconds", .number(0...600), default: "2", "read the stream this long to measure its frame rate")],
                    examples: ["framegraph probe phone.mov", "framegraph probe rtsp://127.0.0.1:8554/cam --allow-network"]),
        CommandSpec(words: ["devices"], usage: "[PATH…]",
                    summary: "list cameras (/dev/video* and $FRAMEGRAPH_CAMERAS) with formats, sizes and frame rates",
                    examples: ["framegraph devices", "framegraph devices /dev/video2"]),
        CommandSpec(words: ["model", "info"], usage: "MODEL [options]",
                    summary: "a model's inputs, outputs, operations, parameters, FLOPs, metadata and how FrameGraph uses it",
                    details: ["MODEL is a file (TFLite, ONNX, a MetalTensor NAME.plist; the format is read from its content), a name",
                              "found along the model search path, an archive (.fgarchive) or collection:NAME/ENTRY."],
                    options: [modelBudget, machineConfig,
                              CommandOption("precision", .choice(["fp32", "fp16", "int8"]), default: "fp32", "MetalTensor models: fp16 storage as on an iPhone"),
                              CommandOption("weights", .text("BIN"), "MetalTensor models: the weight blob (default: beside the plist)"),
                              CommandOption("map", .text("JSON"), "MetalTensor models: the weight map (default: beside the plist)"),
                              CommandOption("all-layers", "MetalTensor models: every node's result is an output too")],
                    examples: ["framegraph model info selfie_segmentation", "framegraph model info models/cache/efficientnet_lite0.onnx"]),
        CommandSpec(words: ["model", "check"], usage: "MODEL [options]",
                    summary: "every operator: supported or not (and why), the share supported, and where and in what arithmetic each runs",
                    details: ["Exit status 1 when an operator is unsupported. A MediaPipe .task bundle is checked part by part."],
                    options: [CommandOption("all", "list every operation with where it runs"),
                              CommandOption("supported", "without MODEL: the TFLite builtins and ONNX operators FrameGraph imports"),
                              threads, modelBudget, machineConfig],
                    examples: ["framegraph model check models/cache/quantized/mobilenet_v2_1.0_224_int8.tflite",
                               "framegraph model check face_landmarker.task"]),
        CommandSpec(words: ["model", "bench"], usage: "MODEL [options]",
                    summary: "load and compile time, median/p95 prediction time, time per operation type, the slowest stages",
                    options: [CommandOption("runs", .integer(1...1_000_000), default: "200", "timed predictions"),
                              CommandOption("warmup", .integer(0...1_000_000), default: "20", "untimed predictions first"),
                              CommandOption("batch", .integer(1...64), default: "1",
                                            "images per prediction (the model's batch dimension set to N; times also per image)"),
                              threads,
                              CommandOption("conv-kernels", .choice(["auto", "own", "xnnpack"]), default: "auto",
                                            "who runs the convolutions (auto: both timed at compile time, the faster kept)"),
                              CommandOption("stages", .integer(0...100_000), default: "6", "how many of the slowest stages to list"),
                              CommandOption("precision", .choice(["fp32", "fp16", "bf16", "int8"]), default: "fp32",
                                            "int8: the dense convolutions in 8-bit integers (AVX-512 VNNI); bf16: with bfloat16 products (AVX-512 BF16); fp16: MetalTensor storage"),
                              CommandOption("weights", .text("BIN"), "MetalTensor models: the weight blob"),
                              CommandOption("map", .text("JSON"), "MetalTensor models: the weight map"),
                              modelBudget, machineConfig],
                    examples: ["taskset -c 0 framegraph model bench selfie_segmentation --runs 300"]),
        CommandSpec(words: ["model", "run"], usage: "MODEL --input-rgb X.rgb|--input-f32 X.f32 --output-dir DIR [options]",
                    summary: "one prediction; every output written as DIR/NAME.f32 (NHWC float32, quantized outputs dequantized)",
                    options: [CommandOption("input-rgb", .text("FILE"), "uint8 HWC pixels of the model's input size (a quantized input takes them as its integers)"),
                              CommandOption("input-f32", .text("FILE"), "float32 NHWC values of the model's input"),
                              CommandOption("output-dir", .text("DIR"), "where the outputs go"),
                              CommandOption("scale", .number(-1e6...1e6), "with --input-rgb: value = byte × scale + offset (default: the model's)"),
                              CommandOption("offset", .number(-1e6...1e6), "see --scale"),
                              CommandOption("raw", "quantized outputs also as the integers they store: DIR/NAME.raw (int8/uint8 bytes, int32 little-endian)"),
                              threads,
                              CommandOption("precision", .choice(["fp32", "fp16", "bf16", "int8"]), default: "fp32", "the arithmetic"),
                              CommandOption("weights", .text("BIN"), "MetalTensor models: the weight blob"),
                              CommandOption("map", .text("JSON"), "MetalTensor models: the weight map"),
                              CommandOption("all-layers", "MetalTensor models: every node's result is an output too"),
                              modelBudget, machineConfig],
                    examples: ["framegraph model run selfie_segmentation --input-rgb frame.rgb --output-dir out/"]),
        CommandSpec(words: ["model", "compare"], usage: "MODEL CLIP|PHOTO… [options]",
                    summary: "the model in float32 and in int8 on the same frames: differences, a mask's IoU, both times",
                    options: [CommandOption("precision", .choice(["int8", "fp32"]), default: "int8", "the precision compared with float32"),
                              CommandOption("frames", .integer(1...1_000_000), default: "300", "at most this many frames of each file"),
                              threads, modelBudget, machineConfig],
                    examples: ["framegraph model compare selfie_segmentation clip.mp4 --frames 100"]),
        CommandSpec(words: ["model", "key", "new"], usage: "-o team.fgkey", summary: "a team key (AES-256) for encrypted model archives",
                    options: [output], examples: ["framegraph model key new -o team.fgkey"]),
        CommandSpec(words: ["model", "archive"], usage: "MODEL [--name N] [--version V] [--encrypt team.fgkey] -o X.fgarchive",
                    summary: "pack a model (and its labels, or a plist's json and bin) for deployment, optionally encrypted",
                    options: [output, CommandOption("name", .text("NAME"), "the model's name in the manifest (default: the file's)"),
                              CommandOption("version", .text("V"), default: "1", "its version"),
                              CommandOption("encrypt", .text("KEY"), "encrypt with this team key file")],
                    examples: ["framegraph model archive flowers.tflite --version 2 --encrypt team.fgkey -o flowers-2.fgarchive"]),
        CommandSpec(words: ["label"], usage: "FILE… [options]",
                    summary: "image labeling as ML Kit does it: the labels of each photo, or of every frame of a video",
                    options: [CommandOption(ImageLabelerOptions.Specs.model.spec), CommandOption(ImageLabelerOptions.Specs.threshold.spec),
                              CommandOption(ImageLabelerOptions.Specs.maxResults.spec), CommandOption(ImageLabelerOptions.Specs.crop.spec),
                              CommandOption(ImageLabelerOptions.Specs.softmax.spec), threads,
                              CommandOption("json", "one JSON object per photo, JSON Lines per video frame"),
                              machineConfig],
                    examples: ["framegraph label photo.jpg", "framegraph label clip.mp4 --json --max-results 3"]),
        CommandSpec(words: ["deploy", "key", "new"], usage: "-o publisher.fgsign",
                    summary: "the publisher's Ed25519 signing key (prints the public key for the machines)",
                    options: [output], examples: ["framegraph deploy key new -o publisher.fgsign"]),
        CommandSpec(words: ["deploy", "collection"], usage: "TREE NAME --sign KEY", summary: "start a collection in a deploy tree (served by any web server)",
                    options: [CommandOption("sign", .text("KEY"), "the publisher's signing key")],
                    examples: ["framegraph deploy collection site FlowerModels --sign publisher.fgsign"]),
        CommandSpec(words: ["deploy", "deployment"], usage: "TREE COLLECTION NAME ENTRY=ARCHIVE… --sign KEY [--default]",
                    summary: "publish a deployment: entries and their archives, each checked whole first (length, files, and with --team-key that it decrypts)",
                    options: [CommandOption("sign", .text("KEY"), "the publisher's signing key"),
                              CommandOption("team-key", .text("KEY"), "a team key the archives are encrypted with: each is decrypted before publishing (repeatable)",
                                            repeatable: true),
                              CommandOption("default", "make it the collection's default deployment")],
                    examples: ["framegraph deploy deployment site FlowerModels spring FlowerClassifier=flowers-2.fgarchive --sign publisher.fgsign --default"]),
        CommandSpec(words: ["deploy", "rule"], usage: "TREE COLLECTION DEPLOYMENT CONDITION… --sign KEY [--position N]",
                    summary: "target a deployment at machines (the first matching rule wins)",
                    options: [CommandOption("sign", .text("KEY"), "the publisher's signing key"),
                              CommandOption("device-class", .text("C"), "machines whose config says this class"),
                              CommandOption("arch", .text("A"), "this CPU architecture (x86_64, aarch64)"),
                              CommandOption("feature", .text("F"), "a CPU feature (avx2, avx512vnni …; repeatable)", repeatable: true),
                              CommandOption("min-cores", .integer(1...4096), "at least this many cores"),
                              CommandOption("min-memory", .integer(1...(1 << 30)), "at least this much memory, MiB"),
                              CommandOption("os", .text("OS"), "this operating system"),
                              CommandOption("position", .integer(1...256), "where the rule goes in the list (default: last)")],
                    examples: ["framegraph deploy rule site FlowerModels spring --device-class kiosk --sign publisher.fgsign"]),
        CommandSpec(words: ["deploy", "default"], usage: "TREE COLLECTION DEPLOYMENT --sign KEY", summary: "set the collection's default deployment",
                    options: [CommandOption("sign", .text("KEY"), "the publisher's signing key")],
                    examples: ["framegraph deploy default site FlowerModels spring --sign publisher.fgsign"]),
        CommandSpec(words: ["deploy", "show"], usage: "TREE COLLECTION --sign KEY", summary: "print a collection's signed manifest",
                    options: [CommandOption("sign", .text("KEY"), "the publisher's signing key")],
                    examples: ["framegraph deploy show site FlowerModels --sign publisher.fgsign"]),
        CommandSpec(words: ["models", "list"], usage: "[--machine-config FILE]", summary: "this machine's cached deployments",
                    options: [machineConfig], examples: ["framegraph models list"]),
        CommandSpec(words: ["models", "pull"], usage: "COLLECTION… [options]",
                    summary: "download a collection's deployment for this machine now, with its team keys; ready means it opens here",
                    options: [machineConfig, quiet], examples: ["framegraph models pull FlowerModels"]),
        CommandSpec(words: ["models", "status"], usage: "[COLLECTION…] [--machine-config FILE]", summary: "what the server offers this machine, against the cache",
                    options: [machineConfig], examples: ["framegraph models status"]),
        CommandSpec(words: ["models", "clear"], usage: "[--keys] [--machine-config FILE]", summary: "empty the model cache (team keys kept unless --keys)",
                    options: [machineConfig, CommandOption("keys", "remove the fetched team keys too")], examples: ["framegraph models clear"]),
        CommandSpec(words: ["help"], usage: "[COMMAND…] | --man", summary: "this help, one command's (framegraph COMMAND --help), or the man page",
                    options: [CommandOption("man", "print the manual page (troff) made from this help")], examples: ["framegraph help run"]),
        CommandSpec(words: ["completions"], usage: "bash|zsh", summary: "shell completions for commands, options, node types and pipelines",
                    examples: ["framegraph completions bash > /etc/bash_completion.d/framegraph"]),
    ]

    /// The spec of the command `words` start with (the longest match), and how many words it takes.
    static func find(_ words: [String]) -> (spec: CommandSpec, length: Int)? {
        all.filter { words.starts(with: $0.words) }.max { $0.words.count < $1.words.count }.map { ($0, $0.words.count) }
    }

    /// The commands whose words begin with `prefix` (`model` → model info, bench, …).
    static func family(_ prefix: [String]) -> [CommandSpec] {
        all.filter { $0.words.starts(with: prefix) }
    }

    /// Every first word.
    static var topWords: [String] {
        var seen: [String] = []
        for c in all where !seen.contains(c.words[0]) { seen.append(c.words[0]) }
        return seen
    }
}
