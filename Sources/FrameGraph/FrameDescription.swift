/// What a port carries: pixel format and size. Nodes agree on these before the first frame
/// (see ``Node/negotiate(inputs:)``), so a mismatch is reported by name before anything runs.
public struct FrameDescription: Hashable, Sendable, CustomStringConvertible {
    public var format: PixelFormat
    public var width: Int
    public var height: Int

    public init(format: PixelFormat, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height) \(format)" }
}
