// framegraph-bench: micro-benchmarks that print figures (no assertions).
//
//   swift run -c release framegraph-bench lab [runs]   640×480 rgb24 → Lab → rgb24 round trip, ms
//   swift run -c release framegraph-bench prep [WxH] [runs]   a network's input preparation from a
//       decoded yuv420p frame (default 1920x1080) to 256×256 rgb24: libswscale (bilinear, accurate)
//       vs ResampleToRGB (one-pass area filter), interleaved, ms
//   swift run -c release framegraph-bench recombine [WxH] [runs]   colorization's recombine: exact
//       Lab per pixel vs the chroma planes only, interleaved, ms
//   swift run -c release framegraph-bench composite [WxH] [runs]   portrait segmentation's composite:
//       a 256×256 mask upsampled to the frame and blended over a solid colour, ms
//   swift run -c release framegraph-bench annotate [WxH] [runs]   the annotate node drawing 10 labelled
//       boxes, 500 landmark points and 5 text lines onto a copy of a yuv420p and an rgb24 frame
//       (default 640x480): drawing alone and with the frame copy, interleaved, ms
//   swift run -c release framegraph-bench region [runs]   the face mesh's rotated 192×192 region
//       sampled from a 640×480 rgb24 frame (OpenCV's fixed-point warp): the scalar build vs the AVX2
//       build, a region inside the frame and one half past its edge, interleaved, µs
//   swift run -c release framegraph-bench rgb [WxH] [runs]   a decoded yuv420p frame (default 640x480,
//       BT.601) to packed RGB as the Python package's items do (RGBConverter .fast): libswscale's
//       fast path vs the project's kernel with the same bytes (FastYUVToRGB), interleaved, ms
import CFrameGraphKernels
import FFmpegSupport
import FrameGraph
import FrameGraphDraw
import FrameGraphFilters
import FrameGraphMedia
import Foundation

func milliseconds(_ body: () -> Void) -> Double {
    let t0 = DispatchTime.now().uptimeNanoseconds
    body()
    return Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
}

/// The median of measured times.
func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }

let arguments = CommandLine.arguments.dropFirst()

/// The `WxH` argument after the benchmark's name (default 1920x1080).
func frameSize() -> (width: Int, height: Int) {
    let size = (arguments.dropFirst().first ?? "1920x1080").split(separator: "x").compactMap { Int($0) }
    return size.count == 2 ? (size[0], size[1]) : (1920, 1080)
}

/// A BT.709 yuv420p frame whose sample at (`x`, `y`) of plane `p` is `value(p, x, y, row width)`.
func yuvFrame(_ w: Int, _ h: Int, _ value: (Int, Int, Int, Int) -> UInt8) -> Frame {
    var frame = Frame.make(.yuv420p, width: w, height: h)
    frame.color = .bt709
    for p in 0..<3 {
        for y in 0..<(p == 0 ? h : h / 2) {
            let row = frame.row(y, plane: p)
            for x in 0..<row.count { row[x] = value(p, x, y, row.count) }
        }
    }
    return frame
}

