import FFmpegSupport
import FrameGraph
import FrameGraphFilters
import FrameGraphInference
import FrameGraphMedia

extension NodeCatalog {
    /// FrameGraph's own node types.
    public static let standard = NodeCatalog([
        NodeType(name: "file", role: .source, summary: "decode a video file (anything FFmpeg reads)", options: [
            OptionSpec("path", .text, required: true, "input file (the CLI's --input replaces it)"),
            OptionSpec("start", .number, default: "0", "skip to this time, seconds"),
            OptionSpec("duration", .number, "stop after this many seconds"),
            OptionSpec("loop", .flag, default: "false", "start again at the end"),
            OptionSpec("threads", .int, default: "0", "decoder threads (0: FFmpeg chooses)"),
        ]) { name, o in
            FileSource(name: name, path: try o.requiredText("path"), options: .init(
                start: try o.number("start", default: 0, minimum: 0) ?? 0,
                duration: try o.number("duration", minimum: 0.001),
                loop: try o.flag("loop"),
                threads: try o.int("threads", default: 0, range: 0...64) ?? 0))
        },
        .camera,
        NodeType(name: "pattern", role: .source, summary: "synthetic frames with the frame number stamped in", options: [
            OptionSpec("width", .int, default: "640", "frame width"),
            OptionSpec("height", .int, default: "480", "frame height"),
            OptionSpec("fps", .number, default: "30", "frame rate"),
            OptionSpec("frames", .int, default: "300", "number of frames"),
            OptionSpec("format", .choice(["rgb24", "yuv420p"]), default: "yuv420p", "pixel format"),
        ]) { name, o in
            PatternSource(name: name, width: try o.int("width", default: 640, range: 256...8192) ?? 640,
                          height: try o.int("height", default: 480, range: 16...8192) ?? 480,
                          format: PixelFormat(name: try o.choice("format", ["rgb24", "yuv420p"], default: "yuv420p")) ?? .yuv420p,
                          frameRate: try o.number("fps", default: 30, minimum: 0.1) ?? 30,
                          frameCount: try o.int("frames", default: 300, range: 1...10_000_000) ?? 300)
        },
        NodeType(name: "crop", role: .filter, summary: "keep a rectangle (zero copy)", options: [
            OptionSpec("x", .int, default: "0", "left edge"),
            OptionSpec("y", .int, default: "0", "top edge"),
            OptionSpec("width", .int, "rectangle width"),
            OptionSpec("height", .int, "rectangle height"),
            OptionSpec("square", .flag, default: "false", "the largest centred square instead of a rectangle"),
        ]) { name, o in
            if try o.flag("square") { return Crop(name: name, region: .centerSquare) }
            return Crop(name: name, region: .rect(x: try o.int("x", default: 0, range: 0...100_000) ?? 0,
                                                  y: try o.int("y", default: 0, range: 0...100_000) ?? 0,
                                                  width: try o.requiredInt("width", range: 1...100_000),
                                                  height: try o.requiredInt("height", range: 1...100_000)))
        },
        NodeType(name: "resize", role: .filter, summary: "scale to a size with libswscale", options: [
            OptionSpec("width", .int, required: true, "output width"),
            OptionSpec("height", .int, required: true, "output height"),
            OptionSpec("method", .choice(Scaler.Method.allCases.map(\.rawValue)), default: "bilinear", "interpolation"),
            OptionSpec("letterbox", .flag, default: "false", "keep the aspect ratio, pad with black"),
            OptionSpec("format", .format, "output pixel format (default: the input's)"),
        ]) { name, o in
            let method = try o.choice("method", Scaler.Method.allCases.map(\.rawValue), default: "bilinear")
            return Resize(name: name, width: try o.requiredInt("width", range: 1...16384), height: try o.requiredInt("height", range: 1...16384), method: Scaler.Method(rawValue: method) ?? .bilinear,
                          letterbox: try o.flag("letterbox"), format: try o.format("format"))
        },
        NodeType(name: "convert", role: .filter, summary: "convert the pixel format", options: [
            OptionSpec("to", .format, required: true, "target pixel format"),
        ]) { name, o in
            _ = try o.requiredText("to")
            return ConvertFormat(name: name, to: try o.format("to") ?? .rgb24)
        },
        NodeType(name: "grayscale", role: .filter, summary: "one-channel gray8 (luma)", options: []) { name, _ in
            Grayscale(name: name)
        },
        NodeType(name: "slow", role: .filter, summary: "sleep per frame on a worker thread (drop-while-busy demo)", options: [
            OptionSpec("ms", .number, default: "50", "milliseconds per frame"),
        ]) { name, o in
            SlowNode(name: name, delay: (try o.number("ms", default: 50, minimum: 0) ?? 50) / 1000)
        },
        NodeType(name: "blend", role: .composite, summary: "foreground × mask + background × (1 − mask)",
                 ports: ["foreground", "background", "mask"], options: [
            OptionSpec("pairing", .choice(["auto", "newest", "same"]), default: "auto",
                       "newest mask (live) or the frame's own (offline); auto follows the mode"),
        ]) { name, o in
            let blend = AlphaBlend(name: name)
            blend.pairing = PairingPolicy(rawValue: try o.choice("pairing", ["auto", "newest", "same"], default: "auto"))
            return blend
        },
        NodeType(name: "segment", role: .filter, summary: "segmentation network on its own worker (drop-while-busy): frame → mask", options: [
            OptionSpec("model", .text, required: true, "model file or name (selfie_segmentation → models/cache/selfie_segmentation.tflite)"),
            OptionSpec("threads", .int, default: "1", "inference threads"),
            OptionSpec("smoothing", .number, default: "0", "weight of the previous mask, 0 … 0.95"),
            OptionSpec("scale", .number, "input normalisation: value = byte × scale + offset (default: the model's)"),
            OptionSpec("offset", .number, "see scale"),
        ]) { name, o in
            var normalization: InputNormalization?
            if o.has("scale") || o.has("offset") {
                normalization = InputNormalization(scale: Float(try o.number("scale", default: 1.0 / 255) ?? 1.0 / 255),
                                                   offset: Float(try o.number("offset", default: 0) ?? 0))
            }
            let node = NetworkNode(name: name, model: try o.requiredText("model"),
                                   decoder: SegmentationDecoder(smoothing: Float(try o.number("smoothing", default: 0, minimum: 0) ?? 0)),
                                   options: .init(threads: try o.int("threads", default: 1, range: 1...64) ?? 1, normalization: normalization))
            node.modelSearchRoots = [o.projectFolder]
            return node
        },
        NodeType(name: "colorize", role: .filter, summary: "colorizer network on its own worker: frame → a/b (float32x2) from its Lab lightness", options: [
            OptionSpec("model", .text, default: "colorizer", "model file or name (colorizer → models/colorizer/colorizer.onnx)"),
            OptionSpec("threads", .int, default: "1", "inference threads"),
            OptionSpec("scale", .number, default: "0.02", "input normalisation: value = L × scale + offset"),
            OptionSpec("offset", .number, default: "-1", "see scale"),
        ]) { name, o in
            let node = NetworkNode(name: name, model: try o.text("model") ?? "colorizer", decoder: ColorizerDecoder(),
                                   options: .init(threads: try o.int("threads", default: 1, range: 1...64) ?? 1,
                                                  normalization: InputNormalization(scale: Float(try o.number("scale", default: 0.02) ?? 0.02),
                                                                                    offset: Float(try o.number("offset", default: -1) ?? -1)),
                                                  input: .lightness))
            node.modelSearchRoots = [o.projectFolder]
            return node
        },
        NodeType(name: "recombine", role: .composite, summary: "frame's own Lab lightness + upsampled a/b → RGB",
                 ports: ["frame", "ab"], options: [
            OptionSpec("pairing", .choice(["auto", "newest", "same"]), default: "auto", "newest a/b (live) or the frame's own (offline)"),
            OptionSpec("worker", .flag, default: "true", "recombine on a worker thread of its own (pipelines with the network)"),
        ]) { name, o in
            let node = LabRecombine(name: name, ownWorker: try o.flag("worker", default: true))
            node.pairing = PairingPolicy(rawValue: try o.choice("pairing", ["auto", "newest", "same"], default: "auto"))
            return node
        },
        NodeType(name: "background", role: .composite, summary: "keep the person by a mask, replace the background",
                 ports: ["frame", "mask"], options: [
            OptionSpec("mode", .choice(["colour", "blur", "image", "overlay"]), default: "colour", "what replaces the background"),
            OptionSpec("colour", .text, default: "00b140", "RRGGBB for mode=colour (and the tint for overlay)"),
            OptionSpec("blur", .int, default: "16", "blur radius in pixels for mode=blur"),
            OptionSpec("image", .text, "image file for mode=image"),
            OptionSpec("pairing", .choice(["auto", "newest", "same"]), default: "auto", "newest mask (live) or the frame's own (offline)"),
            OptionSpec("worker", .flag, default: "true", "composite on a worker thread of its own (pipelines with the network)"),
        ]) { name, o in
            let hex = try o.text("colour") ?? (try o.choice("mode", ["colour", "blur", "image", "overlay"], default: "colour") == "overlay" ? "ff00ff" : "00b140")
            guard hex.count == 6, let rgb = UInt32(hex, radix: 16) else {
                throw GraphError.invalidOption(node: name, option: "colour", reason: "expected RRGGBB hex, got '\(hex)'")
            }
            let (r, g, b) = (UInt8(rgb >> 16), UInt8((rgb >> 8) & 0xFF), UInt8(rgb & 0xFF))
            let mode: BackgroundComposite.Mode
            switch try o.choice("mode", ["colour", "blur", "image", "overlay"], default: "colour") {
            case "blur": mode = .blur(radius: try o.int("blur", default: 16, range: 2...256) ?? 16)
            case "image": mode = .image(path: try o.requiredText("image"))
            case "overlay": mode = .overlay(r, g, b)
            default: mode = .colour(r, g, b)
            }
            let node = BackgroundComposite(name: name, mode: mode, ownWorker: try o.flag("worker", default: true))
            node.pairing = PairingPolicy(rawValue: try o.choice("pairing", ["auto", "newest", "same"], default: "auto"))
            return node
        },
        NodeType(name: "encode", role: .sink, summary: "H.264 (libx264) into .mp4 or .mkv at the clock rate", options: [
            OptionSpec("path", .text, required: true, "output file (the CLI's --output replaces it)"),
            OptionSpec("crf", .int, default: "23", "quality, 0-51 (lower is better)"),
            OptionSpec("preset", .choice(["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"]),
                       default: "veryfast", "x264 speed preset"),
            OptionSpec("threads", .int, default: "0", "encoder threads (0: encoder chooses)"),
        ]) { name, o in
            FileSink(name: name, path: try o.requiredText("path"), settings: .init(
                crf: try o.int("crf", default: 23, range: 0...51) ?? 23,
                preset: try o.choice("preset", ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"],
                                     default: "veryfast"),
                threads: try o.int("threads", default: 0, range: 0...64) ?? 0))
        },
        NodeType(name: "png", role: .sink, summary: "every Nth frame as a PNG (path with %d or %05d)", options: [
            OptionSpec("path", .text, required: true, "file pattern, e.g. out/frame-%04d.png"),
            OptionSpec("every", .int, default: "1", "write frames 0, N, 2N …"),
        ]) { name, o in
            PNGSink(name: name, pattern: try o.requiredText("path"), every: try o.int("every", default: 1, range: 1...1_000_000) ?? 1)
        },
        NodeType(name: "null", role: .sink, summary: "discard frames (measure without encoding)", options: []) { name, _ in
            NullSink(name: name)
        },
    ])
}
