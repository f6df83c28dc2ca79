import CFrameGraphKernels
import FrameGraph

/// Blends two frames by a mask: `out = foreground × m + background × (1 − m)` with `m = mask / 255`.
///
/// Ports: 0 `foreground` (drives the output), 1 `background`, 2 `mask` (gray8). All three must have the
/// same size; foreground and background the same format (rgb24, rgba, bgra, gray8 or yuv420p; for
/// yuv420p the mask is subsampled for chroma). Pairing follows the run mode unless set: offline uses
/// each frame's own mask, live the newest mask.
///
/// ```swift
/// let blend = AlphaBlend(name: "blend")
/// camera --> blend.port(0); backdrop --> blend.port(1); mask --> blend.port(2)
/// ```
public final class AlphaBlend: CompositeNode, @unchecked Sendable {
    override public var inputPorts: [String] { ["foreground", "background", "mask"] }
    override public var kind: String { "blend" }

    override public init(name: String = "blend") {
        super.init(name: name)
    }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard inputs.count == 3 else { return nil }
        let (fg, bg, mask) = (inputs[0], inputs[1], inputs[2])
        try require(format: fg.format, in: [.rgb24, .rgba, .bgra, .gray8, .yuv420p], port: 0)
        if bg.format != fg.format {
            throw GraphError.mismatch(node: name, port: "background", field: "pixel format", expected: fg.format.description,
                                      got: bg.format.description)
        }
        if bg.width != fg.width || bg.height != fg.height {
            throw GraphError.mismatch(node: name, port: "background", field: "size", expected: "\(fg.width)x\(fg.height)",
                                      got: "\(bg.width)x\(bg.height)")
        }
        try require(format: mask.format, in: [.gray8], port: 2)
        if mask.width != fg.width || mask.height != fg.height {
            throw GraphError.mismatch(node: name, port: "mask", field: "size", expected: "\(fg.width)x\(fg.height)",
                                      got: "\(mask.width)x\(mask.height)")
        }
        return fg
    }

    override public func combine(_ frames: [Frame], context: RunContext) throws -> Frame? {
        var out = Frame.make(frames[0].description)
        Self.blend(foreground: frames[0], background: frames[1], mask: frames[2], into: out)
        out.copyTiming(from: frames[0])
        return out
    }

    /// `into = foreground × m + background × (1 − m)`, all the same size; foreground, background and
    /// `into` of one format (rgb24, rgba, bgra, gray8 or yuv420p), mask gray8.
    public static func blend(foreground fg: Frame, background bg: Frame, mask: Frame, into out: Frame) {
        switch fg.format {
        case .yuv420p:
            Self.blendPlane(fg, bg, mask, out, plane: 0, channels: 1, maskStep: 1)
            Self.blendPlane(fg, bg, mask, out, plane: 1, channels: 1, maskStep: 2)
            Self.blendPlane(fg, bg, mask, out, plane: 2, channels: 1, maskStep: 2)
        default:
            Self.blendPlane(fg, bg, mask, out, plane: 0, channels: fg.format.packedBytesPerPixel ?? 1, maskStep: 1)
        }
    }

    /// Blends one plane; `maskStep` 2 samples the mask at every other pixel and row (4:2:0 chroma).
    public static func blendPlane(_ fg: Frame, _ bg: Frame, _ mask: Frame, _ out: Frame, plane: Int, channels: Int, maskStep: Int) {
        let geometry = fg.format.planeGeometry(plane, width: fg.width, height: fg.height)
        let cols = geometry.rowBytes / channels
        for y in 0..<geometry.rows {
            guard let f = fg.row(y, plane: plane).baseAddress, let b = bg.row(y, plane: plane).baseAddress,
                  let o = out.row(y, plane: plane).baseAddress,
                  let m = mask.row(min(y * maskStep, mask.height - 1)).baseAddress else { continue }
            // Within the mask's width: chroma of an odd-width frame may reach one sample past it.
            let inside = min(cols, (mask.width - 1) / maskStep + 1)
            if channels == 1 && (maskStep == 1 || maskStep == 2) {
                fg_blend_row(f, b, m, o, inside, Int32(maskStep), 1)
            } else if channels == 1 {
                for x in 0..<inside { o[x] = mix(f[x], b[x], m[x * maskStep]) }
            } else {
                for x in 0..<inside {
                    let a = m[x * maskStep]
                    for c in 0..<channels { o[x * channels + c] = mix(f[x * channels + c], b[x * channels + c], a) }
                }
            }
            for x in inside..<cols {
                let a = m[mask.width - 1]
                for c in 0..<channels { o[x * channels + c] = mix(f[x * channels + c], b[x * channels + c], a) }
            }
        }
    }

    /// (f·a + b·(255 − a)) / 255, rounded to nearest: exact for every input.
    @inline(__always)
    static func mix(_ f: UInt8, _ b: UInt8, _ a: UInt8) -> UInt8 {
        let v = UInt32(f) &* UInt32(a) &+ UInt32(b) &* (255 &- UInt32(a)) &+ 128
        return UInt8(truncatingIfNeeded: (v &+ (v &>> 8)) &>> 8)
    }
}

extension AlphaBlend {
    /// The options of the `blend` node type.
    public enum OptionSpecs {
        public static let all = [PairingChoice.option.spec]
    }
}
