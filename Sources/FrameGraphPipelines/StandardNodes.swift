import FFmpegSupport
import Foundation
import FrameGraph
import FrameGraphDisplay
import FrameGraphDraw
import FrameGraphFilters
import FrameGraphBodies
import FrameGraphFaces
import FrameGraphLabeling
import FrameGraphMedia
import FrameGraphMetalTensor
import FrameGraphModels
import FrameGraphNetwork

extension NodeCatalog {
    /// FrameGraph's own node types. Each type's options, defaults and ranges come from its node's
    /// `OptionSpecs` (one place), so this table only says which options a type takes and how to make
    /// the node from them.
    public static let standard = NodeCatalog([
        NodeType(name: "file", role: .source, summary: "decode a video file (anything FFmpeg reads) or an image sequence (frames/%05d.png)",
                 options: FileSource.OptionSpecs.all) { name, o in
            typealias S = FileSource.OptionSpecs
            guard let path = try o.inputPath(S.path) else { throw o.missing(S.path.name) }
            return FileSource(name: name, path: path, options: .init(
                start: try o.value(S.start), duration: try o.value(S.duration), loop: try o.value(S.loop), threads: try o.value(S.threads),
                orientation: try o.value(S.orientation), rate: try o.value(S.rate)))
        },
        .camera,
        .stream,
        NodeType(name: "pattern", role: .source, summary: "synthetic frames with the frame number stamped in",
                 options: PatternSource.OptionSpecs.all) { name, o in
            typealias S = PatternSource.OptionSpecs
            return PatternSource(name: name, width: try o.value(S.width), height: try o.value(S.height),
                                 format: try o.value(S.format),
                                 frameRate: try o.value(S.fps), frameCount: try o.value(S.frames))
        },
        NodeType(name: "crop", role: .filter, summary: "keep a rectangle (zero copy)", options: Crop.OptionSpecs.all) { name, o in
            typealias S = Crop.OptionSpecs
            if try o.value(S.square) { return Crop(name: name, region: .centerSquare) }
            return Crop(name: name, region: .rect(x: try o.value(S.x), y: try o.value(S.y),
                                                  width: try o.required(S.width), height: try o.required(S.height)))
        },
        NodeType(name: "resize", role: .filter, summary: "scale to a size with libswscale", options: Resize.OptionSpecs.all) { name, o in
            typealias S = Resize.OptionSpecs
            return Resize(name: name, width: try o.required(S.width), height: try o.required(S.height), method: try o.value(S.method),
                          letterbox: try o.value(S.letterbox), format: try o.value(S.format))
        },
        NodeType(name: "convert", role: .filter, summary: "convert the pixel format", options: ConvertFormat.OptionSpecs.all) { name, o in
            ConvertFormat(name: name, to: try o.required(ConvertFormat.OptionSpecs.to))
        },
        NodeType(name: "grayscale", role: .filter, summary: "one-channel gray8 (luma)", options: []) { name, _ in
            Grayscale(name: name)
        },
        NodeType(name: "slow", role: .filter, summary: "sleep per frame on a worker thread (drop-while-busy demo)",
                 options: SlowNode.OptionSpecs.all) { name, o in
            SlowNode(name: name, delay: try o.value(SlowNode.OptionSpecs.ms) / 1000)
        },
        NodeType(name: "blend", role: .composite, summary: "foreground × mask + background × (1 − mask)",
                 ports: ["foreground", "background", "mask"], options: AlphaBlend.OptionSpecs.all) { name, o in
            let blend = AlphaBlend(name: name)
            blend.pairing = try o.value(PairingChoice.option).policy
            return blend
        },
        NodeType(name: "segment", role: .filter, summary: "segmentation network on its own worker (drop-while-busy): frame → mask",
                 options: [NetworkNode.OptionSpecs.segmentModel.spec, NetworkNode.OptionSpecs.threads.spec,
                           SegmentationDecoder.smoothingOption.spec, NetworkNode.OptionSpecs.scale.spec,
                           NetworkNode.OptionSpecs.offset.spec, SegmentationDecoder.lowOption.spec, SegmentationDecoder.highOption.spec,
                           NetworkNode.OptionSpecs.precision.spec, NetworkNode.OptionSpecs.weights.spec,
                           NetworkNode.OptionSpecs.fallback.spec]) { name, o in
            typealias S = NetworkNode.OptionSpecs
            let normalization = try o.inputNormalization()
            let low = try o.value(SegmentationDecoder.lowOption), high = try o.value(SegmentationDecoder.highOption)
            guard low < high else {
                throw GraphError.invalidOption(node: name, option: "mask-low", reason: "must be below mask-high (\(OptionKind.format(high))), got \(OptionKind.format(low))")
            }
            return NetworkNode(name: name, model: try o.required(S.segmentModel),
                               decoder: SegmentationDecoder(smoothing: Float(try o.value(SegmentationDecoder.smoothingOption)), low: Float(low), high: Float(high)),
                               options: .init(threads: try o.value(S.threads), normalization: normalization, precision: try o.value(S.precision),
                                              weights: try o.value(S.weights), fallback: try o.value(S.fallback)))
        },
        NodeType(name: "detect-faces", role: .filter,
                 summary: "face detector (MediaPipe's BlazeFace, short or full range) on its own worker: frame → results (boxes, 6 keypoints)",
                 emits: .results, options: FaceDetection.OptionSpecs.all) { name, o in
            typealias S = FaceDetection.OptionSpecs
            return FaceDetection.node(name: name, range: try o.value(S.range), model: try o.value(S.model), threads: try o.value(S.threads),
                                      minScore: try o.value(S.minScore).map(Float.init), maxFaces: try o.value(S.maxFaces),
                                      overlap: Float(try o.value(S.overlap)), algorithm: try o.value(S.suppression))
        },
        NodeType(name: "face-landmarks", role: .filter,
                 summary: "face mesh as MediaPipe's: BlazeFace finds faces, 468 landmarks per face, tracked from frame to frame (worker): frame → results",
                 emits: .results, options: FaceLandmarksNode.OptionSpecs.all) { name, o in
            typealias S = FaceLandmarksNode.OptionSpecs
            var options = FaceLandmarksNode.Options()
            options.maxFaces = try o.value(S.maxFaces)
            options.minDetectionScore = Float(try o.value(S.minScore))
            options.minPresence = Float(try o.value(S.minPresence))
            options.detectEvery = try o.value(S.detectEvery)
            options.lines = try o.value(S.lines)
            options.threads = try o.value(S.threads)
            if try o.value(S.smoothing) {
                options.smoothing = OneEuroFilter.Settings(minCutoff: Float(try o.value(S.minCutoff)), beta: Float(try o.value(S.beta)))
            }
            return FaceLandmarksNode(name: name, detectorModel: try o.value(S.detector), landmarkModel: try o.value(S.model), options: options)
        },
        NodeType(name: "hand-landmarks", role: .filter,
                 summary: "hands as MediaPipe's: palm detection, 21 landmarks and handedness per hand, tracked from frame to frame (worker): frame → results",
                 emits: .results, options: HandLandmarksNode.OptionSpecs.all) { name, o in
            typealias S = HandLandmarksNode.OptionSpecs
            var options = HandLandmarksNode.Options()
            options.complexity = try o.value(S.model)
            options.maxHands = try o.value(S.maxHands)
            options.minDetectionScore = Float(try o.value(S.minDetection))
            options.minPresence = Float(try o.value(S.minTracking))
            options.redetectEvery = try o.value(S.redetectEvery)
            options.detectEvery = try o.value(S.detectEvery)
            options.worldLandmarks = try o.value(S.world)
            options.threads = try o.value(S.threads)
            options.parallel = try o.value(S.parallel)
            options.palmPrecision = try o.value(S.palmPrecision)
            options.landmarkPrecision = try o.value(S.landmarkPrecision)
            if try o.value(S.smoothing) {
                options.smoothing = LandmarkSmoothing.Settings(minCutoff: try o.value(S.minCutoff), beta: try o.value(S.beta))
            }
            return HandLandmarksNode(name: name, palmModel: try o.value(S.palmModel), landmarkModel: try o.value(S.landmarkModel), options: options)
        },
        NodeType(name: "pose-landmarks", role: .filter,
                 summary: "body pose as MediaPipe's: pose detection, 33 landmarks with visibility, tracked and smoothed (worker): frame → results",
                 emits: .results, options: PoseLandmarksNode.OptionSpecs.all) { name, o in
            typealias S = PoseLandmarksNode.OptionSpecs
            var options = PoseLandmarksNode.Options()
            options.minDetectionScore = Float(try o.value(S.minDetection))
            options.minPresence = Float(try o.value(S.minTracking))
            options.threads = try o.value(S.threads)
            options.smoothing = try o.value(S.smoothing)
            options.worldLandmarks = try o.value(S.world)
            options.landmarkPrecision = try o.value(S.landmarkPrecision)
            return PoseLandmarksNode(name: name, detectorModel: try o.value(S.detector), landmarkModel: try o.value(S.model), options: options)
        },
        NodeType(name: "pose-segment", role: .filter,
                 summary: "MediaPipe pose's person mask (enable_segmentation), smoothed, the pose results attached (worker): frame → mask",
                 options: PoseLandmarksNode.OptionSpecs.segment) { name, o in
            typealias S = PoseLandmarksNode.OptionSpecs
            var options = PoseLandmarksNode.Options()
            options.output = .mask
            options.minDetectionScore = Float(try o.value(S.minDetection))
            options.minPresence = Float(try o.value(S.minTracking))
            options.threads = try o.value(S.threads)
            options.smoothing = try o.value(S.smoothing)
            options.worldLandmarks = try o.value(S.world)
            options.maskSmoothing = Float(try o.value(S.maskSmoothing))
            options.landmarkPrecision = try o.value(S.landmarkPrecision)
            return PoseLandmarksNode(name: name, detectorModel: try o.value(S.detector), landmarkModel: try o.value(S.model), options: options)
        }.carryingResults,
        NodeType(name: "metaltensor-faces", role: .filter,
                 summary: "MetalTensor's face demo, its model files unchanged: RapidFaceDetect on a tracked square, 68 Landmarks (worker): frame → results",
                 emits: .results, options: MetalTensorFacesNode.OptionSpecs.all) { name, o in
            typealias S = MetalTensorFacesNode.OptionSpecs
            var options = MetalTensorFacesNode.Options()
            options.precision = try o.value(S.precision)
            options.outside = try o.value(S.outside)
            options.smoothing = try o.value(S.smoothing)
            options.landmarks = try o.value(S.points)
            options.squareScale = try o.value(S.square)
            options.scan = try o.value(S.scan)
            options.threads = try o.value(S.threads)
            return MetalTensorFacesNode(name: name, detector: try o.value(S.detector), config: try o.value(S.config),
                                        landmarks: try o.value(S.landmarks), meanShape: try o.value(S.meanShape), options: options)
        },
        NodeType(name: "label", role: .filter,
                 summary: "image labeling as ML Kit does it (labels, normalisation and threshold from the model's metadata) on its own worker: frame → results",
                 emits: .results, options: ImageLabelerOptions.Specs.all) { name, o in
            typealias S = ImageLabelerOptions.Specs
            return try NetworkNode.labeler(name: name, model: try o.value(S.model), models: o.models,
                                           threshold: try o.value(S.threshold).map(Float.init), maxResults: try o.value(S.maxResults),
                                           centreCrop: try o.value(S.crop), softmax: try o.value(S.softmax),
                                           threads: try o.value(S.threads), fallback: try o.value(S.fallback),
                                           warn: { FileHandle.standardError.write(Data("framegraph: warning: \($0)\n".utf8)) })
        },
        NodeType(name: "detect", role: .filter,
                 summary: "object detector as ML Kit's (SSD MobileNet, EfficientDet-Lite: models ending in TFLite_Detection_PostProcess) on its own worker: frame → results (boxes, labels, scores)",
                 emits: .results, options: ObjectDetector.Specs.all) { name, o in
            typealias S = ObjectDetector.Specs
            guard let model = try o.value(S.model) else { throw o.missing(S.model.name) }
            return try ObjectDetector.node(name: name, model: model, models: o.models, minScore: try o.value(S.minScore).map(Float.init),
                                           maxResults: try o.value(S.maxResults), labelOffset: try o.value(S.labelOffset),
                                           threads: try o.value(S.threads), normalization: try o.inputNormalization(),
                                           fallback: try o.value(S.fallback),
                                           warn: { FileHandle.standardError.write(Data("framegraph: warning: \($0)\n".utf8)) })
        },
        NodeType(name: "classify", role: .filter,
                 summary: "image classifier on its own worker (drop-while-busy): frame → results (the best classes with their labels)",
                 emits: .results, options: [ClassificationDecoder.OptionSpecs.model.spec, ClassificationDecoder.OptionSpecs.labels.spec,
                           ClassificationDecoder.OptionSpecs.labelFormat.spec, ClassificationDecoder.OptionSpecs.top.spec,
                           ClassificationDecoder.OptionSpecs.minScore.spec, ClassificationDecoder.OptionSpecs.softmax.spec,
                           NetworkNode.OptionSpecs.threads.spec, NetworkNode.OptionSpecs.scale.spec, NetworkNode.OptionSpecs.offset.spec,
                           NetworkNode.OptionSpecs.precision.spec, NetworkNode.OptionSpecs.weights.spec,
                           NetworkNode.OptionSpecs.fallback.spec]) { name, o in
            typealias S = NetworkNode.OptionSpecs
            typealias C = ClassificationDecoder.OptionSpecs
            let normalization = try o.inputNormalization()
            var labels: [String] = []
            var labelsFile: String?
            if let file = try o.value(C.labels) {
                do {
                    let path = try o.models.locate(file, what: "labels file")
                    labelsFile = path
                    labels = try ClassificationDecoder.labels(path: path, format: try o.value(C.labelFormat))
                } catch {
                    throw GraphError.invalidOption(node: name, option: "labels", reason: "\(file): \(FrameGraph.describe(error))")
                }
            }
            let decoder = ClassificationDecoder(labels: labels, top: try o.value(C.top), minScore: Float(try o.value(C.minScore)),
                                                softmax: try o.value(C.softmax))
            let node = NetworkNode(name: name, model: try o.required(C.model), decoder: decoder,
                                   options: .init(threads: try o.value(S.threads), normalization: normalization,
                                                  precision: try o.value(S.precision), weights: try o.value(S.weights),
                                                  fallback: try o.value(S.fallback)))
            node.extraFilesRead = labelsFile.map { [$0] } ?? []
            return node
        },
        NodeType(name: "colorize", role: .filter, summary: "colorizer network on its own worker: frame → a/b (float32x2) from its Lab lightness",
                 options: [NetworkNode.OptionSpecs.colorizeModel.spec, NetworkNode.OptionSpecs.threads.spec,
                           NetworkNode.OptionSpecs.lightnessScale.spec, NetworkNode.OptionSpecs.lightnessOffset.spec,
                           ColorizerDecoder.OptionSpecs.smoothing.spec, ColorizerDecoder.OptionSpecs.sceneCut.spec,
                           ColorizerDecoder.OptionSpecs.vividness.spec, NetworkNode.OptionSpecs.precision.spec]) { name, o in
            typealias S = NetworkNode.OptionSpecs
            let normalization = InputNormalization(scale: Float(try o.value(S.lightnessScale)), offset: Float(try o.value(S.lightnessOffset)))
            let decoder = ColorizerDecoder(smoothing: Float(try o.value(ColorizerDecoder.OptionSpecs.smoothing)),
                                           sceneCut: Float(try o.value(ColorizerDecoder.OptionSpecs.sceneCut)),
                                           vividness: Float(try o.value(ColorizerDecoder.OptionSpecs.vividness)), inputScale: normalization.scale)
            return NetworkNode(name: name, model: try o.value(S.colorizeModel), decoder: decoder,
                               options: .init(threads: try o.value(S.threads), normalization: normalization, input: .lightness,
                                              precision: try o.value(S.precision)))
        },
        NodeType(name: "recombine", role: .composite, summary: "frame's own Lab lightness + upsampled a/b → RGB (or, for HD, Y' kept and chroma coloured)",
                 ports: ["frame", "ab"], options: LabRecombine.OptionSpecs.all) { name, o in
            let node = LabRecombine(name: name, ownWorker: try o.value(LabRecombine.OptionSpecs.worker), mode: try o.value(LabRecombine.OptionSpecs.mode))
            node.pairing = try o.value(PairingChoice.option).policy
            return node
        },
        NodeType(name: "background", role: .composite, summary: "keep the person by a mask, replace the background",
                 ports: ["frame", "mask"], options: BackgroundComposite.OptionSpecs.all) { name, o in
            typealias S = BackgroundComposite.OptionSpecs
            let modeName = try o.value(S.mode)
            let hex = try o.value(S.colour) ?? (modeName == .overlay ? "ff00ff" : "00b140")
            guard hex.count == 6, hex.allSatisfy(\.isHexDigit), let rgb = UInt32(hex, radix: 16) else {
                throw GraphError.invalidOption(node: name, option: "colour", reason: "expected RRGGBB hex, got '\(hex)'")
            }
            let (r, g, b) = (UInt8(truncatingIfNeeded: rgb >> 16), UInt8(truncatingIfNeeded: rgb >> 8), UInt8(truncatingIfNeeded: rgb))
            let mode: BackgroundComposite.Mode
            switch modeName {
            case .blur: mode = .blur(radius: try o.value(S.blur))
            case .image:
                guard let image = try o.inputPath(S.image), !image.isEmpty else {
                    throw GraphError.invalidOption(node: name, option: "image", reason: "mode=image needs image=FILE")
                }
                mode = .image(path: image)
            case .overlay: mode = .overlay(r, g, b)
            case .colour: mode = .colour(r, g, b)
            }
            let node = BackgroundComposite(name: name, mode: mode, ownWorker: try o.value(S.worker))
            node.pairing = try o.value(PairingChoice.option).policy
            return node
        },
        NodeType(name: "annotate", role: .composite,
                 summary: "draw results on the frame: boxes, labels, points, lines, classifications, a status line (hud=true)",
                 ports: ["frame", "results", "results2 …"], options: Annotate.OptionSpecs.all) { name, o in
            typealias S = Annotate.OptionSpecs
            let style = Annotate.Style(thickness: try o.value(S.thickness), textSize: try o.value(S.textSize), pointRadius: try o.value(S.pointRadius),
                                       labels: try o.value(S.labels), hud: try o.value(S.hud), minScore: Float(try o.value(S.minScore)),
                                       font: try o.value(S.font))
            let node = Annotate(name: name, style: style, resultPorts: try o.value(S.resultPorts))
            node.pairing = try o.value(PairingChoice.option).policy
            return node
        },
        NodeType(name: "results", role: .sink, summary: "write results to a JSON Lines file (one line per frame: index, time, detections, landmarks, labels)",
                 options: ResultsSink.OptionSpecs.all) { name, o in
            ResultsSink(name: name, path: try o.required(ResultsSink.OptionSpecs.path), ports: try o.value(ResultsSink.OptionSpecs.ports))
        },
        NodeType(name: "display", role: .sink, summary: "live preview window (SDL2); closing it or pressing q/Escape ends the run like Ctrl-C",
                 options: DisplaySink.OptionSpecs.all) { name, o in
            let given = try o.value(DisplaySink.OptionSpecs.title)
            let file = URL(fileURLWithPath: o.pipelineFile).deletingPathExtension().lastPathComponent
            return DisplaySink(name: name, title: given.flatMap { $0.isEmpty ? nil : $0 } ?? "FrameGraph: \(file)",
                               optional: try o.value(DisplaySink.OptionSpecs.optional))
        },
        NodeType(name: "encode", role: .sink,
                 summary: "video file (.mp4 .mov .mkv .webm; h264 h265 vp9 av1 ffv1 prores) with the source's timing, audio and tags, or an image sequence",
                 options: FileSink.OptionSpecs.all) { name, o in
            typealias S = FileSink.OptionSpecs
            var settings = MediaWriter.Settings(codec: try o.value(S.codec), crf: try o.value(S.crf), bitrate: try o.value(S.bitrate),
                                                preset: try o.value(S.preset), pixelFormat: try o.value(S.pixelFormat),
                                                threads: try o.value(S.threads), audio: try o.value(S.audio))
            settings.tune = try o.value(S.tune)
            return FileSink(name: name, path: try o.required(S.path), settings: settings,
                            timingSource: try o.value(S.timing), jpegQuality: try o.value(S.quality), segments: try o.segmentOptions())
        },
        NodeType(name: "png", role: .sink, summary: "every Nth frame as a PNG (path with %d or %05d)", options: PNGSink.OptionSpecs.all) { name, o in
            PNGSink(name: name, pattern: try o.required(PNGSink.OptionSpecs.path), every: try o.value(PNGSink.OptionSpecs.every))
        },
        NodeType(name: "null", role: .sink, summary: "discard frames (measure without encoding)", options: []) { name, _ in
            NullSink(name: name)
        },
    ])
}

