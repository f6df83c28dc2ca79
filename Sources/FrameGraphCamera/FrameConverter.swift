import CV4L2
import Foundation
import FrameGraph

/// Converts the camera's native frames (YUYV, MJPEG, and whatever else libv4lconvert reads) into
/// `yuv420p` or `rgb24` frames in pooled memory, with libv4lconvert. Owns the converter state
/// (destroyed in `deinit`).
///
/// The output frame is tightly packed, exactly as libv4lconvert writes it (Y, U, V planes of
/// `width`, `width/2`, `width/2` bytes per row, or one RGB plane), so conversion writes straight into
/// the frame's buffer without another copy.
///
/// ```swift
/// let converter = try FrameConverter(device: device, native: pix, pixels: .yuv420p)
/// let frame = try converter.convert(bytes)
/// ```
final class FrameConverter {
    private let data: OpaquePointer
    private let native: v4l2_pix_format
    let pixels: PixelFormat
    let width: Int
    let height: Int
    private let pool: BufferPool
    private let destinationCode: UInt32
    private let planes: PlaneLayouts
    private let byteCount: Int
    private let path: String

    init(device: V4L2Device, native: v4l2_pix_format, pixels: PixelFormat, pool: BufferPool = .shared) throws {
        guard let data = v4lconvert_create(device.fd) else {
            throw CameraError.callFailed(path: device.path, call: "v4lconvert_create", errno: ENOMEM)
        }
        self.data = data
        self.native = native
        self.pixels = pixels
        self.pool = pool
        path = device.path
        width = Int(native.width)
        height = Int(native.height)
        switch pixels {
        case .rgb24:
            destinationCode = fg_v4l2_pix_fmt_rgb24()
            planes = PlaneLayouts([PlaneLayout(offset: 0, stride: width * 3)])
            byteCount = width * height * 3
        default:
            destinationCode = fg_v4l2_pix_fmt_yuv420()
            let luma = width * height, chroma = (width / 2) * (height / 2)
            planes = PlaneLayouts([PlaneLayout(offset: 0, stride: width),
                                   PlaneLayout(offset: luma, stride: width / 2),
                                   PlaneLayout(offset: luma + chroma, stride: width / 2)])
            byteCount = luma + 2 * chroma
        }
    }

    deinit {
        v4lconvert_destroy(data)
    }

    /// What the source emits.
    var description: FrameDescription { FrameDescription(format: pixels, width: width, height: height) }

    /// Converts one filled buffer (`bytes`: its `bytesused` bytes). Throws a message from
    /// libv4lconvert when the data cannot be converted (a damaged JPEG, for one).
    func convert(_ bytes: UnsafeRawBufferPointer) throws(ConversionFailure) -> Frame {
        guard let src = bytes.baseAddress, !bytes.isEmpty else { throw ConversionFailure(message: "empty buffer") }
        let buffer = pool.buffer(capacity: byteCount)
        let written = fg_v4lconvert(data, native.pixelformat, native.bytesperline, native.sizeimage,
                                    native.width, native.height,
                                    src.assumingMemoryBound(to: UInt8.self), UInt32(bytes.count),
                                    destinationCode, buffer.bytes.assumingMemoryBound(to: UInt8.self), UInt32(buffer.capacity))
        guard written >= byteCount else {
            let message = written < 0 ? String(cString: fg_v4lconvert_error(data)) : "short output (\(written) of \(byteCount) bytes)"
            throw ConversionFailure(message: message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return Frame(format: pixels, width: width, height: height, planes: planes, buffer: buffer)
    }

    /// Why one frame could not be converted.
    struct ConversionFailure: Error {
        let message: String
    }
}
