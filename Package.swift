// swift-tools-version:6.0
//
// FrameGraph: real-time video machine learning on Linux CPUs.
// Dependency direction is one way: CLI → pipelines → nodes (media, filters) → core (+ C wrappers).
import PackageDescription

let package = Package(
    name: "FrameGraph",
    products: [
        // One library with everything a program needs: `import FrameGraph` for the core, and the
        // modules of the parts it uses (FrameGraphMedia, FrameGraphFilters, FrameGraphNetwork,
        // FrameGraphFaces, FrameGraphLabeling, FrameGraphMetalTensor, FrameGraphCamera,
        // FrameGraphPipelines, FrameGraphModels, NeuralGraph, XNNPACKRuntime).
        .library(name: "FrameGraph", targets: ["FrameGraph", "FrameGraphResults", "SafeFiles", "FFmpegSupport", "FrameGraphMedia", "FrameGraphFilters", "FrameGraphCamera",
                                               "NeuralGraph", "TFLiteImport", "ONNXImport", "MetalTensorImport", "XNNPACKRuntime", "ModelFormats",
                                               "ModelDeployment", "FrameGraphModels", "FrameGraphNetwork", "FrameGraphFaces", "FrameGraphBodies", "FrameGraphLabeling",
                                               "FrameGraphMetalTensor", "FrameGraphPipelines", "FrameGraphDraw", "FrameGraphDisplay", "FrameGraphServe"]),
        .executable(name: "framegraph", targets: ["framegraph"]),
        // The C ABI (libFrameGraphC.so) that the Python package (python/) loads with ctypes.
        .library(name: "FrameGraphC", type: .dynamic, targets: ["FrameGraphC"]),
    ],
    targets: [
        // C surfaces: one system-library target per FFmpeg library (Debian's -dev packages, pkg-config).
        .systemLibrary(name: "CAVUtil", pkgConfig: "libavutil", providers: [.apt(["libavutil-dev"])]),
        .systemLibrary(name: "CAVCodec", pkgConfig: "libavcodec", providers: [.apt(["libavcodec-dev"])]),
        .systemLibrary(name: "CAVFormat", pkgConfig: "libavformat", providers: [.apt(["libavformat-dev"])]),
        .systemLibrary(name: "CSWScale", pkgConfig: "libswscale", providers: [.apt(["libswscale-dev"])]),
        .systemLibrary(name: "CSWResample", pkgConfig: "libswresample", providers: [.apt(["libswresample-dev"])]),
        // XNNPACK + pthreadpool: the kernels TensorFlow Lite uses on CPU (no pkg-config file; linked by name).
        // libv4l2 (cameras; MJPEG/YUYV conversion by libv4lconvert) + C shims for the ioctl requests.
        .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2", providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CXNNPACK", providers: [.apt(["libxnnpack-dev", "libpthreadpool-dev"])]),
        // FreeType (label text on annotated video) and SDL2 (the live preview window).
        .systemLibrary(name: "CFreeType", pkgConfig: "freetype2", providers: [.apt(["libfreetype-dev"])]),
        .systemLibrary(name: "CSDL2", providers: [.apt(["libsdl2-dev"])]),
        // zlib: deflate entries of the zip archives behind TFLite models' metadata.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // Model deployment: OpenSSL's libcrypto (AES-256-GCM archives, Ed25519-signed manifests, SHA-256)
        // and libcurl (HTTPS downloads), called through CModelDeployment's typed wrappers.
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "CModelDeployment", dependencies: ["COpenSSL", "CCurl"],
                linkerSettings: [.linkedLibrary("crypto"), .linkedLibrary("curl")]),

        // FrameGraph's own C kernels (convolutions: dense, depthwise, int8 VNNI, banded blocks;
        // resize, region sampling, input resampling, blend, Lab, chroma recombination …), each built for
        // baseline x86-64, AVX2+FMA and, where it pays, AVX-512F, chosen at run time.
        .target(name: "CFrameGraphKernels"),
        // Neural-network graph IR: tensors, constants in aligned storage, operations, shape checks.
        .target(name: "NeuralGraph"),
        // TFLite flatbuffers → graph IR (a small FlatBuffers reader of our own).
        .target(name: "TFLiteImport", dependencies: ["NeuralGraph", "CZlib"]),
        // ONNX protobuf → graph IR (a small protobuf reader of our own; NCHW converted to NHWC).
        .target(name: "ONNXImport", dependencies: ["NeuralGraph"]),
        // MetalTensor plist + json + bin → graph IR (plist reader, MPS window rules, float16 emulation).
        .target(name: "MetalTensorImport", dependencies: ["NeuralGraph", "CZlib"]),
        // Runs the graph IR through XNNPACK's subgraph runtime, with own kernels for what it lacks.
        .target(name: "XNNPACKRuntime", dependencies: ["NeuralGraph", "CXNNPACK", "CFrameGraphKernels"]),
        // What a frame's results are (detections, landmarks, labels), landmark topologies, and the
        // results file format (JSON Lines); no frames, no dependencies.
        .target(name: "FrameGraphResults"),
        // JPEG pictures from Y'CbCr planes through libjpeg-turbo (Debian's libjpeg62-turbo-dev): the live
        // view's encoder, with libjpeg's longjmp errors caught in C.
        .target(name: "CJPEGTurbo", linkerSettings: [.linkedLibrary("jpeg")]),
        // Files written safely: a temporary file created exclusively (no symlink followed, final
        // permissions from the start) beside the destination, renamed into place when complete.
        .target(name: "CSafeFiles"),
        .target(name: "SafeFiles", dependencies: ["CSafeFiles"]),
        // Ctrl-C, SIGTERM and SIGHUP caught from before main (a constructor), for the CLI only.
        .target(name: "CInterrupts", dependencies: ["CSafeFiles"]),
        // Core: frames, pixel formats, buffer pool, nodes, graph, scheduler, clocks, stats, tracing.
        .target(name: "FrameGraph", dependencies: ["FrameGraphResults", "SafeFiles"]),
        // Thin owning Swift wrappers over FFmpeg (free in deinit, errors thrown with FFmpeg's message).
        .target(name: "FFmpegSupport", dependencies: ["FrameGraph", "CAVUtil", "CAVCodec", "CAVFormat", "CSWScale", "CSWResample"]),
        // Sources and sinks: video files in and out, PNG, test pattern.
        .target(name: "FrameGraphMedia", dependencies: ["FrameGraph", "FFmpegSupport", "CFrameGraphKernels"]),
        // Filters: crop, resize, pixel-format conversion, grayscale, alpha blend, Lab, background composite.
        .target(name: "FrameGraphFilters", dependencies: ["FrameGraph", "FFmpegSupport", "CFrameGraphKernels"]),
        // V4L2 camera source through libv4l2, device listing.
        .target(name: "FrameGraphCamera", dependencies: ["FrameGraph", "CV4L2"]),
        // Model files: the format told by content (magic bytes), imported into the graph IR.
        .target(name: "ModelFormats", dependencies: ["NeuralGraph", "TFLiteImport", "ONNXImport", "MetalTensorImport"]),
        // Drawing results on frames: boxes, points, lines, FreeType text; the annotate composite.
        .target(name: "FrameGraphDraw", dependencies: ["FrameGraph", "CFreeType"]),
        // The live preview window (SDL2): the display sink.
        .target(name: "FrameGraphDisplay", dependencies: ["FrameGraph", "CSDL2"]),
        // Watching a run over HTTP (`--serve`): a small HTTP/1.1 server over POSIX sockets (bounded
        // request parsing, bounded per-client buffers), Prometheus metrics, JPEG/MJPEG pictures,
        // Server-Sent Events, the dashboard page; and the run report page (`framegraph report`).
        .target(name: "FrameGraphServe", dependencies: ["FrameGraph", "FrameGraphResults", "FFmpegSupport", "CJPEGTurbo"]),
        // Model deployment: archives (encrypted or not), signed collections with targeting rules, the
        // machine's cache, downloads, key fetching.
        .target(name: "ModelDeployment", dependencies: ["ModelFormats", "NeuralGraph", "MetalTensorImport", "CModelDeployment", "SafeFiles"]),
        // The model service a run carries: search path, format by content, limits, archives and hosted
        // collections (with fallback), imported graphs shared between nodes, typed errors; ModelUser.
        .target(name: "FrameGraphModels", dependencies: ["ModelFormats", "ModelDeployment", "NeuralGraph", "MetalTensorImport"]),
        // The generic network node (a model on its own worker), input preparation, precision, output
        // decoders (mask, colour) and the detector machinery (anchors, box decoding, NMS, rotated
        // regions, one-euro smoothing) that domain modules build on.
        .target(name: "FrameGraphNetwork", dependencies: ["FrameGraph", "FFmpegSupport", "FrameGraphFilters", "NeuralGraph", "FrameGraphModels", "ModelFormats",
                                                        "ModelDeployment", "XNNPACKRuntime", "MetalTensorImport", "CFrameGraphKernels"]),
        // Faces as MediaPipe finds them: BlazeFace detection, the 468-point face mesh, tracking.
        .target(name: "FrameGraphFaces", dependencies: ["FrameGraph", "FrameGraphNetwork", "FrameGraphModels", "NeuralGraph", "XNNPACKRuntime"]),
        // Hands and bodies as MediaPipe finds them: palm detection and 21 hand landmarks with handedness,
        // pose detection and 33 pose landmarks with visibility, tracked and smoothed; their topologies.
        .target(name: "FrameGraphBodies", dependencies: ["FrameGraph", "FrameGraphNetwork", "FrameGraphModels", "NeuralGraph", "XNNPACKRuntime", "CFrameGraphKernels"]),
        // Image labeling as ML Kit does it: classifier metadata, labels, calibration, the labeler API.
        .target(name: "FrameGraphLabeling", dependencies: ["FrameGraph", "FrameGraphNetwork", "FrameGraphModels", "ModelFormats", "ModelDeployment", "NeuralGraph",
                                                         "ONNXImport", "TFLiteImport", "XNNPACKRuntime", "FFmpegSupport"]),
        // MetalTensor's models as nodes: MetalNeuralNetwork, the face demo with its SSD decoding.
        .target(name: "FrameGraphMetalTensor", dependencies: ["FrameGraph", "FrameGraphNetwork", "FrameGraphModels", "MetalTensorImport", "NeuralGraph",
                                                            "XNNPACKRuntime"]),
        // Pipeline description files: parser, node catalog, builder; the run options (one table for the CLI and
        // the C library) and what they change; hosted models' update checks during a run.
        .target(name: "FrameGraphPipelines", dependencies: ["FrameGraph", "FFmpegSupport", "FrameGraphMedia", "FrameGraphFilters", "FrameGraphCamera",
                                                              "FrameGraphDraw", "FrameGraphDisplay", "FrameGraphModels", "FrameGraphNetwork",
                                                              "FrameGraphFaces", "FrameGraphBodies", "FrameGraphLabeling", "FrameGraphMetalTensor",
                                                              "FrameGraphServe", "ModelDeployment"]),
        // The C ABI over a run (`@_cdecl` entry points: open a pipeline as the CLI builds it, pull frames
        // and results, stop, stats): what the Python package loads. C pointers live only in Exports.swift.
        .target(name: "FrameGraphC", dependencies: ["FrameGraph", "FrameGraphPipelines", "FrameGraphMedia", "FrameGraphModels", "NeuralGraph",
                                                  "FrameGraphLabeling", "FrameGraphNetwork", "FFmpegSupport", "FrameGraphServe", "ModelDeployment"]),
        // Micro-benchmarks that print figures (Lab conversion …).
        .executableTarget(name: "framegraph-bench", dependencies: ["FrameGraph", "FrameGraphFilters", "FFmpegSupport", "FrameGraphDraw", "CFrameGraphKernels", "FrameGraphMedia"]),
        // The command-line tool.
        .executableTarget(name: "framegraph", dependencies: ["FrameGraph", "FrameGraphPipelines", "FrameGraphCamera", "FrameGraphModels",
                                                             "FrameGraphNetwork", "FrameGraphFaces", "FrameGraphLabeling", "FrameGraphMetalTensor",
                                                             "XNNPACKRuntime", "NeuralGraph", "ModelFormats", "FrameGraphMedia", "FrameGraphDisplay", "TFLiteImport",
                                                             "ModelDeployment", "FFmpegSupport", "CInterrupts", "FrameGraphServe"]),

        // Small programs that use FrameGraph as a library (samples/README.md); the tests build and run them.
        .executableTarget(name: "sample-chain", dependencies: ["FrameGraph", "FrameGraphCamera", "FrameGraphFilters", "FrameGraphNetwork",
                                                               "FrameGraphMedia"], path: "samples/ChainInCode"),
        .executableTarget(name: "sample-colorize", dependencies: ["FrameGraph", "FrameGraphFilters", "FrameGraphNetwork", "FrameGraphMedia"],
                          path: "samples/ColorizeFile"),
        .executableTarget(name: "sample-segment-callback", dependencies: ["FrameGraph", "FrameGraphNetwork", "FrameGraphMedia"],
                          path: "samples/SegmentWithCallback"),

        .executableTarget(name: "sample-metaltensor", dependencies: ["FrameGraph", "FrameGraphFilters", "FrameGraphMetalTensor", "FrameGraphMedia"],
                          path: "samples/MetalTensorNetwork"),
        .executableTarget(name: "sample-label-images", dependencies: ["FrameGraph", "FrameGraphLabeling", "FFmpegSupport"],
                          path: "samples/LabelImages"),
        .executableTarget(name: "sample-face-results", dependencies: ["FrameGraph", "FrameGraphFaces", "FrameGraphMedia"],
                          path: "samples/FaceResults"),
        .executableTarget(name: "sample-raised-hand", dependencies: ["FrameGraph", "FrameGraphBodies", "FrameGraphMedia"],
                          path: "samples/RaisedHand"),

        // libFuzzer targets (tools/fuzz/run.sh builds them with -D FUZZING -sanitize=fuzzer,address);
        // a normal build makes them replay tools: `fuzz-tflite FILE…` runs each input once.
        .target(name: "FuzzSupport", dependencies: ["NeuralGraph", "XNNPACKRuntime"], path: "tools/fuzz/targets/FuzzSupport"),
        .executableTarget(name: "fuzz-tflite", dependencies: ["FuzzSupport", "TFLiteImport"], path: "tools/fuzz/targets/fuzz-tflite"),
        .executableTarget(name: "fuzz-onnx", dependencies: ["FuzzSupport", "ONNXImport"], path: "tools/fuzz/targets/fuzz-onnx"),
        .executableTarget(name: "fuzz-metaltensor", dependencies: ["FuzzSupport", "MetalTensorImport"], path: "tools/fuzz/targets/fuzz-metaltensor"),
        .executableTarget(name: "fuzz-exif", dependencies: ["FuzzSupport", "FFmpegSupport"], path: "tools/fuzz/targets/fuzz-exif"),
        .executableTarget(name: "fuzz-metadata", dependencies: ["FuzzSupport", "TFLiteImport"], path: "tools/fuzz/targets/fuzz-metadata"),
        .executableTarget(name: "fuzz-results", dependencies: ["FuzzSupport", "FrameGraph", "FrameGraphResults", "FrameGraphDraw"], path: "tools/fuzz/targets/fuzz-results"),
        .executableTarget(name: "fuzz-pipeline", dependencies: ["FuzzSupport", "FrameGraphPipelines"], path: "tools/fuzz/targets/fuzz-pipeline"),
        .executableTarget(name: "fuzz-http", dependencies: ["FuzzSupport", "FrameGraphServe"], path: "tools/fuzz/targets/fuzz-http"),
        .executableTarget(name: "fuzz-streamurl", dependencies: ["FuzzSupport", "FrameGraph"], path: "tools/fuzz/targets/fuzz-streamurl"),
        .executableTarget(name: "fuzz-deployment", dependencies: ["FuzzSupport", "ModelDeployment"], path: "tools/fuzz/targets/fuzz-deployment"),

        // Helpers shared by the test targets: where ../shared and the built CLI are, temp folders.
        .target(name: "TestSupport", dependencies: ["FrameGraph", "FFmpegSupport"], path: "Tests/TestSupport"),
        .testTarget(name: "FrameGraphTests", dependencies: ["FrameGraph", "TestSupport"]),
        .testTarget(name: "FrameGraphResultsTests", dependencies: ["FrameGraphResults", "FrameGraph", "FrameGraphDraw", "FrameGraphMedia", "TestSupport"]),
        .testTarget(name: "FFmpegSupportTests", dependencies: ["FFmpegSupport", "TestSupport"]),
        .testTarget(name: "FrameGraphFiltersTests", dependencies: ["FrameGraphFilters", "FrameGraph", "FFmpegSupport", "FrameGraphMedia", "CFrameGraphKernels", "TestSupport"]),
        .testTarget(name: "FrameGraphPipelinesTests", dependencies: ["FrameGraphPipelines", "FrameGraphModels", "FrameGraphMedia", "TestSupport"]),
        .testTarget(name: "TFLiteImportTests", dependencies: ["TFLiteImport", "FrameGraph", "TestSupport"]),
        .testTarget(name: "XNNPACKRuntimeTests", dependencies: ["XNNPACKRuntime", "TFLiteImport", "ONNXImport", "ModelFormats", "CFrameGraphKernels", "TestSupport"]),
        .testTarget(name: "ONNXImportTests", dependencies: ["ONNXImport", "XNNPACKRuntime", "TestSupport"]),
        .testTarget(name: "MetalTensorImportTests", dependencies: ["MetalTensorImport", "NeuralGraph", "XNNPACKRuntime", "FrameGraph", "FrameGraphNetwork",
                                                                 "FFmpegSupport", "TestSupport"]),
        .testTarget(name: "FrameGraphModelsTests", dependencies: ["FrameGraphModels", "ModelFormats", "ModelDeployment", "NeuralGraph", "TestSupport"]),
        .testTarget(name: "FrameGraphNetworkTests", dependencies: ["FrameGraphNetwork", "FrameGraphModels", "FrameGraph", "FFmpegSupport", "FrameGraphFilters",
                                                                 "FrameGraphMedia", "NeuralGraph", "ModelFormats", "XNNPACKRuntime", "TestSupport"]),
        .testTarget(name: "FrameGraphFacesTests", dependencies: ["FrameGraphFaces", "FrameGraphNetwork", "FrameGraph", "FFmpegSupport", "FrameGraphMedia", "TestSupport"]),
        .testTarget(name: "FrameGraphBodiesTests", dependencies: ["FrameGraphBodies", "FrameGraphNetwork", "FrameGraph", "FFmpegSupport", "FrameGraphMedia",
                                                               "FrameGraphPipelines", "XNNPACKRuntime", "TestSupport"]),
        .testTarget(name: "FrameGraphLabelingTests", dependencies: ["FrameGraphLabeling", "FrameGraphNetwork", "FrameGraphModels", "FrameGraph", "FFmpegSupport",
                                                                  "ModelFormats", "NeuralGraph", "XNNPACKRuntime", "TestSupport"]),
        .testTarget(name: "FrameGraphMetalTensorTests", dependencies: ["FrameGraphMetalTensor", "FrameGraphNetwork", "MetalTensorImport", "NeuralGraph", "XNNPACKRuntime",
                                                                     "FrameGraph", "FrameGraphMedia", "FrameGraphFilters", "FFmpegSupport", "TestSupport"]),
        .testTarget(name: "FrameGraphCameraTests", dependencies: ["FrameGraphCamera", "FrameGraphPipelines", "TestSupport"]),
        .testTarget(name: "FrameGraphDrawTests", dependencies: ["FrameGraph", "FrameGraphDraw", "TestSupport"]),
        .testTarget(name: "FrameGraphDisplayTests", dependencies: ["FrameGraph", "FrameGraphDisplay", "TestSupport"]),
        .testTarget(name: "FrameGraphServeTests", dependencies: ["FrameGraphServe", "FrameGraph", "FrameGraphResults", "FFmpegSupport", "TestSupport"]),
        .testTarget(name: "ModelDeploymentTests", dependencies: ["ModelDeployment", "ModelFormats", "NeuralGraph", "FrameGraph", "TestSupport"]),
        // The CLI's own parts (model compare's arithmetic), tested inside the executable.
        .testTarget(name: "FrameGraphCLITests", dependencies: ["framegraph", "FrameGraph", "FFmpegSupport", "XNNPACKRuntime", "TestSupport"]),
        // The built CLI run as a user runs it: pipelines, files, safety, the docs' commands.
        .testTarget(name: "EndToEndTests", dependencies: ["FrameGraphPipelines", "FrameGraph", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
