import FrameGraph

extension LabColor {
    /// rgb24 → planar float L, a, b (float32x3) of the same size.
    public static func labFrame(from rgb: Frame, pool: BufferPool = .shared) -> Frame {
        precondition(rgb.format == .rgb24, "labFrame(from:) takes rgb24")
        var lab = Frame.make(.planarFloat32(channels: 3), width: rgb.width, height: rgb.height, pool: pool)
        var rows = LabRows(width: rgb.width)
        linearFromByte.withUnsafeBufferPointer { t in
            guard let table = t.baseAddress else { return }
            for y in 0..<rgb.height {
                guard let src = rgb.row(y).baseAddress, let l = lab.floatRow(y, plane: 0).baseAddress,
                      let a = lab.floatRow(y, plane: 1).baseAddress, let b = lab.floatRow(y, plane: 2).baseAddress else { continue }
                rows.lab(from: src, table: table, l: l, a: a, bOut: b)
            }
        }
        lab.copyTiming(from: rgb)
        return lab
    }

    /// Planar float L, a, b → rgb24 (clipped, rounded).
    public static func rgbFrame(from lab: Frame, pool: BufferPool = .shared) -> Frame {
        precondition(lab.format == .planarFloat32(channels: 3), "rgbFrame(from:) takes float32x3 Lab")
        var rgb = Frame.make(.rgb24, width: lab.width, height: lab.height, pool: pool)
        var rows = LabRows(width: lab.width)
        byteFromLinear.withUnsafeBufferPointer { t in
            guard let table = t.baseAddress else { return }
            for y in 0..<lab.height {
                guard let dst = rgb.row(y).baseAddress, let l = lab.floatRow(y, plane: 0).baseAddress,
                      let a = lab.floatRow(y, plane: 1).baseAddress, let b = lab.floatRow(y, plane: 2).baseAddress else { continue }
                rows.rgb(l: l, a: a, b: b, table: table, into: dst)
            }
        }
        rgb.copyTiming(from: lab)
        return rgb
    }
}

/// Converts rgb24 frames to CIE Lab as planar float L, a, b (float32x3), scikit-image's convention.
///
/// ```swift
/// source --> ConvertFormat(name: "rgb", to: .rgb24) --> ToLab(name: "lab") --> sink
/// ```
public final class ToLab: FilterNode, @unchecked Sendable {
    override public init(name: String = "lab") {
        super.init(name: name)
    }

    override public var kind: String { "lab" }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard let input = inputs.first else { return nil }
        try require(format: input.format, in: [.rgb24])
        return FrameDescription(format: .planarFloat32(channels: 3), width: input.width, height: input.height)
    }

    override public func process(_ frame: Frame, context: RunContext) throws -> Frame? {
        LabColor.labFrame(from: frame)
    }
}
