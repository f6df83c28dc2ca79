/// Where each pass of a looping source starts, in the frames' media time (pass 0 at 0): the source
/// appends as it starts a pass, the sink's stream copier reads it to start the sound's next pass at
/// the same instant.
public final class LoopPasses: Sendable {
    private let starts = Protected<[Double]>([0])
    public init() {}
    /// Records the start of the next pass.
    public func begin(at start: Double) { starts.withLock { $0.append(start) } }
    /// The start of pass `n`, if it has begun.
    public func start(of n: Int) -> Double? { starts.withLock { n < $0.count ? $0[n] : nil } }
}

/// Where a source's frames come from, for the sinks that keep the input's timing, sound and tags
/// (the `encode` node): the file, its video time base and rate, the part of it that is read, its
/// colour, and the rotation left for the player.
public struct MediaOrigin: Sendable {
    /// The input file (or image-sequence pattern).
    public var path: String
    /// The video stream's time base, as numerator and denominator (seconds per tick).
    public var timeBase: (numerator: Int32, denominator: Int32)
    /// Average frame rate (frames per second; 0 when unknown).
    public var frameRate: Double
    /// Whether the frame rate is constant.
    public var constantRate: Bool
    /// Media time of the input's first video frame, in seconds of the file's own clock (the file's
    /// start offset; frames' `mediaTime` counts from it).
    public var videoStart: Double
    /// The part read: skip this many seconds, then read `duration` seconds (nil: to the end).
    public var windowStart: Double
    public var windowDuration: Double?
    /// Whether the source loops (other streams are then not copied: their timing would repeat).
    public var loops: Bool
    /// The video stream's colour tags, resolved by convention where the file says nothing.
    public var color: ColorDescription
    /// Clockwise rotation the output should carry for players (0 when the source turned the frames).
    public var rotation: Int
    /// Whether the input is an image sequence (no other streams).
    public var isImageSequence: Bool
    /// A looping source's pass starts (nil when it does not loop).
    public var passes: LoopPasses?

    public init(path: String, timeBase: (numerator: Int32, denominator: Int32), frameRate: Double, constantRate: Bool, videoStart: Double,
                windowStart: Double, windowDuration: Double?, loops: Bool, color: ColorDescription, rotation: Int, isImageSequence: Bool,
                passes: LoopPasses? = nil) {
        self.path = path
        self.timeBase = timeBase
        self.frameRate = frameRate
        self.constantRate = constantRate
        self.videoStart = videoStart
        self.windowStart = windowStart
        self.windowDuration = windowDuration
        self.loops = loops
        self.color = color
        self.rotation = rotation
        self.isImageSequence = isImageSequence
        self.passes = passes
    }
}
