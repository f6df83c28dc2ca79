import Foundation
import FrameGraph
import FrameGraphCamera

/// `framegraph devices`: every camera (each /dev/videoN, then the paths in $FRAMEGRAPH_CAMERAS) with
/// driver, card name, native formats, frame sizes and frame intervals. A path that cannot be opened
/// gets one line saying why; the command still lists the others.
struct DevicesCommand {
    let arguments: Arguments


    func execute() -> Int32 {
        let paths = arguments.positional.count > 1 ? Array(arguments.positional.dropFirst()) : CameraInfo.candidatePaths()
        guard !paths.isEmpty else {
            print("no cameras found (looked at /dev/video* and $FRAMEGRAPH_CAMERAS, a colon-separated list of device paths)")
            return 0
        }
        var usable = 0
        for (i, path) in paths.enumerated() {
            if i > 0 { print("") }
            do {
                let info = try CameraInfo.probe(path: path)
                if info.isVideoCapture { usable += 1 }
                print(info.summary())
            } catch {
                print("\(path): \(describe(error))")
            }
        }
        print("")
        print("\(usable) camera\(usable == 1 ? "" : "s") usable as a source (framegraph run PIPELINE --camera PATH); "
              + "frames are converted to yuv420p or rgb24 by libv4lconvert")
        return 0
    }
}
