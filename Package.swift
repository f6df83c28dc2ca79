// swift-tools-version:6.0
//
// FrameGraph: real-time video machine learning on Linux CPUs.
// Dependency direction is one way: CLI → pipelines → nodes (media, filters) → core (+ C wrappers).
import PackageDescription

let package = Package(
    name: "FrameGraph",
    products: [
        .library(name: "FrameGraph", targets: ["FrameGraph", "FrameGraphMedia", "FrameGraphFilters", "FrameGraphPipelines"]),
        .executable(name: "framegraph", targets: ["framegraph"]),
    ],
    targets: [
        // C surfaces: one system-library target per FFmpeg library (Debian's -dev packages, pkg-config).
        .systemLibrary(name: "CAVUtil", pkgConfig: "libavutil", providers: [.apt(["libavutil-dev"])]),
        .systemLibrary(name: "CAVCodec", pkgConfig: "libavcodec", providers: [.apt(["libavcodec-dev"])]),
        .systemLibrary(name: "CAVFormat", pkgConfig: "libavformat", providers: [.apt(["libavformat-dev"])]),
        .systemLibrary(name: "CSWScale", pkgConfig: "libswscale", providers: [.apt(["libswscale-dev"])]),
        // XNNPACK + pthreadpool: the kernels TensorFlow Lite uses on CPU (no pkg-config file; linked by name).
        // libv4l2 (cameras; MJPEG/YUYV conversion by libv4lconvert) + C shims for the ioctl requests.
        .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2", providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CXNNPACK", providers: [.apt(["libxnnpack-dev", "libpthreadpool-dev"])]),

        // FrameGraph's own C kernels (Lab arithmetic), compiled for baseline x86-64 and AVX2+FMA,
        // chosen at run time.
        .target(name: "CFrameGraphKernels"),
        // Neural-network graph IR: tensors, constants in aligned storage, operations, shape checks.
        .target(name: "NeuralGraph"),
        // TFLite flatbuffers → graph IR (a small FlatBuffers reader of our own).
        .target(name: "TFLiteImport", dependencies: ["NeuralGraph"]),
        // ONNX protobuf → graph IR (a small protobuf reader of our own; NCHW converted to NHWC).
        .target(name: "ONNXImport", dependencies: ["NeuralGraph"]),
        // Runs the graph IR through XNNPACK's subgraph runtime, with own kernels for what it lacks.
        .target(name: "XNNPACKRuntime", dependencies: ["NeuralGraph", "CXNNPACK"]),
        // Core: frames, pixel formats, buffer pool, nodes, graph, scheduler, clocks, stats, tracing.
        .target(name: "FrameGraph"),
        // Thin owning Swift wrappers over FFmpeg (free in deinit, errors thrown with FFmpeg's message).
        .target(name: "FFmpegSupport", dependencies: ["FrameGraph", "CAVUtil", "CAVCodec", "CAVFormat", "CSWScale"]),
        // Sources and sinks: video files in and out, PNG, test pattern.
        .target(name: "FrameGraphMedia", dependencies: ["FrameGraph", "FFmpegSupport"]),
        // Filters: crop, resize, pixel-format conversion, grayscale, alpha blend, slow.
        .target(name: "FrameGraphFilters", dependencies: ["FrameGraph", "FFmpegSupport", "CFrameGraphKernels"]),
        // V4L2 camera source through libv4l2, device listing.
        .target(name: "FrameGraphCamera", dependencies: ["FrameGraph", "CV4L2"]),
        // Network node, output decoders (segmentation mask), composites, model packages.
        .target(name: "FrameGraphInference", dependencies: ["FrameGraph", "FFmpegSupport", "FrameGraphFilters", "FrameGraphMedia", "NeuralGraph", "TFLiteImport", "ONNXImport", "XNNPACKRuntime"]),
        // Pipeline description files: parser, node catalog, builder.
        .target(name: "FrameGraphPipelines", dependencies: ["FrameGraph", "FrameGraphMedia", "FrameGraphFilters", "FrameGraphInference", "FrameGraphCamera"]),
        // The command-line tool.
        // Micro-benchmarks that print figures (Lab conversion …).
        .executableTarget(name: "framegraph-bench", dependencies: ["FrameGraph", "FrameGraphFilters"]),
        .executableTarget(name: "framegraph", dependencies: ["FrameGraphPipelines", "FrameGraphInference", "FrameGraphCamera", "XNNPACKRuntime", "NeuralGraph"]),

        // libFuzzer targets (tools/fuzz/run.sh builds them with -D FUZZING -sanitize=fuzzer,address);
        // a normal build makes them replay tools: `fuzz-tflite FILE…` runs each input once.
        .target(name: "FuzzSupport", dependencies: ["NeuralGraph", "XNNPACKRuntime"], path: "tools/fuzz/targets/FuzzSupport"),
        .executableTarget(name: "fuzz-tflite", dependencies: ["FuzzSupport", "TFLiteImport"], path: "tools/fuzz/targets/fuzz-tflite"),
        .executableTarget(name: "fuzz-onnx", dependencies: ["FuzzSupport", "ONNXImport"], path: "tools/fuzz/targets/fuzz-onnx"),
        .executableTarget(name: "fuzz-pipeline", dependencies: ["FuzzSupport", "FrameGraphPipelines"], path: "tools/fuzz/targets/fuzz-pipeline"),

        // Helpers shared by the test targets: where ../shared and the built CLI are, temp folders.
        .target(name: "TestSupport", dependencies: ["FrameGraph", "FFmpegSupport"], path: "Tests/TestSupport"),
        .testTarget(name: "FrameGraphTests", dependencies: ["FrameGraph", "TestSupport"]),
        .testTarget(name: "FFmpegSupportTests", dependencies: ["FFmpegSupport", "TestSupport"]),
        .testTarget(name: "FrameGraphFiltersTests", dependencies: ["FrameGraphFilters", "FrameGraphMedia", "TestSupport"]),
        .testTarget(name: "FrameGraphPipelinesTests", dependencies: ["FrameGraphPipelines", "TestSupport"]),
        .testTarget(name: "TFLiteImportTests", dependencies: ["TFLiteImport", "FrameGraph", "TestSupport"]),
        .testTarget(name: "XNNPACKRuntimeTests", dependencies: ["XNNPACKRuntime", "TFLiteImport", "TestSupport"]),
        .testTarget(name: "FrameGraphInferenceTests", dependencies: ["FrameGraphInference", "TestSupport"]),
        .testTarget(name: "ONNXImportTests", dependencies: ["ONNXImport", "XNNPACKRuntime", "TestSupport"]),
        .testTarget(name: "CameraTests", dependencies: ["FrameGraphCamera", "FrameGraphPipelines", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["FrameGraphPipelines", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
