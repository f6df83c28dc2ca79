import CAVCodec
import CAVUtil
import FrameGraph

/// FFmpeg's colour fields (on streams' codec parameters, codec contexts and frames) ↔ FrameGraph's
/// ``ColorDescription``: the same H.273 code points, so the conversion is one place of casts.
extension ColorDescription {
    init(range: AVColorRange, matrix: AVColorSpace, primaries: AVColorPrimaries, transfer: AVColorTransferCharacteristic) {
        self.init(range: Range(rawValue: Int32(range.rawValue)) ?? .unspecified, matrix: Int32(matrix.rawValue),
                  primaries: Int32(primaries.rawValue), transfer: Int32(transfer.rawValue))
    }

    /// The tags of a stream as stored.
    init(_ parameters: AVCodecParameters) {
        self.init(range: parameters.color_range, matrix: parameters.color_space, primaries: parameters.color_primaries,
                  transfer: parameters.color_trc)
    }

    /// The tags of a decoded picture.
    init(frame: UnsafeMutablePointer<AVFrame>) {
        self.init(range: frame.pointee.color_range, matrix: frame.pointee.colorspace, primaries: frame.pointee.color_primaries,
                  transfer: frame.pointee.color_trc)
    }

    var avRange: AVColorRange { AVColorRange(rawValue: UInt32(range.rawValue)) }
    var avMatrix: AVColorSpace { AVColorSpace(rawValue: UInt32(matrix)) }
    var avPrimaries: AVColorPrimaries { AVColorPrimaries(rawValue: UInt32(primaries)) }
    var avTransfer: AVColorTransferCharacteristic { AVColorTransferCharacteristic(rawValue: UInt32(transfer)) }
}
