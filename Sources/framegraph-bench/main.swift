// framegraph-bench: micro-benchmarks that print figures (no assertions).
//
//   swift run -c release framegraph-bench lab [runs]   640×480 rgb24 → Lab → rgb24 round trip, ms
import FrameGraph
import FrameGraphFilters
import Foundation

func milliseconds(_ body: () -> Void) -> Double {
    let t0 = DispatchTime.now().uptimeNanoseconds
    body()
    return Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
}

let arguments = CommandLine.arguments.dropFirst()
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
    func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
    print(String(format: "lab 640x480: rgb→Lab %.3f ms, Lab→rgb %.3f ms, round trip %.3f ms (median of %d)",
                 median(forward), median(backward), median(total), runs))
default:
    print("usage: framegraph-bench lab [runs]")
}
