/// Where one plane of a frame lives inside its ``PixelBuffer``.
public struct PlaneLayout: Hashable, Sendable {
    /// Byte offset of the plane's first row from the start of the buffer.
    public var offset: Int
    /// Bytes from one row to the next (at least the row's pixel bytes; often padded).
    public var stride: Int

    public init(offset: Int, stride: Int) {
        self.offset = offset
        self.stride = stride
    }
}

/// Up to four plane layouts, stored inline so that a frame allocates no array.
public struct PlaneLayouts: Hashable, Sendable {
    public var count: Int
    private var p0 = PlaneLayout(offset: 0, stride: 0)
    private var p1 = PlaneLayout(offset: 0, stride: 0)
    private var p2 = PlaneLayout(offset: 0, stride: 0)
    private var p3 = PlaneLayout(offset: 0, stride: 0)

    public init(_ layouts: [PlaneLayout]) {
        precondition(layouts.count <= 4, "at most 4 planes are stored inline")
        count = layouts.count
        for (i, l) in layouts.enumerated() { self[i] = l }
    }

    /// `count` empty layouts, to fill with the subscript (no array needed).
    public init(count: Int) {
        precondition(count <= 4, "at most 4 planes are stored inline")
        self.count = count
    }

    public subscript(_ i: Int) -> PlaneLayout {
        get {
            switch i {
            case 0: return p0
            case 1: return p1
            case 2: return p2
            default: return p3
            }
        }
        set {
            switch i {
            case 0: p0 = newValue
            case 1: p1 = newValue
            case 2: p2 = newValue
            default: p3 = newValue
            }
        }
    }
}

/// One video frame: pixels in a pooled buffer, their format and size, and its timestamps.
///
/// A frame is a value; copying it shares the pixels (the buffer is reference counted and returns to
/// its pool when the last copy goes away). Only the node that created a frame writes its pixels, and
/// only before passing it on. Planar float frames with more than four channels are not supported.
///
/// ```swift
/// var frame = Frame.make(.rgb24, width: 640, height: 480)
/// frame.row(0, plane: 0)[0] = 255   // first red byte
/// ```
public struct Frame: Sendable {
    public let format: PixelFormat
    public let width: Int
    public let height: Int
    public var planes: PlaneLayouts
    public let buffer: PixelBuffer
    /// When the frame was captured (or decoded, for files), in seconds on the run's clock.
    public var captureTime: Double
    /// Presentation time in the media, in seconds from the start of the input.
    public var mediaTime: Double
    /// Position in the source's output, from 0.
    public var sequence: Int
    /// What the pixel values mean (range, matrix, primaries, transfer), as the source said; filters
    /// pass it on with the timestamps, and conversions between Y'CbCr and RGB use it.
    public var color: ColorDescription = .unspecified
    /// Detections, landmarks or labels about this frame (coordinates normalised to its width and
    /// height), attached by the node that made them; nil when there are none. Filters that keep the
    /// picture's geometry pass them on with the timestamps (``copyTiming(from:)``).
    public var results: Results?

    public var description: FrameDescription { FrameDescription(format: format, width: width, height: height) }

    public init(format: PixelFormat, width: Int, height: Int, planes: PlaneLayouts, buffer: PixelBuffer,
                captureTime: Double = 0, mediaTime: Double = 0, sequence: Int = 0) {
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        self.buffer = buffer
        self.captureTime = captureTime
        self.mediaTime = mediaTime
        self.sequence = sequence
    }

    /// Row stride used for new frames: row bytes rounded up to 64 so every row starts aligned.
    public static func alignedStride(_ rowBytes: Int) -> Int { (rowBytes + 63) & ~63 }

    /// A new frame with memory from `pool` (contents undefined), rows padded to 64 bytes.
    public static func make(_ format: PixelFormat, width: Int, height: Int, pool: BufferPool = .shared) -> Frame {
        precondition(width > 0 && height > 0, "frame size must be positive")
        precondition(format.planeCount <= 4, "at most 4 planes")
        var layouts = PlaneLayouts(count: format.planeCount)
        var offset = 0
        for p in 0..<format.planeCount {
            let g = format.planeGeometry(p, width: width, height: height)
            let stride = alignedStride(g.rowBytes)
            layouts[p] = PlaneLayout(offset: offset, stride: stride)
            offset += stride * g.rows
        }
        return Frame(format: format, width: width, height: height, planes: layouts, buffer: pool.buffer(capacity: offset))
    }