extension OptionValues {
    /// The encode node's continuous-recording options (`segment`, `segment-frames`, `keep`, `keep-bytes`).
    func segmentOptions() throws -> SegmentPlan.Options {
        typealias S = FileSink.OptionSpecs
        return try segmentOptions(seconds: S.segment, frames: S.segmentFrames, keep: S.keep, keepBytes: S.keepBytes, segmented: false)
    }

    /// Segment options from the given specs; `segmented`: the node records anyway (keep applies).
    func segmentOptions(seconds secondsSpec: NodeOption<String?>, frames framesSpec: NodeOption<Int?>, keep keepSpec: NodeOption<String?>,
                        keepBytes keepBytesSpec: NodeOption<String?>, segmented: Bool) throws -> SegmentPlan.Options {
        func read<T>(_ spec: NodeOption<String?>, _ parse: (String) -> T?, _ example: String) throws -> T? {
            guard let text = try value(spec) else { return nil }
            if let v = parse(text) { return v }
            guard let o = option(spec.name) else { return nil }
            throw error(o, "cannot read '\(text.prefix(40))' (e.g. \(example))")
        }
        var options = SegmentPlan.Options(seconds: try read(secondsSpec, SegmentPlan.seconds, "90s, 10m, 1h"), frames: try value(framesSpec),
                                          keepSeconds: try read(keepSpec, SegmentPlan.seconds, "24h, 7d"), keepBytes: try read(keepBytesSpec, SegmentPlan.bytes, "500M, 20G"))
        if !segmented && !options.isSegmented && (options.keepSeconds != nil || options.keepBytes != nil),
           let o = option(keepSpec.name) ?? option(keepBytesSpec.name) {
            throw error(o, "\(keepSpec.name) and \(keepBytesSpec.name) apply to segments: add \(secondsSpec.name)=10m or \(framesSpec.name)=N")
        }
        if options.frames != nil { options.seconds = nil }
        return options
    }

    /// A network node's `scale`/`offset` options as an input normalisation (nil when neither is given:
    /// the model's own).
    func inputNormalization() throws -> InputNormalization? {
        typealias S = NetworkNode.OptionSpecs
        guard has(S.scale.name) || has(S.offset.name) else { return nil }
        return InputNormalization(scale: Float(try value(S.scale) ?? Double(InputNormalization.unit.scale)), offset: Float(try value(S.offset) ?? 0))
    }
}
