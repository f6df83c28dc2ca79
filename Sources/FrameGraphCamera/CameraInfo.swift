import CV4L2
import Foundation

/// What a camera offers: driver, card name, and every native format with its frame sizes and
/// frame intervals, as the driver enumerates them (`framegraph devices` prints this).
///
/// ```swift
/// for path in CameraInfo.candidatePaths() {
///     if let info = try? CameraInfo.probe(path: path) { print(info.summary()) }
/// }
/// ```
public struct CameraInfo: Sendable, Equatable {
    /// One native pixel format.
    public struct Format: Sendable, Equatable {
        /// Four-character code, e.g. "YUYV", "MJPG".
        public var fourcc: String
        /// The driver's description, e.g. "YUYV 4:2:2".
        public var name: String
        /// Whether frames are compressed (MJPEG).
        public var compressed: Bool
        public var sizes: [Size]
        /// The raw V4L2 code.
        public var code: UInt32

        public init(fourcc: String, name: String, compressed: Bool, sizes: [Size], code: UInt32) {
            self.fourcc = fourcc
            self.name = name
            self.compressed = compressed
            self.sizes = sizes
            self.code = code
        }
    }

    /// One frame size, with its frame rates.
    public struct Size: Sendable, Equatable {
        public var width: Int
        public var height: Int
        /// Frame intervals as fractions of a second (numerator, denominator), fastest first.
        public var intervals: [Interval]
        /// For a stepwise/continuous size range: text such as "160x120 … 1920x1080 (step 2x2)".
        public var range: String?
        /// For stepwise/continuous intervals: text such as "1 … 60 fps".
        public var intervalRange: String?

        public init(width: Int, height: Int, intervals: [Interval], range: String? = nil, intervalRange: String? = nil) {
            self.width = width
            self.height = height
            self.intervals = intervals
            self.range = range
            self.intervalRange = intervalRange
        }

        /// Whether `fps` is among the offered rates (within 0.5 fps), or inside the interval range.
        public func offers(fps: Double) -> Bool {
            if intervalRange != nil { return true }
            return intervals.contains { abs($0.fps - fps) < 0.5 }
        }
    }

    /// Seconds per frame as a fraction.
    public struct Interval: Sendable, Equatable {
        public var numerator: Int
        public var denominator: Int

        public init(numerator: Int, denominator: Int) {
            self.numerator = numerator
            self.denominator = denominator
        }

        /// Frames per second.
        public var fps: Double { numerator > 0 ? Double(denominator) / Double(numerator) : 0 }
    }

    public var path: String
    public var driver: String
    public var card: String
    public var busInfo: String
    /// Whether it captures video with streaming I/O (a UVC camera's metadata node does not).
    public var isVideoCapture: Bool
    public var formats: [Format]

    /// Opens `path` briefly and reads what it offers.
    public static func probe(path: String) throws -> CameraInfo {
        let device = try V4L2Device(path: path)
        let cap = try device.capabilities()
        let isCapture = isStreamingCapture(cap)
        return CameraInfo(path: path, driver: V4L2Device.string(cap.driver), card: V4L2Device.string(cap.card),
                          busInfo: V4L2Device.string(cap.bus_info), isVideoCapture: isCapture,
                          formats: isCapture ? formats(of: device) : [])
    }

    /// Whether `cap` describes a video capture device with streaming I/O.
    static func isStreamingCapture(_ cap: v4l2_capability) -> Bool {
        let caps = cap.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities
        return caps & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 && caps & UInt32(V4L2_CAP_STREAMING) != 0
    }