    /// A new frame of `description`'s format and size.
    public static func make(_ description: FrameDescription, pool: BufferPool = .shared) -> Frame {
        make(description.format, width: description.width, height: description.height, pool: pool)
    }

    /// Copies the timestamps, sequence number, colour description and results of `other` (for a
    /// filter's output frame; a filter that changes the geometry, such as a crop, re-projects the
    /// results itself).
    public mutating func copyTiming(from other: Frame) {
        captureTime = other.captureTime
        mediaTime = other.mediaTime
        sequence = other.sequence
        color = other.color
        results = other.results
    }

    /// Start of `plane` in memory.
    public func base(plane: Int) -> UnsafeMutableRawPointer {
        buffer.bytes + planes[plane].offset
    }

    /// Row `y` of `plane`, as bytes (length: the plane's row bytes).
    public func row(_ y: Int, plane: Int = 0) -> UnsafeMutableBufferPointer<UInt8> {
        let g = format.planeGeometry(plane, width: width, height: height)
        precondition(y >= 0 && y < g.rows, "row \(y) out of range 0..<\(g.rows)")
        let start = (base(plane: plane) + y * planes[plane].stride).assumingMemoryBound(to: UInt8.self)
        return UnsafeMutableBufferPointer(start: start, count: g.rowBytes)
    }

    /// Row `y` of float `plane` (for `planarFloat32` frames).
    public func floatRow(_ y: Int, plane: Int) -> UnsafeMutableBufferPointer<Float> {
        precondition(y >= 0 && y < height, "row \(y) out of range 0..<\(height)")
        let start = (base(plane: plane) + y * planes[plane].stride).assumingMemoryBound(to: Float.self)
        return UnsafeMutableBufferPointer(start: start, count: width)
    }

    /// The bytes of pixel (`x`, `y`) in a packed format (R,G,B[,A] order as the format stores them).
    public func packedPixel(x: Int, y: Int) -> [UInt8] {
        guard let bpp = format.packedBytesPerPixel else { preconditionFailure("\(format) is not packed") }
        let r = row(y)
        return Array(r[(x * bpp)..<(x * bpp + bpp)])
    }

    /// Copies the pixels into a tightly packed byte array, plane after plane (for tests and hashing).
    public func packedBytes() -> [UInt8] {
        var out: [UInt8] = []
        for p in 0..<format.planeCount {
            let rows = format.planeGeometry(p, width: width, height: height).rows
            for y in 0..<rows { out.append(contentsOf: row(y, plane: p)) }
        }
        return out
    }

    /// Copies `source`'s pixels into this frame (same format and size; strides may differ).
    public func copyPixels(from source: Frame) {
        precondition(source.format == format && source.width == width && source.height == height,
                     "copyPixels needs the same format and size")
        Frame.copyPlanes(format: format, width: width, height: height,
                         from: { (UnsafeRawPointer(source.base(plane: $0)), source.planes[$0].stride) },
                         to: { (base(plane: $0), planes[$0].stride) })
    }

    /// Copies the rows of every plane of a `width`×`height` image of `format` between two memory
    /// layouts, each given per plane as (start, stride); a plane whose start is nil is skipped.
    /// (Frames to frames, and to and from FFmpeg's AVFrames.)
    public static func copyPlanes(format: PixelFormat, width: Int, height: Int,
                                  from source: (Int) -> (UnsafeRawPointer?, Int),
                                  to destination: (Int) -> (UnsafeMutableRawPointer?, Int)) {
        for p in 0..<format.planeCount {
            let (src, srcStride) = source(p), (dst, dstStride) = destination(p)
            guard let src, let dst else { continue }
            let g = format.planeGeometry(p, width: width, height: height)
            for y in 0..<g.rows {
                (dst + y * dstStride).copyMemory(from: src + y * srcStride, byteCount: g.rowBytes)
            }
        }
    }
}
