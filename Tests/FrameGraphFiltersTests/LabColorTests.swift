import FrameGraph
import FrameGraphFilters
import Foundation
import Testing
import TestSupport

/// Lab conversion against scikit-image on 100 000 pixels each way (Tests/Golden/lab, written by
/// tools/colorizer/make_lab_goldens.py; inputs regenerated here from the same SplitMix64 sequence).
@Suite struct LabColorTests {
    static let golden = TestEnvironment.root.appendingPathComponent("Tests/Golden/lab")

    func bytes(_ i: Int) -> (UInt8, UInt8, UInt8) {
        let z = SplitMix64.value(UInt64(i))
        return (UInt8(z & 0xFF), UInt8((z >> 8) & 0xFF), UInt8((z >> 16) & 0xFF))
    }

    @Test func rgbToLabMatchesScikitImage() throws {
        let reference = try Data(contentsOf: Self.golden.appendingPathComponent("rgb2lab.f32")).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        try #require(reference.count == 300_000)
        var worst: Float = 0
        for i in 0..<100_000 {
            let (r, g, b) = bytes(i)
            let lab = LabColor.lab(r: r, g: g, b: b)
            worst = max(worst, abs(lab.l - reference[3 * i]), abs(lab.a - reference[3 * i + 1]), abs(lab.b - reference[3 * i + 2]))
            let l = LabColor.lightness(r: r, g: g, b: b)
            worst = max(worst, abs(l - reference[3 * i]))
        }
        #expect(worst <= 1e-3, "max abs difference \(worst) Lab units")
    }

    @Test func labToRGBMatchesScikitImage() throws {
        let reference = try Data(contentsOf: Self.golden.appendingPathComponent("lab2rgb.u16")).withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
        try #require(reference.count == 300_000)
        var worst: Float = 0
        for i in 0..<100_000 {
            let (x, y, z) = bytes(i)
            let rgb = LabColor.rgb(l: Float(x) / 255 * 100, a: Float(Int(y) - 128), b: Float(Int(z) - 128))
            // The reference is stored to 1/65535: allow that rounding on top of 1e-3.
            for (v, k) in [(rgb.r, 0), (rgb.g, 1), (rgb.b, 2)] {
                worst = max(worst, abs(v - Float(reference[3 * i + k]) / 65535))
            }
        }
        #expect(worst <= 1e-3 + 1e-5, "max abs difference \(worst) (RGB 0…1)")
    }
}

/// The whole-frame (row) conversions against the same references.
@Suite struct LabFrameTests {
    @Test func frameConversionsMatchScikitImage() throws {
        let golden = TestEnvironment.root.appendingPathComponent("Tests/Golden/lab")
        let lab = try Data(contentsOf: golden.appendingPathComponent("rgb2lab.f32")).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let t = LabColorTests()
        // 100 000 pixels as a 400 × 250 frame.
        let rgb = Frame.make(.rgb24, width: 400, height: 250)
        for i in 0..<100_000 {
            let (r, g, b) = t.bytes(i)
            let row = rgb.row(i / 400)
            let x = i % 400
            row[3 * x] = r; row[3 * x + 1] = g; row[3 * x + 2] = b
        }
        let labFrame = LabColor.labFrame(from: rgb)
        var worst: Float = 0
        withExtendedLifetime(labFrame) {  // rows point into the frame: keep it alive while they are read
            for i in 0..<100_000 {
                for c in 0..<3 { worst = max(worst, abs(labFrame.floatRow(i / 400, plane: c)[i % 400] - lab[3 * i + c])) }
            }
        }
        print("lab frame: max abs difference from scikit-image \(worst)")
        #expect(worst <= 1e-3, "rgb→Lab max abs difference \(worst)")
        // And back: every byte within one level of the original.
        let back = LabColor.rgbFrame(from: labFrame)
        var worstByte = 0
        withExtendedLifetime((back, rgb)) {
            for y in 0..<250 { for (u, v) in zip(back.row(y), rgb.row(y)) { worstByte = max(worstByte, abs(Int(u) - Int(v))) } }
        }
        #expect(worstByte <= 1, "round trip max byte difference \(worstByte)")
    }
}