    /// The native formats of an open device, with sizes and intervals.
    static func formats(of device: V4L2Device) -> [Format] {
        var formats: [Format] = []
        for desc in device.nativeFormats() {
            var sizes: [Size] = []
            for s in device.frameSizes(desc.pixelformat) {
                if s.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                    let w = s.discrete.width, h = s.discrete.height
                    sizes.append(size(device: device, code: desc.pixelformat, width: w, height: h, range: nil))
                } else {
                    let sw = s.stepwise
                    let text = "\(sw.min_width)x\(sw.min_height) … \(sw.max_width)x\(sw.max_height) (step \(sw.step_width)x\(sw.step_height))"
                    sizes.append(size(device: device, code: desc.pixelformat, width: sw.max_width, height: sw.max_height, range: text))
                }
            }
            formats.append(Format(fourcc: V4L2Device.fourcc(desc.pixelformat), name: V4L2Device.string(desc.description),
                                  compressed: desc.flags & UInt32(V4L2_FMT_FLAG_COMPRESSED) != 0,
                                  sizes: sizes, code: desc.pixelformat))
        }
        return formats
    }

    private static func size(device: V4L2Device, code: UInt32, width: UInt32, height: UInt32, range: String?) -> Size {
        var intervals: [Interval] = []
        var intervalRange: String?
        for i in device.frameIntervals(code, width: width, height: height) {
            if i.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
                intervals.append(Interval(numerator: Int(i.discrete.numerator), denominator: Int(i.discrete.denominator)))
            } else {
                let slow = Interval(numerator: Int(i.stepwise.max.numerator), denominator: Int(i.stepwise.max.denominator))
                let fast = Interval(numerator: Int(i.stepwise.min.numerator), denominator: Int(i.stepwise.min.denominator))
                intervalRange = String(format: "%g … %g fps", slow.fps, fast.fps)
            }
        }
        intervals.sort { $0.fps > $1.fps }
        return Size(width: Int(width), height: Int(height), intervals: intervals, range: range, intervalRange: intervalRange)
    }

    /// Where to look for cameras: every `/dev/videoN` (in numeric order), then the colon-separated
    /// paths of `$FRAMEGRAPH_CAMERAS` (how tests point at the emulated camera), without repeats.
    public static func candidatePaths(environment: [String: String] = ProcessInfo.processInfo.environment,
                                      deviceDirectory: String = "/dev") -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: deviceDirectory)) ?? []
        let numbered = names.compactMap { name -> (Int, String)? in
            guard name.hasPrefix("video"), let n = Int(name.dropFirst(5)) else { return nil }
            return (n, deviceDirectory + "/" + name)
        }.sorted { $0.0 < $1.0 }.map(\.1)
        let extra = (environment["FRAMEGRAPH_CAMERAS"] ?? "").split(separator: ":").map(String.init).filter { !$0.isEmpty }
        var seen: Set<String> = []
        return (numbered + extra).filter { seen.insert($0).inserted }
    }

    /// Native format names, for error messages ("YUYV 640x480@30").
    public var offeredDescriptions: [String] {
        formats.map { f in
            let sizes = f.sizes.map { s in s.range ?? "\(s.width)x\(s.height)" }
            return "\(f.fourcc) (\(sizes.joined(separator: ", ")))"
        }
    }

    /// Human-readable listing: one header line, then formats, sizes and frame rates indented.
    public func summary() -> String {
        var lines = ["\(path): \(card.isEmpty ? "(no name)" : card) — driver \(driver)\(busInfo.isEmpty ? "" : ", bus \(busInfo)")"]
        if !isVideoCapture {
            lines.append("  not a video capture device (e.g. a camera's metadata node); not usable as a source")
            return lines.joined(separator: "\n")
        }
        if formats.isEmpty { lines.append("  no formats enumerated") }
        for f in formats {
            lines.append("  \(f.fourcc)  \(f.name)\(f.compressed ? " (compressed)" : "")")
            for s in f.sizes {
                let rates = s.intervalRange ?? s.intervals.map { i in
                    i.fps.rounded() == i.fps ? "\(Int(i.fps))" : String(format: "%.2f", i.fps)
                }.joined(separator: ", ") + " fps"
                let intervals = s.intervals.map { "\($0.numerator)/\($0.denominator) s" }.joined(separator: ", ")
                lines.append("    \(s.range ?? "\(s.width)x\(s.height)")  \(rates)\(intervals.isEmpty ? "" : "  (intervals \(intervals))")")
            }
        }
        return lines.joined(separator: "\n")
    }
}
