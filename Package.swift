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

        // Core: frames, pixel formats, buffer pool, nodes, graph, scheduler, clocks, stats, tracing.
        .target(name: "FrameGraph"),
        // Thin owning Swift wrappers over FFmpeg (free in deinit, errors thrown with FFmpeg's message).
        .target(name: "FFmpegSupport", dependencies: ["FrameGraph", "CAVUtil", "CAVCodec", "CAVFormat", "CSWScale"]),
        // Sources and sinks: video files in and out, PNG, test pattern.
        .target(name: "FrameGraphMedia", dependencies: ["FrameGraph", "FFmpegSupport"]),
        // Filters: crop, resize, pixel-format conversion, grayscale, alpha blend, slow.
        .target(name: "FrameGraphFilters", dependencies: ["FrameGraph", "FFmpegSupport"]),
        // Pipeline description files: parser, node catalog, builder.
        .target(name: "FrameGraphPipelines", dependencies: ["FrameGraph", "FrameGraphMedia", "FrameGraphFilters"]),
        // The command-line tool.
        .executableTarget(name: "framegraph", dependencies: ["FrameGraphPipelines"]),

        // Helpers shared by the test targets: where ../shared and the built CLI are, temp folders.
        .target(name: "TestSupport", dependencies: ["FrameGraph", "FFmpegSupport"], path: "Tests/TestSupport"),
        .testTarget(name: "FrameGraphTests", dependencies: ["FrameGraph"]),
        .testTarget(name: "FFmpegSupportTests", dependencies: ["FFmpegSupport", "TestSupport"]),
        .testTarget(name: "FrameGraphFiltersTests", dependencies: ["FrameGraphFilters", "FrameGraphMedia", "TestSupport"]),
        .testTarget(name: "FrameGraphPipelinesTests", dependencies: ["FrameGraphPipelines", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["FrameGraphPipelines", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