switch arguments.first {
case "lab":
    let runs = Int(arguments.dropFirst().first ?? "50") ?? 50
    let rgb = Frame.make(.rgb24, width: 640, height: 480)
    var seed: UInt64 = 1
    for y in 0..<480 {
        let row = rgb.row(y)
        for x in 0..<row.count {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            row[x] = UInt8(truncatingIfNeeded: seed >> 56)
        }
    }
    var forward: [Double] = [], backward: [Double] = [], total: [Double] = []
    for _ in 0..<runs {
        var lab: Frame?
        let f = milliseconds { lab = LabColor.labFrame(from: rgb) }
        var back: Frame?
        let b = milliseconds { back = LabColor.rgbFrame(from: lab ?? rgb) }
        _ = back
        forward.append(f)
        backward.append(b)
        total.append(f + b)
    }
    print(String(format: "lab 640x480: rgb→Lab %.3f ms, Lab→rgb %.3f ms, round trip %.3f ms (median of %d)",
                 median(forward), median(backward), median(total), runs))
case "prep":
    let (w, h) = frameSize()
    let runs = Int(arguments.dropFirst(2).first ?? "200") ?? 200
    var seed: UInt64 = 1
    let frame = yuvFrame(w, h) { _, x, _, width in
        seed = seed &* 6364136223846793005 &+ 1442695040888963407
        return UInt8(truncatingIfNeeded: (seed >> 60) &+ UInt64(x * 200 / max(1, width)))
    }
    let a = Frame.make(.rgb24, width: 256, height: 256), b = Frame.make(.rgb24, width: 256, height: 256)
    let scaler = Scaler(method: .bilinear)
    var resample = ResampleToRGB()
    var swscale: [Double] = [], own: [Double] = []
    for _ in 0..<runs {
        swscale.append(milliseconds { try? scaler.scale(frame, into: a) })
        own.append(milliseconds { _ = resample.convert(frame, into: b) })
    }
    let diff = withExtendedLifetime((a, b)) { zip(a.packedBytes(), b.packedBytes()).map { abs(Int($0) - Int($1)) }.reduce(0, +) }
    print(String(format: "prep %dx%d yuv420p → 256x256 rgb24: libswscale %.3f ms, ResampleToRGB %.3f ms (medians of %d, interleaved); mean |difference| %.2f",
                 w, h, median(swscale), median(own), runs, Double(diff) / Double(256 * 256 * 3)))
case "recombine":
    // Colorization's last step at full HD: exact Lab per pixel vs chroma planes only, interleaved.
    let (w, h) = frameSize()
    let runs = Int(arguments.dropFirst(2).first ?? "30") ?? 30
    let frame = yuvFrame(w, h) { p, x, y, _ in UInt8(truncatingIfNeeded: p == 0 ? x / 8 + y / 8 : 128) }
    let ab = Frame.make(.planarFloat32(channels: 2), width: 64, height: 64)
    for p in 0..<2 { for y in 0..<64 { let row = ab.floatRow(y, plane: p); for x in 0..<64 { row[x] = Float(x - 32) * (p == 0 ? 0.5 : -0.3) } } }
    let context = RunContext(options: RunOptions())
    let lab = LabRecombine(name: "lab", mode: .lab), chroma = LabRecombine(name: "chroma", mode: .chroma)
    let inputs = [frame.description, ab.description]
    _ = try? lab.negotiate(inputs: inputs)
    _ = try? chroma.negotiate(inputs: inputs)
    var tLab: [Double] = [], tChroma: [Double] = []
    for _ in 0..<runs {
        tLab.append(milliseconds { _ = try? lab.combine([frame, ab], context: context) })
        tChroma.append(milliseconds { _ = try? chroma.combine([frame, ab], context: context) })
    }
    print(String(format: "recombine %dx%d yuv420p + 64x64 a/b: lab %.2f ms, chroma %.2f ms (medians of %d, interleaved)",
                 w, h, median(tLab), median(tChroma), runs))
case "composite":
    // Portrait segmentation's composite: a 256×256 mask (an upright ellipse, a person's shape, with
    // a 3-pixel soft edge) upsampled to the frame and blended over a solid background.
    let (w, h) = frameSize()
    let runs = Int(arguments.dropFirst(2).first ?? "100") ?? 100
    let frame = yuvFrame(w, h) { p, x, y, _ in UInt8(truncatingIfNeeded: p == 0 ? x / 4 + y / 4 : 100 + x % 50) }
    let mask = Frame.make(.gray8, width: 256, height: 256)
    for y in 0..<256 {
        let row = mask.row(y)
        for x in 0..<256 {
            let d = ((Double(x) - 128) / 70 * (Double(x) - 128) / 70 + (Double(y) - 150) / 110 * (Double(y) - 150) / 110).squareRoot()
            row[x] = UInt8(max(0, min(255, (1 - d) * 110 / 3 * 255)).rounded())
        }
    }
    let context = RunContext(options: RunOptions())
    let matte = BackgroundComposite(name: "matte", mode: .colour(0, 0xb1, 0x40), ownWorker: false)
    _ = try? matte.negotiate(inputs: [frame.description, mask.description])
    try? matte.start(context: context)
    var times: [Double] = []
    for _ in 0..<runs { times.append(milliseconds { _ = try? matte.combine([frame, mask], context: context) }) }
    print(String(format: "composite %dx%d yuv420p + 256x256 mask over a colour: %.3f ms (median of %d)", w, h, median(times), runs))
case "annotate":
    let size = arguments.dropFirst().first.map { _ in frameSize() } ?? (640, 480)
    let (w, h) = size
    let runs = Int(arguments.dropFirst(2).first ?? "200") ?? 200
    // 10 labelled boxes with 6 keypoints each, 500 landmark points in one set (no lines), 5 text lines
    // (4 classifications and the HUD).
    var results = Results(producer: "bench")
    for i in 0..<10 {
        let x = Float(i % 5) * 0.19 + 0.02, y = Float(i / 5) * 0.45 + 0.1
        results.detections.append(Detection(box: ResultBox(x: x, y: y, width: 0.15, height: 0.3), score: 0.9, label: "label \(i)", index: i,
                                            keypoints: (0..<6).map { ResultPoint(x: x + Float($0) * 0.02, y: y + 0.1) }))
    }
    results.landmarks.append(LandmarkSet(label: "mesh", points: (0..<500).map { Landmark(x: Float($0 % 25) / 25 + 0.02, y: Float($0 / 25) / 20 + 0.01) }))
    results.classifications = (0..<4).map { Classification(label: "class \($0)", confidence: 0.5, index: $0) }
    let node = Annotate(name: "bench", style: .init(hud: true), resultPorts: 1)
    let context = RunContext(options: RunOptions())
    for format in [PixelFormat.yuv420p, .rgb24] {
        let frame = Frame.make(format, width: w, height: h)
        for p in 0..<format.planeCount { for y in 0..<format.planeGeometry(p, width: w, height: h).rows { frame.row(y, plane: p).update(repeating: 100) } }
        var carrier = frame
        carrier.results = results
        _ = try node.negotiate(inputs: [frame.description, frame.description])
        let canvas = Frame.make(format, width: w, height: h)
        var drawOnly: [Double] = [], whole: [Double] = []
        for _ in 0..<runs {
            canvas.copyPixels(from: frame)
            drawOnly.append(milliseconds { node.draw([results], on: canvas, hudLine: "30.0 fps · admitted 290 · dropped-busy 12 · latency 41 ms") })
            whole.append(milliseconds { _ = try? node.combine([frame, carrier], context: context) })
        }
        print(String(format: "annotate %dx%d %@: drawing %.3f ms, copy + drawing (the node) %.3f ms (medians of %d, interleaved; 10 boxes, 500 points, 5 text lines)",
                     w, h, format.description, median(drawOnly), median(whole), runs))
    }
case "region":
    let runs = Int(arguments.dropFirst().first ?? "300") ?? 300
    let (w, h) = (640, 480)
    var rng: UInt64 = 1
    let image = (0..<(w * h * 3)).map { _ -> UInt8 in rng = rng &* 6364136223846793005 &+ 1442695040888963407; return UInt8(truncatingIfNeeded: rng >> 33) }
    var out = [Float](repeating: 0, count: 192 * 192 * 3)
    for (label, side, cx, cy) in [("inside", Float(200), Float(320), Float(240)), ("half past the edge", Float(400), Float(320), Float(400))] {
        let angle: Float = 0.2, c = cos(angle), sn = sin(angle), step = side / 192, a0 = -0.5 * side
        let ox = cx + c * a0 - sn * a0, oy = cy + sn * a0 + c * a0
        var scalar: [Double] = [], vector: [Double] = []
        for _ in 0..<runs {
            for simd in [Int32(0), 1] {
                let t = milliseconds {
                    fg_sample_grid_rgb24_with(image, w * 3, Int32(w), Int32(h), ox, oy, c * step, sn * step, -sn * step, c * step, 192, 1 / 255, 0, 0, simd, &out)
                }
                if simd == 0 { scalar.append(t) } else { vector.append(t) }
            }
        }
        print(String(format: "region 192x192 from 640x480 rgb24, %@: scalar %.1f µs, AVX2 %.1f µs (medians of %d, interleaved)",
                     label, median(scalar) * 1000, median(vector) * 1000, runs))
    }
case "rgb":
    let size: (width: Int, height: Int) = arguments.dropFirst().first.map { _ in frameSize() } ?? (640, 480)
    let runs = Int(arguments.dropFirst(2).first ?? "500") ?? 500
    var frame = yuvFrame(size.width, size.height) { p, x, y, _ in UInt8(truncatingIfNeeded: p == 0 ? x &* 3 &+ y : 100 &+ (x ^ y) % 56) }
    frame.color = .bt601
    let scaler = Scaler(method: .bilinear)
    scaler.matchesCommonDecoders = true
    let converter = RGBConverter(.fast)
    let out = Frame.make(.rgb24, width: size.width, height: size.height)
    var tSwscale: [Double] = [], tOwn: [Double] = []
    for _ in 0..<runs {
        tSwscale.append(milliseconds { try? scaler.scale(frame, into: out) })
        tOwn.append(milliseconds { _ = try? converter.rgb(frame) })
    }
    let same = (try? converter.rgb(frame)).map { ours in (0..<size.height).allSatisfy { ours.row($0).elementsEqual(out.row($0)) } } ?? false
    print(String(format: "rgb %dx%d yuv420p BT.601 -> rgb24: swscale fast path %.3f ms, own kernel %.3f ms (medians of %d, interleaved; same bytes: %@)",
                 size.width, size.height, median(tSwscale), median(tOwn), runs, same ? "yes" : "NO"))
default:
    print("usage: framegraph-bench lab [runs] | prep [WxH] [runs] | recombine [WxH] [runs] | annotate [WxH] [runs] | region [runs] | rgb [WxH] [runs]")
}
